// Currencies: the rates now against a base, a converter (now, or at the ECB's reference
// rates of a day) and a pair's chart.
import { api } from '../api.js';
import { h, fill, table, failure } from '../dom.js';
import { lineChart } from '../charts.js';
import { CURRENCIES, formatMoney } from '../decimal.js';

const RANGES = ['1m', '3m', '6m', '1y', '5y', 'max'];

export async function fxView(root, context) {
  const q = context.query;
  const base = (q.get('base') || 'EUR').toUpperCase();
  const pair = (q.get('pair') || 'EURUSD').toUpperCase();
  const range = RANGES.includes(q.get('range')) ? q.get('range') : '1y';
  const [rates, chart] = await Promise.all([
    api(`/api/fx/rates?base=${encodeURIComponent(base)}`),
    api(`/api/fx/${encodeURIComponent(pair)}/chart?range=${range}`),
  ]);
  if (!context.current()) return;
  // The currencies the ECB no longer publishes (the server says which) are listed apart.
  const stopped = rates.discontinued || {};
  const current = Object.entries(rates.rates).filter(([c]) => !(c in stopped)).sort(([a], [b]) => a.localeCompare(b));
  const gone = Object.entries(stopped).filter(([c]) => c in rates.rates)
    .map(([currency, day]) => ({ currency, day, rate: rates.rates[currency] })).sort((a, b) => a.currency.localeCompare(b.currency));
  const baseGone = stopped[base] ? { day: stopped[base] } : null;
  const go = (changes) => context.navigate(`#/fx?${new URLSearchParams({ base, pair, range, ...changes })}`);

  const result = h('p', { id: 'fx-result', role: 'status' });
  async function convert(event) {
    event.preventDefault();
    const form = event.target.elements;
    const query = new URLSearchParams({ from: form.from.value, to: form.to.value, amount: form.amount.value.trim() });
    if (form.date.value) query.set('date', form.date.value);
    try {
      const c = await api(`/api/fx/convert?${query}`);
      const when = c.asOf ? `the rate now, set ${new Date(c.asOf).toLocaleString()}` : `the reference rates of ${c.date}`;
      const written = (amount, currency) => formatMoney(amount, currency, { code: true });
      fill(result, h('strong', {}, `${written(c.amount, c.from)} = ${written(c.result, c.to)}`), ` at ${c.rate} (${when})`);
    } catch (error) {
      fill(result, failure(error));
    }
  }
  const currencyOptions = (chosen) => [...new Set([...CURRENCIES, ...Object.keys(rates.rates), base])].sort()
    .map((c) => h('option', { value: c, selected: c === chosen }, c));

  fill(root,
    h('div', { class: 'heading' }, h('h1', {}, 'Currencies'),
      h('label', { class: 'inline' }, 'Base ', h('select', { id: 'fx-base', onchange: (event) => go({ base: event.target.value }) },
        currencyOptions(base)))),
    h('form', { class: 'card', id: 'fx-convert', onsubmit: convert },
      h('h2', {}, 'Convert'),
      h('label', {}, 'Amount ', h('input', { name: 'amount', id: 'fx-amount', value: '100', inputmode: 'decimal', required: true })),
      h('label', {}, 'From ', h('select', { name: 'from', id: 'fx-from' }, currencyOptions('USD'))),
      h('label', {}, 'To ', h('select', { name: 'to', id: 'fx-to' }, currencyOptions('EUR'))),
      h('label', {}, 'On ', h('input', { type: 'date', name: 'date', id: 'fx-date' })),
      h('button', { type: 'submit', id: 'fx-convert-button' }, 'Convert'),
      result),
    h('section', { class: 'card', id: 'fx-chart' },
      h('h2', {}, `${pair.slice(0, 3)} in ${pair.slice(3)}`),
      h('form', { class: 'inline', onsubmit: (event) => { event.preventDefault(); go({ pair: event.target.elements.pair.value.trim() }); } },
        h('label', {}, 'Pair ', h('input', { name: 'pair', id: 'fx-pair', value: pair, size: 7 })), h('button', { type: 'submit' }, 'Show')),
      h('nav', { class: 'ranges', 'aria-label': 'Range' }, RANGES.map((r) =>
        h('a', { href: `#/fx?${new URLSearchParams({ base, pair, range: r })}`, class: 'button', 'aria-current': r === range ? 'page' : null }, r))),
      chart.points.length ? lineChart(`${pair} rate`, chart.points.map((p) => p.date), chart.points.map((p) => p.rate))
        : h('p', { class: 'empty' }, 'No rates in this range.')),
    h('section', { class: 'card', id: 'fx-rates' },
      h('h2', {}, `1 ${rates.base} in other currencies`),
      h('p', { class: 'muted', id: 'fx-rates-when' }, rates.asOf
        ? `Rates now, set ${new Date(rates.asOf).toLocaleString()} (the market the server plays); a date in the converter gives the European Central Bank's reference rates of that day.`
        : `The European Central Bank's reference rates of ${rates.date}.`),
      baseGone ? h('p', { class: 'hint', id: 'fx-base-gone' },
        `The European Central Bank no longer publishes ${base}: these rates use its last one, of ${baseGone.day}.`) : null,
      table([{ title: 'Currency', cell: (r) => r[0] }, { title: 'Rate', class: 'num', cell: (r) => r[1] }],
        current, { caption: `Units per 1 ${rates.base}` })),
    gone.length > 0 ? h('section', { class: 'card', id: 'fx-discontinued' },
      h('h2', {}, 'No longer published'),
      h('p', { class: 'muted' }, 'The European Central Bank stopped publishing these currencies: their last rates.'),
      table([{ title: 'Currency', cell: (g) => g.currency }, { title: 'Last rate', class: 'num', cell: (g) => g.rate },
        { title: 'On', cell: (g) => g.day }], gone, { caption: `Units per 1 ${rates.base}` })) : null);
}
