-- Achievements: a catalog, what each user earned, and the rules that award them. Awards
-- happen inside the transaction of the event that earns them (trigger functions run in
-- the statement that fires them), once per user: the primary key of user_achievements
-- makes a concurrent second award wait for the first and then do nothing.

-- Money paid into each portfolio (Σ cash movements), kept by a trigger; the base of
-- returns and of the "up fifty" achievement.
ALTER TABLE portfolios ADD COLUMN paid_in numeric NOT NULL DEFAULT 0;
UPDATE portfolios p SET paid_in = coalesce((SELECT sum(amount) FROM cash_movements c WHERE c.portfolio_id = p.id), 0);

CREATE FUNCTION count_paid_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE portfolios SET paid_in = paid_in + NEW.amount WHERE id = NEW.portfolio_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER cash_movements_paid_in AFTER INSERT ON cash_movements
    FOR EACH ROW EXECUTE FUNCTION count_paid_in();

-- For a sale: the proceeds after the fee minus the average cost of the shares sold.
ALTER TABLE trades ADD COLUMN realized_gain numeric;

CREATE TABLE achievements (
    code        text PRIMARY KEY,
    position    integer NOT NULL UNIQUE,
    name        text NOT NULL,
    description text NOT NULL,
    reward      numeric NOT NULL CHECK (reward >= 0),
    -- What `progress` counts towards (1 for yes/no achievements).
    target      integer NOT NULL DEFAULT 1 CHECK (target > 0)
);

INSERT INTO achievements (code, position, name, description, reward, target) VALUES
    ('first_trade',    1, 'First trade',      'Buy or sell a stock for the first time.',                          100.00, 1),
    ('first_profit',   2, 'In the green',     'Sell shares for more than they cost you, after fees.',             250.00, 1),
    ('ten_trades',     3, 'Active trader',    'Make ten trades.',                                                 500.00, 10),
    ('diversified',    4, 'Diversified',      'Hold five different stocks at once in one portfolio.',             500.00, 5),
    ('joined_league',  5, 'Team player',      'Join a league with its code.',                                     250.00, 1),
    ('created_league', 6, 'League founder',   'Create a league.',                                                 250.00, 1),
    ('up_fifty',       7, 'Up fifty percent', 'Grow a portfolio to 1.5 times the money paid into it.',           2500.00, 1),
    ('podium',         8, 'On the podium',    'Finish a league of at least three players in the top three.',    1000.00, 1);

CREATE TABLE user_achievements (
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code      text NOT NULL REFERENCES achievements (code),
    earned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, code)
);

-- Awards an achievement once: the reward goes to the personal portfolio as a `reward`
-- cash movement, with a notification. Returns false when it was already earned.
CREATE FUNCTION award_achievement(p_user bigint, p_code text) RETURNS boolean LANGUAGE plpgsql AS $$
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
    INSERT INTO notifications (user_id, title, body)
    VALUES (p_user, 'Achievement earned: ' || earned.name,
            earned.description || ' Reward: ' || to_char(earned.reward, 'FM999G999G990D00') || ' added to your personal portfolio.');
    RETURN true;
END
$$;

-- The trade achievements, checked after each trade in its transaction; once a user has
-- earned them all, a trade costs one lookup here. "Up fifty percent" is a matter of
-- prices, not trades: AchievementStore.awardPriceAchievements checks it periodically.
CREATE FUNCTION award_trade_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner bigint;
    earned text[];
BEGIN
    SELECT p.user_id, ARRAY(SELECT a.code FROM user_achievements a WHERE a.user_id = p.user_id)
    INTO STRICT owner, earned
    FROM portfolios p WHERE p.id = NEW.portfolio_id;
    IF NOT 'first_trade' = ANY (earned) THEN
        PERFORM award_achievement(owner, 'first_trade');
    END IF;
    IF NEW.realized_gain > 0 AND NOT 'first_profit' = ANY (earned) THEN
        PERFORM award_achievement(owner, 'first_profit');
    END IF;
    IF NOT 'ten_trades' = ANY (earned) AND (
        SELECT count(*) FROM (
            SELECT 1 FROM trades WHERE portfolio_id IN (SELECT id FROM portfolios WHERE user_id = owner) LIMIT 10
        ) recent) >= 10 THEN
        PERFORM award_achievement(owner, 'ten_trades');
    END IF;
    IF NEW.side = 'buy' AND NOT 'diversified' = ANY (earned) AND (
        SELECT count(*) FROM holdings WHERE portfolio_id = NEW.portfolio_id AND quantity > 0) >= 5 THEN
        PERFORM award_achievement(owner, 'diversified');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER trades_achievements AFTER INSERT ON trades
    FOR EACH ROW EXECUTE FUNCTION award_trade_achievements();

-- Creating a league (its owner's membership) or joining one.
CREATE FUNCTION award_league_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM leagues WHERE id = NEW.league_id AND owner_id = NEW.user_id) THEN
        PERFORM award_achievement(NEW.user_id, 'created_league');
    ELSE
        PERFORM award_achievement(NEW.user_id, 'joined_league');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER league_members_achievements AFTER INSERT ON league_members
    FOR EACH ROW EXECUTE FUNCTION award_league_achievements();
