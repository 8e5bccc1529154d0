import { api } from '../api.js';
import { h, fill, table, failure } from '../dom.js';
import { money, price } from '../decimal.js';
import { portfolioSelect } from './portfolio.js';

const PAGE = 25;

export async function transactionsView(root, context) {
  const portfolios = await api('/api/portfolios');
  const chosen = context.query.get('id') || String(portfolios[0]?.id ?? '');
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
      const response = await api(`/api/transactions.csv${chosen ? `?portfolioId=${encodeURIComponent(chosen)}` : ''}`, { raw: true, headers: { Accept: 'text/csv' } });
      const url = URL.createObjectURL(await response.blob());
      const link = h('a', { href: url, download: 'transactions.csv' });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      status.textContent = 'Downloaded transactions.csv.';
    } catch (error) {
      fill(status, failure(error));
    }
  }

  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, 'History'),
      h('div', { class: 'actions' },
        portfolios.length > 1 ? h('label', { class: 'inline' }, 'Portfolio ',
          portfolioSelect(portfolios, chosen, (id) => context.navigate(`#/transactions?id=${id}`), 'history-portfolio')) : null,
        h('button', { type: 'button', id: 'download-csv', onclick: download }, 'Download CSV'))),
    status,
    table([
      { title: 'When', cell: (t) => new Date(t.createdAt).toLocaleString() },
      { title: 'Side', cell: (t) => h('span', { class: t.side === 'buy' ? 'buy' : 'sell' }, t.side === 'buy' ? 'Buy' : 'Sell') },
      { title: 'Stock', cell: (t) => h('a', { href: `#/stock/${t.symbol}` }, t.symbol) },
      { title: 'Shares', class: 'num', cell: (t) => String(t.quantity) },
      { title: 'Price', class: 'num', cell: (t) => price(t.price) },
      { title: 'Amount', class: 'num', cell: (t) => money(t.amount) },
      { title: 'Fee', class: 'num', cell: (t) => money(t.fee) },
    ], page.items, { empty: before ? 'No older trades.' : 'No trades yet.', caption: 'Trades, newest first' }),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      before ? h('a', { href: `#/transactions?id=${chosen}` }, '← Newest') : null,
      page.nextBefore ? h('a', { href: `#/transactions?id=${chosen}&before=${page.nextBefore}`, id: 'older' }, 'Older →') : null));
}
