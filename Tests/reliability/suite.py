#!/usr/bin/env python3
"""The reliability suite: conservation under load, double-spend races, server crashes,
database restarts, hostile input and the contract check. Each scenario starts its own
PostgreSQL cluster and server processes on loopback and prints figures; the run ends
with a table (also written as JSON) and a non-zero exit when anything failed.

    Tests/reliability/suite.py [--profile full|ci] [--only NAME ...] [--binary PATH]
"""
import argparse
import asyncio
import json
import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(__file__))
from harness import (ADMIN, NEGATIVE, REPLAY, ROOT, WORTH_DRIFT, Client, Database, Server,  # noqa: E402
                     StreamWatcher, new_key)
import bots  # noqa: E402
import hosting  # noqa: E402
import hostile  # noqa: E402
import scenarios  # noqa: E402
import teams  # noqa: E402

PROFILES = {
    # CI's budget: every scenario, shorter load.
    "ci": {"load_seconds": 30, "users": 100, "clients": 64, "race_rounds": 100, "crashes": 5, "restarts": 3},
    "full": {"load_seconds": 60, "users": 120, "clients": 96, "race_rounds": 100, "crashes": 6, "restarts": 3},
}
SYMBOLS = {f"R{i}": f"{10 * i}.00" for i in range(1, 11)}
# FLIP's quote moves between these two: limit buys at the lower one rest, then fill.
FLIP_PRICES = ("10.50", "10.00")
PORT = int(os.environ.get("RELIABILITY_PORT", "18095"))


class Result:
    def __init__(self, name):
        self.name = name
        self.figures = {}
        self.failures = []

    def check(self, condition, message):
        if not condition:
            self.failures.append(message)

    @property
    def passed(self):
        return not self.failures


async def seed_market(client):
    admin = await client.login(*ADMIN)
    instruments = [{"symbol": s, "name": f"Reliable {s}"} for s in SYMBOLS] + [{"symbol": "RACE", "name": "Race Corp"},
                                                                                {"symbol": "FLIP", "name": "Flip Corp"}]
    status, body, _ = await client.request("PUT", "/api/admin/instruments", admin, instruments)
    assert status == 200, body
    quotes = [{"symbol": s, "price": p} for s, p in SYMBOLS.items()] + [{"symbol": "RACE", "price": "6000.00"},
                                                                         {"symbol": "FLIP", "price": FLIP_PRICES[0]}]
    status, body, _ = await client.request("POST", "/api/admin/quotes", admin, quotes)
    assert status == 200, body
    return admin


async def register_players(client, count, prefix):
    players = []
    for start in range(0, count, 20):
        batch = await asyncio.gather(*(client.register(f"{prefix}{i}") for i in range(start, min(count, start + 20))))
        players.extend(batch)
    return players


def order(symbol=None):
    """A random trade order: two thirds ordinary, one third sized to overdraw or oversell."""
    symbol = symbol or random.choice(list(SYMBOLS))
    side = random.choice(["buy", "buy", "sell"])
    if random.random() < 1 / 3:
        amount = random.choice([100_000, 1_000_000]) if side == "buy" else random.choice([10_000, 500_000])
    else:
        amount = random.randint(1, 5)
    return side, {"symbol": symbol, "amount": amount}


class Setup:
    def __init__(self, args, name):
        self.args = args
        self.name = name
        self.database = Database()
        self.log = os.path.join(args.logs, f"{name}.log")
        self.servers = []
        self.client = None
        self.clients = []
        self.settings = {}

    async def __aenter__(self):
        self.database.fresh()
        return self

    async def serve(self, connections=64, **settings):
        """A ready server on PORT, a client for it, and the market seeded: (server, client, admin token)."""
        server = Server(self.args.binary, self.database, PORT, self.log, **settings)
        self.settings = settings
        self.servers.append(server)
        server.start()
        await server.wait_ready()
        self.client = Client(server.base, connections=connections)
        admin = await seed_market(self.client)
        return server, self.client, admin

    async def serve_another(self, connections=16):
        """A second server process on the same database (PORT + 1), with the first one's
        settings, and a client for it: (server, client)."""
        server = Server(self.args.binary, self.database, PORT + 1, self.log, **self.settings)
        self.servers.append(server)
        server.start()
        await server.wait_ready()
        client = Client(server.base, connections=connections)
        self.clients.append(client)
        return server, client

    async def __aexit__(self, *exc):
        for client in [self.client] + self.clients:
            if client:
                await client.close()
        for server in self.servers:
            server.stop()
        self.database.destroy()


# 1. Conservation under load.

def capped_order(portfolio):
    """An order of R1 or R2 in the realistic league, often more than its cap of 10 shares a
    day: a market or marketable limit buy, or a sale of what may be held (else refused)."""
    symbol = random.choice(["R1", "R2"])
    side = random.choice(["buy", "buy", "sell"])
    body = {"symbol": symbol, "side": side, "quantity": random.randint(3, 15), "timeInForce": random.choice(["day", "gtc"]),
            "portfolioId": portfolio}
    if random.random() < 0.5:
        price = float(SYMBOLS[symbol]) * (1.05 if side == "buy" else 0.95)
        body.update({"type": "limit", "limitPrice": f"{price:.2f}"})
    return body


def resting_order():
    """A random limit order: a buy priced at or above the quote fills at once (at the quote),
    below it rests with its cash reserved; sells rest above the quote with their shares. One
    in ten has legs: a bracket buy whose take-profit and stop-loss then rest holding its
    shares once, or an OCO sale of shares held."""
    symbol = random.choice(list(SYMBOLS))
    price = float(SYMBOLS[symbol])
    if random.random() < 0.1:
        legs = {"takeProfit": {"limitPrice": f"{price * 1.2:.2f}"}, "stopLoss": {"stopPrice": f"{price * 0.8:.2f}"}}
        if random.random() < 0.7:
            return {"symbol": symbol, "side": "buy", "quantity": random.randint(1, 5), "type": "limit", "limitPrice": f"{price:.2f}",
                    "timeInForce": "gtc", "orderClass": "bracket", **legs}
        return {"symbol": symbol, "side": "sell", "quantity": random.randint(1, 5), "type": "limit", "timeInForce": "gtc",
                "orderClass": "oco", **legs}
    side = random.choice(["buy", "buy", "sell"])
    factor = random.choice([0.9, 0.95, 1.0, 1.05]) if side == "buy" else random.choice([1.05, 1.2])
    return {"symbol": symbol, "side": side, "quantity": random.randint(1, 5), "type": "limit",
            "limitPrice": f"{price * factor:.2f}", "timeInForce": random.choice(["day", "gtc"])}


async def conservation(args, profile):
    result = Result("conservation under load")
    async with Setup(args, "conservation") as setup:
        # A commission on every fill: conservation counts fees.
        server, client, admin = await setup.serve(connections=profile["clients"] + 16, TRADE_FEE="0.25", **bots.SETTINGS)
        players = await register_players(client, profile["users"], "player")
        leagues = []
        for index in range(5):
            status, league, _ = await client.request("POST", "/api/leagues/create", players[index][0], {"name": f"League {index}", "maxMembers": 40})
            leagues.append(league["code"])
        # An isolated league with short selling and a commission; its members also trade there.
        _, short_portfolios = await league_seats(client, players[5:25], {
            "name": "Shorts", "mode": "isolated", "startingCash": "20000",
            "rules": {"allowShortSelling": True, "shortMarginPercent": "150", "commissionPercent": "0.1"}})
        # Ten players also replay January 2024 in practice portfolios, back-dating trades.
        practice = await practice_portfolios(client, admin, players[25:35], imported=True)
        # Ten play a league in euros, paying a spread on every fill.
        euro_portfolios = await euro_league(client, admin, players[35:45])
        # Ten play a realistic league: fills at a quote with a spread and an impact, margin,
        # interest and borrow fees; mid-run every portfolio's close is taken twice at once.
        realistic_portfolios = await realistic_league(client, players[45:55])
        # Two borrow to buy MARG in a league with maintenance; mid-run MARG falls below it and
        # two closes find it so: the server's processes sell them out once (margin_call_flow).
        margin_portfolios = await margin_call_league(client, admin, players[55:57])
        margin_ids = [portfolio for _, portfolio in margin_portfolios]
        # Six more players each own a bot trading through /v2 on either of two server
        # processes while they trade their own portfolios; keys are revoked and bots deleted
        # mid-run (bots.BotPlay).
        other, second = await setup.serve_another()
        owners = [(token, user_id, f"botowner{i}") for i, (token, user_id) in enumerate(await register_players(client, 6, "botowner"))]
        play = bots.BotPlay(result, setup.database, [client, second], SYMBOLS)
        await play.prepare(owners)
        # Two of them seat a second bot in a league whose owner forbids bots mid-run, while a
        # member's own key trades there too (bots.PolicyFlip).
        policy = bots.PolicyFlip(result, setup.database, [client, second], admin, "R1")
        await policy.prepare(owners)
        # A teacher's league: a host without a seat freezes and unfreezes trading and resets
        # portfolios while eight pupils trade it on both processes (hosting.ClassPlay).
        host = await client.register("host")
        hosted = hosting.ClassPlay(result, setup.database, [server.base, other.base], admin, SYMBOLS)
        await hosted.prepare(host, await register_players(client, hosting.PUPILS, "pupil"))
        # A team league: a class roster in three teams trades each team's one portfolio on both
        # processes while the host moves a trader, makes one a viewer and erases one (teams.TeamPlay).
        teamed = teams.TeamPlay(result, setup.database, [server.base, other.base], admin, SYMBOLS)
        await teamed.prepare(await client.register("teamhost"))
        # Scenario leagues: a host advances a league replaying 2019 day by day while its members
        # trade it on both processes, and a blind league on a clock has days due at once that
        # both processes' chores race to advance (scenarios.ScenarioPlay).
        scenario = scenarios.ScenarioPlay(result, setup.database, [server.base, other.base], admin)
        await scenario.prepare(await client.register("scenariohost"), await register_players(client, 6, "scenario"),
                               await register_players(client, 3, "blind"))
        # Three players watch their orders and notices on the live stream throughout.
        watchers = [(user_id, StreamWatcher(server.base, token, {"orders": True, "notifications": True}).start())
                    for token, user_id in players[:3]]
        deadline = time.monotonic() + profile["load_seconds"]
        latencies = []
        counts = {"trades": 0, "refused": 0, "reads": 0, "joins": 0, "orders": 0, "refused orders": 0, "cancels": 0,
                  "capped orders": 0, "refused capped orders": 0,
                  "league trades": 0, "refused league trades": 0, "replacements": 0, "refused replacements": 0}

        async def player_loop():
            while time.monotonic() < deadline:
                token, _ = random.choice(players)
                roll = random.random()
                if roll < 0.15:
                    status, answer, _ = await client.request("POST", "/api/orders", token, resting_order())
                    counts["orders" if status == 201 else "refused orders"] += 1
                    result.check(status in (201, 422), f"order answered {status}: {answer}")
                elif roll < 0.25:
                    # Short selling: sales beyond the shares held go short, within the margin;
                    # or a fill in euros.
                    group = random.choice([short_portfolios, euro_portfolios, realistic_portfolios])
                    token, portfolio = random.choice(group)
                    if group is realistic_portfolios and random.random() < 0.4:
                        # An order beyond the realistic league's volume cap fills in parts, day by day.
                        status, answer, _ = await client.request("POST", "/api/orders", token, capped_order(portfolio))
                        counts["capped orders" if status == 201 else "refused capped orders"] += 1
                        result.check(status in (201, 422), f"capped order answered {status}: {answer}")
                        continue
                    side, body = order()
                    status, answer, _ = await client.request("POST", f"/api/stock/{side}", token, {**body, "portfolioId": portfolio})
                    counts["league trades" if status == 200 else "refused league trades"] += 1
                    result.check(status in (200, 422), f"league trade answered {status}: {answer}")
                elif roll < 0.28:
                    # Replacing one of the player's open orders (racing its fill, a cancel, another replacement).
                    status, page, _ = await client.request("GET", "/api/orders", token)
                    if status == 200 and page["items"]:
                        mine = random.choice(page["items"])
                        # (A stop-loss leg has no limit: its replacement is refused, as every leg's is.)
                        price = float(mine["limitPrice"] or mine["stopPrice"]) * random.choice([0.95, 1.0, 1.05])
                        change = {"quantity": random.randint(1, 8), "limitPrice": f"{price:.2f}"}
                        status, answer, _ = await client.request("PATCH", f"/api/orders/{mine['id']}", token, change)
                        counts["replacements" if status == 200 else "refused replacements"] += 1
                        result.check(status in (200, 409, 422), f"replacement answered {status}: {answer}")
                elif roll < 0.3:
                    status, answer, _ = await client.request("DELETE", "/api/orders", token)
                    counts["cancels"] += len(answer.get("canceled", [])) if isinstance(answer, dict) else 0
                    result.check(status == 200, f"cancel all answered {status}: {answer}")
                elif roll < 0.7:
                    side, body = order()
                    status, answer, elapsed = await client.request("POST", f"/api/stock/{side}", token, body)
                    latencies.append(elapsed)
                    counts["trades" if status == 200 else "refused"] += 1
                    result.check(status in (200, 422), f"trade answered {status}: {answer}")
                elif roll < 0.95:
                    status, _, _ = await client.request("GET", "/api/portfolio", token)
                    counts["reads"] += 1
                    result.check(status == 200, f"portfolio read answered {status}")
                else:
                    status, answer, _ = await client.request("POST", f"/api/leagues/join/{random.choice(leagues)}", token)
                    counts["joins"] += 1
                    result.check(status in (200, 409), f"join answered {status}: {answer}")

        snapshots = {"taken": 0, "violations": 0}

        async def snapshot_loop():
            while time.monotonic() < deadline:
                # HOST and KEYS move meanwhile; MARG falls (the margin call's portfolios are left out).
                drift = await setup.database.scalar_async(worth_except(bots.keys_at_cost(hosting.WORTH_DRIFT_HOST_AT_COST), margin_ids))
                negative = await setup.database.scalar_async(NEGATIVE)
                if drift is not None and negative is not None:
                    snapshots["taken"] += 1
                    snapshots["violations"] += int(drift) + int(negative)
                await asyncio.sleep(1)

        async def dividend_loop():
            # Dividends dated today on two traded symbols, paid (or, by shorts, paid out) under load.
            for symbol in ("R4", "R5"):
                await asyncio.sleep(profile["load_seconds"] / 3)
                body = {"symbol": symbol, "kind": "dividend", "exDate": time.strftime("%Y-%m-%d", time.gmtime()), "amount": "0.13"}
                status, answer, _ = await client.request("POST", "/api/admin/corporate-actions", admin, body)
                result.check(status == 201, f"dividend answered {status}: {answer}")

        closes = {"closes taken": 0}

        async def close_loop():
            # A close of every realistic portfolio, taken by two connections at once mid-run:
            # each portfolio's charges and record once.
            await asyncio.sleep(profile["load_seconds"] / 2)
            ids = ",".join(str(portfolio) for _, portfolio in realistic_portfolios)
            take = f"SELECT count(*) FROM portfolios p, margin_close(p.id, current_date, now()) m WHERE p.id IN ({ids})"
            taken = await asyncio.gather(setup.database.scalar_async(take), setup.database.scalar_async(take))
            closes["closes taken"] = sum(int(n or 0) for n in taken)

        backdated = {"back-dated trades": 0, "back-dated refused": 0}
        margin_calls = {}
        await asyncio.gather(snapshot_loop(), dividend_loop(), close_loop(),
                             margin_call_flow(client, admin, setup.database, margin_ids, profile["load_seconds"] / 3, margin_calls),
                             *(player_loop() for _ in range(profile["clients"])),
                             *(backdated_flow(result, client, practice, deadline, backdated) for _ in range(4)),
                             *play.tasks(deadline, profile["load_seconds"]), *hosted.tasks(deadline, profile["load_seconds"]),
                             *teamed.tasks(deadline, profile["load_seconds"]),
                             *policy.tasks(deadline, profile["load_seconds"]),
                             *scenario.tasks(deadline, profile["load_seconds"]))
        await asyncio.sleep(2)
        await check_stream(result, setup.database, watchers)
        result.figures.update(await play.check())
        result.figures.update(await policy.check())
        result.figures.update(await hosted.check())
        result.figures.update(await teamed.check())
        result.figures.update(await scenario.check())
        figures = await check_figures(result, client, setup.database,
                                      [(token, None) for token, _ in random.sample(players, 10)] + random.sample(practice, 5)
                                      + random.sample(euro_portfolios, 3) + random.sample(realistic_portfolios, 3) + scenario.sample())
        once = int(setup.database.scalar(DIVIDENDS_ONCE))
        result.figures.update({**backdated, "practice dividends not once": once})
        result.check(backdated["back-dated trades"] > 0, "no back-dated trade was made")
        result.check(once == 0, f"{once} practice portfolios got an R2 dividend on the wrong shares")
        for _, watcher in watchers:
            await watcher.stop()
        replay = int(setup.database.scalar(REPLAY))
        final = int(setup.database.scalar(worth_except(WORTH_DRIFT, margin_ids))) + int(setup.database.scalar(NEGATIVE))
        server_errors = sum(n for c in (client, second) for status, n in c.statuses.items() if status >= 500 or status == 0)
        latencies.sort()
        result.figures.update({
            "users": profile["users"], "clients": profile["clients"], "seconds": profile["load_seconds"],
            "trades": counts["trades"], "refused trades": counts["refused"], "reads": counts["reads"], "joins": counts["joins"],
            "orders placed": counts["orders"], "orders refused": counts["refused orders"], "orders cancelled": counts["cancels"],
            "orders replaced": counts["replacements"], "replacements refused": counts["refused replacements"],
            "orders open at the end": int(setup.database.scalar("SELECT count(*) FROM orders WHERE status = 'new'")),
            "league trades": counts["league trades"], "refused league trades": counts["refused league trades"],
            "short positions at the end": int(setup.database.scalar("SELECT count(*) FROM holdings WHERE quantity < 0")),
            "fills in euros": int(setup.database.scalar("SELECT count(*) FROM trades WHERE fx_rate IS NOT NULL")),
            "realistic fills": int(setup.database.scalar("SELECT count(*) FROM trades WHERE spread > 0 OR impact > 0")),
            "realistic fills with impact": int(setup.database.scalar("SELECT count(*) FROM trades WHERE impact > 0")),
            "realistic portfolios borrowing": int(setup.database.scalar("SELECT count(*) FROM portfolios WHERE cash < 0")),
            "capped orders": counts["capped orders"], "refused capped orders": counts["refused capped orders"],
            "orders with legs (by class and status)": {f"{c} {st}": int(n) for c, st, n in setup.database.query(
                "SELECT order_class, status, count(*) FROM orders WHERE order_class <> 'simple' GROUP BY 1, 2 ORDER BY 1, 2")},
            "orders filled in part": int(setup.database.scalar("SELECT count(*) FROM orders WHERE filled_quantity > 0")),
            "volume caps reached": int(setup.database.scalar("SELECT count(*) FROM volume_fills WHERE quantity = cap")),
            "interest and borrow fees": int(setup.database.scalar(
                "SELECT count(*) FROM cash_movements WHERE kind IN ('interest', 'borrow_fee')")),
            **closes,
            "dividends applied": int(setup.database.scalar("SELECT count(*) FROM corporate_action_applications")),
            "snapshots": snapshots["taken"], "snapshot violations": snapshots["violations"],
            "replay mismatches": replay, "final violations": final, "5xx or failed": server_errors, **figures,
            "trade p50 ms": round(latencies[len(latencies) // 2] * 1000, 1) if latencies else None,
            "trade p99 ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 1) if latencies else None,
        })
        result.check(result.figures["fills in euros"] > 0, "no fill in euros")
        result.check(result.figures["realistic fills"] > 0, "no fill at a realistic league's quote")
        result.check(result.figures["orders filled in part"] > 0, "no order filled in part under the volume cap")
        result.figures.update(await check_margin_calls(result, setup.database, margin_portfolios, margin_calls))
        result.check(closes["closes taken"] == len(realistic_portfolios),
                     f"{closes['closes taken']} closes taken twice at once for {len(realistic_portfolios)} portfolios")
        result.check(snapshots["taken"] >= profile["load_seconds"] // 2, "too few snapshots")
        result.check(snapshots["violations"] == 0, f"{snapshots['violations']} violations in snapshots")
        result.check(replay == 0, f"{replay} portfolios or holdings differ from their history")
        result.check(final == 0, f"{final} final violations")
        result.check(server_errors == 0, f"{server_errors} 5xx or failed requests")
        result.check(not client.problems and not second.problems, f"non-problem errors: {(client.problems + second.problems)[:3]}")
    return result


# Reference rates for a league in euros: 1.10 dollars a euro.
EURO_RATES = "Date,USD,GBP\n2024-01-02,1.10,0.86\n"


async def league_seats(client, players, body):
    """An isolated league created by the first of `players` with `body`, which the others
    join: the league, and each player's (token, league portfolio id)."""
    owner = players[0][0]
    status, league, _ = await client.request("POST", "/api/leagues/create", owner, body)
    assert status == 201, league
    portfolios = []
    for token, _ in players:
        if token != owner:
            await client.request("POST", f"/api/leagues/join/{league['code']}", token)
        mine = (await client.request("GET", "/api/portfolios", token))[1]
        portfolios.append((token, next(p["id"] for p in mine if p["leagueId"] == league["id"])))
    return league, portfolios


def worth_except(query, portfolio_ids):
    """A worth-drift query leaving out `portfolio_ids` (whose holdings were bought at
    another price than the one they are valued at)."""
    if not portfolio_ids:
        return query
    changed = query.replace("WHERE p.kind <> 'practice'", f"WHERE p.kind <> 'practice' AND p.id NOT IN ({','.join(map(str, portfolio_ids))})")
    assert changed != query
    return changed


async def margin_call_league(client, admin, players):
    """A league that lends (50 %) with a 25 % maintenance and 8 % debit interest, whose
    members each borrow 5,000 to buy 1,500 MARG at 10.00."""
    status, body, _ = await client.request("PUT", "/api/admin/instruments", admin, [{"symbol": "MARG", "name": "Margin Corp"}])
    assert status == 200, body
    status, body, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "MARG", "price": "10.00"}])
    assert status == 200, body
    _, portfolios = await league_seats(client, players, {
        "name": "Margin call", "mode": "isolated", "startingCash": "10000",
        "rules": {"marginPercent": "50", "maintenancePercent": "25", "debitRatePercent": "8"}})
    for token, portfolio in portfolios:
        status, bought, _ = await client.request("POST", "/api/stock/buy", token, {"symbol": "MARG", "amount": 1500, "portfolioId": portfolio})
        assert status == 200 and bought["cash"].startswith("-5000."), bought
    return portfolios


async def margin_call_flow(client, admin, database, portfolio_ids, after, figures):
    """After `after` seconds MARG falls to 4.00: equity 1,000 against 25 % of 6,000. Two
    closes find it so — the market day before the server's last close, then that close
    (`MarginCloses.lastClose`: 16:00 UTC under the `always` schedule), each taken by two
    connections at once through `margin_close` (the server's own chore never takes them: the
    league began after that close) — so the servers' chores sell the positions, once."""
    await asyncio.sleep(after)
    status, body, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "MARG", "price": "4.00"}])
    assert status == 200, body
    now = datetime.now(timezone.utc)
    last = now.date() if now.hour >= 16 else now.date() - timedelta(days=1)
    taken = 0
    for day in (last - timedelta(days=1), last):
        take = f"SELECT count(*) FROM unnest(ARRAY[{','.join(map(str, portfolio_ids))}]::int8[]) p, margin_close(p, '{day}', '{day}T16:00:00Z') m"
        taken += sum(int(n or 0) for n in await asyncio.gather(database.scalar_async(take), database.scalar_async(take)))
    figures["margin closes staged"] = taken
    figures["staged at"] = time.monotonic()


async def check_margin_calls(result, database, portfolios, staged):
    """Each margin-call portfolio was called once and sold out once, by whichever process
    came first, within 20 s of its second close: no MARG left, one forced sale, one notice."""
    ids = ",".join(str(portfolio) for _, portfolio in portfolios)
    query = f"""
        SELECT (SELECT count(*) FROM holdings WHERE portfolio_id IN ({ids}) AND quantity <> 0),
               (SELECT count(*) FROM trades WHERE portfolio_id IN ({ids}) AND source = 'liquidation'),
               (SELECT count(*) FROM notifications n JOIN portfolios p ON p.user_id = n.user_id
                WHERE p.id IN ({ids}) AND n.kind = 'liquidated'),
               (SELECT count(*) FROM notifications n JOIN portfolios p ON p.user_id = n.user_id
                WHERE p.id IN ({ids}) AND n.kind = 'margin_call')"""
    for _ in range(40):
        held, sales, sold_notices, calls = (int(n) for n in database.query(query)[0])
        if held == 0 and sold_notices == len(portfolios):
            break
        await asyncio.sleep(0.5)
    figures = {"margin closes staged": staged.get("margin closes staged"), "positions left after the forced sales": held,
               "forced sales": sales, "'liquidated' notices": sold_notices, "'margin_call' notices": calls}
    result.check(staged.get("margin closes staged") == 2 * len(portfolios), f"margin closes: {figures}")
    result.check(held == 0 and sales == len(portfolios) and sold_notices == len(portfolios) and calls == len(portfolios),
                 f"each margin call sold out once and told once: {figures}")
    return figures


async def euro_league(client, admin, players):
    """An isolated league in euros with a 0.5 % spread; the members' league portfolios."""
    status, body, _ = await client.request("POST", "/api/admin/fx", admin, raw=EURO_RATES.encode(), content_type="text/csv")
    assert status == 200, body
    league, portfolios = await league_seats(client, players, {
        "name": "Euros", "mode": "isolated", "startingCash": "15000", "currency": "EUR", "rules": {"fxSpreadPercent": "0.5"}})
    assert league["currency"] == "EUR", league
    return portfolios


async def realistic_league(client, players):
    """An isolated league with realistic fills and margin; the members' league portfolios."""
    league, portfolios = await league_seats(client, players, {
        "name": "Realistic", "mode": "isolated", "startingCash": "10000", "rules": {
            "fillPrice": "quote", "spreadBps": "20", "impactCoefficient": "0.1", "minPrice": "15",
            "allowShortSelling": True, "minShortPrice": "25", "marginPercent": "50", "maintenancePercent": "25",
            "debitRatePercent": "8", "creditRatePercent": "2", "borrowFeePercent": "10",
            # R1 and R2 traded 100 shares on their last day: 10 a day each for a portfolio.
            "volumeCapPercent": "10"}})
    assert league["rules"]["marginPercent"] == "50.00", league
    return portfolios


async def check_figures(result, client, database, portfolios):
    """After the load, for each (token, portfolio id or None for the personal one): the value history ends at the net worth the portfolio
    shows, and net worth = paid in + realized + unrealized gain + dividends, by every
    cost method (fees are in the gains)."""
    today = time.strftime("%Y-%m-%d", time.gmtime())
    mismatches = 0
    for token, portfolio_id in portfolios:
        query = f"?portfolioId={portfolio_id}" if portfolio_id else ""
        portfolio = (await client.request("GET", f"/api/portfolio{query}", token))[1]
        history = (await client.request("GET", f"/api/portfolios/{portfolio['id']}/history?from={today}", token))[1]
        paid_in = float(database.scalar(f"SELECT paid_in FROM portfolios WHERE id = {int(portfolio['id'])}"))
        worth = float(portfolio["netWorth"])
        if not history["points"] or abs(float(history["points"][-1]["netWorth"]) - worth) > 0.005:
            mismatches += 1
        for method in ("average", "fifo", "lifo"):
            status, pnl, elapsed = await client.request("GET", f"/api/portfolios/{portfolio['id']}/pnl?method={method}", token)
            if status != 200:
                mismatches += 1
                result.check(False, f"portfolio {portfolio['id']}'s {method} P&L answered {status} after {elapsed:.1f} s: {str(pnl)[:120]}")
                continue
            explained = paid_in + float(pnl["realized"]) + float(pnl["unrealized"]) + float(pnl["dividends"]) + float(pnl["interest"])
            if abs(explained - worth) > 0.05:
                mismatches += 1
                result.check(False, f"{method}: paid in {paid_in} + gains {pnl} != net worth {worth}")
    result.check(mismatches == 0, f"{mismatches} portfolios whose figures disagree with their net worth")
    return {"figures checked": len(portfolios), "figures mismatches": mismatches}


def stream_view(watcher):
    """What a stream client knows of its orders, replaying its messages in order: an
    order event sets the order's status; a snapshot lists the open orders, so an order
    the client held open that a snapshot leaves out has closed while the socket was down
    (a client reads it over REST), and is marked "closed"."""
    view, resolved = {}, 0
    for event in watcher.events:
        if event.get("type") == "order":
            view[str(event["data"]["id"])] = event["data"]["status"]
        elif event.get("type") == "snapshot" and event["data"].get("orders") is not None:
            open_now = {str(order["id"]) for order in event["data"]["orders"]}
            for order_id, status in view.items():
                if status == "new" and order_id not in open_now:
                    view[order_id] = "closed"
                    resolved += 1
            view.update({order_id: "new" for order_id in open_now})
    return view, resolved


async def check_stream(result, database, watchers, settle=10.0):
    """Each watcher's socket ends up knowing each of its user's orders as it is, from
    events or (for changes made while it was reconnecting) snapshots: no order it believes
    open is closed, every open order is known open, no order is shown with another final
    status; and it received nothing of anyone else's, orders or notices."""
    deadline = time.monotonic() + settle
    while True:
        seen = stale = foreign = resolved = 0
        for user_id, watcher in watchers:
            mine = {str(row[0]): row[1] for row in database.query(f"SELECT id, status FROM orders WHERE user_id = {int(user_id)}")}
            view, healed = stream_view(watcher)
            resolved += healed
            seen += len(watcher.of_type("order"))
            # An order placed and closed while the socket was reconnecting was never shown
            # (its history is in REST); any order shown must be shown as it is.
            stale += sum(1 for order_id, status in mine.items()
                         if (status == "new") != (view.get(order_id) == "new")
                         or (status != "new" and view.get(order_id) not in (None, status, "closed")))
            foreign += sum(1 for order_id in view if order_id not in mine)
            notices = [str(int(notice["id"])) for notice in watcher.of_type("notification")]
            if notices:
                foreign += int(database.scalar(
                    f"SELECT count(*) FROM notifications WHERE id IN ({','.join(notices)}) AND user_id IS DISTINCT FROM {int(user_id)} "
                    "AND user_id IS NOT NULL"))
        if stale == 0 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    result.figures.update({"stream order events": seen, "stream orders closed while reconnecting": resolved,
                           "stream stale orders": stale, "stream events of others": foreign})
    result.check(seen > 0, "the watched players' sockets received no order event")
    result.check(stale == 0, f"{stale} orders are not known as they are on their owner's socket")
    result.check(foreign == 0, f"{foreign} events reached a socket of another user")


# 2. Double-spend races.

async def races(args, profile):
    result = Result("double-spend races")
    async with Setup(args, "races") as setup:
        server, client, _ = await setup.serve(connections=128)
        bad_buy_rounds = bad_sell_rounds = 0
        for round_number in range(profile["race_rounds"]):
            token, _ = await client.register(f"racer{round_number}")
            # 10,000 cash covers one share at 6,000: exactly one of 100 buys may succeed.
            buys = await asyncio.gather(*(client.request("POST", "/api/stock/buy", token, {"symbol": "RACE", "amount": 1}) for _ in range(100)))
            ok = sum(1 for status, _, _ in buys if status == 200)
            refused = sum(1 for status, body, _ in buys if status == 422 and body.get("code") == "insufficient_funds")
            if ok != 1 or refused != 99:
                bad_buy_rounds += 1
            sells = await asyncio.gather(*(client.request("POST", "/api/stock/sell", token, {"symbol": "RACE", "amount": 1}) for _ in range(100)))
            ok = sum(1 for status, _, _ in sells if status == 200)
            refused = sum(1 for status, body, _ in sells if status == 422 and body.get("code") == "insufficient_shares")
            if ok != 1 or refused != 99:
                bad_sell_rounds += 1
        replay = int(setup.database.scalar(REPLAY))
        trades = int(setup.database.scalar("SELECT count(*) FROM trades"))
        result.figures = {"rounds": profile["race_rounds"], "requests": profile["race_rounds"] * 200,
                          "buy rounds not exactly one": bad_buy_rounds, "sell rounds not exactly one": bad_sell_rounds,
                          "trades stored": trades, "replay mismatches": replay,
                          "5xx or failed": sum(n for s, n in client.statuses.items() if s >= 500 or s == 0)}
        result.check(bad_buy_rounds == 0, f"{bad_buy_rounds} buy rounds without exactly one success")
        result.check(bad_sell_rounds == 0, f"{bad_sell_rounds} sell rounds without exactly one success")
        result.check(trades == 2 * profile["race_rounds"], f"{trades} trades stored, expected {2 * profile['race_rounds']}")
        result.check(replay == 0, f"{replay} replay mismatches")
        result.check(result.figures["5xx or failed"] == 0, "5xx or failed requests")
    return result


# 3 and 4: trading with retried Idempotency-Keys while something breaks.

class Ledger:
    """Acknowledged trades by key, and the keys still being retried."""

    def __init__(self):
        self.acknowledged = {}
        self.unfinished = 0
        self.attempts = 0
        self.outage_answers = []  # (status, seconds, is problem+json) of requests that failed


async def keyed_trader(client, players, ledger, deadline, outage, portfolios=None, give_up_after=40, answered_at=None, failed=None):
    """Trades until `deadline`; each order keeps its key across retries until answered.
    `portfolios`: (token, portfolio id) pairs to trade in instead of personal portfolios.
    `answered_at` (a list) gets the moment of every answer, `failed` (a dict) the count of
    every other status, when given."""
    while time.monotonic() < deadline:
        token, portfolio = random.choice(portfolios or players)
        side, body = order()
        if portfolios:
            body["portfolioId"] = portfolio
        key = new_key()
        answered = False
        give_up = time.monotonic() + give_up_after
        while not answered and time.monotonic() < give_up:
            ledger.attempts += 1
            status, answer, elapsed = await client.request("POST", f"/api/stock/{side}", token, body, headers={"Idempotency-Key": key}, timeout=10)
            if status in (200, 422):
                if status == 200:
                    ledger.acknowledged[key] = answer["trade"]["id"]
                if answered_at is not None:
                    answered_at.append(time.monotonic())
                answered = True
            else:
                if failed is not None:
                    failed[status] = failed.get(status, 0) + 1
                if outage():
                    ledger.outage_answers.append((status, elapsed, isinstance(answer, dict) and "code" in answer))
                await asyncio.sleep(0.2)
        if not answered:
            ledger.unfinished += 1


def check_ledger(result, database, ledger, worth_exempt=()):
    """`worth_exempt`: users whose trades at moving prices change their net worth (the
    history and every other guard still hold for them)."""
    ids = list(ledger.acknowledged.values())
    missing = 0
    if ids:
        present = int(database.scalar(f"SELECT count(*) FROM trades WHERE id IN ({','.join(map(str, ids))})"))
        missing = len(ids) - present
    # Market trades are made under a key; resting orders fill without one (their trade is
    # the order's, and an order fills once: orders.trade_id is unique).
    unkeyed = int(database.scalar("""
        SELECT count(*) FROM trades t
        WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id)
          AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.trade_id = t.id)"""))
    replay = int(database.scalar(REPLAY))
    worth = WORTH_DRIFT if not worth_exempt else WORTH_DRIFT.replace(
        "WHERE p.kind <> 'practice'", f"WHERE p.kind <> 'practice' AND p.user_id NOT IN ({','.join(map(str, worth_exempt))})")
    drift = int(database.scalar(worth)) + int(database.scalar(NEGATIVE))
    result.figures.update({"acknowledged trades": len(ids), "missing": missing, "trades without their key": unkeyed,
                           "unanswered orders": ledger.unfinished, "replay mismatches": replay, "invariant violations": drift})
    result.check(missing == 0, f"{missing} acknowledged trades missing")
    result.check(unkeyed == 0, f"{unkeyed} trades not tied to one key (traded twice?)")
    result.check(len(set(ids)) == len(ids), "two keys acknowledged the same trade")
    result.check(replay == 0 and drift == 0, f"ledger broken: replay {replay}, invariants {drift}")


async def resting_flow(client, admin, players, deadline, figures, bracketeers=()):
    """Limit buys of FLIP at its lower price while an admin moves its quote back and forth,
    so resting orders fill while the server is killed; ends with FLIP at the lower price.
    `bracketeers` place brackets of FLIP meanwhile, bought and sold at both prices."""

    async def mover():
        index = 0
        while time.monotonic() < deadline:
            index += 1
            await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "FLIP", "price": FLIP_PRICES[index % 2]}], timeout=10)
            await asyncio.sleep(0.3)

    async def placer():
        while time.monotonic() < deadline:
            token, _ = random.choice(players)
            order = {"symbol": "FLIP", "side": "buy", "quantity": random.randint(1, 3), "type": "limit",
                     "limitPrice": FLIP_PRICES[1], "timeInForce": "gtc"}
            status, _, _ = await client.request("POST", "/api/orders", token, order, timeout=10)
            figures["resting orders placed"] += status == 201
            await asyncio.sleep(0.05)

    async def replacer():
        # Open FLIP orders replaced with another quantity while fills and kills happen.
        while time.monotonic() < deadline:
            token, _ = random.choice(players)
            status, page, _ = await client.request("GET", "/api/orders", token, timeout=10)
            if status == 200 and page["items"]:
                order = random.choice(page["items"])
                status, _, _ = await client.request("PATCH", f"/api/orders/{order['id']}", token,
                                                    {"quantity": random.randint(1, 3)}, timeout=10)
                figures["resting orders replaced"] += status == 200
            await asyncio.sleep(0.1)

    async def bracketer():
        # Brackets: a market buy of FLIP whose take-profit (10.40) fills at the higher price
        # and whose stop-loss (10.20) fills at the lower one, each cancelling the other, on
        # whichever process's matcher gets there while processes are killed.
        while bracketeers and time.monotonic() < deadline:
            token, _ = random.choice(bracketeers)
            order = {"symbol": "FLIP", "side": "buy", "quantity": random.randint(1, 2), "timeInForce": "gtc", "orderClass": "bracket",
                     "takeProfit": {"limitPrice": "10.40"}, "stopLoss": {"stopPrice": "10.20"}}
            status, _, _ = await client.request("POST", "/api/orders", token, order, timeout=10)
            figures["brackets placed"] += status == 201
            await asyncio.sleep(0.2)

    await asyncio.gather(mover(), placer(), placer(), replacer(), bracketer())
    for _ in range(30):
        status, _, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "FLIP", "price": FLIP_PRICES[1]}], timeout=10)
        if status == 200:
            break
        await asyncio.sleep(1)


# Practice portfolios replay January 2024: R1 closes 10 and splits 2-for-1 on the 5th
# (then closes 5), R2 closes 20 and pays 0.40 a share on the 8th.
BACKDATED_DAYS = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08", "2024-01-09", "2024-01-10"]
BACKDATED_HISTORY = "symbol,date,open,high,low,close,volume,dividend,split\n" + "".join(
    f"R1,{day},{c},{c},{c},{c},100,0,{2 if day == '2024-01-05' else 1}\nR2,{day},20,20,20,20,100,{'0.4' if day == '2024-01-08' else 0},1\n"
    for day in BACKDATED_DAYS for c in [10 if day < "2024-01-05" else 5])
BACKDATED_IMPORT = "date,symbol,side,quantity,price,fee\n2024-01-02,R1,buy,10,10,1\n2024-01-03,R2,buy,5,20.5,0.5\n"

# Actions due that the processor has not finished (history loaded with past actions is
# caught up by the back-dated fills instead).
PENDING_ACTIONS = """
SELECT count(*) FROM corporate_actions WHERE applied_at IS NULL AND ex_date >= (created_at AT TIME ZONE 'UTC')::date
"""

# Every dividend of R2 reached each practice portfolio exactly on the shares it held the
# day before (back-dated fills caught up once each, or the processor's whole position).
DIVIDENDS_ONCE = """
SELECT count(*) FROM corporate_actions a CROSS JOIN portfolios p
WHERE p.kind = 'practice' AND a.kind = 'dividend' AND a.symbol = 'R2'
  AND coalesce((SELECT sum(x.quantity_before) FROM corporate_action_applications x WHERE x.action_id = a.id AND x.portfolio_id = p.id), 0)
   <> coalesce((SELECT sum(CASE t.side WHEN 'buy' THEN t.quantity ELSE -t.quantity END) FROM trades t
                WHERE t.portfolio_id = p.id AND t.symbol = a.symbol AND (t.created_at AT TIME ZONE 'UTC')::date < a.ex_date), 0)
"""


async def practice_portfolios(client, admin, players, imported):
    """A practice portfolio for each player, started 2024-01-02 (after loading January
    2024's closes); `imported`: its first trades come from a CSV import."""
    status, body, _ = await client.request("POST", "/api/admin/prices", admin, raw=BACKDATED_HISTORY.encode(), content_type="text/csv")
    assert status == 200, body
    practice = []
    for token, _ in players:
        status, created, _ = await client.request("POST", "/api/portfolios", token,
                                                  {"name": "Replay 2024", "startingCash": "5000", "startedAt": BACKDATED_DAYS[0]})
        assert status == 201, created
        if imported:
            status, answer, _ = await client.request("POST", f"/api/portfolios/{created['id']}/import", token,
                                                     raw=BACKDATED_IMPORT.encode(), content_type="text/csv")
            assert status == 200 and answer["imported"] == 2, answer
        practice.append((token, created["id"]))
    return practice


async def backdated_flow(result, client, practice, deadline, figures, timeout=None):
    """Back-dated market orders (keyed by clientOrderId) in practice portfolios, each on a
    January 2024 day not before the portfolio's latest: refused only for cash, shares or
    date order (another coroutine moved the portfolio on)."""
    latest = {portfolio: 1 for _, portfolio in practice}
    while time.monotonic() < deadline:
        token, portfolio = random.choice(practice)
        index = random.randint(latest[portfolio], len(BACKDATED_DAYS) - 1)
        body = {"symbol": random.choice(["R1", "R2"]), "side": random.choice(["buy", "buy", "sell"]), "quantity": random.randint(1, 8),
                "portfolioId": portfolio, "at": BACKDATED_DAYS[index], "clientOrderId": new_key()}
        status, answer, _ = await client.request("POST", "/api/orders", token, body, **({"timeout": timeout} if timeout else {}))
        if status == 201:
            latest[portfolio] = max(latest[portfolio], index)
            figures["back-dated trades"] += 1
        elif status == 422:
            figures["back-dated refused"] += 1
            result.check(answer.get("code") in ("insufficient_funds", "insufficient_shares", "out_of_order"), f"back-dated: {answer}")
        await asyncio.sleep(0.02)


async def orders_left_open(database, seconds=15):
    """Open FLIP orders once the sweeps had `seconds` to fill them at the lower price."""
    left = None
    for _ in range(seconds * 2):
        left = int(database.scalar("SELECT count(*) FROM orders WHERE symbol = 'FLIP' AND status = 'new'"))
        if left == 0:
            break
        await asyncio.sleep(0.5)
    return left


async def crashes(args, profile):
    result = Result("server crash (kill -9)")
    async with Setup(args, "crashes") as setup:
        server, client, admin = await setup.serve(connections=80, ORDER_SWEEP_SECONDS=1, **bots.SETTINGS)
        players = await register_players(client, 50, "crash")
        # Four more players' bots trade through /v2, each order retried under its client_order_id.
        owners = [(token, user_id, f"crashowner{i}") for i, (token, user_id) in enumerate(await register_players(client, 4, "crashowner"))]
        crash_bots = await bots.crash_bots(result, client, owners)
        bot_flow = {"bot orders retried": 0, "bot orders acknowledged after a retry": 0, "bot orders unanswered": 0, "bot attempts failed": {}}
        # A player watches FLIP and their orders; each kill drops the socket and it connects again.
        watcher = StreamWatcher(server.base, players[0][0], {"orders": True, "quotes": ["FLIP"]}).start()
        ledger = Ledger()
        # Scenario leagues advanced by their host and by their clocks while the server processes
        # are killed: a second process runs the same chores and is killed at moments of its own
        # (scenarios.ScenarioCrash).
        other, second = await setup.serve_another()
        scenario = scenarios.ScenarioCrash(result, setup.database, [client, second], admin, ledger)
        await scenario.prepare(await client.register("crashhost"), await register_players(client, 5, "crashleague"),
                               await register_players(client, len(scenarios.ScenarioCrash.CLOCKS), "crashclock"))
        seconds = 8 * profile["crashes"] + 5
        deadline = time.monotonic() + seconds
        recoveries = []

        async def killer():
            for _ in range(profile["crashes"]):
                await asyncio.sleep(random.uniform(4, 6))
                server.kill9()
                server.start()
                recoveries.append(await server.wait_ready(timeout=30))

        async def dividends():
            # Dividends dated today while the server is killed: each holder paid once.
            for symbol in ("R1", "R2", "R3"):
                await asyncio.sleep(random.uniform(3, 9))
                body = {"symbol": symbol, "kind": "dividend", "exDate": time.strftime("%Y-%m-%d", time.gmtime()), "amount": "0.37"}
                for _ in range(30):
                    status, _, _ = await client.request("POST", "/api/admin/corporate-actions", admin, body, timeout=10)
                    if status in (201, 409):
                        break
                    await asyncio.sleep(0.5)

        # Five players back-date trades in practice portfolios while the server is killed.
        practice = await practice_portfolios(client, admin, players[40:45], imported=False)
        # Five trade a league in euros under keys, their dividends paid at the rate.
        euros = await euro_league(client, admin, players[45:50])
        # Five more place brackets of FLIP, whose legs fill at either price (their net worth moves with it).
        bracketeers = await register_players(client, 5, "bracketeer")
        flow = {"resting orders placed": 0, "resting orders replaced": 0, "brackets placed": 0, "back-dated trades": 0, "back-dated refused": 0}
        await asyncio.gather(killer(), dividends(), resting_flow(client, admin, players, deadline, flow, bracketeers),
                             backdated_flow(result, client, practice, deadline, flow, timeout=10),
                             *(keyed_trader(client, players, ledger, deadline, lambda: False) for _ in range(28)),
                             *(keyed_trader(client, players, ledger, deadline, lambda: False, portfolios=euros) for _ in range(4)),
                             *(bots.keyed_bot_trader(result, client, bot, deadline, SYMBOLS, bot_flow) for bot in crash_bots for _ in range(2)),
                             *scenario.tasks(deadline, seconds, other))
        result.figures.update(await scenario.check())
        left = await orders_left_open(setup.database)
        await bots.check_crash_bots(result, setup.database, crash_bots, bot_flow)
        result.figures.update(bot_flow)
        for _ in range(30):
            pending = int(setup.database.scalar(PENDING_ACTIONS))
            if pending == 0:
                break
            await asyncio.sleep(0.5)
        paid = int(setup.database.scalar("SELECT count(*) FROM corporate_action_applications"))
        euro_paid = int(setup.database.scalar(
            "SELECT count(*) FROM corporate_action_applications x JOIN portfolios p ON p.id = x.portfolio_id WHERE p.cash_currency = 'EUR'"))
        euro_fills = int(setup.database.scalar("SELECT count(*) FROM trades WHERE fx_rate IS NOT NULL"))
        wrong = int(setup.database.scalar("""
            SELECT (SELECT count(*) FROM corporate_action_applications x JOIN corporate_actions a ON a.id = x.action_id
                    JOIN portfolios p ON p.id = x.portfolio_id
                    WHERE x.cash <> CASE p.cash_currency WHEN 'USD' THEN x.quantity_before * a.amount
                                         ELSE round(x.quantity_before * a.amount * fx_usd_to(p.cash_currency), 2) END)
                 + (SELECT count(*) FROM (SELECT portfolio_id, note FROM cash_movements c WHERE kind = 'dividend'
                                          AND NOT EXISTS (SELECT 1 FROM portfolios p WHERE p.id = c.portfolio_id AND p.kind = 'practice')
                                          GROUP BY 1, 2 HAVING count(*) > 1) twice)
                 + (SELECT count(*) FROM cash_movements WHERE kind = 'dividend')
                 - (SELECT count(*) FROM corporate_action_applications WHERE cash <> 0)"""))
        once = int(setup.database.scalar(DIVIDENDS_ONCE))
        result.figures.update({"dividends paid": paid, "dividend actions pending": pending, "dividends wrong or twice": wrong,
                               "practice dividends not once": once, "fills in euros": euro_fills, "dividends in euros": euro_paid})
        result.check(euro_fills > 0, "no fill in euros")
        result.check(once == 0, f"{once} practice portfolios got an R2 dividend on the wrong shares")
        result.check(flow["back-dated trades"] > 0, "no back-dated trade was made")
        result.check(paid > 0 and pending == 0, f"dividends: {paid} paid, {pending} actions pending")
        result.check(wrong == 0, f"{wrong} dividends paid wrongly or twice")
        filled = int(setup.database.scalar("SELECT count(*) FROM orders WHERE symbol = 'FLIP' AND status = 'filled'"))
        check_ledger(result, setup.database, ledger, worth_exempt=[user_id for _, user_id in bracketeers])
        result.figures.update(flow)
        result.figures.update({"resting orders filled": filled, "resting orders left open": left})
        legs = {status: int(n) for status, n in setup.database.query(
            "SELECT l.status, count(*) FROM orders l WHERE l.symbol = 'FLIP' AND l.parent_id IS NOT NULL GROUP BY 1")}
        result.figures.update({"bracket legs (by status)": legs})
        result.check(legs.get("filled", 0) > 0 and legs.get("filled") == legs.get("canceled"),
                     f"bracket legs: each filled one cancels its sibling, and some filled: {legs}")
        result.check(filled > 0, "no resting order filled")
        result.check(left == 0, f"{left} resting orders crossed by the price were never filled")
        result.figures.update({"kills": len(recoveries), "attempts": ledger.attempts,
                               "slowest recovery s": round(max(recoveries), 2) if recoveries else None})
        result.check(len(recoveries) >= 5, "fewer than five kills")
        result.check(recoveries and max(recoveries) < 10, f"recovery took {max(recoveries or [0]):.1f} s")
        # After the last restart the socket is back and current: a new price reaches it.
        final_price = "10.25"
        await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "FLIP", "price": final_price}], timeout=10)
        # (20 s: with the scenario leagues' second process killed alongside, the machine is at its busiest here.)
        current = await watcher.wait_for_price("FLIP", final_price, timeout=20.0)
        await check_stream(result, setup.database, [(players[0][1], watcher)])
        await watcher.stop()
        result.figures.update({"stream connections": watcher.connections, "stream snapshots": len(watcher.of_type("snapshot"))})
        result.check(watcher.connections > len(recoveries), f"the socket connected {watcher.connections} times over {len(recoveries)} kills")
        result.check(len(watcher.of_type("snapshot")) >= watcher.connections, "a reconnected socket got no snapshot")
        result.check(current, "a price set after the last kill never reached the socket")
    return result


async def restarts(args, profile):
    result = Result("database restart (immediate stop)")
    async with Setup(args, "restarts") as setup:
        # A league of the 50 players is "big" here: ranked from a live snapshot, kept in
        # unlogged tables that a database crash empties.
        server, client, _ = await setup.serve(connections=80, LEADERBOARD_LIVE_LIMIT=10)
        players = await register_players(client, 50, "outage")
        admin = await client.login(*ADMIN)
        status, league, _ = await client.request("POST", "/api/leagues/create", players[0][0], {"name": "Outage"})
        assert status == 201, league
        for token, _ in players[1:]:
            await client.request("POST", f"/api/leagues/join/{league['code']}", token)
        boards = []

        async def leaderboard_after_recovery():
            """The big league's leaderboard answers with every member, and from a fresh snapshot within 10 s."""
            first = None
            for _ in range(50):
                status, body, _ = await client.request("GET", f"/api/leagues/{league['id']}/leaderboard", players[1][0], timeout=10)
                if first is None:
                    first = (status, isinstance(body, dict) and body.get("total"))
                if status == 200 and body.get("total") == 50:
                    age = time.time() - datetime.fromisoformat(body["asOf"].replace("Z", "+00:00")).timestamp()
                    if age < 3:
                        return first, round(age, 2)
                await asyncio.sleep(0.2)
            return first, None
        # A symbol nobody holds, so that its moves leave every net worth as it is.
        await client.request("PUT", "/api/admin/instruments", admin, [{"symbol": "LIVE", "name": "Live Corp"}])
        await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "LIVE", "price": "10.00"}])
        watcher = StreamWatcher(server.base, players[0][0], {"quotes": ["LIVE"], "orders": True}).start()
        ledger = Ledger()
        down = {"now": False}
        prices_after = []
        price_answers = []
        deadline = time.monotonic() + 12 * profile["restarts"] + 5
        probes = []
        recoveries = []

        async def breaker():
            for _ in range(profile["restarts"]):
                await asyncio.sleep(4)
                setup.database.crash()
                down["now"] = True
                await asyncio.sleep(0.5)
                started = time.monotonic()
                status, body, elapsed = await client.request("GET", "/readyz", timeout=10)
                probes.append(("readyz", status, elapsed, isinstance(body, dict) and body.get("code")))
                status, body, elapsed = await client.request("GET", "/api/portfolio", players[0][0], timeout=10)
                probes.append(("portfolio", status, elapsed, isinstance(body, dict) and body.get("code")))
                await asyncio.sleep(max(0, 3 - (time.monotonic() - started)))
                setup.database.start()
                back = time.monotonic()
                await server.wait_ready(timeout=30)
                recoveries.append(time.monotonic() - back)
                down["now"] = False
                # The stream resumes: a price set now reaches the socket that stayed open.
                price = f"{10 + len(recoveries) / 100:.2f}"
                for _ in range(50):
                    status, _, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "LIVE", "price": price}], timeout=10)
                    if status == 200:
                        break
                    await asyncio.sleep(0.2)
                price_answers.append(status)
                prices_after.append(await watcher.wait_for_price("LIVE", price))
                boards.append(await leaderboard_after_recovery())

        await asyncio.gather(breaker(), *(keyed_trader(client, players, ledger, deadline, lambda: down["now"]) for _ in range(32)))
        check_ledger(result, setup.database, ledger)
        outage = ledger.outage_answers
        slow = [a for a in outage if a[1] > 5]
        not_503 = [a for a in outage if a[0] not in (503,)]
        result.figures.update({
            "restarts": len(recoveries), "requests failed during outages": len(outage),
            "slowest failure s": round(max((a[1] for a in outage), default=0), 2),
            "failures other than 503": len(not_503), "probes": [f"{p[0]} {p[1]} {p[3]} {p[2]:.2f}s" for p in probes],
            "slowest recovery s": round(max(recoveries), 2) if recoveries else None,
        })
        result.check(not slow, f"{len(slow)} requests hung more than 5 s during an outage")
        result.check(not not_503, f"{len(not_503)} outage answers were not 503: {not_503[:3]}")
        result.check(all(p[1] == 503 and p[3] == "service_unavailable" for p in probes), f"probes: {probes}")
        result.check(recoveries and max(recoveries) < 10, f"recovery took {max(recoveries or [0]):.1f} s")
        await watcher.stop()
        gaps = len(watcher.of_type("gap"))
        result.figures.update({"stream gaps": gaps, "stream prices after restarts": f"{sum(prices_after)} of {len(prices_after)}", "price answers": price_answers,
                               "stream connections": watcher.connections})
        result.check(gaps >= len(recoveries), f"{gaps} gap events over {len(recoveries)} database restarts")
        result.check(all(prices_after), f"prices after restarts reached the socket: {prices_after} (answers {price_answers})")
        result.figures["big leaderboard after restarts (first answer, fresh snapshot age s)"] = boards
        result.check(len(boards) == len(recoveries) and all(b[0] == (200, 50) and b[1] is not None for b in boards),
                     f"the big league's leaderboard after restarts: {boards}")
    return result


async def hostile_input(args, profile):
    result = Result("hostile input")
    async with Setup(args, "hostile") as setup:
        server, client, _ = await setup.serve(connections=32, **hostile.SETTINGS)
        await hostile.run(result, client, setup.database, server, setup.log)
    return result


async def contract(args, profile):
    result = Result("contract (schemathesis)")
    async with Setup(args, "contract") as setup:
        server, client, _ = await setup.serve()
        token, _ = await client.register("schema_player")
        report = os.path.join(args.logs, "schemathesis.txt")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "schemathesis.cli", "run", os.path.join(ROOT, "openapi.yaml"), "--url", server.base,
            "--checks", "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance",
            "--max-examples", str(args.examples), "--header", f"Authorization: Bearer {token}",
            "--exclude-path-regex", "^/api/auth/(logout|password)$",
            stdout=open(report, "w"), stderr=asyncio.subprocess.STDOUT, cwd=args.logs)  # its cache stays out of the tree
        code = await process.wait()
        tail = open(report).read().strip().splitlines()[-12:]
        result.figures = {"max examples per operation": args.examples, "exit code": code, "summary": tail[-3:]}
        result.check(code == 0, "schemathesis found failures (see " + report + "):\n    " + "\n    ".join(tail))
    return result


SCENARIOS = {
    "conservation": conservation, "races": races, "crashes": crashes, "restarts": restarts,
    "hostile": hostile_input, "contract": contract,
}


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", choices=PROFILES, default="ci")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "mockstock"))
    parser.add_argument("--logs", default=os.path.join(ROOT, ".build", "reliability"))
    parser.add_argument("--examples", type=int, default=25)
    args = parser.parse_args()
    os.makedirs(args.logs, exist_ok=True)
    profile = PROFILES[args.profile]
    results = []
    for name in args.only:
        print(f"== {name} ...", flush=True)
        started = time.monotonic()
        result = await SCENARIOS[name](args, profile)
        result.figures["seconds taken"] = round(time.monotonic() - started, 1)
        results.append(result)
        print(f"   {'PASS' if result.passed else 'FAIL'} {json.dumps(result.figures)}", flush=True)
        for failure in result.failures:
            print(f"   ! {failure}", flush=True)
    with open(os.path.join(args.logs, "results.json"), "w") as out:
        json.dump([{"name": r.name, "passed": r.passed, "figures": r.figures, "failures": r.failures} for r in results], out, indent=2)
    print("\n| Scenario | Result | Figures |\n|---|---|---|")
    for r in results:
        figures = ", ".join(f"{k}: {v}" for k, v in r.figures.items() if k not in ("probes", "summary"))
        print(f"| {r.name} | {'pass' if r.passed else 'FAIL'} | {figures} |")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
