import { api, newKey } from '../api.js';
import { h, fill, table, confirmAction, showModalForm, amountProblem } from '../dom.js';
import { inCurrency, price, priceIn } from '../decimal.js';
import { currencyOf, leagueReader, portfolioById, portfolioChoices, portfolioSelect } from './portfolio.js';
import { cards } from './transactions.js';

// The words for order types and durations, in the order the dialog offers them; lists
// use the same words.
const TYPES = { market: 'Market', limit: 'Limit', stop: 'Stop', stop_limit: 'Stop limit' };
const DURATIONS = { day: 'Day (until the close)', gtc: 'Good till cancelled', ioc: 'Immediate or cancel', fok: 'Fill or kill' };
const STATUS = { new: 'Open', filled: 'Filled', canceled: 'Cancelled', expired: 'Expired', rejected: 'Rejected' };

/** "Limit $140.00", "Stop $90.00, limit $85.00", "Market". */
export function orderTerms(order) {
  switch (order.type) {
    case 'limit': return `Limit ${price(order.limitPrice)}`;
    case 'stop': return `Stop ${price(order.stopPrice)}`;
    case 'stop_limit': return `Stop ${price(order.stopPrice)}, limit ${price(order.limitPrice)}`;
    default: return 'Market';
  }
}

/** "market and limit orders", "market, limit and stop orders", "market orders only". */
function typesInWords(types) {
  const words = types.map((t) => (TYPES[t] ?? t).toLowerCase());
  if (words.length === 1) return `${words[0]} orders only`;
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]} orders`;
}

/** What happened to an order, in words; a fill's price is in the portfolio's currency. */
function outcome(order, currency = 'USD') {
  if (order.status === 'filled') return `Filled at ${priceIn(order.filledAveragePrice, currency)}`;
  return [STATUS[order.status] ?? order.status, order.rejectReason].filter(Boolean).join(': ');
}

/**
 * A trade's or order's journal note (at most 500 characters): optional, or marked
 * required where the portfolio's league asks for one (the server refuses the trade
 * without it, in its words). `mark(required)` says which; `value()` is the note, or
 * undefined when blank.
 */
export function noteField(id) {
  const input = h('textarea', { id, rows: 2, maxlength: 500, placeholder: 'Why? e.g. Earnings beat expectations' });
  const need = h('span', { class: 'muted', id: `${id}-need` }, '(optional)');
  const row = h('div', { id: `${id}-row`, class: 'note-row' }, h('label', { for: id }, 'Journal note ', need), input);
  return {
    row, input,
    mark(required) {
      need.textContent = required ? '(required in this league)' : '(optional)';
      need.className = required ? 'required' : 'muted';
      input.setAttribute('aria-required', String(Boolean(required)));
    },
    value: () => input.value.trim() || undefined,
  };
}

/** When an order stopped being open: filled, cancelled, expired, replaced or rejected. */
function closedAt(order) {
  return order.filledAt || order.canceledAt || order.expiredAt || order.replacedAt || order.updatedAt;
}

/** Open orders with cancel, and the order history, of one portfolio. Refreshes itself
 * every few seconds while orders are open, so a fill shows without reloading. */
export async function ordersView(root, context) {
  const portfolios = await portfolioChoices();
  // A portfolio no longer listed (a league portfolio archived by a reset) shows the first.
  const asked = context.query.get('id');
  const chosen = asked && portfolioById(portfolios, asked) ? asked : String(portfolios[0]?.id ?? '');
  const currency = currencyOf(portfolios, chosen);
  const query = chosen ? `&portfolioId=${encodeURIComponent(chosen)}` : '';
  const [open, closed] = await Promise.all([
    api(`/api/orders?status=open&limit=200${query}`), api(`/api/orders?status=closed&limit=50${query}`),
  ]);
  if (!context.current()) return;

  async function cancel(path, question, done) {
    if (!confirmAction(question)) return;
    try {
      done(await api(path, { method: 'DELETE' }));
    } catch (problem) {
      context.flash(problem.message, 'error');
    }
    context.refresh();
  }

  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, 'Orders'),
      h('div', { class: 'actions' },
        portfolios.length > 1
          ? h('label', { class: 'inline' }, 'Showing ', portfolioSelect(portfolios, chosen, (id) => context.navigate(`#/orders?id=${id}`)))
          : null,
        open.items.length > 0 ? h('button', {
          type: 'button', class: 'danger', id: 'cancel-all',
          onclick: () => cancel(`/api/orders${query ? `?${query.slice(1)}` : ''}`, `Cancel all ${open.items.length} open orders?`,
            (answer) => context.flash(`${answer.canceled.length} order${answer.canceled.length === 1 ? '' : 's'} cancelled.`, 'info', true)),
        }, 'Cancel all') : null)),
    h('section', { id: 'open-orders' },
      h('h2', {}, 'Open orders'),
      cards(table([
        { title: 'Placed', cell: (o) => new Date(o.createdAt).toLocaleString() },
        { title: 'Stock', cell: (o) => h('a', { href: `#/stock/${o.symbol}` }, o.symbol) },
        { title: 'Side', cell: (o) => (o.side === 'buy' ? 'Buy' : 'Sell') },
        { title: 'Shares', class: 'num', cell: (o) => String(o.quantity) },
        { title: 'Terms', cell: (o) => orderTerms(o) },
        { title: 'Lasts', cell: (o) => DURATIONS[o.timeInForce] ?? o.timeInForce },
        { title: '', cell: (o) => h('button', {
          type: 'button', class: 'small', dataset: { cancel: String(o.id) }, 'aria-label': `Cancel order ${o.id}`,
          onclick: () => cancel(`/api/orders/${o.id}`, `Cancel the order to ${o.side} ${o.quantity} ${o.symbol}?`,
            () => context.flash('Order cancelled; its reservation is released.', 'info', true)),
        }, 'Cancel') },
      ], open.items, { empty: 'No open orders. Place one from a stock\'s page.' }))),
    h('section', { id: 'order-history' },
      h('h2', {}, 'History'),
      cards(table([
        { title: 'Closed', cell: (o) => new Date(closedAt(o)).toLocaleString() },
        { title: 'Stock', cell: (o) => h('a', { href: `#/stock/${o.symbol}` }, o.symbol) },
        { title: 'Side', cell: (o) => (o.side === 'buy' ? 'Buy' : 'Sell') },
        { title: 'Shares', class: 'num', cell: (o) => String(o.quantity) },
        { title: 'Terms', cell: (o) => orderTerms(o) },
        { title: 'Outcome', cell: (o) => h('span', { class: `status-${o.status}` }, outcome(o, currency)) },
      ], [...closed.items].sort((a, b) => Date.parse(closedAt(b)) - Date.parse(closedAt(a))),
      { empty: 'No orders have closed yet.' }))));

  // Fills arrive on the live stream; without it, open orders are read again every 5 s.
  const redraw = () => { if (context.current()) ordersView(root, context).catch(() => {}); };
  context.live.on('order', redraw);
  if (open.items.length > 0) context.poll(redraw, 5000);
}

/** The order ticket on a stock page: type, prices, time in force, one order per submit
 * (a retry of the same ticket reuses its clientOrderId, so the server places it once). */
export function orderDialog(stock, portfolios, context, onPlaced, startIn = portfolios[0]?.id) {
  const symbol = stock.symbol;
  let portfolioId = String(startIn ?? '');
  const side = h('select', { id: 'order-side' }, h('option', { value: 'buy' }, 'Buy'), h('option', { value: 'sell' }, 'Sell'));
  const type = h('select', { id: 'order-type' }, Object.entries(TYPES).map(([value, label]) => h('option', { value }, label)));
  const quantity = h('input', { id: 'order-quantity', type: 'number', min: 1, max: 1000000000, step: 1, value: 1, required: true, inputmode: 'numeric' });
  const limitPrice = h('input', { id: 'order-limit', inputmode: 'decimal', placeholder: price(stock.price) });
  const stopPrice = h('input', { id: 'order-stop', inputmode: 'decimal', placeholder: price(stock.price) });
  const duration = h('select', { id: 'order-tif' }, Object.entries(DURATIONS).map(([value, label]) => h('option', { value }, label)));
  const typesNote = h('p', { id: 'order-types-note', class: 'hint', hidden: true });
  const limitRow = h('div', {}, h('label', { for: 'order-limit' }, 'Limit price'), limitPrice);
  const stopRow = h('div', {}, h('label', { for: 'order-stop' }, 'Stop price'), stopPrice);
  const note = noteField('order-note');
  const explain = h('p', { id: 'order-explain', class: 'hint', 'aria-live': 'polite' });
  const error = h('p', { id: 'order-error', class: 'error', role: 'alert', hidden: true });
  const confirm = h('button', { type: 'submit', id: 'order-confirm', class: 'primary' }, 'Place order');
  let ticket = null;
  let clientOrderId = null;
  let previewed = 0;
  let previewTimer = null;
  const ticketBody = () => ({
    symbol, side: side.value, quantity: Number(quantity.value), type: type.value, timeInForce: duration.value,
    limitPrice: limitRow.hidden ? undefined : limitPrice.value.trim(),
    stopPrice: stopRow.hidden ? undefined : stopPrice.value.trim(),
    portfolioId: Number(portfolioId),
    note: note.value(),
  });

  const update = () => {
    limitRow.hidden = !['limit', 'stop_limit'].includes(type.value);
    stopRow.hidden = !['stop', 'stop_limit'].includes(type.value);
    const buying = side.value === 'buy';
    const count = Number(quantity.value) || 0;
    const words = {
      market: `${buying ? 'Buys' : 'Sells'} at the current price (${price(stock.price)}).`,
      limit: `${buying ? 'Buys when the price is at or below' : 'Sells when the price is at or above'} the limit, at that price or better.`,
      stop: `Becomes a market order when the price ${buying ? 'rises to' : 'falls to'} the stop.`,
      stop_limit: `Becomes a limit order when the price ${buying ? 'rises to' : 'falls to'} the stop.`,
    }[type.value];
    explain.textContent = words;
    // What it holds back while open is the server's to say (the rule placing uses); a
    // ticket placing would refuse says why here, before it is sent.
    const asked = ++previewed;
    clearTimeout(previewTimer);
    if (count <= 0) return;
    previewTimer = setTimeout(async () => {
      try {
        const hold = await api('/api/orders/preview', { method: 'POST', body: ticketBody() });
        if (asked !== previewed) return;
        const held = hold.reservedShares > 0 ? `${hold.reservedShares} share${hold.reservedShares === 1 ? '' : 's'}`
          : `${inCurrency(hold.reservedCash, hold.currency)} of cash, commission included`;
        explain.textContent = `${words} While open it holds back ${held}.`;
      } catch (problem) {
        if (asked === previewed) explain.textContent = `${words} ${problem.message}`;
      }
    }, 150);
  };
  for (const input of [side, type, quantity, limitPrice, stopPrice, note.input]) input.addEventListener('input', update);
  for (const select of [side, type]) select.addEventListener('change', update);
  update();

  // A league's portfolio offers only the order types its rules allow (the server refuses
  // others), and marks the note required where the league asks for one; each league is
  // read once.
  const leagueOf = leagueReader(portfolios);
  const everyType = Object.keys(TYPES);
  const offerTypes = async () => {
    const asked = portfolioId;
    const league = await leagueOf(asked);
    const allowed = league?.rules?.allowedOrderTypes ?? everyType;
    if (asked !== portfolioId) return;
    note.mark(league?.journalRequired);
    const kept = allowed.includes(type.value) ? type.value : allowed[0];
    type.replaceChildren(...allowed.map((value) => h('option', { value }, TYPES[value] ?? value)));
    type.value = kept;
    const limited = allowed.length < everyType.length;
    typesNote.textContent = limited ? `This league allows ${typesInWords(allowed)}.` : '';
    typesNote.hidden = !limited;
    update();
  };
  offerTypes();

  const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'order-title' });
  const form = h('form', { method: 'dialog', id: 'order-form' },
    h('h2', { id: 'order-title' }, `Order ${symbol}`),
    portfolios.length > 1 ? [h('label', { for: 'order-portfolio' }, 'Portfolio'),
      portfolioSelect(portfolios, portfolioId, (id) => { portfolioId = id; offerTypes(); }, 'order-portfolio')] : null,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'order-side' }, 'Side'), side),
      h('div', {}, h('label', { for: 'order-type' }, 'Type'), type)),
    typesNote,
    h('label', { for: 'order-quantity' }, 'Shares'), quantity,
    h('div', { class: 'pair' }, limitRow, stopRow),
    h('label', { for: 'order-tif' }, 'Lasts'), duration,
    note.row,
    explain, error,
    h('div', { class: 'actions' }, confirm, h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel')));
  showModalForm(dialog, form, error, quantity, async () => {
    const body = ticketBody();
    const problem = (body.limitPrice !== undefined && amountProblem(body.limitPrice, 'Limit price', 4))
      || (body.stopPrice !== undefined && amountProblem(body.stopPrice, 'Stop price', 4));
    if (problem) throw new Error(problem);
    const signature = JSON.stringify(body);
    if (signature !== ticket) { ticket = signature; clientOrderId = newKey(); }
    const order = await api('/api/orders', { method: 'POST', body: { ...body, clientOrderId } });
    dialog.close();
    const what = `${order.side === 'buy' ? 'Buy' : 'Sell'} ${order.quantity} ${symbol} (${orderTerms(order)})`;
    const currency = currencyOf(portfolios, portfolioId);
    context.flash(order.status === 'filled' ? `${what}: filled at ${priceIn(order.filledAveragePrice, currency)}.`
      : order.status === 'new' ? `${what}: placed. See it under Orders.` : `${what}: ${outcome(order, currency).toLowerCase()}.`);
    onPlaced();
  });
}
