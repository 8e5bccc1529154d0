// The league page's news (the host posts, everyone reads, newest first) and trade
// journal (the notes members give for their trades: the host reads everyone's, a member
// their own). Each panel reads its own pages, so the standings redrawing leave them be.
import { api } from '../api.js';
import { h, fill, failure, errorLine, leaguePeople, memberName, onSubmitShowing, whenText } from '../dom.js';

const NEWS_PAGE = 5;
const JOURNAL_PAGE = 20;

/** A list that pages with "older" (the server's `nextBefore`): `reload()` reads its first
 * page again; `item(entry)` draws one entry. */
function pagedList(listId, path, item, empty, olderLabel) {
  const list = h('ul', { id: listId, class: 'entries' });
  const status = h('div', {});
  const more = h('button', { type: 'button', class: 'link', id: `${listId}-older`, hidden: true }, olderLabel);
  let next = null;
  let asked = 0;
  async function read(before) {
    const ticket = ++asked;
    const separator = path().includes('?') ? '&' : '?';
    const page = await api(`${path()}${before ? `${separator}before=${before}` : ''}`);
    if (ticket !== asked) return;
    if (!before) list.replaceChildren();
    list.append(...page.items.map(item));
    next = page.nextBefore;
    more.hidden = !next;
    fill(status, list.children.length === 0 ? h('p', { class: 'empty', id: `${listId}-empty` }, empty) : null);
  }
  const failed = (error) => fill(status, failure(error, () => reload()));
  const reload = () => read(null).catch(failed);
  more.addEventListener('click', () => read(next).catch(failed));
  return { node: [list, status, more], reload };
}

/** The league's news: for the host, a form to post some (every member is notified); for
 * everyone, the list, newest first. `reload()` reads it again (when a notification comes). */
export function newsSection(league, context, owner) {
  const news = pagedList('news-list', () => `/api/leagues/${league.id}/news?limit=${NEWS_PAGE}`,
    (n) => h('li', { class: 'news', dataset: { news: n.id } },
      h('h3', {}, n.title), h('p', { class: 'muted when' }, whenText(n.createdAt)), h('p', { class: 'body' }, n.body)),
    owner ? 'No news yet: post the first for your members.' : 'No news from the host yet.', 'Older news');
  let form = null;
  if (owner) {
    const title = h('input', { id: 'news-title', maxlength: 120, required: true, autocomplete: 'off' });
    const body = h('textarea', { id: 'news-body', rows: 3, maxlength: 2000, required: true });
    const error = errorLine('news-error');
    form = h('form', { id: 'news-form' },
      h('label', { for: 'news-title' }, 'Title'), title,
      h('label', { for: 'news-body' }, 'Message'), body,
      error, h('button', { type: 'submit', class: 'primary' }, 'Post news'));
    onSubmitShowing(form, error, async () => {
      const posted = await api(`/api/leagues/${league.id}/news`, { method: 'POST', body: { title: title.value.trim(), body: body.value.trim() } });
      title.value = '';
      body.value = '';
      context.flash(`News “${posted.title}” posted; every member is notified.`);
      await news.reload();
    });
  }
  news.reload();
  const node = h('section', { class: 'card', id: 'news', 'aria-labelledby': 'news-title-heading' },
    h('h2', { id: 'news-title-heading' }, 'League news'),
    owner ? h('details', { id: 'news-post', class: 'post' }, h('summary', {}, 'Post news to the members'), form) : null,
    news.node);
  return { node, reload: news.reload };
}

/** The trade journal: the host reads every member's notes, or one member's; a member reads
 * their own. Null for someone who is neither host nor member. */
export function journalSection(league, context, owner, seated) {
  if (!owner && !seated) return null;
  let member = '';
  // A class's student by the name the host gave them, as the league lists its members.
  const names = new Map(leaguePeople(league).map((s) => [s.userId, memberName(s)]));
  const journal = pagedList('journal-list',
    () => `/api/leagues/${league.id}/journal?limit=${JOURNAL_PAGE}${member ? `&userId=${member}` : ''}`,
    (entry) => h('li', { class: 'entry', dataset: { order: entry.orderId } },
      h('p', { class: 'entry-head' },
        owner ? [h('strong', { class: 'who' }, names.get(entry.userId) ?? entry.username), ' · '] : null,
        `${entry.side === 'buy' ? 'Buy' : 'Sell'} ${entry.quantity} `, h('a', { href: `#/stock/${encodeURIComponent(entry.symbol)}${league.market ? `?league=${league.id}` : ''}` }, entry.symbol),
        h('span', { class: 'muted' }, ` · ${whenText(entry.createdAt)}`)),
      h('p', { class: 'note' }, entry.note)),
    owner ? 'No notes yet: members add one to a trade in its dialog.' : 'No notes yet: add one to a trade in its dialog.', 'Older notes');
  let filter = null;
  if (owner) {
    const players = [...leaguePeople(league)].sort((a, b) => memberName(a).localeCompare(memberName(b)));
    const select = h('select', { id: 'journal-member' },
      h('option', { value: '' }, 'Everyone'),
      players.map((s) => h('option', { value: s.userId }, memberName(s))));
    select.addEventListener('change', () => { member = select.value; journal.reload(); });
    filter = h('label', { class: 'inline journal-filter', for: 'journal-member' }, 'Whose notes', select);
  }
  journal.reload();
  const node = h('section', { class: 'card', id: 'journal', 'aria-labelledby': 'journal-title' },
    h('div', { class: 'heading' },
      h('h2', { id: 'journal-title' }, owner ? 'Trade journal' : 'Your trade journal'),
      h('button', { type: 'button', class: 'small', id: 'journal-refresh', onclick: () => journal.reload() }, 'Refresh')),
    filter,
    league.journalRequired ? h('p', { class: 'hint' }, 'This league asks for a note on every trade and order.') : null,
    journal.node);
  return { node, reload: journal.reload };
}
