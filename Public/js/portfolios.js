// A player's portfolios as the pages share them (GET /api/portfolios): found by id, their
// currency, their league, their names in a select and in a sentence, and which one a
// trade starts in, and which one a page shows first. What a portfolio is (its `kind`, its
// `currency`) is the server's to say.
import { api, session } from './api.js';
import { h } from './dom.js';

/** The player's portfolios, for a switcher: personal first, then league and practice ones.
 * A team's portfolio (a team league's, which the player trades or watches with their
 * team) carries `team`: its name, the player's role and its members, from the league's
 * teams (`GET /api/leagues/{id}/teams`). A scenario league's portfolio (its league has a
 * `market` of its own) carries `scenarioLeague`, the league's id: its symbols are that
 * market's. Reading the leagues costs a request only when the player has a league
 * portfolio; one that cannot be read leaves the portfolio unmarked. */
export async function portfolioChoices() {
  const portfolios = await api('/api/portfolios');
  if (!portfolios.some((p) => p.kind === 'league')) return portfolios;
  try {
    const leagues = await api('/api/leagues');
    for (const portfolio of portfolios) {
      const league = leagues.find((l) => l.id === portfolio.leagueId);
      if (league?.market) portfolio.scenarioLeague = league.id;
    }
    const teamLeagues = leagues.filter((l) => l.teams && portfolios.some((p) => p.leagueId === l.id));
    await Promise.all(teamLeagues.map(async (league) => {
      const teams = await api(`/api/leagues/${league.id}/teams`).catch(() => []);
      for (const team of teams) {
        const portfolio = portfolioById(portfolios, team.portfolioId);
        if (portfolio) portfolio.team = teamOf(team, league);
      }
    }));
  } catch { /* the portfolios as they are: named by their league */ }
  return portfolios;
}

/** A team as a portfolio carries it: its name, the caller's role on it (null for the
 * league's host on no team), its members and its league's name. */
export function teamOf(team, league) {
  const me = session.user?.id;
  return {
    id: team.id, name: team.name, leagueName: league?.name ?? null, members: team.members,
    role: team.members.find((m) => m.userId === me)?.role ?? null,
  };
}

/** The scenario league whose own market `portfolio` trades (its id), else null: its
 * stocks' pages, charts and live quotes are that league's (`?league=`, `leagueId`). */
export function scenarioOf(portfolio) {
  return portfolio?.scenarioLeague ?? null;
}

/** A stock's page as a portfolio's lists link it: in the scenario league's own market for
 * that league's portfolio (`#/stock/S01?league=7`), else the real market's, with
 * `?portfolio=` when `from` is given (its trades then start in it). */
export function stockHref(symbol, portfolio, from = null) {
  const path = `#/stock/${encodeURIComponent(symbol)}`;
  const league = scenarioOf(portfolio);
  if (league != null) return `${path}?league=${league}`;
  return from != null ? `${path}?portfolio=${from}` : path;
}

/** Whether the player only watches a team's portfolio: its traders trade it. */
export function watchesOnly(portfolio) {
  return portfolio?.team?.role === 'viewer';
}

/** What a viewer of a team's portfolio is told where trades are placed. */
export const VIEWER_WORDS = 'You watch this team\'s portfolio; its traders trade it.';

/** Who placed a trade or order (`placedBy`) on a team's portfolio: "you", a teammate's
 * username, or "a former member" (an erased account's trades keep no name). */
export function placerName(portfolio, placedBy) {
  if (placedBy == null) return 'a former member';
  if (placedBy === session.user?.id) return 'you';
  return portfolio?.team?.members.find((m) => m.userId === placedBy)?.username ?? `member #${placedBy}`;
}

/** The portfolio of `id` among `portfolios` (ids compared as text, as URLs carry them). */
export function portfolioById(portfolios, id) {
  return portfolios.find((p) => String(p.id) === String(id));
}

/** The currency a portfolio's amounts are in: a league's own, else dollars. */
export function currencyOf(portfolios, id) {
  return portfolioById(portfolios, id)?.currency ?? 'USD';
}

/** Where the portfolio a player last picked on a page is kept: in this browser, per player. */
function shownKey() {
  const id = session.user?.id;
  return id == null ? null : `mockstock.shownPortfolio.${id}`;
}

function shownLast() {
  const key = shownKey();
  try { return key ? localStorage.getItem(key) : null; } catch { return null; }
}

/** Remembers the portfolio the player picked in a page's select (Portfolio, Orders,
 * History, Analytics): those pages show it first from then on. */
export function rememberShown(id) {
  const key = shownKey();
  try { if (key) localStorage.setItem(key, String(id)); } catch { /* storage refused: nothing kept */ }
}

/**
 * The portfolio a page shows (as text, '' for none): the one asked for (an id from the
 * address) when it is still listed — a league portfolio archived by a reset is not —,
 * else the one the player last picked on a page when it is still listed, else their
 * league portfolio when they have exactly one (a class's student plays there), else the
 * first (the personal one).
 */
export function chosenPortfolio(portfolios, asked) {
  if (asked && portfolioById(portfolios, asked)) return String(asked);
  const last = shownLast();
  if (last && portfolioById(portfolios, last)) return last;
  const leagues = portfolios.filter((p) => p.kind === 'league');
  if (leagues.length === 1) return String(leagues[0].id);
  return String(portfolios[0]?.id ?? '');
}

/** Reads the league of a league portfolio, each league once (null for a personal or
 * practice portfolio, or when it cannot be read): `(portfolioId) => Promise<League|null>`.
 * A dialog makes one, so what it says of a league is what the league says now. */
export function leagueReader(portfolios) {
  const asked = new Map();
  return (id) => {
    const leagueId = portfolioById(portfolios, id)?.leagueId;
    if (!leagueId) return Promise.resolve(null);
    if (!asked.has(leagueId)) {
      asked.set(leagueId, api(`/api/leagues/${leagueId}`).catch(() => { asked.delete(leagueId); return null; }));
    }
    return asked.get(leagueId);
  };
}

/** A portfolio's label in a list: "Personal portfolio", "Practice: Name", "League: Name",
 * "Team: Name" (a team's portfolio in a team league). */
export function portfolioLabel(portfolio) {
  if (portfolio.team) return `Team: ${portfolio.team.name}`;
  return ({ personal: 'Personal portfolio', practice: `Practice: ${portfolio.name}`, league: `League: ${portfolio.name}` })[portfolio.kind];
}

/** A select of the portfolios, `selected` chosen; `onchange(id)` when another is picked. */
export function portfolioSelect(portfolios, selected, onchange, id = 'portfolio-select') {
  return h('select', { id, onchange: (event) => onchange(event.target.value) },
    portfolios.map((p) => h('option', { value: p.id, selected: String(p.id) === String(selected) }, portfolioLabel(p))));
}

/** A page's select of the portfolios: the one picked is remembered (`rememberShown`),
 * then `go(id)` shows it. */
export function shownPortfolioSelect(portfolios, selected, go, id) {
  return portfolioSelect(portfolios, selected, (chosen) => { rememberShown(chosen); go(chosen); }, id);
}

/** A portfolio as a sentence names it. */
export function portfolioName(portfolio) {
  if (!portfolio || portfolio.kind === 'personal') return 'your personal portfolio';
  if (portfolio.team) return `the team “${portfolio.team.name}” in “${portfolio.team.leagueName ?? portfolio.name}”`;
  return portfolio.kind === 'league' ? `the league “${portfolio.name}”` : `the practice portfolio “${portfolio.name}”`;
}

const LAST_PORTFOLIO = 'mockstock.tradingPortfolio';

/** Which portfolio a trade starts in: the one the page came from (?portfolio=), else the
 * one last traded in, else the first (the personal one). */
export function tradingPortfolio(portfolios, context) {
  const known = (id) => portfolios.some((p) => String(p.id) === String(id));
  const asked = context.query.get('portfolio');
  if (asked && known(asked)) return String(asked);
  const last = sessionStorage.getItem(LAST_PORTFOLIO);
  if (last && known(last)) return last;
  return String(portfolios[0]?.id ?? '');
}

/** The portfolio traded in last: the next trade starts there. */
export function rememberPortfolio(id) {
  sessionStorage.setItem(LAST_PORTFOLIO, String(id));
}

/** A league portfolio was reset: the next trade starts in the new one if it would have
 * started in the old (archived) one, and the pages show the new one if they showed the old. */
export function replacePortfolio(previous, next) {
  if (previous != null && sessionStorage.getItem(LAST_PORTFOLIO) === String(previous)) rememberPortfolio(next);
  if (previous != null && shownLast() === String(previous)) rememberShown(next);
}
