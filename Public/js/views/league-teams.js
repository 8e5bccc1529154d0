// A team league on the league page ([leagues.md](../../../docs/leagues.md#teams)): the
// host's Teams panel — make a team, see each team's members, roles and standing, put a
// member on a team as a trader or a viewer (moving them from another), take one off — and
// a member's own team: its name, their role, their teammates and its portfolio. The teams
// are the server's (`GET /api/leagues/{id}/teams`); who may trade is its rule too.
import { api } from '../api.js';
import { h, fill, failure, count, errorLine, memberName, onSubmitShowing } from '../dom.js';
import { inCurrency, percent } from '../decimal.js';

const ROLES = { trader: 'Trader', viewer: 'Viewer' };

/** A role in a sentence: "a trader", "a viewer". */
function roleWords(role) {
  return role === 'viewer' ? 'a viewer' : 'a trader';
}

/** A team's standing (its row of the league's standings, by `teamId`) in a line: "Rank 1
 * · $10,100.00 · +1.00%"; null while the league lists no row for it. */
function standingLine(league, team) {
  const row = (league.members ?? []).find((s) => s.teamId === team.id);
  if (!row) return null;
  return h('p', { class: 'team-standing', dataset: { standing: team.id } },
    h('strong', {}, `Rank ${row.rank}`), ` · ${inCurrency(row.netWorth, league.currency || 'USD')} · `,
    h('span', { class: row.returnPercent.startsWith('-') ? 'loss' : /[1-9]/.test(row.returnPercent) ? 'gain' : '' }, percent(row.returnPercent)));
}

/**
 * The select that seats a member: each team with each role ("Bulls — trader"), and for
 * a member on no team a first choice that does nothing. Picking one puts the member
 * there (`PUT …/teams/{teamId}/members/{userId}`), moving them from another team.
 */
function seatSelect(teams, person, seat, onPick) {
  const current = seat ? `${seat.teamId}:${seat.role}` : '';
  const select = h('select', { class: 'seat', dataset: { seat: person.username }, 'aria-label': `Team and role of ${person.name}` },
    seat ? null : h('option', { value: '', selected: true }, 'Put on a team…'),
    teams.flatMap((team) => Object.entries(ROLES).map(([role, label]) =>
      h('option', { value: `${team.id}:${role}`, selected: `${team.id}:${role}` === current }, `${team.name} — ${label.toLowerCase()}`))));
  select.addEventListener('change', () => {
    if (!select.value || select.value === current) return;
    const [teamId, role] = select.value.split(':');
    onPick(Number(teamId), role, select);
  });
  return select;
}

/** The host's panel: make a team, the members on no team, each team with its members. */
function hostPart(state) {
  const { league } = state;
  const name = h('input', { id: 'team-name', maxlength: 64, required: true, autocomplete: 'off', placeholder: 'e.g. Bulls' });
  const error = errorLine('team-error');
  const form = h('form', { id: 'team-form', class: 'inline' },
    h('div', { class: 'grow' }, h('label', { for: 'team-name' }, 'New team\'s name'), name),
    h('button', { type: 'submit', class: 'primary', id: 'team-create' }, 'Make team'));
  onSubmitShowing(form, error, async () => {
    const made = await api(`/api/leagues/${league.id}/teams`, { method: 'POST', body: { name: name.value.trim() } });
    name.value = '';
    state.say(`Team “${made.name}” made, with ${inCurrency(league.startingCash, league.currency || 'USD')} in its portfolio. Put members on it below.`);
    await state.reload();
  });
  return [
    h('p', { class: 'hint' }, 'Each team trades one league portfolio, funded with the starting cash. Its traders trade it; its viewers watch it. A member is on one team at a time, and has no portfolio here until you put them on one.'),
    form, error,
    state.status,
    state.unassigned,
    state.list,
  ];
}

/** A member's own team: its name, their role, their teammates, its standing and portfolio. */
function minePart(state, mine) {
  const { league, me } = state;
  if (!mine) {
    return h('div', { id: 'my-team' },
      h('p', { id: 'my-team-none' }, 'You are on no team yet: the host puts each member on one. Until then you have no portfolio in this league.'));
  }
  const { team, role } = mine;
  const mates = team.members.filter((m) => m.userId !== me?.id);
  return h('div', { id: 'my-team', dataset: { team: team.name } },
    h('p', { id: 'my-team-role' }, 'You are ', h('strong', {}, roleWords(role)), ' on ', h('strong', { id: 'my-team-name' }, team.name),
      role === 'viewer' ? ': you watch its portfolio; its traders trade it.' : ': you trade its portfolio with its other traders.'),
    standingLine(league, team),
    mates.length === 0 ? h('p', { class: 'muted' }, 'No teammates yet.')
      : [h('p', { class: 'label' }, 'Teammates'),
        h('ul', { class: 'names', id: 'my-teammates' }, mates.map((m) => h('li', { dataset: { member: m.username } }, `${state.nameOf(m)} · ${ROLES[m.role].toLowerCase()}`)))],
    h('a', { href: `#/portfolio?id=${team.portfolioId}`, id: 'my-team-portfolio' }, 'See the team\'s portfolio'));
}

/** Every team with its members (and, for the host, a select per member and Take off). */
function teamCards(state) {
  const { league, teams, owner } = state;
  if (teams.length === 0) {
    return h('p', { class: 'empty', id: 'teams-none' }, owner ? 'No teams yet: make the first above.' : 'The host has made no teams yet.');
  }
  return h('ul', { class: 'teams', id: 'team-list' }, teams.map((team) => h('li', { class: 'team', dataset: { team: team.name } },
    h('h3', {}, team.name, h('span', { class: 'muted' }, ` · ${count(team.members.length, 'member')}`)),
    standingLine(league, team),
    team.members.length === 0 ? h('p', { class: 'muted' }, 'Nobody on it yet.')
      : h('ul', { class: 'team-members' }, team.members.map((m) => h('li', { dataset: { member: m.username } },
        h('span', { class: 'who' }, state.nameOf(m), ' ', h('span', { class: `tag role-${m.role}` }, ROLES[m.role] ?? m.role)),
        owner ? h('span', { class: 'row-actions' },
          seatSelect(state.teams, { username: m.username, name: state.nameOf(m) }, { teamId: team.id, role: m.role }, (teamId, role, select) => state.seat(m, teamId, role, select)),
          h('button', { type: 'button', class: 'small danger', dataset: { off: m.username }, onclick: () => state.takeOff(m, team) }, 'Take off')) : null))))));
}

/** The members on no team, for the host, each with a select that seats them. */
function unassignedPart(state) {
  const people = state.people().filter((p) => !state.teamOfUser(p.userId));
  const partial = !state.league.students;
  return [
    h('h3', {}, 'Not on a team'),
    people.length === 0 ? h('p', { class: 'muted', id: 'unassigned-none' }, 'Every member is on a team.')
      : h('ul', { class: 'team-members', id: 'unassigned-list' }, people.map((p) => h('li', { dataset: { member: p.username } },
        h('span', { class: 'who' }, state.nameOf(p)),
        state.teams.length > 0 ? seatSelect(state.teams, { username: p.username, name: state.nameOf(p) }, null, (teamId, role, select) => state.seat(p, teamId, role, select))
          : h('span', { class: 'muted' }, 'Make a team first.')))),
    // Without the server's list of members, only those this page has seen are named.
    partial ? h('p', { class: 'hint', id: 'unassigned-partial' },
      'Listed: the class logins made on this page and members who were on a team. Members who joined with the code show here once they are on a team.') : null,
  ];
}

/**
 * The league page's Teams card for a team league (null for another league): for its host,
 * making teams and seating members; for a member, their team. `update(league)` draws it
 * again with the league's fresh standings (the teams are read again, and drawn only when
 * they changed, so a select is never replaced under the host's finger); `addPeople(list)`
 * names members the page learnt of (a class roster just made: `{userId, username,
 * displayName}`), so the host can seat them.
 */
export function teamsSection(league, context, owner) {
  if (!league.teams) return null;
  const body = h('div', {});
  const state = {
    league, owner, me: context.user, teams: [], known: new Map(), stamp: null,
    status: h('p', { class: 'hint', id: 'teams-status', role: 'status' }),
    unassigned: h('div', { id: 'unassigned' }),
    list: h('div', {}),
    say(text) { state.status.textContent = text; },
    /** Everyone the page can name: the server's members (a team league's host gets
     * `students`), the class logins made here, and every team's members. */
    people() {
      const all = new Map(state.known);
      for (const s of state.league.students ?? []) all.set(s.userId, s);
      for (const team of state.teams) for (const m of team.members) if (!all.has(m.userId)) all.set(m.userId, m);
      return [...all.values()].sort((a, b) => memberName(a).localeCompare(memberName(b)));
    },
    nameOf(member) {
      const known = (state.league.students ?? []).find((s) => s.userId === member.userId) ?? state.known.get(member.userId);
      return memberName(known ?? member);
    },
    teamOfUser(userId) {
      return state.teams.find((team) => team.members.some((m) => m.userId === userId));
    },
    async seat(member, teamId, role, select) {
      select.disabled = true;
      try {
        const team = await api(`/api/leagues/${league.id}/teams/${teamId}/members/${member.userId}`, { method: 'PUT', body: { role } });
        state.say(`${state.nameOf(member)} is ${roleWords(role)} on “${team.name}”.`);
      } catch (problem) {
        state.say(problem.message);
      }
      await state.reload();
    },
    async takeOff(member, team) {
      try {
        await api(`/api/leagues/${league.id}/teams/${team.id}/members/${member.userId}`, { method: 'DELETE' });
        state.known.set(member.userId, state.known.get(member.userId) ?? member);
        state.say(`${state.nameOf(member)} is off “${team.name}”: no longer trading or watching its portfolio.`);
      } catch (problem) {
        state.say(problem.message);
      }
      await state.reload();
    },
    async reload() {
      try {
        state.teams = await api(`/api/leagues/${state.league.id}/teams`);
        for (const team of state.teams) for (const m of team.members) if (!state.known.has(m.userId)) state.known.set(m.userId, m);
        draw();
      } catch (problem) {
        fill(body, failure(problem, () => state.reload()));
      }
    },
  };
  let built = false;
  function draw() {
    // Drawn again only when what it shows changed: a select open under the host's finger stays.
    const mine = state.teams.flatMap((team) => team.members.filter((m) => m.userId === state.me?.id).map((m) => ({ team, role: m.role })))[0];
    // The host sees their own seat, if any, in the list of teams.
    const stamp = JSON.stringify([state.teams, state.people().map((p) => [p.userId, memberName(p)]),
      (state.league.members ?? []).map((s) => [s.teamId, s.rank, s.netWorth, s.returnPercent])]);
    if (stamp === state.stamp && built) return;
    state.stamp = stamp;
    if (owner) {
      fill(state.unassigned, unassignedPart(state));
      fill(state.list, h('h3', {}, 'Teams'), teamCards(state));
      if (!built) fill(body, hostPart(state));
    } else {
      fill(body, minePart(state, mine), h('h3', {}, 'Teams in this league'), teamCards(state));
    }
    built = true;
  }
  const node = h('section', { class: 'card', id: 'teams', 'aria-labelledby': 'teams-title' },
    h('h2', { id: 'teams-title' }, owner ? 'Teams' : 'Your team'), body);
  state.reload();
  return {
    node,
    update(fresh) { state.league = fresh; state.reload(); },
    addPeople(list) {
      for (const p of list) state.known.set(p.userId, { userId: p.userId, username: p.username, displayName: p.displayName ?? null });
      draw();
    },
  };
}
