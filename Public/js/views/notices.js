import { api } from '../api.js';
import { h, fill, count } from '../dom.js';
import { money } from '../decimal.js';

export async function achievementsView(root, context) {
  const achievements = await api('/api/achievements');
  if (!context.current()) return;
  const earned = achievements.filter((a) => a.earnedAt).length;
  fill(root,
    h('h1', {}, 'Achievements'),
    h('p', { class: 'muted' }, `${earned} of ${achievements.length} earned. Rewards are paid into your personal portfolio.`),
    h('ul', { class: 'cards', id: 'achievements' }, achievements.map((a) => h('li', { class: `card achievement${a.earnedAt ? ' earned' : ''}`, dataset: { code: a.code } },
      h('h2', {}, a.name),
      h('p', {}, a.description),
      h('progress', { max: a.target, value: a.progress, 'aria-label': `${a.progress} of ${a.target}` }),
      h('p', { class: 'muted' }, a.earnedAt ? `Earned ${new Date(a.earnedAt).toLocaleDateString()} · ${money(a.reward)} reward`
        : `${a.progress} of ${a.target} · reward ${money(a.reward)}`)))));
}

export async function notificationsView(root, context) {
  const unreadOnly = context.query.get('unread') === 'true';
  const before = context.query.get('before');
  const query = new URLSearchParams({ limit: '25' });
  if (unreadOnly) query.set('unread', 'true');
  if (before) query.set('before', before);
  const page = await api(`/api/notifications?${query}`);
  if (!context.current()) return;

  async function markRead(notice, button) {
    button.disabled = true;
    try {
      await api(`/api/notifications/${notice.id}/read`, { method: 'POST' });
      button.closest('li').classList.remove('unread');
      button.remove();
      context.refreshUnread();
    } catch (problem) {
      button.disabled = false;
      context.flash(problem.message, 'error');
    }
  }
  /** Every unread notice read at once, broadcasts included (older pages too). */
  async function markAllRead(button) {
    button.disabled = true;
    try {
      const { marked } = await api('/api/notifications/read', { method: 'POST' });
      context.flash(marked === 0 ? 'Nothing was unread.' : `${count(marked, 'notification')} marked read.`);
      context.refresh();
    } catch (problem) {
      button.disabled = false;
      context.flash(problem.message, 'error');
    }
  }
  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, 'Notifications'),
      h('div', { class: 'actions' },
        page.items.length > 0 ? h('button', { type: 'button', id: 'mark-all-read', onclick: (event) => markAllRead(event.currentTarget) }, 'Mark all read') : null,
        h('a', { href: unreadOnly ? '#/notifications' : '#/notifications?unread=true', class: 'button' }, unreadOnly ? 'Show all' : 'Unread only'))),
    page.items.length === 0 ? h('p', { class: 'empty' }, unreadOnly ? 'Nothing unread.' : 'No notifications yet.') :
      h('ul', { class: 'notices', id: 'notices' }, page.items.map((n) => {
        const item = h('li', { class: n.readAt ? 'card' : 'card unread' },
          h('h2', {}, n.title), h('p', {}, n.body),
          h('p', { class: 'muted' }, new Date(n.createdAt).toLocaleString()));
        if (!n.readAt) {
          const button = h('button', { type: 'button', class: 'small', 'aria-label': `Mark “${n.title}” read` }, 'Mark read');
          button.addEventListener('click', () => markRead(n, button));
          item.append(button);
        }
        return item;
      })),
    page.nextBefore ? h('nav', { class: 'pager' },
      h('a', { href: `#/notifications?${new URLSearchParams({ ...(unreadOnly ? { unread: 'true' } : {}), before: page.nextBefore })}` }, 'Older →')) : null);
}
