-- What p_quantity shares (negative: sold) at the close of p_day are today, through the
-- splits since: each split keeps the whole shares (the fraction is paid as cash in lieu).
-- p_zone is the market's time zone (backdated_actions).
CREATE OR REPLACE FUNCTION backdated_shares(p_portfolio bigint, p_symbol text, p_day date, p_through date, p_quantity bigint, p_zone text)
RETURNS bigint LANGUAGE plpgsql STABLE AS $$
DECLARE
    shares bigint := p_quantity;
    action corporate_actions;
BEGIN
    FOR action IN SELECT * FROM backdated_actions(p_portfolio, p_symbol, p_day, p_through, p_zone) WHERE kind = 'split' LOOP
        shares := trunc(shares * action.ratio);
    END LOOP;
    RETURN shares;
END
$$;
