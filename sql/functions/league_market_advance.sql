-- Moves a scenario league's market on to league day p_to (at most its last day): the one
-- writer of a league's prices. In one transaction, under the lock of the league's market
-- row (so the clocks of several server processes and the host's button move it once):
-- the `day` orders of the day that ends expire, the bars of each day passed are stored
-- (dated bar_days[k]) and each instrument's quote becomes day p_to's close with the day
-- before's as previous close (league_bars), and the scripted events of the days passed
-- are marked applied and posted as league news, every member told. Returns the league
-- day now; NULL for a league without a market of its own. A day not after today's
-- changes nothing.
CREATE OR REPLACE FUNCTION league_market_advance(p_league bigint, p_to integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    market league_markets;
    target integer;
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
    UPDATE league_markets SET day = target, advanced_at = now() WHERE league_id = p_league;

    IF market.day > 0 THEN
        PERFORM close_orders(array(
            SELECT o.id FROM orders o JOIN league_instruments li ON li.symbol = o.symbol
            WHERE li.league_id = p_league AND o.status = 'new' AND o.time_in_force = 'day'
            ORDER BY o.id FOR UPDATE OF o
        ), 'expired', 'The league day ended.');
    END IF;

    INSERT INTO daily_bars AS d (symbol, day, open, high, low, close, volume)
    SELECT b.symbol, market.bar_days[b.day], b.open, b.high, b.low, b.close, b.volume
    FROM league_bars(p_league, market.day + 1, target) b
    ON CONFLICT (symbol, day) DO UPDATE SET open = excluded.open, high = excluded.high, low = excluded.low,
                                           close = excluded.close, volume = excluded.volume;

    INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
    SELECT li.symbol, now_bar.close, before_bar.close, now(), 'league'
    FROM league_instruments li
    JOIN daily_bars now_bar ON now_bar.symbol = li.symbol AND now_bar.day = market.bar_days[target]
    LEFT JOIN daily_bars before_bar ON before_bar.symbol = li.symbol AND before_bar.day = market.bar_days[target - 1]
    WHERE li.league_id = p_league
    ON CONFLICT (symbol) DO UPDATE SET price = excluded.price, previous_close = excluded.previous_close,
                                       as_of = excluded.as_of, source = excluded.source;

    FOR event IN
        SELECT e.id, e.headline, coalesce(e.body, e.headline) AS body FROM league_events e
        WHERE e.league_id = p_league AND e.day <= target AND e.applied_at IS NULL
        ORDER BY e.day, e.id
    LOOP
        INSERT INTO league_news (league_id, title, body) VALUES (p_league, event.headline, event.body)
        RETURNING id INTO news;
        PERFORM notify_members(l.id, l.name || ': ' || event.headline, event.body) FROM leagues l WHERE l.id = p_league;
        UPDATE league_events SET applied_at = now(), news_id = news WHERE id = event.id;
    END LOOP;
    RETURN target;
END
$$;
