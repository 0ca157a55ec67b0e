// The application page (GET /app, /app/feature/<id>?<params>): the shell of the signed-in user (menus
// of the features their role sees, theme variables) and one sandboxed frame for the open feature,
// which gets the parameters of the address and may ask to open another feature the user sees. The
// errors the feature does not catch show above it. Written without a framework: the shell stays
// small and the frame starts loading at once.
import '../shared/base.css';
import './app.css';
import { h } from '../shared/dom.js';
import { mountFeatureFrame } from '../shared/frame-host.js';
import { featureQuery, TABLE_ACCESS_FIELDS, type FeatureParams, type FrameTableAccess } from '../shared/frame-protocol.js';
import { graphql, graphqlAnswer, GraphQLRequestError, SessionExpiredError } from '../shared/graphql.js';
import { loadSession } from '../shared/session.js';
import { renderSignIn, signOutButton } from '../shared/sign-in.js';

interface AppPage {
  name: string;
  cssVariables: Record<string, string>;
  menus: { _id: string; name: string; entries: { label: string; featureId: string }[] }[];
  features: { _id: string; name: string; description: string }[];
  /** With the user's table access (from `me`), which the frame's useCurrentUser().can reads. */
  user: AppPageUser & { tableAccess: FrameTableAccess[] };
}

interface AppPageUser {
  _id: string;
  email: string;
  name: string;
  roleName: string;
  isAdmin: boolean;
}

type AppPageAnswer = { appPage?: Omit<AppPage, 'user'> & { user: AppPageUser }; me?: { tableAccess: FrameTableAccess[] }; appFeature?: RunnableFeature | null };

const APP_PAGE = `query AppPage { appPage { name cssVariables menus { _id name entries { label featureId } } features { _id name description } user { _id email name roleName isAdmin } } me { ${TABLE_ACCESS_FIELDS} } }`;
const FEATURE_FIELDS = 'appFeature(_id: $id) { _id name script }';
const APP_FEATURE = `query AppFeature($id: ID!) { ${FEATURE_FIELDS} }`;
/** The first load of /app/feature/<id>: the page and the feature in one request. */
const APP_PAGE_AND_FEATURE = `query AppPageAndFeature($id: ID!) { ${APP_PAGE.slice('query AppPage { '.length, -2)} ${FEATURE_FIELDS} }`;

type RunnableFeature = { _id: string; name: string; script: string };
const ENDED = 'Your session has ended. Sign in again.';

const root = document.getElementById('root')!;
let page: AppPage | null = null;
let main: HTMLElement | null = null;
let frame: { destroy(): void } | null = null;
/** The address of the feature shown (its path and parameters), null for the home page. */
let shownAddress: string | null | undefined;

/** The feature of the address and its parameters: /app/feature/order-detail?order=12. */
interface FeatureAddress {
  featureId: string;
  params: FeatureParams;
}

function featureFromLocation(): FeatureAddress | null {
  const match = /^\/app\/feature\/([^/]+)\/?$/.exec(location.pathname);
  if (!match) return null;
  try {
    return { featureId: decodeURIComponent(match[1]!), params: Object.fromEntries(new URLSearchParams(location.search)) };
  } catch {
    return null;
  }
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
  frame?.destroy();
  frame = null;
  if (error instanceof SessionExpiredError) return ended();
  // A page that could not load still lets the user leave: sign out, and sign in as someone else.
  root.replaceChildren(h('main', { className: 'app-message' }, h('p', { role: 'alert' }, (error as Error).message), signOutButton(() => showSignIn())));
}

async function start() {
  if (!loadSession()) return showSignIn();
  const address = featureFromLocation();
  const featureId = address?.featureId ?? null;
  // One request for the page and the feature; the frame starts loading before it is answered.
  const answer = graphqlAnswer<AppPageAnswer>(featureId ? APP_PAGE_AND_FEATURE : APP_PAGE, featureId ? { id: featureId } : {});
  const pageReady = answer.then(({ data, errors }): AppPage => {
    if (!data?.appPage || !data.me) throw new GraphQLRequestError(errors ?? [{ message: 'The application page could not be loaded' }], 200);
    return { ...data.appPage, user: { ...data.appPage.user, tableAccess: data.me.tableAccess } };
  });
  const featureReady = answer.then(({ data, errors }) => {
    if (data?.appFeature) return data.appFeature;
    const featureError = errors?.find((error) => error.path?.[0] === 'appFeature');
    throw new GraphQLRequestError(featureError ? [featureError] : [{ message: 'The page could not be loaded' }], 200);
  });
  featureReady.catch(() => {});
  buildShell();
  shownAddress = undefined;
  if (address) void show(address, featureReady, pageReady);
  try {
    page = await pageReady;
  } catch (error) {
    return fail(error);
  }
  document.title = page.name;
  fillShell(page);
  markCurrent(featureId);
  if (!featureId) void show(null);
}

function link(href: string, featureId: string | null, ...children: (Node | string)[]) {
  const anchor = h('a', { href }, ...children);
  anchor.addEventListener('click', (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    open(featureId ? { featureId, params: {} } : null);
  });
  return anchor;
}

function featureHref(featureId: string, params: FeatureParams = {}) {
  return `/app/feature/${encodeURIComponent(featureId)}${featureQuery(params)}`;
}

let header: HTMLElement | null = null;
let nav: HTMLElement | null = null;
let shell: HTMLElement | null = null;

/** The shell's frame (header, navigation, main area), empty until the page is known. */
function buildShell() {
  header = h('header', { className: 'app-header' });
  nav = h('nav', { className: 'app-nav', 'aria-label': 'Application', 'aria-busy': 'true' });
  main = h('main', { className: 'app-main' });
  shell = h('div', { className: 'app-shell' }, header, nav, main);
  root.replaceChildren(shell);
}

/** Fills the header and the menus in place: the main area (and a frame loading in it) stays. */
function fillShell(app: AppPage) {
  const name = link('/app', null, app.name);
  name.className = 'app-name';
  header!.replaceChildren(name, h('span', { className: 'app-user' }, `${app.user.email} · ${app.user.roleName}`), signOutButton(() => showSignIn()));
  nav!.removeAttribute('aria-busy');
  nav!.replaceChildren(
    ...(app.menus.length === 0 ? [h('p', { className: 'muted' }, 'No menu entries for your role.')] : []),
    ...app.menus.map((menu) =>
      h(
        'section',
        {},
        h('h2', {}, menu.name),
        h('ul', {}, ...menu.entries.map((entry) => h('li', {}, link(featureHref(entry.featureId), entry.featureId, entry.label)))),
      ),
    ),
  );
  for (const [variable, value] of Object.entries(app.cssVariables)) shell!.style.setProperty(variable, value);
}

function markCurrent(featureId: string | null) {
  for (const anchor of root.querySelectorAll<HTMLAnchorElement>('.app-nav a')) {
    if (featureId && anchor.pathname === featureHref(featureId)) anchor.setAttribute('aria-current', 'page');
    else anchor.removeAttribute('aria-current');
  }
}

function open(address: FeatureAddress | null) {
  const path = address ? featureHref(address.featureId, address.params) : '/app';
  if (location.pathname + location.search !== path) history.pushState(null, '', path);
  void show(address);
}

/**
 * A feature asked to open another: only a published feature the user's role sees (the server
 * refuses any other code anyway), else the shell says so and the page stays.
 */
function openFromFeature(target: string, params: FeatureParams, area: HTMLElement) {
  const wanted = target.toLowerCase();
  const feature = page?.features.find((entry) => entry._id === target) ?? page?.features.find((entry) => entry.name.toLowerCase() === wanted);
  if (feature) return open({ featureId: feature._id, params });
  showFrameError(area, `This page tried to open the page '${target}', which does not exist or which your role does not see.`);
}

/** An error of the shown feature, above its frame: the newest one, until it is dismissed or the feature changes. */
function showFrameError(area: HTMLElement, message: string) {
  area.querySelector('.app-frame-error')?.remove();
  const dismiss = h('button', { type: 'button' }, 'Dismiss');
  const notice = h('div', { className: 'app-frame-error', role: 'alert' }, h('strong', {}, 'This page hit an error'), h('p', {}, message), dismiss);
  dismiss.addEventListener('click', () => notice.remove());
  area.prepend(notice);
}

async function show(address: FeatureAddress | null, prefetched?: Promise<RunnableFeature>, pageReady: Promise<AppPage> | undefined = page ? Promise.resolve(page) : undefined) {
  const key = address ? featureHref(address.featureId, address.params) : null;
  if (!main || !pageReady || key === shownAddress) return;
  shownAddress = key;
  frame?.destroy();
  frame = null;
  markCurrent(address?.featureId ?? null);
  const area = main;
  if (!address) {
    const app = await pageReady;
    document.title = app.name;
    area.replaceChildren(home(app));
    return;
  }
  const { featureId } = address;
  area.replaceChildren();
  area.removeAttribute('data-rendered');
  const loading = prefetched ?? graphql<{ appFeature: RunnableFeature }>(APP_FEATURE, { id: featureId }).then((data) => data.appFeature);
  // The frame loads while the code is requested; it renders once both are there.
  frame = mountFeatureFrame(area, {
    featureId,
    params: address.params,
    feature: Promise.all([loading, pageReady]).then(([feature, app]) => ({
      title: feature.name,
      script: feature.script,
      user: { _id: app.user._id, email: app.user.email, name: app.user.name, roleName: app.user.roleName, tableAccess: app.user.tableAccess },
      cssVariables: app.cssVariables,
    })),
    onNavigate: (target, params) => openFromFeature(target, params, area),
    onError: (message) => showFrameError(area, message),
    onSessionExpired: ended,
    onRendered: () => area.setAttribute('data-rendered', featureId),
  });
  let feature: RunnableFeature;
  try {
    feature = await loading;
  } catch (error) {
    if (error instanceof SessionExpiredError) return ended();
    if (shownAddress !== key) return;
    frame?.destroy();
    frame = null;
    const code = error instanceof GraphQLRequestError ? error.code : undefined;
    const title = code === 'FORBIDDEN' ? 'You do not have access to this page' : code === 'NOT_FOUND' ? 'This page does not exist' : 'This page could not be loaded';
    area.replaceChildren(h('section', { className: 'app-message', role: 'alert' }, h('h1', {}, title), h('p', {}, (error as Error).message)));
    return;
  }
  if (shownAddress === key) document.title = `${feature.name} · ${(await pageReady).name}`;
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
