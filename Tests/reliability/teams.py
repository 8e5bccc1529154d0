"""A team league in the reliability suite (docs/leagues.md, "Teams"): a host who does not
play runs a league created with `"teams": true` whose class roster plays in three teams
of three, two traders and a viewer each. On both server processes the traders trade their
team's one portfolio at once — market trades (a third sized to overdraw or oversell),
resting limit orders, cancels, cancel-alls and replacements of each other's orders — and
the viewers try the same and read it. Mid-run the host moves a trader to another team,
turns another into a viewer and erases a third while it trades. Every order and trade
must say who placed it, no viewer's request may ever trade, the standings rank exactly the
teams with their members, the gradebook counts each student's own trades, and the audit
log holds one event per host action.

`TeamPlay` is the conservation scenario's part; `check` ends it with figures."""
import asyncio
import collections
import csv
import io
import random
import time
import uuid

from harness import LEFTOVER_COLUMNS, Client, leftovers, portfolio_ledger

STARTING_CASH = "20000.00"
TEAMS = ["Bulls", "Bears", "Owls"]
# The class roster, as the host types it: member 3t and 3t + 1 trade team t's portfolio,
# 3t + 2 watches it.
ROSTER = ["Ada Byron", "Bea Ng", "Cy Young", "Dov Katz", "Eli Marsh", "Fay Okafor", "Gus Lind", "Hana Sato", "Ivo Petrov"]
MOVED = 1  # a trader of Bulls, moved to Bears (a trader there)
DEMOTED = 3  # a trader of Bears, made a viewer
ERASED = 7  # a trader of Owls, erased by the host while it trades
# HOST's quote moves between 10.50 and 10.00 (hosting.ClassPlay moves it): limit buys at
# 10.00 rest and fill at 10.00, those at 9.00 rest for good; nothing of HOST is bought at
# another price, so the snapshots may value it at 10.00 (hosting.WORTH_DRIFT_HOST_AT_COST).
HOST_LIMITS = ("10.00", "9.00")
# An erased account's token is refused on every process within this long of the answer
# (hosting.ENDED_SETTLES); its trader goes on PROBE_FOR seconds after the erasure.
ENDED_SETTLES = 1.0
PROBE_FOR = 2.0
# After a move or a demotion, both processes are probed this long (the seats are not cached:
# the first request after the answer must already be refused).
CHANGE_PROBES = 1.2
# What a request's answer was, by kind of request: (status, problem code) -> outcome.
OUTCOMES = {
    (200, None): "ok", (201, None): "ok",
    (422, "insufficient_funds"): "refused", (422, "insufficient_shares"): "refused", (409, "order_not_open"): "refused",
    (403, "not_a_trader"): "viewer", (404, "not_found"): "stranger", (401, "unauthorized"): "ended", (409, "conflict"): "conflict",
}


class Member:
    def __init__(self, index, name, student, token):
        self.index = index
        self.name = name
        self.user_id = student["userId"]
        self.username = student["username"]
        self.token = token
        self.team = index // 3
        self.role = "viewer" if index % 3 == 2 else "trader"
        # Its seats over the run: (change sent, change answered, team or None, role or "erased"), monotonic times.
        self.seats = [(float("-inf"), float("-inf"), self.team, self.role)]
        self.trades = {}  # acknowledged market trade id -> portfolio
        self.orders = {}  # acknowledged order id (placed or a replacement) -> portfolio
        self.erased_at = None
        self.erasing = False
        self.own_portfolios = []  # its own portfolios (not the team's), read just before an erasure

    @property
    def gone(self):
        return self.erasing or self.erased_at is not None

    def change(self, sent, answered, team, role):
        self.seats.append((sent, answered, team, role))
        self.team, self.role = team, role


class TeamPlay:
    """A team league under load; `tasks` runs the members and the host."""

    def __init__(self, result, database, bases, admin, symbols):
        self.result = result
        self.database = database
        self.clients = [Client(base, connections=16) for base in bases]
        self.admin = admin
        self.symbols = list(symbols)
        self.prices = dict(symbols)
        self.host = None
        self.league = None
        self.teams = []  # the create answers, in TEAMS order
        self.members = []
        self.requests = []  # every member's request: who, kind, portfolio, process, sent, answered, status, code
        self.audited = []  # (action, target user id or None) of every host action acknowledged
        self.refused_actions = []
        self.changes = {}  # figures of the move, the demotion and the erasure
        self.keyed = True  # whether a team's market trade under an Idempotency-Key trades (see `prepare`)
        self.unkeyed = set()  # acknowledged market trades sent without a key
        self.counts = collections.Counter()
        self.steps = []
        self.done = False
        self.failures = 0

    def fail(self, message):
        self.failures += 1
        if self.failures <= 20:
            self.result.check(False, message)

    def acted(self, action, target=None):
        self.audited.append((action, target))

    def portfolio(self, team):
        return self.teams[team]["portfolioId"]

    async def clock(self):
        return (await self.database.query_async("SELECT clock_timestamp()"))[0][0]

    async def prepare(self, host):
        """The team league (hosted without a seat), its class roster of nine (on the second
        process), who log in with what the answer shows, three teams and their seats; a
        member and a duplicate name may not make a team (neither logged). Each team's
        portfolio is funded with the starting cash, the members have none of their own in
        the league, and the viewers see their team's."""
        client = self.clients[0]
        self.host = host
        status, league, _ = await client.request("POST", "/api/leagues/create", host[0], {
            "name": "Teams", "mode": "isolated", "startingCash": STARTING_CASH, "ownerPlays": False, "teams": True,
            "deleteManagedAfterDays": 30})
        assert status == 201 and league.get("teams") is True, league
        self.league = league
        lid = league["id"]
        status, roster, _ = await self.clients[1].request("POST", f"/api/leagues/{lid}/roster", host[0],
                                                          {"students": [{"displayName": name} for name in ROSTER]})
        assert status == 201, roster
        self.acted("league.roster_create")
        for index, (name, student) in enumerate(zip(ROSTER, roster["students"])):
            status, session, _ = await self.clients[index % 2].request(
                "POST", "/api/auth/login", body={"username": student["username"], "password": student["password"]})
            assert status == 200, session
            self.members.append(Member(index, name, student, session["token"]))
        for index, name in enumerate(TEAMS):
            status, team, _ = await self.clients[index % 2].request("POST", f"/api/leagues/{lid}/teams", host[0], {"name": name})
            assert status == 201, team
            self.result.check(team.get("name") == name and team.get("members") == [] and isinstance(team.get("portfolioId"), int),
                              f"a new team: {team}")
            self.teams.append(team)
            self.acted("league.team_create")
        # Refused, and not logged: a member making a team, or seating itself; a name taken in another case.
        trader = self.members[0]
        status, answer, _ = await self.clients[1].request("POST", f"/api/leagues/{lid}/teams", trader.token, {"name": "Mine"})
        self.result.check(status == 403 and answer.get("code") == "forbidden", f"a member making a team: {status} {answer}")
        status, answer, _ = await self.clients[0].request("PUT", f"/api/leagues/{lid}/teams/{self.teams[1]['id']}/members/{trader.user_id}",
                                                          trader.token, {"role": "trader"})
        self.result.check(status == 403 and answer.get("code") == "forbidden", f"a member seating itself: {status} {answer}")
        status, answer, _ = await self.clients[1].request("POST", f"/api/leagues/{lid}/teams", host[0], {"name": TEAMS[0].upper()})
        self.result.check(status == 409, f"a team name taken in another case: {status} {answer}")
        self.refused_actions += ["team by a member", "seat by a member", "duplicate name"]
        for member in self.members:
            status, team, _ = await self.clients[member.index % 2].request(
                "PUT", f"/api/leagues/{lid}/teams/{self.teams[member.team]['id']}/members/{member.user_id}", host[0], {"role": member.role})
            seated = status == 200 and {"userId": member.user_id, "username": member.username, "role": member.role} in team.get("members", [])
            self.result.check(seated, f"seating {member.name} on {TEAMS[member.team]} as {member.role}: {status} {team}")
            self.acted("league.team_member", member.user_id)
        ids = ",".join(str(t["portfolioId"]) for t in self.teams)
        funded = await self.database.query_async(
            f"SELECT p.id, p.league_id, (SELECT sum(amount) FROM cash_movements c WHERE c.portfolio_id = p.id) FROM portfolios p WHERE p.id IN ({ids})")
        self.result.check(sorted((int(p), int(l), float(c)) for p, l, c in funded) == sorted((t["portfolioId"], lid, float(STARTING_CASH)) for t in self.teams),
                          f"the teams' portfolios: {funded}")
        for member in self.members:
            _, seen, _ = await self.clients[member.index % 2].request("GET", "/api/portfolios", member.token)
            in_league = [p["id"] for p in seen if p.get("leagueId") == lid]
            self.result.check(in_league == [self.portfolio(member.team)], f"{member.name}'s league portfolios: {in_league}")
        # A team's market trade under an Idempotency-Key trades (the traders' market trades
        # carry keys while it does; a server where it did not would send them without, and
        # their trades would be tied to neither an order nor a key: checked to be exactly those).
        status, answer, _ = await self.clients[0].request(
            "POST", "/api/stock/buy", trader.token, {"symbol": "R1", "amount": 1, "portfolioId": self.portfolio(0)},
            headers={"Idempotency-Key": uuid.uuid4().hex})
        self.keyed = status == 200
        if status == 200:
            trader.trades[answer["trade"]["id"]] = self.portfolio(0)
        self.changes["keyed team trade (probe)"] = f"{status} {answer.get('code') if isinstance(answer, dict) else ''}".strip()
        self.result.check(status == 200, f"a keyed team trade: {status} {answer}")

    def tasks(self, deadline, seconds):
        return [self.member_loop(m, deadline) for m in self.members] + [self.schedule(deadline, seconds)]

    def running(self, deadline):
        return time.monotonic() < deadline or not self.done

    # The members.

    async def member_loop(self, member, deadline):
        while self.running(deadline) and not (member.erased_at is not None and time.monotonic() > member.erased_at + PROBE_FOR):
            process = random.randrange(len(self.clients))
            portfolio = self.portfolio(member.team) if member.team is not None else self.portfolio(2)
            roll = random.random()
            if roll < (0.4 if member.role == "viewer" else 0.1):
                await self.send(member, process, "read", portfolio)
            else:
                kind = random.choices(["trade", "order", "replace", "cancel", "cancel all"], [35, 30, 15, 15, 5])[0]
                await self.send(member, process, kind, portfolio)
            await asyncio.sleep(0.03)

    async def send(self, member, process, kind, portfolio):
        """One request of the member's on the portfolio (kept, with when it was sent and
        answered, to be judged at the end against the member's seats then)."""
        client = self.clients[process]
        token = member.token
        headers = None
        if kind == "read":
            method, path, body = "GET", f"/api/portfolio?portfolioId={portfolio}", None
        elif kind == "trade":
            side = random.choice(["buy", "buy", "sell"])
            amount = random.choice([1_000, 100_000]) if random.random() < 1 / 3 else random.randint(1, 5)
            method, path, body = "POST", f"/api/stock/{side}", {"symbol": random.choice(self.symbols), "amount": amount, "portfolioId": portfolio}
            if self.keyed:
                headers = {"Idempotency-Key": uuid.uuid4().hex}
        elif kind == "order":
            method, path, body = "POST", "/api/orders", self.resting_order(portfolio)
        elif kind == "cancel all":
            method, path, body = "DELETE", f"/api/orders?portfolioId={portfolio}", None
        else:
            # Another's open order on the portfolio if there is one (a teammate's), else any of it.
            status, page, _ = await client.request("GET", f"/api/orders?portfolioId={portfolio}", token)
            items = page.get("items", []) if status == 200 and isinstance(page, dict) else []
            others = [o for o in items if o.get("placedBy") != member.user_id] or items
            if not others:
                return
            target = random.choice(others)
            if kind == "cancel":
                method, path, body = "DELETE", f"/api/orders/{target['id']}", None
            else:
                method, path, body = "PATCH", f"/api/orders/{target['id']}", self.replacement(target)
            self.counts[f"{kind}s of a teammate's order tried"] += target.get("placedBy") != member.user_id
        sent = time.monotonic()
        status, answer, _ = await client.request(method, path, token, body, headers=headers)
        answered = time.monotonic()
        code = answer.get("code") if isinstance(answer, dict) and status >= 400 else None
        self.requests.append({"member": member.index, "kind": kind, "portfolio": portfolio, "process": process, "sent": sent,
                              "answered": answered, "status": status, "code": code, "path": path})
        if status in (200, 201):
            if kind == "trade":
                member.trades[answer["trade"]["id"]] = portfolio
                if headers is None:
                    self.unkeyed.add(answer["trade"]["id"])
                self.result.check(answer["trade"].get("placedBy") == member.user_id, f"a team trade's answer: {answer['trade']}")
            elif kind in ("order", "replace"):
                member.orders[answer["id"]] = portfolio
                # Read back after it was placed: an erasure that began meanwhile has made its placer unknown.
                placer_ok = answer.get("placedBy") == member.user_id or (member.gone and answer.get("placedBy") is None)
                self.result.check(placer_ok and answer.get("portfolioId") == portfolio, f"a team order's answer: {answer}")
            self.counts[f"{kind} ok"] += 1
        return status

    def resting_order(self, portfolio):
        """A limit buy of HOST at 10.00 (rests while HOST is up, fills when it drops) or at
        9.00 (rests; sometimes too big for the cash), or a limit sell of an R symbol above
        its quote (rests with its shares; sometimes more than the team holds)."""
        roll = random.random()
        if roll < 0.6:
            return {"symbol": "HOST", "side": "buy", "quantity": random.randint(1, 3), "type": "limit", "limitPrice": HOST_LIMITS[0],
                    "timeInForce": "gtc", "portfolioId": portfolio}
        if roll < 0.8:
            return {"symbol": "HOST", "side": "buy", "quantity": random.choice([1, 2, 5000]), "type": "limit", "limitPrice": HOST_LIMITS[1],
                    "timeInForce": "gtc", "portfolioId": portfolio}
        symbol = random.choice(self.symbols)
        return {"symbol": symbol, "side": "sell", "quantity": random.choice([1, 2, 10_000]), "type": "limit",
                "limitPrice": f"{float(self.prices[symbol]) * 1.2:.2f}", "timeInForce": "gtc", "portfolioId": portfolio}

    def replacement(self, order):
        if order.get("symbol") == "HOST":
            return {"quantity": random.choice([1, 2, 3, 5000]), "limitPrice": random.choice(HOST_LIMITS)}
        return {"quantity": random.choice([1, 3, 10_000]), "limitPrice": f"{float(self.prices[order['symbol']]) * random.choice([1.1, 1.2]):.2f}"}

    # The host.

    async def schedule(self, deadline, seconds):
        start = deadline - seconds
        try:
            for at, step in [(0.3, self.move), (0.45, self.demote), (0.62, self.erase)]:
                await asyncio.sleep(max(0, start + at * seconds - time.monotonic()))
                began = time.monotonic()
                await step()
                self.steps.append((round(began - start, 1), round(time.monotonic() - began, 1)))
        finally:
            self.done = True

    async def seat(self, member, team, role, process):
        """The host seats the member on the team with the role (on one process); the answer
        lists it there; the member's seats change at the answer."""
        lid = self.league["id"]
        sent = time.monotonic()
        status, answer, _ = await self.clients[process].request(
            "PUT", f"/api/leagues/{lid}/teams/{self.teams[team]['id']}/members/{member.user_id}", self.host[0], {"role": role})
        answered = time.monotonic()
        ok = status == 200 and {"userId": member.user_id, "username": member.username, "role": role} in answer.get("members", [])
        self.result.check(ok, f"seating {member.name} on {TEAMS[team]} as {role}: {status} {answer}")
        if status == 200:
            self.acted("league.team_member", member.user_id)
            member.change(sent, answered, team, role)
        return sent, answered, await self.clock()

    async def probe(self, member, since, requests):
        """For CHANGE_PROBES seconds from the change's answer (at least once), on both
        processes at once, the member's `requests` ((kind, portfolio), judged with the rest)."""
        async def on(process):
            while True:
                for kind, portfolio in requests:
                    await self.send(member, process, kind, portfolio)
                if time.monotonic() - since >= CHANGE_PROBES:
                    break
                await asyncio.sleep(0.02)
        await asyncio.gather(*(on(process) for process in range(len(self.clients))))

    async def move(self):
        """A trader of Bulls becomes a trader of Bears (on the first process): Bulls' portfolio
        is no longer its (404), Bears' is."""
        member = self.members[MOVED]
        old = self.portfolio(member.team)
        sent, answered, at = await self.seat(member, 1, "trader", 0)
        self.changes["moved"] = {"member": member.name, "at": at, "answered": answered, "sent": sent, "old portfolio": old}
        await self.probe(member, answered, [("trade", old), ("order", old), ("cancel all", old), ("trade", self.portfolio(1))])

    async def demote(self):
        """A trader of Bears becomes its viewer (on the second process): every trade, order,
        cancel and replacement of its from then on is 403 not_a_trader."""
        member = self.members[DEMOTED]
        portfolio = self.portfolio(member.team)
        sent, answered, at = await self.seat(member, member.team, "viewer", 1)
        self.changes["demoted"] = {"member": member.name, "at": at, "answered": answered, "sent": sent}
        await self.probe(member, answered, [("trade", portfolio), ("order", portfolio), ("cancel all", portfolio), ("cancel", portfolio)])

    async def erase(self):
        """The host erases a trader of Owls (a roster student) while it trades (on the first
        process): the team's portfolio and trades stay whole, who placed its trades becomes
        unknown (null), and its token is refused everywhere."""
        member = self.members[ERASED]
        lid = self.league["id"]
        member.own_portfolios = [int(p) for p, in await self.database.query_async(f"SELECT id FROM portfolios WHERE user_id = {member.user_id}")]
        sent = time.monotonic()
        member.erasing = True
        status, answer, _ = await self.clients[0].request("DELETE", f"/api/leagues/{lid}/members/{member.user_id}/account", self.host[0])
        member.erased_at = time.monotonic()
        self.result.check(status == 204, f"erasing {member.name}: {status} {answer}")
        if status == 204:
            self.acted("league.member_delete", member.user_id)
            member.change(sent, member.erased_at, None, "erased")
        self.changes["erased"] = {"member": member.name, "answered in s": round(member.erased_at - sent, 2)}

    # After the load.

    def allowed(self, member, request):
        """The outcomes a request may have had, from the member's seats while it was in
        flight: a seat changed before it was sent holds; one changed while it was in flight
        may or may not have."""
        seats = member.seats
        base = max(i for i, (_, answered, _, _) in enumerate(seats) if answered < request["sent"])
        possible = [seats[base]] + [s for s in seats[base + 1:] if s[0] < request["answered"]]
        outcomes = set()
        for _, answered, team, role in possible:
            if role == "erased":
                # In flight as the account went: anything but a viewer's; from ENDED_SETTLES after the answer only 401.
                outcomes |= {"ended"} if request["sent"] > answered + ENDED_SETTLES else {"ok", "refused", "ended", "stranger", "conflict"}
            elif team is None or self.portfolio(team) != request["portfolio"]:
                outcomes.add("stranger")
            elif request["kind"] == "read":
                outcomes.add("ok")
            elif role == "trader":
                outcomes |= {"ok", "refused"}
            else:
                outcomes.add("viewer")
        return outcomes

    def judge(self):
        """Every request's answer was one its member's seats allowed; a viewer's never traded."""
        wrong, after = [], collections.Counter()
        for request in self.requests:
            member = self.members[request["member"]]
            outcome = OUTCOMES.get((request["status"], request["code"]))
            allowed = self.allowed(member, request)
            if outcome not in allowed:
                wrong.append((member.name, request["kind"], request["process"], request["status"], request["code"], sorted(allowed)))
            if outcome == "viewer":
                self.counts["viewer requests refused (403)"] += 1
            if outcome == "ok" and allowed == {"viewer"}:
                self.counts["viewer requests that traded"] += 1
            if member.index == ERASED and member.erased_at is not None and request["sent"] > member.seats[-1][0]:
                window = "after 1 s" if request["sent"] > member.erased_at + ENDED_SETTLES else "in flight or within 1 s"
                self.counts[f"erased trader's requests {window}: {request['status']}"] += 1
            for name, index in (("moved", MOVED), ("demoted", DEMOTED)):
                change = self.changes.get(name)
                if change and member.index == index and request["sent"] > change["answered"] and request["kind"] != "read" and (
                        name == "demoted" or request["portfolio"] == change["old portfolio"]):
                    after[(name, request["process"], outcome)] += 1
        self.result.check(not wrong, f"team requests answered other than their seats allow ({len(wrong)}): {wrong[:5]}")
        return wrong, after

    async def check(self):
        database, lid = self.database, self.league["id"]
        wrong, after = self.judge()
        # HOST ended at 10.00: the teams' limit buys at that price fill (the matcher's sweep) before anything is counted.
        joined = ",".join(str(t["portfolioId"]) for t in self.teams)
        for _ in range(40):
            pending = int((await database.query_async(
                f"SELECT count(*) FROM orders WHERE portfolio_id IN ({joined}) AND status = 'new' AND symbol = 'HOST' AND limit_price >= {HOST_LIMITS[0]}"))[0][0])
            if not pending:
                break
            await asyncio.sleep(0.25)
        self.result.check(not pending, f"{pending} team limit buys of HOST at {HOST_LIMITS[0]} never filled")
        # Each change was refused on both processes from the first request after its answer.
        for name, refusal in (("moved", "stranger"), ("demoted", "viewer")):
            per_process = [sum(n for (c, p, o), n in after.items() if c == name and p == process) for process in range(len(self.clients))]
            others = {f"{c} {p} {o}": n for (c, p, o), n in after.items() if c == name and o != refusal}
            self.result.check(all(per_process) and not others, f"requests after the {name} member's change: {per_process} per process, not refused: {others}")
        ids = [t["portfolioId"] for t in self.teams]
        erased = self.members[ERASED]
        # The teams' portfolios pass the ledger checks (HOST is back at 10.00).
        found, violations, unkeyed = map(int, (await database.query_async(portfolio_ledger(ids)))[0])
        unkeyed_ids = {int(t) for t, in await database.query_async(
            f"SELECT t.id FROM trades t WHERE t.portfolio_id IN ({joined}) AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id) "
            f"AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.trade_id = t.id)")}
        # (An erased trader's keys went with its account.)
        expected_unkeyed = self.unkeyed | set(erased.trades)
        self.result.check(found == len(ids) and violations == 0 and unkeyed_ids <= expected_unkeyed,
                          f"team portfolios: {found} of {len(ids)} found, {violations} violations, "
                          f"{len(unkeyed_ids - expected_unkeyed)} trades tied to no order or key that were not sent without one")
        # Every trade and order on them is an acknowledged one, placed by whom sent it (null: the erased).
        trades = {int(t): (int(p), int(b) if b else None, int(o) if o else None) for t, p, b, o in await database.query_async(
            f"SELECT t.id, t.portfolio_id, coalesce(t.placed_by::text, ''), coalesce((SELECT o.id::text FROM orders o WHERE o.trade_id = t.id), '') "
            f"FROM trades t WHERE t.portfolio_id IN ({joined})")}
        orders = {int(o): (int(p), int(b) if b else None, s, int(r) if r else None, c) for o, p, b, s, r, c in await database.query_async(
            f"SELECT id, portfolio_id, coalesce(placed_by::text, ''), status, coalesce(replaces::text, ''), created_at FROM orders "
            f"WHERE portfolio_id IN ({joined})")}
        placer = {}  # order id -> member
        for member in self.members:
            for order in member.orders:
                placer[order] = member
        acked_trades = {t: (m, p) for m in self.members for t, p in m.trades.items()}

        def by(member):
            return None if member is erased else member.user_id
        missing = [t for t, (m, p) in acked_trades.items() if t not in trades or trades[t][0] != p]
        misplaced = [t for t, (m, p) in acked_trades.items() if t in trades and trades[t][1] != by(m)]
        foreign = [t for t, (p, b, o) in trades.items()
                   if t not in acked_trades and not (o and o in placer) and not (erased is not None and b is None)]
        fills_misplaced = [t for t, (p, b, o) in trades.items() if o in placer and b != by(placer[o])]
        lost = [o for m in self.members for o, p in m.orders.items() if o not in orders or orders[o][0] != p]
        orders_misplaced = [o for o, (p, b, s, r, c) in orders.items() if o in placer and b != by(placer[o])]
        # An order the erased trader's request placed just before the erasure may have been
        # answered as the erasure left it (401, 404): it is kept, placed by no one.
        placer_names = {m.user_id: m.name for m in self.members}
        unknown = [o for o in orders if o not in placer and not (erased is not None and orders[o][1] is None)]
        viewers = {m.user_id for m in self.members if m.seats[0][3] == "viewer"}
        by_viewers = [t for t, (p, b, o) in trades.items() if b in viewers] + [o for o, v in orders.items() if v[1] in viewers]
        self.result.check(not (missing or misplaced or foreign or fills_misplaced or lost or orders_misplaced or unknown or by_viewers),
                          f"team trades: {len(missing)} acknowledged missing, {len(misplaced)} placed by another, {len(foreign)} not acknowledged, "
                          f"{len(fills_misplaced)} fills not their order's placer; orders: {len(lost)} lost, {len(orders_misplaced)} placed by another, "
                          f"{len(unknown)} not acknowledged {[(o, orders[o], placer_names.get(orders[o][1])) for o in unknown[:3]]}; by a viewer: {by_viewers[:5]}")
        nulls = sorted(t for t, (p, b, o) in trades.items() if b is None)
        erased_trades = sorted(set(erased.trades) | {t for t, (p, b, o) in trades.items() if o and placer.get(o) is erased})
        self.result.check(nulls == erased_trades and all(orders[o][1] is None for o in erased.orders if o in orders),
                          f"trades placed by no one: {len(nulls)}, the erased trader's: {len(erased_trades)}")
        # Nothing placed, on their old seat, after the move or the demotion was committed (a resting order's fill is its order's).
        late = []
        for name, index, portfolio in (("moved", MOVED, self.changes["moved"]["old portfolio"]), ("demoted", DEMOTED, self.portfolio(1))):
            rows = await database.query_async(f"""
                SELECT (SELECT count(*) FROM orders WHERE portfolio_id = {portfolio} AND placed_by = {self.members[index].user_id}
                        AND created_at > '{self.changes[name]["at"]}'),
                       (SELECT count(*) FROM trades t WHERE t.portfolio_id = {portfolio} AND t.placed_by = {self.members[index].user_id}
                        AND t.created_at > '{self.changes[name]["at"]}' AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id))""")
            late += [(name, int(n)) for n in rows[0] if int(n)]
        self.result.check(not late, f"orders or trades placed after the seat changed: {late}")
        prices = [r[0] for r in await database.query_async(f"SELECT DISTINCT price FROM trades WHERE symbol = 'HOST' AND portfolio_id IN ({joined})")]
        self.result.check(all(float(p) == float(HOST_LIMITS[0]) for p in prices), f"team HOST fills at {prices}")
        # The standings rank exactly the teams, with their members now.
        present = [m for m in self.members if m.erased_at is None]
        expected = {t["id"]: (t["name"], sorted((m.username for m in present if m.team == i), key=str.lower)) for i, t in enumerate(self.teams)}
        _, board, _ = await self.clients[1].request("GET", f"/api/leagues/{lid}/leaderboard?limit=50", self.host[0])
        items = board.get("items", []) if isinstance(board, dict) else []
        ranked = {s.get("teamId"): (s.get("teamName"), s.get("members")) for s in items}
        self.result.check(ranked == expected and board.get("total") == len(TEAMS) and all(s.get("userId") is None and s.get("username") is None for s in items),
                          f"the team league's standings: {ranked}, expected {expected}")
        # The gradebook: a row per student (the erased one gone), its team's rank and figures, its own trades.
        status, text, _ = await self.clients[0].request("GET", f"/api/leagues/{lid}/report.csv", self.host[0])
        if status == 200:
            self.acted("league.report_export")
        rows = list(csv.DictReader(io.StringIO(text))) if status == 200 and isinstance(text, str) else []
        filled = {o for o, v in orders.items() if v[2] == "filled"}
        own = {m.username: len(m.trades) + sum(o in filled for o in m.orders) for m in present}
        placed = {int(b): int(n) for b, n in await database.query_async(
            f"SELECT placed_by, count(*) FROM trades WHERE portfolio_id IN ({joined}) AND placed_by IS NOT NULL GROUP BY 1")}
        rank = {s.get("teamName"): (str(s.get("rank")), s.get("netWorth")) for s in items}
        graded = {r["username"]: (r["team"], int(r["trades"]), (r["rank"], r["netWorth"])) for r in rows}
        wanted = {m.username: (TEAMS[m.team], own[m.username], rank.get(TEAMS[m.team])) for m in present}
        self.result.check(status == 200 and graded == wanted and len(rows) == len(present)
                          and all(placed.get(m.user_id, 0) == own[m.username] for m in present),
                          f"the gradebook: {status}, {graded}, expected {wanted}; placed_by counts {placed}")
        # The audit log: one event per host action acknowledged, each by the host, naming whom it touched.
        events = await database.query_async(
            f"SELECT actor_id, action, coalesce(target_user_id::text, '') FROM audit_events WHERE league_id = {lid} ORDER BY id")
        logged = collections.Counter((a, int(t) if t else None) for _, a, t in events)
        self.result.check(logged == collections.Counter(self.audited) and {int(a) for a, _, _ in events} == {self.host[1]},
                          f"the team league's audit log: {sorted(logged.items(), key=str)}, expected {sorted(collections.Counter(self.audited).items(), key=str)}")
        # Nothing is left of the erased trader but the team's trades (placed by no one).
        columns = await database.query_async(LEFTOVER_COLUMNS)
        left = [(name, int(n)) for name, n in await database.query_async(leftovers(columns, [erased.user_id], erased.own_portfolios)) if int(n)]
        seats = int((await database.query_async(f"SELECT count(*) FROM team_members WHERE user_id = {erased.user_id}"))[0][0])
        self.result.check(not left and seats == 0, f"the erased trader's rows left: {left}, seats {seats}")
        failed = sum(n for c in self.clients for status, n in c.statuses.items() if status >= 500 or status == 0)
        problems = [p for c in self.clients for p in c.problems]
        self.result.check(failed == 0 and not problems, f"the team league's requests: {failed} 5xx or failed, not problem+json: {problems[:3]}")
        for client in self.clients:
            await client.close()
        after_figures = {f"{c} on process {p}: {o}": n for (c, p, o), n in sorted(after.items())}
        return {
            "team members": len(self.members), "team requests": len(self.requests), "team trades": len(trades),
            "team trades by market": sum(len(m.trades) for m in self.members), "team orders": len(orders),
            "team orders filled": len(filled), "team replacements": self.counts["replace ok"], "team cancels": self.counts["cancel ok"],
            "team cancel-alls": self.counts["cancel all ok"], "teammates' orders cancelled or replaced (tried)":
                self.counts["cancels of a teammate's order tried"] + self.counts["replaces of a teammate's order tried"],
            "team refusals (funds, shares, not open)": sum(1 for r in self.requests if OUTCOMES.get((r["status"], r["code"])) == "refused"),
            "viewer requests refused (403)": self.counts["viewer requests refused (403)"],
            "viewer requests that traded": self.counts["viewer requests that traded"],
            "requests after a seat changed": after_figures,
            "erased trader's requests (by status)": {k[len("erased trader's requests "):]: n for k, n in self.counts.items() if k.startswith("erased trader's")}, "team requests not as their seats allow": len(wrong),
            "team ledger violations": violations, "team trades placed by no one (the erased trader's)": len(nulls),
            "team standings": {name: len(m) for name, m in expected.values()}, "gradebook trades per student": own,
            "team audit events": dict(collections.Counter(a for a, _ in self.audited)), "team host actions refused (none logged)": len(self.refused_actions),
            "team seat changes": {k: {x: y for x, y in v.items() if x in ("member", "answered in s")} if isinstance(v, dict) else v
                                  for k, v in self.changes.items()},
            "team host steps (at s, taking s)": self.steps, "team 5xx or failed": failed,
        }
