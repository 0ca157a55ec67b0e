import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/permissions.js';
import { OWNER } from '../helpers/env.js';
import { gqlData, graphqlClient, login, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

type Gql = ReturnType<typeof graphqlClient>;

const FEATURE = '_id customCode version status publishedVersion warnings';
const CREATE_FEATURE = `mutation($name: String!, $customCode: String!) {
  createFeature(name: $name, customCode: $customCode) { ${FEATURE} }
}`;
const UPDATE_FEATURE = `mutation($_id: ID!, $customCode: String) { updateFeature(_id: $_id, customCode: $customCode) { ${FEATURE} } }`;
const GET_FEATURE = `query($_id: ID!) { feature(_id: $_id) { ${FEATURE} } }`;
const CREATE_HOOK = `mutation($name: String!, $content: String!) {
  createHook(name: $name, type: "webHook", content: $content) { _id content contentSha256 version }
}`;
const UPDATE_HOOK = 'mutation($_id: ID!, $content: String) { updateHook(_id: $_id, content: $content) { _id content version } }';

const PAGE = ['export default function Page() {', '  const title = "Orders";', '  return <h1>{title}</h1>;', '}', ''].join('\n');
const HOOK = ['async function (instance) {', '  instance.total = 1;', '  return instance;', '}'].join('\n');

let server: TestServer;
let ownerGql: Gql;
let owner: Principal;
let viewer: Principal;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const db = () => server.server.services.ctx.db;
const features = () => server.server.services.features;
const hooks = () => server.server.services.hooks;
let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++counter}`;

async function rowCounts() {
  const count = async (table: 'features' | 'feature_versions' | 'hooks' | 'hook_versions' | 'mail_outbox' | 'audit_events') =>
    Number((await db().selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return {
    features: await count('features'),
    featureVersions: await count('feature_versions'),
    hooks: await count('hooks'),
    hookVersions: await count('hook_versions'),
    mails: await count('mail_outbox'),
    auditEvents: await count('audit_events'),
  };
}

async function createFeature(customCode = PAGE): Promise<string> {
  return (await gqlData(ownerGql, CREATE_FEATURE, { name: uniqueName('Feature'), customCode })).createFeature._id;
}

async function createHook(content = HOOK): Promise<string> {
  return (await gqlData(ownerGql, CREATE_HOOK, { name: uniqueName('hook'), content })).createHook._id;
}

async function storedFeature(_id: string) {
  const row = await db().selectFrom('features').select(['custom_code', 'version']).where('id', '=', _id).executeTakeFirstOrThrow();
  const versions = await db().selectFrom('feature_versions').select('version').where('feature_id', '=', _id).execute();
  return { code: row.custom_code, version: row.version, versionRows: versions.length };
}

async function storedHook(_id: string) {
  const row = await db().selectFrom('hooks').select(['content', 'content_sha256', 'version']).where('id', '=', _id).executeTakeFirstOrThrow();
  const versions = await db().selectFrom('hook_versions').select('version').where('hook_id', '=', _id).execute();
  return { content: row.content, sha256: row.content_sha256, version: row.version, versionRows: versions.length };
}

async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, 'the call should have been refused').toBeDefined();
  return error as { code: string; status: number; message: string; details?: Record<string, unknown> };
}

function expectGqlError(result: HttpResult, code: string, fragment: RegExp | string) {
  expect(result.body.errors?.[0]?.extensions).toMatchObject({ code });
  if (typeof fragment === 'string') expect(result.body.errors[0].message).toContain(fragment);
  else expect(result.body.errors[0].message).toMatch(fragment);
}

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
  const ownerId = (await gqlData(ownerGql, '{ me { _id } }')).me._id;
  owner = await server.server.services.access.principalForUser(ownerId, 'graphql');
  const created = await gqlData(ownerGql, 'mutation { createUser(email: "viewer@example.com", password: "password-123", role: "viewer") { _id } }');
  viewer = await server.server.services.access.principalForUser(created.createUser._id, 'graphql');
});
afterAll(async () => server?.close());

describe('feature code validation on save', () => {
  it.each([
    ['a JSX syntax error', 'export default function Page() {\n  return <p>hi</div>;\n}', /^customCode: 1 problem: 2:\d+ /, 'SYNTAX'],
    ['a forbidden global', 'export default function Page() {\n  fetch("/x");\n  return <p />;\n}', /^customCode: 1 problem: 2:3 .*fetch/, 'FORBIDDEN_GLOBAL'],
    ['a missing default export', 'export function Page() { return <p />; }', /^customCode: 1 problem: The feature must export/, 'DEFAULT_EXPORT'],
  ])('createFeature refuses %s with BAD_INPUT naming the line and column, and writes nothing', async (_case, customCode, message, findingCode) => {
    const before = await rowCounts();
    const result = await ownerGql(CREATE_FEATURE, { name: uniqueName('Invalid'), customCode });
    expectGqlError(result, 'BAD_INPUT', message);
    expect(result.body.errors[0].extensions.details).toMatchObject({ field: 'customCode', errors: [expect.objectContaining({ code: findingCode })] });
    expect(await rowCounts()).toEqual(before);
  });

  it('counts every error and quotes the first three', async () => {
    const customCode = ['export default function Page() {', '  eval("1");', '  fetch("/a");', '  localStorage.clear();', '  require("fs");', '  return <p />;', '}'].join('\n');
    const result = await ownerGql(CREATE_FEATURE, { name: uniqueName('Many problems'), customCode });
    expectGqlError(result, 'BAD_INPUT', /^customCode: 4 problems: 2:3 .*; 3:3 .*; 4:3 .*; and 1 more$/);
    expect(result.body.errors[0].extensions.details.errors).toHaveLength(4);
  });

  it('updateFeature refuses invalid code and keeps the stored code and versions', async () => {
    const _id = await createFeature();
    const before = await storedFeature(_id);
    expectGqlError(await ownerGql(UPDATE_FEATURE, { _id, customCode: 'export default function Page() { return <p>; }' }), 'BAD_INPUT', /^customCode: 1 problem: 1:\d+ /);
    expect(await storedFeature(_id)).toEqual(before);
  });

  it('still answers 413 for oversized code, before any syntax check', async () => {
    const result = await ownerGql(CREATE_FEATURE, { name: uniqueName('Huge'), customCode: '<'.repeat(1_048_577) });
    expectGqlError(result, 'PAYLOAD_TOO_LARGE', 'customCode: must be at most 1 MB');
  });

  it('saves code with colour warnings and returns the warnings with their position', async () => {
    const customCode = 'export default function Page() {\n  return <p style={{ color: "#ff0000" }}>red</p>;\n}';
    const created = (await gqlData(ownerGql, CREATE_FEATURE, { name: uniqueName('Warned'), customCode })).createFeature;
    expect(created.warnings).toEqual([expect.objectContaining({ code: 'FIXED_COLOR', line: 2, column: 30 })]);
    expect(await storedFeature(created._id)).toMatchObject({ code: customCode, version: 1, versionRows: 1 });
    const updatedCode = customCode.replace('"#ff0000"', '"rgb(0, 0, 255)"');
    const updated = (await gqlData(ownerGql, UPDATE_FEATURE, { _id: created._id, customCode: updatedCode })).updateFeature;
    expect(updated.warnings).toEqual([expect.objectContaining({ code: 'FIXED_COLOR', line: 2 })]);
    expect(updated).toMatchObject({ customCode: updatedCode, version: 2 });
  });

  it('answers warnings: null when a feature is read back, and [] for clean code', async () => {
    const _id = await createFeature();
    expect((await gqlData(ownerGql, GET_FEATURE, { _id })).feature.warnings).toBeNull();
    expect((await gqlData(ownerGql, UPDATE_FEATURE, { _id, customCode: `${PAGE}// v2\n` })).updateFeature.warnings).toEqual([]);
  });
});

describe('hook code validation on save', () => {
  it.each([
    ['a syntax error', 'async function (instance) {\n  return instance +;\n}', /^content: 1 problem: 2:\d+ /, 'SYNTAX'],
    ['a function that is not async', 'function (instance) {\n  return instance;\n}', /^content: 1 problem: 1:1 Hook code must be a single async function.*add async/, 'HOOK_SHAPE'],
    ['process.env', 'async function (instance) {\n  return process.env.SECRET;\n}', /^content: 1 problem: 2:10 process is not available/, 'FORBIDDEN_GLOBAL'],
  ])('createHook refuses %s with BAD_INPUT naming content, and writes no hook, version, mail or audit row', async (_case, content, message, findingCode) => {
    const before = await rowCounts();
    const result = await ownerGql(CREATE_HOOK, { name: uniqueName('invalid'), content });
    expectGqlError(result, 'BAD_INPUT', message);
    expect(result.body.errors[0].extensions.details).toMatchObject({ field: 'content', errors: [expect.objectContaining({ code: findingCode })] });
    expect(await rowCounts()).toEqual(before);
  });

  it('updateHook refuses invalid code and keeps the stored hook', async () => {
    const _id = await createHook();
    const before = { ...(await storedHook(_id)), counts: await rowCounts() };
    expectGqlError(await ownerGql(UPDATE_HOOK, { _id, content: 'async function (instance) { require("fs"); }' }), 'BAD_INPUT', /^content: 1 problem: 1:29 require/);
    expect({ ...(await storedHook(_id)), counts: await rowCounts() }).toEqual(before);
  });

  it('still answers 413 for oversized code, before any syntax check', async () => {
    const result = await ownerGql(CREATE_HOOK, { name: uniqueName('huge'), content: '('.repeat(204_801) });
    expectGqlError(result, 'PAYLOAD_TOO_LARGE', 'content: must be at most 200 KB');
  });
});

describe('editFeatureCode', () => {
  it('applies patches in order, each to the previous result, as a new version with an audit entry', async () => {
    const _id = await createFeature();
    const result = await features().editFeatureCode(owner, {
      _id,
      patches: [
        { old_str: '"Orders"', new_str: '"Invoices"' },
        { old_str: '<h1>{title}</h1>', new_str: '<h2>{title}: Invoices</h2>' },
        { old_str: 'Invoices</h2>', new_str: 'all</h2>' },
      ],
    });
    const expected = PAGE.replace('"Orders"', '"Invoices"').replace('<h1>{title}</h1>', '<h2>{title}: all</h2>');
    expect(result.previousCode).toBe(PAGE);
    expect(result.feature).toMatchObject({ _id, customCode: expected, version: 2, status: 'draft' });
    expect(result.warnings).toEqual([]);
    expect(await storedFeature(_id)).toEqual({ code: expected, version: 2, versionRows: 2 });
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', _id).where('action', '=', 'feature.edit').executeTakeFirstOrThrow();
    expect(event).toMatchObject({ actor_id: owner.userId, source: 'graphql' });
    expect(event.details).toMatchObject({ version: 2, status: 'draft', codeSha256: sha256(expected) });
  });

  it('publishes the edited version when status is published', async () => {
    const _id = await createFeature();
    const { feature } = await features().editFeatureCode(owner, { _id, patches: [{ old_str: 'Orders', new_str: 'Stock' }], status: 'published' });
    expect(feature).toMatchObject({ version: 2, status: 'published', publishedVersion: 2 });
  });

  it('saves an edit that leaves colour warnings and returns them', async () => {
    const _id = await createFeature();
    const result = await features().editFeatureCode(owner, { _id, patches: [{ old_str: '<h1>', new_str: '<h1 className="text-red-500">' }] });
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'TAILWIND_COLOR_CLASS', line: 3 })]);
    expect((await storedFeature(_id)).version).toBe(2);
  });

  it.each([
    ['an old_str that is not in the code', [{ old_str: '"Nowhere"', new_str: '"x"' }], 'patches.0.old_str: not found in the current code'],
    ['an old_str that matches twice', [{ old_str: 'title', new_str: 'heading' }], 'patches.0.old_str: matches 2 places'],
    [
      'a later patch that does not match once the earlier ones applied',
      [
        { old_str: '"Orders"', new_str: '"Stock"' },
        { old_str: '"Orders"', new_str: '"Again"' },
      ],
      'patches.1.old_str: not found',
    ],
    ['a result with a syntax error', [{ old_str: '</h1>', new_str: '</h2>' }], 'customCode: 1 problem: 3:'],
    ['a result that calls fetch', [{ old_str: 'const title', new_str: 'fetch("/x");\n  const title' }], 'customCode: 1 problem: 2:3'],
  ])('rejects %s and leaves the code, versions and audit rows unchanged', async (_case, patches, message) => {
    const _id = await createFeature();
    const before = { ...(await storedFeature(_id)), counts: await rowCounts() };
    const error = await rejection(features().editFeatureCode(owner, { _id, patches }));
    expect(error).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(error.message).toContain(message);
    expect({ ...(await storedFeature(_id)), counts: await rowCounts() }).toEqual(before);
  });

  it('answers PAYLOAD_TOO_LARGE for an edit whose result is over 1 MB, writing nothing', async () => {
    const _id = await createFeature();
    const before = await storedFeature(_id);
    const error = await rejection(features().editFeatureCode(owner, { _id, patches: [{ old_str: '}\n', new_str: `}\n// ${'a'.repeat(1_048_576)}\n` }] }));
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(await storedFeature(_id)).toEqual(before);
  });

  it.each([
    ['no patches', { patches: [] }, 'patches: must hold at least one patch'],
    ['51 patches', { patches: Array.from({ length: 51 }, () => ({ old_str: 'a', new_str: 'b' })) }, 'patches: must hold at most 50 patches'],
    ['an empty old_str', { patches: [{ old_str: '', new_str: 'x' }] }, 'patches.0.old_str: must not be empty'],
    ['a missing new_str', { patches: [{ old_str: 'Orders' }] }, 'patches.0.new_str:'],
  ])('refuses %s with BAD_INPUT', async (_case, input, message) => {
    const _id = await createFeature();
    const error = await rejection(features().editFeatureCode(owner, { _id, ...input } as never));
    expect(error).toMatchObject({ code: 'BAD_INPUT' });
    expect(error.message).toContain(message);
  });

  it("refuses a viewer with FORBIDDEN naming 'features:write'", async () => {
    const _id = await createFeature();
    const error = await rejection(features().editFeatureCode(viewer, { _id, patches: [{ old_str: 'Orders', new_str: 'Stock' }] }));
    expect(error).toMatchObject({ code: 'FORBIDDEN' });
    expect(error.message).toContain("'features:write'");
    expect((await storedFeature(_id)).code).toBe(PAGE);
  });

  it('answers NOT_FOUND for an unknown feature', async () => {
    const error = await rejection(features().editFeatureCode(owner, { _id: 'no-such-feature', patches: [{ old_str: 'a', new_str: 'b' }] }));
    expect(error).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('lands both of two concurrent edits with disjoint patches, the second applied to the first one\'s result', async () => {
    const _id = await createFeature();
    const [first, second] = await Promise.all([
      features().editFeatureCode(owner, { _id, patches: [{ old_str: '"Orders"', new_str: '"Invoices"' }] }),
      features().editFeatureCode(owner, { _id, patches: [{ old_str: '<h1>', new_str: '<h1 id="top">' }] }),
    ]);
    const expected = PAGE.replace('"Orders"', '"Invoices"').replace('<h1>', '<h1 id="top">');
    expect(await storedFeature(_id)).toEqual({ code: expected, version: 3, versionRows: 3 });
    expect([first.feature.version, second.feature.version].sort()).toEqual([2, 3]);
    const later = first.feature.version === 3 ? first : second;
    const earlier = later === first ? second : first;
    expect(later.previousCode).toBe(earlier.feature.customCode);
    expect(later.feature.customCode).toBe(expected);
  });
});

describe('editHookCode', () => {
  it('applies the patches as a new version, audits the new hash and e-mails the owner with it', async () => {
    const _id = await createHook();
    const result = await hooks().editHookCode(owner, { _id, patches: [{ old_str: 'instance.total = 1;', new_str: 'instance.total = 2;' }] });
    const expected = HOOK.replace('instance.total = 1;', 'instance.total = 2;');
    expect(result.previousCode).toBe(HOOK);
    expect(result.hook).toMatchObject({ _id, content: expected, contentSha256: sha256(expected), version: 2 });
    expect(await storedHook(_id)).toEqual({ content: expected, sha256: sha256(expected), version: 2, versionRows: 2 });
    const event = await db().selectFrom('audit_events').selectAll().where('resource_id', '=', _id).where('action', '=', 'hook.edit').executeTakeFirstOrThrow();
    expect(event.details).toMatchObject({ version: 2, codeSha256: sha256(expected) });
    const mails = await db().selectFrom('mail_outbox').selectAll().where('subject', '=', `Hook "${result.hook.name}" modified`).execute();
    expect(mails.map((mail) => mail.to_address)).toEqual([OWNER.email]);
    expect(mails[0]!.body).toContain(`SHA-256 of the stored code: ${sha256(expected)}`);
    expect(mails[0]!.body).toContain('Version: 2');
  });

  it.each([
    ['an old_str that is not in the code', [{ old_str: 'instance.total = 9;', new_str: '' }], 'patches.0.old_str: not found in the current code'],
    ['an old_str that matches twice', [{ old_str: 'instance', new_str: 'record' }], 'patches.0.old_str: matches 3 places'],
    ['a result that reads process', [{ old_str: 'return instance;', new_str: 'return process.env;' }], 'content: 1 problem: 3:10 process'],
    ['a result that is no longer async', [{ old_str: 'async ', new_str: '' }], 'content: 1 problem: 1:1'],
  ])('rejects %s and leaves the hook, versions, mails and audit rows unchanged', async (_case, patches, message) => {
    const _id = await createHook();
    const before = { ...(await storedHook(_id)), counts: await rowCounts() };
    const error = await rejection(hooks().editHookCode(owner, { _id, patches }));
    expect(error).toMatchObject({ code: 'BAD_INPUT', status: 400 });
    expect(error.message).toContain(message);
    expect({ ...(await storedHook(_id)), counts: await rowCounts() }).toEqual(before);
  });

  it("refuses a viewer with FORBIDDEN naming 'hooks:write'", async () => {
    const _id = await createHook();
    const error = await rejection(hooks().editHookCode(viewer, { _id, patches: [{ old_str: '1;', new_str: '2;' }] }));
    expect(error).toMatchObject({ code: 'FORBIDDEN' });
    expect(error.message).toContain("'hooks:write'");
  });

  it('answers NOT_FOUND for an unknown hook', async () => {
    const error = await rejection(hooks().editHookCode(owner, { _id: 'no-such-hook', patches: [{ old_str: 'a', new_str: 'b' }] }));
    expect(error).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('lands both of two concurrent edits with disjoint patches', async () => {
    const _id = await createHook();
    await Promise.all([
      hooks().editHookCode(owner, { _id, patches: [{ old_str: 'instance.total = 1;', new_str: 'instance.total = 5;' }] }),
      hooks().editHookCode(owner, { _id, patches: [{ old_str: 'return instance;', new_str: 'return { ...instance, checked: true };' }] }),
    ]);
    const expected = HOOK.replace('instance.total = 1;', 'instance.total = 5;').replace('return instance;', 'return { ...instance, checked: true };');
    expect(await storedHook(_id)).toEqual({ content: expected, sha256: sha256(expected), version: 3, versionRows: 3 });
  });
});
