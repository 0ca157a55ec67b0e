// A feature's frame (GET /app/frame): sandboxed without same-origin rights, under a CSP that allows
// it no network, and without WebRTC, which that CSP does not govern. It offers exactly the modules
// of the authoring guide, waits for the host to send the compiled feature, renders its default
// export, and tells the host, in plain words, of every error the page does not catch.
import * as React from 'react';
import * as jsxRuntime from 'react/jsx-runtime';
import { createRoot, type Root } from 'react-dom/client';
import { ALLOWED_FEATURE_MODULES } from '../../features/modules.js';
import type { HostMessage } from '../shared/frame-protocol.js';
import { plainFrameError } from './errors.js';
import { registeredModule } from './modules/register.js';
import * as runtime from './runtime.js';
import * as ui from './ui.js';
import { removeWebRtc } from './webrtc.js';

// Before the frame listens to its host, and so before any feature code runs.
removeWebRtc(window);

const { UI_CSS, ...uiExports } = ui;
const { post, receive, GraphQLError: _error, ...runtimeExports } = runtime;

/** What `require` returns inside a feature: the guide's modules, and React's JSX runtime the compiler uses. */
const BUILT_IN: Record<string, unknown> = {
  react: React,
  'react/jsx-runtime': jsxRuntime,
  '@trellis/runtime': runtimeExports,
  '@trellis/ui': uiExports,
};

/** The larger libraries, each a script of its own (/web/frame/<name>.js) loaded only for a feature that imports it. */
const ON_DEMAND = new Set(['date-fns', 'lodash-es']);

for (const module of ALLOWED_FEATURE_MODULES) {
  if (!(module.name in BUILT_IN) && !ON_DEMAND.has(module.name)) throw new Error(`The frame lacks the module ${module.name}`);
  const missing = module.exports?.filter((name) => typeof (BUILT_IN[module.name] as Record<string, unknown>)[name] !== 'function');
  if (missing?.length) throw new Error(`The frame's ${module.name} lacks ${missing.join(', ')}`);
}

function allowedNames(): string {
  return ALLOWED_FEATURE_MODULES.map((m) => m.name).join(', ');
}

function featureRequire(name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(BUILT_IN, name)) return BUILT_IN[name];
  if (ON_DEMAND.has(name)) return registeredModule(name);
  throw new Error(`Cannot import '${name}': a feature imports only ${allowedNames()}`);
}

/** Loads the on-demand modules the compiled script requires (the compiler writes require("name")). */
async function loadModules(script: string): Promise<void> {
  const wanted = new Set([...script.matchAll(/\brequire\("([^"]+)"\)/g)].map((match) => match[1]!).filter((name) => ON_DEMAND.has(name) && !registeredModule(name)));
  await Promise.all(
    [...wanted].map(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const tag = document.createElement('script');
          tag.src = `/web/frame/${name}.js`;
          tag.onload = () => resolve();
          tag.onerror = () => reject(new Error(`The module ${name} could not be loaded`));
          document.head.append(tag);
        }),
    ),
  );
}

class ErrorBoundary extends React.Component<{ children: React.ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };
  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
  override componentDidCatch(error: Error) {
    post({ trellis: 'failed', message: plainFrameError(error) });
  }
  override render() {
    return this.state.error ? <ErrorPanel message={plainFrameError(this.state.error)} /> : this.props.children;
  }
}

function ErrorPanel({ message }: { message: string }) {
  return (
    <div role="alert" className="t-card" style={{ borderColor: 'var(--color-danger)' }}>
      <h1 className="t-heading" style={{ fontSize: '1.1rem', color: 'var(--color-danger)' }}>
        This page failed
      </h1>
      <pre style={{ whiteSpace: 'pre-wrap', margin: '.5rem 0 0' }}>{message}</pre>
    </div>
  );
}

let root: Root | null = null;

async function render(message: Extract<HostMessage, { trellis: 'render' }>) {
  for (const [name, value] of Object.entries(message.cssVariables)) {
    if (/^--[a-z][a-z0-9-]*$/.test(name)) document.documentElement.style.setProperty(name, value);
  }
  root ??= createRoot(document.getElementById('root')!);
  let Page: React.ComponentType;
  try {
    await loadModules(message.script);
    const module = { exports: {} as Record<string, unknown> };
    // The frame's CSP allows this evaluation and no network: the code has nowhere to send anything but the host.
    new Function('require', 'module', 'exports', message.script)(featureRequire, module, module.exports);
    const exported = module.exports.default;
    if (typeof exported !== 'function') throw new Error('The feature has no default export that is a component');
    Page = exported as React.ComponentType;
  } catch (error) {
    const message = plainFrameError(error);
    root.render(<ErrorPanel message={message} />);
    post({ trellis: 'failed', message });
    return;
  }
  root.render(
    <ErrorBoundary key={message.featureId}>
      <Page />
    </ErrorBoundary>,
  );
  requestAnimationFrame(() => post({ trellis: 'rendered' }));
}

const style = document.createElement('style');
style.textContent = UI_CSS;
document.head.append(style);

// What the page does not catch (an event handler that throws, a rejected data call) would reach only
// the console: the host shows it.
window.addEventListener('error', (event) => post({ trellis: 'error', message: plainFrameError(event.error ?? event.message) }));
window.addEventListener('unhandledrejection', (event) => post({ trellis: 'error', message: plainFrameError(event.reason) }));

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  // Only the host that embeds this frame speaks to it; other frames' messages are ignored.
  if (event.source !== window.parent || typeof event.data !== 'object' || event.data === null) return;
  receive(event.data);
  if (event.data.trellis === 'render') void render(event.data);
});
post({ trellis: 'ready' });
