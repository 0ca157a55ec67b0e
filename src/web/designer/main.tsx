// The designer (GET /): a single-page app for people, on the builder GraphQL with the session token.
import { StrictMode, Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import '../shared/base.css';
import './designer.css';
import { GraphQLRequestError } from '../shared/graphql.js';
import { loadSession, replaceSessionToken, signIn, signOut, type Session } from '../shared/session.js';
import { DesignerContext, errorMessage, makeRun, useDesigner, type DesignerContextValue, type Me } from './api.js';
import { ErrorText, Loading } from './components.js';

const ALL_PERMISSIONS = ['config:read', 'features:write', 'tables:write', 'menus:write', 'hooks:write', 'roles:write', 'env:write', 'config:delete', 'admin', 'ai_designer'];

interface NavItem {
  path: string;
  label: string;
  adminOnly?: boolean;
  render: (rest: string[]) => ReactNode;
}

const FeaturesSection = lazy(() => import('./sections/features.js'));
const HooksSection = lazy(() => import('./sections/hooks.js'));
const TablesSection = lazy(() => import('./sections/tables.js'));
const MenusSection = lazy(() => import('./sections/menus.js'));
const RolesSection = lazy(() => import('./sections/roles.js'));
const UsersSection = lazy(() => import('./sections/users.js'));
const EnvironmentSection = lazy(() => import('./sections/environment.js'));
const IntegrationsSection = lazy(() => import('./sections/integrations.js'));
const McpKeysSection = lazy(() => import('./sections/mcp-keys.js'));
const AuditSection = lazy(() => import('./sections/audit.js'));
const SettingsSection = lazy(() => import('./sections/settings.js'));

const NAV: NavItem[] = [
  { path: 'features', label: 'Features', render: (rest) => <FeaturesSection id={rest[0]} /> },
  { path: 'hooks', label: 'Hooks', render: (rest) => <HooksSection id={rest[0]} /> },
  { path: 'tables', label: 'Tables', render: (rest) => <TablesSection id={rest[0]} tab={rest[1]} /> },
  { path: 'menus', label: 'Menus', render: () => <MenusSection /> },
  { path: 'roles', label: 'Roles', render: () => <RolesSection /> },
  { path: 'users', label: 'Users', adminOnly: true, render: () => <UsersSection /> },
  { path: 'environment', label: 'Environment', render: () => <EnvironmentSection /> },
  { path: 'integrations', label: 'Integrations', adminOnly: true, render: () => <IntegrationsSection /> },
  { path: 'mcp-keys', label: 'MCP keys', render: () => <McpKeysSection /> },
  { path: 'audit', label: 'Audit', adminOnly: true, render: () => <AuditSection /> },
  { path: 'settings', label: 'Settings', adminOnly: true, render: () => <SettingsSection /> },
];

/** The route in the URL's hash: #/features/orders -> ['features', 'orders']. */
function routeFromHash(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

/** The route last seen, to tell a change of section from a change within one. */
let routeFromHashCache = routeFromHash();

export function navigate(...parts: string[]) {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

const ME = `query Me { me { _id email name roleName isOwner roleId } roles { _id permissions } application { name } }`;

function Designer() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [expired, setExpired] = useState(false);
  const [profile, setProfile] = useState<{ me: Me; permissions: Set<string>; appName: string } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [route, setRoute] = useState(routeFromHash);
  const [toasts, setToasts] = useState<{ id: number; text: string }[]>([]);
  const [appTick, setAppTick] = useState(0);

  const mainRef = useRef<HTMLElement>(null);
  useEffect(() => {
    const onHash = () => {
      const next = routeFromHash();
      // Opening another section moves the focus to it, as a page load would: the next Tab is in the section.
      if (next[0] !== routeFromHashCache[0]) requestAnimationFrame(() => mainRef.current?.focus());
      routeFromHashCache = next;
      setRoute(next);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const run = useMemo(() => makeRun(() => setExpired(true)), []);
  const toast = useCallback((text: string) => {
    const id = Date.now() + Math.random();
    // The three newest: a burst of saves must not cover the page.
    setToasts((list) => [...list.slice(-2), { id, text }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 4000);
  }, []);

  useEffect(() => {
    if (!session || expired) return;
    run<{ me: Me & { roleId: string }; roles: { _id: string; permissions: string[] }[]; application: { name: string } }>(ME)
      .then(({ me, roles, application }) => {
        const granted = roles.find((role) => role._id === me.roleId)?.permissions ?? [];
        const permissions = new Set(granted.includes('admin') ? ALL_PERMISSIONS : granted);
        setProfile({ me, permissions, appName: application.name });
        document.title = `${application.name} · Trellis designer`;
      })
      .catch((error) => {
        // The designer needs config:read; someone whose role lacks it uses the application page.
        if (lacksPermission(error, 'config:read')) location.replace('/app');
        else setLoadError(errorMessage(error));
      });
  }, [session, expired, run, appTick]);

  const context = useMemo<DesignerContextValue | null>(
    () =>
      profile && {
        me: profile.me,
        permissions: profile.permissions,
        isAdmin: profile.permissions.has('admin'),
        appName: profile.appName,
        run,
        toast,
        refreshApp: () => setAppTick((t) => t + 1),
      },
    [profile, run, toast],
  );

  if (!session) return <SignInPage onSignedIn={setSession} />;
  if (!context) {
    if (expired) return <SignInPage notice="Your session has ended. Sign in again." onSignedIn={(next) => (setExpired(false), setSession(next))} />;
    if (!loadError) return <Loading />;
    return (
      <main className="sign-in">
        <div className="panel stack">
          <p className="error" role="alert">
            {loadError}
          </p>
          <div className="row">
            <a href="/app">Open the application</a>
            <button
              type="button"
              onClick={() => {
                void signOut(session);
                setSession(null);
                setLoadError(null);
              }}
            >
              Sign out
            </button>
          </div>
        </div>
      </main>
    );
  }

  const items = NAV.filter((item) => !item.adminOnly || context.isAdmin);
  const current = items.find((item) => item.path === route[0]) ?? items[0]!;
  return (
    <DesignerContext.Provider value={context}>
      <div className="designer">
        <header className="designer-header">
          <a className="brand" href="#/features">
            {context.appName} <span className="muted">· designer</span>
          </a>
          <a href="/app">Open the application</a>
          <span className="muted who">
            {context.me.email} · {context.me.roleName}
          </span>
          <ChangePassword onChanged={setSession} />
          <button
            type="button"
            onClick={() => {
              void signOut(session);
              setSession(null);
              setProfile(null);
            }}
          >
            Sign out
          </button>
        </header>
        <nav className="designer-nav" aria-label="Designer">
          <ul>
            {items.map((item) => (
              <li key={item.path}>
                <a href={`#/${item.path}`} aria-current={item === current ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main className="designer-main" ref={mainRef} tabIndex={-1} aria-label={current.label}>
          <Suspense fallback={<Loading />}>{current.render(current.path === route[0] ? route.slice(1) : [])}</Suspense>
        </main>
        <div className="toasts" role="status" aria-live="polite">
          {toasts.map((t) => (
            <p key={t.id}>{t.text}</p>
          ))}
        </div>
        {expired ? (
          <div className="overlay">
            <SignInPage
              notice="Your session has ended. Sign in again: nothing you typed is lost."
              onSignedIn={(next) => {
                setExpired(false);
                setSession(next);
              }}
            />
          </div>
        ) : null}
      </div>
    </DesignerContext.Provider>
  );
}

/** Whether a failed call was refused for want of `permission` (FORBIDDEN with details.missingPermission). */
function lacksPermission(error: unknown, permission: string): boolean {
  return error instanceof GraphQLRequestError && error.errors.some((entry) => entry.extensions?.details?.missingPermission === permission);
}

/** The signed-in user's own password: the current one, a new one; every other session ends. */
function ChangePassword({ onChanged }: { onChanged: (session: Session) => void }) {
  const { run, toast } = useDesigner();
  const [open, setOpen] = useState(false);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Change password
      </button>
    );
  }
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="password-title">
      <main className="sign-in">
        <form
          className="panel"
          onSubmit={async (event) => {
            event.preventDefault();
            setError(null);
            try {
              const { changeMyPassword } = await run<{ changeMyPassword: { token: string; expiresIn: number } }>(
                'mutation($c: String!, $n: String!) { changeMyPassword(currentPassword: $c, newPassword: $n) { token expiresIn } }',
                { c: current, n: next },
              );
              const session = replaceSessionToken(changeMyPassword.token, changeMyPassword.expiresIn);
              if (session) onChanged(session);
              setOpen(false);
              setCurrent('');
              setNext('');
              toast('Password changed; your other sessions have ended');
            } catch (failure) {
              setError(errorMessage(failure));
            }
          }}
        >
          <h1 id="password-title">Change your password</h1>
          <label className="field">
            <span>Current password</span>
            <input type="password" autoComplete="current-password" required autoFocus value={current} onChange={(event) => setCurrent(event.target.value)} />
          </label>
          <label className="field">
            <span>New password</span>
            <input type="password" autoComplete="new-password" required minLength={8} value={next} onChange={(event) => setNext(event.target.value)} />
          </label>
          <ErrorText error={error} />
          <div className="row">
            <button type="submit" className="primary">
              Save the new password
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      </main>
    </div>
  );
}

function SignInPage({ notice, onSignedIn }: { notice?: string; onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(email.trim(), password));
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }
  return (
    <main className="sign-in">
      <form onSubmit={submit} className="panel" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Trellis</h1>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <label className="field">
          <span>Email</span>
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Designer />
  </StrictMode>,
);
