import { api } from '../api.js';
import { h, fill, table, signed } from '../dom.js';
import { price, percent } from '../decimal.js';
import { quoteCell } from '../live.js';

const PAGE = 20;
const sorts = [
  ['symbol', 'A–Z'], ['-symbol', 'Z–A'], ['-price', 'Price, highest'], ['price', 'Price, lowest'],
  ['-change', 'Change, best'], ['change', 'Change, worst'],
];

function moverStrip(title, quotes, id) {
  return h('section', { class: 'strip', id, 'aria-label': title },
    h('h2', {}, title),
    quotes.length === 0 ? h('p', { class: 'empty' }, 'No prices yet today.') :
      h('ul', {}, quotes.map((q) => h('li', {},
        h('a', { href: `#/stock/${q.symbol}` }, h('strong', {}, q.symbol), ' ', price(q.price), ' ',
          signed(q.changePercent, percent(q.changePercent)))))));
}

export async function marketView(root, context) {
  const search = context.query.get('search') || '';
  const sort = context.query.get('sort') || 'symbol';
  const page = Math.max(1, Number.parseInt(context.query.get('page') || '1', 10) || 1);
  const go = (changes) => {
    const next = new URLSearchParams({ search, sort, page: String(page), ...changes });
    if (!next.get('search')) next.delete('search');
    context.navigate(`#/market?${next}`);
  };

  const query = new URLSearchParams({ sort, limit: String(PAGE), offset: String((page - 1) * PAGE) });
  if (search) query.set('search', search);
  const [movers, market] = await Promise.all([api('/api/stock/movers?limit=5'), api(`/api/stock/market?${query}`)]);
  if (!context.current()) return;

  const box = h('input', { type: 'search', id: 'market-search', name: 'search', value: search, placeholder: 'Ticker or company name', 'aria-label': 'Search stocks' });
  const form = h('form', { class: 'toolbar', role: 'search', onsubmit: (event) => { event.preventDefault(); go({ search: box.value.trim(), page: '1' }); } },
    box, h('button', { type: 'submit' }, 'Search'),
    h('label', { class: 'inline' }, 'Sort ',
      h('select', { id: 'market-sort', onchange: (event) => go({ sort: event.target.value, page: '1' }) },
        sorts.map(([value, label]) => h('option', { value, selected: value === sort }, label)))));
  const pages = Math.max(1, Math.ceil(market.total / PAGE));
  context.live.follow({ quotes: market.items.map((q) => q.symbol) });
  fill(root,
    h('h1', {}, 'Market'),
    h('div', { class: 'strips' }, moverStrip("Today's winners", movers.winners, 'winners'), moverStrip("Today's losers", movers.losers, 'losers')),
    form,
    h('p', { class: 'muted', id: 'market-count' }, `${market.total} stock${market.total === 1 ? '' : 's'}${search ? ` matching “${search}”` : ''}`),
    h('div', { class: 'quotes' }, table([
      { title: 'Symbol', cell: (q) => h('a', { href: `#/stock/${q.symbol}`, class: 'symbol' }, q.symbol) },
      { title: 'Company', class: 'company', cell: (q) => q.name },
      { title: 'Price', class: 'num price', cell: (q) => quoteCell(q.symbol, 'price', q) },
      { title: 'Change', class: 'num change', cell: (q) => quoteCell(q.symbol, 'change', q) },
      { title: '%', class: 'num percent', cell: (q) => quoteCell(q.symbol, 'changePercent', q) },
    ], market.items, { empty: 'No stock matches that search.' })),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      h('button', { type: 'button', disabled: page <= 1, onclick: () => go({ page: String(page - 1) }) }, '← Previous'),
      h('span', {}, `Page ${page} of ${pages}`),
      h('button', { type: 'button', id: 'next-page', disabled: page >= pages, onclick: () => go({ page: String(page + 1) }) }, 'Next →')));
}
