// What the league page adds for hosting a class: the banner everyone sees while trading is
// frozen, the owner's Host tools (freeze or resume trading, the league's settings), a
// member's own reset, the owner's reset of a member from the standings, and the
// gradebook the owner downloads. The rules —
// who may freeze, how many resets are left — are the server's: the page shows its answers.
import { api, saveDownload } from '../api.js';
import { h, fill, failure, confirmAction, count, errorLine, memberName, showError, onSubmitShowing } from '../dom.js';
import { inCurrency } from '../decimal.js';
import { replacePortfolio } from '../portfolios.js';
import { rankingSelect } from './league-ranking.js';

/** "2026-12-01T09:30" (local time, as a datetime-local input shows it) from RFC 3339. */
export function localFromIso(value) {
  if (!value) return '';
  const date = new Date(value);
  const two = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** "2026-12-01T09:30" from a datetime-local input → RFC 3339 in UTC (undefined when empty). */
export function isoFromLocal(value) {
  return value ? new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
}

/** The league's starting cash in its currency: what a reset portfolio starts with. */
function startingCash(league) {
  return inCurrency(league.startingCash, league.currency || 'USD');
}

/** A banner while the host has frozen trading, with their reason; null while it is open. */
export function frozenBanner(league) {
  if (!league.frozen) return null;
  return h('div', { class: 'banner frozen', id: 'frozen-banner', role: 'status' },
    h('strong', {}, 'Trading is frozen.'),
    league.frozenReason ? [' The host says: ', h('span', { id: 'frozen-reason' }, `“${league.frozenReason}”`)] : null,
    h('span', { class: 'banner-hint' }, 'No trades or new orders in this league until the host resumes trading; open orders wait, and you can still cancel them.'));
}

/** What the host tools show: when it changes, the tools are drawn again (else they stay,
 * with whatever the host is typing). */
export function hostStamp(league) {
  const { name, endsAt, joinUntil, maxMembers, bots, frozen, frozenReason, ownerPlays, journalRequired, rankBy, benchmark, deleteManagedAfterDays } = league;
  return JSON.stringify({ name, endsAt, joinUntil, maxMembers, bots, frozen, frozenReason, ownerPlays, journalRequired, rankBy, benchmark, deleteManagedAfterDays });
}

/** When a league's class logins are erased, in words: "30 days after the end". */
export function retentionWords(days) {
  return days === 0 ? 'when it ends' : `${count(days, 'day')} after the end`;
}

/**
 * The field for `deleteManagedAfterDays`: how many days after the league ends the class
 * roster's accounts are erased (0–365), empty to keep them. `value()` is the number, or
 * null when empty.
 */
export function retentionField(id, days = null) {
  const input = h('input', { id, type: 'number', min: 0, max: 365, step: 1, inputmode: 'numeric', placeholder: 'keep them', value: days ?? '', 'aria-describedby': `${id}-hint` });
  return {
    input,
    node: h('div', { class: 'retention' },
      h('label', { for: id }, 'Erase the class roster\'s accounts this many days after the league ends'), input,
      h('p', { class: 'hint', id: `${id}-hint` }, 'For logins you make for a class (0–365 days). Left empty, the accounts are kept.')),
    value: () => (input.value.trim() === '' ? null : Number(input.value)),
  };
}

/**
 * The owner's Host tools: trading (freeze with a reason, or resume), the league's
 * settings (name, end, late-join window, member cap, order and benchmark:
 * `PATCH /api/leagues/{id}`), `extra` (the bot policy's control) and the gradebook's
 * download. Each shows the server's refusal in its words.
 */
export function hostSection(league, context, extra) {
  const isolated = league.mode === 'isolated';
  return h('section', { class: 'card', id: 'host', 'aria-labelledby': 'host-title' },
    h('h2', { id: 'host-title' }, 'Host tools'),
    league.ownerPlays ? null : h('p', { class: 'hint', id: 'host-seat' },
      'You host this league without playing: you have no league portfolio and are not ranked.'),
    h('div', { class: 'host-parts' },
      h('div', { class: 'host-part' },
        tradingPart(league, context),
        isolated && !league.teams ? h('div', { id: 'host-resets' },
          h('h3', {}, 'Resets'),
          h('p', { class: 'hint' }, `Reset a member's league portfolio with Reset in the leaderboard: it starts again with ${startingCash(league)}, and the old one is archived with its history. `,
            league.resetsAllowed > 0 ? `Each member may also reset their own ${count(league.resetsAllowed, 'time')}; your resets do not count against that.`
              : 'Members may not reset their own (set at creation).')) : null,
        extra,
        gradebookPart(league)),
      settingsForm(league, context)));
}

function tradingPart(league, context) {
  const heading = h('h3', {}, 'Trading');
  if (league.mode !== 'isolated') {
    return [heading, h('p', { class: 'hint', id: 'trading-state' },
      'Members of a shared league trade their personal portfolios, which no league can freeze or reset.')];
  }
  const error = errorLine('freeze-error');
  const state = h('p', { id: 'trading-state' }, league.frozen
    ? [h('strong', {}, 'Frozen'), league.frozenReason ? `: “${league.frozenReason}”` : ' (no reason given)', '. Members are told when it resumes.']
    : [h('strong', {}, 'Open'), ': members trade and place orders.']);
  if (league.frozen) {
    const form = h('form', { id: 'unfreeze-form' }, h('button', { type: 'submit', class: 'primary', id: 'unfreeze-button' }, 'Resume trading'));
    onSubmitShowing(form, error, async () => {
      const updated = await api(`/api/leagues/${league.id}/unfreeze`, { method: 'POST' });
      context.flash(`Trading in “${updated.name}” resumes; its members are told.`);
      context.refresh();
    });
    return [heading, state, form, error];
  }
  const reason = h('input', { id: 'freeze-reason', maxlength: 200, autocomplete: 'off', placeholder: 'e.g. Quiz on Friday' });
  const form = h('form', { id: 'freeze-form' },
    h('label', { for: 'freeze-reason' }, 'Reason members read (optional)'), reason,
    h('p', { class: 'hint' }, 'Trades and new orders stop; open orders wait, and members can still cancel them.'),
    h('button', { type: 'submit', class: 'danger', id: 'freeze-button' }, 'Freeze trading'));
  onSubmitShowing(form, error, async () => {
    const text = reason.value.trim();
    const updated = await api(`/api/leagues/${league.id}/freeze`, { method: 'POST', body: text ? { reason: text } : {} });
    context.flash(`Trading in “${updated.name}” is frozen; its members are told.`);
    context.refresh();
  });
  return [heading, state, form, error];
}

/** The settings a running league may change; a field left as it was is not sent. */
function settingsForm(league, context) {
  const name = h('input', { id: 'settings-name', required: true, maxlength: 64, value: league.name });
  const ends = h('input', { id: 'settings-ends', type: 'datetime-local', value: localFromIso(league.endsAt) });
  const joinUntil = h('input', { id: 'settings-join-until', type: 'datetime-local', value: localFromIso(league.joinUntil) });
  const cap = h('input', { id: 'settings-max', type: 'number', min: 1, step: 1, inputmode: 'numeric', value: league.maxMembers ?? '' });
  // Only an isolated league asks for notes: a shared league's members trade personal portfolios.
  const journal = league.mode === 'isolated' ? h('input', { type: 'checkbox', id: 'settings-journal', checked: Boolean(league.journalRequired) }) : null;
  const rankBy = rankingSelect('settings-rank-by', league.rankBy, null);
  const retention = retentionField('settings-delete-after', league.deleteManagedAfterDays);
  const benchmark = h('input', { id: 'settings-benchmark', value: league.benchmark, autocomplete: 'off', spellcheck: 'false', placeholder: 'market', 'aria-describedby': 'settings-benchmark-hint' });
  const error = errorLine('settings-error');
  const form = h('form', { id: 'league-settings', 'aria-labelledby': 'settings-title' },
    h('h3', { id: 'settings-title' }, 'Settings'),
    h('label', { for: 'settings-name' }, 'Name'), name,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'settings-ends' }, 'Ends'), ends),
      h('div', {}, h('label', { for: 'settings-join-until' }, 'Joins close'), joinUntil)),
    h('label', { for: 'settings-max' }, 'Most members'), cap,
    h('p', { class: 'hint' }, 'Left empty: the league runs open-ended, members join until it ends, and there is no cap.'),
    journal ? h('label', { class: 'check', for: 'settings-journal' }, journal, ' Every trade needs a journal note') : null,
    h('div', { class: 'pair' },
      h('div', {}, h('label', { for: 'settings-rank-by' }, 'Rank by'), rankBy),
      h('div', {}, h('label', { for: 'settings-benchmark' }, 'Benchmark'), benchmark)),
    h('p', { class: 'hint', id: 'settings-benchmark-hint' },
      'The order everyone sees first (each may pick another for themselves). The benchmark is what excess return is measured against: a stock\'s symbol, or market for every stock, equal-weighted.'),
    retention.node,
    error,
    h('button', { type: 'submit', class: 'primary', id: 'settings-save' }, 'Save settings'));
  onSubmitShowing(form, error, async () => {
    const body = {};
    if (name.value.trim() !== league.name) body.name = name.value.trim();
    if (ends.value !== localFromIso(league.endsAt)) body.endsAt = isoFromLocal(ends.value) ?? null;
    if (joinUntil.value !== localFromIso(league.joinUntil)) body.joinUntil = isoFromLocal(joinUntil.value) ?? null;
    if (cap.value !== String(league.maxMembers ?? '')) body.maxMembers = cap.value ? Number(cap.value) : null;
    if (journal && journal.checked !== Boolean(league.journalRequired)) body.journalRequired = journal.checked;
    if (rankBy.value !== league.rankBy) body.rankBy = rankBy.value;
    // Empty means the market; a symbol in any case is the server's to read.
    const mark = benchmark.value.trim();
    const wanted = !mark || mark.toLowerCase() === 'market' ? 'market' : mark;
    if (wanted.toUpperCase() !== league.benchmark.toUpperCase()) body.benchmark = wanted;
    if (retention.value() !== (league.deleteManagedAfterDays ?? null)) body.deleteManagedAfterDays = retention.value();
    if (Object.keys(body).length === 0) throw new Error('Nothing has changed: edit a field, then save.');
    const updated = await api(`/api/leagues/${league.id}`, { method: 'PATCH', body });
    context.flash(`Settings of “${updated.name}” saved.`);
    context.refresh();
  });
  return form;
}

/** The gradebook: every member's figures, trades, notes and resets as CSV, in the league's
 * order (`GET /api/leagues/{id}/report.csv`, the owner's alone), saved as a file. */
function gradebookPart(league) {
  const status = h('div', { id: 'gradebook-status', role: 'status' });
  const button = h('button', { type: 'button', id: 'gradebook-download' }, 'Download gradebook (CSV)');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = 'Preparing the gradebook…';
    try {
      const name = await saveDownload(`/api/leagues/${league.id}/report.csv`, `league-${league.id}-gradebook.csv`);
      status.textContent = `Downloaded ${name}.`;
    } catch (problem) {
      fill(status, failure(problem));
    } finally {
      button.disabled = false;
    }
  });
  return h('div', { id: 'gradebook' },
    h('h3', {}, 'Gradebook'),
    h('p', { class: 'hint' }, 'Each member\'s rank, net worth, return, risk figures, trades, journal notes, resets and last trade, as CSV in the league\'s order.'),
    button, status);
}

/** A seated member's own reset, in a league that allows some: how many the league allows
 * and how many resets their portfolio has had (the host's included; from their standing,
 * when it is among those the league sends), with a button; when none are left, the server
 * says so. */
export function myResetsSection(league, seated, standing, context) {
  if (!seated || league.mode !== 'isolated' || !(league.resetsAllowed > 0)) return null;
  const error = errorLine('my-reset-error');
  const button = h('button', { type: 'button', class: 'danger', id: 'reset-mine' }, 'Reset my portfolio');
  button.addEventListener('click', async () => {
    if (!confirmAction(`Reset your league portfolio in “${league.name}”? Its holdings and open orders are gone, and it starts again with ${startingCash(league)}. The old one is archived with its history.`)) return;
    error.hidden = true;
    button.disabled = true;
    try {
      const reset = await api(`/api/leagues/${league.id}/reset`, { method: 'POST' });
      replacePortfolio(reset.previousPortfolioId, reset.portfolioId);
      context.flash(`Your league portfolio in “${league.name}” starts again with ${startingCash(league)}.`);
      context.refresh();
    } catch (problem) {
      showError(error, problem);
    } finally {
      button.disabled = false;
    }
  });
  // The link leads to the league portfolio as it is now (a reset makes a new one).
  const link = h('a', { href: '#/portfolio', id: 'my-league-portfolio' }, 'See your league portfolio');
  api('/api/portfolios').then((portfolios) => {
    const current = portfolios.find((p) => p.leagueId === league.id);
    if (current) link.href = `#/portfolio?id=${current.id}`;
  }).catch(() => {});
  return h('section', { class: 'card', id: 'my-resets', 'aria-labelledby': 'my-resets-title' },
    h('h2', { id: 'my-resets-title' }, 'Your league portfolio'),
    h('p', {}, `Each member may reset their own league portfolio ${count(league.resetsAllowed, 'time')}: it starts again with ${startingCash(league)}, and the old one is archived with its history.`),
    h('dl', { class: 'rules' },
      h('dt', {}, 'Resets allowed'), h('dd', { id: 'my-resets-allowed' }, String(league.resetsAllowed)),
      standing ? [h('dt', {}, 'Resets so far'),
        h('dd', {}, h('span', { id: 'my-resets-used' }, String(standing.resets)), h('span', { class: 'muted' }, ' (the host\'s included)'))] : null),
    h('div', { class: 'actions' }, button, link),
    error);
}

/** The owner's Reset button for a member's row, after a confirmation. */
export function resetMemberButton(league, standing, context) {
  return h('button', {
    type: 'button', class: 'small', dataset: { reset: standing.username }, 'aria-label': `Reset ${memberName(standing)}'s portfolio`,
    onclick: async () => {
      if (!confirmAction(`Reset ${memberName(standing)}'s league portfolio in “${league.name}”? Its holdings and open orders are gone, and it starts again with ${startingCash(league)}. The old one is archived with its history.`)) return;
      try {
        const reset = await api(`/api/leagues/${league.id}/members/${standing.userId}/reset`, { method: 'POST' });
        if (context.user && reset.userId === context.user.id) replacePortfolio(reset.previousPortfolioId, reset.portfolioId);
        context.flash(`${memberName(standing)}'s league portfolio starts again with ${startingCash(league)} (reset ${count(reset.resets, 'time')} so far).`);
        context.refresh();
      } catch (problem) {
        context.flash(problem.message, 'error');
      }
    },
  }, 'Reset');
}
