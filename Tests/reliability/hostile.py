"""Hostile input: every route with malformed, mistyped, huge, negative, unicode and
SQL-looking input, other users' ids, forged tokens, non-admins on admin routes, mass
assignment, and a slowloris client. Passing means: only 4xx problem+json, no 500, no
state change, no secret in any answer, and the slowloris connection is cut while
normal clients keep working."""
import asyncio
import base64

import aiohttp
import hashlib
import hmac
import json
import time

from harness import ADMIN, JWT_SECRET, PASSWORD, alpaca_error, alpaca_headers
import scenarios

# The hostile server runs with the default throttle budgets (registrations lowered to keep
# the scenario short), behind a "proxy" on loopback so each attack can come from an
# address of its own, a fee, and a small admin upload cap.
SETTINGS = {
    "LOGIN_FAILURES_PER_USERNAME": "10", "LOGIN_FAILURES_PER_ADDRESS": "50", "LOGIN_FAILURES_GLOBAL": "1000",
    "REGISTRATIONS_PER_ADDRESS": "10", "TRUSTED_PROXIES": "127.0.0.1", "TRADE_FEE": "0.50",
    "ADMIN_UPLOAD_MAX_MB": "1",
}
COMBINING = "a" + "\u0301" * 100

# The state that no refused request may change.
FINGERPRINT = """
SELECT md5(concat_ws('|',
  (SELECT count(*) FROM users), (SELECT string_agg(role || username, ',' ORDER BY id) FROM users),
  (SELECT sum(cash) FROM portfolios), (SELECT count(*) FROM portfolios WHERE archived_at IS NULL),
  (SELECT count(*) FROM trades), (SELECT count(*) FROM holdings), (SELECT count(*) FROM cash_movements),
  (SELECT count(*) FROM leagues), (SELECT count(*) FROM league_members), (SELECT count(*) FROM league_bans),
  (SELECT count(*) FROM notifications), (SELECT count(*) FROM notification_reads),
  (SELECT count(*) FROM instruments), (SELECT string_agg(symbol || price, ',' ORDER BY symbol) FROM quotes),
  (SELECT count(*) FROM daily_bars), (SELECT count(*) FROM orders),
  (SELECT string_agg(id || status, ',' ORDER BY id) FROM orders), (SELECT sum(reserved_cash) FROM portfolios),
  (SELECT count(*) FROM corporate_actions), (SELECT string_agg(key_id, ',' ORDER BY key_id) FROM api_keys),
  (SELECT string_agg(key_id || user_id || ':' || portfolio_id || name, ',' ORDER BY key_id) FROM api_keys),
  (SELECT string_agg(id || ':' || bot_owner_id, ',' ORDER BY id) FROM users WHERE bot_owner_id IS NOT NULL),
  (SELECT count(*) FROM portfolios), (SELECT string_agg(id || ':' || user_id, ',' ORDER BY id) FROM portfolios),
  (SELECT string_agg(id || bots || member_count, ',' ORDER BY id) FROM leagues),
  (SELECT string_agg(league_id || ':' || user_id, ',' ORDER BY league_id, user_id) FROM league_members),
  (SELECT string_agg(id || ':' || owner_plays || ':' || coalesce(frozen_at::text, '-') || ':' || coalesce(frozen_reason, '-') || ':'
                     || resets_allowed || ':' || coalesce(finished_at::text, '-'), ',' ORDER BY id) FROM leagues),
  (SELECT string_agg(league_id || ':' || user_id || ':' || resets || ':' || own_resets, ',' ORDER BY league_id, user_id) FROM league_members),
  (SELECT string_agg(id || ':' || coalesce(archived_at::text, '-') || ':' || reserved_cash, ',' ORDER BY id) FROM portfolios),
  (SELECT string_agg(id || ':' || journal_required || ':' || rank_by || ':' || benchmark, ',' ORDER BY id) FROM leagues),
  (SELECT count(*) FROM league_news), (SELECT count(*) FROM orders WHERE note IS NOT NULL),
  (SELECT count(*) FROM trades WHERE note IS NOT NULL),
  (SELECT string_agg(id || ':' || coalesce(display_name, '-') || ':' || coalesce(managed_by::text, '-') || ':' || token_version
                     || ':' || md5(password_hash), ',' ORDER BY id) FROM users),
  (SELECT count(*) || ':' || coalesce(md5(string_agg(e::text, ',' ORDER BY id)), '-') FROM audit_events e WHERE id <= {audit_upto}),
  (SELECT string_agg(id || ':' || coalesce(delete_managed_after_days::text, '-'), ',' ORDER BY id) FROM leagues),
  (SELECT string_agg(id || ':' || teams, ',' ORDER BY id) FROM leagues),
  (SELECT count(*) || ':' || coalesce(string_agg(id || ':' || league_id || ':' || name || ':' || account_id, ',' ORDER BY id), '-') FROM teams),
  (SELECT count(*) || ':' || coalesce(string_agg(league_id || ':' || team_id || ':' || user_id || ':' || role, ',' ORDER BY league_id, user_id), '-')
   FROM team_members),
  (SELECT string_agg(id || ':' || coalesce(placed_by::text, '-'), ',' ORDER BY id) FROM orders),
  (SELECT string_agg(id || ':' || coalesce(placed_by::text, '-'), ',' ORDER BY id) FROM trades),
  -- Scenario leagues: their markets (the day and its moment), instruments and events.
  (SELECT count(*) || ':' || coalesce(string_agg(league_id || ':' || day || ':' || advanced_at, ',' ORDER BY league_id), '-') FROM league_markets),
  (SELECT count(*) || ':' || coalesce(string_agg(symbol || ':' || real_symbol || ':' || base, ',' ORDER BY symbol), '-') FROM league_instruments),
  (SELECT count(*) || ':' || coalesce(string_agg(id || ':' || day || ':' || coalesce(applied_at::text, '-'), ',' ORDER BY id), '-') FROM league_events),
  (SELECT count(*) FROM instruments WHERE league_id IS NOT NULL)))
"""

# (The audit log's part covers the events up to `{audit_upto}`, the last before the cases:
# the events after it must be exactly those of the host's actions answered among them.)
AUDIT_AFTER = "SELECT action, actor_id, coalesce(league_id::text, '') FROM audit_events WHERE id > {audit_upto} ORDER BY id"

# The same, part by part (one line each), to name what changed.
FINGERPRINT_PARTS = FINGERPRINT.replace("md5(concat_ws('|',", "(concat_ws(E'\\n',")
assert FINGERPRINT_PARTS != FINGERPRINT

# Bots that exist (the hostile bot cases count them before and after).
BOTS = "SELECT count(*), coalesce(string_agg(id || ':' || bot_owner_id || ':' || username, ',' ORDER BY id), '') FROM users WHERE bot_owner_id IS NOT NULL"


def wrong_code(code):
    """A join code with its first character changed: no league's (a code of any case joins)."""
    return ("B" if code[0].upper() != "B" else "C") + code[1:]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forge(claims, secret=JWT_SECRET.encode(), alg="HS256"):
    header = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    payload = b64(json.dumps(claims).encode())
    if alg == "none":
        return f"{header}.{payload}."
    digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[alg]
    signature = b64(hmac.new(secret, f"{header}.{payload}".encode(), digest).digest())
    return f"{header}.{payload}.{signature}"


def jwt_negatives(user_id):
    now = int(time.time())
    good = {"sub": str(user_id), "iss": "mockstock", "aud": "mockstock-api", "iat": now, "exp": now + 600, "ver": 0}
    return {
        "alg none": forge(good, alg="none"),
        "wrong secret": forge(good, secret=b"not-the-secret-not-the-secret-not-the-secret"),
        "HS512 with the secret": forge(good, alg="HS512"),
        "expired": forge({**good, "iat": now - 7200, "exp": now - 3600}),
        "issued in the future": forge({**good, "iat": now + 3600, "exp": now + 7200}),
        "wrong audience": forge({**good, "aud": "someone-else"}),
        "wrong issuer": forge({**good, "iss": "evil"}),
        "no subject": forge({k: v for k, v in good.items() if k != "sub"}),
        "unknown user": forge({**good, "sub": "99999999"}),
        "old token version": forge({**good, "ver": -1}),
        "garbage": "not.a.token",
        "empty": "",
        "truncated": forge(good)[:-5],
    }


async def run(result, client, database, server, log_path):
    admin = await client.login(*ADMIN)
    victim, victim_id = await client.register("victim")
    attacker, attacker_id = await client.register("attacker")
    # Mass assignment: role, cash, ownerId and ids in bodies are ignored.
    status, body, _ = await client.request("POST", "/api/auth/register", body={
        "username": "sneaky", "password": PASSWORD, "role": "admin", "cash": "1000000000", "id": 1})
    result.check(status == 201 and body["user"]["role"] == "player", f"mass assignment on register: {status} {body}")
    sneaky, sneaky_id = body["token"], body["user"]["id"]
    status, body, _ = await client.request("GET", "/api/portfolio", sneaky)
    result.check(body.get("cash") == "10000.00", f"mass-assigned cash: {body}")
    status, league, _ = await client.request("POST", "/api/leagues/create", attacker, {"name": "Mine", "ownerId": victim_id, "memberCount": 999})
    result.check(status == 201 and league["ownerId"] == attacker_id and league["memberCount"] == 1, f"mass assignment on league: {league}")
    status, victim_league, _ = await client.request("POST", "/api/leagues/create", victim, {"name": "Victim's"})
    status, _, _ = await client.request("POST", "/api/stock/buy", victim, {"symbol": "R1", "amount": 3})
    portfolios = (await client.request("GET", "/api/portfolios", victim))[1]
    victim_portfolio = portfolios[0]["id"]
    notices = (await client.request("GET", "/api/notifications", victim))[1]["items"]
    victim_notice = notices[0]["id"] if notices else 1
    # A penny stock whose sale cannot pay the fee.
    await client.request("PUT", "/api/admin/instruments", admin, [{"symbol": "PENNY", "name": "Penny Corp"}])
    await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "PENNY", "price": "0.01"}])
    status, _, _ = await client.request("POST", "/api/stock/buy", attacker, {"symbol": "PENNY", "amount": 10})
    result.check(status == 200, f"buying PENNY: {status}")
    status, victim_order, _ = await client.request("POST", "/api/orders", victim, {
        "symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1", "timeInForce": "gtc"})
    result.check(status == 201, f"victim's limit order: {status} {victim_order}")

    # A key of the victim's, for the attacker to try to use, revoke or copy.
    status, victim_key, _ = await client.request("POST", "/api/api-keys", victim, {"name": "victim's bot"})
    result.check(status == 201, f"victim's API key: {status} {victim_key}")

    # Bots of the attacker's, the victim's and another player's, seated in the victim's
    # leagues, with keys; one league switched to forbidding bots (bot_setup).
    bots = await bot_setup(result, client, database, victim, victim_id, attacker, attacker_id, sneaky)
    # A class the victim hosts without a seat, a frozen league, a finished one (host_setup).
    hosts = await host_setup(result, client, database, victim, victim_id, attacker, attacker_id, sneaky, sneaky_id)
    # Class rosters of the victim's class and of another host's, a full league, the admin's id (account_setup).
    accounts = await account_setup(result, client, database, hosts, admin, victim, victim_id, attacker, attacker_id, sneaky)
    # A team league of the victim's and one of sneaky's (team_setup).
    teams = await team_setup(result, client, database, hosts, victim, victim_id, attacker, sneaky)
    # Scenario leagues of the victim's, one where the attacker plays, and one of sneaky's (scenarios.hostile_setup).
    scenario = await scenarios.hostile_setup(result, client, database, admin, victim, attacker, sneaky)
    audit_upto = int(database.scalar("SELECT coalesce(max(id), 0) FROM audit_events"))
    fingerprint, fingerprint_parts = (query.replace("{audit_upto}", str(audit_upto)) for query in (FINGERPRINT, FINGERPRINT_PARTS))
    before = database.scalar(fingerprint)
    parts_before = database.query(fingerprint_parts)
    answers = []

    async def expect(method, path, token, expected, body=None, raw=None, content_type=None, headers=None, code=None):
        """A refusal: a status of `expected`, problem+json with a code (`code`, when given:
        the one, or one of a set) or, under /v2, Alpaca's error for that status."""
        status, answer, _ = await client.request(method, path, token, body, raw=raw, content_type=content_type, headers=headers)
        answers.append(answer if isinstance(answer, str) else json.dumps(answer))
        ok = status in expected and isinstance(answer, dict) and "code" in answer
        if code is not None:
            ok = ok and answer.get("code") in ({code} if isinstance(code, str) else code)
        if path.startswith("/v2/"):
            ok = ok and alpaca_error(status, answer)
        result.check(ok, f"{method} {path[:80]} {str(body if body is not None else raw)[:60]!r}: {status} {str(answer)[:120]}")
        return status

    writes = [
        ("POST", "/api/stock/buy"), ("POST", "/api/stock/sell"), ("POST", "/api/orders"), ("POST", "/api/orders/preview"),
        ("POST", "/api/leagues/create"),
        ("POST", "/api/auth/password"), ("PUT", "/api/admin/instruments"), ("POST", "/api/admin/quotes"),
        ("POST", "/api/admin/notifications"), ("POST", "/api/admin/corporate-actions"), ("POST", f"/api/admin/users/{victim_id}/funds"),
    ]
    cases = 0
    for method, path in writes:
        token = admin if "/admin/" in path else attacker
        for raw in ['{"symbol":', "[1,2", "nul", "\"text\"", "{\"a\":1}}", "\x00\x01", "{\"symbol\":\"R1\",\"amount\":1"]:
            await expect(method, path, token, {400, 422}, raw=raw)
            cases += 1
        await expect(method, path, token, {413}, raw="{\"pad\":\"" + "x" * (10 * 1024 * 1024) + "\"}")
        cases += 1
    bad_orders = [
        {"symbol": 5, "amount": "x"}, {"symbol": "R1", "amount": 0}, {"symbol": "R1", "amount": -1},
        {"symbol": "R1", "amount": 1.5}, {"symbol": "R1", "amount": 1e300}, {"symbol": "R1", "amount": 99999999999999999999},
        {"symbol": "R1", "amount": "1e3"}, {"symbol": "R1", "amount": None}, {"symbol": None, "amount": 1},
        {"symbol": "R1'; DROP TABLE users;--", "amount": 1}, {"symbol": "Ω≈ç√∫", "amount": 1}, {"symbol": "", "amount": 1},
        {"symbol": "R1", "amount": 1, "portfolioId": victim_portfolio}, {"symbol": "R1", "amount": 1, "portfolioId": "1 OR 1=1"},
        {"symbol": "R1", "amount": 10 ** 9 + 1},
    ]
    for side in ("buy", "sell"):
        for order in bad_orders:
            await expect("POST", f"/api/stock/{side}", attacker, {404, 422}, body=order)
            cases += 1
    limit = {"symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "5"}
    legs = {"takeProfit": {"limitPrice": "6"}, "stopLoss": {"stopPrice": "4"}}
    bad_resting = [
        {**limit, "limitPrice": None}, {**limit, "type": "market"}, {**limit, "limitPrice": "0"}, {**limit, "limitPrice": "-1"},
        {**limit, "limitPrice": "1e3"}, {**limit, "limitPrice": "5.00001"}, {**limit, "limitPrice": "1000000000"},
        {**limit, "limitPrice": 1e300}, {**limit, "stopPrice": "4"}, {**limit, "type": "stop"}, {**limit, "type": "trailing"},
        # Trailing stops: no trail, both, out of range, a limit or stop price, a trail on a limit order.
        {**limit, "type": "trailing_stop", "limitPrice": None}, {**limit, "type": "trailing_stop", "trailPercent": "1"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPercent": "1", "trailPrice": "1"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPercent": "100"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPercent": "-5"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPrice": "1e400"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPercent": "1; DROP TABLE orders"},
        {**limit, "type": "trailing_stop", "limitPrice": None, "trailPercent": "1", "stopPrice": "4"}, {**limit, "trailPrice": "1"},
        {**limit, "side": "short"}, {**limit, "timeInForce": "gtd"}, {**limit, "timeInForce": None, "type": None},
        {**limit, "quantity": 0}, {**limit, "quantity": 10 ** 9 + 1}, {**limit, "clientOrderId": ""},
        {**limit, "clientOrderId": "x" * 129}, {**limit, "clientOrderId": 7}, {**limit, "portfolioId": victim_portfolio},
        {**limit, "symbol": "R1'; DROP TABLE orders;--"}, {**limit, "quantity": 10 ** 9}, {**limit, "side": "sell"},
        # Orders with legs: missing, crossed or junk legs, the wrong side, class or time in force, beyond the cash.
        {**limit, "orderClass": "bracket"}, {**limit, "orderClass": "oto"}, {**limit, "orderClass": "BRACKET", **legs},
        {**limit, "orderClass": "bracket", "takeProfit": {"limitPrice": "4"}, "stopLoss": {"stopPrice": "3"}},
        {**limit, "orderClass": "bracket", "takeProfit": {"limitPrice": "6"}, "stopLoss": {"stopPrice": "7"}},
        {**limit, "orderClass": "bracket", "takeProfit": "6", "stopLoss": {"stopPrice": "4"}},
        {**limit, "orderClass": "bracket", "takeProfit": {"limitPrice": "6; DROP TABLE orders"}, "stopLoss": {"stopPrice": "4"}},
        {**limit, "orderClass": "bracket", "takeProfit": {"limitPrice": "6"}, "stopLoss": {"stopPrice": "4", "limitPrice": "-1"}},
        {**limit, "orderClass": "bracket", "takeProfit": {"limitPrice": "1e400"}, "stopLoss": {"stopPrice": "4"}},
        {**limit, "orderClass": "oco", **legs}, {**limit, "orderClass": "oto", **legs}, {**limit, **legs},
        {**limit, "orderClass": "bracket", "timeInForce": "ioc", **legs}, {**limit, "orderClass": "bracket", "side": "sell", **legs},
        {**limit, "orderClass": "bracket", "portfolioId": victim_portfolio, **legs},
        {**limit, "orderClass": "bracket", "quantity": 10 ** 9, **legs}, {**limit, "orderClass": 7, **legs},
        {**limit, "side": "sell", "orderClass": "oco", "limitPrice": "7", **legs},
    ]
    for order in bad_resting:
        # A preview refuses what placing refuses, and never says what another's portfolio holds.
        for path in ("/api/orders", "/api/orders/preview"):
            await expect("POST", path, attacker, {400, 404, 422}, body=order)
            cases += 1
    for method, path in [("DELETE", f"/api/orders/{victim_order['id']}"), ("GET", f"/api/orders/{victim_order['id']}"),
                         ("DELETE", "/api/orders/abc"), ("DELETE", f"/api/orders?portfolioId={victim_portfolio}"),
                         ("GET", f"/api/orders?portfolioId={victim_portfolio}"), ("GET", "/api/orders?status=everything"),
                         ("GET", "/api/orders?before=-1"), ("GET", f"/api/activities?portfolioId={victim_portfolio}"),
                         ("GET", "/api/activities?before=x"), ("GET", "/api/activities?before=2026-01-01T00:00:00.000000Z~9~1"),
                         ("GET", "/api/activities?before=2026-99-01T00:00:00.000000Z~1~1"),
                         ("GET", "/api/activities?before=%27%3B%20DROP%20TABLE%20trades%3B--"),
                         ("GET", "/api/stock/AAPL/chart?adjusted=%00"), ("GET", "/api/stock/NOPE/corporate-actions")]:
        await expect(method, path, attacker, {404, 422})
        cases += 1
    bad_leagues = [
        {"name": ""}, {"name": "x" * 65}, {"name": "x", "startingCash": "0"}, {"name": "x", "startingCash": "-5"},
        {"name": "x", "startingCash": "1e400"}, {"name": "x", "startingCash": "NaN"}, {"name": "x", "mode": "' OR 1=1"},
        {"name": "x", "startsAt": "2030-01-02T00:00:00Z", "endsAt": "2030-01-01T00:00:00Z"}, {"name": "x", "maxMembers": -3},
        {"name": 12}, {"name": "x", "startsAt": "yesterday"},
    ]
    isolated = {"name": "x", "mode": "isolated"}
    # Leagues in other currencies: a bad or rateless code, a shared one, a bad spread.
    bad_leagues += [
        {**isolated, "currency": "'; DROP TABLE leagues;--"}, {**isolated, "currency": 978}, {**isolated, "currency": "XXX"},
        {"name": "x", "currency": "EUR"}, {**isolated, "currency": "EUR", "rules": {"fxSpreadPercent": "-1"}},
        {**isolated, "currency": "EUR", "rules": {"fxSpreadPercent": "1e9"}}, {**isolated, "rules": {"fxSpreadPercent": "1"}},
    ]
    bad_leagues += [
        {**isolated, "rules": rules} for rules in [
            {"commissionPercent": "10.5"}, {"commissionFlat": "-0.01"}, {"commissionFlat": "1e9"}, {"maxPositionPercent": "0"},
            {"maxPositionPercent": "100.00001"}, {"shortMarginPercent": "99"}, {"shortMarginPercent": "1001"},
            {"allowedOrderTypes": []}, {"allowedOrderTypes": ["market", "iceberg"]}, {"allowedOrderTypes": "market"},
            {"allowedSymbols": []}, {"allowedSymbols": ["R1", "NOPE"]}, {"allowedSymbols": ["R1'; DROP TABLE leagues;--"]},
            {"allowedSymbols": ["R1"] * 1001}, {"allowShortSelling": "yes"}, "strict",
            # Realistic fills: an unknown price rule, spreads, impacts, volume caps and minimums out of range.
            {"fillPrice": "mid"}, {"fillPrice": "'; DROP TABLE leagues;--"}, {"fillPrice": 1}, {"spreadBps": "500.01"},
            {"spreadBps": "-1"}, {"spreadBps": "NaN"}, {"impactCoefficient": "1.0001"}, {"impactCoefficient": "-0.1"},
            {"impactCoefficient": "1e-9"}, {"minPrice": "-1"}, {"minPrice": "1e400"}, {"minShortPrice": "1000000.01"},
            {"volumeCapPercent": "0.09"}, {"volumeCapPercent": "100.01"}, {"volumeCapPercent": "ten"}, {"volumeCapPercent": "-5"},
            # Margin: out of range, not numbers, too precise.
            {"marginPercent": "24.99"}, {"marginPercent": "100.01"}, {"marginPercent": True}, {"maintenancePercent": "9"},
            {"maintenancePercent": "1e3"}, {"debitRatePercent": "50.01"}, {"creditRatePercent": "-0.01"},
            {"borrowFeePercent": "100.5"}, {"borrowFeePercent": "'; DROP TABLE margin_closes;--"}, {"debitRatePercent": "8.00001"},
        ]
    ] + [{"name": "x", "rules": {"commissionFlat": "1"}}]
    split = {"symbol": "R1", "kind": "split", "exDate": "2021-04-10", "ratio": "2"}
    bad_actions = [
        {**split, "ratio": "0"}, {**split, "ratio": "-4"}, {**split, "ratio": "1"}, {**split, "ratio": "1e9"},
        {**split, "ratio": "2.0000001"}, {**split, "ratio": None}, {**split, "amount": "1"}, {**split, "kind": "merger"},
        {**split, "exDate": "2021-02-30"}, {**split, "exDate": "10/04/2021"}, {**split, "exDate": "0001-01-01"},
        {**split, "symbol": "NOPE"}, {**split, "symbol": "R1'; DROP TABLE corporate_actions;--"},
        {"symbol": "R1", "kind": "dividend", "exDate": "2021-04-10", "amount": "-0.01"},
        {"symbol": "R1", "kind": "dividend", "exDate": "2021-04-10", "ratio": "2"}, {**split, "ratio": 1e300},
    ]
    for action in bad_actions:
        await expect("POST", "/api/admin/corporate-actions", admin, {400, 404, 422}, body=action)
        cases += 1
    await expect("POST", "/api/admin/corporate-actions", attacker, {403}, body=split)
    cases += 1
    for league_body in bad_leagues:
        await expect("POST", "/api/leagues/create", attacker, {400, 422}, body=league_body)
        cases += 1
    # One length rule (Unicode scalars, as the database counts) and no control or
    # bidirectional-override characters in text shown to others.
    # (COMBINING is one character to Swift and 101 to PostgreSQL: too long for a league
    # name of 64; twice over, for titles and instrument names of 200.)
    shown = [COMBINING, "evil\u202egnp.exe", "iso\u2066late", "bell\x07", "mark\u200f"]
    for text in shown:
        long_text = text * 2 if text == COMBINING else text
        await expect("POST", "/api/leagues/create", attacker, {422}, body={"name": text})
        await expect("POST", "/api/admin/notifications", admin, {422}, body={"title": long_text, "body": ""})
        await expect("PUT", "/api/admin/instruments", admin, {422}, body=[{"symbol": "CTRL", "name": long_text}])
        cases += 3
    edges = [
        ("POST", "/api/auth/register", None, {422}, {"username": "emailer", "password": PASSWORD, "email": COMBINING * 3 + "@example.org"}),
        ("POST", "/api/auth/login", None, {401}, {"username": "x" * 4096, "password": PASSWORD}),
        ("POST", "/api/auth/register", None, {422}, {"username": "x" * 4096, "password": PASSWORD}),
        ("PUT", "/api/admin/instruments", admin, {422}, [{"symbol": "-AB", "name": "Dash"}]),
        ("PUT", "/api/admin/instruments", admin, {422}, [{"symbol": ".AB", "name": "Dot"}]),
        ("POST", "/api/stock/sell", attacker, {422}, {"symbol": "PENNY", "amount": 1}),
    ]
    for method, path, token, expected, body in edges:
        await expect(method, path, token, expected, body=body)
        cases += 1
    await expect("POST", "/api/stock/buy", attacker, {422}, body={"symbol": "R1", "amount": 1}, headers={"Idempotency-Key": "k" * 300})
    status, answer, _ = await client.request("POST", "/api/stock/sell", attacker, {"symbol": "PENNY", "amount": 1})
    result.check(status == 422 and answer.get("code") == "insufficient_funds", f"sale below the fee: {status} {answer}")
    # Bodies sent chunked are counted as they arrive: over the limit is 413, never 500.
    for path, token, limit, content_type in [("/api/auth/login", None, 1 << 20, "application/json"),
                                             ("/api/leagues/create", attacker, 1 << 20, "application/json"),
                                             ("/api/admin/prices", admin, 1 << 20, "text/csv")]:
        status = await send_chunked(client, path, token, limit * 2, content_type)
        result.check(status == 413, f"chunked {path} over {limit} bytes: {status}")
        cases += 1
    for path in ["/api/me", "/api/no-such-route", "/api/auth/login"]:
        async with client.session.get(client.base + path, headers={"Authorization": f"Bearer {attacker}"}) as response:
            headers = response.headers
            result.check(headers.get("Cache-Control") == "no-store" and headers.get("X-Content-Type-Options") == "nosniff",
                         f"{path} headers: {dict(headers)}")
        cases += 1
    # Other users' objects.
    vl = victim_league["id"]
    others = [
        ("GET", f"/api/portfolio?portfolioId={victim_portfolio}", {404}), ("GET", f"/api/transactions?portfolioId={victim_portfolio}", {404}),
        ("GET", f"/api/transactions.csv?portfolioId={victim_portfolio}", {404}), ("GET", f"/api/cash-movements?portfolioId={victim_portfolio}", {404}),
        ("GET", f"/api/leagues/{vl}", {404}), ("GET", f"/api/leagues/{vl}/leaderboard", {404}), ("GET", f"/api/leagues/{vl}/history", {404}),
        ("DELETE", f"/api/leagues/{vl}", {404}), ("DELETE", f"/api/leagues/leave/{vl}", {404}),
        ("DELETE", f"/api/leagues/kick/{vl}/{victim_id}", {404}), ("POST", f"/api/notifications/{victim_notice}/read", {404}),
        ("POST", "/api/leagues/join/' OR '1'='1", {404}), ("POST", f"/api/leagues/join/{wrong_code(victim_league['code'])}", {404}),
        ("GET", "/api/stock/%27%3B%20DROP%20TABLE%20users%3B--", {404, 422}), ("GET", "/api/stock/market?sort=;DROP", {422}),
        ("GET", "/api/stock/market?limit=-1", {422}), ("GET", "/api/stock/AAPL/chart?range=99y", {404, 422}),
        ("GET", "/api/transactions?before=abc", {422}), ("GET", "/api/leagues/abc", {404}),
    ]
    for method, path, expected in others:
        await expect(method, path, attacker, expected)
        cases += 1
    # Non-admins on admin routes.
    for method, path, body in [("PUT", "/api/admin/instruments", [{"symbol": "EVIL", "name": "Evil"}]),
                               ("POST", "/api/admin/quotes", [{"symbol": "R1", "price": "0.01"}]),
                               ("POST", "/api/admin/prices", None), ("POST", "/api/admin/notifications", {"title": "x", "body": "y"}),
                               ("POST", f"/api/admin/users/{attacker_id}/funds", {"amount": "1000000"})]:
        await expect(method, path, attacker, {403}, body=body)
        cases += 1
    # The JWT negative set, on a read and a write.
    for name, token in jwt_negatives(attacker_id).items():
        await expect("GET", "/api/me", None, {401}, headers={"Authorization": f"Bearer {token}"})
        await expect("POST", "/api/stock/buy", None, {401}, body={"symbol": "R1", "amount": 1}, headers={"Authorization": f"Bearer {token}"})
        cases += 2
    for header in ["Basic YWRtaW46YWRtaW4=", "Bearer", "bearer " + victim[:20]]:
        await expect("GET", "/api/me", None, {401}, headers={"Authorization": header})
        cases += 1

    stream = await stream_attacks(result, client, attacker, victim_league["id"], victim_order["id"], answers)
    cases += stream
    # API keys and the Alpaca-compatible API.
    for body in [{"portfolioId": victim_portfolio}, {"portfolioId": "1 OR 1=1"}, {"portfolioId": -1}, {"name": "x" * 65},
                 {"name": "bell\x07"}, {"name": COMBINING}, {"name": 7}, [1, 2]]:
        await expect("POST", "/api/api-keys", attacker, {400, 404, 422}, body=body)
        cases += 1
    for key_id in [victim_key["keyId"], "PK'; DROP TABLE api_keys;--", "x" * 300, "%00"]:
        await expect("DELETE", f"/api/api-keys/{key_id}", attacker, {404})
        cases += 1
    for key_id, secret in [(victim_key["keyId"], "x" * 40), (victim_key["keyId"], victim_key["secret"][:-1]),
                           ("PK' OR '1'='1", "x"), ("PK" + "A" * 18, "x" * 5000), (victim_key["keyId"], "")]:
        status, answer, _ = await client.request("GET", "/v2/account", None, headers={"APCA-API-KEY-ID": key_id, "APCA-API-SECRET-KEY": secret})
        answers.append(json.dumps(answer) if not isinstance(answer, str) else answer)
        result.check(status == 401 and isinstance(answer, dict) and answer.get("code") == 40110000, f"/v2 with a forged key {key_id[:20]!r}: {status} {answer}")
        cases += 1
    bad_bot_orders = [
        {"symbol": "R1", "qty": 0, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": -3, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": 1.5, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": "1e3", "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": 10 ** 12, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1'; DROP TABLE orders;--", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "notional": 5, "side": "buy", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "limit", "time_in_force": "gtc", "limit_price": 1e300},
        # A trailing stop without a trail, with both, out of range, or with a stop price.
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "trailing_stop", "time_in_force": "gtc"},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "trailing_stop", "time_in_force": "gtc", "trail_percent": 1, "trail_price": 1},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "trailing_stop", "time_in_force": "gtc", "trail_percent": 100},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "trailing_stop", "time_in_force": "gtc", "trail_price": -2},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "trailing_stop", "time_in_force": "gtc", "trail_percent": 1, "stop_price": 3},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "limit", "time_in_force": "gtc", "limit_price": 3, "trail_percent": 1},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "opg"},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "order_class": "bracket"},
        {"symbol": "R1", "qty": 1, "side": "sell", "type": "market", "time_in_force": "day", "order_class": "bracket",
         "take_profit": {"limit_price": 60}, "stop_loss": {"stop_price": 40}},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "order_class": "bracket",
         "take_profit": {"limit_price": 40}, "stop_loss": {"stop_price": 60}},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "limit", "limit_price": 5, "time_in_force": "day", "order_class": "oco",
         "take_profit": {"limit_price": 6}, "stop_loss": {"stop_price": 4}},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "order_class": "oto",
         "take_profit": {"price": 6}},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "order_class": "mleg"},
        {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "client_order_id": "x" * 200},
        {"symbol": "R1", "qty": 1, "side": "short", "type": "market", "time_in_force": "day"},
        {"symbol": "R1", "qty": 10 ** 6, "side": "buy", "type": "market", "time_in_force": "day"},
    ]
    for body in bad_bot_orders:
        await expect("POST", "/v2/orders", attacker, {400, 403, 404, 422}, body=body)
        cases += 1
    for method, path in [("GET", f"/v2/orders/{victim_order['uuid']}"), ("DELETE", f"/v2/orders/{victim_order['uuid']}"),
                         ("GET", "/v2/orders/not-a-uuid"), ("GET", "/v2/orders?status=everything"), ("GET", "/v2/orders?limit=100000"),
                         ("GET", "/v2/orders?after=yesterday"), ("GET", "/v2/orders:by_client_order_id?client_order_id=%27%20OR%201%3D1"),
                         ("GET", "/v2/no/such/endpoint"), ("PUT", "/v2/orders")]:
        await expect(method, path, attacker, {404, 405, 422})
        cases += 1
    # Replacing: another user's order (by /v2 UUID and /api id) and bodies no order accepts.
    for body in [{"qty": 2}, {"qty": 0}, {"qty": "1; DROP TABLE orders"}, {"limit_price": -1}, {"trail": 1},
                 {"time_in_force": "ioc"}, {"client_order_id": "x" * 300}, {"qty": 10 ** 15}]:
        await expect("PATCH", f"/v2/orders/{victim_order['uuid']}", attacker, {400, 404, 422}, body=body)
        cases += 1
    for body in [{"quantity": 2}, {"quantity": -1}, {"limitPrice": "1e9999"}, {"timeInForce": "fok"}, {"quantity": [1]}]:
        await expect("PATCH", f"/api/orders/{victim_order['id']}", attacker, {400, 404, 422}, body=body)
        cases += 1
    # Figures of another user's portfolio, and bad ranges, methods and benchmarks on one's own.
    for query in ["history", "performance", "pnl", "composition", "composition?date=2026-01-01"]:
        await expect("GET", f"/api/portfolios/{victim_portfolio}/{query}", attacker, {404})
        cases += 1
    own = (await client.request("GET", "/api/portfolio", attacker))[1]["id"]
    for query in ["history?from=2026-02-30", "history?interval=hourly", "history?from=2026-02-01&to=2026-01-01",
                  "history?to=%27%3B%20DROP%20TABLE%20trades%3B--", "history?currency=XXX", "performance?benchmark=%27%20OR%201%3D1",
                  "performance?benchmark=NOSUCH", "performance?from=0000-00-00", "pnl?method=hifo", "pnl?method=" + "x" * 5000,
                  "composition?date=2026-13-40", "composition?date=%27%3B--"]:
        await expect("GET", f"/api/portfolios/{own}/{query}", attacker, {404, 414, 422, 431})
        cases += 1
    for query in ["correlation?symbols=R1", "correlation?symbols=R1,%27%3B--", "correlation?symbols=R1,R2&from=2026-01-02&to=2025-01-01",
                  "correlation?symbols=" + ",".join(f"R{n}" for n in range(1, 30)), "compare?symbols=", "compare?symbols=R1&to=tomorrow",
                  "compare?symbols=NOSUCH", "correlation?symbols=R1,R2&from=1900-01-01&to=2026-01-01"]:
        await expect("GET", f"/api/analytics/{query}", attacker, {404, 422})
        cases += 1
    for query in ["convert?from=EUR&to=USD&amount=1e999", "convert?from=%27%3B--&to=USD&amount=1", "convert?from=EUR&to=USD&amount=1&date=2020-13-01",
                  "rates?base=EURO", "rates?base=XXX", "EURUS/chart", "EURUSD/chart?range=forever", "XXXYYY/chart"]:
        await expect("GET", f"/api/fx/{query}", attacker, {404, 422})
        cases += 1
    for csv in ["Date,USD\n2020-01-02,abc\n", "Date,EUR\n2020-01-02,1\n", "Date;USD\n", "Date,USD\n2020-01-02,1e9999\n"]:
        await expect("POST", "/api/admin/fx", admin, {422}, raw=csv.encode(), content_type="text/csv")
        cases += 1
    await expect("POST", "/api/admin/fx", attacker, {403}, raw=b"Date,USD\n2020-01-02,1.1\n", content_type="text/csv")
    cases += 1
    # Practice portfolios: another user's, bad bodies, the limit.
    for method, path, body in [("PATCH", f"/api/portfolios/{victim_portfolio}", {"name": "mine"}),
                               ("DELETE", f"/api/portfolios/{victim_portfolio}", None),
                               ("POST", f"/api/portfolios/{victim_portfolio}/cash", {"amount": "1000000"}),
                               ("POST", "/api/portfolios", {"name": "x" * 500}), ("POST", "/api/portfolios", {"name": ""}),
                               ("POST", "/api/portfolios", {"name": "x", "startingCash": "-5"}),
                               ("POST", "/api/portfolios", {"name": "x", "startingCash": "1e99"}),
                               ("POST", "/api/portfolios", {"name": "x", "startedAt": "1066-10-14"}),
                               ("POST", "/api/portfolios", {"name": "x", "currency": "'; DROP TABLE portfolios;--"}),
                               ("POST", "/api/portfolios", {"name": ["x"]})]:
        await expect(method, path, attacker, {400, 404, 422}, body=body)
        cases += 1
    # Back-dated trades and trade imports: another user's portfolio, a personal one, bad days and files.
    for path, body in [("/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": victim_portfolio, "at": "2020-01-02"}),
                       ("/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": own, "at": "2020-01-02"}),
                       ("/api/stock/sell", {"symbol": "R1", "amount": 1, "portfolioId": own, "at": "'; DROP TABLE trades;--"}),
                       ("/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": own, "at": "2999-01-01"}),
                       ("/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": own, "at": ["2020-01-02"]}),
                       ("/api/orders", {"symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1",
                                        "portfolioId": own, "at": "2020-01-02"}),
                       ("/api/orders", {"symbol": "R1", "side": "buy", "quantity": 1, "portfolioId": victim_portfolio, "at": "2020-01-02"})]:
        await expect("POST", path, attacker, {400, 404, 422}, body=body)
        cases += 1
    good_file = b"date,symbol,side,quantity,price,fee\n2020-01-02,R1,buy,1,10,0\n"
    for portfolio, csv in [(victim_portfolio, good_file), (own, good_file), (own, b""), (own, b"date,symbol\n"),
                           (own, b"date,symbol,side,quantity,price\n2020-01-02,R1,buy,1e9,1\n2020-01-02,R1,short,1,1\n"),
                           (own, b"date,symbol,side,quantity,price\n2020-01-02,'; DROP TABLE trades;--,buy,1,1\n"),
                           (own, b"date,symbol,side,quantity,price\n\"2020-01-02,R1,buy,1,1\n"),
                           (own, b"date,symbol,side,quantity,price\n" + b"2020-01-02,R1,buy,1,1\n" * 10001),
                           (own, b"\xff\xfe,\x00\n")]:
        await expect("POST", f"/api/portfolios/{portfolio}/import", attacker, {404, 413, 422}, raw=csv, content_type="text/csv")
        cases += 1
    for portfolio, key in [(own, "k" * 256), (own, "'; DROP TABLE idempotency_keys;--"), (victim_portfolio, "mine")]:
        await expect("POST", f"/api/portfolios/{portfolio}/import", attacker, {400, 404, 422}, raw=good_file, content_type="text/csv",
                     headers={"Idempotency-Key": key})
        cases += 1
    cases += await alpaca_stream_attacks(result, client, victim_key, answers)
    cases += await alpaca_data_stream_attacks(result, client, victim_key, answers)
    for path in ["/v2/assets?status=everything", "/v2/assets?attributes=x", "/v2/calendar?start=2026-02-30",
                 "/v2/calendar?start=2026-01-01&end=2035-01-01", "/v2/assets/%27%3B%20DROP%20TABLE%20instruments%3B--", "/v2/clock?x=1",
                 "/v2/stocks/bars?symbols=AAPL&timeframe=90Min", "/v2/stocks/bars?symbols=AAPL&timeframe=1Min&start=yesterday", "/v2/stocks/bars?symbols=AAPL&timeframe=1Day&page_token=%27%20OR%201",
                 "/v2/stocks/bars?symbols=" + ",".join(f"S{n}" for n in range(101)) + "&timeframe=1Day",
                 "/v2/stocks/bars?symbols=AAPL&timeframe=1Day&start=2021-01-01&end=2020-01-01",
                 "/v2/stocks/bars?symbols=AAPL&timeframe=1Day&limit=0", "/v2/stocks/bars?symbols=AAPL&timeframe=1Day&adjustment=dividend",
                 "/v2/stocks/quotes/latest?symbols=%27%3B--", "/v2/stocks/trades/latest", "/v2/stocks/bars/latest?symbols=AAPL&feed=nasdaq"]:
        await expect("GET", path, attacker, {404, 422})
        cases += 1

    cases += await bot_cases(result, client, database, expect, bots, victim, victim_id, attacker, attacker_id, sneaky)
    hosts["cases"] = await host_cases(result, client, expect, hosts, victim_league, victim, victim_id, attacker, attacker_id,
                                      sneaky, sneaky_id, bots["attacker"]["id"])
    cases += hosts["cases"]
    hosts["notes cases"] = await notes_cases(expect, hosts, victim_league, victim, victim_id, attacker, sneaky)
    cases += hosts["notes cases"]
    accounts["cases"] = await account_cases(result, client, expect, answers, accounts, hosts, bots, admin, victim, victim_id,
                                            attacker, attacker_id, sneaky, sneaky_id, victim_portfolio)
    cases += accounts["cases"]
    teams["cases"] = await team_cases(expect, teams, hosts, victim_league, victim, victim_id, attacker, attacker_id, sneaky, sneaky_id,
                                      bots["attacker"]["id"], bots["attacker key"])
    cases += teams["cases"]
    scenario["cases"] = await scenarios.hostile_cases(expect, scenario, victim, attacker, sneaky)
    cases += scenario["cases"]

    after = database.scalar(fingerprint)
    parts_after = database.query(fingerprint_parts)
    changed = [(index, str(old)[:300], str(new)[:300]) for index, (old, new) in enumerate(zip(parts_before, parts_after)) if old != new]
    result.check(before == after, f"a refused request changed the database (part, before, after): {changed[:3]}")
    # No refused request wrote an audit event: the only new ones are the answered host actions'.
    audited = [(action, int(actor), int(league)) for action, actor, league in database.query(AUDIT_AFTER.replace("{audit_upto}", str(audit_upto)))]
    result.check(audited == hosts["audited"] and len(audited) == 2, f"audit events written during the cases: {audited}, expected {hosts['audited']}")
    # Orders naming a stored symbol, probed once the state is checked (were one placed, it would write).
    stored_orders = await scenarios.hostile_stored_orders(client, database, scenario, attacker)
    result.check(not stored_orders["orders stored on"] and all(answer.endswith("404 unknown_symbol") for answer in stored_orders["answers"]),
                 f"orders naming a stored symbol: {stored_orders}")
    throttles = await throttle_bursts(result, client, attacker)
    cases += throttles.pop("cases")
    with open(log_path, errors="replace") as log:
        logged = log.read()
    in_log = sorted({s for s in [JWT_SECRET, "$scrypt$", ADMIN[1], PASSWORD, "Failing row", attacker, victim_key["secret"],
                                 bots["victim key"]["secret"], bots["attacker key"]["secret"]] if s in logged})
    result.check(not in_log, f"the server log holds {in_log}")
    secrets = [JWT_SECRET, "scrypt", "$7$", "password_hash", "SELECT ", "postgres", ADMIN[1], PASSWORD, "Swift/", "Fatal error",
               victim_key["secret"], "secret_hash", bots["victim key"]["secret"], "violates", "constraint", "duplicate key"]
    leaked = sorted({s for s in secrets for a in answers if s in a})
    result.check(not leaked, f"answers contain {leaked}")
    server_errors = sum(n for status, n in client.statuses.items() if status >= 500 or status == 0)
    result.check(server_errors == 0, f"{server_errors} 5xx or failed requests")

    slow = await slowloris(server, client)
    # Every refusal of the run is problem+json (Alpaca's shape under /v2).
    result.check(not client.problems, f"{len(client.problems)} answers not problem+json: {client.problems[:3]}")
    result.figures = {"cases": cases, "state unchanged": before == after, "audit events written by the cases": audited, "5xx": server_errors, "leaks": leaked,
                      "bot cases": bots["cases"], "bots before and after": bots["counted"], "forbidding a league's bots": bots["forbidden"],
                      "host-control cases": hosts["cases"], "host-control setup": hosts["figures"],
                      "journal, news, risk and gradebook cases": hosts["notes cases"],
                      "roster, personal data and audit cases": accounts["cases"], "roster setup": accounts["figures"],
                      "team cases": teams["cases"], "team setup": teams["figures"],
                      "scenario-league cases": scenario["cases"], "scenario-league setup": scenario["figures"],
                      "orders naming a stored symbol": stored_orders,
                      **throttles, **slow}
    result.check(slow["slowloris cut after s"] is not None and slow["slowloris cut after s"] <= 20, f"slowloris: {slow}")
    result.check(slow["normal requests during slowloris"] > 0 and slow["normal failures"] == 0, f"normal clients: {slow}")


async def alpaca_stream_attacks(result, client, victim_key, answers):
    """Alpaca's trade-update socket (/stream) under forged keys and junk: each first
    message that is not a valid key is answered `unauthorized` and closed with 1008."""
    url = client.base.replace("http://", "ws://") + "/stream"
    cases = 0
    firsts = [json.dumps({"action": "authenticate", "data": {"key_id": victim_key["keyId"], "secret_key": "guess"}}),
              json.dumps({"action": "authenticate", "data": {"key_id": "PK' OR '1'='1", "secret_key": "x"}}),
              json.dumps({"action": "authenticate", "data": {"key_id": victim_key["keyId"]}}),
              json.dumps({"action": "listen", "data": {"streams": ["trade_updates"]}}),
              json.dumps({"action": "authenticate", "data": {"key_id": "PK" + "A" * 18, "secret_key": "x" * 70000}}),
              "{not json", json.dumps([1, 2])]
    for payload in firsts:
        async with client.session.ws_connect(url, heartbeat=None) as socket:
            await socket.send_str(payload)
            first = await socket.receive(timeout=15)
            rest = await socket.receive(timeout=15)
            answers.append(str(first.data))
            ok = ((first.type == aiohttp.WSMsgType.TEXT and json.loads(first.data)["data"]["status"] == "unauthorized"
                   and rest.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and socket.close_code == 1008)
                  or (first.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and socket.close_code == 1009))
            result.check(ok, f"/stream first message {payload[:50]!r}: {first.type} {first.data!r:.80} {socket.close_code}")
            cases += 1
    return cases


async def alpaca_data_stream_attacks(result, client, victim_key, answers):
    """Alpaca's market-data socket (/v2/iex) under forged keys and junk. Before a key is
    accepted: a wrong key is answered 402 and closed with 1008, anything but auth 401 or
    400 with the socket left open, a message over 16 KB closes it with 1009. After: junk,
    msgpack garbage, nesting, bad symbols and too many symbols are answered 400 or 405
    and change nothing the socket follows."""
    url = client.base.replace("http://", "ws://") + "/v2/iex"
    cases = 0
    refused_keys = [{"action": "auth", "key": victim_key["keyId"], "secret": "guess"},
                    {"action": "auth", "key": "PK' OR '1'='1", "secret": "x"},
                    {"action": "auth", "key": victim_key["keyId"]},
                    {"action": "auth", "key": ["PK"], "secret": {"$ne": ""}}]
    for payload in refused_keys:
        async with client.session.ws_connect(url, heartbeat=None) as socket:
            await socket.receive(timeout=15)  # the greeting
            await socket.send_str(json.dumps(payload))
            first = await socket.receive(timeout=15)
            rest = await socket.receive(timeout=15)
            answers.append(str(first.data))
            ok = (first.type == aiohttp.WSMsgType.TEXT and json.loads(first.data) == [{"T": "error", "code": 402, "msg": "auth failed"}]
                  and rest.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and socket.close_code == 1008)
            result.check(ok, f"/v2/iex auth {json.dumps(payload)[:60]}: {first.type} {first.data!r:.80} {socket.close_code}")
            cases += 1
    async def refused(socket, payloads, when):
        """Each payload answered with its error code, the socket left open."""
        for payload, code in payloads:
            await (socket.send_bytes(payload) if isinstance(payload, bytes) else socket.send_str(payload))
            reply = await socket.receive(timeout=15)
            answers.append(str(reply.data))
            result.check(reply.type == aiohttp.WSMsgType.TEXT and json.loads(reply.data)[0].get("code") == code,
                         f"/v2/iex {when} {payload!r:.50}: {reply.type} {reply.data!r:.80}")
        return len(payloads)

    # Before authenticating: refused, the socket stays open for the auth that follows.
    before = [(json.dumps({"action": "subscribe", "trades": ["*"]}), 401), ("{not json", 400), (json.dumps([1, 2]), 400),
              (b"\xc1\xff\x00", 400), (b"\x91" * 40 + b"\xc0", 400), (json.dumps({"action": 7}), 400)]
    async with client.session.ws_connect(url, heartbeat=None) as socket:
        await socket.receive(timeout=15)
        cases += await refused(socket, before, "before auth")
        await socket.send_str(json.dumps({"action": "auth", "key": victim_key["keyId"], "secret": victim_key["secret"]}))
        reply = await socket.receive(timeout=15)
        result.check(json.loads(reply.data) == [{"T": "success", "msg": "authenticated"}], f"/v2/iex auth after refusals: {reply.data!r:.80}")
        after = [(json.dumps({"action": "subscribe", "trades": ["'; DROP TABLE quotes;--"]}), 400),
                 (json.dumps({"action": "subscribe", "trades": "AAPL"}), 400),
                 (json.dumps({"action": "subscribe", "quotes": [1, 2]}), 400),
                 (json.dumps({"action": "subscribe", "bars": [f"S{n}" for n in range(501)]}), 405),
                 (json.dumps({"action": "auth", "key": victim_key["keyId"], "secret": victim_key["secret"]}), 403),
                 (json.dumps({"action": "shutdown"}), 400), (b"\xde\xff\xff", 400), ("", 400)]
        cases += await refused(socket, after, "after auth")
        await socket.send_str(json.dumps({"action": "subscribe"}))
        reply = await socket.receive(timeout=15)
        result.check(json.loads(reply.data)[0] | {"T": None} == {"T": None} | {name: [] for name in
                     ["trades", "quotes", "bars", "updatedBars", "dailyBars", "statuses", "lulds", "corrections", "cancelErrors"]},
                     f"/v2/iex: refused subscriptions changed what the socket follows: {reply.data!r:.120}")
        cases += 1
    async with client.session.ws_connect(url, heartbeat=None, max_msg_size=0) as socket:
        await socket.receive(timeout=15)
        await socket.send_str(json.dumps({"action": "auth", "key": "PK" + "A" * 18, "secret": "x" * 70000}))
        closed = await socket.receive(timeout=15)
        result.check(closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and socket.close_code == 1009,
                     f"/v2/iex oversized auth: {closed.type} {socket.close_code}")
        cases += 1
    return cases


async def stream_attacks(result, client, attacker, victim_league, victim_order, answers):
    """The live stream under hostile input: sockets that never authenticate, forged and
    oversized first messages, and after authentication junk, binary frames, huge lists,
    SQL-looking symbols and another user's league. Each socket is refused (closed with
    1008/1009) or answered with an error event; none sees another user's data."""
    url = client.base.replace("http://", "ws://") + "/api/stream"
    cases = 0

    async def first_message(payload, binary=False):
        async with client.session.ws_connect(url, heartbeat=None) as socket:
            await (socket.send_bytes(payload) if binary else socket.send_str(payload))
            message = await socket.receive(timeout=15)
            return message.type, socket.close_code

    forged = jwt_negatives(0)
    refused = [json.dumps({"action": "subscribe", "quotes": ["R1"]}), json.dumps({"action": "auth", "token": forged["alg none"]}),
               json.dumps({"action": "auth", "token": "x" * 4000}), "{not json", json.dumps({"action": "auth"}),
               json.dumps({"action": "auth", "token": attacker, "pad": "x" * 70000})]
    for payload in refused:
        kind, code = await first_message(payload)
        result.check(kind in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) and code in (1008, 1009),
                     f"stream first message {payload[:50]!r}: {kind} {code}")
        cases += 1
    kind, code = await first_message(b"\x00\x01binary", binary=True)
    result.check(code == 1008, f"stream binary first message: {kind} {code}")
    cases += 1
    # A socket that says nothing is closed (after 10 s; checked last, below).
    silent = await client.session.ws_connect(url, heartbeat=None)
    async with client.session.ws_connect(url, heartbeat=None) as socket:
        await socket.send_json({"action": "auth", "token": attacker})
        bad = ["{", json.dumps({"action": "subscribe", "quotes": ["R1'; DROP TABLE quotes;--"]}),
               json.dumps({"action": "subscribe", "quotes": "R1"}), json.dumps({"action": "subscribe", "leagues": [victim_league]}),
               json.dumps({"action": "subscribe", "leagues": ["1 OR 1=1"]}), json.dumps({"action": "subscribe", "quotes": [f"S{n}" for n in range(500)]}),
               json.dumps({"action": "subscribe", "orders": "yes"}), json.dumps({"action": "unsubscribe", "quotes": [""]}),
               json.dumps({"action": "\u202eebircsbus"}), json.dumps([1, 2, 3])]
        for payload in bad:
            await socket.send_str(payload)
        await socket.send_bytes(b"\xff\xfe")
        await socket.send_json({"action": "subscribe", "orders": True, "notifications": True})
        await socket.send_json({"action": "ping"})
        # Everything up to the pong: one error per bad message, then the attacker's own snapshot.
        errors, seen = [], []
        while True:
            message = await socket.receive(timeout=15)
            if message.type != aiohttp.WSMsgType.TEXT:
                result.check(False, f"stream socket closed on bad input: {message.type} {socket.close_code}")
                break
            seen.append(message.data)
            event = json.loads(message.data)
            if event["type"] == "error":
                errors.append(event["data"].get("code"))
            if event["type"] == "pong":
                break
        answers.extend(seen)
        result.check(len(errors) == len(bad) + 1 and all(errors), f"stream error events: {errors}")
        orders = []
        for event in map(json.loads, seen):
            if event["type"] == "order":
                orders.append(event["data"])
            if event["type"] == "snapshot":
                orders += event["data"].get("orders") or []
                result.check(not event["data"].get("standings"), f"standings of a league not joined: {event}")
        leaked = [order for order in orders if order["id"] == victim_order]
        result.check(not leaked, f"the attacker's socket saw the victim's order: {leaked[:1]}")
        cases += len(bad) + 1
    started = time.monotonic()
    message = await silent.receive(timeout=20)
    result.check(silent.close_code == 1008 and time.monotonic() - started <= 12, f"silent socket: {message.type} {silent.close_code}")
    await silent.close()
    return cases + 1


async def send_chunked(client, path, token, size, content_type):
    """Sends `size` bytes with chunked transfer encoding (no Content-Length); the status."""
    async def chunks():
        if content_type == "text/csv":
            yield b"symbol,date,open,high,low,close,volume\n"
            row = b"R1,2020-01-02,1,1,1,1,100\n"
            block = row * (65536 // len(row))
        else:
            yield b'{"username":"'
            block = b"x" * 65536
        for _ in range(size // len(block) + 1):
            yield block
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        async with client.session.post(client.base + path, data=chunks(), headers=headers) as response:
            await response.read()
            return response.status
    except (aiohttp.ClientError, ConnectionError) as error:
        # The server may answer 413 and close before the whole body was sent.
        return getattr(error, "status", 0)


async def throttle_bursts(result, client, attacker):
    """Concurrent bursts against each budget, each from an address of its own (named by
    X-Forwarded-For, which the server believes from its trusted proxy, loopback)."""
    started = time.monotonic()

    async def burst(count, method, path, address, body, token=None, vary=None):
        async def one(index):
            payload = vary(index) if vary else body
            status, _, _ = await client.request(method, path, token, payload,
                                                headers={"X-Forwarded-For": address}, timeout=30)
            return status
        statuses = await asyncio.gather(*(one(i) for i in range(count)))
        return {status: statuses.count(status) for status in set(statuses)}

    wrong_current = {"currentPassword": "not the password", "newPassword": "a new password"}
    changes = await burst(15, "POST", "/api/auth/password", "198.51.100.1", wrong_current, token=attacker)
    result.check(changes == {403: 10, 429: 5}, f"15 concurrent wrong current passwords: {changes}")
    logins = await burst(40, "POST", "/api/auth/login", "198.51.100.2", {"username": "victim", "password": "wrong guess"})
    result.check(logins == {401: 10, 429: 30}, f"40 concurrent wrong passwords for one username: {logins}")
    spray = await burst(60, "POST", "/api/auth/login", "198.51.100.3", None,
                        vary=lambda i: {"username": f"sprayed{i}", "password": "Summer2026!"})
    result.check(spray == {401: 50, 429: 10}, f"60 usernames from one address: {spray}")
    # A client naming another address itself is not believed: only the proxy's entry counts.
    spoofed = await burst(5, "POST", "/api/auth/login", "203.0.113.77, 198.51.100.3", {"username": "other", "password": "x" * 8})
    result.check(spoofed == {429: 5}, f"spoofed X-Forwarded-For: {spoofed}")
    registrations = await burst(12, "POST", "/api/auth/register", "198.51.100.4", None,
                                vary=lambda i: {"username": f"burst{i}", "password": PASSWORD})
    result.check(registrations == {201: 10, 429: 2}, f"12 concurrent registrations from one address: {registrations}")
    # Erasing one's account checks its password as a login does: wrong ones count against the same budgets.
    status, made, _ = await client.request("POST", "/api/auth/register", body={"username": "eraser", "password": PASSWORD},
                                           headers={"X-Forwarded-For": "198.51.100.5"})
    result.check(status == 201, f"registering the eraser: {status} {made}")
    eraser = made.get("token") if status == 201 else None
    erasures = await burst(15, "DELETE", "/api/me", "198.51.100.6", {"password": "not the password"}, token=eraser)
    result.check(erasures == {403: 10, 429: 5}, f"15 concurrent erasures with a wrong password: {erasures}")
    status, _, _ = await client.request("GET", "/api/me", eraser)
    result.check(status == 200, f"the account after 15 erasures with a wrong password: {status}")
    seconds = round(time.monotonic() - started, 1)
    result.check(seconds < 60, f"throttle bursts took {seconds} s")
    return {"cases": 6, "password-check burst": changes, "login burst": logins, "spraying": spray,
            "registration burst": registrations, "erasure password burst": erasures, "throttle bursts s": seconds}


async def slowloris(server, client, connections=20):
    """Opens connections that trickle header bytes forever; measures when the server cuts
    them while normal requests run."""
    streams = []
    for _ in range(connections):
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        await writer.drain()
        streams.append((reader, writer))
    started = time.monotonic()
    cut = {}
    normal = {"ok": 0, "failed": 0}

    async def trickle(index, reader, writer):
        while time.monotonic() - started < 40:
            try:
                writer.write(b"X-Slow: a\r\n")
                await writer.drain()
                data = await asyncio.wait_for(reader.read(1), timeout=1.5)
                if data == b"":
                    cut[index] = time.monotonic() - started
                    return
            except asyncio.TimeoutError:
                continue
            except (ConnectionError, OSError):
                cut[index] = time.monotonic() - started
                return

    async def normal_traffic():
        while time.monotonic() - started < 12:
            status, _, _ = await client.request("GET", "/healthz", timeout=5)
            normal["ok" if status == 200 else "failed"] += 1
            await asyncio.sleep(0.1)

    await asyncio.gather(normal_traffic(), *(trickle(i, r, w) for i, (r, w) in enumerate(streams)))
    for _, writer in streams:
        writer.close()
    return {"slowloris connections": connections, "slowloris cut": len(cut),
            "slowloris cut after s": round(max(cut.values()), 1) if len(cut) == connections else None,
            "normal requests during slowloris": normal["ok"], "normal failures": normal["failed"]}


async def bot_setup(result, client, database, victim, victim_id, attacker, attacker_id, sneaky):
    """What the bot cases attack, made before the fingerprint (and checked as it is made):
    a bot of the victim's with a key, seated in the victim's league; bots of the
    attacker's (the first created with mass-assigned fields, which are ignored), one with
    a key, seated there too; five bots of another player's, created at once by eight
    concurrent requests (five made, three `too_many_bots`); a league forbidding bots from
    its creation that the attacker joined; and a league switched to forbidding bots while
    a bot's key and a human's key trade its portfolios: both are refused within 2 s."""
    bots = {"cases": 0}

    async def create(token, body):
        status, bot, _ = await client.request("POST", "/api/bots", token, body)
        result.check(status == 201, f"creating a bot {body}: {status} {bot}")
        return bot

    mass = await create(attacker, {"name": "attackbot", "ownerId": victim_id, "id": 1, "role": "admin", "botOwnerId": victim_id,
                                   "portfolios": [{"id": 1, "leagueId": None}], "cash": "1000000000", "passwordHash": ""})
    row = database.query(f"SELECT role, bot_owner_id, password_hash = '' FROM users WHERE id = {int(mass['id'])}")
    cash = database.scalar(f"SELECT cash FROM portfolios WHERE user_id = {int(mass['id'])}")
    result.check(mass["ownerId"] == attacker_id and mass["id"] != 1 and row == [["player", str(attacker_id), "t"]] and float(cash) == 10000,
                 f"mass assignment on a bot: {mass}, {row}, cash {cash}")
    bots["attacker"] = mass
    bots["attacker2"] = await create(attacker, {"name": "attackbot2"})
    bots["victim"] = await create(victim, {"name": "victimbot"})
    # A bot has no password: logging in as it fails like a wrong password.
    for password in (PASSWORD, "x" * 8):
        status, answer, _ = await client.request("POST", "/api/auth/login", body={"username": "attackbot", "password": password})
        result.check(status == 401, f"logging in as a bot: {status} {answer}")
    # At most five bots, however many are asked for at once.
    made = await asyncio.gather(*(client.request("POST", "/api/bots", sneaky, {"name": f"sneakybot{i}"}) for i in range(8)))
    statuses = sorted((status, answer.get("code") if status != 201 else None) for status, answer, _ in made)
    owned = int(database.scalar("SELECT count(*) FROM users WHERE bot_owner_id = (SELECT id FROM users WHERE username = 'sneaky')"))
    result.check(statuses == [(201, None)] * 5 + [(409, "too_many_bots")] * 3 and owned == 5, f"8 bots at once: {statuses}, {owned} made")

    async def league(body):
        status, made, _ = await client.request("POST", "/api/leagues/create", victim, body)
        result.check(status == 201 and made.get("bots") == body.get("bots", "allowed"), f"league {body}: {status} {made}")
        return made

    async def join(token, league, bot=None):
        status, answer, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", token, {"botId": bot["id"]} if bot else None)
        result.check(status == 200, f"joining {league['name']} {'with ' + bot['username'] if bot else ''}: {status} {answer}")

    async def seat(token, bot, league):
        await join(token, league, bot)
        listed = (await client.request("GET", "/api/bots", token))[1]
        return next(p["id"] for b in listed if b["id"] == bot["id"] for p in b["portfolios"] if p["leagueId"] == league["id"])

    async def key(token, body):
        status, made, _ = await client.request("POST", "/api/api-keys", token, body)
        result.check(status == 201 and made.get("botId") == body.get("botId"), f"a key {body}: {status} {made}")
        return made

    async def league_portfolio(token, league):
        return next(p["id"] for p in (await client.request("GET", "/api/portfolios", token))[1] if p["leagueId"] == league["id"])

    bots["arena"] = await league({"name": "Bot arena", "mode": "isolated"})
    await join(attacker, bots["arena"])
    bots["attacker arena portfolio"] = await seat(attacker, bots["attacker"], bots["arena"])
    bots["victim arena portfolio"] = await seat(victim, bots["victim"], bots["arena"])
    bots["victim key"] = await key(victim, {"botId": bots["victim"]["id"]})
    bots["attacker key"] = await key(attacker, {"botId": bots["attacker"]["id"]})
    bots["no bots"] = await league({"name": "No bots", "mode": "isolated", "bots": "forbidden"})
    await join(attacker, bots["no bots"])
    bots["attacker no-bots portfolio"] = await league_portfolio(attacker, bots["no bots"])
    # Switching a league to forbid bots stops the keys on its portfolios, a bot's and a
    # human's, within 2 s (each process caches a key that long); the web client trades on.
    flip = await league({"name": "Turns", "mode": "isolated", "bots": "allowed"})
    await join(attacker, flip)
    bots["flip"] = flip
    bots["attacker flip portfolio"] = await league_portfolio(attacker, flip)
    bots["bot flip portfolio"] = await seat(attacker, bots["attacker"], flip)
    flip_keys = [await key(attacker, {"botId": bots["attacker"]["id"], "portfolioId": bots["bot flip portfolio"]}),
                 await key(attacker, {"portfolioId": bots["attacker flip portfolio"]})]
    bots["flip keys"] = flip_keys
    for made in flip_keys:
        status, answer, _ = await client.request("POST", "/v2/orders", None, {
            "symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "client_order_id": f"before-{made['keyId']}"},
            headers=alpaca_headers(made))
        result.check(status == 200, f"an order with a key before its league forbade bots: {status} {answer}")
    status, changed, _ = await client.request("PATCH", f"/api/leagues/{flip['id']}", victim, {"bots": "forbidden"})
    changed_at = time.monotonic()
    result.check(status == 200 and changed.get("bots") == "forbidden", f"forbidding bots: {status} {changed}")
    seen = []
    while time.monotonic() - changed_at < 3:
        for index, made in enumerate(flip_keys):
            sent = time.monotonic() - changed_at
            status, answer, _ = await client.request("GET", "/v2/account", None, headers=alpaca_headers(made))
            seen.append((index, sent, status, answer))
        await asyncio.sleep(0.1)
    late = [(i, round(t, 2), s, a) for i, t, s, a in seen if t > 2 and not (s == 403 and alpaca_error(403, a))]
    first = [min((t for i, t, s, _ in seen if i == index and s == 403), default=None) for index in range(2)]
    result.check(not late and all(t is not None for t in first) and any(t > 2 for _, t, _, _ in seen),
                 f"keys of a league that forbade bots, after 2 s: {late[:3]}")
    status, answer, _ = await client.request("POST", "/api/stock/buy", attacker, {"symbol": "R1", "amount": 1, "portfolioId": bots["attacker flip portfolio"]})
    result.check(status == 200, f"the web client's trade in a league forbidding bots: {status} {answer}")
    bots["forbidden"] = {"keys refused from s": [round(t, 2) if t is not None else None for t in first],
                         "requests after 2 s": sum(1 for _, t, _, _ in seen if t > 2)}
    return bots


async def bot_cases(result, client, database, expect, bots, victim, victim_id, attacker, attacker_id, sneaky):
    """The bot players' routes under hostile input (see bot_setup for what they aim at):
    every refusal a 4xx with its code, and no bot, key, seat or league policy changed."""
    cases = 0
    before = database.query(BOTS)[0]
    listed = {token: (await client.request("GET", "/api/bots", token))[1] for token in (attacker, victim, sneaky)}
    mine, theirs = bots["attacker"]["id"], bots["victim"]["id"]
    mine_personal = bots["attacker"]["portfolios"][0]["id"]
    theirs_personal = bots["victim"]["portfolios"][0]["id"]
    other_personal = bots["attacker2"]["portfolios"][0]["id"]
    attacker_personal = (await client.request("GET", "/api/portfolio", attacker))[1]["id"]
    invalid = {422}

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        await expect(method, path, token, expected, code=code, **kwargs)
        cases += 1

    # POST /api/bots: names no username may have, wrong types, missing fields, bad and huge bodies.
    names = ["", "ab", "x" * 33, "x" * 4096, "Ω≈ç√∫", "bøt", "v\u0456ctim", "bot\x07bell", "bot\x00nul", "evil\u202egnp.exe",
             "iso\u2066late", "mark\u200fbot", COMBINING, "bot name", "'; DROP TABLE users;--", "bot'--", "bot\nname", "bot\ttab",
             "\ufeffbot", "bot\u0301"]
    for name in names:
        await case("POST", "/api/bots", attacker, invalid, "validation_failed", body={"name": name})
    for body in [{"name": 7}, {"name": None}, {"name": True}, {"name": []}, {"name": {}}, {"name": 1e300}, {"name": ["attackbot3"]},
                 {}, {"nome": "attackbot3"}, {"username": "attackbot3"}, [1, 2], "attackbot3", 5]:
        await case("POST", "/api/bots", attacker, invalid, "validation_failed", body=body)
    for raw in ['{"name":', "", "\x00\x01", '{"name":"attackbot3"}}', "nul"]:
        await case("POST", "/api/bots", attacker, {400}, "bad_request", raw=raw)
    await case("POST", "/api/bots", attacker, {413}, "payload_too_large", raw='{"name":"' + "x" * (10 * 1024 * 1024) + '"}')
    # Names taken, in another case: a player's, two bots', and one of the racing five (whichever were made).
    raced = database.scalar(
        "SELECT upper(username) FROM users WHERE bot_owner_id = (SELECT id FROM users WHERE username = 'sneaky') ORDER BY id LIMIT 1")
    for name in ["victim", "VICTIMBOT", "Attackbot", raced]:
        await case("POST", "/api/bots", attacker, {409}, "conflict", body={"name": name})
    await case("POST", "/api/bots", sneaky, {409}, "too_many_bots", body={"name": "sneakybot9"})
    # A bot's key is not a login: it makes, lists and deletes no bots.
    for method, path, body in [("POST", "/api/bots", {"name": "botsbot"}), ("GET", "/api/bots", None), ("DELETE", f"/api/bots/{mine}", None)]:
        await case(method, path, None, {401}, "unauthorized", body=body, headers=alpaca_headers(bots["attacker key"]))
    # POST /api/api-keys: another's bot, no bot, wrong types; another's or another bot's portfolio.
    for body in [{"botId": theirs}, {"botId": 99999999}, {"botId": victim_id}, {"botId": 0}, {"botId": -1},
                 {"botId": theirs, "portfolioId": theirs_personal}, {"botId": mine, "portfolioId": theirs_personal},
                 {"botId": mine, "portfolioId": bots["victim arena portfolio"]}, {"botId": mine, "portfolioId": attacker_personal},
                 {"botId": mine, "portfolioId": other_personal}, {"botId": mine, "portfolioId": -5}, {"botId": mine, "portfolioId": 99999999},
                 {"botId": None, "portfolioId": theirs_personal}]:
        await case("POST", "/api/api-keys", attacker, {404}, "not_found", body=body)
    for body in [{"botId": str(mine)}, {"botId": 1.5}, {"botId": True}, {"botId": [mine]}, {"botId": {}}, {"botId": 2 ** 63},
                 {"botId": 1e300}, {"botId": "1 OR 1=1"}, {"botId": mine, "portfolioId": "x"}, {"botId": mine, "portfolioId": [mine_personal]},
                 {"botId": mine, "name": "bell\x07"}, {"botId": mine, "name": "x" * 65}, {"botId": mine, "name": "evil\u202e"}]:
        await case("POST", "/api/api-keys", attacker, invalid, "validation_failed", body=body)
    for body in [{"botId": mine, "portfolioId": bots["bot flip portfolio"]}, {"portfolioId": bots["attacker no-bots portfolio"]},
                 {"portfolioId": bots["attacker flip portfolio"]}]:
        await case("POST", "/api/api-keys", attacker, {403}, "bots_forbidden", body=body)
    await case("DELETE", f"/api/api-keys/{bots['victim key']['keyId']}", attacker, {404}, "not_found")
    # Seating: another's bot, no bot, wrong types, a bot seated already, leagues forbidding bots, junk codes.
    arena = bots["arena"]["code"]
    for body in [{"botId": theirs}, {"botId": 99999999}, {"botId": victim_id}, {"botId": attacker_id}, {"botId": -1}]:
        await case("POST", f"/api/leagues/join/{arena}", attacker, {404}, "not_found", body=body)
    for body in [{"botId": "x"}, {"botId": 1.5}, {"botId": [mine]}, {"botId": 2 ** 63}, {"botId": True}, [mine], "x"]:
        await case("POST", f"/api/leagues/join/{arena}", attacker, invalid, "validation_failed", body=body)
    await case("POST", f"/api/leagues/join/{arena}", attacker, {400}, "bad_request", raw='{"botId":')
    for body in [{"botId": mine}, {"botId": None}]:
        await case("POST", f"/api/leagues/join/{arena}", attacker, {409}, "already_member", body=body)
    for league in (bots["no bots"], bots["flip"]):
        await case("POST", f"/api/leagues/join/{league['code']}", attacker, {403}, "bots_forbidden", body={"botId": bots["attacker2"]["id"]})
    for code in ["' OR '1'='1", wrong_code(arena), "x" * 300, "%00"]:
        await case("POST", f"/api/leagues/join/{code}", attacker, {404}, "not_found", body={"botId": mine})
    # DELETE /api/bots/{id}: another's bot, a player, junk.
    for junk in [theirs, victim_id, attacker_id, 99999999, "abc", "-1", "0", "1e3", "99999999999999999999", "%00", "1%20OR%201%3D1",
                 "%27%3B%20DROP%20TABLE%20users%3B--", "9" * 300, f"{mine}.0", f"%20{mine}"]:
        await case("DELETE", f"/api/bots/{junk}", attacker, {404}, "not_found")
    await case("DELETE", f"/api/bots/{mine}", victim, {404}, "not_found")
    # PATCH /api/leagues/{id}: junk policies by the owner, any policy by a member or a stranger.
    arena_id = bots["arena"]["id"]
    for value in ["ALLOWED", "Forbidden", "", "maybe", "forbidden; DROP TABLE leagues;--", "allowed\u202e", "allowed\x00", 1, True, [], {"x": 1},
                  ["forbidden"]]:
        await case("PATCH", f"/api/leagues/{arena_id}", victim, invalid, "validation_failed", body={"bots": value})
    await case("PATCH", f"/api/leagues/{arena_id}", victim, invalid, "validation_failed", body=["forbidden"])
    # The other fields the owner may change, with values no league may have, and fields fixed at creation.
    for body in [{"name": ""}, {"name": "   "}, {"name": "x" * 65}, {"name": "evil\u202egnp"}, {"name": "bell\x07"}, {"name": COMBINING},
                 {"name": 7}, {"endsAt": "2020-01-01T00:00:00Z"}, {"endsAt": "yesterday"}, {"endsAt": 1}, {"endsAt": "9999-99-99"},
                 {"joinUntil": "soon"}, {"joinUntil": []}, {"maxMembers": 0}, {"maxMembers": -1}, {"maxMembers": 1e300},
                 {"maxMembers": "5"}, {"maxMembers": 2 ** 63}, {"maxMembers": 1000001}, {"rules": {"commissionFlat": "1"}},
                 {"mode": "isolated"}, {"startingCash": "1000000000"}, {"currency": "EUR"}, {"code": "AAAAAAAAAAAA"},
                 {"ownerId": attacker_id}, {"memberCount": 0}, {"startsAt": "2020-01-01T00:00:00Z"}, {"name": "Fine", "role": "admin"}]:
        await case("PATCH", f"/api/leagues/{arena_id}", victim, invalid, "validation_failed", body=body)
    await case("PATCH", f"/api/leagues/{arena_id}", victim, {400}, "bad_request", raw='{"bots":')
    await case("PATCH", f"/api/leagues/{arena_id}", attacker, {403}, "forbidden", body={"bots": "forbidden"})
    await case("PATCH", f"/api/leagues/{bots['no bots']['id']}", attacker, {403}, "forbidden", body={"bots": "allowed"})
    await case("PATCH", f"/api/leagues/{arena_id}", sneaky, {404}, "not_found", body={"bots": "forbidden"})
    for league_id in ["abc", "99999999", "-1", "%27%3B--"]:
        await case("PATCH", f"/api/leagues/{league_id}", victim, {404}, "not_found", body={"bots": "forbidden"})
    # ?players= on the leaderboard.
    for players in ["everyone", "", "BOTS", "Humans", "bots'--", "%00", "x" * 3000, "bots%20OR%201%3D1", "bot"]:
        await case("GET", f"/api/leagues/{arena_id}/leaderboard?players={players}", attacker, invalid, "validation_failed")
    await case("GET", f"/api/leagues/{bots['flip']['id'] + 1000}/leaderboard?players=bots", attacker, {404}, "not_found")
    # Alpaca's single-symbol market data: junk symbols and parameters (a bearer token and a bot's key).
    routes = ["bars?timeframe=1Day", "bars/latest", "quotes/latest", "trades/latest", "snapshot"]
    symbols = ["%27%3B--", "A" * 300, "%00", "R1%2FR2", "%CE%A9", "-R1", ".R1", "R1%20OR%201=1", "R1;DROP", "%E2%80%AER1"]
    key = {"headers": alpaca_headers(bots["attacker key"])}
    for index, route in enumerate(routes):
        for symbol in symbols:
            await case("GET", f"/v2/stocks/{symbol}/{route}", attacker, invalid, None)
        if route != "bars?timeframe=1Day":
            await case("GET", f"/v2/stocks/NOPE/{route}", None, {404}, None, **key)
        separator = "&" if "?" in route else "?"
        for query in ["x=1", "feed=nasdaq", "symbols=R1", "feed=%27%3B--"]:
            await case("GET", f"/v2/stocks/R1/{route}{separator}{query}", None if index % 2 else attacker, invalid, None, **(key if index % 2 else {}))
    for query in ["", "?timeframe=90Min", "?timeframe=0Min", "?timeframe=24Hour", "?timeframe=1Day&start=yesterday",
                  "?timeframe=1Day&start=2021-01-01&end=2020-01-01", "?timeframe=1Day&limit=0", "?timeframe=1Day&limit=-1",
                  "?timeframe=1Day&limit=99999999", "?timeframe=1Day&page_token=%27%20OR%201", "?timeframe=1Day&adjustment=dividend",
                  "?timeframe=1Day&sort=desc", "?timeframe=1Day&start=" + "9" * 400, "?timeframe=%00"]:
        await case("GET", f"/v2/stocks/R1/bars{query}", None, invalid, None, **key)
    # Nothing was made, changed or seated: the same bots, each owner's list as it was.
    after = database.query(BOTS)[0]
    again = {token: (await client.request("GET", "/api/bots", token))[1] for token in (attacker, victim, sneaky)}
    result.check(before == after and listed == again and int(after[0]) == 8, f"bots before {before}, after {after}")
    bots["cases"], bots["counted"] = cases, f"{before[0]} and {after[0]}"
    return cases


async def host_setup(result, client, database, victim, victim_id, attacker, attacker_id, sneaky, sneaky_id):
    """What the host-control cases attack, made before the fingerprint (and checked as it
    is made): a class the victim hosts without a seat (`ownerPlays` false, one reset each;
    mass-assigned `frozen`, `frozenReason` and `memberCount` ignored) where the attacker
    has used his reset (his old portfolio archived, no longer listed); a league the victim
    plays in, frozen with a reason, where the attacker and sneaky play (an order of the
    attacker's cancelled while frozen, one left resting, a key on his portfolio); and a
    league that has finished."""
    hosts = {"figures": {}}

    async def create(body):
        status, made, _ = await client.request("POST", "/api/leagues/create", victim, body)
        result.check(status == 201, f"league {body}: {status} {made}")
        return made

    async def join(token, league):
        status, answer, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", token)
        result.check(status == 200, f"joining {league['name']}: {status} {answer}")
        return next(p["id"] for p in (await client.request("GET", "/api/portfolios", token))[1] if p["leagueId"] == league["id"])

    async def resting(token, portfolio):
        status, made, _ = await client.request("POST", "/api/orders", token, {
            "symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00", "timeInForce": "gtc", "portfolioId": portfolio})
        result.check(status == 201 and made.get("status") == "new", f"a resting order: {status} {made}")
        return made

    ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3))
    hosts["over"] = await create({"name": "Over", "mode": "isolated", "endsAt": ends, "resetsAllowed": 3})
    await join(attacker, hosts["over"])
    mass = await create({"name": "Class", "mode": "isolated", "ownerPlays": False, "resetsAllowed": 1,
                         "frozen": True, "frozenReason": "mass", "memberCount": 50, "resets": 9})
    result.check(mass.get("ownerPlays") is False and mass.get("frozen") is False and mass.get("frozenReason") is None
                 and mass.get("memberCount") == 0 and mass.get("resetsAllowed") == 1, f"mass assignment on a hosted league: {mass}")
    hosts["class"] = mass
    first = await join(attacker, mass)
    await resting(attacker, first)
    status, reset, _ = await client.request("POST", f"/api/leagues/{mass['id']}/reset", attacker)
    listed = [p["id"] for p in (await client.request("GET", "/api/portfolios", attacker))[1]]
    cancelled = database.scalar(f"SELECT count(*) FROM orders WHERE portfolio_id = {int(first)} AND status = 'canceled'")
    result.check(status == 200 and reset.get("previousPortfolioId") == first and reset.get("resets") == 1 and first not in listed
                 and reset.get("portfolioId") in listed and cancelled == "1", f"the attacker's own reset: {status} {reset}, listed {listed}")
    hosts["archived"] = first
    hosts["frozen"] = frozen = await create({"name": "Frozen", "mode": "isolated"})
    hosts["frozen portfolio"] = portfolio = await join(attacker, frozen)
    await join(sneaky, frozen)
    hosts["resting"] = await resting(attacker, portfolio)
    doomed = await resting(attacker, portfolio)
    status, key, _ = await client.request("POST", "/api/api-keys", attacker, {"portfolioId": portfolio})
    result.check(status == 201, f"a key on a league portfolio: {status} {key}")
    hosts["key"] = key
    status, answer, _ = await client.request("POST", f"/api/leagues/{frozen['id']}/freeze", victim, {"reason": "Exam"})
    result.check(status == 200 and answer.get("frozen") is True and answer.get("frozenReason") == "Exam", f"freezing: {status} {answer}")
    status, answer, _ = await client.request("DELETE", f"/api/orders/{doomed['id']}", attacker)
    result.check(status == 200 and answer.get("status") == "canceled", f"cancelling while frozen: {status} {answer}")
    told = {(int(u), int(n)) for u, n in database.query("SELECT user_id, count(*) FROM notifications WHERE title = 'Trading frozen' GROUP BY 1")}
    result.check(told == {(attacker_id, 1), (sneaky_id, 1), (victim_id, 1)}, f"'Trading frozen' notices (user, count): {told}")
    for _ in range(40):
        if database.scalar(f"SELECT finished_at IS NOT NULL FROM leagues WHERE id = {int(hosts['over']['id'])}") == "t":
            break
        await asyncio.sleep(0.25)
    hosts["figures"] = {"finished league finished": database.scalar(f"SELECT finished_at IS NOT NULL FROM leagues WHERE id = {int(hosts['over']['id'])}") == "t",
                        "'Trading frozen' notices": len(told)}
    result.check(hosts["figures"]["finished league finished"], "the league that ended was never finished")
    return hosts


async def host_cases(result, client, expect, hosts, shared, victim, victim_id, attacker, attacker_id, sneaky, sneaky_id, bot_id):
    """The host controls under hostile input (see host_setup for what they aim at): every
    refusal a 4xx problem+json with its code, nothing frozen, unfrozen, reset or notified."""
    cases = 0
    invalid = {422}
    school, frozen, over = hosts["class"]["id"], hosts["frozen"]["id"], hosts["over"]["id"]

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        await expect(method, path, token, expected, code=code, **kwargs)
        cases += 1

    # Freezing: reasons no text may have, wrong types and bodies, by the owner of a league that is not frozen.
    freeze = f"/api/leagues/{school}/freeze"
    for reason in ["x" * 201, COMBINING * 2, "bell\x07", "two\nlines", "nul\x00", "evil\u202egnp", "iso\u2066late", "mark\u200f", "tab\there"]:
        await case("POST", freeze, victim, invalid, "validation_failed", body={"reason": reason})
    for body in [{"reason": 7}, {"reason": True}, {"reason": []}, {"reason": {}}, {"reason": ["x"]}, {"reason": 1e300}, [1], "x", 5]:
        await case("POST", freeze, victim, invalid, "validation_failed", body=body)
    for raw in ['{"reason":', "\x00\x01", '{"reason":"x"}}', "nul"]:
        await case("POST", freeze, victim, {400}, "bad_request", raw=raw)
    await case("POST", freeze, victim, {413}, "payload_too_large", raw='{"reason":"' + "x" * (10 * 1024 * 1024) + '"}')
    # Not the owner: a member, a stranger; junk league ids.
    for path in [freeze, f"/api/leagues/{school}/unfreeze", f"/api/leagues/{frozen}/unfreeze", f"/api/leagues/{frozen}/freeze"]:
        await case("POST", path, attacker, {403}, "forbidden", body={"reason": "mine now"} if path.endswith("/freeze") else None)
    for path in [freeze, f"/api/leagues/{school}/unfreeze"]:
        await case("POST", path, sneaky, {404}, "not_found")
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "1%20OR%201%3D1", "%00", f"{school}.0"]:
        await case("POST", f"/api/leagues/{junk}/freeze", victim, {404}, "not_found", body={"reason": "x"})
        await case("POST", f"/api/leagues/{junk}/unfreeze", victim, {404}, "not_found")
    # A shared league has no league portfolios to freeze or reset; a finished one changes no more.
    for path in [f"/api/leagues/{shared['id']}/freeze", f"/api/leagues/{shared['id']}/unfreeze",
                 f"/api/leagues/{shared['id']}/members/{victim_id}/reset", f"/api/leagues/{shared['id']}/reset"]:
        await case("POST", path, victim, {409}, "shared_league")
    for path in [f"/api/leagues/{over}/freeze", f"/api/leagues/{over}/unfreeze", f"/api/leagues/{over}/members/{attacker_id}/reset"]:
        await case("POST", path, victim, {409}, "conflict")
    await case("POST", f"/api/leagues/{over}/reset", attacker, {409}, "conflict")
    # In the frozen league: trades, orders and replacements are refused (403 under /v2); freezing again changes nothing.
    portfolio = hosts["frozen portfolio"]
    for side in ("buy", "sell"):
        await case("POST", f"/api/stock/{side}", attacker, {409}, "trading_frozen", body={"symbol": "R1", "amount": 1, "portfolioId": portfolio})
    for order in [{"type": "market"}, {"type": "limit", "limitPrice": "1.00", "timeInForce": "gtc"}]:
        await case("POST", "/api/orders", attacker, {409}, "trading_frozen", body={"symbol": "R1", "side": "buy", "quantity": 1, "portfolioId": portfolio, **order})
    await case("PATCH", f"/api/orders/{hosts['resting']['id']}", attacker, {409}, "trading_frozen", body={"quantity": 2})
    await case("POST", "/v2/orders", None, {403}, None, headers=alpaca_headers(hosts["key"]), body={
        "symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "client_order_id": "while-frozen"})
    # (Both are the host's actions, answered: each is in the audit log once, checked with the fingerprint.)
    status, answer, _ = await client.request("POST", f"/api/leagues/{frozen}/freeze", victim, {"reason": "Another"})
    result.check(status == 200 and answer.get("frozen") is True and answer.get("frozenReason") == "Exam", f"freezing a frozen league: {status} {answer}")
    hosts["audited"] = [("league.freeze", victim_id, frozen)] if status == 200 else []
    status, answer, _ = await client.request("POST", f"/api/leagues/{school}/unfreeze", victim)
    result.check(status == 200 and answer.get("frozen") is False, f"unfreezing a league not frozen: {status} {answer}")
    hosts["audited"] += [("league.unfreeze", victim_id, school)] if status == 200 else []
    cases += 2
    # Resets by the host: no member of this league (junk ids, another league's member, a bot, nobody); the host
    # without a seat naming their own id makes an own reset, and has no seat to reset.
    for junk in ["abc", "-1", "0", "99999999999999999999", "1e3", "%00", str(2 ** 63), f"{attacker_id}.0", f"%20{attacker_id}",
                 "1%20OR%201%3D1", "%27%3B--", str(sneaky_id), str(bot_id), "99999999"]:
        await case("POST", f"/api/leagues/{school}/members/{junk}/reset", victim, {404}, "not_found")
    await case("POST", f"/api/leagues/{school}/members/{victim_id}/reset", victim, {409}, "not_playing")
    await case("POST", f"/api/leagues/{school}/members/{attacker_id}/reset", attacker, {403}, "forbidden")
    await case("POST", f"/api/leagues/{frozen}/members/{sneaky_id}/reset", attacker, {403}, "forbidden")
    await case("POST", f"/api/leagues/{school}/members/{attacker_id}/reset", sneaky, {404}, "not_found")
    for junk in ["abc", "-1", "99999999", str(2 ** 63)]:
        await case("POST", f"/api/leagues/{junk}/members/{attacker_id}/reset", victim, {404}, "not_found")
    # Own resets: the host without a seat, an allowance used up or none, a stranger, junk ids.
    await case("POST", f"/api/leagues/{school}/reset", victim, {409}, "not_playing")
    await case("POST", f"/api/leagues/{school}/reset", victim, {409, 413}, {"not_playing", "payload_too_large"},
               raw='{"pad":"' + "x" * (10 * 1024 * 1024) + '"}')
    await case("POST", f"/api/leagues/{school}/reset", attacker, {409}, "no_resets_left")
    await case("POST", f"/api/leagues/{frozen}/reset", attacker, {409}, "no_resets_left")
    await case("POST", f"/api/leagues/{school}/reset", sneaky, {404}, "not_found")
    await case("POST", f"/api/leagues/{shared['id']}/reset", attacker, {404}, "not_found")
    for junk in ["abc", "-1", "99999999", str(2 ** 63), "%27%3B--"]:
        await case("POST", f"/api/leagues/{junk}/reset", attacker, {404}, "not_found")
    # The archived portfolio of the attacker's reset: not his to trade, order on, key or read.
    old = hosts["archived"]
    for method, path, body in [("POST", "/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": old}),
                               ("POST", "/api/stock/sell", {"symbol": "R1", "amount": 1, "portfolioId": old}),
                               ("POST", "/api/orders", {"symbol": "R1", "side": "buy", "quantity": 1, "type": "market", "portfolioId": old}),
                               ("POST", "/api/api-keys", {"portfolioId": old}), ("GET", f"/api/orders?portfolioId={old}", None),
                               ("GET", f"/api/portfolio?portfolioId={old}", None)]:
        await case(method, path, attacker, {404}, "not_found", body=body)
    # Creating: allowances out of range, of the wrong type, on a shared league; ownerPlays of the wrong type.
    for value in [-1, 101, 1000000, "2", 2.5, 1e300, 2 ** 63, True, [], {}, [1]]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed",
                   body={"name": "Resets", "mode": "isolated", "resetsAllowed": value})
    for body in [{"name": "Resets", "resetsAllowed": 1}, {"name": "Resets", "mode": "shared", "resetsAllowed": 100}]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed", body=body)
    for value in ["false", "no", 0, 1, [], {}, [False], "null"]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed",
                   body={"name": "Host", "mode": "isolated", "ownerPlays": value})
    # Fixed at creation, or not a league's to change by PATCH.
    for body in [{"frozen": True}, {"frozenReason": "x"}, {"resetsAllowed": 5}, {"ownerPlays": True}, {"resets": 0}, {"frozen": False, "name": "Fine"}]:
        await case("PATCH", f"/api/leagues/{school}", victim, invalid, "validation_failed", body=body)
    return cases


async def notes_cases(expect, hosts, shared, victim, victim_id, attacker, sneaky):
    """The trade journal, league news, risk figures, ranking and the gradebook under hostile
    input: notes no text may have, news from anyone but the host, another member's journal,
    junk orders, benchmarks and ranges, the gradebook asked for by a member or a stranger.
    Every refusal a 4xx problem+json with its code; no note, news or setting kept."""
    cases = 0
    invalid = {422}
    school, frozen = hosts["class"]["id"], hosts["frozen"]["id"]

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        await expect(method, path, token, expected, code=code, **kwargs)
        cases += 1

    # Notes no text may have, on a trade and an order of the attacker's personal portfolio.
    for note in ["x" * 501, "bell\x07", "nul\x00", "evil\u202egnp", "iso\u2066late", COMBINING * 6, 7, True, ["x"], {"a": 1}]:
        status, code = (invalid, "validation_failed") if isinstance(note, str) else ({400, 422}, {"bad_request", "validation_failed"})
        await case("POST", "/api/stock/buy", attacker, status, code, body={"symbol": "R1", "amount": 1, "note": note})
        await case("POST", "/api/orders", attacker, status, code,
                   body={"symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00", "note": note})
    # News: only the host posts; titles and bodies no text may have; wrong types and shapes.
    news = f"/api/leagues/{school}/news"
    await case("POST", news, attacker, {403}, "forbidden", body={"title": "Free money", "body": "Click here"})
    await case("POST", f"/api/leagues/{school}/news", sneaky, {404}, "not_found", body={"title": "Hi", "body": "there"})
    for body in [{"title": "", "body": "x"}, {"title": "x", "body": ""}, {"title": "  ", "body": "x"}, {"title": "x" * 121, "body": "x"},
                 {"title": "x", "body": "x" * 2001}, {"title": "two\nlines", "body": "x"}, {"title": "bell\x07", "body": "x"},
                 {"title": "x", "body": "nul\x00"}, {"title": "evil\u202egnp", "body": "x"}, {"title": 7, "body": "x"},
                 {"title": "x"}, {"body": "x"}, {"title": ["x"], "body": "x"}, [1], "x"]:
        await case("POST", news, victim, {400, 422}, {"validation_failed", "bad_request"}, body=body)
    await case("POST", news, victim, {413}, "payload_too_large", raw='{"title":"x","body":"' + "x" * (10 * 1024 * 1024) + '"}')
    for query in ["limit=0", "limit=x", "before=-1", "before=x", "before=99999999999999999999"]:
        await case("GET", f"{news}?{query}", victim, invalid, "validation_failed")
    # The journal: another member's is the host's to read; junk parameters.
    journal = f"/api/leagues/{frozen}/journal"
    await case("GET", f"{journal}?userId={victim_id}", attacker, {403}, "forbidden")
    await case("GET", f"/api/leagues/{school}/journal", sneaky, {404}, "not_found")
    for query in ["userId=0", "userId=-3", "userId=x", "userId=1e3", "limit=0", "before=x", "before=-2"]:
        await case("GET", f"{journal}?{query}", attacker, invalid, "validation_failed")
    # The gradebook is the host's alone.
    await case("GET", f"/api/leagues/{school}/report.csv", attacker, {403}, "forbidden")
    await case("GET", f"/api/leagues/{school}/report.csv", sneaky, {404}, "not_found")
    # Ranking and benchmarks: junk orders and symbols, a journal rule on a shared league, wrong types.
    for query in ["rankBy=luck", "rankBy=", "rankBy=NETWORTH", "rankBy=%3Cscript%3E"]:
        await case("GET", f"/api/leagues/{school}/leaderboard?{query}", victim, invalid, "validation_failed")
    for body, status, code in [({"rankBy": "luck"}, invalid, "validation_failed"), ({"rankBy": 3}, {400, 422}, {"validation_failed", "bad_request"}),
                               ({"benchmark": "<script>"}, invalid, "validation_failed"), ({"benchmark": "x" * 40}, invalid, "validation_failed"),
                               ({"benchmark": "NOPE"}, {404}, "unknown_symbol"),
                               ({"journalRequired": "yes"}, {400, 422}, {"validation_failed", "bad_request"})]:
        await case("PATCH", f"/api/leagues/{school}", victim, status, code, body=body)
    await case("PATCH", f"/api/leagues/{shared['id']}", victim, invalid, "validation_failed", body={"journalRequired": True})
    await case("PATCH", f"/api/leagues/{school}", attacker, {403}, "forbidden", body={"rankBy": "sharpe"})
    # Risk figures: junk benchmarks and ranges, another player's portfolio.
    portfolio = hosts["frozen portfolio"]
    for query, status, code in [("benchmark=%3Cscript%3E", invalid, "validation_failed"), ("benchmark=NOPE", {404}, "unknown_symbol"),
                                ("from=2020-13-01", invalid, "validation_failed"), ("from=2021-01-02&to=2020-01-01", invalid, "validation_failed"),
                                ("to=x", invalid, "validation_failed")]:
        await case("GET", f"/api/portfolios/{portfolio}/risk?{query}", attacker, status, code)
    await case("GET", f"/api/portfolios/{portfolio}/risk", sneaky, {404}, "not_found")
    return cases


async def account_setup(result, client, database, hosts, admin, victim, victim_id, attacker, attacker_id, sneaky):
    """What the roster, personal-data and audit cases attack, made before the fingerprint
    (and checked as it is made): the victim's class roster of two in the class hosted
    without a seat (one student sent with mass-assigned username, password, role and
    manager, which are ignored), another host's (sneaky's) student in a class of his own,
    a league of the victim's that is full, a player registered with a mass-assigned
    display name and manager (ignored), and the admin's id."""
    accounts = {"figures": {}}
    school = hosts["class"]["id"]
    status, made, _ = await client.request("POST", f"/api/leagues/{school}/roster", victim, {"students": [
        {"displayName": "Pat One", "username": "admin", "password": "hunter2hunter2", "role": "admin", "managedBy": attacker_id, "userId": 1},
        {"displayName": "Pat Two"}], "leagueId": hosts["frozen"]["id"]})
    result.check(status == 201 and len(made.get("students", [])) == 2, f"the victim's class roster: {status} {made}")
    students = made["students"]
    rows = database.query("SELECT id, username, role, managed_by, display_name FROM users WHERE id IN "
                          f"({','.join(str(int(s['userId'])) for s in students)}) ORDER BY id")
    result.check(students[0]["username"] != "admin" and students[0]["password"] != "hunter2hunter2" and students[0]["userId"] != 1
                 and [(r[2], r[3]) for r in rows] == [("player", str(victim_id))] * 2 and sorted(r[4] for r in rows) == ["Pat One", "Pat Two"],
                 f"mass assignment on a roster: {[{k: v for k, v in s.items() if k != 'password'} for s in students]}, {rows}")
    accounts["students"] = students
    status, session, _ = await client.request("POST", "/api/auth/login", body={"username": students[1]["username"], "password": students[1]["password"]})
    result.check(status == 200, f"a roster student logging in: {status} {session}")
    accounts["student token"] = session.get("token")
    status, other, _ = await client.request("POST", "/api/leagues/create", sneaky, {"name": "Other class", "mode": "isolated", "ownerPlays": False,
                                                                                     "deleteManagedAfterDays": 30})
    result.check(status == 201 and other.get("deleteManagedAfterDays") == 30, f"another host's class: {status} {other}")
    accounts["other class"] = other
    status, made, _ = await client.request("POST", f"/api/leagues/{other['id']}/roster", sneaky, {"students": [{"displayName": "Sam"}]})
    result.check(status == 201, f"another host's roster: {status} {made}")
    accounts["other student"] = made["students"][0]
    status, full, _ = await client.request("POST", "/api/leagues/create", victim, {"name": "Full", "mode": "isolated", "maxMembers": 2})
    result.check(status == 201, f"a league for two: {status} {full}")
    status, answer, _ = await client.request("POST", f"/api/leagues/join/{full['code']}", attacker)
    result.check(status == 200, f"joining the league for two: {status} {answer}")
    accounts["full"] = full
    status, body, _ = await client.request("POST", "/api/auth/register", body={
        "username": "pet", "password": PASSWORD, "displayName": "Teacher's pet", "managedBy": victim_id})
    me = (await client.request("GET", "/api/me", body.get("token")))[1] if status == 201 else {}
    result.check(status == 201 and me.get("displayName") is None and me.get("managedBy") is None, f"mass assignment on register: {status} {me}")
    accounts["admin id"] = (await client.request("GET", "/api/me", admin))[1]["id"]
    audited = int(database.scalar(f"SELECT count(*) FROM audit_events WHERE action = 'league.roster_create' AND league_id IN ({int(school)}, {int(other['id'])})"))
    result.check(audited == 2, f"{audited} roster events for the two rosters")
    accounts["figures"] = {"roster students": len(students) + 1, "roster events": audited}
    return accounts


EXPORTED = {"exportedAt", "user", "portfolios", "trades", "orders", "cashMovements", "notifications", "apiKeys", "bots", "leagues"}


async def account_cases(result, client, expect, answers, accounts, hosts, bots, admin, victim, victim_id, attacker, attacker_id,
                        sneaky, sneaky_id, victim_portfolio):
    """Class rosters, a person's data and the audit log under hostile input (see
    account_setup for what they aim at): every refusal a 4xx problem+json with its code,
    no account made, changed or erased, no retention set and no audit event written; an
    export asked for with junk is the caller's own, without a secret."""
    cases = 0
    invalid = {422}
    school, over, full = hosts["class"]["id"], hosts["over"]["id"], accounts["full"]["id"]
    other = accounts["other class"]["id"]
    student, classmate = (s["userId"] for s in accounts["students"])
    other_student = accounts["other student"]["userId"]
    key = {"headers": alpaca_headers(bots["attacker key"])}
    huge = "x" * (10 * 1024 * 1024)

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        await expect(method, path, token, expected, code=code, **kwargs)
        cases += 1

    # POST /api/leagues/{id}/roster: no names or too many, names no text may have (one bad name refuses all).
    roster = f"/api/leagues/{school}/roster"
    await case("POST", roster, victim, invalid, "validation_failed", body={"students": []})
    await case("POST", roster, victim, invalid, "validation_failed", body={"students": [{"displayName": f"Pupil {i}"} for i in range(201)]})
    for name in ["x" * 65, "", "   ", "bell\x07", "nul\x00", "a\x00", "evil\u202egnp", "iso\u2066late", "mark\u200fname", COMBINING,
                 "two\nlines", "tab\there", "line\u2028sep", "c1\u0085control", "del\x7f"]:
        await case("POST", roster, victim, invalid, "validation_failed", body={"students": [{"displayName": name}]})
    await case("POST", roster, victim, invalid, "validation_failed", body={"students": [{"displayName": "Good Name"}, {"displayName": "bad\x07"}]})
    # Wrong types, missing and misnamed fields, malformed, empty and huge bodies.
    for body in [{"students": "Ana"}, {"students": ["Ana"]}, {"students": [{"displayName": 7}]}, {"students": [{"displayName": None}]},
                 {"students": [{"displayName": ["Ana"]}]}, {"students": {"displayName": "Ana"}}, {"students": None}, {"students": [{}]},
                 {"students": [{"name": "Ana"}]}, {"students": 1e300}, {}, {"pupils": [{"displayName": "Ana"}]}, [1], "Ana", 5]:
        await case("POST", roster, victim, invalid, "validation_failed", body=body)
    for raw in ['{"students":', "\x00\x01", '{"students":[]}}', "nul", ""]:
        await case("POST", roster, victim, {400}, "bad_request", raw=raw)
    await case("POST", roster, victim, {413}, "payload_too_large", raw='{"students":[{"displayName":"' + huge + '"}]}')
    # Not the host: a member (a self-registered one, and a student), a stranger, a key; junk league ids; a full and a finished league.
    good = {"students": [{"displayName": "Mallory"}]}
    await case("POST", roster, attacker, {403}, "forbidden", body=good)
    await case("POST", roster, accounts["student token"], {403}, "forbidden", body=good)
    await case("POST", roster, sneaky, {404}, "not_found", body=good)
    await case("POST", roster, None, {401}, "unauthorized", body=good, **key)
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "%00", "1%20OR%201%3D1", f"{school}.0"]:
        await case("POST", f"/api/leagues/{junk}/roster", victim, {404}, "not_found", body=good)
    await case("POST", f"/api/leagues/{full}/roster", victim, {409}, "league_full", body=good)
    await case("POST", f"/api/leagues/{over}/roster", victim, {409}, "conflict", body=good)

    # POST /api/leagues/{id}/members/{userId}/password: only a student the host manages in that league.
    def password(league, user):
        return f"/api/leagues/{league}/members/{user}/password"
    for user in [attacker_id, other_student, victim_id, sneaky_id, bots["attacker"]["id"], "abc", "-1", "0", str(2 ** 63),
                 "99999999999999999999", "1e3", "%00", f"{student}.0", f"%20{student}", "99999999"]:
        await case("POST", password(school, user), victim, {403}, "not_managed")
    await case("POST", password(other, student), sneaky, {403}, "not_managed")
    await case("POST", password(school, student), attacker, {403}, "forbidden")
    await case("POST", password(school, student), accounts["student token"], {403}, "forbidden")
    await case("POST", password(school, student), sneaky, {404}, "not_found")
    await case("POST", password(other, other_student), victim, {404}, "not_found")
    for junk in ["abc", "-1", "99999999", str(2 ** 63), "%27%3B--"]:
        await case("POST", password(junk, student), victim, {404}, "not_found")

    # DELETE /api/me: a wrong password, wrong types and shapes (with the right password too), no body, huge bodies, a key.
    await case("DELETE", "/api/me", sneaky, {403}, "wrong_password", body={"password": "not sneaky's password"})
    await case("DELETE", "/api/me", sneaky, {403}, "wrong_password", body={"password": ""})
    for body in [{"password": 7}, {"password": None}, {"password": [PASSWORD]}, {"password": {}}, {"password": True}, {"password": 1e300},
                 {}, {"pwd": PASSWORD}, {"Password": PASSWORD}, [PASSWORD], PASSWORD, 5]:
        await case("DELETE", "/api/me", sneaky, invalid, "validation_failed", body=body)
    for raw in ['{"password":', "\x00\x01", '{"password":"' + PASSWORD + '"}}', "nul", ""]:
        await case("DELETE", "/api/me", sneaky, {400}, "bad_request", raw=raw)
    await case("DELETE", "/api/me", sneaky, {400}, "bad_request")
    await case("DELETE", "/api/me", sneaky, {413}, "payload_too_large", raw='{"password":"' + huge + '"}')
    await case("DELETE", "/api/me", None, {401}, "unauthorized", body={"password": PASSWORD}, **key)
    await case("DELETE", "/api/me", None, {401}, "unauthorized", body={"password": PASSWORD})

    # DELETE /api/leagues/{id}/members/{userId}/account: only a student the host manages in that league.
    def account(league, user):
        return f"/api/leagues/{league}/members/{user}/account"
    for user in [attacker_id, other_student, victim_id, sneaky_id, bots["attacker"]["id"], "abc", "-1", "0", str(2 ** 63),
                 "99999999999999999999", "1e3", "%00", f"{student}.0", "99999999"]:
        await case("DELETE", account(school, user), victim, {403}, "not_managed")
    await case("DELETE", account(other, student), sneaky, {403}, "not_managed")
    await case("DELETE", account(school, student), attacker, {403}, "forbidden")
    await case("DELETE", account(school, student), accounts["student token"], {403}, "forbidden")
    await case("DELETE", account(school, student), sneaky, {404}, "not_found")
    await case("DELETE", account(other, other_student), victim, {404}, "not_found")
    await case("DELETE", account(school, student), None, {401}, "unauthorized", **key)
    for junk in ["abc", "-1", "99999999", str(2 ** 63), "%27%3B--"]:
        await case("DELETE", account(junk, student), victim, {404}, "not_found")

    # DELETE /api/admin/users/{id}: an admin's account, junk and unknown ids; players, hosts and keys.
    await case("DELETE", f"/api/admin/users/{accounts['admin id']}", admin, {403}, "forbidden")
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "99999999999999999999", "1e3", "%00", "1%20OR%201%3D1", "%27%3B--"]:
        await case("DELETE", f"/api/admin/users/{junk}", admin, {404}, "not_found")
    for token, target in [(attacker, victim_id), (victim, student), (attacker, attacker_id)]:
        await case("DELETE", f"/api/admin/users/{target}", token, {403}, "forbidden")
    await case("DELETE", f"/api/admin/users/{victim_id}", None, {401}, "unauthorized", **key)

    # The audit logs: junk paging and filters; a member, a stranger, a player, a host and a key.
    audit = f"/api/leagues/{school}/audit"
    for query in ["limit=0", "limit=-1", "limit=x", "limit=1e3", "limit=", "limit=%00", "before=x", "before=-1", "before=0",
                  "before=1.5", "before=99999999999999999999", "before=%27%3B--"]:
        await case("GET", f"{audit}?{query}", victim, invalid, "validation_failed")
    await case("GET", audit, attacker, {403}, "forbidden")
    await case("GET", audit, accounts["student token"], {403}, "forbidden")
    await case("GET", audit, sneaky, {404}, "not_found")
    for junk in ["abc", "-1", "99999999", str(2 ** 63), "%27%3B--"]:
        await case("GET", f"/api/leagues/{junk}/audit", victim, {404}, "not_found")
    for query in ["action=league.nope", "action=LEAGUE.FREEZE", "action=", "action=%27%3B--", "action=league.freeze%00",
                  "action=league.freeze%20", "actorId=x", "actorId=0", "actorId=-1", "actorId=1e3", "actorId=99999999999999999999",
                  "leagueId=x", "leagueId=0", "leagueId=-5", "leagueId=1%20OR%201%3D1", "limit=0", "limit=x", "before=x", "before=-1"]:
        await case("GET", f"/api/admin/audit?{query}", admin, invalid, "validation_failed")
    for token in (attacker, victim):
        await case("GET", "/api/admin/audit", token, {403}, "forbidden")
    await case("GET", "/api/admin/audit", None, {401}, "unauthorized", **key)

    # The export: junk parameters change nothing (the caller's own data, a download, no secret); a key gets none.
    for query in ["?format=xml", f"?userId={victim_id}", f"?id={victim_id}&portfolioId={victim_portfolio}", "?x=%00", "?limit=-1&before=x",
                  "?" + "a" * 3000]:
        async with client.session.get(f"{client.base}/api/me/export{query}", headers={"Authorization": f"Bearer {attacker}"}) as response:
            text = await response.text()
            disposition = response.headers.get("Content-Disposition", "")
        answers.append(text)
        try:
            body = json.loads(text)
        except ValueError:
            body = {}
        ok = (response.status == 200 and isinstance(body, dict) and EXPORTED <= set(body) and body["user"].get("id") == attacker_id
              and disposition == f'attachment; filename="mockstock-account-{attacker_id}.json"'
              and victim_portfolio not in [p.get("id") for p in body.get("portfolios", [])]
              and all(secret not in text for secret in (bots["attacker key"]["secret"], "secretHash", "passwordHash", "$scrypt$")))
        result.check(ok, f"the export with {query[:40]!r}: {response.status} {disposition!r} {text[:120]!r}")
        cases += 1
    await case("GET", "/api/me/export", None, {401}, "unauthorized", **key)
    await case("GET", "/api/me/export", None, {401}, "unauthorized")

    # A league's retention (deleteManagedAfterDays) out of range or of the wrong type, at creation and by PATCH; by a member or a stranger.
    for value in [-1, 366, 1e300, "x", "30", 2 ** 63, 1.5, True, [], {}, [30]]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed",
                   body={"name": "Retained", "mode": "isolated", "ownerPlays": False, "deleteManagedAfterDays": value})
        await case("PATCH", f"/api/leagues/{school}", victim, invalid, "validation_failed", body={"deleteManagedAfterDays": value})
    await case("PATCH", f"/api/leagues/{school}", attacker, {403}, "forbidden", body={"deleteManagedAfterDays": 0})
    await case("PATCH", f"/api/leagues/{school}", accounts["student token"], {403}, "forbidden", body={"deleteManagedAfterDays": None})
    await case("PATCH", f"/api/leagues/{other}", victim, {404}, "not_found", body={"deleteManagedAfterDays": 0})
    return cases


async def team_setup(result, client, database, hosts, victim, victim_id, attacker, sneaky):
    """What the team cases attack, made before the fingerprint (and checked as it is made):
    a team league the victim hosts without a seat (`"teams": true`), a class roster of
    three in it (Tia and Val trade teams Hawks and Doves, Uma watches Hawks), the attacker
    a member on no team, a resting order of Tia's on Hawks' portfolio; and a team league of
    sneaky's with a team of its own."""
    teams = {"figures": {}}
    status, league, _ = await client.request("POST", "/api/leagues/create", victim, {"name": "Team class", "mode": "isolated", "ownerPlays": False,
                                                                                      "teams": True})
    result.check(status == 201 and league.get("teams") is True, f"the victim's team league: {status} {league}")
    teams["league"] = league
    status, answer, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", attacker)
    result.check(status == 200, f"the attacker joining the team league: {status} {answer}")
    status, made, _ = await client.request("POST", f"/api/leagues/{league['id']}/roster", victim,
                                           {"students": [{"displayName": name} for name in ("Tia", "Uma", "Val")]})
    result.check(status == 201, f"the team league's roster: {status} {made}")
    for student in made["students"]:
        status, session, _ = await client.request("POST", "/api/auth/login", body={"username": student["username"], "password": student["password"]})
        result.check(status == 200, f"a team student logging in: {status} {session}")
        teams[student["displayName"]] = (session.get("token"), student["userId"])
    for name in ("Hawks", "Doves"):
        status, team, _ = await client.request("POST", f"/api/leagues/{league['id']}/teams", victim, {"name": name})
        result.check(status == 201, f"team {name}: {status} {team}")
        teams[name] = team
    for student, team, role in (("Tia", "Hawks", "trader"), ("Uma", "Hawks", "viewer"), ("Val", "Doves", "trader")):
        status, answer, _ = await client.request("PUT", f"/api/leagues/{league['id']}/teams/{teams[team]['id']}/members/{teams[student][1]}",
                                                 victim, {"role": role})
        result.check(status == 200, f"seating {student} on {team}: {status} {answer}")
    status, order, _ = await client.request("POST", "/api/orders", teams["Tia"][0], {
        "symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00", "timeInForce": "gtc",
        "portfolioId": teams["Hawks"]["portfolioId"]})
    result.check(status == 201 and order.get("status") == "new" and order.get("placedBy") == teams["Tia"][1], f"Tia's resting order: {status} {order}")
    teams["order"] = order
    status, other, _ = await client.request("POST", "/api/leagues/create", sneaky, {"name": "Sneaky teams", "mode": "isolated", "teams": True})
    result.check(status == 201, f"sneaky's team league: {status} {other}")
    status, team, _ = await client.request("POST", f"/api/leagues/{other['id']}/teams", sneaky, {"name": "Hawks"})
    result.check(status == 201, f"sneaky's team: {status} {team}")
    teams["other league"], teams["other team"] = other, team
    teams["figures"] = {"teams": int(database.scalar("SELECT count(*) FROM teams")),
                        "team members": int(database.scalar("SELECT count(*) FROM team_members"))}
    return teams


async def team_cases(expect, teams, hosts, shared, victim, victim_id, attacker, attacker_id, sneaky, sneaky_id, bot_id, attacker_key):
    """Teams under hostile input (see team_setup for what they aim at): every refusal a 4xx
    problem+json with its code; no team made, no member seated, moved or taken off, no
    league made with teams where it may not be, and a team's portfolio traded by none but
    its traders."""
    cases = 0
    invalid = {422}
    league = teams["league"]["id"]
    hawks, doves, other_team = teams["Hawks"]["id"], teams["Doves"]["id"], teams["other team"]["id"]
    portfolio = teams["Hawks"]["portfolioId"]
    (tia, tia_id), (uma, uma_id), (val, val_id) = teams["Tia"], teams["Uma"], teams["Val"]
    order = teams["order"]["id"]
    key = {"headers": alpaca_headers(attacker_key)}
    huge = "x" * (10 * 1024 * 1024)

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        cases += 1
        return await expect(method, path, token, expected, code=code, **kwargs)

    # POST /api/leagues/{id}/teams: names no text may have, wrong types, malformed and huge bodies.
    create = f"/api/leagues/{league}/teams"
    for name in ["", "   ", "x" * 65, "bell\x07", "nul\x00", "a\x00", "evil\u202egnp", "iso\u2066late", "mark\u200fname", COMBINING,
                 "two\nlines", "tab\there", "line\u2028sep", "c1\u0085control", "del\x7f"]:
        await case("POST", create, victim, invalid, "validation_failed", body={"name": name})
    for body in [{"name": 7}, {"name": None}, {"name": ["Owls"]}, {"name": {}}, {"name": True}, {"name": 1e300}, {}, {"title": "Owls"},
                 [1], "Owls", 5]:
        await case("POST", create, victim, invalid, "validation_failed", body=body)
    for raw in ['{"name":', "\x00\x01", '{"name":"Owls"}}', "nul", ""]:
        await case("POST", create, victim, {400}, "bad_request", raw=raw)
    await case("POST", create, victim, {413}, "payload_too_large", raw='{"name":"' + huge + '"}')
    # A name taken, in another case or with spaces around it.
    for name in ["HAWKS", "hawks", " Hawks ", "dOVES"]:
        await case("POST", create, victim, {409}, "conflict", body={"name": name})
    # Not the host: a member on no team, a trader, a viewer, a stranger, a key; junk league ids.
    for token in (attacker, tia, uma):
        await case("POST", create, token, {403}, "forbidden", body={"name": "Mine"})
    await case("POST", create, sneaky, {404}, "not_found", body={"name": "Mine"})
    await case("POST", create, None, {401}, "unauthorized", body={"name": "Mine"}, **key)
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "%00", "1%20OR%201%3D1", f"{league}.0"]:
        await case("POST", f"/api/leagues/{junk}/teams", victim, {404}, "not_found", body={"name": "Owls"})
        await case("GET", f"/api/leagues/{junk}/teams", victim, {404}, "not_found")
    await case("GET", create, sneaky, {404}, "not_found")
    # A league made without teams, isolated or shared: no teams, no seats.
    school = hosts["class"]["id"]
    for where in (school, shared["id"]):
        await case("POST", f"/api/leagues/{where}/teams", victim, {409}, "not_team_league", body={"name": "Owls"})
        await case("PUT", f"/api/leagues/{where}/teams/{hawks}/members/{attacker_id}", victim, {409}, "not_team_league", body={"role": "trader"})
        await case("DELETE", f"/api/leagues/{where}/teams/{hawks}/members/{tia_id}", victim, {409}, "not_team_league")
    # Teams only in an isolated league, and `teams` a boolean.
    for body in [{"name": "Shared teams", "teams": True}, {"name": "Shared teams", "mode": "shared", "teams": True},
                 {"name": "x", "mode": "isolated", "teams": "yes"}, {"name": "x", "mode": "isolated", "teams": 1},
                 {"name": "x", "mode": "isolated", "teams": [True]}, {"name": "x", "mode": "isolated", "teams": {}}]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed", body=body)

    # PUT /api/leagues/{id}/teams/{teamId}/members/{userId}: roles other than trader and viewer, bad bodies.
    def seat(team, user, where=league):
        return f"/api/leagues/{where}/teams/{team}/members/{user}"
    for role in ["captain", "TRADER", "Trader", "", " trader", "viewer ", "admin", "owner", "trader\x00", "tr\u200bader"]:
        await case("PUT", seat(hawks, attacker_id), victim, invalid, "validation_failed", body={"role": role})
    for body in [{"role": None}, {"role": 1}, {"role": ["trader"]}, {"role": {}}, {"role": True}, {}, {"rol": "trader"}, ["trader"], "trader", 5]:
        await case("PUT", seat(hawks, attacker_id), victim, invalid, "validation_failed", body=body)
    for raw in ['{"role":', "\x00\x01", '{"role":"trader"}}', "nul", ""]:
        await case("PUT", seat(hawks, attacker_id), victim, {400}, "bad_request", raw=raw)
    await case("PUT", seat(hawks, attacker_id), victim, {413}, "payload_too_large", raw='{"role":"' + huge + '"}')
    trader = {"role": "trader"}
    # Junk team and user ids, another league's team, a user who is no member (a stranger, the host, a bot).
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "99999999999999999999", "%00", "1%20OR%201%3D1", f"{hawks}.0", str(other_team)]:
        await case("PUT", seat(junk, attacker_id), victim, {404}, "not_found", body=trader)
        await case("DELETE", seat(junk, tia_id), victim, {404}, "not_found")
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "99999999999999999999", "%00", f"{attacker_id}.0", str(sneaky_id),
                 str(victim_id), str(bot_id)]:
        await case("PUT", seat(hawks, junk), victim, {404}, "not_found", body=trader)
        await case("DELETE", seat(hawks, junk), victim, {404}, "not_found")
    # Taking off a member who is not on that team (Uma is on Hawks, the attacker on none).
    await case("DELETE", seat(doves, uma_id), victim, {404}, "not_found")
    await case("DELETE", seat(hawks, attacker_id), victim, {404}, "not_found")
    # The victim's team through sneaky's league, sneaky's team through the victim's.
    await case("PUT", seat(hawks, tia_id, teams["other league"]["id"]), victim, {404}, "not_found", body=trader)
    await case("PUT", seat(other_team, tia_id, league), sneaky, {404}, "not_found", body=trader)
    # Not the host: a member on no team (seating himself), a trader, a viewer (promoting herself), a stranger, a key.
    await case("PUT", seat(hawks, attacker_id), attacker, {403}, "forbidden", body=trader)
    await case("PUT", seat(doves, tia_id), tia, {403}, "forbidden", body=trader)
    await case("PUT", seat(hawks, uma_id), uma, {403}, "forbidden", body=trader)
    await case("DELETE", seat(hawks, tia_id), uma, {403}, "forbidden")
    await case("DELETE", seat(hawks, uma_id), attacker, {403}, "forbidden")
    await case("DELETE", seat(doves, val_id), val, {403}, "forbidden")
    await case("PUT", seat(hawks, sneaky_id), sneaky, {404}, "not_found", body=trader)
    await case("DELETE", seat(hawks, tia_id), sneaky, {404}, "not_found")
    await case("PUT", seat(hawks, attacker_id), None, {401}, "unauthorized", body=trader, **key)

    # Trading the team's portfolio: its viewer may not (403 not_a_trader); a member on no
    # team, another team's trader and a stranger do not see it (404).
    buy = {"symbol": "R1", "amount": 1, "portfolioId": portfolio}
    limit = {"symbol": "R1", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00", "timeInForce": "gtc", "portfolioId": portfolio}
    for side in ("buy", "sell"):
        await case("POST", f"/api/stock/{side}", uma, {403}, "not_a_trader", body=buy)
    await case("POST", "/api/orders", uma, {403}, "not_a_trader", body=limit)
    await case("DELETE", f"/api/orders/{order}", uma, {403}, "not_a_trader")
    await case("DELETE", f"/api/orders?portfolioId={portfolio}", uma, {403}, "not_a_trader")
    teams["figures"]["a viewer's replacement answered"] = await case(
        "PATCH", f"/api/orders/{order}", uma, {403}, "not_a_trader", body={"quantity": 2, "limitPrice": "1.00"})
    for token in (attacker, val, sneaky):
        for side in ("buy", "sell"):
            await case("POST", f"/api/stock/{side}", token, {404}, "not_found", body=buy)
        await case("POST", "/api/orders", token, {404}, "not_found", body=limit)
        await case("DELETE", f"/api/orders/{order}", token, {404}, "not_found")
        await case("DELETE", f"/api/orders?portfolioId={portfolio}", token, {404}, "not_found")
        await case("PATCH", f"/api/orders/{order}", token, {404}, "not_found", body={"quantity": 2, "limitPrice": "1.00"})
        await case("GET", f"/api/portfolio?portfolioId={portfolio}", token, {404}, "not_found")
        await case("GET", f"/api/orders/{order}", token, {404}, "not_found")
    return cases
