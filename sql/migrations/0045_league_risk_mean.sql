-- The mean daily return of each member's league days, kept beside the ratios so that a
-- Sharpe or Sortino ratio the figures leave undefined (returns that never vary, or no
-- day down) still ranks by its sign (ratio_rank). A rate, so floating point.
ALTER TABLE league_risk ADD COLUMN mean_return double precision;
