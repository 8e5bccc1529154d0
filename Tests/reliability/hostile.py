"""Hostile input: every route with malformed, mistyped, huge, negative, unicode and
SQL-looking input, other users' ids, forged tokens, non-admins on admin routes, mass
assignment, and a slowloris client. Passing means: only 4xx problem+json, no 500, no
state change, no secret in any answer, and the slowloris connection is cut while
normal clients keep working."""
import asyncio
import base64
import hashlib
import hmac
import json
import time

from harness import ADMIN, JWT_SECRET, PASSWORD

# The state that no refused request may change.
FINGERPRINT = """
SELECT md5(concat_ws('|',
  (SELECT count(*) FROM users), (SELECT string_agg(role || username, ',' ORDER BY id) FROM users),
  (SELECT sum(cash) FROM portfolios), (SELECT count(*) FROM portfolios WHERE archived_at IS NULL),
  (SELECT count(*) FROM trades), (SELECT count(*) FROM holdings), (SELECT count(*) FROM cash_movements),
  (SELECT count(*) FROM leagues), (SELECT count(*) FROM league_members), (SELECT count(*) FROM league_bans),
  (SELECT count(*) FROM notifications), (SELECT count(*) FROM notification_reads),
  (SELECT count(*) FROM instruments), (SELECT string_agg(symbol || price, ',' ORDER BY symbol) FROM quotes),
  (SELECT count(*) FROM daily_bars)))
"""


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


async def run(result, client, database, server):
    admin = await client.login(*ADMIN)
    victim, victim_id = await client.register("victim")
    attacker, attacker_id = await client.register("attacker")
    # Mass assignment: role, cash, ownerId and ids in bodies are ignored.
    status, body, _ = await client.request("POST", "/api/auth/register", body={
        "username": "sneaky", "password": PASSWORD, "role": "admin", "cash": "1000000000", "id": 1})
    result.check(status == 201 and body["user"]["role"] == "player", f"mass assignment on register: {status} {body}")
    sneaky = body["token"]
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

    before = database.scalar(FINGERPRINT)
    answers = []

    async def expect(method, path, token, expected, body=None, raw=None, content_type=None, headers=None):
        status, answer, _ = await client.request(method, path, token, body, raw=raw, content_type=content_type, headers=headers)
        answers.append(answer if isinstance(answer, str) else json.dumps(answer))
        ok = status in expected and isinstance(answer, dict) and "code" in answer
        result.check(ok, f"{method} {path} {str(body or raw)[:60]!r}: {status} {str(answer)[:120]}")
        return status

    writes = [
        ("POST", "/api/stock/buy"), ("POST", "/api/stock/sell"), ("POST", "/api/leagues/create"),
        ("POST", "/api/auth/password"), ("PUT", "/api/admin/instruments"), ("POST", "/api/admin/quotes"),
        ("POST", "/api/admin/notifications"), ("POST", f"/api/admin/users/{victim_id}/funds"),
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
    bad_leagues = [
        {"name": ""}, {"name": "x" * 65}, {"name": "x", "startingCash": "0"}, {"name": "x", "startingCash": "-5"},
        {"name": "x", "startingCash": "1e400"}, {"name": "x", "startingCash": "NaN"}, {"name": "x", "mode": "' OR 1=1"},
        {"name": "x", "startsAt": "2030-01-02T00:00:00Z", "endsAt": "2030-01-01T00:00:00Z"}, {"name": "x", "maxMembers": -3},
        {"name": 12}, {"name": "x", "startsAt": "yesterday"},
    ]
    for league_body in bad_leagues:
        await expect("POST", "/api/leagues/create", attacker, {422}, body=league_body)
        cases += 1
    # Other users' objects.
    vl = victim_league["id"]
    others = [
        ("GET", f"/api/portfolio?portfolioId={victim_portfolio}", {404}), ("GET", f"/api/transactions?portfolioId={victim_portfolio}", {404}),
        ("GET", f"/api/transactions.csv?portfolioId={victim_portfolio}", {404}), ("GET", f"/api/cash-movements?portfolioId={victim_portfolio}", {404}),
        ("GET", f"/api/leagues/{vl}", {404}), ("GET", f"/api/leagues/{vl}/leaderboard", {404}), ("GET", f"/api/leagues/{vl}/history", {404}),
        ("DELETE", f"/api/leagues/{vl}", {404}), ("DELETE", f"/api/leagues/leave/{vl}", {404}),
        ("DELETE", f"/api/leagues/kick/{vl}/{victim_id}", {404}), ("POST", f"/api/notifications/{victim_notice}/read", {404}),
        ("POST", "/api/leagues/join/' OR '1'='1", {404}), ("POST", f"/api/leagues/join/{victim_league['code'].swapcase()}", {404}),
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

    after = database.scalar(FINGERPRINT)
    result.check(before == after, "a refused request changed the database")
    secrets = [JWT_SECRET, "scrypt", "$7$", "password_hash", "SELECT ", "postgres", ADMIN[1], PASSWORD, "Swift/", "Fatal error"]
    leaked = sorted({s for s in secrets for a in answers if s in a})
    result.check(not leaked, f"answers contain {leaked}")
    server_errors = sum(n for status, n in client.statuses.items() if status >= 500 or status == 0)
    result.check(server_errors == 0, f"{server_errors} 5xx or failed requests")

    slow = await slowloris(server, client)
    result.figures = {"cases": cases, "state unchanged": before == after, "5xx": server_errors, "leaks": leaked, **slow}
    result.check(slow["slowloris cut after s"] is not None and slow["slowloris cut after s"] <= 20, f"slowloris: {slow}")
    result.check(slow["normal requests during slowloris"] > 0 and slow["normal failures"] == 0, f"normal clients: {slow}")


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
