-- Moves a scenario league's market on to league day p_to (at most its last day): the one
-- writer of a league's prices. In one transaction, under the lock of the league's market
-- row (so the clocks of several server processes and the host's button move it once),
-- the `day` orders of the day that ends expire, then day by day: the day that ends closes
-- (margin_close, where the league lends or keeps a maintenance margin), the next day's bars are
-- stored (dated bar_days[k]) and each instrument's quote becomes its close with the day
-- before's as previous close (league_bars), and that day's scripted events are marked
-- applied and posted as league news, every member told. Resting orders fill after it, at
-- the last day's prices (the server's follow-ups of new prices). Returns the league day
-- now; NULL for a league without a market of its own. A day not after today's changes
-- nothing.
CREATE OR REPLACE FUNCTION league_market_advance(p_league bigint, p_to integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    market league_markets;
    target integer;
    league leagues;
    step integer;
    event record;
    news bigint;
BEGIN
    SELECT * INTO market FROM league_markets WHERE league_id = p_league FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    target := least(p_to, cardinality(market.real_days));
    IF target <= market.day THEN
        RETURN market.day;
    END IF;
    UPDATE league_markets SET day = target, advanced_at = now(),
                              day_starts = day_starts || array_fill(now(), ARRAY[target - market.day])
    WHERE league_id = p_league;
    SELECT * INTO league FROM leagues WHERE id = p_league;
    -- The day that ends: its `day` orders expire (league_day_ended, now that the new day
    -- has begun; first: orders are locked before their portfolios, the lock order of every
    -- statement that touches orders).
    IF market.day > 0 THEN
        PERFORM close_orders(array(
            SELECT o.id FROM orders o JOIN league_instruments li ON li.symbol = o.symbol
            WHERE li.league_id = p_league AND o.status = 'new' AND league_day_ended(o.symbol, o.time_in_force, o.created_at)
            ORDER BY o.id FOR UPDATE OF o
        ), 'expired', 'The league day ended.');
    END IF;
    -- Day by day, so each day closes at its own prices: margin portfolios are charged and
    -- checked (margin_close; a call still standing at the next close is sold by the
    -- server's chores, MarginCloses).
    FOR step IN market.day + 1 .. target LOOP
        IF step > 1 AND margin_league(league) THEN
            PERFORM margin_close(p.id, market.bar_days[step - 1], now())
            FROM portfolios p WHERE p.league_id = p_league AND p.archived_at IS NULL ORDER BY p.id;
        END IF;

        -- Each league day's bars are written once (a plain insert: price_history_added).
        INSERT INTO daily_bars (symbol, day, open, high, low, close, volume)
        SELECT b.symbol, market.bar_days[step], b.open, b.high, b.low, b.close, b.volume
        FROM league_bars(p_league, step, step) b;

        INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
        SELECT li.symbol, now_bar.close, before_bar.close, now(), 'league'
        FROM league_instruments li
        JOIN daily_bars now_bar ON now_bar.symbol = li.symbol AND now_bar.day = market.bar_days[step]
        LEFT JOIN daily_bars before_bar ON before_bar.symbol = li.symbol AND before_bar.day = market.bar_days[step - 1]
        WHERE li.league_id = p_league
        ON CONFLICT (symbol) DO UPDATE SET price = excluded.price, previous_close = excluded.previous_close,
                                           as_of = excluded.as_of, source = excluded.source;

        FOR event IN
            SELECT e.id, e.headline, coalesce(e.body, e.headline) AS body FROM league_events e
            WHERE e.league_id = p_league AND e.day <= step AND e.applied_at IS NULL
            ORDER BY e.day, e.id
        LOOP
            INSERT INTO league_news (league_id, title, body) VALUES (p_league, event.headline, event.body)
            RETURNING id INTO news;
            PERFORM notify_members(league.id, league.name || ': ' || event.headline, event.body);
            UPDATE league_events SET applied_at = now(), news_id = news WHERE id = event.id;
        END LOOP;
    END LOOP;
    RETURN target;
END
$$;
