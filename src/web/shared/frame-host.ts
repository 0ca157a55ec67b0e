// The host side of a feature's frame, without a framework (the application shell has none): creates
// the sandboxed iframe, sends it the compiled feature and its parameters, relays its data calls to
// /graphql as the signed-in user, marked as a feature's calls (the server then allows generated
// operations only), and hands its navigations and errors to the page.
import { reachingFetch, ServerUnreachableError } from './connectivity.js';
import { parseFeaturePath, type FeatureParams, type FrameMessage, type FrameUser, type HostMessage } from './frame-protocol.js';
import { graphqlAnswer, SessionExpiredError } from './graphql.js';

/** The frame document: the same for every feature, under its own CSP (no network, opaque origin); its version lets the browser cache it. */
export const FRAME_URL = `/app/frame?v=${__FRAME_VERSION__}`;

/** What the frame needs to render the feature; it may still be loading when the frame is created. */
export interface FeatureToRender {
  title: string;
  script: string;
  user: FrameUser;
  cssVariables: Record<string, string>;
}

export interface FeatureFrameOptions {
  featureId: string;
  /** What the feature reads with useParams(); {} by default. */
  params?: FeatureParams;
  /**
   * The designer's scratch preview: every write the feature makes is checked by the server and then
   * rolled back (the x-trellis-scratch header); false by default.
   */
  scratch?: boolean;
  /**
   * The feature, or its promise: the frame starts loading at once, in parallel with the requests
   * for the code (a rejected promise leaves the frame empty; the caller shows the error).
   */
  feature: FeatureToRender | Promise<FeatureToRender>;
  /**
   * A feature asked to open another feature: navigate('<id>', params). The page decides, since the
   * frame can reach no other page: it opens only a feature the user may see.
   */
  onNavigate?: (featureId: string, params: FeatureParams) => void;
  onSessionExpired?: () => void;
  onRendered?: () => void;
  /** The page could not render; the frame shows the message in its place. */
  onFailed?: (message: string) => void;
  /** The page threw an error it did not catch (the message in plain words); the page stays. */
  onError?: (message: string) => void;
  /**
   * The frame did not get what it needs to run: its document did not arrive (ServerUnreachableError
   * when the server did not answer, another Error when it answered with something else), or the page
   * failed while the server does not answer (a library it imports did not arrive). The caller says
   * so in the frame's place; without this option such a failure goes to `onFailed`.
   */
  onUnavailable?: (error: Error) => void;
}

/** Whether the server answers GET /healthz (an answer or not also tells ../shared/connectivity.ts). */
function serverAnswers(): Promise<boolean> {
  return reachingFetch('/healthz', { cache: 'no-store' }).then(
    () => true,
    () => false,
  );
}

/** What a feature's data call gets when the server was not reached: it does not retry by itself. */
const RELAY_UNREACHABLE = 'The server cannot be reached. Check the connection and try again.';

/** Adds a fresh frame running the feature to `container`; `destroy()` removes it and stops relaying. */
export function mountFeatureFrame(container: HTMLElement, options: FeatureFrameOptions): { destroy(): void } {
  const iframe = document.createElement('iframe');
  iframe.className = 'feature-frame';
  iframe.title = 'Loading the page';
  // Scripts and forms (submit events), nothing else: no same-origin rights, no top navigation, no pop-ups.
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  iframe.referrerPolicy = 'no-referrer';
  iframe.src = FRAME_URL;
  const send = (message: HostMessage) => iframe.contentWindow?.postMessage(message, '*');
  let ready = false;
  let destroyed = false;

  const onMessage = async (event: MessageEvent<FrameMessage>) => {
    // Only this frame's messages; its origin is opaque ("null"), so its window identifies it.
    if (event.source !== iframe.contentWindow || typeof event.data !== 'object' || event.data === null) return;
    const message = event.data;
    switch (message.trellis) {
      case 'ready': {
        ready = true;
        const feature = await Promise.resolve(options.feature).catch(() => null);
        if (!feature) return;
        return send({ trellis: 'render', featureId: options.featureId, script: feature.script, user: feature.user, cssVariables: feature.cssVariables, params: options.params ?? {} });
      }
      case 'rendered':
        return options.onRendered?.();
      case 'failed': {
        // What failed while the server is away (an on-demand module that did not arrive) is a load to try again.
        if (options.onUnavailable && !(await serverAnswers())) return destroyed ? undefined : options.onUnavailable(new ServerUnreachableError());
        return options.onFailed?.(String(message.message));
      }
      case 'error':
        return options.onError?.(String(message.message));
      case 'navigate': {
        const target = parseFeaturePath(String(message.path));
        if (target) options.onNavigate?.(target.featureId, target.params);
        return;
      }
      case 'graphql': {
        const id = Number(message.id);
        if (typeof message.query !== 'string') return send({ trellis: 'graphql-result', id, errors: [{ message: 'The query must be a string' }] });
        const variables = typeof message.variables === 'object' && message.variables !== null ? message.variables : {};
        try {
          const answer = await graphqlAnswer(message.query, variables, { feature: options.featureId, scratch: options.scratch === true });
          return send({ trellis: 'graphql-result', id, ...(answer.data !== undefined ? { data: answer.data } : {}), ...(answer.errors ? { errors: answer.errors } : {}) });
        } catch (error) {
          if (error instanceof ServerUnreachableError) return send({ trellis: 'graphql-result', id, errors: [{ message: RELAY_UNREACHABLE, extensions: { code: 'UNREACHABLE' } }] });
          send({ trellis: 'graphql-result', id, errors: [{ message: (error as Error).message, extensions: { code: 'UNAUTHENTICATED' } }] });
          if (error instanceof SessionExpiredError) options.onSessionExpired?.();
        }
      }
    }
  };
  window.addEventListener('message', onMessage);
  // The frame's script says it is ready before its document has loaded: a frame that loads without
  // saying so shows the browser's error page (or an error of the server). The server's health says which.
  iframe.addEventListener('load', async () => {
    if (ready || destroyed) return;
    const reached = await serverAnswers();
    if (ready || destroyed) return;
    options.onUnavailable?.(reached ? new Error("The page's frame could not be loaded") : new ServerUnreachableError());
  });
  void Promise.resolve(options.feature).then(
    (feature) => (iframe.title = feature.title),
    () => {},
  );
  container.append(iframe);
  return {
    destroy() {
      destroyed = true;
      window.removeEventListener('message', onMessage);
      iframe.remove();
    },
  };
}
