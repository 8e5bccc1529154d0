// Trading as the stock page and the Orders page share it: the words for orders (types,
// durations, outcomes), a trade's journal note, the buy and sell dialog and the order
// ticket. What an order costs or holds back, and whether it may be placed, is the
// server's to say (POST /api/orders/preview); the dialogs show its answers.
import { api, newKey, marketHistory } from './api.js';
import { h, showModalForm, amountProblem, count, dayText } from './dom.js';
import { inCurrency, price, priceIn } from './decimal.js';
import {
  currencyOf, leagueReader, portfolioById, portfolioName, portfolioSelect, rememberPortfolio, scenarioOf, tradingPortfolio,
  VIEWER_WORDS, watchesOnly,
} from './portfolios.js';

// The words for order types and durations, in the order the dialog offers them; lists
// use the same words.
export const ORDER_TYPES = { market: 'Market', limit: 'Limit', stop: 'Stop', stop_limit: 'Stop limit', trailing_stop: 'Trailing stop' };
export const DURATIONS = { day: 'Day (until the close)', gtc: 'Good till cancelled', ioc: 'Immediate or cancel', fok: 'Fill or kill' };

/** How long an order lasts, in the ticket's words; a day order of a scenario league's
 * portfolio lasts until its league day ends. */
export function durationText(timeInForce, portfolio) {
  if (timeInForce === 'day' && scenarioOf(portfolio) != null) return 'Day (until the league day ends)';
  return DURATIONS[timeInForce] ?? timeInForce;
}

/** Orders with legs (docs/trading.md, "Brackets, OCO and OTO"). */
const ORDER_CLASSES = {
  simple: 'No exits',
  bracket: 'Bracket: take-profit and stop-loss',
  oto: 'One exit: take-profit or stop-loss',
  oco: 'OCO: take-profit or stop-loss of shares held',
};
const STATUS = { new: 'Open', held: 'Waiting for its entry', partially_filled: 'Partly filled', filled: 'Filled', canceled: 'Cancelled', expired: 'Expired', rejected: 'Rejected' };

/** "Limit $140.00", "Stop $90.00, limit $85.00", "Market"; a leg says which exit it is,
 * "Take-profit: limit $160.00", "Stop-loss: stop $140.00". */
export function orderTerms(order) {
  if (order.parentId != null || order.orderClass === 'oco') {
    const exit = order.type === 'limit' ? 'Take-profit' : 'Stop-loss';
    const terms = plainTerms(order);
    return `${exit}: ${terms.charAt(0).toLowerCase()}${terms.slice(1)}`;
  }
  return plainTerms(order);
}

function plainTerms(order) {
  switch (order.type) {
    case 'limit': return `Limit ${price(order.limitPrice)}`;
    case 'stop': return `Stop ${price(order.stopPrice)}`;
    case 'stop_limit': return `Stop ${price(order.stopPrice)}, limit ${price(order.limitPrice)}`;
    case 'trailing_stop': return `Trailing ${order.trailPercent ? `${order.trailPercent}%` : price(order.trailPrice)}, stop ${price(order.stopPrice)}`;
    default: return 'Market';
  }
}

/** "market and limit orders", "market, limit and stop orders", "market orders only". */
function typesInWords(types) {
  const words = types.map((t) => (ORDER_TYPES[t] ?? t).toLowerCase());
  if (words.length === 1) return `${words[0]} orders only`;
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]} orders`;
}

/** What happened to an order, in words; a fill's price is in the portfolio's currency. */
export function orderOutcome(order, currency = 'USD') {
  if (order.status === 'filled') return `Filled at ${priceIn(order.filledAveragePrice, currency)}`;
  // An order closed after filling in part (a league's volume cap) says how much, at what average.
  const part = order.filledQuantity > 0
    ? ` (${filledPart(order)} at ${priceIn(order.filledAveragePrice, currency)})` : '';
  return [STATUS[order.status] ?? order.status, order.rejectReason].filter(Boolean).join(': ') + part;
}

/** "6 of 20 filled": an order's shares filled so far. */
export function filledPart(order) {
  return `${order.filledQuantity} of ${order.quantity} filled`;
}

/**
 * A refusal's words, with what the player needs to know of a frozen league: a trade or
 * order refused because the host froze trading (`trading_frozen`) names the league and
 * the host's reason, read from the league (`readLeague()`, a promise of it or null); any
 * other refusal keeps the server's words.
 */
export async function refusal(problem, readLeague) {
  if (problem?.code !== 'trading_frozen') return problem;
  const league = await readLeague().catch(() => null);
  if (!league) return problem;
  const reason = league.frozenReason ? ` The host says: “${league.frozenReason}”.` : '';
  return new Error(`Trading in “${league.name}” is frozen by its host.${reason} Open orders wait and may still be cancelled; you can trade again once the host resumes trading.`);
}

/** The league of a league portfolio as it is now (null for another portfolio). */
function leagueNow(portfolios, portfolioId) {
  const leagueId = portfolioById(portfolios, portfolioId)?.leagueId;
  return () => (leagueId ? api(`/api/leagues/${leagueId}`) : Promise.resolve(null));
}

/**
 * A dialog's line for a team's portfolio the player only watches: it says so, and the
 * dialog's confirm button is disabled while that portfolio is chosen (the server would
 * answer `403 not_a_trader`). `show(portfolio)` updates both.
 */
function viewerGuard(id, confirm) {
  const line = h('p', { id, class: 'notice', role: 'status', hidden: true },
    `${VIEWER_WORDS} Ask the league's host to make you a trader, or choose another portfolio.`);
  return {
    line,
    show(portfolio) {
      const watching = watchesOnly(portfolio);
      line.hidden = !watching;
      confirm.disabled = watching;
    },
  };
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

/** The order ticket on a stock page: type, prices, time in force, one order per submit
 * (a retry of the same ticket reuses its clientOrderId, so the server places it once). */
export function orderDialog(stock, portfolios, context, onPlaced, startIn = portfolios[0]?.id) {
  const symbol = stock.symbol;
  let portfolioId = String(startIn ?? '');
  const side = h('select', { id: 'order-side' }, h('option', { value: 'buy' }, 'Buy'), h('option', { value: 'sell' }, 'Sell'));
  const type = h('select', { id: 'order-type' }, Object.entries(ORDER_TYPES).map(([value, label]) => h('option', { value }, label)));
  const quantity = h('input', { id: 'order-quantity', type: 'number', min: 1, max: 1000000000, step: 1, value: 1, required: true, inputmode: 'numeric' });
  const limitPrice = h('input', { id: 'order-limit', inputmode: 'decimal', placeholder: price(stock.price) });
  const stopPrice = h('input', { id: 'order-stop', inputmode: 'decimal', placeholder: price(stock.price) });
  const duration = h('select', { id: 'order-tif' },
    Object.keys(DURATIONS).map((value) => h('option', { value }, durationText(value, portfolioById(portfolios, portfolioId)))));
  const typesNote = h('p', { id: 'order-types-note', class: 'hint', hidden: true });
  const limitRow = h('div', {}, h('label', { for: 'order-limit' }, 'Limit price'), limitPrice);
  const stopRow = h('div', {}, h('label', { for: 'order-stop' }, 'Stop price'), stopPrice);
  // A trailing stop trails by a percentage (typed with %) or an amount.
  const trail = h('input', { id: 'order-trail', inputmode: 'decimal', placeholder: '2% or 3.00' });
  const trailRow = h('div', {}, h('label', { for: 'order-trail' }, 'Trail (% or $)'), trail);
  const trailBy = () => {
    const text = trail.value.trim().replace(/\s+/g, '');
    return text.endsWith('%') ? { trailPercent: text.slice(0, -1) } : { trailPrice: text.replace(/^\$/, '') };
  };
  // Exits placed with it: a bracket's take-profit and stop-loss, an OTO's one, an OCO's two.
  const orderClass = h('select', { id: 'order-class' }, Object.entries(ORDER_CLASSES).map(([value, label]) => h('option', { value }, label)));
  const classRow = h('div', {}, h('label', { for: 'order-class' }, 'Exits'), orderClass);
  const takeProfit = h('input', { id: 'order-take-profit', inputmode: 'decimal', placeholder: 'none' });
  const stopLoss = h('input', { id: 'order-stop-loss', inputmode: 'decimal', placeholder: 'none' });
  const takeProfitRow = h('div', {}, h('label', { for: 'order-take-profit' }, 'Take-profit price'), takeProfit);
  const stopLossRow = h('div', {}, h('label', { for: 'order-stop-loss' }, 'Stop-loss price'), stopLoss);
  let classesAllowed = true;
  const note = noteField('order-note');
  const explain = h('p', { id: 'order-explain', class: 'hint', 'aria-live': 'polite' });
  const error = h('p', { id: 'order-error', class: 'error', role: 'alert', hidden: true });
  const confirm = h('button', { type: 'submit', id: 'order-confirm', class: 'primary' }, 'Place order');
  const viewer = viewerGuard('order-viewer', confirm);
  let ticket = null;
  let clientOrderId = null;
  let previewed = 0;
  let previewTimer = null;
  const exits = () => (classRow.hidden ? 'simple' : orderClass.value);
  const ticketBody = () => {
    const chosen = exits();
    const withExits = chosen === 'simple' ? {} : {
      orderClass: chosen,
      takeProfit: takeProfit.value.trim() ? { limitPrice: takeProfit.value.trim() } : undefined,
      stopLoss: stopLoss.value.trim() ? { stopPrice: stopLoss.value.trim() } : undefined,
    };
    return {
      symbol, side: side.value, quantity: Number(quantity.value), type: type.value, timeInForce: duration.value,
      // An OCO's limit is its take-profit.
      limitPrice: limitRow.hidden || chosen === 'oco' ? undefined : limitPrice.value.trim(),
      stopPrice: stopRow.hidden ? undefined : stopPrice.value.trim(),
      ...(trailRow.hidden ? {} : trailBy()),
      ...withExits,
      portfolioId: Number(portfolioId),
      note: note.value(),
    };
  };

  const update = () => {
    limitRow.hidden = !['limit', 'stop_limit'].includes(type.value);
    stopRow.hidden = !['stop', 'stop_limit'].includes(type.value);
    trailRow.hidden = type.value !== 'trailing_stop';
    // Exits go with a market or limit buy, or (an OCO) a limit sale, where the league allows limit and stop orders.
    classRow.hidden = !classesAllowed || !(side.value === 'buy' ? ['market', 'limit'] : ['limit']).includes(type.value);
    for (const option of orderClass.options) option.hidden = (option.value === 'oco') === (side.value === 'buy') && option.value !== 'simple';
    if (orderClass.selectedOptions[0]?.hidden) orderClass.value = 'simple';
    const chosen = exits();
    takeProfitRow.hidden = chosen === 'simple';
    stopLossRow.hidden = chosen === 'simple';
    if (chosen === 'oco') limitRow.hidden = true;
    const buying = side.value === 'buy';
    const shares = Number(quantity.value) || 0;
    const words = {
      market: `${buying ? 'Buys' : 'Sells'} at the current price (${price(stock.price)}).`,
      limit: `${buying ? 'Buys when the price is at or below' : 'Sells when the price is at or above'} the limit, at that price or better.`,
      stop: `Becomes a market order when the price ${buying ? 'rises to' : 'falls to'} the stop.`,
      stop_limit: `Becomes a limit order when the price ${buying ? 'rises to' : 'falls to'} the stop.`,
      trailing_stop: `The stop follows the ${buying ? 'lowest' : 'highest'} price since placing by the trail; `
        + `a market order when the price ${buying ? 'rises to' : 'falls to'} it.`,
    }[type.value] + ({
      bracket: ' Once it fills, its shares are sold at the take-profit or the stop-loss, whichever comes first.',
      oto: ' Once it fills, its shares are sold at the take-profit or the stop-loss you give (one of them).',
      oco: ' Sells at the take-profit, or at the stop-loss if the price falls to it first (the take-profit is its limit).',
    }[exits()] ?? '');
    explain.textContent = words;
    // What it holds back while open is the server's to say (the rule placing uses); a
    // ticket placing would refuse says why here, before it is sent.
    const asked = ++previewed;
    clearTimeout(previewTimer);
    if (shares <= 0) return;
    previewTimer = setTimeout(async () => {
      try {
        const hold = await api('/api/orders/preview', { method: 'POST', body: ticketBody() });
        if (asked !== previewed) return;
        const held = hold.reservedShares > 0 ? `${hold.reservedShares} share${hold.reservedShares === 1 ? '' : 's'}`
          : `${inCurrency(hold.reservedCash, hold.currency)} of cash, commission included`;
        explain.textContent = `${words} While open it holds back ${held}.`;
      } catch (problem) {
        const said = await refusal(problem, () => leagueOf(portfolioId));
        if (asked === previewed) explain.textContent = `${words} ${said.message}`;
      }
    }, 150);
  };
  for (const input of [side, type, quantity, limitPrice, stopPrice, trail, takeProfit, stopLoss, note.input]) input.addEventListener('input', update);
  for (const select of [side, type, orderClass]) select.addEventListener('change', update);
  update();

  // A league's portfolio offers only the order types its rules allow (the server refuses
  // others), and marks the note required where the league asks for one; each league is
  // read once.
  const leagueOf = leagueReader(portfolios);
  const everyType = Object.keys(ORDER_TYPES);
  const offerTypes = async () => {
    const asked = portfolioId;
    const league = await leagueOf(asked);
    const allowed = league?.rules?.allowedOrderTypes ?? everyType;
    if (asked !== portfolioId) return;
    note.mark(league?.journalRequired);
    const kept = allowed.includes(type.value) ? type.value : allowed[0];
    type.replaceChildren(...allowed.map((value) => h('option', { value }, ORDER_TYPES[value] ?? value)));
    type.value = kept;
    classesAllowed = allowed.includes('limit') && allowed.includes('stop');
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
      portfolioSelect(portfolios, portfolioId, (id) => { portfolioId = id; viewer.show(portfolioById(portfolios, id)); offerTypes(); }, 'order-portfolio')] : null,
    viewer.line,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'order-side' }, 'Side'), side),
      h('div', {}, h('label', { for: 'order-type' }, 'Type'), type)),
    typesNote,
    h('label', { for: 'order-quantity' }, 'Shares'), quantity,
    h('div', { class: 'pair' }, limitRow, stopRow), trailRow,
    classRow, h('div', { class: 'pair' }, takeProfitRow, stopLossRow),
    h('label', { for: 'order-tif' }, 'Lasts'), duration,
    note.row,
    explain, error,
    h('div', { class: 'actions' }, confirm, h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel')));
  viewer.show(portfolioById(portfolios, portfolioId));
  showModalForm(dialog, form, error, quantity, async () => {
    const body = ticketBody();
    const problem = (body.limitPrice !== undefined && amountProblem(body.limitPrice, 'Limit price', 4))
      || (body.stopPrice !== undefined && amountProblem(body.stopPrice, 'Stop price', 4))
      || (body.trailPercent !== undefined && amountProblem(body.trailPercent, 'Trail', 4))
      || (body.trailPrice !== undefined && amountProblem(body.trailPrice, 'Trail', 4))
      || (body.takeProfit && amountProblem(body.takeProfit.limitPrice, 'Take-profit price', 4))
      || (body.stopLoss && amountProblem(body.stopLoss.stopPrice, 'Stop-loss price', 4));
    if (problem) throw new Error(problem);
    const signature = JSON.stringify(body);
    if (signature !== ticket) { ticket = signature; clientOrderId = newKey(); }
    let order;
    try {
      order = await api('/api/orders', { method: 'POST', body: { ...body, clientOrderId } });
    } catch (problem) {
      throw await refusal(problem, leagueNow(portfolios, body.portfolioId));
    }
    dialog.close();
    const what = `${order.side === 'buy' ? 'Buy' : 'Sell'} ${order.quantity} ${symbol} (${orderTerms(order)})`;
    const currency = currencyOf(portfolios, portfolioId);
    const legs = order.legs?.length ? ` Its ${order.legs.length === 1 ? 'exit is' : 'exits are'} under Orders.` : '';
    context.flash((order.status === 'filled' ? `${what}: filled at ${priceIn(order.filledAveragePrice, currency)}.`
      : order.status === 'new' ? `${what}: placed. See it under Orders.` : `${what}: ${orderOutcome(order, currency).toLowerCase()}.`) + legs);
    onPlaced();
  });
}

/**
 * The buy or sell dialog's estimate, kept in `line`: what the trade would come to is the
 * server's to say — the preview of a market order for the shares (POST /api/orders/preview)
 * answers what a buy would hold back, the price now at the portfolio's exchange rate and
 * spread plus the commission, in the portfolio's currency — asked again, a moment after
 * the shares (or the portfolio, or the note) change. Placing it would be refused? The
 * server's words say why, before anything is sent. A sale's proceeds are not previewed:
 * it shows the price a share. `ticket()` is the order's body, or a sentence when it is
 * not one (no whole number of shares; a past day's close); `explain(problem)` words a
 * refusal (`refusal`).
 */
function tradeEstimate(line, stock, side, ticket, foreignNote, explain) {
  let asked = 0;
  let timer = null;
  return () => {
    const body = ticket();
    const mine = ++asked;
    clearTimeout(timer);
    if (typeof body === 'string') { line.textContent = body; return; }
    const priced = `${count(body.quantity, 'share')} at ${price(stock.price)} a share (the price may move).${foreignNote()}`;
    line.textContent = side === 'buy' ? `${priced} Working out the cost…` : priced;
    timer = setTimeout(async () => {
      try {
        const hold = await api('/api/orders/preview', { method: 'POST', body });
        if (mine !== asked || side !== 'buy') return;
        line.textContent = `Estimated cost: ${inCurrency(hold.reservedCash, hold.currency)}, commission included, for ${priced}`;
      } catch (problem) {
        const said = await explain(problem);
        if (mine === asked) line.textContent = `${priced} ${said.message}`;
      }
    }, 250);
  };
}

/** The buy or sell dialog on a stock's page: the server's estimate, its refusal in words,
 * one trade per order (an Idempotency-Key kept while the order is unchanged). `onTraded`
 * runs after a trade. */
export function tradeDialog(side, stock, portfolios, context, onTraded) {
  const symbol = stock.symbol;
  const verb = side === 'buy' ? 'Buy' : 'Sell';
  let portfolioId = tradingPortfolio(portfolios, context);
  const quantity = h('input', { id: 'trade-quantity', type: 'number', min: 1, max: 1000000000, step: 1, value: 1, required: true, inputmode: 'numeric' });
  // A practice portfolio may trade on a past day, at that day's close.
  const day = h('input', { id: 'trade-day', type: 'date' });
  const dayRow = h('div', { id: 'trade-day-row', hidden: true },
    h('label', { for: 'trade-day' }, 'On a past day (optional: at its close)'), day);
  marketHistory().then((span) => { if (span) { day.min = span.from; day.max = span.through; } }).catch(() => {});
  const kindOf = () => portfolioById(portfolios, portfolioId)?.kind;
  const estimate = h('p', { id: 'trade-estimate', 'aria-live': 'polite' });
  // A journal note, marked required where the portfolio's league asks for one.
  const note = noteField('trade-note');
  const leagueOf = leagueReader(portfolios);
  const markNote = async () => {
    const asked = portfolioId;
    const league = await leagueOf(asked);
    if (asked === portfolioId) note.mark(league?.journalRequired);
  };
  markNote();
  const error = h('p', { id: 'trade-error', class: 'error', role: 'alert', hidden: true });
  const confirm = h('button', { type: 'submit', id: 'trade-confirm', class: 'primary' }, `${verb} ${symbol}`);
  const viewer = viewerGuard('trade-viewer', confirm);
  // One key per distinct order: a double click or a retry of the same order sends the
  // same key (the server trades once); changing the order makes a new one.
  let order = null;
  let key = null;

  // A league portfolio in another currency pays in it: the dollar price at the rate now
  // plus the league's spread (the server's estimate includes both).
  const tradeCurrency = () => currencyOf(portfolios, portfolioId);
  const foreignNote = () => (tradeCurrency() !== 'USD' ? ` Paid in ${tradeCurrency()} at the rate now, with the league's spread.` : '');
  const ticket = () => {
    const shares = Number(quantity.value);
    if (!Number.isInteger(shares) || shares <= 0) return 'Enter a whole number of shares.';
    if (day.value) return `Fills at the close of ${dayText(day.value)}, at that day's price.`;
    return { symbol, side, quantity: shares, type: 'market', portfolioId: Number(portfolioId), note: note.value() };
  };
  const estimateNow = tradeEstimate(estimate, stock, side, ticket, foreignNote, (problem) => refusal(problem, () => leagueOf(portfolioId)));
  const update = () => {
    viewer.show(portfolioById(portfolios, portfolioId));
    dayRow.hidden = kindOf() !== 'practice';
    if (dayRow.hidden) day.value = '';
    estimateNow();
  };
  quantity.addEventListener('input', update);
  day.addEventListener('input', update);
  note.input.addEventListener('input', update);
  update();

  const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'trade-title' });
  const form = h('form', { method: 'dialog' },
    h('h2', { id: 'trade-title' }, `${verb} ${symbol}`),
    portfolios.length > 1 ? [h('label', { for: 'trade-portfolio' }, 'Portfolio'),
      portfolioSelect(portfolios, portfolioId, (id) => { portfolioId = id; update(); markNote(); }, 'trade-portfolio')] : null,
    viewer.line,
    h('label', { for: 'trade-quantity' }, 'Shares'), quantity, dayRow, note.row, estimate, error,
    h('div', { class: 'actions' }, confirm, h('button', { type: 'button', id: 'trade-dialog-cancel', onclick: () => dialog.close() }, 'Cancel')));
  showModalForm(dialog, form, error, quantity, async () => {
    const amount = Number(quantity.value);
    if (!Number.isInteger(amount) || amount < 1) throw new Error('Enter a whole number of shares, 1 or more.');
    const body = { symbol, amount, portfolioId: Number(portfolioId), note: note.value() };
    if (!dayRow.hidden && day.validity.badInput) throw new Error('Choose a whole day, or leave it empty to trade now.');
    if (!dayRow.hidden && day.value) body.at = day.value;
    const signature = JSON.stringify(body);
    if (signature !== order) { order = signature; key = newKey(); }
    let result;
    try {
      result = await api(`/api/stock/${side}`, { method: 'POST', body, headers: { 'Idempotency-Key': key } });
    } catch (problem) {
      throw await refusal(problem, leagueNow(portfolios, body.portfolioId));
    }
    dialog.close();
    rememberPortfolio(portfolioId);
    const currency = tradeCurrency();
    const rate = result.trade.fxRate ? ` (${result.trade.fxRate} ${currency} a dollar)` : '';
    const where = portfolioName(portfolioById(portfolios, portfolioId));
    const fee = /[1-9]/.test(result.trade.fee) ? `, commission ${inCurrency(result.trade.fee, currency)} included` : '';
    context.flash(`${side === 'buy' ? 'Bought' : 'Sold'} ${result.trade.quantity} ${symbol} at ${priceIn(result.trade.price, currency)}${rate} in ${where}: ${inCurrency(result.trade.amount, currency)}${fee}. Cash now ${inCurrency(result.cash, currency)}.`);
    await onTraded();
  });
}
