// The live stream: one WebSocket per signed-in tab (GET /api/stream). The app follows the
// user's orders and notifications everywhere; each page says which symbols and leagues
// it shows, and whose market its symbols are: the real one, or a scenario league's own
// (`quoteLeague`: its quotes are asked for with `leagueId`). Events reach handlers by
// type. When the socket cannot connect, `connected` is false and pages fall back to
// polling; it retries with a growing delay.
import { session } from './api.js';
import { h, signed } from './dom.js';
import { money, price, percent, signedMoney, times } from './decimal.js';

const handlers = new Map();
let socket = null;
/** The token the socket authenticated with: another one (a new login) needs a new socket. */
let socketToken = null;
let open = false;
let delay = 1000;
let retry = null;
const NOTHING = { quotes: [], leagues: [], quoteLeague: null };
let wanted = NOTHING;
let sent = NOTHING;

function emit(type, data) {
  for (const handler of handlers.get(type) || []) {
    try { handler(data); } catch (error) { console.error(error); }
  }
}

function send(message) {
  if (open && socket) socket.send(JSON.stringify(message));
}

/** Sends `action` for `quotes` of the market of `league` (null: the real one) and for
 * `leagues`: a scenario league's symbols name its own instruments only with its
 * `leagueId`, in a message of their own, so a refusal of them leaves the rest followed. */
function change(action, quotes, league, leagues) {
  if (league == null) {
    if (quotes.length || leagues.length) send({ action, quotes, leagues });
    return;
  }
  if (quotes.length) send({ action, quotes, leagueId: league });
  if (leagues.length) send({ action, leagues });
}

/** Subscribes to what the page shows and drops what the last page showed. Symbols of
 * another market than the last page's (a scenario league's "S01", or its "AAPL" that is
 * not the real one) are all dropped and asked for again in theirs. */
function sync() {
  if (!open) return;
  const sameMarket = sent.quoteLeague === wanted.quoteLeague;
  const gone = (key) => sent[key].filter((x) => !wanted[key].includes(x));
  const added = (key) => wanted[key].filter((x) => !sent[key].includes(x));
  change('unsubscribe', sameMarket ? gone('quotes') : sent.quotes, sent.quoteLeague, gone('leagues'));
  change('subscribe', sameMarket ? added('quotes') : wanted.quotes, wanted.quoteLeague, added('leagues'));
  sent = { quotes: [...wanted.quotes], leagues: [...wanted.leagues], quoteLeague: wanted.quoteLeague };
}

function connect() {
  retry = null;
  if (socket || !session.token) return;
  let ws;
  try {
    ws = new WebSocket(`${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}/api/stream`);
  } catch {
    // No WebSocket here: pages keep polling.
    return;
  }
  socket = ws;
  socketToken = session.token;
  ws.addEventListener('open', () => ws.send(JSON.stringify({ action: 'auth', token: socketToken })));
  ws.addEventListener('message', (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (event.type === 'authorized') {
      open = true;
      delay = 1000;
      sent = NOTHING;
      send({ action: 'subscribe', orders: true, notifications: true });
      sync();
      emit('connected', true);
      return;
    }
    emit(event.type, event.data);
  });
  ws.addEventListener('close', (event) => {
    if (socket !== ws) return;
    socket = null;
    const was = open;
    open = false;
    if (was) emit('connected', false);
    // 1008: the token was refused; the next API call logs the user out.
    if (event.code !== 1008 && session.token) {
      retry = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    }
  });
}

export const live = {
  get connected() { return open; },
  start() {
    if (socket && socketToken !== session.token) this.stop();
    if (!socket && !retry) connect();
  },
  stop() {
    clearTimeout(retry);
    retry = null;
    const ws = socket;
    socket = null;
    open = false;
    socketToken = null;
    wanted = NOTHING;
    sent = NOTHING;
    if (ws) {
      ws.close(1000);
      emit('connected', false);
    }
  },
  /** The symbols and leagues the page on screen shows; `quoteLeague`, the scenario league
   * whose own market the symbols are (null: the real market's). */
  follow({ quotes = [], leagues = [], quoteLeague = null } = {}) {
    const market = quoteLeague == null ? null : Number(quoteLeague);
    // A quote names its symbol only: the newest prices shown were another market's.
    if (market !== wanted.quoteLeague) newest.clear();
    wanted = {
      quotes: [...new Set(quotes.map((s) => s.toUpperCase()))].slice(0, 100), leagues: [...new Set(leagues.map(Number))].slice(0, 20),
      quoteLeague: market,
    };
    sync();
  },
  /** Calls `handler` with each event's data; returns a function that stops it. */
  on(type, handler) {
    if (!handlers.has(type)) handlers.set(type, new Set());
    handlers.get(type).add(handler);
    return () => handlers.get(type).delete(handler);
  },
};

/** A cell that shows one field of a symbol's quote and follows its price:
 * field is price, change, changePercent, or value (price × data quantity). */
export function quoteCell(symbol, field, quote, quantity) {
  const cell = h('span', { class: 'live', dataset: { quote: symbol, field, ...(quantity === undefined ? {} : { quantity: String(quantity) }) } });
  cell.append(quoteText(field, quote, quantity));
  return cell;
}

function quoteText(field, quote, quantity) {
  switch (field) {
    case 'change': return signed(quote.change, signedMoney(quote.change));
    case 'changePercent': return signed(quote.changePercent, percent(quote.changePercent));
    case 'value': return money(times(quote.price, quantity));
    default: return price(quote.price);
  }
}

/** The newest `asOf` shown per symbol: a snapshot read just before a newer price's
 * event can arrive after it, and must not put the older price back. */
const newest = new Map();

/** Shows a new quote in every cell that follows its symbol. */
export function showQuote(quote) {
  const shown = newest.get(quote.symbol);
  if (shown && quote.asOf && quote.asOf < shown) return;
  if (quote.asOf) newest.set(quote.symbol, quote.asOf);
  for (const cell of document.querySelectorAll(`[data-quote="${CSS.escape(quote.symbol)}"]`)) {
    const before = cell.textContent;
    cell.replaceChildren(quoteText(cell.dataset.field, quote, cell.dataset.quantity));
    if (cell.textContent !== before) {
      cell.classList.remove('ticked');
      void cell.offsetWidth;
      cell.classList.add('ticked');
    }
  }
}

/** A short message in the corner that goes away by itself. */
export function toast(text) {
  const box = document.getElementById('toasts');
  const item = h('p', { class: 'toast' }, text);
  box.append(item);
  setTimeout(() => item.remove(), 8000);
}
