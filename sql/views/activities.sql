-- Everything that changed a portfolio, newest first by (at, source, id): fills (amount is
-- the cash they moved: − cost and fee for a buy, + proceeds after the fee for a sale),
-- cash movements (dividends, cash in lieu, rewards, adjustments, starting cash) and
-- splits (quantity is the shares the split added or removed; one row per action and
-- portfolio, whatever positions it reached). A fill's `made_by` (trade, order or
-- liquidation), `spread` and `impact` say what made it and where its price came from.
CREATE OR REPLACE VIEW activities AS
SELECT t.portfolio_id, t.created_at AS at, 1 AS source, t.id, 'fill'::text AS type, t.symbol, t.side, t.quantity, t.price,
       CASE t.side WHEN 'buy' THEN -(t.amount + t.fee) ELSE t.amount - t.fee END AS amount, t.fee, NULL::text AS note,
       t.source AS made_by, t.spread, t.impact
FROM trades t
UNION ALL
SELECT c.portfolio_id, c.created_at, 2, c.id, c.kind, NULL, NULL, NULL, NULL, c.amount, NULL, c.note, NULL, NULL, NULL
FROM cash_movements c
UNION ALL
SELECT x.portfolio_id, x.applied_at, 3, a.id, 'split', a.symbol, NULL, x.quantity_after - x.quantity_before, NULL, NULL, NULL,
       a.symbol || ' split ' || split_words(a.ratio) || ': ' || x.quantity_before || ' → ' || x.quantity_after || ' shares',
       NULL, NULL, NULL
FROM (SELECT action_id, portfolio_id, min(applied_at) AS applied_at,
             sum(quantity_before)::bigint AS quantity_before, sum(quantity_after)::bigint AS quantity_after
      FROM corporate_action_applications GROUP BY action_id, portfolio_id) x
JOIN corporate_actions a ON a.id = x.action_id
WHERE a.kind = 'split';
