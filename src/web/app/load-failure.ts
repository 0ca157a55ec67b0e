// A load of the application page that failed, said in plain words, with Retry. A server that was not
// reached is asked again by itself (GET /healthz, ../shared/connectivity.ts) and the load runs again
// the moment it answers; a server that answered with an error waits for Retry; a refusal is an answer
// and offers none. Nothing here says "Loading…": the failure replaces what was loading.
import { isUnreachable, onReachability, probe, serverReachable, UNREACHABLE_MESSAGE } from '../shared/connectivity.js';
import { h } from '../shared/dom.js';
import { GraphQLRequestError } from '../shared/graphql.js';

/** Why a load failed: each is said differently, and only the first two are worth trying again. */
export type FailureKind = 'unreachable' | 'server-error' | 'refused' | 'not-found';

export function failureKind(error: unknown): FailureKind {
  if (isUnreachable(error)) return 'unreachable';
  if (error instanceof GraphQLRequestError) {
    if (error.code === 'FORBIDDEN') return 'refused';
    if (error.code === 'NOT_FOUND') return 'not-found';
  }
  return 'server-error';
}

/** The heading of a failure that replaces a whole page (a refusal names no page the role does not see). */
export function failureTitle(kind: FailureKind): string {
  if (kind === 'refused') return 'You do not have access to this page';
  if (kind === 'not-found') return 'This page does not exist';
  return 'This page could not be loaded';
}

function failureMessage(kind: FailureKind, error: unknown): string {
  if (kind === 'unreachable') return UNREACHABLE_MESSAGE;
  const message = error instanceof Error ? error.message : String(error);
  if (kind === 'server-error') return `The server answered with an error: ${message.replace(/[.\s]*$/, '')}. Try again in a moment.`;
  return message;
}

export interface LoadFailure {
  readonly element: HTMLElement;
  /** Stops waiting for the server (the failure is no longer shown). */
  dispose(): void;
}

/**
 * The failure of a load as an alert: `lead` says what did not load ("Orders could not be loaded."),
 * then why, then Retry (unless the server refused). `retry` runs on the button, and by itself once
 * a server that was not reached answers again; the caller replaces the failure then.
 */
export function loadFailure({ error, lead, retry }: { error: unknown; lead?: string; retry: () => void }): LoadFailure {
  const kind = failureKind(error);
  const unreachable = kind === 'unreachable';
  const button = h('button', { type: 'button', className: 'primary' }, 'Retry');
  const element = h(
    'div',
    { className: 'app-failure', role: 'alert', 'data-failure': kind },
    h('p', {}, lead ? h('strong', {}, lead) : null, lead ? ' ' : null, failureMessage(kind, error)),
    kind === 'unreachable' || kind === 'server-error' ? button : null,
  );
  let disposed = false;
  const again = () => {
    if (!disposed) retry();
  };
  button.addEventListener('click', () => {
    // While the server is away, ask it now: its answer retries every failed load at once (below).
    if (unreachable && !serverReachable()) void probe();
    else again();
  });
  const stop = unreachable ? onReachability((reachable) => reachable && again()) : () => {};
  // Another request may have found the server back before this failure showed.
  if (unreachable && serverReachable()) queueMicrotask(again);
  return {
    element,
    dispose() {
      disposed = true;
      stop();
    },
  };
}
