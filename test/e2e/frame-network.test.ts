import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A feature's frame has no network of its own, including the paths its Content-Security-Policy
 * does not govern: WebRTC (STUN and TURN over UDP to any host), in the frame and in anything the
 * frame can make (nested frames, pop-ups, workers). Each feature below tries one path towards a
 * UDP listener on loopback, as a viewer opens it in headless Chromium; the attempt must fail and
 * nothing may arrive.
 */
let server: TestServer;
let browser: Browser;
let page: Page;
let listener: Socket;
/** What reached the UDP listener: a feature that got out of its frame would show here. */
const arrivals: string[] = [];

/** The probe of a feature: `attempt()` resolves once its connection is under way, or rejects. */
function probe(attempt: string, port: number): string {
  return `import { useEffect, useState } from 'react';

const ICE = ${iceServers(port)};

/** Starts gathering candidates, which sends to the ICE servers at once. */
async function connect(PeerConnection) {
  const connection = new PeerConnection(ICE);
  connection.createDataChannel('records');
  await connection.setLocalDescription(await connection.createOffer());
  return 'gathering';
}

${attempt}

export default function Probe() {
  const [outcome, setOutcome] = useState('');
  useEffect(() => {
    attempt().then((result) => setOutcome('went through: ' + result), (error) => setOutcome('refused: ' + error.message));
  }, []);
  return <p role="status">{outcome}</p>;
}
`;
}

function iceServers(port: number): string {
  return JSON.stringify({ iceServers: [{ urls: `turn:127.0.0.1:${port}?transport=udp`, username: 'vic@example.com', credential: 'x' }, { urls: `stun:127.0.0.1:${port}` }] });
}

/** Waits for a nested frame to load, then connects with the peer connection of its window. */
const NESTED = (setUp: string) => `async function attempt() {
  const frame = document.createElement('iframe');
  ${setUp}
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve));
  document.body.append(frame);
  await Promise.race([loaded, new Promise((resolve) => setTimeout(resolve, 1000))]);
  return connect(frame.contentWindow.RTCPeerConnection);
}`;

/**
 * The frame's own script (the one inline script its policy allows, which a nested frame inherits)
 * in a nested frame, which the feature then drives like a host: it sends a script that connects.
 */
const NESTED_FRAME_SCRIPT = (port: number) => `async function attempt() {
  const frame = document.createElement('iframe');
  frame.srcdoc = '<div id="root"></div><script>' + document.scripts[0].textContent + '</' + 'script>';
  const nested = ${JSON.stringify(`module.exports.default = function Nested() { return null; };
(async () => {
  const connection = new RTCPeerConnection(${iceServers(port)});
  connection.createDataChannel('records');
  await connection.setLocalDescription(await connection.createOffer());
})().then(() => parent.postMessage({ probe: 'gathering' }, '*'), (error) => parent.postMessage({ probe: 'refused', reason: error.message }, '*'));`)};
  const NESTED_USER = { _id: 'nested', email: 'nested@example.com', name: 'Nested', roleName: 'viewer', tableAccess: [] };
  const outcome = new Promise((resolve, reject) => {
    addEventListener('message', (event) => {
      if (event.source !== frame.contentWindow) return;
      if (event.data.trellis === 'ready') frame.contentWindow.postMessage({ trellis: 'render', featureId: 'nested', script: nested, user: NESTED_USER, cssVariables: {} }, '*');
      if (event.data.probe === 'gathering') resolve('in the nested frame');
      if (event.data.probe === 'refused') reject(new Error(event.data.reason));
    });
    setTimeout(() => reject(new Error('the nested frame never ran the script')), 5000);
  });
  document.body.append(frame);
  return outcome;
}`;

const CROSS_ORIGIN = /Blocked a frame with origin "null" from accessing a cross-origin frame/;

/** [what a feature tries, the feature's id and name, its attempt, why it fails]: one network path each. */
const PATHS: [string, string, (port: number) => string, RegExp][] = [
  ['RTCPeerConnection', 'direct', () => 'async function attempt() { return connect(RTCPeerConnection); }', /PeerConnection is not a constructor/],
  ['webkitRTCPeerConnection, named at run time', 'webkit-alias', () => "async function attempt() { const g = globalThis; return connect(g['webkit' + 'RTCPeerConnection']); }", /PeerConnection is not a constructor/],
  [
    'any peer connection constructor found by searching the global object',
    'search',
    () => `async function attempt() {
  const g = globalThis;
  const found = Object.getOwnPropertyNames(g).filter((name) => /PeerConnection$/.test(name)).map((name) => g[name]).find((value) => typeof value === 'function');
  if (!found) throw new Error('no peer connection constructor');
  return connect(found);
}`,
    /no peer connection constructor/,
  ],
  ['the peer connection of a nested about:blank frame', 'about-blank', () => NESTED(''), CROSS_ORIGIN],
  ['the peer connection of a nested srcdoc frame', 'srcdoc', () => NESTED("frame.srcdoc = '<p>nested</p>';"), CROSS_ORIGIN],
  ['the peer connection of a nested data: URL frame', 'data-url', () => NESTED("frame.src = 'data:text/html,<p>nested</p>';"), CROSS_ORIGIN],
  ["a nested frame that runs the frame's own script, driven by the feature", 'frame-script', NESTED_FRAME_SCRIPT, /RTCPeerConnection is not a constructor/],
  [
    'the peer connection of a pop-up window',
    'pop-up',
    () => `async function attempt() {
  const g = globalThis;
  const opened = g['op' + 'en']('about:blank');
  if (!opened) throw new Error('no window');
  return connect(opened.RTCPeerConnection);
}`,
    /no window/,
  ],
  [
    'a worker, which tries a peer connection and WebTransport',
    'worker',
    (port) => `async function attempt() {
  const source = ${JSON.stringify(`postMessage(String(typeof RTCPeerConnection) + ' ' + String(typeof WebTransport)); if (typeof WebTransport === 'function') new WebTransport('https://127.0.0.1:${port}/');`)};
  return new Promise((resolve, reject) => {
    document.addEventListener('securitypolicyviolation', (event) => reject(new Error('the policy refused it: ' + event.effectiveDirective)));
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
    worker.onmessage = (event) => resolve('a worker with ' + event.data);
  });
}`,
    /the policy refused it: worker-src/,
  ],
  [
    'WebTransport (QUIC, over UDP)',
    'webtransport',
    (port) => `async function attempt() {
  const g = globalThis;
  const transport = new g['Web' + 'Transport']('https://127.0.0.1:${port}/');
  await transport.ready;
  return 'connected';
}`,
    /violates the document's Content Security Policy/,
  ],
];

/** What a datagram is, as the failure shows it: a STUN binding or TURN allocation request (RFC 8489, 8656), or its size. */
function stunMessage(datagram: Buffer): string {
  const type = datagram.length >= 20 ? datagram.readUInt16BE(0) : undefined;
  return type === 0x0001 ? 'STUN binding request' : type === 0x0003 ? 'TURN allocate request' : `${datagram.length} bytes`;
}

beforeAll(async () => {
  listener = createSocket('udp4');
  listener.on('message', (message, from) => arrivals.push(`${stunMessage(message)} from ${from.address}:${from.port}`));
  await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const owner = graphqlClient(server.url, await login(server.url));
  await gqlData(owner, 'mutation { createUser(email: "vic@example.com", password: "vic-password", role: "viewer") { _id } }');
  const roles = (await gqlData(owner, '{ roles { _id name } }')).roles as { _id: string; name: string }[];
  const viewer = roles.find((role) => role.name === 'viewer')!._id;
  for (const [, id, attempt] of PATHS) {
    await gqlData(owner, 'mutation($id: ID!, $name: String!, $code: String!) { createFeature(_id: $id, name: $name, customCode: $code, status: "published") { _id } }', { id, name: id, code: probe(attempt(port), port) });
    await gqlData(owner, 'mutation($id: ID!, $roles: [ID!]!) { grantFeatureAccess(featureId: $id, roleIds: $roles) }', { id, roles: [viewer] });
  }
  page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/app`);
  await page.getByLabel('Email').fill('vic@example.com');
  await page.getByLabel('Password').fill('vic-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('nav[aria-label="Application"]:not([aria-busy])').waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
});

beforeEach(() => {
  arrivals.length = 0;
});

/** Opens the feature as the viewer and returns what its attempt came to. */
async function outcomeOf(id: string): Promise<string> {
  await page.goto(`${server.url}/app/feature/${id}`);
  const status = page.frameLocator(`iframe[title="${id}"]`).getByRole('status').filter({ hasText: /went through|refused/ });
  await status.waitFor();
  return status.innerText();
}

/** Long enough for a STUN binding or a TURN allocation that an attempt had started to reach the listener. */
async function afterPacketsWouldHaveArrived(): Promise<void> {
  await page.waitForTimeout(1000);
}

describe("a feature's frame", () => {
  it.each(PATHS)('refuses a connection through %s, and nothing reaches the UDP listener', async (_what, id, _attempt, reason) => {
    const outcome = await outcomeOf(id);
    await afterPacketsWouldHaveArrived();
    expect(arrivals).toEqual([]);
    expect(outcome).toMatch(/^refused: /);
    expect(outcome).toMatch(reason);
  });

  it('keeps its sandbox when its document is opened on its own: an opaque origin, no WebRTC, nested frames out of reach', async () => {
    const opened = await browser.newPage();
    await opened.goto(`${server.url}/app/frame`);
    const inside = await opened.evaluate(() => {
      const nested = document.createElement('iframe');
      document.body.append(nested);
      let nestedWindow: string;
      try {
        nestedWindow = typeof (nested.contentWindow as unknown as { RTCPeerConnection: unknown }).RTCPeerConnection;
      } catch {
        nestedWindow = 'out of reach';
      }
      return { origin, peerConnection: typeof RTCPeerConnection, nestedWindow };
    });
    await opened.close();
    expect(inside).toEqual({ origin: 'null', peerConnection: 'undefined', nestedWindow: 'out of reach' });
  });
});
