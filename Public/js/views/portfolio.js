import { api } from '../api.js';
import { h, fill, table, signed } from '../dom.js';
import { priceIn, inCurrency, signedInCurrency } from '../decimal.js';
import { doughnutChart } from '../charts.js';
import { quoteCell } from '../live.js';
import { practiceSection } from './practice.js';

/** The portfolio of `id` among `portfolios` (ids compared as text, as URLs carry them). */
export function portfolioById(portfolios, id) {
  return portfolios.find((p) => String(p.id) === String(id));
}

/** The currency a portfolio's amounts are in: a league's own, else dollars. */
export function currencyOf(portfolios, id) {
  return portfolioById(portfolios, id)?.currency ?? 'USD';
}

/** The portfolios' names for a switcher: personal first, then league portfolios. */
export async function portfolioChoices() {
  return api('/api/portfolios');
}

/** Marks a table (from dom.js's table()) to stack each row into a card on a phone, and
 * names every cell after its column so the card can label its figures (app.css, .stacked). */
export function stacked(wrapped) {
  wrapped.classList.add('stacked');
  for (const table of wrapped.querySelectorAll('table')) {
    const titles = [...table.tHead.rows[0].cells].map((cell) => cell.textContent);
    for (const row of table.tBodies[0].rows) {
      [...row.cells].forEach((cell, i) => { cell.dataset.label = titles[i]; });
    }
  }
  return wrapped;
}

/** A practice portfolio kept in dollars but shown in another currency: its worth in that
 * currency at the rate now, converted by the server. */
function baseWorth(portfolio, portfolios) {
  const base = portfolioById(portfolios, portfolio.id)?.baseCurrency;
  if (!base || base === (portfolio.currency || 'USD')) return null;
  const line = h('p', { class: 'muted', id: 'portfolio-base' },
    `Kept in dollars, like the stocks it holds; its analytics are in ${base}.`);
  api(`/api/fx/convert?from=USD&to=${base}&amount=${encodeURIComponent(portfolio.netWorth)}`).then((conversion) => {
    line.textContent = `Kept in dollars, like the stocks it holds: worth ${inCurrency(conversion.result, base)} at the rate now. Its analytics are in ${base}.`;
  }).catch(() => {});
  return line;
}

/** A holding's figure that a new valuation replaces in place. */
function figure(symbol, name, content) {
  return h('span', { dataset: { figure: `${name}:${symbol}` } }, content);
}

function gainText(amount, currency) {
  return signed(amount, signedInCurrency(amount, currency));
}

/** Writes a fresh valuation's figures over the ones shown. */
function showFigures(root, portfolio, money) {
  const set = (selector, content) => { const cell = root.querySelector(selector); if (cell) cell.replaceChildren(content); };
  set('#net-worth', money(portfolio.netWorth));
  set('#holdings-value', money(portfolio.holdingsValue));
  set('#cash', money(portfolio.cash));
  set('#buying-power', money(portfolio.buyingPower));
  const currency = portfolio.currency || 'USD';
  for (const x of portfolio.holdings) {
    const cell = (name) => `[data-figure="${name}:${CSS.escape(x.symbol)}"]`;
    set(cell('price'), priceIn(x.price, currency));
    set(cell('value'), money(x.value));
    set(cell('gain'), gainText(x.unrealizedGain, currency));
    set(cell('today'), gainText(x.dayChange, currency));
  }
}

export function portfolioSelect(portfolios, selected, onchange, id = 'portfolio-select') {
  return h('select', { id, onchange: (event) => onchange(event.target.value) },
    portfolios.map((p) => h('option', { value: p.id, selected: String(p.id) === String(selected) },
      ({ personal: 'Personal portfolio', practice: `Practice: ${p.name}`, league: `League: ${p.name}` })[p.kind])));
}

export async function portfolioView(root, context) {
  const portfolios = await portfolioChoices();
  const chosen = context.query.get('id') || portfolios[0]?.id;
  const portfolio = await api(`/api/portfolio${chosen ? `?portfolioId=${encodeURIComponent(chosen)}` : ''}`);
  if (!context.current()) return;
  const holdings = portfolio.holdings;
  // The doughnut shows what the portfolio owns; short positions (negative) are in the table.
  const longs = holdings.filter((x) => x.quantity > 0);
  context.live.follow({ quotes: holdings.map((x) => x.symbol) });
  // A fill changes cash and holdings: draw the portfolio again.
  context.live.on('order', (order) => {
    if (order.status === 'filled' && context.current()) portfolioView(root, context).catch(() => {});
  });
  // A new price of a holding moves net worth, holdings value and gains: the server values
  // the portfolio again (at most every 1.5 s) and the figures change in place.
  const held = new Set(holdings.map((x) => x.symbol));
  let revalue = null;
  context.live.on('quote', (quote) => {
    if (!held.has(quote.symbol) || revalue) return;
    revalue = setTimeout(async () => {
      try {
        const fresh = await api(`/api/portfolio?portfolioId=${encodeURIComponent(portfolio.id)}`);
        if (context.current()) showFigures(root, fresh, money);
      } catch { /* the next price tries again */ }
      revalue = null;
    }, 1500);
  });
  // Amounts are in the portfolio's currency: a league's own, else dollars (whose prices
  // the live stream moves in place).
  const currency = portfolio.currency || 'USD';
  const money = (text) => inCurrency(text, currency);
  const inDollars = currency === 'USD';
  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, 'Portfolio'),
      portfolios.length > 1
        ? h('label', { class: 'inline' }, 'Showing ', portfolioSelect(portfolios, portfolio.id, (id) => context.navigate(`#/portfolio?id=${id}`)))
        : null),
    inDollars ? null : h('p', { class: 'muted', id: 'portfolio-currency' },
      `This league portfolio holds ${currency}: dollar prices are shown at the rate now, and each fill pays the league's spread.`),
    baseWorth(portfolio, portfolios),
    h('section', { class: 'summary', 'aria-label': 'Summary' },
      h('div', {}, h('span', { class: 'label' }, 'Net worth'), h('strong', { id: 'net-worth' }, money(portfolio.netWorth))),
      h('div', {}, h('span', { class: 'label' }, 'Cash'), h('strong', { id: 'cash' }, money(portfolio.cash))),
      h('div', {}, h('span', { class: 'label' }, 'Buying power'), h('strong', { id: 'buying-power' }, money(portfolio.buyingPower)),
        portfolio.reserved !== '0.00' ? h('a', { class: 'hint', id: 'reserved', href: `#/orders?id=${portfolio.id}` }, `${money(portfolio.reserved)} held for open orders`) : null),
      h('div', {}, h('span', { class: 'label' }, 'Holdings'), h('strong', { id: 'holdings-value' }, money(portfolio.holdingsValue)))),
    h('div', { class: 'columns' },
      h('section', { class: 'grow' },
        h('h2', {}, 'Holdings'),
        stacked(table([
          { title: 'Stock', cell: (x) => h('a', { href: `#/stock/${x.symbol}?portfolio=${portfolio.id}` }, h('strong', {}, x.symbol), ' ', h('span', { class: 'muted' }, x.name)) },
          { title: 'Shares', class: 'num', cell: (x) => String(x.quantity) },
          { title: 'Price', class: 'num', cell: (x) => inDollars ? quoteCell(x.symbol, 'price', x) : figure(x.symbol, 'price', priceIn(x.price, currency)) },
          { title: 'Value', class: 'num', cell: (x) => inDollars ? quoteCell(x.symbol, 'value', x, x.quantity) : figure(x.symbol, 'value', money(x.value)) },
          { title: 'Avg cost', class: 'num', cell: (x) => priceIn(x.averageCost, currency) },
          { title: 'Gain', class: 'num', cell: (x) => figure(x.symbol, 'gain', gainText(x.unrealizedGain, currency)) },
          { title: 'Today', class: 'num', cell: (x) => figure(x.symbol, 'today', gainText(x.dayChange, currency)) },
        ], holdings, { empty: h('span', {}, 'No shares yet. ', h('a', { href: '#/market' }, 'Find a stock to buy')) }))),
      longs.length > 0
        ? h('section', { class: 'side' }, h('h2', {}, 'Allocation'),
          doughnutChart('Allocation of the portfolio', ['Cash', ...longs.map((x) => x.symbol)], [portfolio.cash, ...longs.map((x) => x.value)]))
        : null),
    practiceSection(portfolios, portfolio, context));
}
