// Recovery from failed loads: code loaded on demand (a section, the editor) that failed while the
// server was away loads again by Retry or by itself when the server answers; the banner says the
// server is away while it is. No failure blanks the page, and no "Loading…" stays beside an error.
import { Component, lazy, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { isUnreachable, onReachability, LOADS_WHEN_BACK, probe, reportUnreachable, serverReachable, UNREACHABLE_MESSAGE } from '../shared/connectivity.js';

type Loader<P> = () => Promise<{ default: ComponentType<P> }>;

/** A lazily loaded component whose failed load is tried again on the next render after `retryFailed()`. */
export interface RetryableLazy<P> {
  (props: P): ReactNode;
}

const failedLoads = new Set<() => void>();

/** Lets every lazily loaded component whose code failed to load try again (React.lazy keeps a failure forever). */
export function retryFailedLoads(): void {
  for (const reset of [...failedLoads]) reset();
  failedLoads.clear();
}

export function retryableLazy<P extends object>(load: Loader<P>): RetryableLazy<P> {
  const make = () =>
    lazy(() =>
      load().catch((error: unknown) => {
        failedLoads.add(() => (current = make()));
        // The code did not arrive: the server is away until its health answers.
        if (isUnreachable(error)) reportUnreachable();
        throw error;
      }),
    );
  let current = make();
  return function Retryable(props: P) {
    const Current = current as unknown as ComponentType<P>;
    return <Current {...props} />;
  };
}

/** Whether the server answers now, kept current. */
export function useServerReachable(): boolean {
  const [reachable, setReachable] = useState(serverReachable);
  useEffect(() => onReachability(setReachable), []);
  return reachable;
}

/**
 * While `waiting` (a load failed because the server was not reached), calls `retry` when the server
 * answers again, or at once when another request already found it back.
 */
export function useRetryWhenServerBack(waiting: boolean, retry: () => void): void {
  useEffect(() => {
    if (!waiting) return;
    if (serverReachable()) retry();
    return onReachability((reachable) => reachable && retry());
  }, [waiting, retry]);
}

/**
 * A failed load in plain words with Retry: `onRetry` runs on the button, and by itself when the server
 * answers again. While the server is away, the banner (ConnectionBanner) says so once for the page.
 */
export function LoadFailure({ error, what, onRetry }: { error: unknown; what: string; onRetry: () => void }) {
  const unreachable = isUnreachable(error);
  useRetryWhenServerBack(unreachable, onRetry);
  const message = unreachable ? LOADS_WHEN_BACK : error instanceof Error ? error.message : String(error);
  return (
    <div className="load-failure" role="alert">
      <p>
        <strong>{what} could not be loaded.</strong> {message}
      </p>
      <button
        type="button"
        onClick={() => {
          // While the server is away, ask it now: its answer retries every failed load at once (above).
          if (unreachable && !serverReachable()) void probe();
          else onRetry();
        }}
      >
        Retry
      </button>
    </div>
  );
}

/**
 * Catches the failure of code loaded on demand below it (or of a render) and shows it with Retry
 * instead of blanking the page; `resetKey` changing (another section) clears the failure.
 */
export class LoadBoundary extends Component<{ what: string; resetKey?: string; children: ReactNode }, { error: unknown; key: string | undefined }> {
  override state: { error: unknown; key: string | undefined } = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  static getDerivedStateFromProps(props: { resetKey?: string }, state: { error: unknown; key: string | undefined }) {
    return props.resetKey === state.key ? null : { error: null, key: props.resetKey };
  }

  retry = () => {
    retryFailedLoads();
    this.setState({ error: null });
  };

  override render() {
    if (this.state.error) return <LoadFailure error={this.state.error} what={this.props.what} onRetry={this.retry} />;
    return this.props.children;
  }
}

/** Says, above everything, that the server is away and that the page retries by itself; Retry asks now. */
export function ConnectionBanner() {
  const reachable = useServerReachable();
  const [asking, setAsking] = useState(false);
  if (reachable) return null;
  return (
    <div className="connection-banner" role="alert">
      <span>{UNREACHABLE_MESSAGE} Nothing you typed is lost.</span>
      <button
        type="button"
        disabled={asking}
        onClick={async () => {
          setAsking(true);
          await probe();
          setAsking(false);
        }}
      >
        Retry now
      </button>
    </div>
  );
}
