import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', '[::1]', '::1']);

/**
 * Whether a host name (from a Host or Origin header, or the address the server listens on) names
 * this machine's loopback: `localhost` or a loopback IP literal (127.0.0.0/8, ::1). A DNS name such
 * as `127.evil.example` is not one, whatever it resolves to (DNS rebinding).
 */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || (isIP(host) === 4 && host.startsWith('127.'));
}
