// The signed-in session, shared by the designer (/) and the application page (/app): both are
// served from the same origin and keep the bearer token under one localStorage key.
import { reachingFetch } from './connectivity.js';

const SESSION_KEY = 'trellis.session';

export interface Session {
  readonly token: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  readonly email: string;
}

/** The stored session, or null when there is none or it has expired. */
export function loadSession(): Session | null {
  try {
    const session = JSON.parse(localStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
    if (!session || typeof session.token !== 'string' || session.expiresAt <= Date.now()) return null;
    return session;
  } catch {
    return null;
  }
}

export function clearSession(): void {
  localStorage.removeItem(SESSION_KEY);
}

/** Signs in with `POST /api/auth/login`; throws an Error with the server's message on failure. */
export async function signIn(email: string, password: string): Promise<Session> {
  const response = await reachingFetch('/api/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await response.json().catch(() => ({}))) as { token?: string; expires_in?: number; error?: { message?: string } };
  if (!response.ok || !body.token) {
    throw new Error(response.status === 401 ? 'Wrong e-mail or password.' : (body.error?.message ?? `Sign-in failed (HTTP ${response.status}).`));
  }
  const session: Session = { token: body.token, expiresAt: Date.now() + (body.expires_in ?? 0) * 1000, email };
  localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

/** Keeps a new token for the same user (after a password change ended the old sessions). */
export function replaceSessionToken(token: string, expiresInSeconds: number): Session | null {
  const current = loadSession();
  if (!current) return null;
  const session: Session = { token, expiresAt: Date.now() + expiresInSeconds * 1000, email: current.email };
  localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

/** Ends the session on the server (best effort) and forgets it here. */
export async function signOut(session: Session | null): Promise<void> {
  clearSession();
  if (!session) return;
  await fetch('/api/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${session.token}` } }).catch(() => {});
}
