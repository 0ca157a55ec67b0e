import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TrellisError } from '../platform/errors.js';

/**
 * The pages' policy: scripts and styles of this origin only, data through this origin's API,
 * frames of this origin (the feature frames), never framed by another site.
 */
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * A feature frame's policy: the frame's own script and the feature code it evaluates, inline
 * styles and data images, and no network of any kind: no fetch, no form target, no other frame,
 * no worker, no base. The frame's script removes WebRTC, which no directive governs (src/web/frame/webrtc.ts).
 */
export function frameCsp(scriptHash: string): string {
  return [
  // Sandboxed whoever embeds or opens it (the pages' iframe says the same): an opaque origin, so
  // that a frame it nests gets an origin of its own, whose WebRTC feature code cannot reach.
  'sandbox allow-scripts allow-forms',
  "default-src 'none'",
  // The frame's own inline script by its hash, the on-demand libraries of this origin, and the feature code it evaluates.
  `script-src 'sha256-${scriptHash}' 'self' 'unsafe-eval'`,
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  'media-src data: blob:',
  "connect-src 'none'",
  "frame-src 'none'",
  "worker-src 'none'",
  "object-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'",
  ].join('; ');
}

/** dist/web beside the running bundle (dist/main.js), or from the sources under test. */
function webDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'web'), join(here, '..', '..', 'dist', 'web')];
  return candidates.find((dir) => existsSync(dir)) ?? candidates[0]!;
}

/**
 * The designer (`GET /`), the application page (`GET /app`, `/app/feature/<id>`), the feature
 * frame (`GET /app/frame`) and their files under `/web/` (built by scripts/build-web.mjs). Each is
 * sent as the build compressed it (`.br`, `.gz` beside the file) when the request's
 * Accept-Encoding takes it, brotli first, with `Vary: Accept-Encoding`.
 */
export function registerWebRoutes(app: FastifyInstance, webDir: string = webDirectory()): void {
  void app.register(fastifyStatic, {
    root: webDir,
    prefix: '/web/',
    index: false,
    redirect: false,
    preCompressed: true,
    cacheControl: false,
    // Chunks carry a hash in their names and never change; entry files are checked each time.
    // A page's route has chosen its own (the frame's versioned document is immutable).
    setHeaders: (reply, path) => {
      reply.header('x-content-type-options', 'nosniff');
      if (reply.hasHeader('cache-control')) return;
      reply.header('cache-control', path.includes('/chunks/') || path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });

  const send = (reply: FastifyReply, name: string, csp: string, cacheControl = 'no-cache') => {
    if (!existsSync(join(webDir, name, 'index.html'))) {
      throw new TrellisError('UNAVAILABLE', `The ${name} page is not built: run npm run build`);
    }
    return reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('cache-control', cacheControl)
      .sendFile('index.html', join(webDir, name), { cacheControl: false });
  };
  app.get('/', (_request, reply) => send(reply, 'designer', PAGE_CSP));
  // Browsers ask for it on every page: an icon instead of a 404 in the console.
  app.get('/favicon.ico', (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON));
  app.get('/app', (_request, reply) => send(reply, 'app', PAGE_CSP));
  app.get('/app/feature/:featureId', (_request, reply) => send(reply, 'app', PAGE_CSP));
  app.get<{ Querystring: { v?: string } }>('/app/frame', (request, reply) => {
    const frame = builtFrame(webDir);
    // The pages ask for /app/frame?v=<version of this build>: that document never changes.
    const cacheControl = request.query.v === frame.version ? 'public, max-age=31536000, immutable' : 'no-cache';
    return send(reply, 'frame', frameCsp(frame.scriptHash), cacheControl);
  });
}

/** A trellis: a lattice on the theme's default primary blue. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/>' +
  '<path d="M3 5.5h10M3 10.5h10M5.5 3v10M10.5 3v10" stroke="#fff" stroke-width="1.6"/></svg>';

/** The built frame's version and the hash of its inline script (scripts/build-web.mjs writes them). */
function builtFrame(webDir: string): { version: string; scriptHash: string } {
  const file = join(webDir, 'frame', 'frame.json');
  if (!existsSync(file)) throw new TrellisError('UNAVAILABLE', 'The frame page is not built: run npm run build');
  const stamp = statSync(file).mtimeMs;
  if (frameInfo?.file !== file || frameInfo.stamp !== stamp) frameInfo = { file, stamp, ...(JSON.parse(readFileSync(file, 'utf8')) as { version: string; scriptHash: string }) };
  return frameInfo;
}

let frameInfo: { file: string; stamp: number; version: string; scriptHash: string } | undefined;
