// What leaves the screen: text copied to the clipboard, and sheets printed. A printed
// sheet is drawn into #print-area, a box of its own under <body> that the screen never
// shows and that is all a printer gets (app.css, @media print).
import { h, fill } from './dom.js';

/** Copies `text` to the clipboard; true when the browser took it. Without the
 * asynchronous clipboard (a page not served over https or localhost), a selected text
 * field and the older copy command. */
export async function copyText(text) {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* the older way below */ }
  const field = h('textarea', { readonly: true, 'aria-hidden': 'true', class: 'offscreen' });
  field.value = text;
  document.body.append(field);
  field.select();
  let copied = false;
  try { copied = document.execCommand('copy'); } catch { copied = false; }
  field.remove();
  return copied;
}

/** A button that copies `text()` and says so in `status` ("Copied the join code."), or
 * says to copy it by hand when the browser refuses. */
export function copyButton(id, label, what, text, status) {
  return h('button', {
    type: 'button', class: 'small', id,
    onclick: async () => {
      const copied = await copyText(text());
      status.textContent = copied ? `Copied ${what}.` : `The browser did not let the page copy ${what}: select it and copy it yourself.`;
      status.dataset.copied = copied ? what : '';
    },
  }, label);
}

/** Prints `content` alone (a sheet of login cards, a join sheet): it replaces what
 * #print-area held, and the browser's print dialog opens. `kind` styles the sheet. */
export function printSheet(kind, ...content) {
  let area = document.getElementById('print-area');
  if (!area) {
    area = h('div', { id: 'print-area' });
    document.body.append(area);
  }
  area.className = kind;
  fill(area, ...content);
  window.print();
  return area;
}
