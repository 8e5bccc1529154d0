// A stock's page: its price (moving live), chart by range, dividends and splits, what the
// player holds of it, and the Buy, Sell and Order… dialogs (js/trading.js). In a scenario
// league (`#/stock/S01?league=7`) it is a company of the league's own market: its price
// and chart by league day, and trades in the member's league portfolio only.
import { api } from '../api.js';
import { h, fill, table, signed, loading, failure, dayText } from '../dom.js';
import { money, price, percent } from '../decimal.js';
import { lineChart, destroyCharts } from '../charts.js';
import { quoteCell } from '../live.js';
import { portfolioChoices, portfolioName, replacePortfolio, scenarioOf, tradingPortfolio } from '../portfolios.js';
import { orderDialog, tradeDialog } from '../trading.js';

const ranges = [['1m', '1M'], ['3m', '3M'], ['6m', '6M'], ['1y', '1Y'], ['5y', '5Y']];

export async function stockView(root, context) {
  const symbol = context.params[0].toUpperCase();
  const league = context.query.get('league');
  if (league && /^\d+$/.test(league)) return leagueStockView(root, context, symbol, Number(league));
  const [stock, every, actions] = await Promise.all([
    api(`/api/stock/${encodeURIComponent(symbol)}`), portfolioChoices(),
    api(`/api/stock/${encodeURIComponent(symbol)}/corporate-actions?limit=8`),
  ]);
  // A scenario league's portfolio trades its own market, not this stock.
  const portfolios = every.filter((p) => scenarioOf(p) == null);
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
  const showPosition = followPosition(symbol, portfolios, context, (p) => scenarioOf(p) == null);
  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, h('span', { id: 'stock-symbol' }, stock.symbol), ' ', h('span', { class: 'muted' }, stock.name)),
      tradeButtons(stock, portfolios, context, showPosition)),
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
}

/** The Buy, Sell and Order… buttons, trading in `portfolios` (none: no buttons, `none`
 * said instead). */
function tradeButtons(stock, portfolios, context, showPosition, none = null) {
  if (portfolios.length === 0) return none;
  return h('div', { class: 'actions' },
    h('button', { type: 'button', id: 'buy', class: 'primary', onclick: () => tradeDialog('buy', stock, portfolios, context, showPosition) }, 'Buy'),
    h('button', { type: 'button', id: 'sell', onclick: () => tradeDialog('sell', stock, portfolios, context, showPosition) }, 'Sell'),
    h('button', { type: 'button', id: 'order', onclick: () => orderDialog(stock, portfolios, context, showPosition, tradingPortfolio(portfolios, context)) }, 'Order…'));
}

/** Keeps the line of what the player holds of `symbol` (in `portfolios`, those `kept`)
 * up to date: after a fill, and after a notification that may say a league portfolio
 * was reset (the next dialog then offers the new one, and a team's portfolio as the
 * player's role on it is now). Returns the function that shows it again. */
function followPosition(symbol, portfolios, context, kept) {
  async function showPosition() {
    const text = await holdingText(symbol, portfolios);
    const line = document.getElementById('position');
    if (line) line.textContent = text;
    context.refreshUnread();
  }
  context.live.on('order', (order) => { if (order.status === 'filled' && order.symbol === symbol) showPosition(); });
  context.live.on('notification', async () => {
    try {
      const fresh = (await portfolioChoices()).filter(kept);
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
  return showPosition;
}

/**
 * A company of a scenario league's own market (`#/stock/S01?league=7`, its members'):
 * its price (moving live as league days pass), the change this league day and since day
 * 1, its closes by league day, what it really is once the league reveals it, and Buy,
 * Sell and Order… in the member's league portfolio (none for a host who does not play,
 * nor once the league has ended). A new league day reads the market and the chart again.
 */
async function leagueStockView(root, context, symbol, leagueId) {
  const path = `/api/stock/${encodeURIComponent(symbol)}`;
  const [stock, every, league, market] = await Promise.all([
    api(`${path}?leagueId=${leagueId}`), portfolioChoices(), api(`/api/leagues/${leagueId}`), api(`/api/leagues/${leagueId}/market`),
  ]);
  const portfolios = every.filter((p) => p.leagueId === leagueId);
  const position = await holdingText(symbol, portfolios);
  if (!context.current()) return;
  const chartBox = h('div', { id: 'chart-box' });
  const figures = h('section', { class: 'summary', 'aria-label': 'Price' });
  const about = h('section', { id: 'league-company' });
  const showPosition = followPosition(symbol, portfolios, context, (p) => p.leagueId === leagueId);
  const seatless = h('p', { class: 'hint', id: 'league-seatless' }, 'You host this league without playing: you have no league portfolio to trade in.');
  context.live.follow({ quotes: [stock.symbol], quoteLeague: leagueId });
  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, h('span', { id: 'stock-symbol' }, stock.symbol), ' ', h('span', { class: 'muted' }, stock.name)),
      tradeButtons(stock, market.ended ? [] : portfolios, context, showPosition, market.ended ? null : seatless)),
    h('p', { class: 'hint', id: 'stock-league' }, 'A company of the league ', h('a', { href: `#/leagues/${leagueId}` }, `“${league.name}”`),
      ` (${market.blind ? 'a blind replay' : 'a replayed period'})`,
      market.ended ? ', which has ended: its market trades no more.'
        : `: its price moves when a league day passes${portfolios.length > 0 ? ', and you trade it in your league portfolio' : ''}.`),
    figures,
    portfolios.length > 0 ? h('p', { id: 'position', class: 'muted' }, position) : null,
    chartBox, about);
  function show(fresh) {
    const company = fresh.symbols.find((s) => s.symbol === stock.symbol);
    const since = company?.changePercent ?? null;
    fill(figures,
      h('div', {}, h('span', { class: 'label' }, 'Price'), h('strong', { id: 'stock-price' }, quoteCell(stock.symbol, 'price', stock))),
      h('div', {}, h('span', { class: 'label' }, 'This league day'),
        h('strong', {}, quoteCell(stock.symbol, 'change', stock), ' (', quoteCell(stock.symbol, 'changePercent', stock), ')')),
      h('div', {}, h('span', { class: 'label' }, 'Since day 1'), h('strong', { id: 'stock-since' }, since === null ? '—' : signed(since, percent(since))),
        company ? h('span', { class: 'hint' }, `from ${price(company.firstPrice)}`) : null),
      h('div', {}, h('span', { class: 'label' }, 'League day'), h('strong', { id: 'stock-day' }, `Day ${fresh.day} of ${fresh.days}`)));
    fill(about, h('h2', {}, 'About'), companyWords(stock, fresh, company));
  }
  let chartRequest = 0;
  async function showChart(fresh) {
    const ticket = ++chartRequest;
    try {
      // Every league day so far: the 5-year range holds them all.
      const chart = await api(`${path}/chart?leagueId=${leagueId}&range=5y`);
      if (ticket !== chartRequest || !context.current()) return;
      const points = chart.points;
      const first = fresh.day - points.length + 1;
      destroyCharts(chartBox);
      fill(chartBox, points.length === 0 ? h('p', { class: 'empty' }, 'No prices yet.')
        : [lineChart(`${stock.symbol} closing prices by league day`, points.map((_, i) => `Day ${first + i}`), points.map((p) => p.close), { dots: true }),
          h('p', { class: 'muted', id: 'chart-span' }, points.length === 1 ? `The close of league day ${first}.` : `Closes of league days ${first} to ${fresh.day}.`)]);
      chartBox.dataset.points = String(points.length);
    } catch (error) {
      if (ticket === chartRequest) fill(chartBox, failure(error, () => showChart(fresh)));
    }
  }
  show(market);
  showChart(market);
  // A new price is a new league day: its day, its change since day 1 and its chart anew.
  let soon = null;
  context.live.on('quote', (quote) => {
    if (quote.symbol !== stock.symbol || soon) return;
    soon = setTimeout(async () => {
      soon = null;
      try {
        const fresh = await api(`/api/leagues/${leagueId}/market`);
        if (context.current()) { show(fresh); showChart(fresh); }
      } catch { /* the next price tries again */ }
    }, 500);
  });
}

/** What a league's company is: hidden in a blind league until it ends, then its real
 * symbol and name; in a league that is not blind, the company's own description. */
function companyWords(stock, market, company) {
  if (company?.realSymbol && market.blind) {
    return h('p', { id: 'company-real' }, 'Really ', h('strong', {}, company.realSymbol), ` — ${company.realName}, in the period from ${dayText(market.from)} to ${dayText(market.to)}.`);
  }
  if (market.blind) {
    return h('p', { id: 'company-hidden' }, 'A company of a blind market: what it really is, and the period\'s dates, are revealed when the league ends.');
  }
  return [h('p', {}, stock.description || 'No description.'),
    h('p', { class: 'muted' }, [stock.sector, stock.currency].filter(Boolean).join(' · '))];
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
