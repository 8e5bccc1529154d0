// The audit log as people read it: each host's and admin's action in words, newest
// first, twenty at a time with "Older entries" (the server's `nextBefore`). The league
// page's host reads their league's (`GET /api/leagues/{id}/audit`), an admin every one
// (`GET /api/admin/audit`, filtered).
import { api } from './api.js';
import { h, fill, table, cards, failure, whenText } from './dom.js';

const PAGE = 20;

/** Each action as the API names it, in words. */
export const AUDIT_ACTIONS = {
  'league.update': 'Changed the league\'s settings',
  'league.freeze': 'Froze trading',
  'league.unfreeze': 'Resumed trading',
  'league.reset_member': 'Reset a member\'s portfolio',
  'league.kick': 'Removed a member',
  'league.delete': 'Deleted the league',
  'league.news': 'Posted news',
  'league.report_export': 'Downloaded the gradebook',
  'league.roster_create': 'Created class logins',
  'league.password_reset': 'Gave a student a new password',
  'league.team_create': 'Created a team',
  'league.team_member': 'Changed a team\'s members',
  'league.member_delete': 'Erased a student\'s account',
  'account.delete': 'Erased their own account',
  'admin.prices': 'Uploaded daily prices',
  'admin.quotes': 'Set prices',
  'admin.instrument': 'Changed instruments',
  'admin.corporate_action': 'Recorded a corporate action',
  'admin.broadcast': 'Told everyone',
  'admin.fx': 'Uploaded exchange rates',
  'admin.funds': 'Changed a player\'s cash',
  'admin.user_delete': 'Erased an account',
};

/** What an action changed, as "students: 5 · userIds: 3, 4": the server's field names and
 * values (never a password), each on its own. */
export function detailsText(details) {
  const value = (v) => (Array.isArray(v) ? v.map(value).join(', ')
    : v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v));
  return Object.entries(details ?? {}).map(([name, v]) => `${name}: ${value(v)}`).join(' · ');
}

/**
 * A paged audit log in a box of its own: `path()` is the first page's address (with its
 * filters), `whom(id)` names a user the page knows (else "#id"), `withLeague` adds the
 * league's column. `reload()` reads the first page again.
 */
export function auditLog(id, path, { whom = () => null, withLeague = false, empty = 'Nothing recorded yet.' } = {}) {
  const box = h('div', { id, class: 'audit-log', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'link', id: `${id}-older`, hidden: true }, 'Older entries');
  const person = (userId, name) => (userId === null || userId === undefined ? '—'
    : whom(userId) ?? (name ? `${name}` : `#${userId}`));
  const columns = [
    { title: 'When', class: 'when', cell: (e) => h('time', { datetime: e.at }, whenText(e.at)) },
    { title: 'Who', class: 'who', cell: (e) => (e.actorUsername === null ? `#${e.actorId} (erased)` : person(e.actorId, e.actorUsername)) },
    { title: 'Action', class: 'action', cell: (e) => h('span', { dataset: { action: e.action } }, AUDIT_ACTIONS[e.action] ?? e.action) },
    withLeague ? { title: 'League', class: 'league', cell: (e) => (e.leagueId === null ? '—' : `#${e.leagueId}`) } : null,
    { title: 'Whom', class: 'whom', cell: (e) => person(e.targetUserId) },
    { title: 'Details', class: 'details', cell: (e) => detailsText(e.details) },
  ].filter(Boolean);
  let items = [];
  let next = null;
  let asked = 0;
  async function read(before) {
    const ticket = ++asked;
    const first = path();
    const page = await api(`${first}${before ? `${first.includes('?') ? '&' : '?'}before=${before}` : ''}`);
    if (ticket !== asked) return;
    items = before ? [...items, ...page.items] : page.items;
    next = page.nextBefore;
    more.hidden = !next;
    fill(box, cards(table(columns, items, { empty })));
  }
  const failed = (error) => fill(box, failure(error, () => reload()));
  const reload = () => read(null).catch(failed);
  more.addEventListener('click', () => read(next).catch(failed));
  return { node: [box, more], reload };
}

/** The page size the logs ask for (`?limit=`). */
export const AUDIT_PAGE = PAGE;
