// A stock's page: its price (moving live), chart by range, dividends and splits, what the
// player holds of it, and the Buy, Sell and Order… dialogs (js/trading.js).
import { api } from '../api.js';
import { h, fill, table, signed, loading, failure, dayText } from '../dom.js';
import { money, price, percent } from '../decimal.js';
import { lineChart, destroyCharts } from '../charts.js';
import { quoteCell } from '../live.js';
import { portfolioChoices, portfolioName, replacePortfolio, tradingPortfolio } from '../portfolios.js';
import { orderDialog, tradeDialog } from '../trading.js';

const ranges = [['1m', '1M'], ['3m', '3M'], ['6m', '6M'], ['1y', '1Y'], ['5y', '5Y']];

export async function stockView(root, context) {
  const symbol = context.params[0].toUpperCase();
  const [stock, portfolios, actions] = await Promise.all([
    api(`/api/stock/${encodeURIComponent(symbol)}`), portfolioChoices(),
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
        h('button', { type: 'button', id: 'buy', class: 'primary', onclick: () => tradeDialog('buy', stock, portfolios, context, showPosition) }, 'Buy'),
        h('button', { type: 'button', id: 'sell', onclick: () => tradeDialog('sell', stock, portfolios, context, showPosition) }, 'Sell'),
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
  // A notification may say a league portfolio was reset: the next dialog offers the new one
  // (and a team's portfolio as the player's role on it is now).
  context.live.on('notification', async () => {
    try {
      const fresh = await portfolioChoices();
      const stamp = (list) => list.map((p) => `${p.id}:${p.team?.role ?? ''}`).join();
      if (stamp(fresh) === stamp(portfolios)) return;
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
