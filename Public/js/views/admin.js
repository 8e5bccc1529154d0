import { api, upload } from '../api.js';
import { h, fill, onSubmit } from '../dom.js';

/**
 * RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. Each row
 * carries `line`, the line it starts on, so messages match what an editor shows.
 */
export function parseCSV(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== '') rows.push(Object.assign(row, { line: rowLine }));
    row = []; field = '';
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) line += 1;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') { i += 1; line += 1; }
      endRow();
      rowLine = line;
    } else field += c;
  }
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

/** Instruments from a CSV with a header: symbol/Symbol, name/Security, sector/GICS Sector, description, currency. */
function instrumentsFrom(text) {
  const [header, ...rows] = parseCSV(text);
  if (!header) throw new Error('The file is empty.');
  const names = header.map((n) => n.trim().toLowerCase());
  const column = (...candidates) => candidates.map((c) => names.indexOf(c)).find((i) => i >= 0);
  const symbol = column('symbol');
  const name = column('name', 'security');
  if (symbol === undefined || name === undefined) throw new Error(`Line ${header.line}: the header needs a symbol and a name (or Security) column.`);
  const sector = column('sector', 'gics sector');
  const description = column('description');
  const currency = column('currency');
  const optional = (index, row) => (index === undefined ? undefined : row[index]?.trim() || undefined);
  return rows.map((row) => {
    if (row.length !== header.length) throw new Error(`Line ${row.line}: expected ${header.length} fields, found ${row.length}.`);
    if (!row[symbol].trim() || !row[name].trim()) throw new Error(`Line ${row.line}: symbol and name are required.`);
    return {
      line: row.line,
      instrument: {
        symbol: row[symbol].trim(), name: row[name].trim(),
        sector: optional(sector, row), description: optional(description, row), currency: optional(currency, row),
      },
    };
  });
}

/** The server names a bad item by its index ("[3].name ..."); say which line of the file it came from. */
export function withLineNumbers(message, lines) {
  return message.replace(/^\[(\d+)\]\.?:?\s*/, (whole, index) => (lines[Number(index)] ? `Line ${lines[Number(index)]}: ` : whole));
}

function count(n, noun) {
  return `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;
}

function result(id) {
  return h('p', { id, role: 'status', 'aria-live': 'polite' });
}

function show(box, text, kind = 'info') {
  box.className = kind;
  box.textContent = text;
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
  let lines = [];
  onSubmit(instruments, async () => {
    lines = [];
    const file = instrumentsFile.files[0];
    if (!file) { show(instrumentsResult, 'Choose a file first.', 'error'); return; }
    const list = instrumentsFrom(await file.text());
    lines = list.map((item) => item.line);
    show(instrumentsResult, `Uploading ${list.length} instruments…`);
    const answer = await api('/api/admin/instruments', { method: 'PUT', body: list.map((item) => item.instrument) });
    show(instrumentsResult, `${count(answer.upserted, 'instrument')} saved.`);
  }, (error) => show(instrumentsResult, withLineNumbers(error.message, lines), 'error'));

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
  }, (error) => show(pricesResult, error.message, 'error'));

  const quoteSymbol = h('input', { id: 'quote-symbol', required: true, autocapitalize: 'characters' });
  const quotePrice = h('input', { id: 'quote-price', required: true, inputmode: 'decimal', pattern: '\\d+(\\.\\d+)?' });
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

  fill(root, h('h1', {}, 'Admin'), h('div', { class: 'grid' }, instruments, prices, quote, broadcast));
}
