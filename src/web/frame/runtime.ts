// @trellis/runtime inside a feature's frame: data through the host by postMessage, navigation
// through the host (which checks the target), the signed-in user and the page's parameters as the host sent them.
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { FEATURE_PARAMS_MAX_LENGTH, featureQuery, parseFeaturePath, type FeatureParams, type FrameMessage, type HostMessage } from '../shared/frame-protocol.js';
import { currentUserFrom, type CurrentUser } from './current-user.js';
import { PlainFrameError, plainFrameError } from './errors.js';

type GraphQLErrors = NonNullable<Extract<HostMessage, { trellis: 'graphql-result' }>['errors']>;

/** A GraphQL answer with errors; `errors` keeps each one with its code. */
export class GraphQLError extends Error {
  constructor(readonly errors: GraphQLErrors) {
    super(errors.map((error) => error.message).join('\n') || 'The request failed');
    this.name = 'GraphQLError';
  }
}

let nextId = 1;
const pending = new Map<number, { resolve: (data: unknown) => void; reject: (error: Error) => void }>();
let currentUser: CurrentUser | null = null;
let currentParams: Readonly<FeatureParams> = Object.freeze({});
const renderListeners = new Set<() => void>();

export function post(message: FrameMessage): void {
  // The host is the parent; the frame does not know its origin (it has none of its own).
  window.parent.postMessage(message, '*');
}

/** Called by the frame for each message from the host. */
export function receive(message: HostMessage): void {
  if (message.trellis === 'graphql-result') {
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if (message.errors?.length) call.reject(new GraphQLError(message.errors));
    else call.resolve(message.data ?? null);
  } else if (message.trellis === 'render') {
    currentUser = currentUserFrom(message.user);
    currentParams = Object.freeze({ ...(message.params ?? {}) });
    renderListeners.forEach((listener) => listener());
  }
}

function onRender(listener: () => void): () => void {
  renderListeners.add(listener);
  return () => renderListeners.delete(listener);
}

/** Runs a query or mutation of the application's API as the signed-in user; resolves to `data`. */
export function graphql<T = unknown>(query: string, variables?: Record<string, unknown>): Promise<T> {
  if (typeof query !== 'string' || !query.trim()) return Promise.reject(new Error('graphql() needs a GraphQL document as a string'));
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (data: unknown) => void, reject });
    try {
      post({ trellis: 'graphql', id, query, ...(variables ? { variables } : {}) });
    } catch (error) {
      // Variables that are not data (an event, a function, an element) cannot be sent: say so here.
      pending.delete(id);
      reject(new PlainFrameError(plainFrameError(error)));
    }
  });
}

/**
 * Opens another page of the application, which reads `params` with useParams():
 * navigate('order-detail', { order: order._id }), or by its path, navigate('/feature/order-detail?order=12').
 * The page asks the application page, which opens it only when the user's role sees that feature.
 *
 * @throws Error for a target that is no feature, a parameter that is not text, a number or a
 *   boolean, or parameters longer than an address keeps (2000 characters).
 */
export function navigate(feature: string, params?: Record<string, unknown> | null): void {
  post({ trellis: 'navigate', path: featurePath(String(feature), params ?? {}) });
}

function featurePath(target: string, params: Record<string, unknown>): string {
  const base = target.startsWith('/') ? parseFeaturePath(target) : { featureId: target, params: {} };
  if (!base?.featureId || base.featureId.includes('/')) {
    throw new Error(`navigate() opens a page of the application, navigate('order-detail', { order: order._id }) or navigate('/feature/order-detail'); '${target}' is neither`);
  }
  const query = featureQuery({ ...base.params, ...paramText(params) });
  if (query.length > FEATURE_PARAMS_MAX_LENGTH) throw new Error(`navigate()'s parameters take ${query.length} characters in the address; at most ${FEATURE_PARAMS_MAX_LENGTH} travel`);
  return `/feature/${encodeURIComponent(base.featureId)}${query}`;
}

function paramText(params: Record<string, unknown>): FeatureParams {
  if (!isObject(params)) throw new Error("navigate()'s parameters are an object of names and values: navigate('order-detail', { order: order._id })");
  const text: FeatureParams = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new Error(`navigate()'s parameter '${name}' must be text, a number or a boolean: a page's parameters travel in its address`);
    }
    text[name] = String(value);
  }
  return text;
}

/** The parameters the page was opened with: /app/feature/order-detail?order=12 gives { order: '12' }; {} without any. */
export function useParams(): Readonly<FeatureParams> {
  return useSyncExternalStore(onRender, () => currentParams);
}

/**
 * The signed-in user: { _id, email, name, roleName, tableAccess, can(table, action) }; null until
 * the host has sent it. can('Orders', 'delete') tells whether the user's role may do that at all.
 */
export function useCurrentUser(): CurrentUser | null {
  return useSyncExternalStore(onRender, () => currentUser);
}

export interface QueryState<T> {
  data: T | undefined;
  loading: boolean;
  error: Error | undefined;
  /** Runs the query again (after a mutation, for example); resolves to the new data. */
  refetch: () => Promise<T | undefined>;
}

/** Runs the query when the component mounts and whenever the query or its variables change. */
export function useQuery<T = unknown>(query: string, variables?: Record<string, unknown>): QueryState<T> {
  const key = JSON.stringify(variables ?? null);
  const [state, setState] = useState<{ data: T | undefined; loading: boolean; error: Error | undefined }>({ data: undefined, loading: true, error: undefined });
  const latest = useRef(0);
  const run = useCallback(async () => {
    const call = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    try {
      const data = await graphql<T>(query, JSON.parse(key) ?? undefined);
      if (call === latest.current) setState({ data, loading: false, error: undefined });
      return data;
    } catch (error) {
      if (call === latest.current) setState((previous) => ({ data: previous.data, loading: false, error: error as Error }));
      return undefined;
    }
  }, [query, key]);
  useEffect(() => {
    void run();
  }, [run]);
  return { ...state, refetch: run };
}

export interface MutationState<T> {
  data: T | undefined;
  loading: boolean;
  error: Error | undefined;
}

/**
 * A mutation to run on demand: `const [save, { loading, error }] = useMutation(DOC)`, then
 * `await save({ data })` (or `save({ variables: { data } })`); rejects with the server's message.
 */
export function useMutation<T = unknown>(mutation: string): [(variables?: Record<string, unknown>) => Promise<T>, MutationState<T>] {
  const [state, setState] = useState<MutationState<T>>({ data: undefined, loading: false, error: undefined });
  const mutate = useCallback(
    async (variables?: Record<string, unknown>) => {
      const given = variables && Object.keys(variables).length === 1 && isObject(variables.variables) ? variables.variables : variables;
      setState((previous) => ({ ...previous, loading: true, error: undefined }));
      try {
        const data = await graphql<T>(mutation, given);
        setState({ data, loading: false, error: undefined });
        return data;
      } catch (error) {
        setState({ data: undefined, loading: false, error: error as Error });
        throw error;
      }
    },
    [mutation],
  );
  return [mutate, state];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
