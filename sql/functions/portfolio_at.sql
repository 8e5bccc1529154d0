-- A portfolio at the end of each of p_days (market days, counted in p_zone, the market's
-- time zone; for a scenario league's portfolio, the league's days, by their dates, each
-- move counted on the league day it was made in, league_day_of), rebuilt from its history
-- alone: every fill, cash movement and split (portfolio_moves) up to the end of the day. One row a day with no symbol carries the
-- day's cash and everything paid in or taken out by then (`inflow`); one row per symbol
-- held carries its shares, its price in the portfolio's currency (the day's close, or the
-- last close before it, at that day's reference rate, fx_rate, else the rate now; to four
-- decimals) and what the position was worth (`value`). The closes are the stored,
-- unadjusted ones: the shares held before a split are the shares of that time, and
-- dividends are in the cash. The one rule of a past day's worth: the value history
-- (ValueHistoryStore, which sums `value` per day and adds the cash with net_worth) and a
-- past day's composition (CompositionService) read it. One statement: running sums over
-- the activities give cash, inflows and shares per symbol on every day that matters; each
-- held symbol is valued at the close of the last day with one (the running latest priced
-- day, joined back to its bar).
CREATE OR REPLACE FUNCTION portfolio_at(p_portfolio bigint, p_days date[], p_zone text)
RETURNS TABLE (day date, symbol text, shares numeric, price numeric, value numeric, cash numeric, inflow numeric)
LANGUAGE sql STABLE AS $$
    WITH days AS (
        SELECT unnest(p_days) AS day
    ), league AS (
        -- A scenario league's portfolio counts its moves by the league's days (league_day_of).
        SELECT m AS market FROM portfolios p JOIN league_markets m ON m.league_id = p.league_id WHERE p.id = p_portfolio
    ), moves AS (
        SELECT coalesce((SELECT league_day_of(l.market, m.at) FROM league l), market_day(m.at, p_zone)) AS day,
               m.symbol, m.amount, m.inflow, m.shares
        FROM portfolio_moves m
        WHERE m.portfolio_id = p_portfolio
          AND (m.at < market_day_start((SELECT max(day) FROM days) + 1, p_zone) OR EXISTS (SELECT 1 FROM league))
    ), ledger AS (
        SELECT day, sum(sum(amount)) OVER (ORDER BY day) AS cash, sum(sum(inflow)) OVER (ORDER BY day) AS inflow
        FROM (SELECT day, amount, inflow FROM moves UNION ALL SELECT day, 0, 0 FROM days) x
        GROUP BY day
    ), symbols AS (
        SELECT DISTINCT symbol FROM moves WHERE symbol IS NOT NULL
    ), grid AS (
        SELECT day, symbol, sum(shares) AS shares
        FROM (SELECT day, symbol, shares FROM moves WHERE symbol IS NOT NULL
              UNION ALL SELECT d.day, s.symbol, 0 FROM days d CROSS JOIN symbols s) g
        GROUP BY day, symbol
    ), running AS (
        SELECT r.day, r.symbol, sum(r.shares) OVER w AS held, max(b.day) OVER w AS priced_on
        FROM grid r LEFT JOIN daily_bars b ON b.symbol = r.symbol AND b.day = r.day
        WINDOW w AS (PARTITION BY r.symbol ORDER BY r.day)
    ), rates AS (
        -- Dollar closes in the portfolio's currency: each day's reference rate.
        SELECT d.day, CASE WHEN p.cash_currency = 'USD' THEN 1
                           ELSE coalesce((SELECT x.rate FROM fx_rate('USD', p.cash_currency, d.day) x),
                                         fx_usd_to(p.cash_currency)) END AS rate
        FROM days d CROSS JOIN portfolios p WHERE p.id = p_portfolio
    ), priced AS (
        SELECT r.day, r.symbol, r.held,
               round(x.rate * coalesce(b.close, (SELECT c.close FROM daily_bars c WHERE c.symbol = r.symbol
                                                 AND c.day < r.day ORDER BY c.day DESC LIMIT 1)), 4) AS price
        FROM running r JOIN rates x ON x.day = r.day LEFT JOIN daily_bars b ON b.symbol = r.symbol AND b.day = r.priced_on
        WHERE r.held <> 0
    )
    SELECT l.day, NULL::text, NULL::numeric, NULL::numeric, NULL::numeric, l.cash, l.inflow
    FROM days d JOIN ledger l ON l.day = d.day
    UNION ALL
    SELECT day, symbol, held, price, held * price, NULL, NULL FROM priced
$$;
