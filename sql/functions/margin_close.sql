-- One margin portfolio's close of market day p_day (at p_at), once whatever the number of
-- server processes: the portfolio row is locked and the day's margin_closes row is the
-- record that it ran. In one transaction:
-- * interest on its cash for the calendar days since its previous close (the first close
--   counts one): negative cash pays debit_rate_percent/360 a day, positive earns
--   credit_rate_percent/360 (cash movement kind 'interest', to the cent);
-- * each short pays borrow_fee_percent/360 of its value a day ('borrow_fee', to the cent);
-- * then, where the league sets maintenance_percent, the equity (net worth) against what
--   maintenance requires, maintenance_percent % of the long and short positions' value:
--   below it is a margin call, told once a call (notification kind 'margin_call').
-- Returns the row written, or nothing when the day was closed already. Forced sales of a
-- call still standing at the next close are the server's (MarginCloses.liquidate).
CREATE OR REPLACE FUNCTION margin_close(p_portfolio bigint, p_day date, p_at timestamptz) RETURNS SETOF margin_closes
LANGUAGE plpgsql AS $$
DECLARE
    p portfolios;
    l leagues;
    previous margin_closes;
    days integer;
    interest numeric := 0;
    fee numeric := 0;
    shorts numeric;
    standing record;
    done margin_closes;
BEGIN
    SELECT * INTO p FROM portfolios WHERE id = p_portfolio AND archived_at IS NULL FOR UPDATE;
    IF NOT FOUND OR EXISTS (SELECT 1 FROM margin_closes WHERE portfolio_id = p_portfolio AND day = p_day) THEN
        RETURN;
    END IF;
    SELECT * INTO l FROM leagues WHERE id = p.league_id;
    SELECT * INTO previous FROM margin_closes WHERE portfolio_id = p_portfolio AND day < p_day ORDER BY day DESC LIMIT 1;
    days := CASE WHEN previous.day IS NULL THEN 1 ELSE p_day - previous.day END;
    SELECT s.shorts INTO shorts FROM margin_standing(p_portfolio) s;

    interest := round(p.cash * CASE WHEN p.cash < 0 THEN l.debit_rate_percent ELSE l.credit_rate_percent END / 36000 * days, 2);
    fee := -round(shorts * l.borrow_fee_percent / 36000 * days, 2);
    IF interest <> 0 THEN
        INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
        VALUES (p_portfolio, 'interest', interest,
                CASE WHEN interest < 0 THEN 'Interest on ' || money_text(-p.cash, p.cash_currency) || ' borrowed'
                     ELSE 'Interest on ' || money_text(p.cash, p.cash_currency) || ' of cash' END
                || ', ' || days || CASE WHEN days = 1 THEN ' day' ELSE ' days' END, p_at);
    END IF;
    IF fee <> 0 THEN
        INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
        VALUES (p_portfolio, 'borrow_fee', fee,
                'Borrow fee on ' || money_text(shorts, p.cash_currency) || ' sold short, ' || days || CASE WHEN days = 1 THEN ' day' ELSE ' days' END, p_at);
    END IF;
    UPDATE portfolios SET cash = cash + interest + fee WHERE id = p_portfolio;

    SELECT * INTO standing FROM margin_standing(p_portfolio);
    INSERT INTO margin_closes (portfolio_id, day, interest, borrow_fee, equity, required, called)
    VALUES (p_portfolio, p_day, interest, fee, standing.equity, standing.required, standing.below)
    RETURNING * INTO done;
    IF done.called AND NOT coalesce(previous.called, false) THEN
        PERFORM notify(p.user_id, 'Margin call in ' || l.name,
                       'At the close your equity was ' || money_text(done.equity, p.cash_currency) || ', below the ' || l.maintenance_percent
                       || '% maintenance of ' || money_text(done.required, p.cash_currency) || ' on positions worth '
                       || money_text(standing.longs + standing.shorts, p.cash_currency) || '. If it is still below at the next close, positions are sold, '
                       || 'largest first, until it is not.', 'margin_call');
    END IF;
    RETURN NEXT done;
END
$$;
