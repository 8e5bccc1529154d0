// History (#/transactions): a portfolio's trades, or everything that changed it (cash,
// dividends, splits), a page at a time, and its trades as CSV.
import { api, saveDownload } from '../api.js';
import { h, fill, table, cards, failure, signed } from '../dom.js';
import { inCurrency, priceIn, signedInCurrency } from '../decimal.js';
import { chosenPortfolio, currencyOf, placerName, portfolioById, portfolioChoices, shownPortfolioSelect, stockHref } from '../portfolios.js';

const PAGE = 25;

const ACTIVITY = {
  fill: 'Trade', dividend: 'Dividend', split: 'Split', cash_in_lieu: 'Cash in lieu', starting_cash: 'Starting cash',
  reward: 'Reward', adjustment: 'Adjustment', deposit: 'Deposit', withdrawal: 'Withdrawal',
};

const MADE_BY = { trade: 'Trade', order: 'Order', liquidation: 'Forced sale (margin call)' };

/** What made a fill and where its price came from, as the server says (`source`,
 * `pricing`): "Order", or "Trade: quote $33.33 + spread $0.02" where the league's fills
 * add a spread or an impact to the quote (a sale's are taken off it). */
function fillReason(fill, currency) {
  const sign = fill.side === 'buy' ? '+' : '−';
  const parts = [['spread', fill.pricing?.spread], ['impact', fill.pricing?.impact]]
    .filter(([, amount]) => amount && Number(amount) !== 0)
    .map(([name, amount]) => ` ${sign} ${name} ${priceIn(amount, currency)}`);
  const made = MADE_BY[fill.source] ?? fill.source ?? '';
  return parts.length > 0 ? `${made}: quote ${priceIn(fill.pricing.quote, currency)}${parts.join('')}` : made;
}

/** Trades / everything: the two views of the history. */
function viewSwitch(chosen, activity) {
  return h('nav', { class: 'ranges', 'aria-label': 'History view' },
    h('a', { href: `#/transactions?id=${chosen}`, 'aria-current': activity ? null : 'page', class: 'button' }, 'Trades'),
    h('a', { href: `#/transactions?id=${chosen}&view=activity`, 'aria-current': activity ? 'page' : null, class: 'button', id: 'view-activity' },
      'Everything: cash, dividends, splits'));
}

/** Every change to a portfolio: trades, dividends, splits, rewards, starting cash. */
async function activityView(root, context, portfolios, chosen) {
  const currency = currencyOf(portfolios, chosen);
  const before = context.query.get('before');
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (chosen) query.set('portfolioId', chosen);
  if (before) query.set('before', before);
  const page = await api(`/api/activities?${query}`);
  if (!context.current()) return;
  fill(root,
    h('div', { class: 'heading' }, h('h1', {}, 'History'),
      portfolios.length > 1 ? h('label', { class: 'inline' }, 'Portfolio ',
        shownPortfolioSelect(portfolios, chosen, (id) => context.navigate(`#/transactions?id=${id}&view=activity`), 'history-portfolio')) : null),
    viewSwitch(chosen, true),
    h('div', { id: 'activities' }, cards(table([
      { title: 'When', cell: (a) => new Date(a.at).toLocaleString() },
      { title: 'What', cell: (a) => (a.type === 'fill' ? `${a.side === 'buy' ? 'Bought' : 'Sold'}` : ACTIVITY[a.type] ?? a.type) },
      { title: 'Stock', cell: (a) => (a.symbol ? h('a', { href: stockHref(a.symbol, portfolioById(portfolios, chosen)) }, a.symbol) : '') },
      { title: 'Shares', class: 'num', cell: (a) => (a.quantity === null ? '' : String(a.quantity)) },
      { title: 'Cash', class: 'num', cell: (a) => (a.amount === null ? '' : signed(a.amount, signedInCurrency(a.amount, currency))) },
      { title: 'Note', cell: (a) => a.note ?? (a.type === 'fill'
        ? `${a.quantity} at ${priceIn(a.price, currency)}, fee ${inCurrency(a.fee, currency)}; ${fillReason(a, currency)}` : '') },
    ], page.items, { empty: 'Nothing yet.', caption: 'Everything that changed the portfolio, newest first' }))),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      before ? h('a', { href: `#/transactions?id=${chosen}&view=activity` }, '← Newest') : null,
      page.nextBefore ? h('a', { href: `#/transactions?id=${chosen}&view=activity&before=${encodeURIComponent(page.nextBefore)}` }, 'Older →') : null));
}

export async function transactionsView(root, context) {
  const portfolios = await portfolioChoices();
  const chosen = chosenPortfolio(portfolios, context.query.get('id'));
  if (context.query.get('view') === 'activity') return activityView(root, context, portfolios, chosen);
  const currency = currencyOf(portfolios, chosen);
  // A team's portfolio: each trade says which member placed it.
  const shown = portfolioById(portfolios, chosen);
  const before = context.query.get('before');
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (chosen) query.set('portfolioId', chosen);
  if (before) query.set('before', before);
  const page = await api(`/api/transactions?${query}`);
  if (!context.current()) return;

  const status = h('p', { class: 'muted', role: 'status' });
  async function download() {
    status.textContent = 'Preparing the CSV…';
    try {
      const name = await saveDownload(`/api/transactions.csv${chosen ? `?portfolioId=${encodeURIComponent(chosen)}` : ''}`, 'transactions.csv');
      status.textContent = `Downloaded ${name}.`;
    } catch (error) {
      fill(status, failure(error));
    }
  }

  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, 'History'),
      h('div', { class: 'actions' },
        portfolios.length > 1 ? h('label', { class: 'inline' }, 'Portfolio ',
          shownPortfolioSelect(portfolios, chosen, (id) => context.navigate(`#/transactions?id=${id}`), 'history-portfolio')) : null,
        h('button', { type: 'button', id: 'download-csv', onclick: download }, 'Download CSV'))),
    viewSwitch(chosen, false),
    shown?.team ? h('p', { class: 'hint', id: 'team-history' },
      `The team “${shown.team.name}” trades this portfolio together: each trade says who placed it.`) : null,
    status,
    cards(table([
      { title: 'When', cell: (t) => new Date(t.createdAt).toLocaleString() },
      { title: 'Side', cell: (t) => h('span', { class: t.side === 'buy' ? 'buy' : 'sell' }, t.side === 'buy' ? 'Buy' : 'Sell') },
      { title: 'Stock', cell: (t) => h('a', { href: stockHref(t.symbol, shown) }, t.symbol) },
      { title: 'Shares', class: 'num', cell: (t) => String(t.quantity) },
      { title: 'Price', class: 'num', cell: (t) => priceIn(t.price, currency) },
      { title: 'Amount', class: 'num', cell: (t) => inCurrency(t.amount, currency) },
      { title: 'Fee', class: 'num', cell: (t) => inCurrency(t.fee, currency) },
      { title: 'How', class: 'reason', cell: (t) => fillReason(t, currency) },
      shown?.team ? { title: 'Placed by', class: 'placed-by', cell: (t) => placerName(shown, t.placedBy) } : null,
    ].filter(Boolean), page.items, { empty: before ? 'No older trades.' : 'No trades yet.', caption: 'Trades, newest first' })),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      before ? h('a', { href: `#/transactions?id=${chosen}` }, '← Newest') : null,
      page.nextBefore ? h('a', { href: `#/transactions?id=${chosen}&before=${page.nextBefore}`, id: 'older' }, 'Older →') : null));
}
