import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteError, postToServer } from './data-access.js';

/** A server on loopback answering each request with `answer`; closed after each test. */
const servers: ReturnType<typeof createServer>[] = [];
async function serverAnswering(answer: (response: ServerResponse) => void) {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => answer(response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { pid: process.pid, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't' };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function failure(promise: Promise<unknown>): Promise<RemoteError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RemoteError);
  return error as RemoteError;
}

describe('postToServer', () => {
  it('resolves with the whole body of a 2xx answer', async () => {
    const lock = await serverAnswering((response) => response.end(JSON.stringify({ result: 'x'.repeat(100_000) })));
    expect(JSON.parse((await postToServer(lock, '/', {})).toString('utf8')).result).toHaveLength(100_000);
  });

  it("throws the server's error code and message, or the status when the body is not JSON", async () => {
    const lock = await serverAnswering((response) => {
      response.statusCode = 409;
      response.end(JSON.stringify({ error: { code: 'CONFLICT', message: 'taken' } }));
    });
    expect(await failure(postToServer(lock, '/', {}))).toMatchObject({ code: 'CONFLICT', message: 'taken' });
    const plain = await serverAnswering((response) => {
      response.statusCode = 502;
      response.end('<html>bad gateway</html>');
    });
    expect(await failure(postToServer(plain, '/', {}))).toMatchObject({ code: 'ERROR', message: 'HTTP 502' });
  });

  it('says the server cannot be reached when it stops in the middle of its answer', async () => {
    const lock = await serverAnswering((response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('{"result":');
      setTimeout(() => response.destroy(), 20);
    });
    const error = await failure(postToServer(lock, '/', {}));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('cannot be reached');
  });

  it('says the server did not answer within the time given, also when it stalls midway', async () => {
    const lock = await serverAnswering((response) => {
      response.writeHead(200, { 'content-length': '1000' });
      response.write('{"result":');
    });
    const error = await failure(postToServer(lock, '/', {}, 200));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('did not answer within 0.2 s');
  });

  it('names the connection error of a port nobody listens on', async () => {
    const lock = await serverAnswering((response) => response.end());
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const error = await failure(postToServer(lock, '/', {}));
    expect(error.message).toContain('ECONNREFUSED');
  });
});
