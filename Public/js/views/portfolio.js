// The portfolio page (#/portfolio): one of the player's portfolios, its net worth, cash,
// buying power and holdings (valued again by the server as prices move), its allocation,
// and the practice portfolios' section (js/views/practice.js).
import { api, session } from '../api.js';
import { h, fill, table, signed, stacked } from '../dom.js';
import { priceIn, inCurrency, signedInCurrency } from '../decimal.js';
import { doughnutChart } from '../charts.js';
import { quoteCell } from '../live.js';
import {
  chosenPortfolio, portfolioById, portfolioChoices, replacePortfolio, scenarioOf, shownPortfolioSelect, stockHref, VIEWER_WORDS,
} from '../portfolios.js';
import { practiceSection } from './practice.js';

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

/** A note when the portfolio asked for (`?id=`) is no longer the player's to show: a
 * league portfolio is archived when it is reset, and goes with its league. */
function goneNote(asked, portfolios) {
  if (!asked || portfolioById(portfolios, asked)) return null;
  return h('p', { class: 'muted', id: 'portfolio-gone' },
    'That portfolio is no longer listed: a league portfolio is archived when it is reset, and goes when its league is deleted. Here is another of yours.');
}

/** A team's portfolio: whose it is, the player's part in it and their teammates. */
function teamNote(portfolio, portfolios) {
  const team = portfolioById(portfolios, portfolio.id)?.team;
  if (!team) return null;
  const others = team.members.filter((m) => m.userId !== session.user?.id).map((m) => `${m.username} (${m.role})`);
  const mates = others.length > 0 ? ` Its other members: ${others.join(', ')}.` : '';
  if (team.role === 'viewer') {
    return h('p', { class: 'notice', id: 'team-portfolio' }, `The team “${team.name}” in “${team.leagueName ?? portfolio.name}”. ${VIEWER_WORDS}${mates}`);
  }
  return h('p', { class: 'hint', id: 'team-portfolio' },
    `The team “${team.name}” in “${team.leagueName ?? portfolio.name}”: ${team.role === 'trader' ? 'you trade it with its other traders' : 'its traders trade it'}.${mates}`);
}

export async function portfolioView(root, context) {
  const portfolios = await portfolioChoices();
  const asked = context.query.get('id');
  const chosen = chosenPortfolio(portfolios, asked);
  const portfolio = await api(`/api/portfolio${chosen ? `?portfolioId=${encodeURIComponent(chosen)}` : ''}`);
  if (!context.current()) return;
  const holdings = portfolio.holdings;
  // The doughnut shows what the portfolio owns; short positions (negative) are in the table.
  const longs = holdings.filter((x) => x.quantity > 0);
  // A scenario league's portfolio holds its own market's symbols: their quotes are its.
  const listed = portfolioById(portfolios, portfolio.id);
  const scenario = scenarioOf(listed);
  context.live.follow({ quotes: holdings.map((x) => x.symbol), quoteLeague: scenario });
  // A fill changes cash and holdings: draw the portfolio again.
  context.live.on('order', (order) => {
    if (order.status === 'filled' && context.current()) portfolioView(root, context).catch(() => {});
  });
  // A notification may say this league portfolio was reset (or its league deleted): the
  // portfolios are read again, and the league's new portfolio, if any, is shown instead.
  context.live.on('notification', async () => {
    try {
      const fresh = await portfolioChoices();
      if (!context.current() || portfolioById(fresh, portfolio.id)) return;
      const leagueId = portfolioById(portfolios, portfolio.id)?.leagueId;
      const successor = leagueId ? fresh.find((p) => p.leagueId === leagueId) : null;
      if (successor) {
        replacePortfolio(portfolio.id, successor.id);
        context.flash(`Your league portfolio “${successor.name}” was reset: here is the new one.`, 'info', true);
        context.navigate(`#/portfolio?id=${successor.id}`);
      } else context.navigate('#/portfolio');
    } catch { /* the next notification tries again */ }
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
        ? h('label', { class: 'inline' }, 'Showing ', shownPortfolioSelect(portfolios, portfolio.id, (id) => context.navigate(`#/portfolio?id=${id}`)))
        : null),
    goneNote(asked, portfolios),
    teamNote(portfolio, portfolios),
    scenario == null ? null : h('p', { class: 'hint', id: 'portfolio-scenario' },
      'This league trades a market of its own, a replayed period: its prices move when a league day passes. ',
      h('a', { href: `#/leagues/${scenario}` }, 'The league\'s market')),
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
          { title: 'Stock', cell: (x) => h('a', { href: stockHref(x.symbol, listed, portfolio.id) }, h('strong', {}, x.symbol), ' ', h('span', { class: 'muted' }, x.name)) },
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
