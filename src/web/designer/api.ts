// The designer's access to the builder GraphQL: every section runs its documents through `useApi`,
// which reports an ended session to the page (the page asks to sign in again and keeps its state).
import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { isUnreachable, LOADS_WHEN_BACK } from '../shared/connectivity.js';
import type { MeQuery } from '../graphql-operations.js';
import { graphql, GraphQLRequestError, SessionExpiredError } from '../shared/graphql.js';
import { useRetryWhenServerBack } from './recovery.js';

/** The signed-in user, as the shell's first query (Me) reads them. */
export type Me = MeQuery['me'];

export interface DesignerContextValue {
  me: Me;
  /** Effective permissions of the signed-in user (every permission for an admin). */
  permissions: ReadonlySet<string>;
  isAdmin: boolean;
  appName: string;
  /** Runs a builder GraphQL document; throws GraphQLRequestError, or SessionExpiredError after telling the page. */
  run: <T = any>(query: string, variables?: Record<string, unknown>) => Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Shows a short message at the bottom of the page. */
  toast: (message: string) => void;
  refreshApp: () => void;
}

export const DesignerContext = createContext<DesignerContextValue | null>(null);

export function useDesigner(): DesignerContextValue {
  const value = useContext(DesignerContext);
  if (!value) throw new Error('useDesigner outside the designer');
  return value;
}

/** Wraps graphql() so that an ended session calls `onExpired` before the error reaches the caller. */
export function makeRun(onExpired: () => void) {
  return async <T,>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    try {
      return await graphql<T>(query, variables);
    } catch (error) {
      if (error instanceof SessionExpiredError) onExpired();
      throw error;
    }
  };
}

/** The message to show for a failed call. */
export function errorMessage(error: unknown): string {
  if (error instanceof GraphQLRequestError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The errors of a failed call by field, for showing them beside the field: `details.field` of an
 * error, and each of `details.issues` ({ field, message }) of a validation error.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof GraphQLRequestError)) return {};
  const out: Record<string, string> = {};
  for (const e of error.errors) {
    const details = e.extensions?.details;
    if (typeof details?.field === 'string') out[details.field] ??= e.message;
    if (!Array.isArray(details?.issues)) continue;
    for (const issue of details.issues as { field?: unknown; message?: unknown }[]) {
      if (typeof issue.field === 'string' && typeof issue.message === 'string') out[issue.field] ??= issue.message;
    }
  }
  return out;
}

/**
 * Loads data when the dependencies change; `reload()` loads again. A load that did not reach the
 * server loads again by itself when the server answers; a new load clears the error it replaces.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean; unreachable: boolean }>({ data: undefined, error: null, loading: true, unreachable: false });
  const [tick, setTick] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, error: null, loading: true, unreachable: false }));
    loader
      .current()
      .then((data) => live && setState({ data, error: null, loading: false, unreachable: false }))
      .catch((error) => {
        if (!live) return;
        // The banner says the server is away; the part that failed says only that it loads again by itself.
        const unreachable = isUnreachable(error);
        setState((previous) => ({ data: previous.data, error: unreachable ? LOADS_WHEN_BACK : errorMessage(error), loading: false, unreachable }));
      });
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useRetryWhenServerBack(state.unreachable, reload);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
