-- League rules, set when a league is created: commissions, short selling, position
-- limits, the order types and symbols allowed. They apply to the league's own (isolated)
-- portfolios; personal portfolios follow the server's settings. A NULL flat commission
-- means the server's (TRADE_FEE), which is what leagues paid before rules existed.
ALTER TABLE leagues
    ADD COLUMN commission_flat numeric CHECK (commission_flat >= 0 AND commission_flat <= 1000000),
    ADD COLUMN commission_percent numeric NOT NULL DEFAULT 0 CHECK (commission_percent >= 0 AND commission_percent <= 10),
    ADD COLUMN allow_short_selling boolean NOT NULL DEFAULT false,
    ADD COLUMN short_margin_percent numeric NOT NULL DEFAULT 150
        CHECK (short_margin_percent >= 100 AND short_margin_percent <= 1000),
    ADD COLUMN max_position_percent numeric NOT NULL DEFAULT 100
        CHECK (max_position_percent > 0 AND max_position_percent <= 100),
    ADD COLUMN allowed_order_types text[] NOT NULL DEFAULT '{market,limit,stop,stop_limit}'
        CHECK (cardinality(allowed_order_types) >= 1 AND allowed_order_types <@ '{market,limit,stop,stop_limit}'),
    ADD COLUMN allowed_symbols text[] CHECK (cardinality(allowed_symbols) BETWEEN 1 AND 1000);
