// Analytics: a portfolio's value over time with what was paid in, its returns against a
// benchmark, its risk figures, P&L by cost method, allocation now or at a date, and
// symbols compared.
import { api } from '../api.js';
import { h, fill, table, stacked, failure, signed, benchmarkWords } from '../dom.js';
import { add, CURRENCIES, inCurrency, fractionPercent, magnitudePercent as magnitude, priceIn, ratio, signedInCurrency } from '../decimal.js';
import { linesChart, doughnutChart } from '../charts.js';
import { chosenPortfolio, portfolioById, portfolioChoices, shownPortfolioSelect, stockHref } from '../portfolios.js';

const METHODS = { average: 'Average cost', fifo: 'FIFO', lifo: 'LIFO' };

/** Each section loads on its own, so one that fails (no exchange rate yet) leaves the rest. */
function section(title, id, load) {
  const body = h('div', { class: 'loading', role: 'status' }, 'Loading…');
  load().then((content) => fill(body, content), (error) => fill(body, failure(error)))
    .finally(() => body.classList.remove('loading'));
  return h('section', { id, class: 'card analytics' }, h('h2', {}, title), body);
}

function valueSection(id, currency) {
  return section('Value over time', 'value-history', async () => {
    const history = await api(`/api/portfolios/${id}/history?currency=${currency}`);
    const points = history.points;
    if (points.length === 0) return h('p', { class: 'empty' }, 'No history yet.');
    // Money paid in to date, exactly: the server sends each point's inflow since the one
    // before (the first counts from the portfolio's start), not the total.
    let paidIn = '0';
    const paid = points.map((p) => { paidIn = add(paidIn, p.netInflow); return paidIn; });
    const last = points[points.length - 1];
    return [
      h('p', {}, 'Net worth ', h('strong', { id: 'history-worth' }, inCurrency(last.netWorth, history.currency)),
        ` on ${last.date}; paid in `, h('strong', { id: 'history-paid' }, inCurrency(paid[paid.length - 1], history.currency)), '.'),
      linesChart(`Net worth and money paid in (${history.currency})`, points.map((p) => p.date),
        [{ label: 'Net worth', values: points.map((p) => p.netWorth) }, { label: 'Paid in', values: paid, stepped: true }]),
    ];
  });
}

function returnsSection(id, currency, benchmark) {
  // The benchmark box stays whatever the answer: a symbol the market does not trade is
  // said under it, with what can be compared instead.
  const form = h('form', { class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    const chosen = event.target.elements.benchmark.value.trim() || 'market';
    window.location.hash = `#/analytics?id=${id}&currency=${currency}&benchmark=${encodeURIComponent(chosen)}`;
  } }, h('label', {}, 'Benchmark ', h('input', { name: 'benchmark', id: 'benchmark', value: benchmark, size: 8 })),
  h('button', { type: 'submit' }, 'Compare'));
  const loaded = section('Returns', 'returns', async () => {
    let figures;
    try {
      figures = await api(`/api/portfolios/${id}/performance?currency=${currency}&benchmark=${encodeURIComponent(benchmark)}`);
    } catch (error) {
      if (error.status !== 404) throw error;
      return h('p', { class: 'error', id: 'benchmark-unknown', role: 'alert' },
        `${benchmark.toUpperCase()} is not traded in this market. Compare with “market” (all its stocks, equal-weighted) or one of its symbols.`);
    }
    const row = (label, value, key) => h('tr', {}, h('th', { scope: 'row' }, label), h('td', { class: 'num', id: key }, signed(value, fractionPercent(value))));
    return [
      h('p', { class: 'muted' }, figures.from ? `From ${figures.from} to ${figures.to}, in ${figures.currency}.` : 'No range yet.'),
      h('table', {}, h('tbody', {},
        row('Time-weighted return', figures.twr, 'twr'),
        row('Money-weighted return (IRR)', figures.irr, 'irr'),
        figures.benchmark ? row(`Benchmark: ${benchmarkWords(figures.benchmark.symbol)}`, figures.benchmark.twr, 'benchmark-twr') : null)),
    ];
  });
  loaded.append(form);
  return loaded;
}

/** The server's risk figures over the portfolio's life, against the same benchmark as the returns. */
function riskSection(id, benchmark) {
  return section('Risk', 'risk', async () => {
    let risk;
    try {
      risk = await api(`/api/portfolios/${id}/risk?benchmark=${encodeURIComponent(benchmark)}`);
    } catch (error) {
      if (error.status !== 404) throw error;
      risk = await api(`/api/portfolios/${id}/risk`);
    }
    if (risk.days < 2) return h('p', { class: 'empty', id: 'risk-none' }, 'Risk figures need at least two days of returns.');
    const row = (label, shown, key, hint) => h('tr', {}, h('th', { scope: 'row' }, label, hint ? h('span', { class: 'hint' }, ` ${hint}`) : null),
      h('td', { class: 'num', id: key }, shown));
    return [
      h('p', { class: 'muted' }, `From ${risk.from} to ${risk.to}: ${risk.days} daily returns, against ${benchmarkWords(risk.benchmark)}.`),
      h('table', {}, h('tbody', {},
        row('Volatility', magnitude(risk.volatility), 'risk-volatility', '(a year)'),
        row('Sharpe ratio', ratio(risk.sharpe), 'risk-sharpe'),
        row('Sortino ratio', ratio(risk.sortino), 'risk-sortino'),
        row('Maximum drawdown', magnitude(risk.maxDrawdown), 'risk-drawdown'),
        row('Beta', ratio(risk.beta), 'risk-beta'),
        row('Excess return', signed(risk.excessReturn, fractionPercent(risk.excessReturn)), 'risk-excess'))),
    ];
  });
}

function pnlSection(id, method, query, portfolio) {
  return section('Profit and loss', 'pnl', async () => {
    const pnl = await api(`/api/portfolios/${id}/pnl?method=${method}`);
    return [
      h('nav', { class: 'ranges', 'aria-label': 'Cost method' }, Object.entries(METHODS).map(([key, label]) =>
        h('a', { href: `#/analytics?${query({ method: key })}`, class: 'button', id: `method-${key}`,
          'aria-current': key === method ? 'page' : null }, label))),
      h('p', {}, 'Realized ', h('strong', { id: 'pnl-realized' }, signed(pnl.realized, signedInCurrency(pnl.realized, pnl.currency))),
        ', unrealized ', h('strong', { id: 'pnl-unrealized' }, signed(pnl.unrealized, signedInCurrency(pnl.unrealized, pnl.currency))),
        `, dividends ${inCurrency(pnl.dividends, pnl.currency)}, fees ${inCurrency(pnl.fees, pnl.currency)}.`),
      stacked(table([
        { title: 'Stock', cell: (r) => h('a', { href: stockHref(r.symbol, portfolio) }, r.symbol) },
        { title: 'Shares', class: 'num', cell: (r) => String(r.quantity) },
        { title: 'Cost basis', class: 'num', cell: (r) => inCurrency(r.costBasis, pnl.currency) },
        { title: 'Realized', class: 'num', cell: (r) => signed(r.realized, signedInCurrency(r.realized, pnl.currency)) },
        { title: 'Unrealized', class: 'num', cell: (r) => signed(r.unrealized, signedInCurrency(r.unrealized, pnl.currency)) },
      ], pnl.holdings, { empty: 'No trades yet.', caption: `Gains by ${METHODS[method]} (in ${pnl.currency})` })),
    ];
  });
}

function allocationSection(id, date, query, currency) {
  return section('Allocation', 'allocation', async () => {
    const composition = await api(`/api/portfolios/${id}/composition?currency=${currency}${date ? `&date=${date}` : ''}`);
    const shown = (text) => inCurrency(text, composition.currency);
    const weight = (w) => (w === null ? '—' : fractionPercent(w).replace('+', ''));
    return [
      h('form', { class: 'inline', onsubmit: (event) => {
        event.preventDefault();
        window.location.hash = `#/analytics?${query({ date: event.target.elements.date.value })}`;
      } }, h('label', {}, 'At the end of ', h('input', { type: 'date', name: 'date', id: 'allocation-date', value: date ?? '' })),
        h('button', { type: 'submit' }, 'Show'), date ? h('a', { href: `#/analytics?${query({ date: '' })}` }, ' Now') : null),
      h('p', { class: 'muted' }, `${composition.date ? `On ${composition.date}` : 'Now'}: holdings ${shown(composition.holdingsValue)}, cash ${shown(composition.cash)}.`),
      composition.bySymbol.length === 0 ? h('p', { class: 'empty' }, 'Nothing held.') : h('div', { class: 'split' },
        doughnutChart('By sector', composition.bySector.map((s) => s.sector), composition.bySector.map((s) => s.value)),
        h('div', {},
          table([{ title: 'Sector', cell: (s) => s.sector }, { title: 'Value', class: 'num', cell: (s) => shown(s.value) },
            { title: 'Weight', class: 'num', cell: (s) => weight(s.weight) }], composition.bySector, { caption: 'By sector' }),
          h('div', { id: 'allocation-symbols' }, stacked(table([{ title: 'Stock', cell: (p) => p.symbol }, { title: 'Shares', class: 'num', cell: (p) => String(p.quantity) },
            { title: 'Price', class: 'num', cell: (p) => priceIn(p.price, composition.currency) },
            { title: 'Value', class: 'num', cell: (p) => shown(p.value) },
            { title: 'Weight', class: 'num', cell: (p) => weight(p.weight) }], composition.bySymbol, { caption: 'By stock' }))))),
    ];
  });
}

/** A coefficient's cell, shaded from red (−1) through white to green (+1). */
function heat(value) {
  if (value === null) return h('td', { class: 'num' }, '—');
  const v = Number(value);
  const color = v >= 0 ? `rgba(22, 163, 74, ${v * 0.6})` : `rgba(220, 38, 38, ${-v * 0.6})`;
  return h('td', { class: 'num heat', style: `background:${color}` }, value);
}

function compareSection(symbols, query) {
  return section('Compare stocks', 'compare', async () => {
    const form = h('form', { class: 'inline', onsubmit: (event) => {
      event.preventDefault();
      window.location.hash = `#/analytics?${query({ symbols: event.target.elements.symbols.value.replace(/\s+/g, '') })}`;
    } }, h('label', {}, 'Symbols ', h('input', { name: 'symbols', id: 'compare-symbols', value: symbols, size: 24 })),
      h('button', { type: 'submit' }, 'Compare'));
    const list = symbols.split(',').filter(Boolean);
    if (list.length < 2) return [form, h('p', { class: 'muted' }, 'Name two or more symbols, comma-separated.')];
    const [correlation, compared] = await Promise.all([
      api(`/api/analytics/correlation?symbols=${encodeURIComponent(symbols)}`), api(`/api/analytics/compare?symbols=${encodeURIComponent(symbols)}`),
    ]);
    const days = compared.series[0]?.points.map((p) => p.date) ?? [];
    return [
      form,
      h('p', { class: 'muted' }, `${correlation.from} to ${correlation.to}: total return, dividends reinvested, each rebased to 100.`),
      linesChart('Rebased to 100', days, compared.series.map((s) => {
        const byDay = new Map(s.points.map((p) => [p.date, p.value]));
        return { label: s.symbol, values: days.map((d) => byDay.get(d) ?? null) };
      })),
      h('div', { class: 'table-scroll' }, h('table', { id: 'correlation' },
        h('caption', {}, `Correlation of daily returns (${correlation.observations} days)`),
        h('thead', {}, h('tr', {}, h('th', {}, ''), correlation.symbols.map((s) => h('th', { scope: 'col', class: 'num' }, s)))),
        h('tbody', {}, correlation.matrix.map((row, i) =>
          h('tr', {}, h('th', { scope: 'row' }, correlation.symbols[i]), row.map(heat)))))),
    ];
  });
}

export async function analyticsView(root, context) {
  const portfolios = await portfolioChoices();
  if (!context.current()) return;
  const q = context.query;
  const id = chosenPortfolio(portfolios, q.get('id'));
  const base = portfolioById(portfolios, id)?.baseCurrency ?? 'USD';
  const offered = CURRENCIES.includes(base) ? CURRENCIES : [...CURRENCIES, base];
  const currency = offered.includes(q.get('currency')) ? q.get('currency') : base;
  const method = METHODS[q.get('method')] ? q.get('method') : 'average';
  const benchmark = q.get('benchmark') || 'market';
  const date = q.get('date') || null;
  const symbols = q.get('symbols') || 'AAPL,MSFT,KO';
  /** This page's query with some parameters changed. */
  const query = (changes) => {
    const next = new URLSearchParams({ id, currency, method, benchmark, symbols, ...(date ? { date } : {}) });
    for (const [key, value] of Object.entries(changes)) { if (value) next.set(key, value); else next.delete(key); }
    return next.toString();
  };
  fill(root,
    h('div', { class: 'heading' }, h('h1', {}, 'Analytics'),
      portfolios.length > 1 ? h('label', { class: 'inline' }, 'Portfolio ',
        shownPortfolioSelect(portfolios, id, (chosen) => context.navigate(`#/analytics?${query({ id: chosen })}`), 'analytics-portfolio')) : null,
      h('label', { class: 'inline' }, 'Currency ', h('select', { id: 'analytics-currency',
        onchange: (event) => context.navigate(`#/analytics?${query({ currency: event.target.value })}`) },
        offered.map((c) => h('option', { value: c, selected: c === currency }, c))))),
    valueSection(id, currency),
    returnsSection(id, currency, benchmark),
    riskSection(id, benchmark),
    pnlSection(id, method, query, portfolioById(portfolios, id)),
    allocationSection(id, date, query, currency),
    compareSection(symbols, query));
}
