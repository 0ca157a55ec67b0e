// The application page (GET /app, /app/feature/<id>): the shell of the signed-in user (menus of the
// features their role sees, theme variables) and one sandboxed frame for the open feature. Written
// without a framework: the shell stays small and the frame starts loading at once.
import '../shared/base.css';
import './app.css';
import { h } from '../shared/dom.js';
import { mountFeatureFrame } from '../shared/frame-host.js';
import { graphql, GraphQLRequestError, SessionExpiredError } from '../shared/graphql.js';
import { loadSession, signOut } from '../shared/session.js';
import { renderSignIn } from '../shared/sign-in.js';

interface AppPage {
  name: string;
  cssVariables: Record<string, string>;
  menus: { _id: string; name: string; entries: { label: string; featureId: string }[] }[];
  features: { _id: string; name: string; description: string }[];
  user: { _id: string; email: string; name: string; roleName: string; isAdmin: boolean };
}

const APP_PAGE = `query AppPage { appPage { name cssVariables menus { _id name entries { label featureId } } features { _id name description } user { _id email name roleName isAdmin } } }`;
const APP_FEATURE = `query AppFeature($id: ID!) { appFeature(_id: $id) { _id name script } }`;
const ENDED = 'Your session has ended. Sign in again.';

const root = document.getElementById('root')!;
let page: AppPage | null = null;
let main: HTMLElement | null = null;
let frame: { destroy(): void } | null = null;
let shownFeature: string | null | undefined;

function featureFromLocation(): string | null {
  const match = /^\/app\/feature\/([^/]+)\/?$/.exec(location.pathname);
  return match ? decodeURIComponent(match[1]!) : null;
}

function showSignIn(notice?: string) {
  frame?.destroy();
  frame = null;
  page = null;
  renderSignIn(root, { title: 'Sign in to the application', notice, onSignedIn: () => void start() });
}

function ended() {
  showSignIn(ENDED);
}

function fail(error: unknown) {
  if (error instanceof SessionExpiredError) return ended();
  root.replaceChildren(h('main', { className: 'app-message', role: 'alert' }, (error as Error).message));
}

async function start() {
  if (!loadSession()) return showSignIn();
  root.replaceChildren(h('main', { className: 'app-message', 'aria-busy': 'true' }, 'Loading…'));
  try {
    page = (await graphql<{ appPage: AppPage }>(APP_PAGE)).appPage;
  } catch (error) {
    return fail(error);
  }
  document.title = page.name;
  renderShell(page);
  shownFeature = undefined;
  void show(featureFromLocation());
}

function link(href: string, featureId: string | null, ...children: (Node | string)[]) {
  const anchor = h('a', { href }, ...children);
  anchor.addEventListener('click', (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    open(featureId);
  });
  return anchor;
}

function featureHref(featureId: string) {
  return `/app/feature/${encodeURIComponent(featureId)}`;
}

function renderShell(app: AppPage) {
  const signOutButton = h('button', { type: 'button' }, 'Sign out');
  signOutButton.addEventListener('click', () => {
    void signOut(loadSession());
    showSignIn();
  });
  const nav = h(
    'nav',
    { className: 'app-nav', 'aria-label': 'Application' },
    app.menus.length === 0 ? h('p', { className: 'muted' }, 'No menu entries for your role.') : null,
    ...app.menus.map((menu) =>
      h(
        'section',
        {},
        h('h2', {}, menu.name),
        h('ul', {}, ...menu.entries.map((entry) => h('li', {}, link(featureHref(entry.featureId), entry.featureId, entry.label)))),
      ),
    ),
  );
  main = h('main', { className: 'app-main' });
  const shell = h(
    'div',
    { className: 'app-shell' },
    h(
      'header',
      { className: 'app-header' },
      link('/app', null, app.name),
      h('span', { className: 'app-user' }, `${app.user.email} · ${app.user.roleName}`),
      signOutButton,
    ),
    nav,
    main,
  );
  shell.querySelector('header a')!.className = 'app-name';
  for (const [name, value] of Object.entries(app.cssVariables)) shell.style.setProperty(name, value);
  root.replaceChildren(shell);
}

function markCurrent(featureId: string | null) {
  for (const anchor of root.querySelectorAll<HTMLAnchorElement>('.app-nav a')) {
    if (featureId && anchor.pathname === featureHref(featureId)) anchor.setAttribute('aria-current', 'page');
    else anchor.removeAttribute('aria-current');
  }
}

function open(featureId: string | null) {
  const path = featureId ? featureHref(featureId) : '/app';
  if (location.pathname !== path) history.pushState(null, '', path);
  void show(featureId);
}

async function show(featureId: string | null) {
  if (!page || !main || featureId === shownFeature) return;
  shownFeature = featureId;
  frame?.destroy();
  frame = null;
  markCurrent(featureId);
  const app = page;
  const area = main;
  if (!featureId) {
    document.title = app.name;
    area.replaceChildren(home(app));
    return;
  }
  area.replaceChildren(h('p', { className: 'app-message', 'aria-busy': 'true' }, 'Loading…'));
  let feature: { _id: string; name: string; script: string };
  try {
    feature = (await graphql<{ appFeature: typeof feature }>(APP_FEATURE, { id: featureId })).appFeature;
  } catch (error) {
    if (error instanceof SessionExpiredError) return ended();
    if (shownFeature !== featureId) return;
    const code = error instanceof GraphQLRequestError ? error.code : undefined;
    const title = code === 'FORBIDDEN' ? 'You do not have access to this page' : code === 'NOT_FOUND' ? 'This page does not exist' : 'This page could not be loaded';
    area.replaceChildren(h('section', { className: 'app-message', role: 'alert' }, h('h1', {}, title), h('p', {}, (error as Error).message)));
    return;
  }
  if (shownFeature !== featureId) return;
  document.title = `${feature.name} · ${app.name}`;
  area.replaceChildren();
  frame = mountFeatureFrame(area, {
    featureId: feature._id,
    title: feature.name,
    script: feature.script,
    user: { _id: app.user._id, email: app.user.email, name: app.user.name, roleName: app.user.roleName },
    cssVariables: app.cssVariables,
    onNavigate: (id) => open(id),
    onSessionExpired: ended,
    onRendered: () => area.setAttribute('data-rendered', feature._id),
  });
}

function home(app: AppPage) {
  return h(
    'section',
    { className: 'app-home' },
    h('h1', {}, app.name),
    app.features.length === 0
      ? h('p', { className: 'muted' }, 'There is no page for your role yet.')
      : h(
          'ul',
          { className: 'app-cards' },
          ...app.features.map((feature) =>
            h('li', {}, link(featureHref(feature._id), feature._id, feature.name), feature.description ? h('p', { className: 'muted' }, feature.description) : null),
          ),
        ),
  );
}

window.addEventListener('popstate', () => void show(featureFromLocation()));
void start();
