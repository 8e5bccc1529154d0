// A scenario league's market on the league page (a window of stored history replayed one
// trading day at a time, on the league's clock or as its host advances it): the day it
// has come to and when the next comes, the host's Next day, its companies (each opening
// its stock page in the league), the events the host scripts, and once the league has
// ended, what the period really was and how each member did against holding the market.
// The create form's Market fields are here too. Every price, day and return is the
// server's (GET /api/leagues/{id}/market); a blind league's real names and dates reach
// the page only once the server reveals them.
import { api, marketHistory } from '../api.js';
import { h, fill, table, cards, stacked, signed, errorLine, onSubmitShowing, dayText, failure, memberName, count } from '../dom.js';
import { compare, percent, price } from '../decimal.js';
import { quoteCell } from '../live.js';

/** How many companies a table lists before "Show all". */
const SHORT_LIST = 10;

/** "2026-03-14" of a day `days` after `day` (both YYYY-MM-DD, counted in UTC). */
function dayAfter(day, days) {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, date + days)).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (YYYY-MM-DD). */
function daysBetween(a, b) {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86400000);
}

/**
 * The create form's Market: today's real market (the default), or a replay of a period of
 * the stored history — its first and last day (bounded by the history's span, or a random
 * window of some weeks inside it), blind or not, and a new day every N minutes or as the
 * host advances it. Only an isolated league has a market of its own: `show(isolated)`.
 * `value()` is the request's `market` (undefined for today's market), or throws words.
 * `onChange()` is told when the choice changes (a replay takes no symbol list).
 */
export function marketFields(onChange) {
  const kind = h('select', { id: 'league-market-kind' },
    h('option', { value: 'real' }, 'Today\'s market'),
    h('option', { value: 'replay' }, 'Replay a period of the past'));
  const from = h('input', { id: 'league-market-from', type: 'date' });
  const to = h('input', { id: 'league-market-to', type: 'date' });
  const weeks = h('input', { id: 'league-market-weeks', type: 'number', min: 1, max: 150, step: 1, value: 8, inputmode: 'numeric' });
  const span = h('p', { class: 'hint', id: 'league-market-span' });
  // Not an `.error` line: the form's own refusal stays its only one.
  const randomError = h('p', { class: 'warning', id: 'league-market-random-error', role: 'alert', hidden: true });
  const blind = h('input', { type: 'checkbox', id: 'league-market-blind' });
  const pace = h('select', { id: 'league-market-pace' },
    h('option', { value: 'clock' }, 'A new day every few minutes'),
    h('option', { value: 'host' }, 'I advance the days'));
  const minutes = h('input', { id: 'league-market-minutes', type: 'number', min: 1, max: 1440, step: 1, value: 5, inputmode: 'numeric' });
  const minutesRow = h('div', { id: 'league-market-minutes-row' }, h('label', { for: 'league-market-minutes' }, 'Minutes a league day lasts (1–1440)'), minutes);
  let history = null;
  marketHistory().then((found) => {
    if (!found) return;
    history = found;
    for (const input of [from, to]) { input.min = found.from; input.max = found.through; }
    span.textContent = `The stored history runs from ${dayText(found.from)} to ${dayText(found.through)}.`;
  }).catch(() => {});
  // A random window of whole weeks inside the history: the host need not know its dates.
  const random = h('button', { type: 'button', id: 'league-market-random', onclick: () => {
    randomError.hidden = true;
    const length = Number(weeks.value) * 7;
    if (!Number.isInteger(length) || length < 7) { randomError.textContent = 'Weeks: a whole number, 1 or more.'; randomError.hidden = false; return; }
    const room = history ? daysBetween(history.from, history.through) - length + 1 : -1;
    if (room < 0) {
      randomError.textContent = history ? `The stored history is shorter than ${count(Number(weeks.value), 'week')}.` : 'The stored history is not known yet: try again in a moment.';
      randomError.hidden = false;
      return;
    }
    from.value = dayAfter(history.from, Math.floor(Math.random() * (room + 1)));
    to.value = dayAfter(from.value, length - 1);
    onChange?.();
  } }, 'Random period');
  const replay = h('div', { id: 'league-market-replay' },
    span,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'league-market-from' }, 'From'), from),
      h('div', {}, h('label', { for: 'league-market-to' }, 'To'), to)),
    h('div', { class: 'random-period' },
      h('label', { class: 'inline', for: 'league-market-weeks' }, 'or', weeks, 'weeks at random'), random),
    randomError,
    h('label', { class: 'check', for: 'league-market-blind' }, blind, ' Blind: hide the companies\' names and the period\'s dates until the league ends'),
    h('p', { class: 'hint' }, 'Members see “S01”, “Company 01”… each starting at 100.00, and guess what happened.'),
    h('label', { for: 'league-market-pace' }, 'Days'), pace, minutesRow,
    h('p', { class: 'hint' }, 'Day 1 is the first trading day of the period. Prices move only when a new league day comes (you press Next day on the league page, or its clock does); orders wait for it.'));
  const fieldset = h('fieldset', { id: 'league-market-fields' },
    h('legend', {}, 'Market (isolated leagues)'),
    h('label', { for: 'league-market-kind' }, 'What members trade'), kind,
    h('p', { class: 'hint', id: 'league-market-kind-hint' }, 'Today\'s market: real stocks at today\'s prices. A replayed period: a market of the league\'s own, '
      + 'the stored history\'s companies at that period\'s prices, one trading day at a time.'),
    replay);
  const update = () => {
    replay.hidden = kind.value !== 'replay';
    minutesRow.hidden = pace.value !== 'clock';
  };
  kind.addEventListener('change', () => { update(); onChange?.(); });
  for (const input of [from, to]) input.addEventListener('input', () => onChange?.());
  pace.addEventListener('change', update);
  update();
  return {
    fieldset,
    show(isolated) { fieldset.hidden = !isolated; },
    replays: () => !fieldset.hidden && kind.value === 'replay',
    value() {
      if (fieldset.hidden || kind.value !== 'replay') return undefined;
      if (!from.value || !to.value) throw new Error('Market: choose the first and the last day of the period (or Random period).');
      const clocked = pace.value === 'clock';
      if (clocked && !/^\d+$/.test(minutes.value.trim())) throw new Error('Minutes a league day lasts: a whole number from 1 to 1440.');
      return { kind: 'replay', from: from.value, to: to.value, dayMinutes: clocked ? Number(minutes.value) : null, blind: blind.checked };
    },
  };
}

/** "3:05", "1:02:09": the time left until `moment`. */
function timeLeft(moment) {
  const seconds = Math.max(0, Math.ceil((Date.parse(moment) - Date.now()) / 1000));
  const two = (n) => String(n).padStart(2, '0');
  const [hours, rest] = [Math.floor(seconds / 3600), seconds % 3600];
  return hours > 0 ? `${hours}:${two(Math.floor(rest / 60))}:${two(rest % 60)}` : `${Math.floor(rest / 60)}:${two(rest % 60)}`;
}

/** A company's change since day 1 (the server's `changePercent`), coloured. */
function sinceDayOne(symbol) {
  return signed(symbol.changePercent ?? '0', percent(symbol.changePercent));
}

/** The period's days in words: "1 Feb 2024 – 30 Apr 2024". */
function periodText(market) {
  return `${dayText(market.from)} – ${dayText(market.to)}`;
}

/** What the market panel says of the days: when the next comes, or why none will. */
function nextDayText(market) {
  if (market.ended) return `The league has ended, on day ${market.day} of ${market.days}.`;
  if (market.day >= market.days) return 'This is the period\'s last day: prices move no more.';
  if (market.dayMinutes == null) return 'The host starts each new day.';
  const every = market.dayMinutes === 1 ? 'every minute' : `every ${count(market.dayMinutes, 'minute')}`;
  if (!market.nextDayAt) return `A new day ${every}.`;
  return `A new day ${every}: day ${market.day + 1} in ${timeLeft(market.nextDayAt)} (at ${new Date(market.nextDayAt).toLocaleTimeString(undefined, { timeStyle: 'short' })}).`;
}

/** Orders two companies by their change since day 1, exactly. */
const byChange = (a, b) => compare(a.changePercent ?? '0', b.changePercent ?? '0');

/** The companies in the order picked: by symbol, or by their change since day 1. */
const SORTS = {
  symbol: ['A–Z', (a, b) => a.symbol.localeCompare(b.symbol)],
  best: ['Best since day 1', (a, b) => byChange(b, a)],
  worst: ['Worst since day 1', byChange],
};

/** The league's companies: symbol (opening its page in the league), name, price (moving
 * live) and change since day 1; the first few, or all. */
function companiesTable(state) {
  const { market, leagueId } = state;
  const sorted = [...market.symbols].sort(SORTS[state.sort][1]);
  const shown = state.showAll ? sorted : sorted.slice(0, SHORT_LIST);
  const wrapped = h('div', { class: 'quotes', id: 'league-instruments' }, table([
    { title: 'Symbol', cell: (s) => h('a', { href: `#/stock/${encodeURIComponent(s.symbol)}?league=${leagueId}`, class: 'symbol' }, s.symbol) },
    { title: 'Company', class: 'company', cell: (s) => s.name },
    { title: 'Price', class: 'num price', cell: (s) => quoteCell(s.symbol, 'price', s) },
    { title: 'Since day 1', class: 'num change', cell: (s) => h('span', { dataset: { since: s.symbol } }, sinceDayOne(s)) },
  ], shown, { empty: 'This market lists no company.' }));
  return { wrapped, shown: shown.map((s) => s.symbol) };
}

/** "Show all 98 companies" / "Show the first 10": `toggle()` when pressed. */
function moreButton(id, all, total, toggle) {
  if (total <= SHORT_LIST) return null;
  return h('button', { type: 'button', class: 'link', id, onclick: toggle }, all ? `Show the first ${SHORT_LIST}` : `Show all ${total} companies`);
}

/** The host's Next day and +5 days, in a league whose host advances its days. */
function advanceButtons(state, act) {
  const { market } = state;
  if (!state.owner || market.dayMinutes != null || market.ended) return null;
  const last = market.day >= market.days;
  return h('div', { class: 'actions', id: 'market-advance' },
    h('button', { type: 'button', class: 'primary', id: 'market-next-day', disabled: last, onclick: () => act(1) }, 'Next day'),
    h('button', { type: 'button', id: 'market-advance-5', disabled: last, onclick: () => act(5) }, '+5 days'));
}

/** The market panel: the day, the period (or that it is hidden), when the next day comes,
 * the market's return, the host's buttons, and the companies (until the league ends,
 * when the reveal lists them). */
function drawPanel(state, node, act) {
  const { market } = state;
  const revealed = market.from && market.to;
  const sort = h('select', { id: 'instruments-sort' }, Object.entries(SORTS).map(([value, [label]]) => h('option', { value, selected: value === state.sort }, label)));
  sort.addEventListener('change', () => { state.sort = sort.value; state.redraw(); });
  const companies = market.ended ? null : companiesTable(state);
  state.shownSymbols = companies?.shown ?? [];
  fill(node,
    h('div', { class: 'heading' },
      h('h2', { id: 'market-title' }, 'The league\'s market'),
      h('span', { class: 'tag', id: 'market-kind' }, market.blind ? 'blind replay' : 'replay')),
    h('section', { class: 'summary', 'aria-label': 'The market now' },
      h('div', {}, h('span', { class: 'label' }, 'League day'), h('strong', { id: 'market-day' }, `Day ${market.day} of ${market.days}`)),
      h('div', {}, h('span', { class: 'label' }, 'Period'),
        revealed ? h('strong', { id: 'market-period' }, periodText(market))
          : h('strong', { id: 'market-period', class: 'hidden-period' }, 'Hidden until the league ends')),
      h('div', {}, h('span', { class: 'label' }, 'The market since day 1'),
        h('strong', { id: 'market-return' }, signed(market.marketReturnPercent, percent(market.marketReturnPercent))),
        h('span', { class: 'hint' }, 'Every company held in equal amounts'))),
    h('p', { id: 'market-next', role: 'status' }, nextDayText(market)),
    advanceButtons(state, act), state.status, state.error,
    companies ? [
      h('div', { class: 'heading companies-heading' },
        h('h3', {}, market.blind && !market.ended ? 'Companies (names hidden)' : 'Companies'),
        h('label', { class: 'inline', for: 'instruments-sort' }, 'Sort', sort)),
      companies.wrapped,
      moreButton('instruments-more', state.showAll, market.symbols.length, () => { state.showAll = !state.showAll; state.redraw(); }),
      h('p', { class: 'hint' }, 'Open a company to see its chart and trade it in your league portfolio.')] : null);
}

/** The reveal, once the league has ended: the period's real dates, each company's real
 * symbol and name with its change over the league (a blind league's), and how each member
 * did against holding every company in equal amounts. */
function drawReveal(state, node) {
  const { market, league } = state;
  node.hidden = !market.ended;
  if (!market.ended) { node.replaceChildren(); return; }
  const sorted = [...market.symbols].sort(SORTS[state.revealSort ?? 'symbol'][1]);
  const shown = state.revealAll ? sorted : sorted.slice(0, SHORT_LIST);
  const sort = h('select', { id: 'reveal-sort' }, Object.entries(SORTS).map(([value, [label]]) =>
    h('option', { value, selected: value === (state.revealSort ?? 'symbol') }, label.replace('A–Z', 'By alias'))));
  sort.addEventListener('change', () => { state.revealSort = sort.value; state.redraw(); });
  const members = market.againstMarket ?? [];
  const me = state.me;
  const mine = members.find((s) => me && (s.userId === me.id || (s.members ?? []).includes(me.username)));
  fill(node,
    h('h2', { id: 'reveal-title' }, market.blind ? 'The reveal: what the period really was' : 'How the period went'),
    h('p', { id: 'reveal-period' }, `The league's ${count(market.days, 'day')} were the trading days from `,
      h('strong', {}, dayText(market.from)), ' to ', h('strong', {}, dayText(market.to)), ` of the stored history; it ended on day ${market.day}.`),
    market.blind ? [
      h('div', { class: 'heading companies-heading' },
        h('h3', {}, 'The companies'),
        h('label', { class: 'inline', for: 'reveal-sort' }, 'Sort', sort)),
      h('div', { class: 'quotes reveal', id: 'reveal-companies' }, table([
        { title: 'Alias', cell: (s) => h('a', { href: `#/stock/${encodeURIComponent(s.symbol)}?league=${state.leagueId}`, class: 'symbol' }, s.symbol) },
        { title: 'Really', class: 'company', cell: (s) => [h('strong', { class: 'real-symbol' }, s.realSymbol ?? '—'), ' ', h('span', { class: 'real-name' }, s.realName ?? '')] },
        { title: 'Last price', class: 'num price', cell: (s) => price(s.price) },
        { title: 'Over the league', class: 'num change', cell: (s) => sinceDayOne(s) },
      ], shown)),
      moreButton('reveal-more', state.revealAll, market.symbols.length, () => { state.revealAll = !state.revealAll; state.redraw(); })] : null,
    h('h3', {}, 'Against the market'),
    h('p', { id: 'reveal-market' }, 'Holding every company in equal amounts from day 1 returned ',
      h('strong', {}, signed(market.marketReturnPercent, percent(market.marketReturnPercent))), '.',
      mine ? [' ', h('span', { id: 'reveal-mine' }, yourResult(mine))] : null),
    Object.assign(stacked(table([
      { title: league.teams ? 'Team' : 'Player', class: 'player', cell: (s) => h('span', { class: s === mine ? 'me' : '' }, `${s.rank}. ${s.teamName ?? memberName(s)}`) },
      { title: 'Return', class: 'num', cell: (s) => signed(s.returnPercent, percent(s.returnPercent)) },
      { title: 'The market', class: 'num', cell: () => percent(market.marketReturnPercent) },
      { title: 'Against it', class: 'num against', cell: (s) => signed(s.differencePercent, percent(s.differencePercent)) },
    ], members, { empty: 'Nobody played.' })), { id: 'reveal-members' }));
}

/** "You returned +3.10%: 1.25 points more than holding the market." */
function yourResult(standing) {
  const difference = standing.differencePercent;
  const points = difference.replace('-', '');
  const how = /[1-9]/.test(difference) ? `${points} points ${difference.startsWith('-') ? 'less' : 'more'} than holding the market` : 'just what holding the market returned';
  return `${standing.teamName ? 'Your team' : 'You'} returned ${percent(standing.returnPercent)}: ${how}.`;
}

/** "−30%" of an event's change; "Whole market" or its symbols. */
function eventWords(event) {
  return { change: percent(event.changePercent), moves: event.symbols ? event.symbols.join(', ') : 'Whole market' };
}

/** The events: the host's every scripted one (whether it happened) and a form to add one;
 * a member's those that happened. */
function drawEvents(state, node, form, status) {
  const { owner, events, market } = state;
  const list = owner ? cards(table([
    { title: 'Headline', class: 'headline', cell: (e) => [h('strong', {}, e.headline), e.body ? h('span', { class: 'muted event-body' }, e.body) : null] },
    { title: 'Day', class: 'num', cell: (e) => String(e.day) },
    { title: 'Moves', cell: (e) => eventWords(e).moves },
    { title: 'Change', class: 'num', cell: (e) => signed(e.changePercent, eventWords(e).change) },
    { title: 'Status', class: 'status', cell: (e) => (e.applied ? h('span', { class: 'status-filled' }, 'Happened') : 'Scheduled') },
  ], events, { empty: 'No events yet: script one below.' }))
    : events.length === 0 ? h('p', { class: 'empty', id: 'events-empty' }, 'Nothing has happened yet.')
      : h('ul', { class: 'entries', id: 'events-list' }, [...events].reverse().map((e) => h('li', { dataset: { event: e.id } },
        h('h3', {}, e.headline),
        h('p', { class: 'muted when' }, `Day ${e.day} · ${eventWords(e).moves} `, signed(e.changePercent, eventWords(e).change)),
        e.body ? h('p', { class: 'body' }, e.body) : null)));
  if (owner) list.id = 'events-table';
  fill(node,
    h('h2', { id: 'events-title' }, owner ? 'Scripted events' : 'Events'),
    h('p', { class: 'hint' }, owner
      ? 'On its day an event moves its companies (or the whole market) by its change, and its headline is posted as league news. Members see it only then.'
      : 'What happened to the market: the host\'s news reaches you on its day.'),
    list, status,
    owner && !market.ended && market.day < market.days ? form : null);
}

/** The host's form to script an event: a day after today, its companies (none: the whole
 * market), the change in percent, a headline and an optional story. */
function eventForm(state, done) {
  const day = h('input', { id: 'event-day', type: 'number', step: 1, required: true, inputmode: 'numeric' });
  const symbols = h('input', { id: 'event-symbols', placeholder: 'the whole market', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'event-symbols-hint' });
  const change = h('input', { id: 'event-change', inputmode: 'decimal', placeholder: '-30', required: true, 'aria-describedby': 'event-change-hint' });
  const headline = h('input', { id: 'event-headline', maxlength: 120, required: true, autocomplete: 'off' });
  const body = h('textarea', { id: 'event-body', rows: 2, maxlength: 2000 });
  const error = errorLine('event-error');
  const form = h('details', { class: 'post', id: 'event-post' }, h('summary', {}, 'Script an event'),
    h('form', { id: 'event-form' },
      h('div', { class: 'pair' },
        h('div', {}, h('label', { for: 'event-day' }, 'League day'), day),
        h('div', {}, h('label', { for: 'event-change' }, 'Change (%)'), change)),
      h('p', { class: 'hint', id: 'event-change-hint' }, 'From −90 to 500: -30 takes 30% off the price, 12.5 adds 12.5%.'),
      h('label', { for: 'event-symbols' }, 'Companies'), symbols,
      h('p', { class: 'hint', id: 'event-symbols-hint' }, 'Symbols as the league shows them, comma-separated (S01, S07); empty for the whole market.'),
      h('label', { for: 'event-headline' }, 'Headline'), headline,
      h('label', { for: 'event-body' }, 'Story (optional)'), body,
      error, h('button', { type: 'submit', class: 'primary' }, 'Schedule event')));
  onSubmitShowing(form.querySelector('form'), error, async () => {
    const typed = change.value.trim();
    if (!/^[-+]?\d+(\.\d{1,4})?$/.test(typed)) {
      throw new Error('Change: a percent such as -30 or 12.5 (digits, a minus for a fall, at most four decimals; no % sign).');
    }
    const list = symbols.value.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
    const event = await api(`/api/leagues/${state.leagueId}/events`, {
      method: 'POST',
      body: { day: Number(day.value), changePercent: typed.replace(/^\+/, ''), headline: headline.value.trim(),
        symbols: list.length > 0 ? list : null, body: body.value.trim() || undefined },
    });
    for (const input of [symbols, change, headline, body]) input.value = '';
    done(`Event “${event.headline}” scheduled for day ${event.day}.`);
  });
  return {
    node: form,
    /** Day's bounds follow the market: a day after today, up to the last. */
    bound(market) {
      day.min = String(Math.max(2, market.day + 1));
      day.max = String(market.days);
      if (!day.value || Number(day.value) <= market.day) day.value = String(Math.min(market.days, market.day + 1));
    },
  };
}

/**
 * The market of a scenario league on its page: the panel (with the host's buttons), the
 * events and, once the league has ended, the reveal — each read from the server
 * (`/market`, `/events`) whenever `update(league)` is told of the league anew (a
 * notification, standings that moved, polling), when a company's quote moves (a new
 * league day), when the clock's next day or the league's end comes, and after the host
 * acts. `follow(symbols)` is told which companies' quotes the page shows.
 */
export function marketSection(league, context, owner, follow) {
  const state = {
    leagueId: league.id, league, owner, me: context.user, market: null, events: [], sort: 'symbol', showAll: false,
    revealAll: false, shownSymbols: [],
    status: h('p', { class: 'hint', id: 'market-status', role: 'status' }),
    error: errorLine('market-error'),
  };
  const panel = h('section', { class: 'card', id: 'league-market', 'aria-labelledby': 'market-title' });
  const events = h('section', { class: 'card', id: 'league-events', 'aria-labelledby': 'events-title' });
  const reveal = h('section', { class: 'card', id: 'league-reveal', 'aria-labelledby': 'reveal-title', hidden: true });
  const said = (words) => { state.status.textContent = words; };
  const eventStatus = h('p', { class: 'hint', id: 'event-status', role: 'status' });
  const form = owner ? eventForm(state, (words) => { eventStatus.textContent = words; read(); }) : null;
  let followed = '';
  // Each part is drawn again only when what it shows has changed, so a read that brings
  // nothing new leaves the host's event form (and the focus) as it is.
  const drawn = { panel: null, reveal: null, events: null };
  const again = (part, stamp) => { if (drawn[part] === stamp) return false; drawn[part] = stamp; return true; };
  state.redraw = () => {
    const { market, events: list } = state;
    if (!market) return;
    const view = { sort: state.sort, showAll: state.showAll, revealAll: state.revealAll, revealSort: state.revealSort };
    if (again('panel', JSON.stringify({ market, view }))) drawPanel(state, panel, advance);
    if (again('reveal', JSON.stringify({ market, view }))) drawReveal(state, reveal);
    if (again('events', JSON.stringify({ list, day: market.day, ended: market.ended }))) {
      form?.bound(market);
      drawEvents(state, events, form?.node, eventStatus);
    }
    const symbols = state.shownSymbols.join();
    if (symbols !== followed) { followed = symbols; follow(state.shownSymbols); }
  };
  let asked = 0;
  async function read() {
    const ticket = ++asked;
    try {
      const [market, list] = await Promise.all([api(`/api/leagues/${league.id}/market`), api(`/api/leagues/${league.id}/events`)]);
      if (ticket !== asked || !context.current()) return;
      state.market = market;
      state.events = list;
      state.redraw();
      planTimers();
    } catch (problem) {
      if (ticket === asked && !state.market) fill(panel, h('h2', { id: 'market-title' }, 'The league\'s market'), failure(problem, read));
    }
  }
  async function advance(days) {
    state.error.hidden = true;
    for (const button of panel.querySelectorAll('#market-advance button')) button.disabled = true;
    try {
      const market = await api(`/api/leagues/${league.id}/market/advance`, { method: 'POST', body: { days } });
      said(market.day >= market.days ? `Day ${market.day} of ${market.days}: the period's last day.` : `Day ${market.day} of ${market.days} has begun.`);
      await read();
    } catch (problem) {
      state.error.textContent = problem.message;
      state.error.hidden = false;
      await read();
    } finally {
      // Buttons not drawn again (nothing changed) take clicks again, up to the last day.
      const last = state.market.day >= state.market.days;
      for (const button of panel.querySelectorAll('#market-advance button')) button.disabled = last;
    }
  }
  // The countdown to the clock's next day, read again once it has come; the league's end
  // (its reveal) read when it comes.
  let ticker = null;
  let ending = null;
  function planTimers() {
    clearInterval(ticker);
    clearTimeout(ending);
    const { market } = state;
    if (market.nextDayAt && !market.ended) {
      let due = false;
      ticker = setInterval(() => {
        const line = panel.querySelector('#market-next');
        if (!context.current() || !line) { clearInterval(ticker); return; }
        line.textContent = nextDayText(market);
        if (!due && Date.now() > Date.parse(market.nextDayAt) + 1500) { due = true; read(); }
      }, 1000);
    }
    const left = state.league.endsAt ? Date.parse(state.league.endsAt) - Date.now() : null;
    if (!market.ended && left !== null && left < 86400000) {
      ending = setTimeout(() => { if (context.current()) read(); }, Math.max(0, left) + 1500);
    }
  }
  // A company's new price is a new league day: the day, the returns and the events anew.
  let soon = null;
  context.live.on('quote', (quote) => {
    if (!state.market?.symbols.some((s) => s.symbol === quote.symbol) || soon) return;
    soon = setTimeout(() => { soon = null; read(); }, 700);
  });
  // The league page tells `update` of the league as soon as it draws it: the first read.
  return {
    nodes: [reveal, panel, events],
    update(fresh) { state.league = fresh; read(); },
  };
}
