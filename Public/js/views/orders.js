// Orders (#/orders): one portfolio's open orders, each with Cancel (and Cancel all), and
// its order history; a fill shows without reloading. Orders are placed from a stock's
// page (js/trading.js).
import { api } from '../api.js';
import { h, fill, table, cards, confirmAction } from '../dom.js';
import { durationText, filledPart, orderOutcome, orderTerms } from '../trading.js';
import {
  chosenPortfolio, currencyOf, placerName, portfolioById, portfolioChoices, shownPortfolioSelect, stockHref, VIEWER_WORDS, watchesOnly,
} from '../portfolios.js';

/** When an order stopped being open: filled, cancelled, expired, replaced or rejected. */
function closedAt(order) {
  return order.filledAt || order.canceledAt || order.expiredAt || order.replacedAt || order.updatedAt;
}

/** Open orders with cancel, and the order history, of one portfolio. Refreshes itself
 * every few seconds while orders are open, so a fill shows without reloading. */
export async function ordersView(root, context) {
  const portfolios = await portfolioChoices();
  // The one asked for, else the one last picked, else a class's league portfolio (a
  // portfolio no longer listed, archived by a reset, is not shown).
  const chosen = chosenPortfolio(portfolios, context.query.get('id'));
  const currency = currencyOf(portfolios, chosen);
  // A team's portfolio: each order says who placed it; a viewer cancels nothing.
  const shown = portfolioById(portfolios, chosen);
  const team = shown?.team;
  const watching = watchesOnly(shown);
  const placedBy = team ? { title: 'Placed by', class: 'placed-by', cell: (o) => placerName(shown, o.placedBy) } : null;
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
          ? h('label', { class: 'inline' }, 'Showing ', shownPortfolioSelect(portfolios, chosen, (id) => context.navigate(`#/orders?id=${id}`)))
          : null,
        open.items.length > 0 && !watching ? h('button', {
          type: 'button', class: 'danger', id: 'cancel-all',
          onclick: () => cancel(`/api/orders${query ? `?${query.slice(1)}` : ''}`, `Cancel all ${open.items.length} open orders?`,
            (answer) => context.flash(`${answer.canceled.length} order${answer.canceled.length === 1 ? '' : 's'} cancelled.`, 'info', true)),
        }, 'Cancel all') : null)),
    team ? h('p', { class: watching ? 'notice' : 'hint', id: 'team-orders' }, watching
      ? `${VIEWER_WORDS} You see its orders; only its traders place or cancel them.`
      : `The team “${team.name}” shares these orders: any of its traders may place or cancel them.`) : null,
    h('section', { id: 'open-orders' },
      h('h2', {}, 'Open orders'),
      cards(table([
        { title: 'Placed', cell: (o) => new Date(o.createdAt).toLocaleString() },
        { title: 'Stock', cell: (o) => h('a', { href: stockHref(o.symbol, shown) }, o.symbol) },
        { title: 'Side', cell: (o) => (o.side === 'buy' ? 'Buy' : 'Sell') },
        { title: 'Shares', class: 'num', cell: (o) => (o.filledQuantity > 0 ? filledPart(o) : String(o.quantity)) },
        { title: 'Terms', cell: (o) => orderTerms(o) },
        { title: 'Lasts', cell: (o) => durationText(o.timeInForce, shown) },
        placedBy,
        watching ? null : { title: '', cell: (o) => h('button', {
          type: 'button', class: 'small', dataset: { cancel: String(o.id) }, 'aria-label': `Cancel order ${o.id}`,
          onclick: () => cancel(`/api/orders/${o.id}`, `Cancel the order to ${o.side} ${o.quantity} ${o.symbol}?`,
            () => context.flash('Order cancelled; its reservation is released.', 'info', true)),
        }, 'Cancel') },
      ].filter(Boolean), open.items, { empty: 'No open orders. Place one from a stock\'s page.' }))),
    h('section', { id: 'order-history' },
      h('h2', {}, 'History'),
      cards(table([
        { title: 'Closed', cell: (o) => new Date(closedAt(o)).toLocaleString() },
        { title: 'Stock', cell: (o) => h('a', { href: stockHref(o.symbol, shown) }, o.symbol) },
        { title: 'Side', cell: (o) => (o.side === 'buy' ? 'Buy' : 'Sell') },
        { title: 'Shares', class: 'num', cell: (o) => String(o.quantity) },
        { title: 'Terms', cell: (o) => orderTerms(o) },
        { title: 'Outcome', cell: (o) => h('span', { class: `status-${o.status}` }, orderOutcome(o, currency)) },
        placedBy,
      ].filter(Boolean), [...closed.items].sort((a, b) => Date.parse(closedAt(b)) - Date.parse(closedAt(a))),
      { empty: 'No orders have closed yet.' }))));

  // Fills arrive on the live stream; without it, open orders are read again every 5 s.
  const redraw = () => { if (context.current()) ordersView(root, context).catch(() => {}); };
  context.live.on('order', redraw);
  if (open.items.length > 0) context.poll(redraw, 5000);
}
