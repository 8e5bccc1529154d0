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

/** Marks a table (from table()) to stack each row into a card on a phone, and names
 * every cell after its column so the card can label its figures (app.css, .stacked). */
export function stacked(wrapped) {
  wrapped.classList.add('stacked');
  for (const found of wrapped.querySelectorAll('table')) {
    const titles = [...found.tHead.rows[0].cells].map((cell) => cell.textContent);
    for (const row of found.tBodies[0].rows) {
      [...row.cells].forEach((cell, i) => { cell.dataset.label = titles[i]; });
    }
  }
  return wrapped;
}

/** A list whose rows become cards on a phone, their longer words wrapping (app.css). */
export function cards(wrapped) {
  stacked(wrapped).classList.add('wrap');
  return wrapped;
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

/** An error line for a form (hidden until `showError` puts words in it). */
export function errorLine(id) {
  return h('p', { class: 'error', role: 'alert', id, hidden: true });
}

/** Shows a refusal in `line` in the server's words (or the given text). */
export function showError(line, problem) {
  line.textContent = typeof problem === 'string' ? problem : problem.message;
  line.hidden = false;
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

/** Like onSubmit, with the failure's words shown in `line` (an errorLine), which is
 * hidden again when the form is sent anew. `words(problem)`, when given, says it instead. */
export function onSubmitShowing(form, line, work, words = (problem) => problem.message) {
  onSubmit(form, async () => {
    line.hidden = true;
    await work();
  }, (problem) => showError(line, words(problem)));
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

/** A moment's day in the reader's words, "24 Nov 2026"; `none` when there is no moment. */
export function dateText(value, none = '') {
  return value ? new Date(value).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) : none;
}

/** A moment in the reader's words, day and time: "24 Nov 2026, 09:30". */
export function whenText(value) {
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "1 time", "3 times", "1,204 rows": a count and its noun. */
export function count(n, one, many = `${one}s`) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** A league's member as pages name them: "Ana Lee (ana-x7k2)" for a class's student
 * (a standing's `displayName`), else the username. */
export function memberName(standing) {
  return standing.displayName ? `${standing.displayName} (${standing.username})` : standing.username;
}

/** A league's people as its pages list them: its standings' members — or in a team
 * league, whose standings rank teams, the members its host is sent (`students`: each
 * with their team and role and their own trades) —, rows without a member left out. */
export function leaguePeople(league) {
  return (league.students ?? league.members ?? []).filter((s) => s.userId != null);
}

/** A benchmark in words: "the market (equal-weighted)" or its symbol. */
export function benchmarkWords(benchmark) {
  return !benchmark || benchmark === 'market' ? 'the market (equal-weighted)' : benchmark;
}
