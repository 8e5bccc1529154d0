-- Whether a portfolio may trade now, and if not why: the trade gate. `ok`; `frozen` (its
-- league's host froze trading, league_frozen); `closed` (its league is not open,
-- league_open: not started or ended); `note_required` (no journal note, `p_noted` false,
-- where the league requires one); `bots_forbidden` (sent through an API key on a
-- portfolio no key may trade: `p_key_forbidden`, which the calling statement reads from
-- api_keys_forbidden_portfolios itself, so a host's change binds the next trade, and only
-- for a key's trade). p_league is the portfolio's league row (NULL for a portfolio
-- without one). The one gate of the fill statement (TradeStatement), of placing an order
-- (OrderStore) and of /v2's account (AlpacaStore); the outcome's meaning to a trader is
-- TradeOutcome's. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION trade_gate(p_league leagues, p_at timestamptz, p_noted boolean, p_key_forbidden boolean)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN league_frozen(p_league) THEN 'frozen'
                WHEN NOT league_open(p_league, p_at) THEN 'closed'
                WHEN NOT p_noted AND coalesce(p_league.journal_required, false) THEN 'note_required'
                WHEN p_key_forbidden THEN 'bots_forbidden'
                ELSE 'ok' END
$$;
