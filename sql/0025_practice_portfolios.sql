-- Practice portfolios: a user's own portfolios besides the personal one, with a chosen
-- starting cash and base currency, for trying things out. They are never ranked (no
-- league reads them), earn no achievements, and their trades count for none. "The
-- personal portfolio" is now the one with no league that is not a practice portfolio.
ALTER TABLE portfolios
    ADD COLUMN practice boolean NOT NULL DEFAULT false,
    -- The currency its figures are shown in by default (values are kept in dollars).
    ADD COLUMN base_currency text NOT NULL DEFAULT 'USD' CHECK (base_currency ~ '^[A-Z]{3}$'),
    ADD CONSTRAINT portfolios_practice_has_no_league CHECK (NOT practice OR league_id IS NULL);

DROP INDEX portfolios_personal_key;
CREATE UNIQUE INDEX portfolios_personal_key ON portfolios (user_id) WHERE league_id IS NULL AND NOT practice;
CREATE INDEX portfolios_practice ON portfolios (user_id) WHERE practice;

CREATE OR REPLACE FUNCTION league_standings_live(p_league bigint)
RETURNS TABLE (place bigint, rank bigint, user_id bigint, username text, net_worth numeric,
               cash numeric, holdings_value numeric, paid_in numeric)
LANGUAGE sql STABLE AS $$
    WITH members AS (
        SELECT m.user_id, p.id AS portfolio_id, p.cash, p.paid_in
        FROM league_members m JOIN portfolios p ON p.user_id = m.user_id AND p.league_id IS NULL AND NOT p.practice
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

CREATE OR REPLACE FUNCTION achievement_progress(p_user bigint, p_code text) RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT least(a.target, CASE a.code
        WHEN 'first_trade' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND NOT p.practice LIMIT a.target) n)
        WHEN 'ten_trades' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND NOT p.practice LIMIT a.target) n)
        WHEN 'first_profit' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND NOT p.practice AND t.realized_gain > 0 LIMIT a.target) n)
        WHEN 'diversified' THEN (SELECT coalesce(max(held), 0) FROM (
            SELECT count(*) AS held FROM holdings h JOIN portfolios p ON p.id = h.portfolio_id
            WHERE p.user_id = p_user AND NOT p.practice AND h.quantity > 0 GROUP BY h.portfolio_id) held)
        ELSE 0 END)::integer
    FROM achievements a WHERE a.code = p_code
$$;

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
        WHERE user_id = p_user AND league_id IS NULL AND NOT practice RETURNING id INTO personal;
        INSERT INTO cash_movements (portfolio_id, kind, amount, note)
        VALUES (personal, 'reward', earned.reward, 'Achievement: ' || earned.name);
    END IF;
    PERFORM notify(p_user, 'Achievement earned: ' || earned.name,
                   earned.description || ' Reward: ' || to_char(earned.reward, 'FM999G999G990D00') || ' added to your personal portfolio.');
    RETURN true;
END
$$;

-- A practice portfolio's trade checks nothing (one lookup).
CREATE OR REPLACE FUNCTION award_trade_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner bigint;
    practising boolean;
    earned text[];
BEGIN
    SELECT p.user_id, p.practice, ARRAY(SELECT a.code FROM user_achievements a WHERE a.user_id = p.user_id)
    INTO STRICT owner, practising, earned
    FROM portfolios p WHERE p.id = NEW.portfolio_id;
    IF practising THEN
        RETURN NULL;
    END IF;
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
