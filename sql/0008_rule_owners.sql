-- One owner per rule: the price of an instrument, the value of a holding, the progress
-- towards an achievement and the writing of a notification are each defined once here
-- and used by every reader and writer (views, functions, triggers and the server).

-- The price every valuation uses: the instrument's quote, else its last daily close.
-- A view, so a query joining it by symbol is planned as a join (one last-close lookup per
-- instrument without a quote, not per holding).
CREATE VIEW current_prices AS
SELECT i.symbol,
       coalesce(q.price, (SELECT d.close FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 1)) AS price
FROM instruments i LEFT JOIN quotes q ON q.symbol = i.symbol;

-- What each holding (shares held, quantity above zero) is worth at current prices.
CREATE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, p.price, h.quantity * p.price AS value
FROM holdings h JOIN current_prices p ON p.symbol = h.symbol
WHERE h.quantity > 0;

-- Each instrument's current price with its previous close: the quote's, or else the
-- close before the last one. The price itself comes from current_prices.
CREATE OR REPLACE VIEW instrument_prices AS
SELECT i.symbol, i.name, i.description, i.sector, i.currency, i.active,
       cp.price,
       coalesce(q.previous_close, CASE WHEN q.symbol IS NULL THEN b.previous_close END) AS previous_close,
       coalesce(q.as_of, b.day::timestamptz) AS as_of
FROM instruments i
JOIN current_prices cp ON cp.symbol = i.symbol
LEFT JOIN quotes q ON q.symbol = i.symbol
LEFT JOIN LATERAL (
    SELECT (array_agg(last.close ORDER BY last.day DESC))[2] AS previous_close, max(last.day) AS day
    FROM (SELECT d.close, d.day FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 2) last
) b ON q.symbol IS NULL;

-- Standings value holdings through holding_values (same columns and ranking as before).
CREATE OR REPLACE FUNCTION league_standings_live(p_league bigint)
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
        SELECT v.portfolio_id, sum(v.value) AS value
        FROM members JOIN holding_values v USING (portfolio_id)
        GROUP BY v.portfolio_id
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

-- The one writer of notifications: to a user, or to everyone (p_user NULL, a broadcast).
CREATE FUNCTION notify(p_user bigint, p_title text, p_body text) RETURNS notifications LANGUAGE sql AS $$
    INSERT INTO notifications (user_id, title, body) VALUES (p_user, p_title, p_body) RETURNING *
$$;

-- How far a user is towards an achievement, capped at its target: the one definition
-- behind both the awards (trigger below) and the progress bars (AchievementStore).
-- Achievements earned by an event (joining, founding, the podium, up fifty) count 0
-- until earned.
CREATE FUNCTION achievement_progress(p_user bigint, p_code text) RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT least(a.target, CASE a.code
        WHEN 'first_trade' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user LIMIT a.target) n)
        WHEN 'ten_trades' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user LIMIT a.target) n)
        WHEN 'first_profit' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND t.realized_gain > 0 LIMIT a.target) n)
        WHEN 'diversified' THEN (SELECT coalesce(max(held), 0) FROM (
            SELECT count(*) AS held FROM holdings h JOIN portfolios p ON p.id = h.portfolio_id
            WHERE p.user_id = p_user AND h.quantity > 0 GROUP BY h.portfolio_id) held)
        ELSE 0 END)::integer
    FROM achievements a WHERE a.code = p_code
$$;

-- Awards an achievement once (reward to the personal portfolio, a notification).
CREATE OR REPLACE FUNCTION award_achievement(p_user bigint, p_code text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    earned achievements;
    personal bigint;
BEGIN
    INSERT INTO user_achievements (user_id, code) VALUES (p_user, p_code) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT * INTO STRICT earned FROM achievements WHERE code = p_code;
    IF earned.reward > 0 THEN
        UPDATE portfolios SET cash = cash + earned.reward
        WHERE user_id = p_user AND league_id IS NULL RETURNING id INTO personal;
        INSERT INTO cash_movements (portfolio_id, kind, amount, note)
        VALUES (personal, 'reward', earned.reward, 'Achievement: ' || earned.name);
    END IF;
    PERFORM notify(p_user, 'Achievement earned: ' || earned.name,
                   earned.description || ' Reward: ' || to_char(earned.reward, 'FM999G999G990D00') || ' added to your personal portfolio.');
    RETURN true;
END
$$;

-- Awards the achievement when the user's progress has reached its target.
CREATE FUNCTION award_if_reached(p_user bigint, p_code text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF achievement_progress(p_user, p_code) >= (SELECT target FROM achievements WHERE code = p_code) THEN
        RETURN award_achievement(p_user, p_code);
    END IF;
    RETURN false;
END
$$;

-- The trade achievements after each trade, in its transaction: each unearned one is
-- checked against achievement_progress when the trade could have moved it (a profit only
-- by a profitable sale, diversity only by a purchase); once a user has earned them all, a
-- trade costs one lookup here.
CREATE OR REPLACE FUNCTION award_trade_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner bigint;
    earned text[];
BEGIN
    SELECT p.user_id, ARRAY(SELECT a.code FROM user_achievements a WHERE a.user_id = p.user_id)
    INTO STRICT owner, earned
    FROM portfolios p WHERE p.id = NEW.portfolio_id;
    IF NOT 'first_trade' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'first_trade');
    END IF;
    IF NEW.realized_gain > 0 AND NOT 'first_profit' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'first_profit');
    END IF;
    IF NOT 'ten_trades' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'ten_trades');
    END IF;
    IF NEW.side = 'buy' AND NOT 'diversified' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'diversified');
    END IF;
    RETURN NULL;
END
$$;
