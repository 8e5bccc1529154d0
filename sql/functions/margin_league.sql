-- Whether a league's portfolios are closed each market day for margin (margin_close): its
-- rules lend, keep a maintenance margin, or charge interest or borrow fees. The one rule
-- of which portfolios the closes visit: the market's closes (MarginCloses) and a scenario
-- league's, each day its market moves on (league_market_advance). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION margin_league(p_league leagues) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_league.margin_percent IS NOT NULL OR p_league.maintenance_percent IS NOT NULL
        OR p_league.debit_rate_percent > 0 OR p_league.credit_rate_percent > 0 OR p_league.borrow_fee_percent > 0
$$;
