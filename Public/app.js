// MockStock's web client: a single page with hash routes (#/market, #/stock/AAPL, ...),
// talking to the public API only.
import { api, session, whenUnauthorized, ApiError } from './js/api.js';
import { h, fill, loading, failure } from './js/dom.js';
import { destroyCharts } from './js/charts.js';
import { live, showQuote, toast } from './js/live.js';
import { loginView } from './js/views/login.js';
import { portfolioView } from './js/views/portfolio.js';
import { marketView } from './js/views/market.js';
import { stockView } from './js/views/stock.js';
import { transactionsView } from './js/views/transactions.js';
import { ordersView } from './js/views/orders.js';
import { leaguesView, leagueView } from './js/views/leagues.js';
import { botsView } from './js/views/bots.js';
import { achievementsView, notificationsView } from './js/views/notices.js';
import { adminView } from './js/views/admin.js';
import { analyticsView } from './js/views/analytics.js';
import { fxView } from './js/views/fx.js';
import { accountView } from './js/views/account.js';

const view = document.getElementById('view');
const flashBox = document.getElementById('flash');
const nav = document.getElementById('nav');
const menuToggle = document.querySelector('.menu-toggle');

/** A message at the top of the page: kind is "info" or "error". With `carry`, it is
 * shown after the next navigation (e.g. "logged out" on the login page). */
let carried = null;
function flash(message, kind = 'info', carry = false) {
  if (carry) carried = [message, kind];
  else fill(flashBox, message ? h('p', { class: kind }, message) : null);
}

const routes = [
  [/^#\/login$/, () => loginView],
  [/^#\/portfolio$/, () => portfolioView],
  [/^#\/market$/, () => marketView],
  [/^#\/stock\/([^/?]+)$/, () => stockView],
  [/^#\/orders$/, () => ordersView],
  [/^#\/transactions$/, () => transactionsView],
  [/^#\/leagues$/, () => leaguesView],
  [/^#\/leagues\/(\d+)$/, () => leagueView],
  [/^#\/bots$/, () => botsView],
  [/^#\/achievements$/, () => achievementsView],
  [/^#\/notifications$/, () => notificationsView],
  [/^#\/admin$/, () => adminView],
  [/^#\/analytics$/, () => analyticsView],
  [/^#\/fx$/, () => fxView],
  [/^#\/account$/, () => accountView],
];

/** `hash` when it is a page of this app other than the login page ("#/leagues?join=K7PX2M"),
 * else null: a destination kept across logging in is only ever one of these, never an
 * address elsewhere. */
function appPage(hash) {
  if (typeof hash !== 'string' || hash.length > 300 || !/^#\/[A-Za-z0-9\-._~%/?=&]*$/.test(hash)) return null;
  const path = hash.split('?')[0];
  return path !== '#/login' && routes.some(([pattern]) => pattern.test(path)) ? hash : null;
}

/** The page a logged-out visitor opened (a join link, say), kept in this tab while they
 * log in or register, then opened. */
const DESTINATION = 'mockstock.destination';
const destination = {
  keep(hash) { const page = appPage(hash); if (page) sessionStorage.setItem(DESTINATION, page); },
  get() { return appPage(sessionStorage.getItem(DESTINATION)); },
  take() { const page = this.get(); sessionStorage.removeItem(DESTINATION); return page; },
};
/** The page opened right after logging in, told so when it is drawn (`context.afterLogin`):
 * a join link's screen then joins at once, the player having asked for it twice. */
let arrival = null;

/** The route's path and query: "#/market?search=app" → ["#/market", URLSearchParams]. */
function location() {
  const [path, query = ''] = (window.location.hash || '#/portfolio').split('?');
  return [path, new URLSearchParams(query)];
}

let rendering = 0;
/** What the page on screen asked to be told (by event type, and "poll"); undone when
 * another page replaces it, and replaced when the page draws itself again. */
const pageStops = new Map();
function pageScope(key, stop) {
  pageStops.get(key)?.();
  pageStops.set(key, stop);
}

async function render() {
  const [path, query] = location();
  if (!session.token && path !== '#/login') {
    destination.keep(window.location.hash);
    window.location.hash = '#/login';
    return;
  }
  if (session.token && path === '#/login') {
    window.location.hash = '#/portfolio';
    return;
  }
  showChrome();
  rememberMe();
  if (session.token) live.start();
  for (const dialog of document.querySelectorAll('dialog')) dialog.close();
  const ticket = ++rendering;
  const afterLogin = arrival !== null && arrival === window.location.hash;
  arrival = null;
  pageStops.forEach((stop) => stop());
  pageStops.clear();
  let followed = false;
  destroyCharts(view);
  const match = routes.map(([pattern, make]) => [path.match(pattern), make]).find(([found]) => found);
  if (!match) {
    fill(view, h('h1', {}, 'Not found'), h('p', {}, 'There is no such page. ', h('a', { href: '#/portfolio' }, 'Go to your portfolio')));
    return;
  }
  const [found, make] = match;
  fill(view, loading());
  const context = {
    params: [],
    query,
    user: session.user,
    flash,
    /** Still the page on screen? Views check before drawing late answers. */
    current: () => ticket === rendering,
    refresh: render,
    refreshUnread,
    /** Live updates for this page: follow({quotes, leagues}) and on(type, handler), one handler per type. */
    live: {
      follow: (what) => { if (ticket === rendering) { followed = true; live.follow(what); } },
      on: (type, handler) => { if (ticket === rendering) pageScope(type, live.on(type, handler)); },
    },
    /** Runs `work` every `ms` while the live stream is down, until the page changes. */
    poll: (work, ms) => {
      if (ticket !== rendering) return;
      const timer = setInterval(() => { if (!live.connected && ticket === rendering) work(); }, ms);
      pageScope('poll', () => clearInterval(timer));
    },
    navigate: (hash) => { if (window.location.hash === hash) render(); else window.location.hash = hash; },
    /** Drawn right after logging in, at the page the player had opened before. */
    afterLogin,
    /** On the login page: the page the visitor opened, to be opened once they are in. */
    destination: destination.get(),
    /** Once logged in: opens the page the visitor had opened, else `fallback`. */
    proceed: (fallback) => {
      const next = destination.take();
      arrival = next;
      window.location.hash = next ?? fallback;
    },
  };
  try {
    context.params = found.slice(1).map(decodeURIComponent);
    await make()(view, context);
    // A page that follows nothing stops what the last one followed.
    if (!followed && ticket === rendering) live.follow({});
  } catch (error) {
    // Trying again cannot find what is not there (a stock that does not exist, a league
    // one left): say so, with a way on.
    if (ticket === rendering && error.status === 404) {
      fill(view, h('h1', {}, 'Not found'), h('p', { class: 'error', id: 'not-found' }, error.message),
        h('p', {}, h('a', { href: '#/market' }, 'Search the market'), ' · ', h('a', { href: '#/portfolio' }, 'Your portfolio')));
    } else if (ticket === rendering) fill(view, failure(error, render));
  }
  if (ticket === rendering) {
    for (const link of nav.querySelectorAll('a')) {
      if (path.startsWith(link.getAttribute('href'))) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    // Keyboard and screen-reader users start at the new page's heading.
    const heading = view.querySelector('h1');
    if (heading && !view.contains(document.activeElement)) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
    refreshUnread();
  }
}

function showChrome() {
  const signedIn = Boolean(session.token);
  nav.hidden = !signedIn || (window.matchMedia('(max-width: 720px)').matches && menuToggle.getAttribute('aria-expanded') !== 'true');
  menuToggle.hidden = !signedIn;
  document.getElementById('admin-link').hidden = session.user?.role !== 'admin';
  // A class's student sees the name their host gave them: on the Account link, and on a
  // phone (whose menu is folded) beside MockStock too.
  const name = signedIn ? session.user?.displayName : null;
  const who = document.getElementById('whoami');
  const account = document.getElementById('account-link');
  who.hidden = !name;
  who.textContent = name ?? '';
  account.textContent = name ?? 'Account';
  for (const link of [who, account]) link.title = name ? `Your account: ${name} (${session.user.username})` : '';
}

/** What GET /api/me adds to the user a login answers with (a student's display name),
 * asked once a session. */
let asked = null;
function rememberMe() {
  if (!session.token || asked === session.token || (session.user && 'managedBy' in session.user)) return;
  asked = session.token;
  api('/api/me').then((me) => {
    session.remember({ displayName: me.displayName, managedBy: me.managedBy });
    showChrome();
  }).catch(() => { asked = null; });
}

/** The unread badges, on the notifications link and on the phone's menu button: how many
 * notices the user has not read (up to 99+). */
let unread = 0;
function showUnread(count) {
  unread = count;
  for (const badge of [document.getElementById('unread'), document.getElementById('menu-unread')]) {
    badge.hidden = count === 0;
    badge.textContent = count > 99 ? '99+' : String(count);
    badge.setAttribute('aria-label', `${count} unread`);
  }
}

async function refreshUnread() {
  if (!session.token) { showUnread(0); return; }
  try {
    const page = await api('/api/notifications?unread=true&limit=100');
    showUnread(page.items.length);
  } catch {
    showUnread(0);
  }
}

const orderOutcomes = { canceled: 'was canceled', rejected: 'was rejected', replaced: 'was replaced' };
live.on('quote', showQuote);
live.on('snapshot', (snapshot) => {
  (snapshot.quotes || []).forEach(showQuote);
  if (snapshot.unreadNotifications !== undefined) showUnread(snapshot.unreadNotifications);
});
live.on('notification', (notice) => {
  showUnread(unread + 1);
  toast(notice.title);
});
// A resting order that fills or expires is a notification, which raises its own toast.
live.on('order', (order) => {
  const outcome = orderOutcomes[order.status];
  if (outcome) toast(`Order to ${order.side} ${order.quantity} ${order.symbol} ${outcome}.`);
});
// Events may have been lost: draw the page afresh.
live.on('gap', () => render());

whenUnauthorized(() => {
  live.stop();
  session.clear();
  flash('Your session has ended. Please log in again.', 'error', true);
  window.location.hash = '#/login';
});

document.getElementById('logout').addEventListener('click', async () => {
  try { await api('/api/auth/logout', { method: 'POST' }); } catch (error) { if (!(error instanceof ApiError)) throw error; }
  live.stop();
  session.clear();
  flash('You are logged out.', 'info', true);
  window.location.hash = '#/login';
});

menuToggle.addEventListener('click', () => {
  const open = menuToggle.getAttribute('aria-expanded') !== 'true';
  menuToggle.setAttribute('aria-expanded', String(open));
  nav.hidden = !open;
});
nav.addEventListener('click', (event) => {
  if (event.target.closest('a') && window.matchMedia('(max-width: 720px)').matches) {
    menuToggle.setAttribute('aria-expanded', 'false');
    nav.hidden = true;
  }
});

window.addEventListener('hashchange', () => {
  flash(...(carried || ['']));
  carried = null;
  render();
});
window.addEventListener('resize', showChrome);
setInterval(() => { if (!live.connected) refreshUnread(); }, 30000);
render();
