import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, RouteOptions } from 'fastify';

/** Answers smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Routes whose answers are not compressed here: the web pages and their files, which the build
 * compressed (web-routes.ts); webhooks, whose code chooses the answer's body and headers; and the
 * CLI's door, on the same machine, whose backups are megabytes of data that gain nothing on loopback.
 */
function compressedElsewhere(url: string): boolean {
  return url === '/' || url === '/favicon.ico' || url === '/app' || url.startsWith('/app/') || url.startsWith('/web/') || url.startsWith('/api/webhook/') || url.startsWith('/api/internal/');
}

/**
 * Compresses the API's answers (GraphQL, MCP, the JSON routes, /metrics) of at least
 * COMPRESS_MIN_BYTES by the request's Accept-Encoding: brotli (quality 4, fast enough per request),
 * else gzip, else none, with `Vary: Accept-Encoding`. Request bodies are never decompressed: a
 * webhook's signature is over the bytes as sent. Register before any route: a route declared
 * earlier is not compressed.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (compressedElsewhere(route.url)) route.compress = false;
  });
  await app.register(fastifyCompress, {
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_MIN_BYTES,
    globalDecompression: false,
  });
}
