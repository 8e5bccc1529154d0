-- The previous close is a column of current_prices (sql/views/current_prices.sql), which
-- holding_values already joins, instead of a previous_close() call per holding, which
-- cost more than the rest of a portfolio's valuation; the function goes. The view depends
-- on it, so it goes too and is defined again after the migrations, like every view.
DROP VIEW IF EXISTS holding_values;
DROP FUNCTION IF EXISTS previous_close(text);
