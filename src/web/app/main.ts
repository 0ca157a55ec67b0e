// The application page (GET /app, /app/feature/<id>?<params>): the shell of the signed-in user (menus
// of the features their role sees, theme variables) and one sandboxed frame for the open feature,
// which gets the parameters of the address and may ask to open another feature the user sees. The
// errors the feature does not catch show above it. Written without a framework: the shell stays
// small and the frame starts loading at once.
//
// While the page loads, skeletons stand where the menus and the content will be, and the frame
// has its full height from the start: nothing moves when they arrive. A load that fails says why
// with Retry (./load-failure.ts), and loads again by itself when a server that was away answers.
import '../shared/base.css';
import './app.css';
import { h } from '../shared/dom.js';
import { mountFeatureFrame } from '../shared/frame-host.js';
import type { AppFeatureQuery, AppPageQuery } from '../graphql-operations.js';
import { featureQuery, TABLE_ACCESS_FIELDS, type FeatureParams, type FrameTableAccess } from '../shared/frame-protocol.js';
import { graphql, graphqlAnswer, GraphQLRequestError, SessionExpiredError, stringRecordOf } from '../shared/graphql.js';
import { loadSession } from '../shared/session.js';
import { renderSignIn, signOutButton } from '../shared/sign-in.js';
import { failureKind, failureTitle, loadFailure, type LoadFailure } from './load-failure.js';
import { menuButton, type MenuButton } from './menu-button.js';

/** The answer of AppPage, as the shell uses it. */
interface AppPage extends Omit<AppPageQuery['appPage'], 'cssVariables' | 'user'> {
  cssVariables: Record<string, string>;
  /** With the user's table access (from `me`), which the frame's useCurrentUser().can reads. */
  user: AppPageQuery['appPage']['user'] & { tableAccess: FrameTableAccess[] };
}

/** The answer of the first load: AppPage's fields, with AppFeature's on /app/feature/<id>; a part an error took the place of is missing. */
type AppPageAnswer = Partial<AppPageQuery & AppFeatureQuery>;

const APP_PAGE = `query AppPage { appPage { name cssVariables menus { _id name entries { label featureId } } features { _id name description } user { _id email name roleName isAdmin } } me { ${TABLE_ACCESS_FIELDS} } }`;
const FEATURE_FIELDS = 'appFeature(_id: $id) { _id name script }';
const APP_FEATURE = `query AppFeature($id: ID!) { ${FEATURE_FIELDS} }`;
/** The first load of /app/feature/<id>: the page and the feature in one request. */
const APP_PAGE_AND_FEATURE = `query AppPageAndFeature($id: ID!) { ${APP_PAGE.slice('query AppPage { '.length, -2)} ${FEATURE_FIELDS} }`;

type RunnableFeature = NonNullable<AppFeatureQuery['appFeature']>;
const ENDED = 'Your session has ended. Sign in again.';
/** The page's name until the application's own is known. */
const DEFAULT_TITLE = 'Application';

/** The feature of the address and its parameters: /app/feature/order-detail?order=12. */
interface FeatureAddress {
  featureId: string;
  params: FeatureParams;
}

/** The shell's parts: they stay while the main area changes. */
interface Shell {
  root: HTMLElement;
  brand: HTMLElement;
  user: HTMLElement;
  menu: MenuButton;
  nav: HTMLElement;
  main: HTMLElement;
}

/** What the main area shows. */
interface View {
  /** The feature's address (featureHref), null for the home page, undefined for the page's own failure. */
  readonly key: string | null | undefined;
  /** Its load failed: opening it again loads it again. */
  failed: boolean;
  destroy(): void;
}

const root = document.getElementById('root')!;
let page: AppPage | null = null;
let shell: Shell | null = null;
let view: View | null = null;
/** Counts the page's loads: the answer of an older one is dropped. */
let loads = 0;

function featureFromLocation(): FeatureAddress | null {
  const match = /^\/app\/feature\/([^/]+)\/?$/.exec(location.pathname);
  if (!match) return null;
  try {
    return { featureId: decodeURIComponent(match[1]!), params: Object.fromEntries(new URLSearchParams(location.search)) };
  } catch {
    return null;
  }
}

function featureHref(featureId: string, params: FeatureParams = {}) {
  return `/app/feature/${encodeURIComponent(featureId)}${featureQuery(params)}`;
}

function setView(next: View) {
  view?.destroy();
  view = next;
}

function showSignIn(notice?: string) {
  view?.destroy();
  view = null;
  page = null;
  shell = null;
  loads++;
  document.title = DEFAULT_TITLE;
  renderSignIn(root, { title: 'Sign in to the application', notice, onSignedIn: () => void start() });
}

function ended() {
  showSignIn(ENDED);
}

async function start() {
  const load = ++loads;
  view?.destroy();
  view = null;
  page = null;
  if (!loadSession()) return showSignIn();
  const address = featureFromLocation();
  // One request for the page and the feature; the frame starts loading before it is answered.
  const answer = graphqlAnswer<AppPageAnswer>(address ? APP_PAGE_AND_FEATURE : APP_PAGE, address ? { id: address.featureId } : {});
  const pageReady = answer.then(({ data, errors }): AppPage => {
    if (!data?.appPage || !data.me) throw new GraphQLRequestError(errors ?? [{ message: 'The application page could not be loaded' }], 200);
    return { ...data.appPage, cssVariables: stringRecordOf(data.appPage.cssVariables), user: { ...data.appPage.user, tableAccess: data.me.tableAccess } };
  });
  const featureReady = answer.then(({ data, errors }) => {
    if (data?.appFeature) return data.appFeature;
    const featureError = errors?.find((error) => error.path?.[0] === 'appFeature');
    throw new GraphQLRequestError(featureError ? [featureError] : [{ message: 'The page could not be loaded' }], 200);
  });
  featureReady.catch(() => {});
  shell = buildShell();
  if (address) showFeature(address, pageReady, featureReady);
  else showHome(null);
  let app: AppPage;
  try {
    app = await pageReady;
  } catch (error) {
    if (load === loads) failPage(error);
    return;
  }
  if (load !== loads) return;
  page = app;
  fillShell(app);
  markCurrent(address?.featureId ?? null);
  if (!address) showHome(app);
}

/** The page's own data did not arrive: the main area says why, and the page loads again on Retry or by itself. */
function failPage(error: unknown) {
  if (error instanceof SessionExpiredError) return ended();
  const { brand, menu, nav, main } = shell!;
  brand.replaceChildren();
  menu.button.hidden = true;
  nav.removeAttribute('aria-busy');
  nav.replaceChildren();
  nav.hidden = true;
  const heading = failureTitle(failureKind(error));
  const failure = loadFailure({ error, retry: () => void start() });
  main.replaceChildren(h('section', { className: 'app-message' }, h('h1', { tabIndex: -1 }, heading), failure.element));
  setView({ key: undefined, failed: true, destroy: () => failure.dispose() });
  document.title = `${heading} · ${DEFAULT_TITLE}`;
}

function link(href: string, address: FeatureAddress | null, ...children: (Node | string)[]) {
  const anchor = h('a', { href }, ...children);
  anchor.addEventListener('click', (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    open(address);
    shell?.menu.close();
    // As a page load would: the next Tab and a screen reader start at the page's heading.
    shell?.main.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  });
  return anchor;
}

/** A grey bar where text will be (aria-hidden: the busy region says it is loading). */
function bar(className: string) {
  return h('span', { className: `skeleton ${className}`, 'aria-hidden': 'true' });
}

/** The shell with skeletons where the application's name and menus will be; the main area is the view's. */
function buildShell(): Shell {
  const brand = h('div', { className: 'app-brand' }, bar('skeleton-brand'));
  const user = h('span', { className: 'app-user' });
  const nav = h(
    'nav',
    { className: 'app-nav', id: 'app-nav', 'aria-label': 'Application', 'aria-busy': 'true' },
    h('div', { className: 'app-nav-skeleton' }, bar('skeleton-heading'), bar('skeleton-entry'), bar('skeleton-entry'), bar('skeleton-entry')),
  );
  const main = h('main', { className: 'app-main' });
  const frame = h('div', { className: 'app-shell' });
  const menu = menuButton(frame, nav);
  const header = h('header', { className: 'app-header' }, brand, user, signOutButton(() => showSignIn()), menu.button);
  frame.append(header, nav, main);
  root.replaceChildren(frame);
  return { root: frame, brand, user, menu, nav, main };
}

/** Fills the header and the menus in place: the main area (and a frame loading in it) stays. */
function fillShell(app: AppPage) {
  const { root: frame, brand, user, menu, nav } = shell!;
  const name = link('/app', null, app.name);
  name.className = 'app-name';
  brand.replaceChildren(name);
  user.textContent = `${app.user.email} · ${app.user.roleName}`;
  menu.button.hidden = app.menus.length === 0;
  nav.removeAttribute('aria-busy');
  nav.replaceChildren(
    ...(app.menus.length === 0 ? [h('p', { className: 'muted' }, 'No menu entries for your role.')] : []),
    ...app.menus.map((entry) =>
      h(
        'section',
        {},
        h('h2', {}, entry.name),
        h('ul', {}, ...entry.entries.map((item) => h('li', {}, link(featureHref(item.featureId), { featureId: item.featureId, params: {} }, item.label)))),
      ),
    ),
  );
  for (const [variable, value] of Object.entries(app.cssVariables)) frame.style.setProperty(variable, value);
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
  show(address);
}

/** Shows the address's page; the page already shown stays as it is unless its load failed. */
function show(address: FeatureAddress | null) {
  if (!page) return void start();
  const key = address ? featureHref(address.featureId, address.params) : null;
  if (view && view.key === key && !view.failed) return;
  markCurrent(address?.featureId ?? null);
  if (address) showFeature(address, Promise.resolve(page));
  else showHome(page);
}

function showHome(app: AppPage | null) {
  setView({ key: null, failed: false, destroy() {} });
  if (app) document.title = app.name;
  shell!.main.replaceChildren(app ? home(app) : homeSkeleton());
}

function home(app: AppPage) {
  return h(
    'section',
    { className: 'app-home' },
    h('h1', { tabIndex: -1 }, app.name),
    app.features.length === 0
      ? h('p', { className: 'muted' }, 'There is no page for your role yet.')
      : h(
          'ul',
          { className: 'app-cards' },
          ...app.features.map((feature) =>
            h('li', {}, link(featureHref(feature._id), { featureId: feature._id, params: {} }, feature.name), feature.description ? h('p', { className: 'muted' }, feature.description) : null),
          ),
        ),
  );
}

function homeSkeleton() {
  const card = () => h('li', { className: 'skeleton-card' }, bar('skeleton-entry'), bar('skeleton-line'));
  return h(
    'section',
    { className: 'app-home', 'aria-busy': 'true' },
    h('h1', {}, bar('skeleton-title'), h('span', { className: 'sr-only' }, 'Loading the application')),
    h('ul', { className: 'app-cards', 'aria-hidden': 'true' }, card(), card(), card()),
  );
}

/**
 * The feature's view: its name as the page's heading, and below it the frame, at its full height
 * from the start under a loading notice that goes when the feature has rendered. A failure (of
 * the code's request or of the frame's document) takes the frame's place.
 */
function showFeature(address: FeatureAddress, pageReady: Promise<AppPage>, prefetched?: Promise<RunnableFeature>) {
  const { featureId } = address;
  const main = shell!.main;
  const title = h('h1', { className: 'app-title', tabIndex: -1 }, bar('skeleton-title'), h('span', { className: 'sr-only' }, 'Loading the page'));
  const loadingText = h('span', {}, 'Loading the page…');
  const loadingNotice = h('div', { className: 'app-frame-loading', role: 'status' }, h('span', { className: 'spinner', 'aria-hidden': 'true' }), loadingText);
  const area = h('div', { className: 'app-frame-area', 'aria-busy': 'true' }, loadingNotice);
  let frame: { destroy(): void } | null = null;
  let failure: LoadFailure | null = null;
  const current: View = {
    key: featureHref(featureId, address.params),
    failed: false,
    destroy() {
      frame?.destroy();
      failure?.dispose();
    },
  };
  setView(current);
  const shown = () => view === current;
  const knownName = () => page?.features.find((feature) => feature._id === featureId)?.name;
  const name = (text: string) => {
    title.replaceChildren(text);
    loadingText.textContent = `Loading ${text}…`;
  };
  const known = knownName();
  if (known) name(known);
  main.replaceChildren(title, area);

  /** An error of the shown feature, above its frame: the newest one, until it is dismissed or the feature changes. */
  const showFrameError = (message: string) => {
    main.querySelector('.app-frame-error')?.remove();
    const dismiss = h('button', { type: 'button' }, 'Dismiss');
    const notice = h('div', { className: 'app-frame-error', role: 'alert' }, h('strong', {}, 'This page hit an error'), h('p', {}, message), dismiss);
    dismiss.addEventListener('click', () => notice.remove());
    main.insertBefore(notice, area);
  };

  /**
   * A feature asked to open another: only a published feature the user's role sees (the server
   * refuses any other code anyway), else the shell says so and the page stays.
   */
  const openFromFeature = (target: string, params: FeatureParams) => {
    const wanted = target.toLowerCase();
    const feature = page?.features.find((entry) => entry._id === target) ?? page?.features.find((entry) => entry.name.toLowerCase() === wanted);
    if (feature) return open({ featureId: feature._id, params });
    showFrameError(`This page tried to open the page '${target}', which does not exist or which your role does not see.`);
  };

  const fail = (error: unknown) => {
    if (!shown()) return;
    if (error instanceof SessionExpiredError) return ended();
    frame?.destroy();
    frame = null;
    failure?.dispose();
    current.failed = true;
    const kind = failureKind(error);
    const featureName = knownName();
    const answered = kind === 'refused' || kind === 'not-found';
    // A refusal names no page: the role may not even know it exists.
    title.replaceChildren(featureName && !answered ? featureName : failureTitle(kind));
    failure = loadFailure({ error, lead: answered ? undefined : `${featureName ?? 'This page'} could not be loaded.`, retry: () => shown() && show(address) });
    area.removeAttribute('aria-busy');
    area.replaceChildren(failure.element);
    document.title = `${title.textContent} · ${page?.name ?? DEFAULT_TITLE}`;
  };

  const loading =
    prefetched ??
    graphql<AppFeatureQuery>(APP_FEATURE, { id: featureId }).then(({ appFeature }) => {
      if (!appFeature) throw new GraphQLRequestError([{ message: 'The page could not be loaded' }], 200);
      return appFeature;
    });
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
    onNavigate: openFromFeature,
    onError: showFrameError,
    onSessionExpired: ended,
    onRendered: () => {
      if (!shown()) return;
      loadingNotice.remove();
      area.removeAttribute('aria-busy');
      area.setAttribute('data-rendered', featureId);
    },
    // The frame shows why the page could not render: the notice makes way for it.
    onFailed: () => {
      if (!shown()) return;
      loadingNotice.remove();
      area.removeAttribute('aria-busy');
    },
    onUnavailable: fail,
  });
  void loading.then(
    async (feature) => {
      const app = await pageReady.catch(() => null);
      if (!app || !shown() || current.failed) return;
      name(feature.name);
      document.title = `${feature.name} · ${app.name}`;
    },
    async (error: unknown) => {
      // The page's own data failed with it: the page says so (failPage).
      if (await pageReady.then(() => false, () => true)) return;
      fail(error);
    },
  );
}

window.addEventListener('popstate', () => show(featureFromLocation()));
void start();
