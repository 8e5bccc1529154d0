// How a league's standings are ranked and what they say about risk: the orders a league
// ranks by (`rankBy`), the switch that shows another order to one viewer, the risk
// columns (Sharpe, Sortino, drawdown, excess return against the league's benchmark) and
// the line that says what they are measured over and against.
import { h, signed, benchmarkWords } from '../dom.js';
import { fractionPercent, magnitudePercent, ratio } from '../decimal.js';

/** The orders, as the API names them, and how the page says them. */
export const RANKINGS = [
  ['netWorth', 'Net worth'],
  ['return', 'Return'],
  ['sharpe', 'Sharpe'],
  ['sortino', 'Sortino'],
  ['drawdown', 'Drawdown'],
];

const NAMES = Object.fromEntries(RANKINGS);

/** An order the API knows, or null: what a `?rankBy=` in the address may hold. */
export function rankingOf(text) {
  return text && Object.hasOwn(NAMES, text) ? text : null;
}

/** "net worth", "return", … for a sentence. */
export function rankingWords(value) {
  if (value === 'sharpe' || value === 'sortino') return `the ${NAMES[value]} ratio`;
  if (value === 'drawdown') return 'drawdown, smallest first';
  return (NAMES[value] ?? value).toLowerCase();
}

/** A select of the orders, with `marked` (the league's own) said to be the league's. */
export function rankingSelect(id, chosen, marked) {
  const select = h('select', { id });
  labelRankings(select, marked);
  select.value = chosen;
  return select;
}

/** (Re)labels a ranking select's options, marking `marked` as the league's order. */
export function labelRankings(select, marked) {
  select.replaceChildren(...RANKINGS.map(([value, label]) =>
    h('option', { value }, value === marked ? `${label} (league's order)` : label)));
}

/** What a standing's cells are found by when live figures arrive: the member's id, or on
 * a team league's row (`teamId`, no `userId`) the team's. */
export function standingKey(standing) {
  return standing.teamId != null ? `team-${standing.teamId}` : String(standing.userId);
}

/** The excess-return column's title, naming the benchmark (and labelling the figure on a phone). */
function excessTitle(benchmark) {
  return `Excess vs ${!benchmark || benchmark === 'market' ? 'market' : benchmark}`;
}

/** The risk figures of a standing: each with its column, the cell's data key (for the
 * live updates) and how it is written. */
const FIGURES = [
  ['Sharpe', 'sharpe', 'sharpe', (text) => ratio(text)],
  ['Sortino', 'sortino', 'sortino', (text) => ratio(text)],
  ['Drawdown', 'drawdown', 'maxDrawdown', (text) => magnitudePercent(text)],
  [null, 'excess', 'excessReturn', (text) => signed(text, fractionPercent(text))],
];

/** The standings' risk columns for `league` (table() columns). */
export function riskColumns(league) {
  return FIGURES.map(([title, key, field, write]) => ({
    title: title ?? excessTitle(league.benchmark),
    class: `num risk ${key}`,
    cell: (s) => h('span', { dataset: { [key]: standingKey(s) } }, write(s[field])),
  }));
}

/** Writes a standing's new risk figures into the cells `board` shows for it. */
export function showRisk(board, standing) {
  for (const [, key, field, write] of FIGURES) {
    const cell = board.querySelector(`[data-${key}="${standingKey(standing)}"]`);
    if (cell) cell.replaceChildren(write(standing[field]));
  }
}

/** What the risk columns measure, and against what. */
export function riskNote(league) {
  return h('p', { class: 'hint', id: 'risk-note' },
    'Excess return is measured against ', h('strong', { id: 'risk-benchmark' }, benchmarkWords(league.benchmark)),
    '. Sharpe, Sortino, drawdown and excess return cover the league\'s days and are worked out about once a minute; “—” until a member has two daily returns.');
}
