// Small DOM helpers: elements are built with h(), never from HTML strings, so text from
// the server (names, notices) can never inject markup.

/** h('a', {href: '#/x', class: 'y', onclick: f}, 'text', child, ...) */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `element`. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A table: columns [{title, cell: (row) => node|string, class?}], rows. */
export function table(columns, rows, { empty = 'Nothing yet.', caption } = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-scroll' },
    h('table', {},
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.title)))),
      h('tbody', {}, rows.map((row) => h('tr', {}, columns.map((c) => h('td', { class: c.class }, c.cell(row))))))));
}

/** Text coloured by sign: "gain" for up, "loss" for down. */
export function signed(text, formatted) {
  const value = String(text ?? '0');
  // What is shown decides: a loss that rounds to nothing ("¥0") is no loss.
  const shown = typeof formatted === 'string' ? formatted : value;
  const kind = !/[1-9]/.test(shown) ? '' : value.startsWith('-') ? 'loss' : /[1-9]/.test(value) ? 'gain' : '';
  return h('span', { class: kind }, formatted);
}

export function loading(label = 'Loading…') {
  return h('p', { class: 'loading', role: 'status' }, label);
}

/** An error box with the server's words and, when given, a retry button. */
export function failure(error, retry) {
  return h('div', { class: 'error', role: 'alert' },
    h('p', {}, error.message || String(error)),
    retry ? h('button', { type: 'button', onclick: retry }, 'Try again') : null);
}

/**
 * Runs `work` when `form` is submitted, with its submit button disabled until the work
 * settles, so a double click sends one request; a failure goes to `onError`.
 */
export function onSubmit(form, work, onError) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      await work();
    } catch (error) {
      onError(error);
    } finally {
      button.disabled = false;
    }
  });
}

/** Asks before something that cannot be undone. */
export function confirmAction(question) {
  return window.confirm(question);
}

/**
 * Shows `form` in a modal `dialog` and runs `work` on submit, with the submit button
 * disabled until it settles (a double click sends one request); a failure's words go to
 * `error`. The dialog removes itself once closed; `focus` gets the caret first.
 */
export function showModalForm(dialog, form, error, focus, work) {
  const confirm = form.querySelector('button[type=submit]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (confirm.disabled) return;
    confirm.disabled = true;
    error.hidden = true;
    try {
      await work();
    } catch (problem) {
      error.textContent = problem.message;
      error.hidden = false;
    } finally {
      confirm.disabled = false;
    }
  });
  dialog.append(form);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  focus.select();
}

/** A market day (YYYY-MM-DD) in the reader's words, e.g. "24 Nov 2026". */
export function dayText(day) {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(year, month - 1, date).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** What is wrong with an amount typed into a form, in words (null when it reads): a
 * plain number with at most `places` decimals, as the server takes it. */
export function amountProblem(text, label, places = 2) {
  if (new RegExp(`^\\d+(\\.\\d{1,${places}})?$`).test(text.trim())) return null;
  return `${label}: enter a plain amount such as 2500 or 2500.50 (digits, and a point before at most ${places} decimals; no commas or currency signs).`;
}
