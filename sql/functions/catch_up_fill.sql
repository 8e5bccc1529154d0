-- Catches a back-dated fill up, in the fill's transaction: the fill already moved the
-- position by its shares today (backdated_shares); each later split pays the fraction it
-- leaves as cash in lieu, each later dividend pays (a sale: takes back) the amount on the
-- shares as of its ex-date, dated its ex-date (midnight in p_zone, the market's time
-- zone). Each application is recorded once (trade, action). Returns the cash moved.
CREATE OR REPLACE FUNCTION catch_up_fill(p_trade bigint, p_through date, p_zone text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    fill trades;
    action corporate_actions;
    shares bigint;
    after bigint;
    price numeric;
    paid numeric;
    total numeric := 0;
    at timestamptz;
BEGIN
    SELECT * INTO STRICT fill FROM trades WHERE id = p_trade;
    shares := CASE fill.side WHEN 'buy' THEN fill.quantity ELSE -fill.quantity END;
    FOR action IN SELECT * FROM backdated_actions(fill.portfolio_id, fill.symbol, market_day(fill.created_at, p_zone), p_through, p_zone) LOOP
        at := market_day_start(action.ex_date, p_zone);
        IF action.kind = 'split' THEN
            after := trunc(shares * action.ratio);
            SELECT b.close INTO price FROM daily_bars b
            WHERE b.symbol = action.symbol AND b.day < action.ex_date ORDER BY b.day DESC LIMIT 1;
            paid := round((shares * action.ratio - after) * coalesce(price / action.ratio, 0), 2);
        ELSE
            after := shares;
            paid := shares * action.amount;
        END IF;
        IF paid <> 0 THEN
            INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
            VALUES (fill.portfolio_id, CASE action.kind WHEN 'split' THEN 'cash_in_lieu' ELSE 'dividend' END, paid,
                    CASE WHEN action.kind = 'dividend' AND shares > 0 THEN
                             action.symbol || ' dividend of ' || action.amount || ' a share on ' || shares || ' shares'
                         WHEN action.kind = 'dividend' THEN
                             action.symbol || ' dividend of ' || action.amount || ' a share not earned by ' || -shares
                             || ' shares sold before it'
                         ELSE action.symbol || ' split ' || split_words(action.ratio) || ': cash in lieu of a fractional share' END,
                    at);
        END IF;
        INSERT INTO corporate_action_applications (action_id, portfolio_id, trade_id, quantity_before, quantity_after, cash, applied_at)
        VALUES (action.id, fill.portfolio_id, p_trade, shares, after, paid, at);
        total := total + paid;
        shares := after;
    END LOOP;
    UPDATE portfolios SET cash = cash + total WHERE id = fill.portfolio_id AND total <> 0;
    RETURN total;
END
$$;
