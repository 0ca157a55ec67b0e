// A feature's frame (GET /app/frame): sandboxed without same-origin rights, under a CSP that allows
// it no network. It offers exactly the modules of the authoring guide, waits for the host to send
// the compiled feature, and renders its default export.
import * as React from 'react';
import * as jsxRuntime from 'react/jsx-runtime';
import { createRoot, type Root } from 'react-dom/client';
import * as dateFns from 'date-fns';
import * as lodash from 'lodash-es';
import { ALLOWED_FEATURE_MODULES } from '../../features/modules.js';
import type { HostMessage } from '../shared/frame-protocol.js';
import * as runtime from './runtime.js';
import * as ui from './ui.js';

const { UI_CSS, ...uiExports } = ui;
const { post, receive, GraphQLError: _error, ...runtimeExports } = runtime;

/** What `require` returns inside a feature: the guide's modules, and React's JSX runtime the compiler uses. */
export const FEATURE_MODULES: Record<string, unknown> = {
  react: React,
  'react/jsx-runtime': jsxRuntime,
  '@trellis/runtime': runtimeExports,
  '@trellis/ui': uiExports,
  'date-fns': dateFns,
  'lodash-es': lodash,
};

for (const module of ALLOWED_FEATURE_MODULES) {
  if (!(module.name in FEATURE_MODULES)) throw new Error(`The frame lacks the module ${module.name}`);
}

function featureRequire(name: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(FEATURE_MODULES, name)) {
    throw new Error(`Cannot import '${name}': a feature imports only ${ALLOWED_FEATURE_MODULES.map((m) => m.name).join(', ')}`);
  }
  return FEATURE_MODULES[name];
}

class ErrorBoundary extends React.Component<{ children: React.ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };
  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
  override componentDidCatch(error: Error) {
    post({ trellis: 'failed', message: error.message });
  }
  override render() {
    return this.state.error ? <ErrorPanel message={this.state.error.message} /> : this.props.children;
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

function render(message: Extract<HostMessage, { trellis: 'render' }>) {
  for (const [name, value] of Object.entries(message.cssVariables)) {
    if (/^--[a-z][a-z0-9-]*$/.test(name)) document.documentElement.style.setProperty(name, value);
  }
  root ??= createRoot(document.getElementById('root')!);
  let Page: React.ComponentType;
  try {
    const module = { exports: {} as Record<string, unknown> };
    // The frame's CSP allows this evaluation and no network: the code has nowhere to send anything but the host.
    new Function('require', 'module', 'exports', message.script)(featureRequire, module, module.exports);
    const exported = module.exports.default;
    if (typeof exported !== 'function') throw new Error('The feature has no default export that is a component');
    Page = exported as React.ComponentType;
  } catch (error) {
    root.render(<ErrorPanel message={(error as Error).message} />);
    post({ trellis: 'failed', message: (error as Error).message });
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

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  // Only the host that embeds this frame speaks to it; other frames' messages are ignored.
  if (event.source !== window.parent || typeof event.data !== 'object' || event.data === null) return;
  receive(event.data);
  if (event.data.trellis === 'render') render(event.data);
});
post({ trellis: 'ready' });
