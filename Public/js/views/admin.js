import { api, upload } from '../api.js';
import { h, fill, onSubmit, amountProblem, count } from '../dom.js';
import { auditLog, AUDIT_ACTIONS, AUDIT_PAGE } from '../audit.js';

/**
 * Shows an upload's refusal in the server's words. A refusal about one line of the file
 * carries that line as `line` (the server reads the CSV, and counts lines as an editor
 * does); it is kept on the box for styling and tests.
 */
function refuse(box, error) {
  show(box, error.message, 'error');
  if (error.line) box.dataset.line = String(error.line);
}

function result(id) {
  return h('p', { id, role: 'status', 'aria-live': 'polite' });
}

function show(box, text, kind = 'info') {
  box.className = kind;
  box.textContent = text;
  delete box.dataset.line;
}

export async function adminView(root, context) {
  if (context.user?.role !== 'admin') {
    fill(root, h('h1', {}, 'Admin'), h('p', { class: 'error' }, 'This page is for admins.'));
    return;
  }

  const instrumentsFile = h('input', { type: 'file', id: 'instruments-file', accept: '.csv,text/csv' });
  const instrumentsResult = result('instruments-result');
  const instruments = h('form', { class: 'card', id: 'instruments-form' },
    h('h2', {}, 'Instruments'),
    h('p', { class: 'hint' }, 'CSV with a header: symbol, name, and optionally sector, description, currency.'),
    h('label', { for: 'instruments-file' }, 'CSV file'), instrumentsFile, instrumentsResult,
    h('button', { type: 'submit' }, 'Upload instruments'));
  onSubmit(instruments, async () => {
    const file = instrumentsFile.files[0];
    if (!file) { show(instrumentsResult, 'Choose a file first.', 'error'); return; }
    show(instrumentsResult, 'Uploading…');
    const answer = await upload('/api/admin/instruments', file, 'text/csv', () => {}, 'PUT');
    show(instrumentsResult, `${count(answer.upserted, 'instrument')} saved.`);
  }, (error) => refuse(instrumentsResult, error));

  const pricesFile = h('input', { type: 'file', id: 'prices-file', accept: '.csv,text/csv' });
  const progress = h('progress', { max: 1, value: 0, hidden: true, 'aria-label': 'Upload progress' });
  const pricesResult = result('prices-result');
  const prices = h('form', { class: 'card', id: 'prices-form' },
    h('h2', {}, 'Daily prices'),
    h('p', { class: 'hint' }, 'CSV with the header symbol,date,open,high,low,close,volume. All rows or none are saved.'),
    h('label', { for: 'prices-file' }, 'CSV file'), pricesFile, progress, pricesResult,
    h('button', { type: 'submit' }, 'Upload prices'));
  onSubmit(prices, async () => {
    const file = pricesFile.files[0];
    if (!file) { show(pricesResult, 'Choose a file first.', 'error'); return; }
    progress.hidden = false;
    progress.value = 0;
    show(pricesResult, 'Uploading…');
    try {
      const answer = await upload('/api/admin/prices', file, 'text/csv', (fraction) => {
        progress.value = fraction;
        show(pricesResult, fraction < 1 ? `Uploading… ${Math.floor(fraction * 100)}%` : 'Saving…');
      });
      show(pricesResult, `${count(answer.rows, 'row')} saved.`);
    } finally {
      progress.hidden = true;
    }
  }, (error) => refuse(pricesResult, error));

  const quoteSymbol = h('input', { id: 'quote-symbol', required: true, autocapitalize: 'characters' });
  const quotePrice = h('input', { id: 'quote-price', required: true, inputmode: 'decimal' });
  const quoteResult = result('quote-result');
  const quote = h('form', { class: 'card', id: 'quote-form' },
    h('h2', {}, 'Set a price'),
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'quote-symbol' }, 'Symbol'), quoteSymbol),
      h('div', {}, h('label', { for: 'quote-price' }, 'Price'), quotePrice)),
    quoteResult, h('button', { type: 'submit' }, 'Set price'));
  quote.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const problem = amountProblem(quotePrice.value, 'Price', 6);
      if (problem) throw new Error(problem);
      await api('/api/admin/quotes', { method: 'POST', body: [{ symbol: quoteSymbol.value.trim().toUpperCase(), price: quotePrice.value.trim() }] });
      show(quoteResult, `${quoteSymbol.value.trim().toUpperCase()} now trades at ${quotePrice.value.trim()}.`);
    } catch (error) {
      show(quoteResult, error.message, 'error');
    }
  });

  const title = h('input', { id: 'broadcast-title', required: true, maxlength: 200 });
  const body = h('textarea', { id: 'broadcast-body', rows: 3, maxlength: 2000 });
  const broadcastResult = result('broadcast-result');
  const broadcast = h('form', { class: 'card', id: 'broadcast-form' },
    h('h2', {}, 'Tell everyone'),
    h('label', { for: 'broadcast-title' }, 'Title'), title,
    h('label', { for: 'broadcast-body' }, 'Message'), body,
    broadcastResult, h('button', { type: 'submit' }, 'Send to all players'));
  broadcast.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('/api/admin/notifications', { method: 'POST', body: { title: title.value.trim(), body: body.value } });
      show(broadcastResult, 'Sent.');
      title.value = '';
      body.value = '';
    } catch (error) {
      show(broadcastResult, error.message, 'error');
    }
  });

  fill(root, h('h1', {}, 'Admin'), h('div', { class: 'grid' }, instruments, prices, quote, broadcast), auditCard());
}

/** Every host's and admin's action, newest first, filtered by action, actor and league
 * (`GET /api/admin/audit`). */
function auditCard() {
  const action = h('select', { id: 'audit-action' }, h('option', { value: '' }, 'Every action'),
    Object.entries(AUDIT_ACTIONS).map(([value, words]) => h('option', { value }, `${words} (${value})`)));
  const actor = h('input', { id: 'audit-actor', type: 'number', min: 1, step: 1, inputmode: 'numeric', placeholder: 'anyone' });
  const league = h('input', { id: 'audit-league', type: 'number', min: 1, step: 1, inputmode: 'numeric', placeholder: 'any' });
  let filters = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  const log = auditLog('admin-audit', () => `/api/admin/audit?${filters}`, { withLeague: true, empty: 'No action matches these filters.' });
  const form = h('form', { id: 'audit-filters', class: 'filters' },
    h('div', {}, h('label', { for: 'audit-action' }, 'Action'), action),
    h('div', {}, h('label', { for: 'audit-actor' }, 'Who (user id)'), actor),
    h('div', {}, h('label', { for: 'audit-league' }, 'League id'), league),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    filters = new URLSearchParams({ limit: String(AUDIT_PAGE) });
    if (action.value) filters.set('action', action.value);
    if (actor.value.trim()) filters.set('actorId', actor.value.trim());
    if (league.value.trim()) filters.set('leagueId', league.value.trim());
    log.reload();
  });
  log.reload();
  return h('section', { class: 'card', id: 'audit', 'aria-labelledby': 'audit-title' },
    h('h2', { id: 'audit-title' }, 'Audit log'),
    h('p', { class: 'hint' }, 'Every action of a host or an admin, newest first.'),
    form, log.node);
}
