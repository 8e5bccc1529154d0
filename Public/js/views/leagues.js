import { api } from '../api.js';
import { h, fill, table, signed, confirmAction, amountProblem, dateText, whenText, errorLine, memberName, onSubmitShowing } from '../dom.js';
import { percent, inCurrency, CURRENCIES } from '../decimal.js';
import { frozenBanner, hostSection, hostStamp, isoFromLocal, myResetsSection, resetMemberButton, retentionField, retentionWords } from './league-host.js';
import { marketFields, marketSection } from './league-market.js';
import { journalSection, newsSection } from './league-notes.js';
import { auditSection, classSection } from './league-class.js';
import { labelRankings, rankingOf, rankingSelect, rankingWords, riskColumns, riskNote, showRisk, standingKey } from './league-ranking.js';
import { teamsSection } from './league-teams.js';

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

export async function leaguesView(root, context) {
  const leagues = await api('/api/leagues');
  if (!context.current()) return;

  const createError = errorLine();
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
  const hostOnly = h('input', { type: 'checkbox', id: 'league-host-only' });
  const journal = h('input', { type: 'checkbox', id: 'league-journal' });
  const teams = h('input', { type: 'checkbox', id: 'league-teams' });
  const resets = h('input', { id: 'league-resets', type: 'number', min: 0, max: 100, step: 1, inputmode: 'numeric', placeholder: '0', 'aria-describedby': 'league-resets-hint' });
  const rules = rulesFields();
  const retention = retentionField('league-delete-after');
  // A market of the league's own (a replayed period) is an isolated league's, and names
  // its own companies: no list of symbols goes with it.
  const market = marketFields(() => { showRules(); createError.hidden = true; });
  const showRules = () => {
    rules.fieldset.hidden = mode.value !== 'isolated';
    market.show(mode.value === 'isolated');
    rules.symbolsRow.hidden = market.replays();
    currencyRow.hidden = mode.value !== 'isolated';
    // A team league resets no member's portfolio: a team's is everyone's on it.
    resetsRow.hidden = mode.value !== 'isolated' || teams.checked;
    resets.disabled = resetsRow.hidden;
    journalRow.hidden = mode.value !== 'isolated';
    teamsRow.hidden = mode.value !== 'isolated';
    rules.spreadRow.hidden = currency.value === 'USD';
  };
  const currencyRow = h('div', {}, h('label', { for: 'league-currency' }, 'Currency its portfolios hold (isolated leagues)'), currency);
  const journalRow = h('div', { id: 'league-journal-row' },
    h('label', { class: 'check', for: 'league-journal' }, journal, ' Every trade needs a journal note (isolated leagues)'),
    h('p', { class: 'hint' }, 'Members say why they trade; you read their notes on the league page.'));
  const teamsRow = h('div', { id: 'league-teams-row' },
    h('label', { class: 'check', for: 'league-teams' }, teams, ' Teams: members play in teams (isolated leagues)'),
    h('p', { class: 'hint' }, 'You make the teams and put each member on one as a trader or a viewer; each team trades one portfolio, and the standings rank teams.'));
  const resetsRow = h('div', { id: 'league-resets-row' },
    h('label', { for: 'league-resets' }, 'Resets each member may make (isolated leagues)'), resets,
    h('p', { class: 'hint', id: 'league-resets-hint' }, 'How many times a member may reset their own league portfolio to the starting cash. You can reset anyone\'s at any time.'));
  mode.addEventListener('change', showRules);
  teams.addEventListener('change', showRules);
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
    market.fieldset,
    teamsRow,
    resetsRow,
    journalRow,
    h('label', { class: 'check', for: 'league-host-only' }, hostOnly, ' I host without playing'),
    h('p', { class: 'hint' }, 'You run the league but take no seat: no league portfolio, not ranked.'),
    retention.node,
    rules.fieldset,
    createError, h('button', { type: 'submit', class: 'primary' }, 'Create league'));
  onSubmitShowing(create, createError, async () => {
    const cashProblem = startingCash.value.trim() && amountProblem(startingCash.value, 'Starting cash');
    if (cashProblem) throw new Error(cashProblem);
    const body = { name: name.value.trim(), mode: mode.value, startingCash: startingCash.value.trim() || undefined,
      startsAt: isoFromLocal(startsAt.value), endsAt: isoFromLocal(endsAt.value),
      maxMembers: maxMembers.value ? Number(maxMembers.value) : undefined,
      bots: bots.value,
      ownerPlays: hostOnly.checked ? false : undefined,
      resetsAllowed: !resetsRow.hidden && resets.value ? Number(resets.value) : undefined,
      journalRequired: mode.value === 'isolated' && journal.checked ? true : undefined,
      teams: mode.value === 'isolated' && teams.checked ? true : undefined,
      currency: mode.value === 'isolated' && currency.value !== 'USD' ? currency.value : undefined,
      deleteManagedAfterDays: retention.value() ?? undefined,
      market: market.value(),
      rules: mode.value === 'isolated' ? rules.value(currency.value !== 'USD') : undefined };
    const league = await api('/api/leagues/create', { method: 'POST', body });
    context.flash(`League “${league.name}” created. Share its code: ${league.code}`, 'info', true);
    context.navigate(`#/leagues/${league.id}`);
  });

  const join = joinForm(context, leagues);
  const me = context.user;
  fill(root,
    h('h1', {}, 'Leagues'),
    table([
      { title: 'League', cell: (l) => [h('a', { href: `#/leagues/${l.id}` }, l.name),
        me && l.ownerId === me.id ? [' ', h('span', { class: 'tag', title: l.ownerPlays ? 'You host it and play in it' : 'You host it without playing' },
          l.ownerPlays ? 'host' : 'host, not playing')] : null,
        l.frozen ? [' ', h('span', { class: 'tag frozen', title: 'The host has frozen trading' }, 'frozen')] : null] },
      { title: 'Mode', cell: (l) => [l.mode, l.teams ? 'teams' : null, l.market ? (l.market.blind ? 'blind replay' : 'replay') : null].filter(Boolean).join(', ') },
      { title: 'Members', class: 'num', cell: (l) => String(l.memberCount) },
      { title: 'Ends', cell: (l) => dateText(l.endsAt, 'open-ended') },
    ], leagues, { empty: 'You are in no league yet: create one or join one with its code.' }),
    h('div', { class: 'columns' }, create, join));
}

/** Join a league by its code. A shared join link (/join/CODE) arrives with its code filled
 * in; when the visitor logged in or registered to follow it, it joins at once. A league one
 * is already in opens its page. */
function joinForm(context, leagues) {
  const joinError = errorLine();
  const code = h('input', { id: 'join-code', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'join-hint' });
  code.value = context.query.get('join') ?? '';
  const join = h('form', { class: 'card', id: 'join-league' },
    h('h2', {}, 'Join a league'),
    h('label', { for: 'join-code' }, 'Join code'), code,
    h('p', { class: 'hint', id: 'join-hint' }, 'Type it in any case.'),
    joinError, h('button', { type: 'submit' }, 'Join'));
  onSubmitShowing(join, joinError, async () => {
    const typed = code.value.trim();
    try {
      const league = await api(`/api/leagues/join/${encodeURIComponent(typed)}`, { method: 'POST' });
      context.flash(`You joined “${league.name}”.`, 'info', true);
      context.navigate(`#/leagues/${league.id}`);
    } catch (problem) {
      const mine = problem.code === 'already_member' && leagues.find((l) => l.code?.toUpperCase() === typed.toUpperCase());
      if (!mine) throw problem;
      context.flash(`You are in “${mine.name}” already.`, 'info', true);
      context.navigate(`#/leagues/${mine.id}`);
    }
  }, (problem) => (problem.status === 404 ? 'No league has that code: check it letter by letter.' : problem.message));
  if (context.afterLogin && code.value) setTimeout(() => { if (join.isConnected) join.requestSubmit(); });
  return join;
}

/** The create form's presets of realistic fills and margin (docs/trading.md). */
const REALISM_PRESETS = {
  simple: { label: 'Simple — last price, any size, cash only', values: {} },
  classroom: {
    label: 'Classroom — a spread, no penny stocks, a tenth of the volume',
    values: { fillPrice: 'quote', spreadBps: '10', volumeCap: '10', minPrice: '1', minShort: '5' },
  },
  realistic: {
    label: 'Realistic — spread, impact, margin, interest and fees',
    values: { fillPrice: 'quote', spreadBps: '10', impact: '0.1', volumeCap: '2.5', minPrice: '5', minShort: '5', lending: '50', maintenance: '25',
      debit: '8', borrowFee: '3' },
  },
};

/** The rules of an isolated league: every field may stay empty for the server's default. */
function rulesFields() {
  const field = (id, label, attributes = {}) => {
    const input = h('input', { id, inputmode: 'decimal', ...attributes });
    return [input, h('div', {}, h('label', { for: id }, label), input)];
  };
  const [flat, flatRow] = field('rule-commission-flat', 'Commission per trade ($)', { placeholder: 'server default' });
  const [percent, percentRow] = field('rule-commission-percent', 'Commission (% of the amount)', { placeholder: '0' });
  const [position, positionRow] = field('rule-max-position', 'Largest position (% of net worth)', { placeholder: '100' });
  const types = [['market', 'Market'], ['limit', 'Limit'], ['stop', 'Stop'], ['stop_limit', 'Stop limit'],
    ['trailing_stop', 'Trailing stop']].map(([value, label]) => {
    const box = h('input', { type: 'checkbox', id: `rule-type-${value}`, value, checked: true });
    return [box, h('label', { class: 'check', for: `rule-type-${value}` }, box, ` ${label}`)];
  });
  const symbols = h('input', { id: 'rule-symbols', placeholder: 'all symbols', autocomplete: 'off', spellcheck: 'false' });
  const symbolsRow = h('div', { id: 'rule-symbols-row' }, h('label', { for: 'rule-symbols' }, 'Only these symbols (comma-separated, optional)'), symbols);
  const shorts = h('input', { type: 'checkbox', id: 'rule-shorts' });
  const [margin, marginRow] = field('rule-margin', 'Short margin (% of the shorts\' value equity must cover)', { placeholder: '150' });
  const [spread, spreadRow] = field('rule-fx-spread', 'Exchange spread (% over the rate for buys, under it for sales)', { placeholder: '0' });
  const showMargin = () => { marginRow.hidden = !shorts.checked; };
  shorts.addEventListener('change', showMargin);
  showMargin();
  // Realistic fills and margin (docs/trading.md): a preset fills them in; each may be changed.
  const fillPrice = h('select', { id: 'rule-fill-price' },
    h('option', { value: 'last' }, 'At the last price'), h('option', { value: 'quote' }, 'At the ask and the bid'));
  const fillPriceRow = h('div', {}, h('label', { for: 'rule-fill-price' }, 'Fills'), fillPrice);
  const [spreadBps, spreadBpsRow] = field('rule-spread-bps', 'Spread (basis points of the price)', { placeholder: '10' });
  const [impact, impactRow] = field('rule-impact', 'Market impact (coefficient, 0–1)', { placeholder: '0' });
  const [volumeCap, volumeCapRow] = field('rule-volume-cap', 'Largest share of a day\'s volume (% a day per symbol)', { placeholder: 'no cap' });
  const [minPrice, minPriceRow] = field('rule-min-price', 'Lowest price to buy ($)', { placeholder: '0' });
  const [minShort, minShortRow] = field('rule-min-short-price', 'Lowest price to short ($)', { placeholder: '0' });
  const [lending, lendingRow] = field('rule-margin-percent', 'Buying on margin (% of a buy paid in equity)', { placeholder: 'cash only' });
  const [maintenance, maintenanceRow] = field('rule-maintenance', 'Maintenance (% of positions equity must keep)', { placeholder: 'none' });
  const [debit, debitRow] = field('rule-debit-rate', 'Interest on borrowed cash (% a year)', { placeholder: '0' });
  const [credit, creditRow] = field('rule-credit-rate', 'Interest on cash (% a year)', { placeholder: '0' });
  const [borrowFee, borrowFeeRow] = field('rule-borrow-fee', 'Borrow fee on shorts (% a year)', { placeholder: '0' });
  const realism = { fillPrice, spreadBps, impact, volumeCap, minPrice, minShort, lending, maintenance, debit, credit, borrowFee };
  const preset = h('select', { id: 'rule-preset' },
    Object.entries(REALISM_PRESETS).map(([key, { label }]) => h('option', { value: key }, label)));
  const showSpread = () => { spreadBpsRow.hidden = fillPrice.value !== 'quote'; };
  fillPrice.addEventListener('change', showSpread);
  preset.addEventListener('change', () => {
    const values = REALISM_PRESETS[preset.value].values;
    for (const [name, input] of Object.entries(realism)) input.value = values[name] ?? (name === 'fillPrice' ? 'last' : '');
    showSpread();
  });
  showSpread();
  const fieldset = h('fieldset', { id: 'league-rules' },
    h('legend', {}, 'House rules (isolated leagues)'),
    h('div', { class: 'pair' }, flatRow, percentRow),
    positionRow,
    h('p', { class: 'label' }, 'Order types allowed'), h('div', { class: 'checks' }, types.map(([, label]) => label)),
    symbolsRow,
    h('label', { class: 'check', for: 'rule-shorts' }, shorts, ' Allow short selling'), marginRow, spreadRow,
    h('fieldset', { id: 'league-realism' },
      h('legend', {}, 'Fills and margin'),
      h('label', { for: 'rule-preset' }, 'How hard the market is'), preset,
      h('p', { class: 'hint', id: 'rule-preset-hint' }, 'Simple: every fill at the last price, in any size, cash only. '
        + 'Classroom: a spread, no penny stocks, a tenth of a day\'s volume. Realistic: a spread, market impact, a volume cap, margin with calls, interest and borrow fees.'),
      h('div', { class: 'pair' }, fillPriceRow, spreadBpsRow), h('div', { class: 'pair' }, impactRow, volumeCapRow),
      h('div', { class: 'pair' }, minPriceRow, minShortRow),
      h('div', { class: 'pair' }, lendingRow, maintenanceRow),
      h('div', { class: 'pair' }, debitRow, creditRow), borrowFeeRow));
  const value = (foreign) => {
    const text = (input) => input.value.trim() || undefined;
    const list = symbols.value.split(',').map((s) => s.trim()).filter(Boolean);
    return {
      commissionFlat: text(flat), commissionPercent: text(percent), maxPositionPercent: text(position),
      allowedOrderTypes: types.filter(([box]) => box.checked).map(([box]) => box.value),
      allowedSymbols: list.length > 0 && !symbolsRow.hidden ? list : undefined,
      allowShortSelling: shorts.checked || undefined,
      shortMarginPercent: shorts.checked ? text(margin) : undefined,
      fxSpreadPercent: foreign ? text(spread) : undefined,
      fillPrice: fillPrice.value === 'quote' ? 'quote' : undefined,
      spreadBps: fillPrice.value === 'quote' ? text(spreadBps) : undefined,
      impactCoefficient: text(impact), volumeCapPercent: text(volumeCap), minPrice: text(minPrice), minShortPrice: text(minShort),
      marginPercent: text(lending), maintenancePercent: text(maintenance),
      debitRatePercent: text(debit), creditRatePercent: text(credit), borrowFeePercent: text(borrowFee),
    };
  };
  return { fieldset, value, spreadRow, symbolsRow };
}

/** The rules a league's portfolios trade under, in words. */
function rulesSummary(rules, currency, journalRequired, ownMarket) {
  const money = (text) => inCurrency(text, currency);
  const commission = [rules.commissionFlat !== '0.00' ? money(rules.commissionFlat) : null,
    rules.commissionPercent !== '0.00' ? `${rules.commissionPercent}%` : null].filter(Boolean).join(' + ') || 'none';
  const types = { market: 'market', limit: 'limit', stop: 'stop', stop_limit: 'stop limit', trailing_stop: 'trailing stop' };
  return h('section', { id: 'rules', 'aria-label': 'Rules' },
    h('h2', {}, 'House rules'),
    h('dl', { class: 'rules' },
      h('dt', {}, 'Commission per trade'), h('dd', {}, commission),
      h('dt', {}, 'Largest position'), h('dd', {}, rules.maxPositionPercent === '100.00' ? 'no limit' : `${rules.maxPositionPercent}% of net worth`),
      h('dt', {}, 'Order types'), h('dd', {}, rules.allowedOrderTypes.map((t) => types[t] ?? t).join(', ')),
      h('dt', {}, 'Symbols'), h('dd', { id: 'league-symbols-rule' }, ownMarket ? 'the league\'s own market (above)'
        : rules.allowedSymbols ? rules.allowedSymbols.join(', ') : 'all'),
      h('dt', {}, 'Short selling'), h('dd', {}, rules.allowShortSelling ? `allowed (margin ${rules.shortMarginPercent}%)` : 'not allowed'),
      h('dt', {}, 'Journal'), h('dd', { id: 'league-journal-rule' }, journalRequired ? 'a note on every trade and order' : 'notes optional'),
      h('dt', {}, 'Fills'), h('dd', { id: 'league-fills-rule' }, fillsText(rules)),
      rules.minPrice !== '0.00' || rules.minShortPrice !== '0.00' ? [h('dt', {}, 'Lowest prices'),
        h('dd', {}, [rules.minPrice !== '0.00' ? `buy from ${money(rules.minPrice)}` : null,
          rules.allowShortSelling && rules.minShortPrice !== '0.00' ? `short from ${money(rules.minShortPrice)}` : null]
          .filter(Boolean).join('; ') || 'none')] : null,
      h('dt', {}, 'Margin'), h('dd', { id: 'league-margin-rule' }, marginText(rules)),
      h('dt', {}, 'Interest and fees'), h('dd', { id: 'league-interest-rule' }, interestText(rules)),
      currency !== 'USD' ? [h('dt', {}, 'Currency'),
        h('dd', { id: 'league-currency-rule' }, `${currency}: dollar stocks at the rate now, ${rules.fxSpreadPercent}% over it for buys and under it for sales`)] : null));
}

/** How the league prices fills, in words. */
function fillsText(rules) {
  const quote = rules.fillPrice === 'quote' ? `at the ask and the bid, ${rules.spreadBps.replace(/\.00$/, '')} basis points apart` : 'at the last price';
  const impact = rules.impactCoefficient !== '0' ? `; a big order moves its price (impact ${rules.impactCoefficient} × its share of yesterday's volume, squared)` : '';
  const cap = rules.volumeCapPercent ? `; at most ${rules.volumeCapPercent}% of yesterday's volume a day in each symbol, an order's rest filling on later days` : '';
  return quote + impact + cap;
}

/** Margin in words: cash only, or what a buy may borrow and what maintenance asks. */
function marginText(rules) {
  const lending = rules.marginPercent ? `buys may borrow: ${rules.marginPercent}% of the positions paid in equity` : 'cash only';
  const call = rules.maintenancePercent
    ? `; below ${rules.maintenancePercent}% at a close is a margin call, and positions are sold at the next close if it stands` : '';
  return lending + call;
}

/** Interest and borrow fees in words. */
function interestText(rules) {
  const parts = [rules.debitRatePercent !== '0.00' ? `${rules.debitRatePercent}% a year on borrowed cash` : null,
    rules.creditRatePercent !== '0.00' ? `${rules.creditRatePercent}% a year earned on cash` : null,
    rules.borrowFeePercent !== '0.00' ? `${rules.borrowFeePercent}% a year on shorts` : null].filter(Boolean);
  return parts.length > 0 ? `${parts.join('; ')}, charged at each close` : 'none';
}

/** A page offset from the query: a whole number, 0 by default. */
function offsetOf(text) {
  return Math.max(0, Number.parseInt(text || '0', 10) || 0);
}

/** The bot policy in words, for everyone. */
function botPolicyText(league) {
  const [label, meaning] = BOT_POLICIES[league.bots] ?? [league.bots, ''];
  return h('section', { id: 'bot-policy', 'aria-label': 'Bots' },
    h('p', { id: 'bot-policy-text' }, h('strong', {}, `Bots: ${label}`), meaning ? ` — ${meaning}.` : ''));
}

/** For the owner, in the Host tools: a select to change the bot policy. */
function botPolicyForm(league, context) {
  const select = botPolicySelect('bot-policy-select', league.bots, false);
  const error = errorLine();
  const form = h('form', { class: 'inline', id: 'bot-policy-form' },
    h('label', { class: 'inline', for: 'bot-policy-select' }, 'Change to', select),
    h('button', { type: 'submit' }, 'Save'));
  onSubmitShowing(form, error, async () => {
    const updated = await api(`/api/leagues/${league.id}`, { method: 'PATCH', body: { bots: select.value } });
    const [newLabel, newMeaning] = BOT_POLICIES[updated.bots] ?? [updated.bots, ''];
    context.flash(`Bots in “${updated.name}”: ${newLabel.toLowerCase()} — ${newMeaning}.`);
    context.refresh();
  });
  return h('div', { id: 'bot-policy-change' }, h('h3', {}, 'Bots'), form, error);
}

/** The timer that asks for the bots' table of the league on screen again. */
let botTimer = null;

/**
 * The league page as it stands: the league and its standings as last read (`shown`:
 * league, board, botBoard — the bots' own table in a league that ranks them apart — and
 * the order they were read in), the page of each table (`offset`, `botOffset`) and the
 * order this viewer picked (`chosen`, from `?rankBy=`), or null: the league's own.
 */
function leaguePage(root, context) {
  const id = context.params[0];
  const page = {
    root, context, id, me: context.user, shown: null, toolsStamp: null,
    offset: offsetOf(context.query.get('offset')),
    botOffset: offsetOf(context.query.get('botOffset')),
    chosen: rankingOf(context.query.get('rankBy')),
    ranked: () => (page.chosen ? `&rankBy=${page.chosen}` : ''),
    botsPath: () => `/api/leagues/${id}/leaderboard?players=bots&limit=${PAGE}&offset=${page.botOffset}${page.ranked()}`,
    // The leaderboard as the server ranks it, in the league's order or the one picked:
    // everyone, or in a league that ranks bots apart, the humans (and the bots in a table
    // of their own, ranked by the server among themselves).
    async load() {
      const order = page.chosen;
      const [league, board] = await Promise.all([
        api(`/api/leagues/${id}`), api(`/api/leagues/${id}/leaderboard?limit=${PAGE}&offset=${page.offset}${page.ranked()}`),
      ]);
      return { league, board, botBoard: league.bots === 'separate' ? await api(page.botsPath()) : null, order };
    },
    pageLink(humans, bots) {
      const query = new URLSearchParams();
      if (page.chosen) query.set('rankBy', page.chosen);
      if (humans > 0) query.set('offset', String(humans));
      if (bots > 0) query.set('botOffset', String(bots));
      const text = query.toString();
      return `#/leagues/${id}${text ? `?${text}` : ''}`;
    },
    /** Whether the viewer looks at another order than the league's. */
    reordered: () => Boolean(page.chosen) && page.chosen !== page.shown.league.rankBy,
    owns: (league) => Boolean(page.me) && league.ownerId === page.me.id,
  };
  page.redraw = redrawer(page);
  page.refreshBots = botsRefresher(page);
  return page;
}

export async function leagueView(root, context) {
  clearInterval(botTimer);
  const page = leaguePage(root, context);
  page.shown = await page.load();
  if (!context.current()) return;
  const { league } = page.shown;

  // The page in parts: what everyone reads at the top, the owner's Host tools, the news,
  // the standings, and the trade journal. Drawn again with fresh answers, the Host tools
  // stay as they are (with whatever the host is typing) unless what they show changed;
  // the news and the journal read their own pages.
  page.top = h('div', { id: 'league-top' });
  page.tools = h('div', { id: 'league-tools' });
  page.rest = h('div', { id: 'league-rest' });
  page.standingsBox = h('div', { id: 'league-board' });
  const owner = page.owns(league);
  // Whoever sees the league is a member or its owner; an owner plays unless hosting only.
  const seated = !owner || league.ownerPlays;
  const news = newsSection(league, context, owner);
  const journal = journalSection(league, context, owner, seated);
  // The host's class panel and audit log keep what they show (logins just made, pages of
  // the log) while the page is drawn again with fresh answers.
  // A team league's Teams card: the host's teams and seats, a member's own team. The
  // logins a class roster makes are members the host may seat at once.
  page.teamsPanel = teamsSection(league, context, owner);
  page.classPanel = owner ? classSection(league, context, () => page.redraw(), (students) => page.teamsPanel?.addPeople(students)) : null;
  page.audit = owner ? auditSection(league) : null;
  // A scenario league's market: its day, companies (whose quotes the page follows, in
  // the league's market), events and, once it has ended, the reveal.
  page.quotes = [];
  page.follow = () => context.live.follow({
    leagues: [Number(page.id)], quotes: page.quotes, quoteLeague: page.quotes.length > 0 ? Number(page.id) : null,
  });
  page.market = league.market ? marketSection(league, context, owner, (quotes) => { page.quotes = quotes; page.follow(); }) : null;
  fill(root, page.top, page.market?.nodes, page.tools, page.classPanel?.node, page.teamsPanel?.node, news.node, page.rest, boardHeading(page), page.standingsBox, journal?.node, page.audit?.node);
  draw(page);
  follow(page, news);
}

/** The leaderboard's heading and its Rank by switch. They stay put as the standings are
 * drawn again, so a live update never closes the switch under the viewer's finger.
 * Picking an order reads the first page in it (the address keeps it, for a reload and the
 * pages); the league's own order is the default and is marked as such. */
function boardHeading(page) {
  const { league } = page.shown;
  page.rankSelect = rankingSelect('rank-by', page.chosen ?? league.rankBy, league.rankBy);
  page.rankLabelled = league.rankBy;
  page.rankSelect.addEventListener('change', () => {
    const rankBy = page.shown.league.rankBy;
    page.chosen = page.rankSelect.value === rankBy ? null : rankingOf(page.rankSelect.value);
    page.offset = 0;
    page.botOffset = 0;
    history.replaceState(history.state, '', page.pageLink(0, 0));
    page.standingsBox.setAttribute('aria-busy', 'true');
    page.redraw();
  });
  return h('div', { class: 'heading', id: 'board-heading' },
    h('h2', {}, 'Leaderboard'),
    h('label', { class: 'inline', for: 'rank-by' }, 'Rank by', page.rankSelect));
}

/**
 * New standings arrive on the live stream (or, without it, every 30 s). While the players
 * shown and their order stay the same, their figures change in place; when someone joins,
 * leaves, is removed or changes place, the page is drawn again. The event carries the
 * default board (humans in a league that ranks bots apart) in the league's order and comes
 * when it changes: a viewer who picked another order gets the page read again in theirs
 * instead. The bots' table is asked for again with each event, and every 10 s, since a
 * change among bots alone raises no event. A notification (trading frozen or resumed, a
 * reset) draws the page again too, and reads the news again.
 */
function follow(page, news) {
  const { context } = page;
  page.follow();
  context.live.on('standings', (standings) => showStandings(page, standings));
  context.live.on('notification', () => { page.redraw(); news.reload(); });
  context.poll(page.redraw, 30000);
  botTimer = setInterval(() => { if (context.current()) page.refreshBots(); else clearInterval(botTimer); }, 10000);
}

/** Reads the league again and draws it; asked while a read is out, it reads once more
 * after it. An answer in an order no longer picked is dropped: the next read is in the
 * new one. */
function redrawer(page) {
  let drawing = null;
  let again = false;
  async function redraw() {
    if (!page.context.current()) return;
    if (drawing) { again = true; return; }
    drawing = page.load().then((fresh) => {
      if (fresh.order !== page.chosen) again = true;
      else if (page.context.current()) { page.shown = fresh; draw(page); }
    }, () => { /* the next event tries again */ });
    await drawing;
    drawing = null;
    if (again) { again = false; redraw(); }
  }
  return redraw;
}

/** Reads the bots' table again (in a league that ranks them apart), one read at a time. */
function botsRefresher(page) {
  let asked = false;
  return async () => {
    if (!page.shown.botBoard || asked) return;
    asked = true;
    try {
      const order = page.chosen;
      const fresh = await api(page.botsPath());
      const bots = page.root.querySelector('#bot-board');
      // A bot that joined or left changes the member count too: draw the page again.
      if (fresh.total !== page.shown.botBoard.total) page.redraw();
      else if (page.context.current() && bots && order === page.chosen) {
        page.shown.botBoard = fresh;
        bots.replaceChildren(...botBlock(page, fresh));
      }
    } catch { /* the next standings try again */ }
    asked = false;
  };
}

/** A standings event: figures changed in place while the roster shown is the same, else
 * the page read again. */
function showStandings(page, standings) {
  const { root, me } = page;
  if (String(standings.leagueId) !== String(page.id)) return;
  // A trade moves the standings: who has not traded yet may have changed.
  page.classPanel?.refresh();
  if (page.reordered()) { page.redraw(); return; }
  const board = root.querySelector('#standings');
  const rows = board ? [...board.querySelectorAll('[data-worth]')].map((cell) => cell.dataset.worth) : [];
  const sent = standings.items.map(standingKey);
  // The event carries the top rows only: a change past them shows in the count. A
  // first reset shows a column of resets the board may not have yet.
  const sameRoster = page.offset === 0 && standings.total === page.shown.board.total
    && sent.slice(0, PAGE).join() === rows.slice(0, sent.length).join()
    && Boolean(board) && (board.querySelector('[data-resets]') || standings.items.every((s) => !(s.resets > 0)));
  if (!sameRoster) { page.redraw(); return; }
  const money = moneyOf(page.shown.league);
  for (const s of standings.items) {
    const key = standingKey(s);
    const worth = board.querySelector(`[data-worth="${key}"]`);
    const gain = board.querySelector(`[data-return="${key}"]`);
    const resets = board.querySelector(`[data-resets="${key}"]`);
    if (worth) worth.textContent = money(s.netWorth);
    if (gain) gain.replaceChildren(signed(s.returnPercent, percent(s.returnPercent)));
    if (resets) resets.textContent = String(s.resets);
    showRisk(board, s);
    const mine = me && s.userId != null && s.userId === me.id ? root.querySelector('#my-resets-used') : null;
    if (mine) mine.textContent = String(s.resets);
  }
  const asOf = root.querySelector('#standings-as-of');
  if (asOf) asOf.textContent = `As of ${new Date(standings.asOf).toLocaleString()}`;
  page.refreshBots();
}

/** Asks `question`, then sends DELETE to `path`; `done` after, the refusal at the top. */
async function act(context, question, path, done) {
  if (!confirmAction(question)) return;
  try {
    await api(path, { method: 'DELETE' });
    done();
  } catch (problem) {
    context.flash(problem.message, 'error');
  }
}

function moneyOf(league) {
  return (text) => inCurrency(text, league.currency || 'USD');
}

/** The standings' columns: the owner's also have Reset (isolated leagues) and Kick. */
function columnsOf(page, league, withResets) {
  const { context, me } = page;
  const money = moneyOf(league);
  const owner = page.owns(league);
  const kick = (s) => h('button', {
    type: 'button', class: 'danger small', dataset: { kick: s.username }, 'aria-label': `Kick ${s.username}`,
    onclick: () => act(context, s.bot ? `Remove the bot ${s.username} from “${league.name}”? It will not be able to rejoin.`
      : `Remove ${memberName(s)} from “${league.name}”? They will not be able to rejoin.`,
    `/api/leagues/kick/${page.id}/${s.userId}`, () => { context.flash(`${memberName(s)} was removed.`); context.refresh(); }),
  }, 'Kick');
  // A bot is marked as one, with its owner's name; the rank is the server's. A team
  // league ranks teams: a row names the team and its members, and has no host buttons
  // (a member is taken off a team in the Teams card).
  return [
    { title: 'Rank', class: 'num rank', cell: (s) => String(s.rank) },
    league.teams ? { title: 'Team', class: 'player team-row', cell: (s) => teamCell(s, me) }
      : { title: 'Player', class: 'player', cell: (s) => h('span', { class: me && s.userId === me.id ? 'me' : '' }, memberName(s),
        s.bot ? [' ', h('span', { class: 'tag', title: 'A bot: it trades through API keys' }, 'bot'),
          s.ownerUsername ? [' ', h('span', { class: 'owner muted' }, `by ${s.ownerUsername}`)] : null] : null) },
    { title: 'Net worth', class: 'num worth', cell: (s) => h('span', { dataset: { worth: standingKey(s) } }, money(s.netWorth)) },
    { title: 'Return', class: 'num return', cell: (s) => h('span', { dataset: { return: standingKey(s) } }, signed(s.returnPercent, percent(s.returnPercent))) },
    withResets ? { title: 'Resets', class: 'num resets', cell: (s) => h('span', { dataset: { resets: standingKey(s) } }, String(s.resets)) } : null,
    ...riskColumns(league),
    owner && !league.teams ? { title: 'Host', class: 'host-actions', cell: (s) => h('div', { class: 'row-actions' },
      league.mode === 'isolated' ? resetMemberButton(league, s, context) : null,
      s.userId === me.id ? null : kick(s)) } : null,
  ].filter(Boolean);
}

/** A team's row in the standings: its name (the viewer's own team marked) and its members. */
function teamCell(s, me) {
  const members = s.members ?? [];
  const mine = Boolean(me) && members.includes(me.username);
  return [h('span', { class: mine ? 'me team-name' : 'team-name' }, s.teamName ?? s.username ?? '—'),
    mine ? [' ', h('span', { class: 'tag' }, 'your team')] : null,
    h('span', { class: 'team-members-line muted' }, members.length > 0 ? members.join(', ') : 'no members yet')];
}

/** A table of standings; on a phone it becomes a card per player (app.css, .ranked):
 * rank, name, each figure labelled by its column, and the owner's buttons. */
function standingsTable(page, rows, tableId, empty) {
  const { league, board, botBoard } = page.shown;
  const withResets = (league.mode === 'isolated' && league.resetsAllowed > 0)
    || [...board.items, ...(botBoard?.items ?? [])].some((s) => s.resets > 0);
  const columns = columnsOf(page, league, withResets);
  const wrapped = table(columns, rows, { empty });
  wrapped.id = tableId;
  wrapped.classList.add('ranked');
  for (const row of wrapped.querySelectorAll('tbody tr')) {
    [...row.cells].forEach((cell, i) => { cell.dataset.label = columns[i].title; });
  }
  return wrapped;
}

function botBlock(page, bots) {
  const { offset, botOffset } = page;
  return [
    standingsTable(page, bots.items, 'bot-standings', 'No bots play here.'),
    h('nav', { class: 'pager', 'aria-label': 'Pages of bots' },
      botOffset > 0 ? h('a', { href: page.pageLink(offset, Math.max(0, botOffset - PAGE)) }, '← Better ranks') : null,
      botOffset + PAGE < bots.total ? h('a', { href: page.pageLink(offset, botOffset + PAGE) }, 'More →') : null),
  ];
}

/** The top of the league page: its name, Leave and Delete, the frozen banner and the
 * league's figures. */
function drawTop(page) {
  const { league } = page.shown;
  const { context, id } = page;
  const owner = page.owns(league);
  const members = league.memberCount === 1 ? 'its 1 member' : `all ${league.memberCount} members`;
  fill(page.top,
    h('div', { class: 'heading' },
      h('h1', {}, league.name),
      h('div', { class: 'actions' },
        // A host without a seat has nothing to leave: deleting is what ends their part.
        !owner || league.ownerPlays ? h('button', { type: 'button', id: 'leave-league', onclick: () => act(context,
          owner ? `You own “${league.name}”: leaving deletes it for everyone. Leave and delete?` : `Leave “${league.name}”?`,
          `/api/leagues/leave/${id}`, () => { context.flash('You left the league.', 'info', true); context.navigate('#/leagues'); }) }, 'Leave') : null,
        owner ? h('button', { type: 'button', class: 'danger', id: 'delete-league', onclick: () => act(context,
          league.memberCount > 0 ? `Delete “${league.name}” for ${members}? This cannot be undone.` : `Delete “${league.name}”? This cannot be undone.`,
          `/api/leagues/${id}`, () => { context.flash('The league was deleted.', 'info', true); context.navigate('#/leagues'); }) }, 'Delete league') : null)),
    frozenBanner(league),
    h('section', { class: 'summary', 'aria-label': 'League' },
      h('div', {}, h('span', { class: 'label' }, 'Join code'), h('strong', { id: 'league-code', class: 'code' }, league.code),
        h('a', { id: 'league-join-link', class: 'hint', href: `/join/${encodeURIComponent(league.code)}` }, `${location.origin}/join/${league.code}`)),
      h('div', {}, h('span', { class: 'label' }, 'Mode'), h('strong', {}, league.mode)),
      league.teams ? h('div', {}, h('span', { class: 'label' }, 'Play'), h('strong', { id: 'league-team-mode' }, 'Team league'),
        h('span', { class: 'hint' }, 'Each team trades one portfolio; the standings rank teams.')) : null,
      h('div', {}, h('span', { class: 'label' }, 'Members'), h('strong', { id: 'league-members' }, `${league.memberCount}${league.maxMembers ? ` of ${league.maxMembers}` : ''}`)),
      h('div', {}, h('span', { class: 'label' }, 'Runs'), h('strong', { id: 'league-runs' }, `${dateText(league.startsAt, 'open-ended')} – ${dateText(league.endsAt, 'open-ended')}`),
        league.joinUntil ? h('span', { class: 'hint', id: 'league-join-until' }, `Joins until ${whenText(league.joinUntil)}`) : null),
      h('div', {}, h('span', { class: 'label' }, 'Bots'), h('strong', { id: 'league-bots' }, (BOT_POLICIES[league.bots] ?? [league.bots])[0])),
      league.deleteManagedAfterDays === null || league.deleteManagedAfterDays === undefined ? null
        : h('div', {}, h('span', { class: 'label' }, 'Class logins erased'), h('strong', { id: 'league-class-logins' }, retentionWords(league.deleteManagedAfterDays)))));
}

/** The standings: which order they are in, the people's table (and the bots' in a league
 * that ranks them apart), their pages, and what the risk columns measure. */
function drawStandings(page) {
  const { league, board, botBoard } = page.shown;
  const { offset, botOffset } = page;
  const separate = Boolean(botBoard);
  if (page.rankLabelled !== league.rankBy) {
    labelRankings(page.rankSelect, league.rankBy);
    page.rankLabelled = league.rankBy;
  }
  page.rankSelect.value = page.chosen ?? league.rankBy;
  page.standingsBox.removeAttribute('aria-busy');
  fill(page.standingsBox,
    h('p', { class: 'muted', id: 'rank-note' }, page.reordered()
      ? `Ranked by ${rankingWords(page.chosen)} for you; the league ranks by ${rankingWords(league.rankBy)}.`
      : `Ranked by ${rankingWords(league.rankBy)}, the league's order.`),
    h('p', { class: 'muted', id: 'standings-as-of' }, `As of ${new Date(board.asOf).toLocaleString()}`),
    separate ? h('h3', { id: 'humans-heading' }, 'People') : null,
    standingsTable(page, board.items, 'standings', separate ? 'No people play here.' : 'No members.'),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      offset > 0 ? h('a', { href: page.pageLink(Math.max(0, offset - PAGE), botOffset) }, '← Better ranks') : null,
      offset + PAGE < board.total ? h('a', { href: page.pageLink(offset + PAGE, botOffset) }, 'More →') : null),
    separate ? [h('h3', { id: 'bots-heading' }, 'Bots'), h('div', { id: 'bot-board' }, botBlock(page, botBoard))] : null,
    riskNote(league));
}

/** Draws the league page from `page.shown`; the Host tools only when what they show changed. */
function draw(page) {
  const { league } = page.shown;
  const { context, me } = page;
  const owner = page.owns(league);
  const mine = me ? (league.members ?? []).find((s) => s.userId === me.id) : undefined;
  const seated = !owner || league.ownerPlays;
  drawTop(page);
  if (!owner) {
    page.toolsStamp = null;
    page.tools.replaceChildren();
  } else if (hostStamp(league) !== page.toolsStamp) {
    page.toolsStamp = hostStamp(league);
    page.tools.replaceChildren(hostSection(league, context, botPolicyForm(league, context)));
  }
  if (page.classPanel && owner) { page.classPanel.update(league); page.audit.update(league); }
  page.market?.update(league);
  page.teamsPanel?.update(league);
  fill(page.rest,
    botPolicyText(league),
    league.mode === 'isolated' ? rulesSummary(league.rules, league.currency || 'USD', league.journalRequired, Boolean(league.market)) : null,
    league.teams ? null : myResetsSection(league, seated, mine, context));
  drawStandings(page);
}
