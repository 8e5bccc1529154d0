// Practice portfolios on the portfolio page: create one (starting cash, currency, start
// day), and for the one shown, deposit or withdraw, import or download its trades, or
// delete it.
import { api, upload, newKey, marketHistory, saveDownload } from '../api.js';
import { h, fill, failure, dayText } from '../dom.js';
import { CURRENCIES, money } from '../decimal.js';
import { portfolioById } from '../portfolios.js';

function download(portfolio, status) {
  return async () => {
    status.textContent = 'Preparing the CSV…';
    try {
      const name = await saveDownload(`/api/portfolios/${portfolio.id}/export`, `portfolio-${portfolio.id}-trades.csv`);
      status.textContent = `Downloaded ${name}.`;
    } catch (error) {
      fill(status, failure(error));
    }
  };
}

export function practiceSection(portfolios, shown, context) {
  const status = h('div', { id: 'practice-status', role: 'status' });
  const current = portfolioById(portfolios, shown.id);
  const report = (error) => fill(status, failure(error));

  // The start day lies within the price history: the picker offers only its days, and a
  // day typed outside it is named in words before anything is sent.
  const start = h('input', { type: 'date', name: 'startedAt', id: 'practice-start' });
  const startHint = h('small', { id: 'practice-start-hint', class: 'muted' });
  let history = null;
  marketHistory().then((span) => {
    history = span;
    if (!span) return;
    start.min = span.from;
    start.max = span.through;
    startHint.textContent = `Prices from ${dayText(span.from)} to ${dayText(span.through)}; left empty, it starts on the first.`;
  }).catch(() => {});

  async function create(event) {
    event.preventDefault();
    const form = event.target.elements;
    const body = { name: form.name.value, startingCash: form.startingCash.value.trim(), currency: form.currency.value };
    if (start.validity.badInput) { fill(status, 'Choose a whole start day, or leave it empty.'); return; }
    if (form.startedAt.value) body.startedAt = form.startedAt.value;
    if (history && body.startedAt && (body.startedAt < history.from || body.startedAt > history.through)) {
      fill(status, `Choose a start day with prices: from ${dayText(history.from)} to ${dayText(history.through)}.`);
      return;
    }
    try {
      const created = await api('/api/portfolios', { method: 'POST', body });
      context.flash(`Practice portfolio “${created.name}” created with ${money(created.cash)}.`, 'info', true);
      context.navigate(`#/portfolio?id=${created.id}`);
    } catch (error) { report(error); }
  }

  async function move(event) {
    event.preventDefault();
    const form = event.target.elements;
    const body = { amount: form.amount.value.trim() };
    if (form.at.value) body.at = form.at.value;
    try {
      const movement = await api(`/api/portfolios/${current.id}/cash`, { method: 'POST', body });
      context.flash(`${movement.kind === 'deposit' ? 'Deposited' : 'Withdrew'} ${money(movement.amount.replace('-', ''))}.`, 'info', true);
      context.navigate(`#/portfolio?id=${current.id}&t=${Date.now()}`);
    } catch (error) { report(error); }
  }

  // A broker's CSV of trades (date,symbol,side,quantity,price,fee): all or nothing; a
  // refusal names the file's bad lines. One Idempotency-Key per chosen file, so a retry of
  // the same file imports it once; the button waits for the answer.
  let importKey = newKey();
  async function importTrades(event) {
    event.preventDefault();
    const file = event.target.elements.file.files[0];
    const button = event.target.querySelector('button[type=submit]');
    if (!file || button.disabled) return;
    button.disabled = true;
    status.textContent = `Importing ${file.name}…`;
    try {
      const answer = await upload(`/api/portfolios/${current.id}/import`, file, 'text/csv', () => {}, 'POST',
        { 'Idempotency-Key': importKey });
      context.flash(`Imported ${answer.imported} trade${answer.imported === 1 ? '' : 's'} from ${file.name}.`, 'info', true);
      context.navigate(`#/portfolio?id=${current.id}&t=${Date.now()}`);
    } catch (error) {
      report(error);
      if (error.line) status.dataset.line = String(error.line);
    } finally {
      button.disabled = false;
    }
  }

  async function remove() {
    if (!window.confirm(`Delete the practice portfolio “${current.name}” and all its history?`)) return;
    try {
      await api(`/api/portfolios/${current.id}`, { method: 'DELETE' });
      context.flash(`Practice portfolio “${current.name}” deleted.`, 'info', true);
      context.navigate('#/portfolio');
    } catch (error) { report(error); }
  }

  return h('section', { class: 'card', id: 'practice' },
    h('h2', {}, 'Practice portfolios'),
    h('p', { class: 'muted' }, 'Your own portfolios to try things out: never ranked in leagues, earning no achievements.'),
    current?.practice ? h('div', { id: 'practice-current' },
      h('form', { class: 'inline', id: 'cash-form', onsubmit: move },
        h('label', {}, 'Deposit (+) or withdraw (−) $', h('input', { name: 'amount', id: 'cash-amount', inputmode: 'decimal', required: true, size: 10 })),
        h('label', {}, 'On ', h('input', { type: 'date', name: 'at', id: 'cash-at' })),
        h('button', { type: 'submit', id: 'cash-submit' }, 'Record')),
      h('form', { class: 'inline', id: 'import-form', onsubmit: importTrades },
        h('label', {}, 'Import trades (CSV: date,symbol,side,quantity,price,fee) ',
          h('input', { type: 'file', name: 'file', id: 'import-file', accept: '.csv,text/csv', required: true, onchange: () => { importKey = newKey(); } })),
        h('button', { type: 'submit', id: 'import-submit' }, 'Import')),
      h('p', {},
        h('button', { type: 'button', id: 'practice-export', onclick: download(current, status) }, 'Download trades (CSV)'), ' ',
        h('button', { type: 'button', id: 'practice-delete', class: 'danger', onclick: remove }, 'Delete this practice portfolio'))) : null,
    status,
    h('h3', {}, 'New practice portfolio'),
    h('form', { class: 'inline', id: 'practice-form', onsubmit: create, novalidate: true },
      h('label', {}, 'Name ', h('input', { name: 'name', id: 'practice-name', required: true, maxlength: 100, size: 16 })),
      h('label', {}, 'Starting cash $', h('input', { name: 'startingCash', id: 'practice-cash', value: '10000', inputmode: 'decimal', size: 10 })),
      h('label', {}, 'Analytics in ', h('select', { name: 'currency', id: 'practice-currency' }, CURRENCIES.map((c) => h('option', { value: c }, c)))),
      h('label', {}, 'Starting on ', start),
      h('button', { type: 'submit', id: 'practice-create' }, 'Create'),
      startHint));
}
