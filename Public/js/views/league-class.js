// What the league page gives its host for running a class: how students join (the code
// and the links other devices reach, each with a Copy button, and a join sheet to print),
// who has not traded yet, the class roster (logins made from pasted names, shown once and
// printed as cards), each managed student's new password and erasure, and the league's
// audit log. Who is managed, who has traded and which links work are the server's
// answers (`GET /api/leagues/{id}` for its owner): the page shows them.
import { api } from '../api.js';
import { h, fill, table, cards, count, confirmAction, dateText, errorLine, leaguePeople, memberName, onSubmitShowing } from '../dom.js';
import { copyButton, printSheet } from '../share.js';
import { auditLog, AUDIT_PAGE } from '../audit.js';

/** The join links to hand out: the server's (those other devices reach), else this
 * browser's own address, with `local` set: the server listens on loopback only. */
function joinLinks(league) {
  const links = league.joinLinks ?? [];
  return links.length > 0 ? { links, local: false } : { links: [`${location.origin}/join/${league.code}`], local: true };
}

/** A printed login card: the league, the student's name, username and password, and
 * where to log in. */
function loginCard(league, student) {
  const { links } = joinLinks(league);
  return h('article', { class: 'login-card' },
    h('p', { class: 'card-league' }, `MockStock · ${league.name}`),
    h('p', { class: 'card-name' }, student.displayName),
    h('dl', {},
      h('dt', {}, 'Username'), h('dd', { class: 'code' }, student.username),
      h('dt', {}, 'Password'), h('dd', { class: 'code' }, student.password)),
    h('p', { class: 'card-join' }, 'Open ', h('span', { class: 'code' }, links[0]),
      ' and log in. League code: ', h('span', { class: 'code' }, league.code)));
}

/** Prints one card per student, several to a page, with lines to cut along. */
function printCards(league, students) {
  return printSheet('print-cards', h('div', { class: 'card-sheet' }, students.map((s) => loginCard(league, s))));
}

/** The sheet a class reads on the wall: the league, its code in large letters, the links. */
function printJoinSheet(league) {
  const { links } = joinLinks(league);
  return printSheet('print-join',
    h('section', { class: 'join-sheet' },
      h('p', { class: 'sheet-kicker' }, 'Join the league on MockStock'),
      h('h1', {}, league.name),
      h('p', { class: 'sheet-label' }, 'Join code'),
      h('p', { class: 'sheet-code' }, league.code),
      h('p', { class: 'sheet-label' }, links.length > 1 ? 'Or open one of these links' : 'Or open this link'),
      links.map((link) => h('p', { class: 'sheet-link' }, link)),
      h('ol', {},
        h('li', {}, 'Open the link, or open MockStock, choose Leagues and type the code under “Join a league”.'),
        h('li', {}, 'Log in, or create an account if you are new (a class login from your teacher works too).'),
        h('li', {}, 'You are in the league as soon as you are logged in.'))));
}

/** The code and the links, each with Copy, the join sheet's Print button, and, when the
 * server names no link (it listens on this computer only), what to do about it. */
function invitePart(league) {
  const { links, local } = joinLinks(league);
  const status = h('p', { class: 'hint', id: 'copy-status', role: 'status' });
  return h('div', { id: 'invite' },
    h('h3', {}, 'Invite the class'),
    h('div', { class: 'share-row' },
      h('span', { class: 'label' }, 'Join code'), h('strong', { class: 'code', id: 'invite-code' }, league.code),
      copyButton('copy-code', 'Copy code', 'the join code', () => league.code, status)),
    links.map((link, i) => h('div', { class: 'share-row' },
      h('span', { class: 'label' }, links.length > 1 ? `Link ${i + 1}` : 'Join link'),
      h('a', { class: 'code join-link', href: link, dataset: { link: i } }, link),
      copyButton(i === 0 ? 'copy-link' : `copy-link-${i + 1}`, 'Copy link', 'the join link', () => link, status))),
    local ? h('p', { class: 'hint warning', id: 'loopback-note' },
      'This server listens on this computer only (127.0.0.1 or localhost), so it names no link other devices can reach; ',
      'the link above is this browser\'s own address, which students\' devices cannot open unless they reach it too. ',
      'To serve a class, start the server with HOST=0.0.0.0 or set PUBLIC_URL to the address students use: see “Serving a class” in the README.') : null,
    status,
    h('button', { type: 'button', id: 'print-join-sheet', onclick: () => printJoinSheet(league) }, 'Print join sheet'));
}

/** Who has not traded in the league yet (the host aside), by name, with a button that
 * asks again. */
function notTradedPart(league, refresh) {
  const members = leaguePeople(league).filter((s) => s.userId !== league.ownerId);
  const idle = members.filter((s) => s.trades === 0);
  const partial = !league.students && league.memberCount > (league.members ?? []).length;
  return h('div', { id: 'not-traded' },
    h('div', { class: 'heading' }, h('h3', {}, 'Not traded yet'),
      h('button', { type: 'button', class: 'small', id: 'not-traded-refresh', onclick: refresh }, 'Refresh')),
    members.length === 0 ? h('p', { class: 'empty', id: 'not-traded-none' }, 'No members yet.')
      : idle.length === 0 ? h('p', { id: 'not-traded-none' }, 'Everyone has traded.')
        : [h('p', { class: 'hint', id: 'not-traded-count' },
          `${count(idle.length, 'member')} of ${members.length}${partial ? ' (of the first 200)' : ''} ${idle.length === 1 ? 'has' : 'have'} not traded yet:`),
        h('ul', { class: 'names', id: 'not-traded-list' }, idle.map((s) => h('li', { dataset: { member: s.userId } }, memberName(s))))]);
}

/** The logins just made: a warning that they are shown only now, a table and Print cards. */
function credentialsBox(league, students) {
  return h('div', { class: 'secret', id: 'roster-result' },
    h('h3', {}, `${count(students.length, 'login')} made`),
    h('p', { class: 'warning' }, h('strong', {}, 'Print the cards or write the passwords down now: they are shown only this once.'),
      ' Each student is already in the league.'),
    cards(table([
      { title: 'Name', class: 'name', cell: (s) => s.displayName },
      { title: 'Username', class: 'username', cell: (s) => s.username },
      { title: 'Password', class: 'password', cell: (s) => s.password },
    ], students)),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', id: 'print-cards', onclick: () => printCards(league, students) }, 'Print cards')));
}

/** Pasting names, one per line, makes a login for each (`POST /api/leagues/{id}/roster`). */
function rosterForm(league, result, changed, made = () => {}) {
  const names = h('textarea', { id: 'roster-names', rows: 6, 'aria-describedby': 'roster-hint', spellcheck: 'false' });
  const error = errorLine('roster-error');
  const form = h('form', { id: 'roster-form' },
    h('label', { for: 'roster-names' }, 'Students\' names, one per line'), names,
    h('p', { class: 'hint', id: 'roster-hint' },
      'Each gets a login with a username and password (no e-mail needed) and a seat in this league, shown by the name you give.'),
    error, h('button', { type: 'submit', class: 'primary', id: 'roster-create' }, 'Create logins'));
  onSubmitShowing(form, error, async () => {
    const lines = names.value.split('\n').map((line) => line.trim()).filter(Boolean);
    if (lines.length === 0) throw new Error('Paste at least one name, one per line.');
    const roster = await api(`/api/leagues/${league.id}/roster`, { method: 'POST', body: { students: lines.map((displayName) => ({ displayName })) } });
    names.value = '';
    fill(result, credentialsBox(league, roster.students));
    made(roster.students);
    changed();
  });
  return form;
}

/** The class's managed students (those the league names), each with a new password and
 * erasure; a new password shows once, with a card to print. */
function studentsPart(league, context, passwordBox, changed) {
  const managed = leaguePeople(league).filter((s) => s.displayName);
  const newPassword = async (s) => {
    if (!confirmAction(`Give ${memberName(s)} a new password? The old one stops working at once.`)) return;
    try {
      const { password } = await api(`/api/leagues/${league.id}/members/${s.userId}/password`, { method: 'POST' });
      const student = { displayName: s.displayName, username: s.username, password };
      fill(passwordBox, h('div', { class: 'secret', id: 'password-result' },
        h('p', {}, `New password for ${memberName(s)}: `, h('strong', { class: 'code', id: 'new-password' }, password)),
        h('p', { class: 'warning' }, 'Shown only now: print the card or write it down.'),
        h('button', { type: 'button', id: 'print-card', onclick: () => printCards(league, [student]) }, 'Print card')));
      changed();
    } catch (problem) {
      fill(passwordBox, h('p', { class: 'error', role: 'alert' }, problem.message));
    }
  };
  const erase = async (s) => {
    if (!confirmAction(`Erase the account of ${memberName(s)}? Their login, portfolios, trades and notes are deleted for good. This cannot be undone.`)) return;
    try {
      await api(`/api/leagues/${league.id}/members/${s.userId}/account`, { method: 'DELETE' });
      context.flash(`The account of ${memberName(s)} was erased.`);
      fill(passwordBox);
      changed();
    } catch (problem) {
      context.flash(problem.message, 'error');
    }
  };
  return h('div', { id: 'students' },
    h('h3', {}, 'Students'),
    cards(table([
      { title: 'Name', class: 'name', cell: (s) => s.displayName },
      { title: 'Username', class: 'username', cell: (s) => s.username },
      { title: 'Trades', class: 'num trades', cell: (s) => String(s.trades ?? 0) },
      { title: 'Last trade', class: 'last-trade', cell: (s) => dateText(s.lastTradeAt, 'none yet') },
      { title: '', class: 'student-actions', cell: (s) => h('div', { class: 'row-actions' },
        h('button', { type: 'button', class: 'small', dataset: { password: s.username }, onclick: () => newPassword(s) }, 'Reset password'),
        h('button', { type: 'button', class: 'small danger', dataset: { erase: s.username }, onclick: () => erase(s) }, 'Erase account')) },
    ], managed, { empty: 'No class logins yet: paste names above to make some.' })));
}

/**
 * The host's class panel. `changed()` reads the league again (the page calls `update`
 * with it); `refresh()` does so at most every few seconds, for the standings' events (a
 * trade changes who has not traded). What the host just made — logins, a new password —
 * stays until they leave the page. `made(students)` gets the logins a roster made (a team
 * league's Teams card names them, to seat them).
 */
export function classSection(league, context, changed, made) {
  const invite = h('div', {});
  const idle = h('div', {});
  const students = h('div', {});
  const result = h('div', { id: 'roster-result-box' });
  const passwordBox = h('div', { id: 'password-box' });
  let shown = league;
  let inviteStamp = null;
  let membersStamp = null;
  // Each part is drawn again only when what it shows changed, so a button is never
  // replaced under the host's finger by an answer that changed nothing.
  function update(fresh) {
    shown = fresh;
    const stamp = JSON.stringify([fresh.name, fresh.code, fresh.joinLinks]);
    if (stamp !== inviteStamp) { inviteStamp = stamp; fill(invite, invitePart(fresh)); }
    const members = JSON.stringify([fresh.memberCount, leaguePeople(fresh).map((s) => [s.userId, s.username, s.displayName, s.trades, s.lastTradeAt])]);
    if (members === membersStamp) return;
    membersStamp = members;
    fill(idle, notTradedPart(fresh, () => refresh(true)));
    fill(students, studentsPart(fresh, context, passwordBox, changed));
  }
  update(league);
  let timer = null;
  let last = 0;
  function refresh(now = false) {
    if (now) { clearTimeout(timer); timer = null; last = 0; }
    if (timer) return;
    timer = setTimeout(async () => {
      timer = null;
      last = Date.now();
      try {
        const fresh = await api(`/api/leagues/${shown.id}`);
        if (node.isConnected) update(fresh);
      } catch { /* the next event tries again */ }
    }, Math.max(0, last + 3000 - Date.now()));
  }
  const node = h('section', { class: 'card', id: 'class', 'aria-labelledby': 'class-title' },
    h('h2', { id: 'class-title' }, 'Your class'),
    h('div', { class: 'host-parts' },
      h('div', {}, invite, idle),
      h('div', { id: 'roster' }, h('h3', {}, 'Class roster'), rosterForm(league, result, changed, made))),
    result, students, passwordBox);
  return { node, update, refresh };
}

/** The league's audit log for its host: who did what to whom, newest first. */
export function auditSection(league) {
  let names = new Map(leaguePeople(league).map((s) => [s.userId, memberName(s)]));
  const log = auditLog('league-audit', () => `/api/leagues/${league.id}/audit?limit=${AUDIT_PAGE}`,
    { whom: (id) => names.get(id) ?? null, empty: 'Nothing recorded yet: your changes, freezes, resets and class logins show here.' });
  const node = h('section', { class: 'card', id: 'audit', 'aria-labelledby': 'audit-title' },
    h('div', { class: 'heading' }, h('h2', { id: 'audit-title' }, 'Audit log'),
      h('button', { type: 'button', class: 'small', id: 'audit-refresh', onclick: () => log.reload() }, 'Refresh')),
    h('p', { class: 'hint' }, 'Every change made as host, newest first.'),
    log.node);
  return {
    node,
    /** Names the members the league lists now, and reads the log again. */
    update(fresh) { names = new Map(leaguePeople(fresh).map((s) => [s.userId, memberName(s)])); log.reload(); },
  };
}
