import { api, newKey, marketHistory } from '../api.js';
import { h, fill, table, signed, loading, failure, showModalForm, dayText } from '../dom.js';
import { money, price, priceIn, percent, times, inCurrency } from '../decimal.js';
import { lineChart, destroyCharts } from '../charts.js';
import { currencyOf, leagueReader, portfolioById, portfolioSelect } from './portfolio.js';
import { quoteCell } from '../live.js';
import { noteField, orderDialog } from './orders.js';

const ranges = [['1m', '1M'], ['3m', '3M'], ['6m', '6M'], ['1y', '1Y'], ['5y', '5Y']];

export async function stockView(root, context) {
  const symbol = context.params[0].toUpperCase();
  const [stock, portfolios, actions] = await Promise.all([
    api(`/api/stock/${encodeURIComponent(symbol)}`), api('/api/portfolios'),
    api(`/api/stock/${encodeURIComponent(symbol)}/corporate-actions?limit=8`),
  ]);
  const position = await holdingText(symbol, portfolios);
  if (!context.current()) return;
  let range = context.query.get('range') || '1y';
  const chartBox = h('div', { id: 'chart-box' });
  const rangeButtons = h('div', { class: 'ranges', role: 'group', 'aria-label': 'Chart range' },
    ranges.map(([value, label]) => h('button', {
      type: 'button', 'aria-pressed': String(value === range), dataset: { range: value },
      onclick: () => { range = value; showChart(); },
    }, label)));

  let chartRequest = 0;
  async function showChart() {
    const ticket = ++chartRequest;
    const asked = range;
    for (const button of rangeButtons.children) button.setAttribute('aria-pressed', String(button.dataset.range === asked));
    destroyCharts(chartBox);
    fill(chartBox, loading('Loading the chart…'));
    try {
      const chart = await api(`/api/stock/${encodeURIComponent(symbol)}/chart?range=${asked}`);
      // A later click or another page wins over this answer.
      if (ticket !== chartRequest || !context.current()) return;
      const points = chart.points;
      // The period shown, in words: a range longer than the history shows all there is.
      fill(chartBox, points.length === 0 ? h('p', { class: 'empty' }, 'No price history for this range.')
        : [lineChart(`${symbol} closing prices, ${range}`, points.map((p) => p.date), points.map((p) => p.close)),
          h('p', { class: 'muted', id: 'chart-span' },
            `Daily closes from ${dayText(points[0].date)} to ${dayText(points[points.length - 1].date)}.`)]);
      chartBox.dataset.points = String(chart.points.length);
      chartBox.dataset.range = asked;
    } catch (error) {
      fill(chartBox, failure(error, showChart));
    }
  }

  context.live.follow({ quotes: [stock.symbol] });
  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, h('span', { id: 'stock-symbol' }, stock.symbol), ' ', h('span', { class: 'muted' }, stock.name)),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'buy', class: 'primary', onclick: () => tradeDialog('buy') }, 'Buy'),
        h('button', { type: 'button', id: 'sell', onclick: () => tradeDialog('sell') }, 'Sell'),
        h('button', { type: 'button', id: 'order', onclick: () => orderDialog(stock, portfolios, context, showPosition, tradingPortfolio(portfolios, context)) }, 'Order…'))),
    h('section', { class: 'summary', 'aria-label': 'Price' },
      h('div', {}, h('span', { class: 'label' }, 'Price'), h('strong', { id: 'stock-price' }, quoteCell(stock.symbol, 'price', stock))),
      h('div', {}, h('span', { class: 'label' }, 'Today'),
        h('strong', {}, quoteCell(stock.symbol, 'change', stock), ' (', quoteCell(stock.symbol, 'changePercent', stock), ')')),
      h('div', {}, h('span', { class: 'label' }, 'One year'), h('strong', {}, signed(stock.yearChangePercent, percent(stock.yearChangePercent)))),
      h('div', {}, h('span', { class: 'label' }, '52-week range'), h('strong', {}, `${money(stock.yearLow)} – ${money(stock.yearHigh)}`))),
    h('p', { id: 'position', class: 'muted' }, position),
    rangeButtons, chartBox,
    h('section', { id: 'corporate-actions' }, h('h2', {}, 'Dividends and splits'),
      table([
        { title: 'Ex-date', cell: (a) => a.exDate },
        { title: 'What', cell: (a) => (a.kind === 'split' ? splitText(a.ratio) : `Dividend of ${price(a.amount)} a share`) },
      ], actions.items, { empty: 'None recorded.' }),
      h('p', { class: 'hint' }, 'The chart is adjusted for splits: earlier prices are in today\'s shares.')),
    h('section', {}, h('h2', {}, 'About'),
      h('p', {}, stock.description || 'No description.'),
      h('p', { class: 'muted' }, [stock.sector, stock.currency].filter(Boolean).join(' · '))));
  showChart();
  context.live.on('order', (order) => { if (order.status === 'filled' && order.symbol === symbol) showPosition(); });
  // A notification may say a league portfolio was reset: the next dialog offers the new one.
  context.live.on('notification', async () => {
    try {
      const fresh = await api('/api/portfolios');
      if (fresh.map((p) => p.id).join() === portfolios.map((p) => p.id).join()) return;
      for (const p of fresh) {
        const before = portfolios.find((q) => q.leagueId && q.leagueId === p.leagueId && q.id !== p.id);
        if (before) replacePortfolio(before.id, p.id);
      }
      portfolios.splice(0, portfolios.length, ...fresh);
      showPosition();
    } catch { /* the next notification tries again */ }
  });

  async function showPosition() {
    const text = await holdingText(symbol, portfolios);
    const line = document.getElementById('position');
    if (line) line.textContent = text;
    context.refreshUnread();
  }


  /** The buy or sell dialog: estimate, the server's refusal in words, one trade per order. */
  function tradeDialog(side) {
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
    // One key per distinct order: a double click or a retry of the same order sends the
    // same key (the server trades once); changing the order makes a new one.
    let order = null;
    let key = null;

    // A league portfolio in another currency pays in it: the dollar price at the rate now
    // plus the league's spread.
    const tradeCurrency = () => currencyOf(portfolios, portfolioId);
    const update = () => {
      dayRow.hidden = kindOf() !== 'practice';
      if (dayRow.hidden) day.value = '';
      const count = Number(quantity.value);
      const foreign = tradeCurrency() !== 'USD' ? ` Paid in ${tradeCurrency()} at the rate now, with the league's spread.` : '';
      estimate.textContent = Number.isInteger(count) && count > 0 && day.value
        ? `Fills at the close of ${dayText(day.value)}, at that day's price.`
        : Number.isInteger(count) && count > 0
        ? `Estimated ${side === 'buy' ? 'cost' : 'proceeds'}: ${money(times(stock.price, count))} at ${price(stock.price)} a share (the price may move; any fee is extra).${foreign}`
        : 'Enter a whole number of shares.';
    };
    quantity.addEventListener('input', update);
    day.addEventListener('input', update);
    update();

    const dialog = h('dialog', { class: 'card', 'aria-labelledby': 'trade-title' });
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'trade-title' }, `${verb} ${symbol}`),
      portfolios.length > 1 ? [h('label', { for: 'trade-portfolio' }, 'Portfolio'),
        portfolioSelect(portfolios, portfolioId, (id) => { portfolioId = id; update(); markNote(); }, 'trade-portfolio')] : null,
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
      const result = await api(`/api/stock/${side}`, { method: 'POST', body, headers: { 'Idempotency-Key': key } });
      dialog.close();
      rememberPortfolio(portfolioId);
      const currency = tradeCurrency();
      const rate = result.trade.fxRate ? ` (${result.trade.fxRate} ${currency} a dollar)` : '';
      const where = portfolioName(portfolioById(portfolios, portfolioId));
      const fee = /[1-9]/.test(result.trade.fee) ? `, commission ${inCurrency(result.trade.fee, currency)} included` : '';
      context.flash(`${side === 'buy' ? 'Bought' : 'Sold'} ${result.trade.quantity} ${symbol} at ${priceIn(result.trade.price, currency)}${rate} in ${where}: ${inCurrency(result.trade.amount, currency)}${fee}. Cash now ${inCurrency(result.cash, currency)}.`);
      await showPosition();
    });
  }
}

/** A portfolio as a sentence names it. */
export function portfolioName(portfolio) {
  if (!portfolio || portfolio.kind === 'personal') return 'your personal portfolio';
  return portfolio.kind === 'league' ? `the league “${portfolio.name}”` : `the practice portfolio “${portfolio.name}”`;
}

const LAST_PORTFOLIO = 'mockstock.tradingPortfolio';

/** Which portfolio a trade starts in: the one the page came from (?portfolio=), else the
 * one last traded in, else the first (the personal one). */
export function tradingPortfolio(portfolios, context) {
  const known = (id) => portfolios.some((p) => String(p.id) === String(id));
  const asked = context.query.get('portfolio');
  if (asked && known(asked)) return String(asked);
  const last = sessionStorage.getItem(LAST_PORTFOLIO);
  if (last && known(last)) return last;
  return String(portfolios[0]?.id ?? '');
}

export function rememberPortfolio(id) {
  sessionStorage.setItem(LAST_PORTFOLIO, String(id));
}

/** A league portfolio was reset: the next trade starts in the new one if it would have
 * started in the old (archived) one. */
export function replacePortfolio(previous, next) {
  if (previous != null && sessionStorage.getItem(LAST_PORTFOLIO) === String(previous)) rememberPortfolio(next);
}

/** What the player holds of `symbol`, in every portfolio that holds some. */
async function holdingText(symbol, portfolios) {
  try {
    const valued = await Promise.all(portfolios.map((p) => api(`/api/portfolio?portfolioId=${p.id}`)));
    const held = valued.flatMap((portfolio, i) => {
      const holding = portfolio.holdings.find((x) => x.symbol === symbol);
      return holding ? [`${holding.quantity} share${Math.abs(holding.quantity) === 1 ? '' : 's'} in ${portfolioName(portfolios[i])}`] : [];
    });
    return held.length === 0 ? `You hold no ${symbol} shares.` : `You hold ${held.join(', ')}.`;
  } catch {
    return '';
  }
}

/** "4-for-1 split", "1-for-2 reverse split", "3-for-2 split". */
function splitText(ratio) {
  const value = Number(ratio);
  if (value >= 1) return Number.isInteger(value) ? `${value}-for-1 split` : `${ratio} shares for each share (split)`;
  const inverse = 1 / value;
  return Number.isInteger(inverse) ? `1-for-${inverse} reverse split` : `${ratio} shares for each share (reverse split)`;
}
