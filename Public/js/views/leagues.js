import { api } from '../api.js';
import { h, fill, table, signed, confirmAction, onSubmit, amountProblem } from '../dom.js';
import { percent, inCurrency, CURRENCIES } from '../decimal.js';

const PAGE = 50;

/** A league's bot policy in words: a short name, and what it means. */
export const BOT_POLICIES = {
  allowed: ['Allowed', 'bots play and are ranked with everyone'],
  separate: ['Ranked apart', 'bots play, ranked in a table of their own'],
  forbidden: ['Forbidden', 'no bot joins, and no API key trades here'],
};

/** A select of the bot policies: each named, and with `meaning`, explained. */
function botPolicySelect(id, chosen = 'allowed', meaning = true) {
  return h('select', { id }, Object.entries(BOT_POLICIES).map(([value, [label, what]]) =>
    h('option', { value, selected: value === chosen }, meaning ? `${label} — ${what}` : label)));
}

function dateText(value) {
  return value ? new Date(value).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) : 'open-ended';
}

/** "2026-12-01T09:30" from a datetime-local input → RFC 3339 in UTC. */
function isoFromLocal(value) {
  return value ? new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
}

export async function leaguesView(root, context) {
  const leagues = await api('/api/leagues');
  if (!context.current()) return;

  const createError = h('p', { class: 'error', role: 'alert', hidden: true });
  const name = h('input', { id: 'league-name', required: true, maxlength: 64 });
  const mode = h('select', { id: 'league-mode' },
    h('option', { value: 'shared' }, 'Shared — ranks personal portfolios'),
    h('option', { value: 'isolated' }, 'Isolated — a fresh league portfolio each'));
  const startingCash = h('input', { id: 'league-cash', inputmode: 'decimal', value: '100000.00' });
  const currency = h('select', { id: 'league-currency' }, CURRENCIES.map((c) => h('option', { value: c }, c)));
  const startsAt = h('input', { id: 'league-starts', type: 'datetime-local' });
  const endsAt = h('input', { id: 'league-ends', type: 'datetime-local' });
  const maxMembers = h('input', { id: 'league-max', type: 'number', min: 1, step: 1 });
  const bots = botPolicySelect('league-bot-policy');
  const rules = rulesFields();
  const showRules = () => {
    rules.fieldset.hidden = mode.value !== 'isolated';
    currencyRow.hidden = mode.value !== 'isolated';
    rules.spreadRow.hidden = currency.value === 'USD';
  };
  const currencyRow = h('div', {}, h('label', { for: 'league-currency' }, 'Currency its portfolios hold (isolated leagues)'), currency);
  mode.addEventListener('change', showRules);
  currency.addEventListener('change', showRules);
  showRules();
  const create = h('form', { class: 'card', id: 'create-league' },
    h('h2', {}, 'Create a league'),
    h('label', { for: 'league-name' }, 'Name'), name,
    h('label', { for: 'league-mode' }, 'Mode'), mode,
    h('label', { for: 'league-cash' }, 'Starting cash (isolated leagues)'), startingCash,
    currencyRow,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'league-starts' }, 'Starts (optional)'), startsAt),
      h('div', {}, h('label', { for: 'league-ends' }, 'Ends (optional)'), endsAt)),
    h('label', { for: 'league-max' }, 'Most members (optional)'), maxMembers,
    h('label', { for: 'league-bot-policy' }, 'Bots'), bots,
    rules.fieldset,
    createError, h('button', { type: 'submit', class: 'primary' }, 'Create league'));
  onSubmit(create, async () => {
    createError.hidden = true;
    const cashProblem = startingCash.value.trim() && amountProblem(startingCash.value, 'Starting cash');
    if (cashProblem) throw new Error(cashProblem);
    const body = { name: name.value.trim(), mode: mode.value, startingCash: startingCash.value.trim() || undefined,
      startsAt: isoFromLocal(startsAt.value), endsAt: isoFromLocal(endsAt.value),
      maxMembers: maxMembers.value ? Number(maxMembers.value) : undefined,
      bots: bots.value,
      currency: mode.value === 'isolated' && currency.value !== 'USD' ? currency.value : undefined,
      rules: mode.value === 'isolated' ? rules.value(currency.value !== 'USD') : undefined };
    const league = await api('/api/leagues/create', { method: 'POST', body });
    context.flash(`League “${league.name}” created. Share its code: ${league.code}`, 'info', true);
    context.navigate(`#/leagues/${league.id}`);
  }, (problem) => {
    createError.textContent = problem.message;
    createError.hidden = false;
  });

  const joinError = h('p', { class: 'error', role: 'alert', hidden: true });
  const code = h('input', { id: 'join-code', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'join-hint' });
  // A shared join link (/join/CODE) arrives here with its code filled in.
  code.value = context.query.get('join') ?? '';
  const join = h('form', { class: 'card', id: 'join-league' },
    h('h2', {}, 'Join a league'),
    h('label', { for: 'join-code' }, 'Join code'), code,
    h('p', { class: 'hint', id: 'join-hint' }, 'Type it in any case.'),
    joinError, h('button', { type: 'submit' }, 'Join'));
  onSubmit(join, async () => {
    joinError.hidden = true;
    const league = await api(`/api/leagues/join/${encodeURIComponent(code.value.trim())}`, { method: 'POST' });
    context.flash(`You joined “${league.name}”.`, 'info', true);
    context.navigate(`#/leagues/${league.id}`);
  }, (problem) => {
    joinError.textContent = problem.status === 404 ? 'No league has that code: check it letter by letter.' : problem.message;
    joinError.hidden = false;
  });

  fill(root,
    h('h1', {}, 'Leagues'),
    table([
      { title: 'League', cell: (l) => h('a', { href: `#/leagues/${l.id}` }, l.name) },
      { title: 'Mode', cell: (l) => l.mode },
      { title: 'Members', class: 'num', cell: (l) => String(l.memberCount) },
      { title: 'Ends', cell: (l) => dateText(l.endsAt) },
    ], leagues, { empty: 'You are in no league yet: create one or join one with its code.' }),
    h('div', { class: 'columns' }, create, join));
}

/** The rules of an isolated league: every field may stay empty for the server's default. */
function rulesFields() {
  const field = (id, label, attributes = {}) => {
    const input = h('input', { id, inputmode: 'decimal', ...attributes });
    return [input, h('div', {}, h('label', { for: id }, label), input)];
  };
  const [flat, flatRow] = field('rule-commission-flat', 'Commission per trade ($)', { placeholder: 'server default' });
  const [percent, percentRow] = field('rule-commission-percent', 'Commission (% of the amount)', { placeholder: '0' });
  const [position, positionRow] = field('rule-max-position', 'Largest position (% of net worth)', { placeholder: '100' });
  const types = [['market', 'Market'], ['limit', 'Limit'], ['stop', 'Stop'], ['stop_limit', 'Stop limit']].map(([value, label]) => {
    const box = h('input', { type: 'checkbox', id: `rule-type-${value}`, value, checked: true });
    return [box, h('label', { class: 'check', for: `rule-type-${value}` }, box, ` ${label}`)];
  });
  const symbols = h('input', { id: 'rule-symbols', placeholder: 'all symbols', autocomplete: 'off', spellcheck: 'false' });
  const shorts = h('input', { type: 'checkbox', id: 'rule-shorts' });
  const [margin, marginRow] = field('rule-margin', 'Short margin (% of the shorts\' value equity must cover)', { placeholder: '150' });
  const [spread, spreadRow] = field('rule-fx-spread', 'Exchange spread (% over the rate for buys, under it for sales)', { placeholder: '0' });
  const showMargin = () => { marginRow.hidden = !shorts.checked; };
  shorts.addEventListener('change', showMargin);
  showMargin();
  const fieldset = h('fieldset', { id: 'league-rules' },
    h('legend', {}, 'House rules (isolated leagues)'),
    h('div', { class: 'pair' }, flatRow, percentRow),
    positionRow,
    h('p', { class: 'label' }, 'Order types allowed'), h('div', { class: 'checks' }, types.map(([, label]) => label)),
    h('label', { for: 'rule-symbols' }, 'Only these symbols (comma-separated, optional)'), symbols,
    h('label', { class: 'check', for: 'rule-shorts' }, shorts, ' Allow short selling'), marginRow, spreadRow);
  const value = (foreign) => {
    const text = (input) => input.value.trim() || undefined;
    const list = symbols.value.split(',').map((s) => s.trim()).filter(Boolean);
    return {
      commissionFlat: text(flat), commissionPercent: text(percent), maxPositionPercent: text(position),
      allowedOrderTypes: types.filter(([box]) => box.checked).map(([box]) => box.value),
      allowedSymbols: list.length > 0 ? list : undefined,
      allowShortSelling: shorts.checked || undefined,
      shortMarginPercent: shorts.checked ? text(margin) : undefined,
      fxSpreadPercent: foreign ? text(spread) : undefined,
    };
  };
  return { fieldset, value, spreadRow };
}

/** The rules a league's portfolios trade under, in words. */
function rulesSummary(rules, currency) {
  const money = (text) => inCurrency(text, currency);
  const commission = [rules.commissionFlat !== '0.00' ? money(rules.commissionFlat) : null,
    rules.commissionPercent !== '0.00' ? `${rules.commissionPercent}%` : null].filter(Boolean).join(' + ') || 'none';
  const types = { market: 'market', limit: 'limit', stop: 'stop', stop_limit: 'stop limit' };
  return h('section', { id: 'rules', 'aria-label': 'Rules' },
    h('h2', {}, 'House rules'),
    h('dl', { class: 'rules' },
      h('dt', {}, 'Commission per trade'), h('dd', {}, commission),
      h('dt', {}, 'Largest position'), h('dd', {}, rules.maxPositionPercent === '100.00' ? 'no limit' : `${rules.maxPositionPercent}% of net worth`),
      h('dt', {}, 'Order types'), h('dd', {}, rules.allowedOrderTypes.map((t) => types[t] ?? t).join(', ')),
      h('dt', {}, 'Symbols'), h('dd', {}, rules.allowedSymbols ? rules.allowedSymbols.join(', ') : 'all'),
      h('dt', {}, 'Short selling'), h('dd', {}, rules.allowShortSelling ? `allowed (margin ${rules.shortMarginPercent}%)` : 'not allowed'),
      currency !== 'USD' ? [h('dt', {}, 'Currency'),
        h('dd', { id: 'league-currency-rule' }, `${currency}: dollar stocks at the rate now, ${rules.fxSpreadPercent}% over it for buys and under it for sales`)] : null));
}

/** A page offset from the query: a whole number, 0 by default. */
function offsetOf(text) {
  return Math.max(0, Number.parseInt(text || '0', 10) || 0);
}

/** The bot policy: in words for everyone, and for the owner a select to change it. */
function botPolicySection(league, owner, context) {
  const [label, meaning] = BOT_POLICIES[league.bots] ?? [league.bots, ''];
  const said = h('p', { id: 'bot-policy-text' }, h('strong', {}, `Bots: ${label}`), meaning ? ` — ${meaning}.` : '');
  if (!owner) return h('section', { id: 'bot-policy', 'aria-label': 'Bots' }, said);
  const select = botPolicySelect('bot-policy-select', league.bots, false);
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const form = h('form', { class: 'inline', id: 'bot-policy-form' },
    h('label', { class: 'inline', for: 'bot-policy-select' }, 'Change to', select),
    h('button', { type: 'submit' }, 'Save'));
  onSubmit(form, async () => {
    error.hidden = true;
    const updated = await api(`/api/leagues/${league.id}`, { method: 'PATCH', body: { bots: select.value } });
    const [newLabel, newMeaning] = BOT_POLICIES[updated.bots] ?? [updated.bots, ''];
    context.flash(`Bots in “${updated.name}”: ${newLabel.toLowerCase()} — ${newMeaning}.`);
    context.refresh();
  }, (problem) => {
    error.textContent = problem.message;
    error.hidden = false;
  });
  return h('section', { id: 'bot-policy', 'aria-label': 'Bots' }, said, form, error);
}

/** The timer that asks for the bots' table of the league on screen again. */
let botTimer = null;

export async function leagueView(root, context) {
  clearInterval(botTimer);
  const id = context.params[0];
  const offset = offsetOf(context.query.get('offset'));
  const botOffset = offsetOf(context.query.get('botOffset'));
  const botsPath = `/api/leagues/${id}/leaderboard?players=bots&limit=${PAGE}&offset=${botOffset}`;
  // The leaderboard as the server ranks it by default: everyone, or in a league that
  // ranks bots apart, the humans (and the bots in a table of their own, ranked by the
  // server among themselves).
  const [league, board] = await Promise.all([
    api(`/api/leagues/${id}`), api(`/api/leagues/${id}/leaderboard?limit=${PAGE}&offset=${offset}`),
  ]);
  const separate = league.bots === 'separate';
  const botBoard = separate ? await api(botsPath) : null;
  if (!context.current()) return;
  const me = context.user;
  const owner = me && league.ownerId === me.id;
  const money = (text) => inCurrency(text, league.currency || 'USD');
  const pageLink = (humans, bots) => {
    const query = new URLSearchParams();
    if (humans > 0) query.set('offset', String(humans));
    if (bots > 0) query.set('botOffset', String(bots));
    const text = query.toString();
    return `#/leagues/${id}${text ? `?${text}` : ''}`;
  };
  // New standings arrive on the live stream (or, without it, every 30 s). While the
  // players shown and their order stay the same, their figures change in place; when
  // someone joins, leaves, is removed or changes place, the board and the member count
  // are drawn again. The event carries the default board (humans in a league that ranks
  // bots apart) and comes when it changes: the bots' table is asked for again then, and
  // every 10 s, since a change among bots alone raises no event.
  const redraw = () => { if (context.current()) leagueView(root, context).catch(() => {}); };
  context.live.follow({ leagues: [Number(id)] });
  const boardTotal = board.total;
  let botsAsked = false;
  async function refreshBots() {
    if (!separate || botsAsked) return;
    botsAsked = true;
    try {
      const fresh = await api(botsPath);
      const shown = root.querySelector('#bot-board');
      // A bot that joined or left changes the member count too: draw the page again.
      if (fresh.total !== botBoard.total) redraw();
      else if (context.current() && shown) shown.replaceChildren(...botBlock(fresh));
    } catch { /* the next standings try again */ }
    botsAsked = false;
  }
  context.live.on('standings', (standings) => {
    if (String(standings.leagueId) !== String(id)) return;
    const board = root.querySelector('#standings');
    const shown = board ? [...board.querySelectorAll('[data-worth]')].map((cell) => cell.dataset.worth) : [];
    const sent = standings.items.map((s) => String(s.userId));
    // The event carries the top rows only: a change past them shows in the count.
    const sameRoster = offset === 0 && standings.total === boardTotal
      && sent.slice(0, PAGE).join() === shown.slice(0, sent.length).join();
    if (!sameRoster) { redraw(); return; }
    for (const s of standings.items) {
      const worth = board.querySelector(`[data-worth="${s.userId}"]`);
      const gain = board.querySelector(`[data-return="${s.userId}"]`);
      if (worth) worth.textContent = money(s.netWorth);
      if (gain) gain.replaceChildren(signed(s.returnPercent, percent(s.returnPercent)));
    }
    const asOf = root.querySelector('#standings-as-of');
    if (asOf) asOf.textContent = `As of ${new Date(standings.asOf).toLocaleString()}`;
    refreshBots();
  });
  context.poll(redraw, 30000);
  if (separate) {
    botTimer = setInterval(() => { if (context.current()) refreshBots(); else clearInterval(botTimer); }, 10000);
  }

  async function act(question, path, done) {
    if (!confirmAction(question)) return;
    try {
      await api(path, { method: 'DELETE' });
      done();
    } catch (problem) {
      context.flash(problem.message, 'error');
    }
  }
  const kickColumn = owner ? [{
    title: '', cell: (s) => s.userId === me.id ? '' : h('button', {
      type: 'button', class: 'danger small', dataset: { kick: s.username }, 'aria-label': `Kick ${s.username}`,
      onclick: () => act(s.bot ? `Remove the bot ${s.username} from “${league.name}”? It will not be able to rejoin.`
        : `Remove ${s.username} from “${league.name}”? They will not be able to rejoin.`,
      `/api/leagues/kick/${id}/${s.userId}`, () => { context.flash(`${s.username} was removed.`); context.refresh(); }),
    }, 'Kick'),
  }] : [];
  // A bot is marked as one, with its owner's name; the rank is the server's.
  const columns = [
    { title: 'Rank', class: 'num', cell: (s) => String(s.rank) },
    { title: 'Player', class: 'player', cell: (s) => h('span', { class: me && s.userId === me.id ? 'me' : '' }, s.username,
      s.bot ? [' ', h('span', { class: 'tag', title: 'A bot: it trades through API keys' }, 'bot'),
        s.ownerUsername ? [' ', h('span', { class: 'owner muted' }, `by ${s.ownerUsername}`)] : null] : null) },
    { title: 'Net worth', class: 'num', cell: (s) => h('span', { dataset: { worth: s.userId } }, money(s.netWorth)) },
    { title: 'Return', class: 'num', cell: (s) => h('span', { dataset: { return: s.userId } }, signed(s.returnPercent, percent(s.returnPercent))) },
    ...kickColumn,
  ];
  const standingsTable = (rows, tableId, empty) => {
    const wrapped = table(columns, rows, { empty });
    wrapped.id = tableId;
    return wrapped;
  };
  function botBlock(bots) {
    return [
      standingsTable(bots.items, 'bot-standings', 'No bots play here.'),
      h('nav', { class: 'pager', 'aria-label': 'Pages of bots' },
        botOffset > 0 ? h('a', { href: pageLink(offset, Math.max(0, botOffset - PAGE)) }, '← Better ranks') : null,
        botOffset + PAGE < bots.total ? h('a', { href: pageLink(offset, botOffset + PAGE) }, 'More →') : null),
    ];
  }

  fill(root,
    h('div', { class: 'heading' },
      h('h1', {}, league.name),
      h('div', { class: 'actions' },
        h('button', { type: 'button', id: 'leave-league', onclick: () => act(
          owner ? `You own “${league.name}”: leaving deletes it for everyone. Leave and delete?` : `Leave “${league.name}”?`,
          `/api/leagues/leave/${id}`, () => { context.flash('You left the league.', 'info', true); context.navigate('#/leagues'); }) }, 'Leave'),
        owner ? h('button', { type: 'button', class: 'danger', id: 'delete-league', onclick: () => act(
          `Delete “${league.name}” for all ${league.memberCount} members? This cannot be undone.`,
          `/api/leagues/${id}`, () => { context.flash('The league was deleted.', 'info', true); context.navigate('#/leagues'); }) }, 'Delete league') : null)),
    h('section', { class: 'summary', 'aria-label': 'League' },
      h('div', {}, h('span', { class: 'label' }, 'Join code'), h('strong', { id: 'league-code', class: 'code' }, league.code),
        h('a', { id: 'league-join-link', class: 'hint', href: `/join/${encodeURIComponent(league.code)}` }, `${location.origin}/join/${league.code}`)),
      h('div', {}, h('span', { class: 'label' }, 'Mode'), h('strong', {}, league.mode)),
      h('div', {}, h('span', { class: 'label' }, 'Members'), h('strong', { id: 'league-members' }, `${league.memberCount}${league.maxMembers ? ` of ${league.maxMembers}` : ''}`)),
      h('div', {}, h('span', { class: 'label' }, 'Runs'), h('strong', {}, `${dateText(league.startsAt)} – ${dateText(league.endsAt)}`)),
      h('div', {}, h('span', { class: 'label' }, 'Bots'), h('strong', { id: 'league-bots' }, (BOT_POLICIES[league.bots] ?? [league.bots])[0]))),
    botPolicySection(league, owner, context),
    league.mode === 'isolated' ? rulesSummary(league.rules, league.currency || 'USD') : null,
    h('h2', {}, 'Leaderboard'),
    h('p', { class: 'muted', id: 'standings-as-of' }, `As of ${new Date(board.asOf).toLocaleString()}`),
    separate ? h('h3', { id: 'humans-heading' }, 'People') : null,
    standingsTable(board.items, 'standings', separate ? 'No people play here.' : 'No members.'),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      offset > 0 ? h('a', { href: pageLink(Math.max(0, offset - PAGE), botOffset) }, '← Better ranks') : null,
      offset + PAGE < board.total ? h('a', { href: pageLink(offset + PAGE, botOffset) }, 'More →') : null),
    separate ? [h('h3', { id: 'bots-heading' }, 'Bots'), h('div', { id: 'bot-board' }, botBlock(botBoard))] : null);
}
