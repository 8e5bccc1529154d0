-- Everything that belongs to an account, as one JSON document (GET /api/me/export): the
-- user, their portfolios with holdings, trades, orders and cash movements (of those
-- portfolios), the trades and orders they placed on their teams' portfolios, their
-- notifications, API keys (never a secret or its hash), bots, league memberships (with
-- their team and role) and achievements. Amounts are exact decimal strings, moments ISO 8601 in
-- UTC (utc_text). Null when there is no such account.
CREATE OR REPLACE FUNCTION account_export(p_user bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'exportedAt', utc_text(now(), 3),
        'user', jsonb_build_object(
            'id', u.id, 'username', u.username, 'email', u.email, 'role', u.role, 'createdAt', utc_text(u.created_at, 3),
            'displayName', u.display_name, 'managedBy', u.managed_by),
        'portfolios', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', p.id, 'name', p.name, 'kind', p.kind, 'leagueId', p.league_id, 'cash', p.cash::text,
                'currency', p.cash_currency, 'paidIn', p.paid_in::text, 'createdAt', utc_text(p.created_at, 3),
                'archivedAt', utc_text(p.archived_at, 3),
                'holdings', coalesce((
                    SELECT jsonb_agg(jsonb_build_object('symbol', symbol_shown(h.symbol), 'quantity', h.quantity, 'costBasis', h.cost_basis::text)
                                     ORDER BY h.symbol)
                    FROM holdings h WHERE h.portfolio_id = p.id), '[]'))
                ORDER BY p.id)
            FROM portfolios p WHERE p.user_id = u.id), '[]'),
        'trades', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', t.id, 'portfolioId', t.portfolio_id, 'symbol', symbol_shown(t.symbol), 'side', t.side, 'quantity', t.quantity,
                'price', t.price::text, 'amount', t.amount::text, 'fee', t.fee::text, 'realizedGain', t.realized_gain::text,
                'fxRate', t.fx_rate::text, 'note', t.note, 'createdAt', utc_text(t.created_at, 3))
                ORDER BY t.id)
            FROM trades t JOIN portfolios p ON p.id = t.portfolio_id WHERE p.user_id = u.id), '[]'),
        'orders', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', o.id, 'portfolioId', o.portfolio_id, 'clientOrderId', o.client_order_id, 'symbol', symbol_shown(o.symbol), 'side', o.side,
                'type', o.type, 'timeInForce', o.time_in_force, 'quantity', o.quantity, 'limitPrice', o.limit_price::text,
                'stopPrice', o.stop_price::text, 'status', o.status, 'tradeId', o.trade_id, 'rejectReason', o.reject_reason,
                'note', o.note, 'createdAt', utc_text(o.created_at, 3), 'updatedAt', utc_text(o.updated_at, 3))
                ORDER BY o.id)
            FROM orders o JOIN portfolios p ON p.id = o.portfolio_id WHERE p.user_id = u.id), '[]'),
        'teamTrades', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', t.id, 'portfolioId', t.portfolio_id, 'symbol', symbol_shown(t.symbol), 'side', t.side, 'quantity', t.quantity,
                'price', t.price::text, 'amount', t.amount::text, 'fee', t.fee::text, 'note', t.note, 'createdAt', utc_text(t.created_at, 3))
                ORDER BY t.id)
            FROM trades t JOIN portfolios p ON p.id = t.portfolio_id WHERE t.placed_by = u.id AND p.user_id <> u.id), '[]'),
        'teamOrders', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', o.id, 'portfolioId', o.portfolio_id, 'symbol', symbol_shown(o.symbol), 'side', o.side, 'type', o.type,
                'quantity', o.quantity, 'limitPrice', o.limit_price::text, 'stopPrice', o.stop_price::text, 'status', o.status,
                'note', o.note, 'createdAt', utc_text(o.created_at, 3))
                ORDER BY o.id)
            FROM orders o WHERE o.placed_by = u.id AND o.user_id <> u.id), '[]'),
        'cashMovements', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', m.id, 'portfolioId', m.portfolio_id, 'kind', m.kind, 'amount', m.amount::text, 'note', m.note,
                'createdAt', utc_text(m.created_at, 3))
                ORDER BY m.id)
            FROM cash_movements m JOIN portfolios p ON p.id = m.portfolio_id WHERE p.user_id = u.id), '[]'),
        'notifications', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'id', n.id, 'title', n.title, 'body', n.body, 'createdAt', utc_text(n.created_at, 3),
                'readAt', (SELECT utc_text(r.read_at, 3) FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = u.id))
                ORDER BY n.id)
            FROM notifications n WHERE n.user_id = u.id), '[]'),
        'apiKeys', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'keyId', k.key_id, 'name', k.name, 'holderId', k.user_id, 'portfolioId', k.portfolio_id,
                'createdAt', utc_text(k.created_at, 3), 'lastUsedAt', utc_text(k.last_used_at, 3))
                ORDER BY k.created_at, k.key_id)
            FROM api_keys k WHERE k.user_id = u.id OR k.user_id IN (SELECT b.id FROM users b WHERE b.bot_owner_id = u.id)), '[]'),
        'bots', coalesce((
            SELECT jsonb_agg(jsonb_build_object('id', b.id, 'username', b.username, 'createdAt', utc_text(b.created_at, 3)) ORDER BY b.id)
            FROM users b WHERE b.bot_owner_id = u.id), '[]'),
        'leagues', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'leagueId', l.id, 'name', l.name, 'owner', l.owner_id = u.id,
                'joinedAt', utc_text(m.joined_at, 3), 'resets', m.resets,
                'team', (SELECT t.name FROM team_members tm JOIN teams t ON t.id = tm.team_id WHERE tm.league_id = l.id AND tm.user_id = u.id),
                'teamRole', (SELECT tm.role FROM team_members tm WHERE tm.league_id = l.id AND tm.user_id = u.id))
                ORDER BY l.id)
            FROM leagues l LEFT JOIN league_members m ON m.league_id = l.id AND m.user_id = u.id
            WHERE m.user_id IS NOT NULL OR l.owner_id = u.id), '[]'),
        'achievements', coalesce((
            SELECT jsonb_agg(jsonb_build_object('code', a.code, 'earnedAt', utc_text(a.earned_at, 3)) ORDER BY a.earned_at, a.code)
            FROM user_achievements a WHERE a.user_id = u.id), '[]'))
    FROM users u WHERE u.id = p_user
$$;
