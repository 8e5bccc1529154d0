"""Bot players in the reliability suite: players who each own a bot (`POST /api/bots`),
give it API keys, and let it trade through `/v2` with a `client_order_id` on every order
while they trade their own portfolios through `/api`.

`BotPlay` is the conservation scenario's part: bots on their personal portfolios and
bots seated in an isolated league (keys on their league portfolios), on two server
processes, keys revoked and made anew mid-run, bots deleted mid-run; `crash_bots` is the
crash scenario's: bots retrying each order under its `client_order_id` while the server
is killed. Both end with checks that count every acknowledged order in the database."""
import asyncio
import random
import time
import uuid

from harness import LEFTOVER_COLUMNS, alpaca_error, alpaca_headers, leftovers, order_rows, portfolio_ledger

# Every request of a bot through `/v2` counts against its key's budget; the simulated
# bots trade far faster than a real one may.
SETTINGS = {"BOT_RATE_LIMIT_PER_MINUTE": "1000000"}
# A key stops working on the process that revoked it at once, on the others within the
# lifetime of their key caches (docs/bots.md).
REVOCATION_SETTLES = 2.0


def alpaca_order(symbols, prefix):
    """A market order through /v2 under a new client_order_id: two thirds ordinary, one
    third sized to overdraw or oversell (Alpaca's 403)."""
    symbol = random.choice(list(symbols))
    side = random.choice(["buy", "buy", "sell"])
    if random.random() < 1 / 3:
        qty = random.choice([100_000, 1_000_000]) if side == "buy" else random.choice([10_000, 500_000])
    else:
        qty = random.randint(1, 5)
    return {"symbol": symbol, "qty": qty, "side": side, "type": "market", "time_in_force": "day",
            "client_order_id": f"{prefix}-{uuid.uuid4().hex}"}


def filled_as_sent(body, answer):
    """Whether a 200 answer is the order sent, filled whole."""
    return (isinstance(answer, dict) and answer.get("client_order_id") == body["client_order_id"]
            and answer.get("status") == "filled" and answer.get("symbol") == body["symbol"]
            and answer.get("side") == body["side"] and str(answer.get("qty")) == str(body["qty"])
            and str(answer.get("filled_qty")) == str(body["qty"]) and bool(answer.get("id")))


def refused_for_money(status, answer):
    """Alpaca's refusal for buying power or shares."""
    return status == 403 and isinstance(answer, dict) and answer.get("code") == 40310000


class Bot:
    """A bot as its owner made it, what it sent and what was answered."""

    def __init__(self, index, owner, created):
        self.index = index
        self.owner = owner  # (token, user id, username)
        self.id = created["id"]
        self.username = created["username"]
        self.portfolios = [p["id"] for p in created["portfolios"]]
        self.portfolio = self.portfolios[0]  # the one its keys trade
        self.league = None
        self.key = None
        self.revoking = set()  # key ids whose revocation was asked for
        self.deleting = False
        self.deleted_at = None
        self.paused = False
        self.inflight = 0
        self.acked = {}  # client order id -> (order UUID, portfolio)
        self.refused = set()  # client order ids answered with a refusal: nothing may exist under them
        self.refusals = {}  # (status, code) -> count

    @property
    def prefix(self):
        return f"bot{self.index}"


async def new_bot(result, client, owner, name, index):
    token, owner_id, _ = owner
    status, created, _ = await client.request("POST", "/api/bots", token, {"name": name})
    assert status == 201, (status, created)
    result.check(created["ownerId"] == owner_id and created["username"] == name and len(created["portfolios"]) == 1
                 and created["portfolios"][0]["leagueId"] is None, f"a new bot: {created}")
    return Bot(index, owner, created)


async def new_key(result, client, bot):
    """A key acting as the bot on the portfolio it trades."""
    status, key, _ = await client.request("POST", "/api/api-keys", bot.owner[0], {"botId": bot.id, "portfolioId": bot.portfolio})
    assert status == 201, (status, key)
    result.check(key["botId"] == bot.id and key["portfolioId"] == bot.portfolio, f"a bot's key: {key} for {bot.id}/{bot.portfolio}")
    return key


async def seat(result, client, bot, league):
    """Seats the bot in an isolated league; it then trades its league portfolio there."""
    status, joined, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", bot.owner[0], {"botId": bot.id})
    assert status == 200, (status, joined)
    status, bots, _ = await client.request("GET", "/api/bots", bot.owner[0])
    mine = next(b for b in bots if b["id"] == bot.id)
    seats = [p["id"] for p in mine["portfolios"] if p["leagueId"] == league["id"]]
    result.check(len(seats) == 1 and mine["portfolios"][0]["leagueId"] is None, f"the seated bot's portfolios: {mine}")
    bot.portfolios = [p["id"] for p in mine["portfolios"]]
    bot.portfolio = seats[0]
    bot.league = league["id"]


async def check_bot_orders(result, database, bots, when):
    """Every acknowledged order of these bots is in the database exactly once, as
    answered (UUID), the bot's, on the key's portfolio and filled with its trade; no
    order exists under a refused client_order_id. The number of orders checked."""
    acked = {cid: (bot, uuid_, portfolio) for bot in bots for cid, (uuid_, portfolio) in bot.acked.items()}
    refused = [cid for bot in bots for cid in bot.refused]
    rows = await database.query_async(order_rows(list(acked) + refused)) if acked or refused else []
    found = {}
    for cid, order_uuid, user_id, portfolio, status, trade in rows:
        found.setdefault(cid, []).append((order_uuid, int(user_id), int(portfolio), status, trade))
    missing = twice = wrong = applied = 0
    for cid, (bot, order_uuid, portfolio) in acked.items():
        rows = found.get(cid, [])
        if not rows:
            missing += 1
        elif len(rows) > 1:
            twice += 1
        elif rows[0] != (order_uuid, bot.id, portfolio, "filled", rows[0][4]) or not rows[0][4]:
            wrong += 1
    applied = sum(1 for cid in refused if cid in found)
    result.check(missing == 0 and twice == 0 and wrong == 0 and applied == 0,
                 f"bot orders {when}: {missing} missing, {twice} twice, {wrong} not as answered, {applied} refused but applied")
    result.check(len(acked) > 0, f"no bot order was acknowledged {when}")
    return {"acknowledged": len(acked), "missing": missing, "twice": twice, "not as answered": wrong,
            "refused": len(refused), "refused but applied": applied}


class BotPlay:
    """Conservation: bots trading through /v2 on two processes while their owners trade
    through /api; keys revoked and made anew, bots deleted, mid-run."""

    def __init__(self, result, database, clients, symbols):
        self.result = result
        self.database = database
        self.clients = clients  # one per server process; revocations and deletions go to the first
        self.symbols = symbols
        self.bots = []
        self.owners = []
        self.owner_trades = {}  # owner user id -> acknowledged trade ids
        self.owner_portfolios = {}
        self.arena = None
        self.probes = []  # (kind, seconds after the revocation or deletion answered, process, status, answer, client order id)
        self.deleted = []
        self.deleted_checks = []
        self.resends = {"resent": 0, "same order": 0}
        self.failures = 0

    def fail(self, message):
        self.failures += 1
        if self.failures <= 20:
            self.result.check(False, message)

    async def prepare(self, owners):
        """Six owners, a bot each: three on their personal portfolios, three seated in an
        isolated league (bots ranked apart) and trading their league portfolios."""
        client = self.clients[0]
        self.owners = owners
        status, self.arena, _ = await client.request("POST", "/api/leagues/create", owners[3][0], {
            "name": "Bot arena", "mode": "isolated", "startingCash": "20000", "bots": "separate"})
        assert status == 201 and self.arena["bots"] == "separate", self.arena
        for index, owner in enumerate(owners):
            bot = await new_bot(self.result, client, owner, f"{owner[2]}_bot", index)
            if index >= 3:
                await seat(self.result, client, bot, self.arena)
            bot.key = await new_key(self.result, client, bot)
            self.bots.append(bot)
            mine = (await client.request("GET", "/api/portfolio", owner[0]))[1]
            self.owner_portfolios[owner[1]] = mine["id"]
            self.owner_trades[owner[1]] = []

    def tasks(self, deadline, seconds):
        """The bots' traders, their owners' traders and the schedule of revocations and
        deletions (two of each kind: personal and league portfolios)."""
        tasks = [self.trader(bot, deadline) for bot in self.bots]
        tasks += [self.owner_trader(owner, deadline) for owner in self.owners]
        tasks.append(self.schedule(deadline, seconds))
        return tasks

    async def schedule(self, deadline, seconds):
        start = deadline - seconds
        plan = [(0.25, "rotate", 0), (0.3, "rotate", 3), (0.45, "delete", 2), (0.5, "delete", 5),
                (0.65, "rotate", 1), (0.7, "rotate", 4), (0.8, "rotate", 0)]
        running = []
        for at, action, index in plan:
            await asyncio.sleep(max(0, start + at * seconds - time.monotonic()))
            bot = self.bots[index]
            running.append(asyncio.create_task(self.rotate(bot) if action == "rotate" else self.delete(bot, deadline)))
        await asyncio.gather(*running)

    async def owner_trader(self, owner, deadline):
        """The owner trades their own portfolio through /api under Idempotency-Keys."""
        token, user_id, _ = owner
        while time.monotonic() < deadline:
            body = alpaca_order(self.symbols, "owner")
            key = body.pop("client_order_id")
            status, answer, _ = await self.clients[0].request(
                "POST", f"/api/stock/{body['side']}", token, {"symbol": body["symbol"], "amount": body["qty"]},
                headers={"Idempotency-Key": key})
            if status == 200:
                self.owner_trades[user_id].append(answer["trade"]["id"])
            elif status != 422:
                self.fail(f"an owner's trade answered {status}: {answer}")

    async def trader(self, bot, deadline):
        """Market orders through /v2 on either process, sometimes two at once, sometimes
        one sent again under its client_order_id; until the deadline or the bot's deletion."""
        while time.monotonic() < deadline and bot.deleted_at is None:
            if bot.paused:
                await asyncio.sleep(0.02)
                continue
            await asyncio.gather(*(self.place(bot) for _ in range(2 if random.random() < 0.2 else 1)))

    async def place(self, bot):
        key = bot.key
        client = random.choice(self.clients)
        body = alpaca_order(self.symbols, bot.prefix)
        bot.inflight += 1
        try:
            status, answer, _ = await client.request("POST", "/v2/orders", None, body, headers=alpaca_headers(key))
            self.judge(bot, key, body, status, answer)
            if status == 200 and random.random() < 0.1:
                # The same order sent again (a client that lost the answer): the same order.
                self.resends["resent"] += 1
                status, again, _ = await random.choice(self.clients).request("POST", "/v2/orders", None, body, headers=alpaca_headers(key))
                if status == 200:
                    self.resends["same order"] += again.get("id") == answer["id"]
                    if again.get("id") != answer["id"]:
                        self.fail(f"{body['client_order_id']} sent again made another order: {answer['id']} then {again}")
                elif not (status in (401, 404) and (key["keyId"] in bot.revoking or bot.deleting)):
                    self.fail(f"{body['client_order_id']} sent again answered {status}: {again}")
        finally:
            bot.inflight -= 1

    def judge(self, bot, key, body, status, answer):
        cid = body["client_order_id"]
        revoked = key["keyId"] in bot.revoking or bot.deleting
        code = answer.get("code") if isinstance(answer, dict) else None
        if status == 200:
            if not filled_as_sent(body, answer):
                self.fail(f"bot order {cid} answered 200 with {answer}")
            bot.acked[cid] = (answer.get("id"), key["portfolioId"])
            return
        bot.refused.add(cid)
        bot.refusals[(status, code)] = bot.refusals.get((status, code), 0) + 1
        if refused_for_money(status, answer):
            return
        # A revoked key (or a deleted bot's) is refused; before the others' key caches
        # forget it, a deleted bot's portfolio is no longer there.
        if revoked and ((status == 401 and code == 40110000) or (bot.deleting and status == 404 and code == 40410000)):
            return
        self.fail(f"bot order {cid} with {'a revoked' if revoked else 'a live'} key answered {status}: {answer}")

    async def probe(self, bot, key, since, kind, seconds=3.5):
        """Orders (and account reads) with a revoked key or a deleted bot's, on both
        processes, from the moment the revocation or deletion was answered."""
        index = 0
        while time.monotonic() - since < seconds:
            index += 1
            process = index % len(self.clients)
            client = self.clients[process]
            body = {"symbol": random.choice(list(self.symbols)), "qty": 1, "side": "buy", "type": "market", "time_in_force": "day",
                    "client_order_id": f"{bot.prefix}-probe-{uuid.uuid4().hex}"}
            sent = time.monotonic() - since
            status, answer, _ = await client.request("POST", "/v2/orders", None, body, headers=alpaca_headers(key))
            self.probes.append((kind, sent, process, status, answer, body["client_order_id"]))
            if status == 200:
                if kind == "deleted":
                    self.fail(f"a deleted bot's key placed {body['client_order_id']} {sent:.2f} s after the deletion: {answer}")
                bot.acked[body["client_order_id"]] = (answer.get("id"), key["portfolioId"])
            else:
                bot.refused.add(body["client_order_id"])
            if index % 3 == 0:
                sent = time.monotonic() - since
                status, answer, _ = await client.request("GET", "/v2/account", None, headers=alpaca_headers(key))
                self.probes.append((kind, sent, process, status, answer, None))
            await asyncio.sleep(0.05)

    async def rotate(self, bot):
        """A new key for the bot (its trader switches to it), then the old one revoked."""
        client = self.clients[0]
        new = await new_key(self.result, client, bot)
        old, bot.key = bot.key, new
        bot.revoking.add(old["keyId"])
        status, answer, _ = await client.request("DELETE", f"/api/api-keys/{old['keyId']}", bot.owner[0])
        revoked_at = time.monotonic()
        self.result.check(status == 204, f"revoking {old['keyId']}: {status} {answer}")
        await self.probe(bot, old, revoked_at, "revoked")

    async def delete(self, bot, deadline):
        """Checks the bot's orders and ledger (its trader paused), lets it trade again,
        deletes it while it trades, makes sure everything of it is gone, and gives its
        owner a new bot of the same name (on the same kind of portfolio) to the end."""
        bot.paused = True
        while bot.inflight:
            await asyncio.sleep(0.01)
        checked = await self.check_orders([bot], "before its deletion")
        found, violations, unkeyed = map(int, (await self.database.query_async(portfolio_ledger(bot.portfolios)))[0])
        trades = int((await self.database.query_async(
            f"SELECT count(*) FROM trades WHERE portfolio_id IN ({','.join(map(str, bot.portfolios))})"))[0][0])
        self.deleted_checks.append({"bot": bot.username, "orders": checked, "portfolios": found, "violations": violations,
                                    "trades": trades})
        self.result.check(found == len(bot.portfolios) and violations == 0 and unkeyed == 0,
                          f"{bot.username} before its deletion: {found} portfolios, {violations} violations, {unkeyed} unkeyed trades")
        self.result.check(trades == sum(1 for _, p in bot.acked.values() if p in bot.portfolios) and trades > 0,
                          f"{bot.username} before its deletion: {trades} trades for {len(bot.acked)} acknowledged orders")
        bot.paused = False
        await asyncio.sleep(random.uniform(0.2, 0.6))
        bot.deleting = True
        token = bot.owner[0]
        status, answer, _ = await self.clients[0].request("DELETE", f"/api/bots/{bot.id}", token)
        bot.deleted_at = time.monotonic()
        self.result.check(status == 204, f"deleting {bot.username}: {status} {answer}")
        self.deleted.append(bot)
        status, answer, _ = await self.clients[-1].request("DELETE", f"/api/bots/{bot.id}", token)
        self.result.check(status == 404 and answer.get("code") == "not_found", f"deleting {bot.username} again: {status} {answer}")
        status, listed, _ = await self.clients[-1].request("GET", "/api/bots", token)
        self.result.check(status == 200 and all(b["id"] != bot.id for b in listed), f"{bot.username} still listed: {listed}")
        await self.probe(bot, bot.key, bot.deleted_at, "deleted")
        # The name is free again: the owner makes a bot of that name, which trades to the end.
        successor = await new_bot(self.result, self.clients[0], bot.owner, bot.username, len(self.bots))
        if bot.league:
            await seat(self.result, self.clients[0], successor, self.arena)
        successor.key = await new_key(self.result, self.clients[0], successor)
        self.bots.append(successor)
        await self.trader(successor, deadline)

    async def check_orders(self, bots, when):
        return await check_bot_orders(self.result, self.database, bots, when)

    async def check(self):
        """After the load: see `check_orders`, the bots' ledgers, nothing left of the
        deleted bots, the revoked keys' requests, the owners' portfolios, what the bots
        read through /v2, and the bots in the league's standings."""
        result, database = self.result, self.database
        alive = [bot for bot in self.bots if bot.deleted_at is None]
        orders = await self.check_orders(alive, "at the end")
        portfolios = [p for bot in alive for p in bot.portfolios]
        found, violations, unkeyed = map(int, (await database.query_async(portfolio_ledger(portfolios)))[0])
        result.check(found == len(portfolios) and violations == 0 and unkeyed == 0,
                     f"the bots' portfolios: {found} of {len(portfolios)} found, {violations} violations, {unkeyed} trades without order or key")
        # Nothing but the acknowledged orders moved the bots' money: their trades are those orders'.
        per_portfolio = {int(p): int(n) for p, n in await database.query_async(
            f"SELECT portfolio_id, count(*) FROM trades WHERE portfolio_id IN ({','.join(map(str, portfolios))}) GROUP BY 1")}
        expected = {}
        for bot in alive:
            for _, portfolio in bot.acked.values():
                expected[portfolio] = expected.get(portfolio, 0) + 1
        result.check(per_portfolio == expected, f"the bots' trades per portfolio {per_portfolio} are not their acknowledged orders {expected}")
        untraded = [bot.username for bot in alive if not any(p == bot.portfolio for _, p in bot.acked.values())]
        result.check(not untraded, f"bots that never traded: {untraded}")
        # Every order under a bot's prefix was acknowledged or refused (none unanswered).
        stray = int((await database.query_async(
            "SELECT count(*) FROM orders WHERE client_order_id LIKE 'bot%'"))[0][0]) - sum(len(bot.acked) for bot in alive)
        result.check(stray == 0, f"{stray} bot orders in the database were never acknowledged")
        # Nothing is left of a deleted bot: not its account, portfolios, keys, orders, trades, seats ...
        columns = await database.query_async(LEFTOVER_COLUMNS)
        left = await database.query_async(leftovers(columns, [b.id for b in self.deleted], [p for b in self.deleted for p in b.portfolios]))
        left = [(name, int(n)) for name, n in left if int(n)]
        gone = sum(len(b.acked) for b in self.deleted)
        gone_found = len(await database.query_async(order_rows([cid for b in self.deleted for cid in b.acked])))
        result.check(len(self.deleted) >= 2 and not left and gone_found == 0,
                     f"deleted bots {[b.username for b in self.deleted]}: rows left {left}, {gone_found} of their {gone} orders left")
        result.check(len(columns) >= 15, f"only {len(columns)} columns searched for a deleted bot's rows")
        # Requests with a revoked key (or a deleted bot's) once the revocation settled: 401, nothing written.
        settled = [p for p in self.probes if p[1] > REVOCATION_SETTLES]
        refused = [p for p in settled if p[3] == 401 and alpaca_error(401, p[4])]
        window = [p for p in self.probes if p[1] <= REVOCATION_SETTLES]
        result.check(len(settled) == len(refused), f"revoked keys after {REVOCATION_SETTLES} s: "
                     f"{[(p[0], round(p[1], 2), p[2], p[3], p[4]) for p in settled if p not in refused][:5]}")
        for kind in ("revoked", "deleted"):
            for process in range(len(self.clients)):
                result.check(any(p[0] == kind and p[2] == process for p in settled),
                             f"no request with a {kind} key reached process {process + 1} after the revocation settled")
        # The owners' own portfolios hold their own trades, none of their bots'.
        owner_ids = ",".join(str(p) for p in self.owner_portfolios.values())
        held = {}
        for portfolio, trade in await database.query_async(f"SELECT portfolio_id, id FROM trades WHERE portfolio_id IN ({owner_ids})"):
            held.setdefault(int(portfolio), set()).add(int(trade))
        foreign = sum(len(held.get(self.owner_portfolios[owner], set()) ^ set(trades)) for owner, trades in self.owner_trades.items())
        bot_orders_elsewhere = int((await database.query_async(
            "SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id JOIN users u ON u.id = p.user_id "
            "WHERE o.client_order_id LIKE 'bot%' AND (u.bot_owner_id IS NULL OR o.user_id <> u.id)"))[0][0])
        owner_trades = sum(len(t) for t in self.owner_trades.values())
        result.check(foreign == 0 and bot_orders_elsewhere == 0 and owner_trades > 0,
                     f"owners' portfolios: {foreign} trades not the owner's own, {bot_orders_elsewhere} bot orders outside bots' portfolios")
        reads = await self.check_reads(alive)
        standings = await self.check_standings(alive)
        revoked_window = {"accepted": sum(1 for p in window if p[3] == 200 and p[5]),
                          "refused": sum(1 for p in window if p[3] != 200)}
        refusals = {}
        for bot in self.bots:
            for (status, code), n in bot.refusals.items():
                refusals[f"{status} {code}"] = refusals.get(f"{status} {code}", 0) + n
        return {
            "bots": len(self.bots), "bot owners": len(self.owners), "bot orders": orders["acknowledged"],
            "bot orders refused (none stored)": orders["refused"], "bot traders' refusals by status and code": refusals,
            "bot orders missing": orders["missing"], "bot orders twice": orders["twice"],
            "bot orders sent again": self.resends["resent"], "bot orders sent again answered the same": self.resends["same order"],
            "owner trades": owner_trades, "owner trades not their own": foreign, "bot orders outside bots' portfolios": bot_orders_elsewhere,
            "keys revoked": sum(len(bot.revoking) for bot in self.bots), "bots deleted": len(self.deleted),
            "deleted bots checked before deletion": self.deleted_checks, "deleted bots' orders gone with them": gone,
            "deleted bots' rows left": left, "columns searched for them": len(columns), "revoked-key requests within 2 s": revoked_window,
            "revoked-key requests after 2 s": len(settled), "of them refused with 401": len(refused),
            **reads, **standings,
        }

    async def check_reads(self, bots):
        """Through /v2, each bot's account and positions are its portfolio's (read on the
        second process)."""
        wrong = 0
        client = self.clients[-1]
        for bot in bots:
            status, account, _ = await client.request("GET", "/v2/account", None, headers=alpaca_headers(bot.key))
            status2, positions, _ = await client.request("GET", "/v2/positions", None, headers=alpaca_headers(bot.key))
            cash = (await self.database.query_async(f"SELECT cash FROM portfolios WHERE id = {bot.portfolio}"))[0][0]
            held = {s: q for s, q in await self.database.query_async(
                f"SELECT symbol, quantity FROM holdings WHERE portfolio_id = {bot.portfolio} AND quantity <> 0")}
            if status != 200 or status2 != 200 or float(account["cash"]) != float(cash) or {p["symbol"]: p["qty"] for p in positions} != held:
                wrong += 1
                self.result.check(False, f"{bot.username} through /v2: {status} {str(account)[:200]}, {status2} {str(positions)[:200]}; "
                                         f"database: cash {cash}, holdings {held}")
        return {"bot accounts read wrongly": wrong}

    async def check_standings(self, bots):
        """The isolated league ranks its bots apart: `players=bots` lists exactly the
        seated bots still there, each marked a bot with its owner's name; `humans`, none."""
        seated = {bot.id: bot.owner[2] for bot in bots if bot.league}
        token = self.owners[3][0]
        _, board, _ = await self.clients[0].request("GET", f"/api/leagues/{self.arena['id']}/leaderboard?players=bots", token)
        _, humans, _ = await self.clients[0].request("GET", f"/api/leagues/{self.arena['id']}/leaderboard?players=humans", token)
        shown = {s["userId"]: s.get("ownerUsername") for s in board.get("items", []) if s.get("bot")}
        members = (await self.database.query_async(
            f"SELECT member_count, (SELECT count(*) FROM league_members WHERE league_id = l.id) FROM leagues l WHERE id = {self.arena['id']}"))[0]
        ok = (shown == seated and board.get("total") == len(seated) and all(s.get("bot") for s in board.get("items", []))
              and not any(s.get("bot") for s in humans.get("items", [])) and members[0] == members[1])
        self.result.check(ok, f"the league's standings: bots {board}, humans {humans}, seated {seated}, member count {members}")
        return {"bots in the league's standings": len(shown)}


async def crash_bots(result, client, owners):
    """Four owners' bots (two on their personal portfolios, two seated in an isolated
    league), each with a key on the portfolio it trades; `keyed_bot_trader` trades them."""
    status, league, _ = await client.request("POST", "/api/leagues/create", owners[2][0], {
        "name": "Crash arena", "mode": "isolated", "startingCash": "20000"})
    assert status == 201, league
    bots = []
    for index, owner in enumerate(owners):
        bot = await new_bot(result, client, owner, f"{owner[2]}_bot", index)
        if index >= 2:
            await seat(result, client, bot, league)
        bot.key = await new_key(result, client, bot)
        bots.append(bot)
    return bots


async def keyed_bot_trader(result, client, bot, deadline, symbols, figures, give_up_after=40):
    """Market orders through /v2, each retried under its client_order_id until answered
    (200, or 403 for buying power or shares); a lost connection, a 503 or a 409 (the same
    order still being answered) is retried."""
    while time.monotonic() < deadline:
        body = alpaca_order(symbols, bot.prefix)
        cid = body["client_order_id"]
        attempts = 0
        answered = False
        give_up = time.monotonic() + give_up_after
        while not answered and time.monotonic() < give_up:
            attempts += 1
            status, answer, _ = await client.request("POST", "/v2/orders", None, body, headers=alpaca_headers(bot.key), timeout=10)
            if status == 200:
                if not filled_as_sent(body, answer):
                    result.check(False, f"bot order {cid} answered 200 with {answer}")
                bot.acked[cid] = (answer.get("id"), bot.portfolio)
                answered = True
            elif refused_for_money(status, answer):
                bot.refused.add(cid)
                answered = True
            elif status in (0, 409, 503):
                figures["bot attempts failed"][status] = figures["bot attempts failed"].get(status, 0) + 1
                await asyncio.sleep(0.2)
            else:
                result.check(False, f"bot order {cid} answered {status}: {answer}")
                bot.refused.add(cid)
                answered = True
        figures["bot orders retried"] += attempts > 1
        figures["bot orders acknowledged after a retry"] += attempts > 1 and cid in bot.acked
        if not answered:
            figures["bot orders unanswered"] += 1


async def check_crash_bots(result, database, bots, figures):
    """No acknowledged bot order lost or applied twice, none under a refused
    client_order_id, no bot order the bots were not told of (unless unanswered), the
    bots' ledgers intact and their trades exactly their acknowledged orders."""
    orders = await check_bot_orders(result, database, bots, "after the kills")
    portfolios = [p for bot in bots for p in bot.portfolios]
    found, violations, unkeyed = map(int, (await database.query_async(portfolio_ledger(portfolios)))[0])
    result.check(found == len(portfolios) and violations == 0 and unkeyed == 0,
                 f"the bots' portfolios: {found} of {len(portfolios)} found, {violations} violations, {unkeyed} trades without order or key")
    trades = int((await database.query_async(
        f"SELECT count(*) FROM trades WHERE portfolio_id IN ({','.join(map(str, portfolios))})"))[0][0])
    stored = int((await database.query_async("SELECT count(*) FROM orders WHERE client_order_id LIKE 'bot%'"))[0][0])
    acked = sum(len(bot.acked) for bot in bots)
    result.check(trades == acked, f"the bots' portfolios hold {trades} trades for {acked} acknowledged orders")
    result.check(acked <= stored <= acked + figures["bot orders unanswered"],
                 f"{stored} bot orders stored for {acked} acknowledged ({figures['bot orders unanswered']} unanswered)")
    result.check(figures["bot orders retried"] > 0, "no bot order was cut by a kill and retried")
    result.check(all(bot.acked for bot in bots), "a bot never traded")
    figures.update({"bot orders acknowledged": acked, "bot orders missing": orders["missing"], "bot orders twice": orders["twice"],
                    "bot orders not as answered": orders["not as answered"], "bot orders refused": orders["refused"],
                    "bot orders stored": stored, "bot trades": trades, "bot ledger violations": violations})


# KEYS's quote moves between these two while a league's policy changes: limit buys at the
# lower one rest and then fill, those below it rest until cancelled. Every KEYS fill is at
# the lower price, so a KEYS holder is worth what was paid in when KEYS is valued at it:
# the conservation scenario's snapshots value it so (`keys_at_cost`), and at the end KEYS
# is back there. The keys' market orders trade a symbol whose quote stays put.
POLICY_PRICES = ("20.00", "19.00")


def keys_at_cost(worth_drift):
    """A net-worth check (`WORTH_DRIFT`, already valuing HOST at cost) valuing KEYS at its lower price."""
    query = worth_drift.replace("ELSE v.value END", f"WHEN 'KEYS' THEN v.quantity * {POLICY_PRICES[1]} ELSE v.value END")
    assert query != worth_drift
    return query
# What a key placing an order is told once its league forbids keys (docs/bots.md).
FORBIDS = "forbids bots"


def forbidden_answer(status, answer):
    return status == 403 and alpaca_error(403, answer) and FORBIDS in answer["message"]


class PolicyFlip:
    """Conservation: a league's owner forbids bots mid-run, on one process, while two bots
    and a member's own key keep placing resting and market orders on the league's
    portfolios through both, the quote moving so resting orders fill, and the member
    places resting orders by hand. Once the change is answered no order a key placed
    there fills or stays open, keys are refused once their cached permission expires,
    and orders placed by hand are left alone."""

    def __init__(self, result, database, clients, admin, steady_symbol):
        self.result = result
        self.database = database
        self.clients = clients
        self.admin = admin
        self.steady = steady_symbol
        self.league = None
        self.host = None
        self.keys = []  # (name, key)
        self.member = None
        self.sent = []  # (monotonic time sent, status, answer, body)
        self.hand = {"placed": 0, "placed after the change": 0, "refused": []}
        self.flip_at = None  # monotonic time the change was answered
        self.flip_db = None  # the database's clock just after

    async def prepare(self, owners):
        client = self.clients[0]
        status, answer, _ = await client.request("PUT", "/api/admin/instruments", self.admin, [{"symbol": "KEYS", "name": "Keys Corp"}])
        assert status == 200, answer
        status, answer, _ = await client.request("POST", "/api/admin/quotes", self.admin, [{"symbol": "KEYS", "price": POLICY_PRICES[0]}])
        assert status == 200, answer
        self.host, member = owners[0], owners[1]
        status, self.league, _ = await client.request("POST", "/api/leagues/create", self.host[0], {
            "name": "Strict class", "mode": "isolated", "startingCash": "20000"})
        assert status == 201 and self.league["bots"] == "allowed", self.league
        status, answer, _ = await client.request("POST", f"/api/leagues/join/{self.league['code']}", member[0])
        assert status == 200, answer
        mine = (await client.request("GET", "/api/portfolios", member[0]))[1]
        self.member = (member[0], next(p["id"] for p in mine if p["leagueId"] == self.league["id"]))
        status, key, _ = await client.request("POST", "/api/api-keys", member[0], {"portfolioId": self.member[1]})
        assert status == 201, key
        self.keys.append(("member's key", key))
        for index, owner in enumerate(owners[1:3]):
            bot = await new_bot(self.result, client, owner, f"{owner[2]}_strict", 100 + index)
            await seat(self.result, client, bot, self.league)
            self.keys.append((bot.username, await new_key(self.result, client, bot)))

    def tasks(self, deadline, seconds):
        return [self.mover(deadline), self.schedule(deadline, seconds), self.hand_trader(deadline),
                *(self.key_trader(key, deadline) for _, key in self.keys for _ in range(2))]

    async def quote(self, price):
        status, answer, _ = await self.clients[0].request("POST", "/api/admin/quotes", self.admin,
                                                          [{"symbol": "KEYS", "price": price}], timeout=10)
        self.result.check(status == 200, f"KEYS's quote {price} answered {status}: {answer}")

    async def mover(self, deadline):
        """KEYS up for 0.4 s, down for 0.6 s, until the end (and down at the end)."""
        while time.monotonic() < deadline:
            await self.quote(POLICY_PRICES[0])
            await asyncio.sleep(0.4)
            await self.quote(POLICY_PRICES[1])
            await asyncio.sleep(0.6)

    async def schedule(self, deadline, seconds):
        await asyncio.sleep(max(0, deadline - seconds / 2 - time.monotonic()))
        status, answer, _ = await self.clients[1].request("PATCH", f"/api/leagues/{self.league['id']}", self.host[0], {"bots": "forbidden"})
        self.flip_at = time.monotonic()
        self.flip_db = (await self.database.query_async("SELECT now()"))[0][0]
        self.result.check(status == 200 and answer.get("bots") == "forbidden", f"forbidding bots answered {status}: {answer}")

    async def key_trader(self, key, deadline):
        """Resting limit buys of KEYS (at its lower price, which fills, or below it) and
        market orders of the steady symbol, through either process, a few a second."""
        while time.monotonic() < deadline:
            roll = random.random()
            body = {"symbol": self.steady, "qty": 1, "side": "buy", "type": "market", "time_in_force": "day",
                    "client_order_id": f"policy-{uuid.uuid4().hex}"}
            if roll < 0.7:
                body.update(symbol="KEYS", type="limit", time_in_force="gtc", limit_price=random.choice([POLICY_PRICES[1], "18.00"]))
            elif roll < 0.85:
                body["side"] = "sell"
            sent = time.monotonic()
            status, answer, _ = await random.choice(self.clients).request("POST", "/v2/orders", None, body, headers=alpaca_headers(key))
            self.sent.append((sent, status, answer, body))
            await asyncio.sleep(0.2)

    async def hand_trader(self, deadline):
        """The member's resting orders through /api, which the change leaves alone."""
        token, portfolio = self.member
        while time.monotonic() < deadline:
            status, answer, _ = await self.clients[0].request("POST", "/api/orders", token, {
                "symbol": "KEYS", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "18.00",
                "timeInForce": "gtc", "portfolioId": portfolio})
            self.hand["placed"] += status == 201
            self.hand["placed after the change"] += status == 201 and self.flip_at is not None
            if status != 201:
                self.hand["refused"].append((status, answer))
            await asyncio.sleep(0.3)

    async def check(self):
        result, database = self.result, self.database
        if self.flip_at is None:
            result.check(False, "the league's policy was never changed")
            return {}
        portfolios = f"SELECT portfolio_id FROM league_portfolios({int(self.league['id'])})"
        reason = "The league no longer lets API keys or bots trade its portfolios."
        (open_by_key, fills_after, cancelled, hand_cancelled, key_fills_before, hand_open), = [tuple(map(int, row)) for row in await database.query_async(f"""
            SELECT (SELECT count(*) FROM orders WHERE status = 'new' AND by_key AND portfolio_id IN ({portfolios})),
                   (SELECT count(*) FROM orders o JOIN trades t ON t.id = o.trade_id
                    WHERE o.by_key AND o.portfolio_id IN ({portfolios}) AND t.created_at > '{self.flip_db}'),
                   (SELECT count(*) FROM orders WHERE by_key AND status = 'canceled' AND reject_reason = '{reason}'),
                   (SELECT count(*) FROM orders WHERE NOT by_key AND reject_reason = '{reason}'),
                   (SELECT count(*) FROM orders o JOIN trades t ON t.id = o.trade_id
                    WHERE o.by_key AND o.portfolio_id IN ({portfolios}) AND t.created_at < '{self.flip_db}'),
                   (SELECT count(*) FROM orders WHERE status = 'new' AND NOT by_key AND portfolio_id = {int(self.member[1])})
            """)]
        ids = [row[0] for row in await database.query_async(portfolios)]
        found, violations, _ = map(int, (await database.query_async(portfolio_ledger(ids)))[0])
        settled = [s for s in self.sent if s[0] > self.flip_at + REVOCATION_SETTLES]
        window = [s for s in self.sent if self.flip_at - 1 < s[0] <= self.flip_at + REVOCATION_SETTLES]
        before = [s for s in self.sent if s[0] <= self.flip_at - 1]
        refused_settled = [s for s in settled if forbidden_answer(s[1], s[2])]
        odd = [(s[1], s[2]) for s in before + window
               if not (s[1] == 200 or forbidden_answer(s[1], s[2]) or (s[1] == 403 and alpaca_error(403, s[2])))]
        result.check(open_by_key == 0, f"{open_by_key} orders keys placed are still open in the league that forbids them")
        result.check(fills_after == 0, f"{fills_after} orders keys placed filled after the league forbade keys")
        result.check(cancelled > 0 and key_fills_before > 0,
                     f"the change cancelled {cancelled} key orders; {key_fills_before} resting key orders filled before it")
        result.check(hand_cancelled == 0 and self.hand["placed after the change"] > 0 and not self.hand["refused"] and hand_open > 0,
                     f"orders by hand: {hand_cancelled} cancelled by the change, {self.hand}, {hand_open} open")
        result.check(len(settled) > 0 and len(refused_settled) == len(settled),
                     f"key orders after the change settled: {[(s[1], s[2]) for s in settled if s not in refused_settled][:5]}")
        result.check(not odd, f"key orders answered oddly: {odd[:5]}")
        result.check(found == len(ids) and violations == 0, f"the strict league's portfolios: {found} of {len(ids)}, {violations} violations")
        return {"policy change: key orders before": len(before), "within 2 s (accepted)": sum(1 for s in window if s[1] == 200),
                "within 2 s (refused)": sum(1 for s in window if forbidden_answer(s[1], s[2])),
                "after 2 s (all refused)": len(settled), "key orders cancelled by the change or the sweep": cancelled,
                "resting key orders filled before the change": key_fills_before, "key orders filled after it": fills_after,
                "key orders left open": open_by_key, "hand orders placed": self.hand["placed"],
                "hand orders after the change": self.hand["placed after the change"], "hand orders cancelled": hand_cancelled}
