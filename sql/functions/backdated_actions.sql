-- The actions a fill of p_symbol at the close of p_day in portfolio p_portfolio catches
-- up: those with a later ex-date up to the market's day p_through, except one still due
-- that the processor has not yet applied to this portfolio: it will, to the whole
-- position, fill included (it applies each action to each portfolio once). An action is
-- still due when it was recorded no later than its ex-date, counted in p_zone, the
-- market's time zone (as CorporateActionProcessor counts it).
CREATE OR REPLACE FUNCTION backdated_actions(p_portfolio bigint, p_symbol text, p_day date, p_through date, p_zone text)
RETURNS SETOF corporate_actions LANGUAGE sql STABLE AS $$
    SELECT * FROM corporate_actions a
    WHERE a.symbol = p_symbol AND a.ex_date > p_day AND a.ex_date <= p_through
      AND NOT (a.applied_at IS NULL AND a.ex_date >= market_day(a.created_at, p_zone)
               AND NOT EXISTS (SELECT 1 FROM corporate_action_applications x
                               WHERE x.action_id = a.id AND x.portfolio_id = p_portfolio AND x.trade_id IS NULL))
    ORDER BY a.ex_date, a.id
$$;
