-- League standings: one definition computed live, snapshots for big and finished
-- leagues, and a daily history of every member's rank.

-- When the league's end was processed: final standings frozen, members notified.
ALTER TABLE leagues ADD COLUMN finished_at timestamptz;
CREATE INDEX leagues_unfinished_ends_at ON leagues (ends_at) WHERE finished_at IS NULL AND ends_at IS NOT NULL;

-- Each member's standing, best first: the personal portfolio in a shared league, the
-- league portfolio in an isolated one. Ties share a rank; `place` orders ties by name.
-- A price is the instrument's quote, else its last daily close (as in instrument_prices,
-- without that view's per-instrument work). Plain SQL, so the planner inlines it into
-- the caller's query and plans it for the league at hand.
CREATE FUNCTION league_standings_live(p_league bigint)
RETURNS TABLE (place bigint, rank bigint, user_id bigint, username text, net_worth numeric,
               cash numeric, holdings_value numeric, paid_in numeric)
LANGUAGE sql STABLE AS $$
    WITH members AS (
        SELECT m.user_id, p.id AS portfolio_id, p.cash, p.paid_in
        FROM league_members m JOIN portfolios p ON p.user_id = m.user_id AND p.league_id IS NULL
        WHERE m.league_id = p_league AND (SELECT mode FROM leagues WHERE id = p_league) = 'shared'
        UNION ALL
        SELECT p.user_id, p.id, p.cash, p.paid_in
        FROM portfolios p
        WHERE p.league_id = p_league AND p.archived_at IS NULL AND (SELECT mode FROM leagues WHERE id = p_league) = 'isolated'
    ), valued AS (
        SELECT h.portfolio_id,
               sum(h.quantity * coalesce(q.price, (SELECT d.close FROM daily_bars d WHERE d.symbol = h.symbol ORDER BY d.day DESC LIMIT 1))) AS value
        FROM members JOIN holdings h USING (portfolio_id) LEFT JOIN quotes q ON q.symbol = h.symbol
        WHERE h.quantity > 0
        GROUP BY h.portfolio_id
    ), worth AS (
        SELECT members.user_id, u.username, members.cash + coalesce(valued.value, 0) AS net_worth,
               members.cash, coalesce(valued.value, 0) AS holdings_value, members.paid_in
        FROM members JOIN users u ON u.id = members.user_id LEFT JOIN valued USING (portfolio_id)
    )
    SELECT row_number() OVER (ORDER BY net_worth DESC, username, user_id),
           rank() OVER (ORDER BY net_worth DESC),
           user_id, username, net_worth, cash, holdings_value, paid_in
    FROM worth
$$;

-- Standings as last computed for big leagues (refreshed every few seconds) and for
-- finished leagues (frozen at the end).
-- No foreign key: a refresh writes every member's row, and checking the league for each
-- costs more than the rest of the insert; LeagueStore.delete removes a league's rows.
CREATE TABLE league_standings (
    league_id      bigint NOT NULL,
    place          bigint NOT NULL,
    rank           bigint NOT NULL,
    user_id        bigint NOT NULL,
    username       text NOT NULL,
    net_worth      numeric NOT NULL,
    cash           numeric NOT NULL,
    holdings_value numeric NOT NULL,
    paid_in        numeric NOT NULL,
    PRIMARY KEY (league_id, place)
);

CREATE TABLE league_snapshots (
    league_id bigint PRIMARY KEY REFERENCES leagues (id) ON DELETE CASCADE,
    taken_at  timestamptz NOT NULL,
    members   integer NOT NULL
);

-- Each member's rank and net worth once a day, so clients can draw movement.
CREATE TABLE league_rank_history (
    league_id bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day       date NOT NULL,
    rank      bigint NOT NULL,
    net_worth numeric NOT NULL,
    PRIMARY KEY (league_id, user_id, day)
);

CREATE INDEX league_rank_history_day ON league_rank_history (league_id, day);
