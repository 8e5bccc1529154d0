-- The product of a column (adjusted history multiplies ratios).
CREATE OR REPLACE AGGREGATE product (numeric) (SFUNC = numeric_mul, STYPE = numeric, INITCOND = '1');
