// The signed-in designer: header, navigation, the section of the address, messages, and the dialogs
// that ask to sign in again or change the password. Loaded after sign-in (the sign-in page does not
// carry it). A section whose code fails to load says so with Retry and loads again by itself when the
// server answers; moving away from unsaved changes asks first.
import { Suspense, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { ChangeMyPasswordMutation, MeQuery } from '../graphql-operations.js';
import { GraphQLRequestError } from '../shared/graphql.js';
import { replaceSessionToken, signOut, type Session } from '../shared/session.js';
import { DesignerContext, errorMessage, makeRun, useDesigner, useLoad, type DesignerContextValue } from './api.js';
import { ErrorText, Loading, Modal } from './components.js';
import { PERMISSIONS } from '../../access/permission-list.js';
import { ConnectionBanner, LoadBoundary, retryableLazy } from './recovery.js';
import { confirmLeaving, routeFromHash } from './routes.js';
import { SignInPage } from './sign-in-page.js';

interface NavItem {
  path: string;
  label: string;
  adminOnly?: boolean;
  render: (rest: string[]) => ReactNode;
}

const FeaturesSection = retryableLazy(() => import('./sections/features.js'));
const HooksSection = retryableLazy(() => import('./sections/hooks.js'));
const TablesSection = retryableLazy(() => import('./sections/tables.js'));
const MenusSection = retryableLazy(() => import('./sections/menus.js'));
const RolesSection = retryableLazy(() => import('./sections/roles.js'));
const UsersSection = retryableLazy(() => import('./sections/users.js'));
const EnvironmentSection = retryableLazy(() => import('./sections/environment.js'));
const IntegrationsSection = retryableLazy(() => import('./sections/integrations.js'));
const McpKeysSection = retryableLazy(() => import('./sections/mcp-keys.js'));
const AuditSection = retryableLazy(() => import('./sections/audit.js'));
const SettingsSection = retryableLazy(() => import('./sections/settings.js'));

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

const ME = `query Me { me { _id email name roleName isOwner roleId } roles { _id permissions } application { name } }`;

export default function Shell({ session, onSession }: { session: Session; onSession: (session: Session | null) => void }) {
  const [expired, setExpired] = useState(false);
  const [route, setRoute] = useState(routeFromHash);
  const [toasts, setToasts] = useState<{ id: number; text: string }[]>([]);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const mainRef = useRef<HTMLElement>(null);
  useFocusKeeper(mainRef);

  useEffect(() => {
    let shown = routeFromHash();
    let shownHash = location.hash;
    const onHash = () => {
      const next = routeFromHash();
      const sameEditor = next.slice(0, 2).join('/') === shown.slice(0, 2).join('/');
      // Leaving an editor with unsaved changes asks first; "stay" puts the address back as it was.
      if (!sameEditor && !confirmLeaving()) {
        history.replaceState(null, '', shownHash);
        return;
      }
      // Opening another section moves the focus to it, as a page load would: the next Tab is in the section.
      if (next[0] !== shown[0]) requestAnimationFrame(() => mainRef.current?.focus());
      shown = next;
      shownHash = location.hash;
      setMenuOpen(false);
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

  const profile = useLoad(
    () =>
      run<MeQuery>(ME).catch((error: unknown) => {
        // The designer needs config:read; someone whose role lacks it uses the application page.
        if (!lacksPermission(error, 'config:read')) throw error;
        location.replace('/app');
        return new Promise<never>(() => {});
      }),
    [session],
  );
  useEffect(() => {
    if (profile.data) document.title = `${profile.data.application.name} · Trellis designer`;
  }, [profile.data]);

  const context = useMemo<DesignerContextValue | null>(() => {
    if (!profile.data) return null;
    const { me, roles, application } = profile.data;
    const granted = roles.find((role) => role._id === me.roleId)?.permissions ?? [];
    const permissions = new Set(granted.includes('admin') ? PERMISSIONS : granted);
    return { me, permissions, isAdmin: permissions.has('admin'), appName: application.name, run, toast, refreshApp: profile.reload };
  }, [profile.data, profile.reload, run, toast]);

  const endSession = () => {
    if (!confirmLeaving()) return;
    void signOut(session);
    onSession(null);
  };

  if (!context) {
    if (expired) return <SignInPage notice="Your session has ended. Sign in again." onSignedIn={(next) => (setExpired(false), onSession(next))} />;
    if (!profile.error) return <Loading what="Loading the designer…" />;
    return (
      <main className="sign-in">
        <div className="panel stack">
          <ErrorText error={profile.error} onRetry={profile.reload} />
          <div className="row">
            <a href="/app">Open the application</a>
            <button type="button" onClick={endSession}>
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
      <div className="designer" data-menu={menuOpen ? 'open' : 'closed'}>
        <a
          className="skip-link"
          href={`#/${current.path}`}
          onClick={(event) => {
            event.preventDefault();
            mainRef.current?.focus();
          }}
        >
          Skip to content
        </a>
        <ConnectionBanner />
        <header className="designer-header">
          <a className="brand" href="#/features">
            {context.appName} <span className="muted">· designer</span>
          </a>
          <div
            className="header-actions"
            id="designer-actions"
            onKeyDown={(event) => {
              if (event.key === 'Escape' && menuOpen) {
                setMenuOpen(false);
                menuButton.current?.focus();
              }
            }}
          >
            <a href="/app">Open the application</a>
            <span className="muted who">
              {context.me.email} · {context.me.roleName}
            </span>
            <ChangePassword onChanged={onSession} />
            <button type="button" onClick={endSession}>
              Sign out
            </button>
          </div>
        </header>
        <nav
          className="designer-nav"
          aria-label="Designer"
          onKeyDown={(event) => {
            if (event.key === 'Escape' && menuOpen) {
              setMenuOpen(false);
              menuButton.current?.focus();
            }
          }}
        >
          {/* Shown below 800 px only: the sections and the header's actions fold behind it. */}
          <button type="button" ref={menuButton} className="menu-toggle" aria-expanded={menuOpen} aria-controls="designer-sections designer-actions" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
          <ul id="designer-sections">
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
          <LoadBoundary what={`The ${current.label} section`} resetKey={current.path}>
            <Suspense fallback={<Loading />}>{current.render(current.path === route[0] ? route.slice(1) : [])}</Suspense>
          </LoadBoundary>
        </main>
        <div className="toasts" role="status" aria-live="polite">
          {toasts.map((t) => (
            <p key={t.id}>{t.text}</p>
          ))}
        </div>
        {expired ? (
          // Not dismissible: the page behind cannot work without a session; signing in keeps what was typed.
          <Modal labelledBy="sign-in-title">
            <SignInPage
              inDialog
              notice="Your session has ended. Sign in again: nothing you typed is lost."
              onSignedIn={(next) => {
                setExpired(false);
                onSession(next);
              }}
            />
          </Modal>
        ) : null}
      </div>
    </DesignerContext.Provider>
  );
}

/** Whether a failed call was refused for want of `permission` (FORBIDDEN with details.missingPermission). */
function lacksPermission(error: unknown, permission: string): boolean {
  return error instanceof GraphQLRequestError && error.errors.some((entry) => entry.extensions?.details?.missingPermission === permission);
}

/**
 * Keeps the keyboard's place when what had the focus goes away: a button disabled while it works
 * gets the focus back when it is enabled again; a control removed (a form closed, a row deleted)
 * leaves the focus on the section, not on the page's body, so the next Tab continues there.
 */
function useFocusKeeper(mainRef: React.RefObject<HTMLElement | null>) {
  useEffect(() => {
    let last: HTMLElement | null = null;
    let waiting: number | undefined;
    let since = 0;
    const onFocusIn = (event: FocusEvent) => {
      if (event.target instanceof HTMLElement) last = event.target;
    };
    const check = () => {
      waiting = undefined;
      if (!last || document.querySelector('dialog[open]')) return;
      const lost = document.activeElement === document.body || document.activeElement === null;
      if (!last.isConnected) {
        last = null;
        // Without scrolling: the page stays where the person was looking.
        if (lost) mainRef.current?.focus({ preventScroll: true });
      } else if ((last as HTMLButtonElement).disabled) {
        // Busy while it works (a save): back on it when it is enabled again, within a while.
        if (performance.now() - since < BUSY_WAIT_MS) waiting = requestAnimationFrame(check);
      } else if (lost) {
        last.focus();
      }
    };
    const observer = new MutationObserver(() => {
      if (waiting !== undefined || !last) return;
      if (!last.isConnected || (last as HTMLButtonElement).disabled) {
        since = performance.now();
        waiting = requestAnimationFrame(check);
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['disabled'] });
    document.addEventListener('focusin', onFocusIn);
    return () => {
      observer.disconnect();
      document.removeEventListener('focusin', onFocusIn);
      if (waiting !== undefined) cancelAnimationFrame(waiting);
    };
  }, [mainRef]);
}

/** How long a control disabled while it works is waited for, to give it the focus back. */
const BUSY_WAIT_MS = 15_000;

/** The signed-in user's own password: the current one, a new one; every other session ends. */
function ChangePassword({ onChanged }: { onChanged: (session: Session) => void }) {
  const { run, toast } = useDesigner();
  const [open, setOpen] = useState(false);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<string | null>(null);
  const close = () => {
    setOpen(false);
    setCurrent('');
    setNext('');
    setError(null);
  };
  return (
    <>
      <button type="button" onClick={() => setOpen(true)} aria-haspopup="dialog">
        Change password
      </button>
      {open ? (
        <Modal labelledBy="password-title" onClose={close}>
          <form
            className="panel"
            onSubmit={async (event) => {
              event.preventDefault();
              setError(null);
              try {
                const { changeMyPassword } = await run<ChangeMyPasswordMutation>(
                  'mutation ChangeMyPassword($c: String!, $n: String!) { changeMyPassword(currentPassword: $c, newPassword: $n) { token expiresIn } }',
                  { c: current, n: next },
                );
                const session = replaceSessionToken(changeMyPassword.token, changeMyPassword.expiresIn);
                if (session) onChanged(session);
                close();
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
              <button type="button" onClick={close}>
                Cancel
              </button>
            </div>
          </form>
        </Modal>
      ) : null}
    </>
  );
}

