-- Risk-adjusted standings. How a league ranks by default (rank_by) and the benchmark its
-- members' excess returns are measured against; each member's risk figures over the
-- league's days (league_risk), computed in the background, and when the league's were
-- last computed (a process claims a league by moving risk_computed_at, so no two compute
-- it at once).
ALTER TABLE leagues
    ADD COLUMN rank_by text NOT NULL DEFAULT 'netWorth'
        CHECK (rank_by IN ('netWorth', 'return', 'sharpe', 'sortino', 'drawdown')),
    ADD COLUMN benchmark text NOT NULL DEFAULT 'market' CHECK (length(benchmark) BETWEEN 1 AND 12),
    ADD COLUMN risk_computed_at timestamptz;

CREATE TABLE league_risk (
    league_id     bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- How many daily returns the figures are made of (fewer than two: all null).
    days          integer NOT NULL CHECK (days >= 0),
    sharpe        numeric,
    sortino       numeric,
    max_drawdown  numeric CHECK (max_drawdown >= 0),
    excess_return numeric,
    PRIMARY KEY (league_id, user_id)
);
