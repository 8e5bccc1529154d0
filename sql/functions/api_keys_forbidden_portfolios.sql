-- The portfolios no API key may trade: a league's portfolios (league_portfolios: in an
-- isolated league its league portfolios, in a shared one its members' personal ones)
-- while a league whose bot policy is `forbidden` has not ended (league_ended). The one
-- rule behind creating keys, using them and the orders they placed: as a set for the
-- matcher and the sweep (read once per statement), one portfolio at a time through
-- api_keys_forbidden. Plain SQL, inlined into the caller's query.
CREATE OR REPLACE FUNCTION api_keys_forbidden_portfolios() RETURNS TABLE (portfolio_id bigint) LANGUAGE sql STABLE AS $$
    SELECT lp.portfolio_id FROM leagues l CROSS JOIN LATERAL league_portfolios(l.id) lp
    WHERE l.bots = 'forbidden' AND NOT league_ended(l, now())
$$;
