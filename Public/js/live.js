// The live stream: one WebSocket per signed-in tab (GET /api/stream). The app follows the
// user's orders and notifications everywhere; each page says which symbols and leagues
// it shows. Events reach handlers by type. When the socket cannot connect, `connected`
// is false and pages fall back to polling; it retries with a growing delay.
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
let wanted = { quotes: [], leagues: [] };
let sent = { quotes: [], leagues: [] };

function emit(type, data) {
  for (const handler of handlers.get(type) || []) {
    try { handler(data); } catch (error) { console.error(error); }
  }
}

function send(message) {
  if (open && socket) socket.send(JSON.stringify(message));
}

/** Subscribes to what the page shows and drops what the last page showed. */
function sync() {
  if (!open) return;
  const gone = (key) => sent[key].filter((x) => !wanted[key].includes(x));
  const added = (key) => wanted[key].filter((x) => !sent[key].includes(x));
  if (gone('quotes').length || gone('leagues').length) send({ action: 'unsubscribe', quotes: gone('quotes'), leagues: gone('leagues') });
  if (added('quotes').length || added('leagues').length) send({ action: 'subscribe', quotes: added('quotes'), leagues: added('leagues') });
  sent = { quotes: [...wanted.quotes], leagues: [...wanted.leagues] };
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
      sent = { quotes: [], leagues: [] };
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
    wanted = { quotes: [], leagues: [] };
    sent = { quotes: [], leagues: [] };
    if (ws) {
      ws.close(1000);
      emit('connected', false);
    }
  },
  /** The symbols and leagues the page on screen shows. */
  follow({ quotes = [], leagues = [] } = {}) {
    wanted = { quotes: [...new Set(quotes.map((s) => s.toUpperCase()))].slice(0, 100), leagues: [...new Set(leagues.map(Number))].slice(0, 20) };
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
