"""A teacher's league in the reliability suite (the host controls of docs/leagues.md): a
host who does not play (`"ownerPlays": false`) runs an isolated league whose pupils trade
its portfolios and keep resting orders filling, on two server processes, while the host
freezes and unfreezes trading, resets a pupil's league portfolio as its orders fill, and
pupils reset their own (`"resetsAllowed"`) with several requests at once. Part of the
class is a class roster (accounts the host made, `POST /api/leagues/{id}/roster`): the
host resets one's password and erases another while it trades; a self-registered pupil
erases their own account (`DELETE /api/me`). Every host action is in the league's audit
log exactly once.

`ClassPlay` is the conservation scenario's part; `check` ends it with figures."""
import asyncio
import collections
import random
import re
import time
import uuid

from harness import (LEFTOVER_COLUMNS, PASSWORD, WORTH_DRIFT, Client, alpaca_error, alpaca_headers, leftovers,
                     portfolio_ledger)

# HOST's quote moves between these two: the pupils' limit buys at the lower one rest while
# it is at the higher one and fill when it drops. Every HOST fill is at the lower price
# (checked at the end), so a HOST holder is worth what was paid in when HOST is valued at
# it: the conservation scenario's snapshots, taken while HOST moves, value it so
# (`WORTH_DRIFT_HOST_AT_COST`); at the end HOST is back there and WORTH_DRIFT holds as it is.
HOST_PRICES = ("10.50", "10.00")
STARTING_CASH = "20000.00"
RESETS_ALLOWED = 2
# Self-registered pupils (0-7, each with a part in the host's steps), then one more who
# erases their own account mid-run (LEAVER), then the class roster the host creates: the
# names as the host types them (ROSTER_PUPIL: the one whose password the host resets;
# ERASED_PUPIL: the one the host erases while it trades).
PUPILS = 8
LEAVER = PUPILS
ROSTER = ["Ana Lima", "Björn Ærø", "Zoë O'Neil", "李雷"]
ROSTER_PUPIL = PUPILS + 1
ERASED_PUPIL = PUPILS + 2
# A reset password's old token, and an erased account's tokens and keys, are refused on
# every process within this long of the answer (the stream outbox announces them): every
# request sent later must be 401. Each is probed on both processes for PROBE_FOR seconds.
ENDED_SETTLES = 1.0
PROBE_FOR = 2.0
# Freezes and unfreezes sent at once, alternating between the two processes.
AT_ONCE = 6
# A key stops working on the old portfolio (and works on the new one) within the lifetime
# of the processes' key caches (docs/bots.md).
KEY_CACHE = 2.0
FROZEN = "Trading frozen"
RESUMED = "Trading resumed"
RESET = "League portfolio reset"
HOST_AT_COST = f"sum(CASE v.symbol WHEN 'HOST' THEN v.quantity * {HOST_PRICES[1]} ELSE v.value END)"
WORTH_DRIFT_HOST_AT_COST = WORTH_DRIFT.replace("sum(v.value)", HOST_AT_COST)
assert WORTH_DRIFT_HOST_AT_COST != WORTH_DRIFT


def ledger_host_at_cost(ids):
    """`portfolio_ledger` valuing HOST at its lower price (for a check while HOST moves)."""
    query = portfolio_ledger(ids)
    assert query.count("sum(v.value)") == 1
    return query.replace("sum(v.value)", HOST_AT_COST)


class Pupil:
    def __init__(self, index, token, user_id, username=None, password=PASSWORD, managed=False):
        self.index = index
        self.token = token
        self.user_id = user_id
        self.username = username
        self.password = password
        self.managed = managed  # a student of the host's class roster
        self.portfolio = None  # the live league portfolio
        self.portfolios = []  # every league portfolio it had
        self.trades = {}  # acknowledged market trade id -> portfolio
        self.orders = {}  # acknowledged order id -> portfolio
        self.resets = 0  # every reset of its portfolio
        self.own_resets = 0
        self.key = None  # an API key on its league portfolio (the pupils erased mid-run)
        self.paused = False
        self.inflight = 0
        # Its tokens ended by a password reset or the account's erasure -> when that was answered (monotonic).
        self.dead = {}
        self.ending = None  # "reset" or "erased" from the moment the request that ends its token is sent
        self.erased_at = None
        self.new_password = None  # set once a reset's new password is known
        self.relogins = 0
        self.acked_after_relogin = 0  # trades and orders acknowledged once logged in again

    @property
    def watched(self):
        """Its requests are kept to be checked against the end of its tokens."""
        return self.index in (LEAVER, ROSTER_PUPIL, ERASED_PUPIL)

    @property
    def gone(self):
        return self.ending == "erased" or self.erased_at is not None


class ClassPlay:
    """The host's league under load; `tasks` runs the pupils, HOST's quote and the host."""

    def __init__(self, result, database, bases, admin, symbols):
        self.result = result
        self.database = database
        # A client of its own per server process (checked for 5xx and problem+json at the end).
        self.clients = [Client(base, connections=24) for base in bases]
        self.admin = admin
        self.symbols = list(symbols)
        self.host = None
        self.league = None
        self.pupils = []
        self.key = None  # pupil 0's API key on its league portfolio
        self.hold_up = False  # HOST stays up (orders rest) until the host lets it drop
        self.keep = set()  # orders the host's steps placed for pupils: their traders leave them be
        self.rose = asyncio.Event()
        self.dropped = asyncio.Event()
        self.freezes = []
        self.previous = {}  # archived portfolio -> (pupil index, when its reset was answered, epoch s)
        self.not_found = []  # (pupil index, portfolio) of every 404 a pupil got on its league portfolio
        self.counts = {"trades": 0, "refused": 0, "orders": 0, "orders filled at once": 0, "cancels": 0,
                       "refused while frozen": 0, "v2 orders": 0, "with a note": 0, "refused without a note": 0}
        self.journal = {}  # the window in which the league asked for notes (times, on both clocks)
        self.unnoted_while_required = []
        self.traded_while_frozen = []
        self.done = False  # the host's schedule has run (on a slow machine, past the deadline)
        self.steps = []  # (seconds into the load, seconds taken) of each step of the host's
        self.account_steps = []  # the same of the password reset and the two erasures
        self.host_reset = {}
        self.own = {}
        self.failures = 0
        self.running_schedules = 2  # the host's steps and the accounts' (both must have run)
        # The audit log: every host action acknowledged (action, target user id or None),
        # and every one refused (none may be logged).
        self.audited = []
        self.refused_actions = []
        self.audit_seen = {}  # audit event id -> md5 of its row, as first read
        self.audit_samples = {"taken": 0, "counts": [], "changed or gone": []}
        # Every request of the pupils whose token or key ends (their traders' and the probes'): who sent
        # it, the pupil, the token or key id, when it was sent, the process, the answer and what it
        # would have written (an Idempotency-Key or a client order id); checked against the end.
        self.ended = []
        self.erasures = []  # figures of each erasure
        self.password_reset = {}
        self.roster = []  # the host's roster answer

    def acted(self, action, target=None):
        self.audited.append((action, target))

    def present(self):
        """The pupils whose accounts are not being or have not been erased."""
        return [p for p in self.pupils if not p.gone]

    def fail(self, message):
        self.failures += 1
        if self.failures <= 20:
            self.result.check(False, message)

    async def clock(self):
        """The database's clock now (its trades and orders are dated by it)."""
        return (await self.database.query_async("SELECT clock_timestamp()"))[0][0]

    async def live_portfolio(self, pupil):
        _, mine, _ = await self.clients[0].request("GET", "/api/portfolios", pupil.token)
        return [p["id"] for p in mine if p.get("leagueId") == self.league["id"]]

    async def prepare(self, host, pupils):
        """HOST at its higher price; the league, hosted without a seat; the pupils seated
        (on either process), each with one league portfolio of the starting cash: the
        self-registered ones, one more who will leave (registered here), and the class
        roster the host creates, who log in with the credentials the answer shows; an API
        key on pupil 0's league portfolio, and on those of the two pupils erased mid-run."""
        client = self.clients[0]
        status, answer, _ = await client.request("PUT", "/api/admin/instruments", self.admin, [{"symbol": "HOST", "name": "Host Corp"}])
        assert status == 200, answer
        await self.quote(HOST_PRICES[0])
        self.host = host
        status, league, _ = await client.request("POST", "/api/leagues/create", host[0], {
            "name": "Class", "mode": "isolated", "startingCash": STARTING_CASH, "ownerPlays": False, "resetsAllowed": RESETS_ALLOWED,
            "deleteManagedAfterDays": 30})
        assert status == 201, league
        self.league = league
        self.result.check(league["ownerPlays"] is False and league["memberCount"] == 0 and league["resetsAllowed"] == RESETS_ALLOWED
                          and league["frozen"] is False and league["frozenReason"] is None and league["deleteManagedAfterDays"] == 30,
                          f"the host's league: {league}")
        leaver = await client.register("leaver")
        for index, (token, user_id) in enumerate(list(pupils) + [leaver]):
            status, joined, _ = await self.clients[index % 2].request("POST", f"/api/leagues/join/{league['code']}", token)
            assert status == 200, joined
            await self.seat(Pupil(index, token, user_id, username=f"pupil{index}" if index < PUPILS else "leaver"))
        # The class roster: one request, all of them seated (on the second process); each logs in
        # with what the answer shows and is shown by the name the host typed, managed by the host.
        status, roster, _ = await self.clients[1].request("POST", f"/api/leagues/{league['id']}/roster", host[0],
                                                          {"students": [{"displayName": name} for name in ROSTER]})
        assert status == 201, roster
        self.acted("league.roster_create")
        students = roster["students"]
        self.roster = [{k: v for k, v in s.items() if k != "password"} for s in students]
        self.result.check([s["displayName"] for s in students] == ROSTER and len({s["userId"] for s in students}) == len(ROSTER)
                          and all(re.fullmatch(r"[a-z0-9_-]{3,32}", s["username"]) and len(s["password"]) >= 12 for s in students),
                          f"the class roster: {self.roster}")
        for offset, student in enumerate(students):
            other = self.clients[offset % 2]
            status, session, _ = await other.request("POST", "/api/auth/login", body={"username": student["username"], "password": student["password"]})
            assert status == 200, (student["username"], session)
            _, me, _ = await self.clients[1 - offset % 2].request("GET", "/api/me", session["token"])
            self.result.check(me.get("id") == student["userId"] and me.get("displayName") == student["displayName"]
                              and me.get("managedBy") == host[1], f"a roster student's account: {me}")
            await self.seat(Pupil(PUPILS + 1 + offset, session["token"], student["userId"], username=student["username"],
                                  password=student["password"], managed=True))
        _, hosted, _ = await client.request("GET", f"/api/leagues/{league['id']}", host[0])
        _, listed, _ = await client.request("GET", "/api/leagues", host[0])
        seats = await self.live_portfolio(Pupil(-1, *host))
        self.result.check(hosted.get("memberCount") == len(self.pupils) and host[1] not in [m["userId"] for m in hosted.get("members", [])]
                          and league["id"] in [item["id"] for item in listed] and not seats,
                          f"a host without a seat: {hosted.get('memberCount')} members, leagues {[item['id'] for item in listed]}, seats {seats}")
        status, self.key, _ = await client.request("POST", "/api/api-keys", self.pupils[0].token, {"portfolioId": self.pupils[0].portfolio})
        assert status == 201, self.key
        for pupil in (self.pupils[LEAVER], self.pupils[ERASED_PUPIL]):
            status, pupil.key, _ = await client.request("POST", "/api/api-keys", pupil.token, {"portfolioId": pupil.portfolio})
            assert status == 201, pupil.key

    async def seat(self, pupil):
        """The pupil's one league portfolio, found as it sees it."""
        seats = await self.live_portfolio(pupil)
        self.result.check(len(seats) == 1, f"pupil {pupil.index}'s league portfolios: {seats}")
        pupil.portfolio = seats[0]
        pupil.portfolios.append(seats[0])
        self.pupils.append(pupil)

    async def quote(self, price):
        for _ in range(20):
            status, _, _ = await self.clients[0].request("POST", "/api/admin/quotes", self.admin, [{"symbol": "HOST", "price": price}])
            if status == 200:
                return
            await asyncio.sleep(0.1)
        self.fail(f"HOST's quote could not be set to {price}")

    def tasks(self, deadline, seconds):
        return [self.trader(pupil, deadline) for pupil in self.pupils] + [
            self.mover(deadline), self.schedule(deadline, seconds), self.account_schedule(deadline, seconds), self.audit_watch(deadline)]

    def running(self, deadline):
        """Until the deadline, and on a slow machine until the host's schedule has run."""
        return time.monotonic() < deadline or not self.done

    async def mover(self, deadline):
        """HOST up for 0.4 s, down for 0.6 s, until the end (and down at the end)."""
        while self.running(deadline):
            await self.quote(HOST_PRICES[0])
            self.rose.set()
            self.rose = asyncio.Event()
            await asyncio.sleep(0.4)
            while self.hold_up:
                await asyncio.sleep(0.05)
            await self.quote(HOST_PRICES[1])
            self.dropped.set()
            self.dropped = asyncio.Event()
            await asyncio.sleep(0.6)

    # The pupils.

    async def trader(self, pupil, deadline):
        """Market trades of the R symbols (under Idempotency-Keys, a third sized to overdraw
        or oversell), limit and stop-limit buys of HOST at its lower price, and cancels of
        open orders, on either process, on whatever is the pupil's league portfolio. A pupil
        whose password the host resets logs in again with the new one once its token is
        refused; an erased pupil's trader goes on PROBE_FOR seconds after the erasure."""
        while self.running(deadline) and not (pupil.erased_at is not None and time.monotonic() > pupil.erased_at + PROBE_FOR):
            if pupil.paused:
                await asyncio.sleep(0.02)
                continue
            process = random.randrange(len(self.clients))
            portfolio = pupil.portfolio
            token = pupil.token
            roll = random.random()
            # Half the trades and orders carry a journal note (while the league asks for one, the others are refused).
            note = f"pupil {pupil.index}: reason {uuid.uuid4().hex[:8]}" if random.random() < 0.5 else None
            sent = time.monotonic()
            pupil.inflight += 1
            try:
                if roll < 0.5:
                    side = random.choice(["buy", "buy", "sell"])
                    amount = random.choice([1_000, 100_000]) if random.random() < 1 / 3 else random.randint(1, 5)
                    body = {"symbol": random.choice(self.symbols), "amount": amount, "portfolioId": portfolio}
                    if note:
                        body["note"] = note
                    key = uuid.uuid4().hex
                    status, answer = await self.send(pupil, process, "POST", f"/api/stock/{side}", token, body,
                                                     headers={"Idempotency-Key": key}, written=("idempotency", key))
                    if status == 200:
                        pupil.trades[answer["trade"]["id"]] = portfolio
                        self.counts["trades"] += 1
                        pupil.acked_after_relogin += pupil.relogins > 0
                    kind = "trade"
                elif roll < 0.9:
                    # A limit buy, or a stop-limit buy that HOST's rise triggers and its drop fills.
                    body = {"symbol": "HOST", "side": "buy", "quantity": random.randint(1, 3), "type": "limit",
                            "limitPrice": HOST_PRICES[1], "timeInForce": "gtc", "portfolioId": portfolio}
                    if roll >= 0.75:
                        body.update({"type": "stop_limit", "stopPrice": HOST_PRICES[0]})
                    if note:
                        body["note"] = note
                    written = None
                    if pupil.watched:  # (found by its client order id if it was written)
                        body["clientOrderId"] = f"pupil-{uuid.uuid4().hex}"
                        written = ("order", body["clientOrderId"])
                    status, answer = await self.send(pupil, process, "POST", "/api/orders", token, body, written=written)
                    if status == 201:
                        pupil.orders[answer["id"]] = portfolio
                        self.counts["orders"] += 1
                        self.counts["orders filled at once"] += answer["status"] == "filled"
                        pupil.acked_after_relogin += pupil.relogins > 0
                    kind = "order"
                else:
                    status, answer = await self.send(pupil, process, "GET", f"/api/orders?portfolioId={portfolio}", token)
                    kind = "read"
                    mine = [order["id"] for order in answer["items"] if order["id"] not in self.keep] if status == 200 else []
                    if mine and not self.hold_up:  # (while the host places orders to keep, they may be listed before they are kept)
                        status, answer = await self.send(pupil, process, "DELETE", f"/api/orders/{random.choice(mine)}", token)
                        self.counts["cancels"] += status == 200
                        kind = "cancel"
            finally:
                pupil.inflight -= 1
            self.judge(pupil, portfolio, kind, sent, time.monotonic(), status, answer, noted=note is not None, token=token)
            if status == 401 and (token in pupil.dead or pupil.ending == "reset"):
                await self.relogin(pupil, token)
            await asyncio.sleep(0.05)
            if status == 404 and pupil.portfolio == portfolio and not pupil.gone:
                seats = await self.live_portfolio(pupil)
                if len(seats) == 1 and pupil.portfolio == portfolio:
                    pupil.portfolio = seats[0]

    async def send(self, pupil, process, method, path, token, body=None, headers=None, written=None):
        """A pupil's request on one process; a watched pupil's is kept (with what it would
        have written) to be checked against the end of its token."""
        sent = time.monotonic()
        status, answer, _ = await self.clients[process].request(method, path, token, body, headers=headers)
        if pupil.watched:
            self.ended.append({"by": "trader", "pupil": pupil.index, "credential": token, "key": False, "sent": sent,
                               "process": process, "status": status, "answer": answer, "writes": written, "path": path})
        return status, answer

    async def relogin(self, pupil, token):
        """The pupil whose password was reset logs in with the new one (once it is known)."""
        if pupil.token != token or pupil.gone:
            return
        if pupil.new_password is None:
            self.fail(f"pupil {pupil.index}'s token was refused with no password reset")
            return
        try:
            await asyncio.wait_for(pupil.new_password.wait(), 10)
        except asyncio.TimeoutError:
            self.fail(f"pupil {pupil.index}'s new password never came")
            return
        status, answer, _ = await random.choice(self.clients).request(
            "POST", "/api/auth/login", body={"username": pupil.username, "password": pupil.password})
        if status == 200:
            pupil.token = answer["token"]
            pupil.relogins += 1
        else:
            self.fail(f"pupil {pupil.index} logging in with its new password: {status} {answer}")

    def judge(self, pupil, portfolio, kind, sent, answered, status, answer, noted=False, token=None):
        code = answer.get("code") if isinstance(answer, dict) else None
        journal = self.journal
        if (token in pupil.dead or pupil.ending) and (
                (status == 401 and code == "unauthorized")
                or (pupil.gone and ((status == 404 and code == "not_found") or (status == 409 and code == "conflict")))):
            # A token ended by a password reset or an erasure (an erased pupil's portfolio is
            # gone with it, or went while a request was using it): each is checked at the end
            # against when the end was answered.
            return
        if status in (200, 201) and kind in ("trade", "order"):
            self.counts["with a note"] += noted
            if not noted and journal.get("on answered", answered) < sent and answered < journal.get("off sent", answered + 1):
                self.unnoted_while_required.append((pupil.index, kind, answer))
        if status == 422 and code == "note_required" and kind in ("trade", "order"):
            self.counts["refused without a note"] += 1
            if noted or not (journal.get("on sent", answered + 1) <= answered and sent <= journal.get("off answered", sent)):
                self.fail(f"pupil {pupil.index}'s {kind} answered note_required outside the journal window (noted: {noted}): {answer}")
            return
        if status in (200, 201):
            if kind in ("trade", "order") and any(f.get("answered", sent) < sent and answered < f.get("unfreeze sent", answered + 1)
                                                  for f in self.freezes):
                self.traded_while_frozen.append((pupil.index, kind, answer))
            return
        if status == 409 and code == "trading_frozen" and kind in ("trade", "order"):
            self.counts["refused while frozen"] += 1
            if not any(f["sent"] <= answered and sent <= f.get("unfreeze answered", sent) for f in self.freezes):
                self.fail(f"pupil {pupil.index}'s {kind} answered trading_frozen outside a freeze: {answer}")
            return
        if status == 422 and code in ("insufficient_funds", "insufficient_shares"):
            self.counts["refused"] += 1
            return
        if status == 409 and code == "order_not_open" and kind == "cancel":
            return  # it filled, or a reset cancelled it, first
        if status == 404 and code == "not_found":
            self.not_found.append((pupil.index, portfolio))  # checked at the end: a portfolio a reset archived
            return
        self.fail(f"pupil {pupil.index}'s {kind} answered {status}: {answer}")

    # The host.

    async def schedule(self, deadline, seconds):
        start = deadline - seconds
        try:
            for at, step in [(0.2, lambda: self.freeze_window(AT_ONCE, "Quiz: eyes on the board", 2.5, probe_key=True)),
                             (0.42, self.reset_while_filling), (0.55, self.own_resets),
                             (0.7, lambda: self.freeze_window(1, None, 2.0, reset=self.pupils[3])),
                             (0.85, lambda: self.journal_window(2.0))]:
                await asyncio.sleep(max(0, start + at * seconds - time.monotonic()))
                began = time.monotonic()
                await step()
                self.steps.append((round(began - start, 1), round(time.monotonic() - began, 1)))
        finally:
            self.schedule_done()

    def schedule_done(self):
        self.running_schedules -= 1
        self.done = self.running_schedules == 0

    async def account_schedule(self, deadline, seconds):
        """Alongside the host's other steps: the host resets a roster student's password, a
        self-registered pupil erases their own account, and the host erases another roster
        student while it trades."""
        start = deadline - seconds
        try:
            for at, step in [(0.35, self.reset_password), (0.45, lambda: self.erase(self.pupils[LEAVER], own=True)),
                             (0.6, lambda: self.erase(self.pupils[ERASED_PUPIL], own=False))]:
                await asyncio.sleep(max(0, start + at * seconds - time.monotonic()))
                began = time.monotonic()
                await step()
                self.account_steps.append((round(began - start, 1), round(time.monotonic() - began, 1)))
        finally:
            self.schedule_done()

    async def moment(self, which):
        """Until HOST next rises or drops (`which`), at most 10 s."""
        try:
            await asyncio.wait_for(getattr(self, which).wait(), 10)
        except asyncio.TimeoutError:
            self.fail(f"HOST's quote never {which} within 10 s")

    async def resting(self):
        """The open orders of the league's portfolios (archived ones too)."""
        rows = await self.database.query_async(
            f"SELECT o.id FROM orders o JOIN portfolios p ON p.id = o.portfolio_id WHERE p.league_id = {self.league['id']} AND o.status = 'new'")
        return {int(row[0]) for row in rows}

    async def notices(self, title):
        """Notifications of `title` per pupil (user id -> count), the host's included: of
        the pupils whose accounts were not erased (or being erased) before or as they were read."""
        ids = ",".join(str(p.user_id) for p in self.pupils + [Pupil(-1, *self.host)])
        rows = await self.database.query_async(
            f"SELECT u.id, count(n.id) FROM users u LEFT JOIN notifications n ON n.user_id = u.id AND n.title = '{title}' "
            f"WHERE u.id IN ({ids}) GROUP BY u.id")
        kept = {p.user_id for p in self.present()} | {self.host[1]}
        return {int(u): int(n) for u, n in rows if int(u) in kept}

    async def told_once(self, title):
        """(told, expected): notices of `title` per pupil whose account is not erased (or
        being erased), and one per freeze so far for each; none for the host."""
        told = await self.notices(title)
        expected = {p.user_id: len(self.freezes) for p in self.present()} | {self.host[1]: 0}
        return {user: n for user, n in told.items() if user in expected}, expected

    async def freeze_window(self, at_once, reason, hold, probe_key=False, reset=None):
        """Freezes the league with `at_once` requests on both processes while HOST is held
        up (four pupils' limit buys placed just before rest), lets HOST drop and rise while
        it is frozen for `hold` seconds, and unfreezes it the same way. Every answer is the
        league frozen with the reason (then open), and each pupil was told once of each."""
        await self.moment("rose")
        self.hold_up = True
        league, token = self.league["id"], self.host[0]
        try:
            kept = {order for order in await asyncio.gather(*(self.rest(pupil) for pupil in self.pupils[4:PUPILS])) if order}
            window = {"sent": time.monotonic(), "at once": at_once, "kept": kept}
            self.freezes.append(window)
            body = {"reason": reason} if reason else None
            answers = await asyncio.gather(*(self.clients[i % 2].request("POST", f"/api/leagues/{league}/freeze", token, body)
                                             for i in range(at_once)))
        finally:
            self.hold_up = False
        window["answered"] = time.monotonic()
        window["frozen at"] = await self.clock()
        window["resting at freeze"] = await self.resting()
        wrong = [(s, a) for s, a, _ in answers if not (s == 200 and a.get("frozen") is True and a.get("frozenReason") == reason)]
        self.result.check(not wrong, f"{at_once} freezes at once: {wrong[:2]}")
        for status, _, _ in answers:
            if status == 200:
                self.acted("league.freeze")  # each of them, changing the league or not
        told, expected = await self.told_once(FROZEN)
        self.result.check(told == expected, f"'{FROZEN}' notices after {at_once} freezes at once: {told}, expected {expected}")
        window["told once"] = told == expected
        # Freezing a frozen league again changes nothing: the first reason stays.
        status, again, _ = await self.clients[1].request("POST", f"/api/leagues/{league}/freeze", token, {"reason": "Another reason"})
        self.result.check(status == 200 and again.get("frozen") is True and again.get("frozenReason") == reason,
                          f"freezing a frozen league: {status} {again}")
        if status == 200:
            self.acted("league.freeze")
        if probe_key:
            # Under /v2 a frozen league's key is refused with 403; its account says so.
            body = {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day",
                    "client_order_id": f"class-{uuid.uuid4().hex}"}
            statuses = []
            for client in self.clients:
                status, answer, _ = await client.request("POST", "/v2/orders", None, body, headers=alpaca_headers(self.key))
                account = (await client.request("GET", "/v2/account", None, headers=alpaca_headers(self.key)))[1]
                statuses.append((status, alpaca_error(403, answer) and answer["code"] == 40310000, account.get("trading_blocked")))
            self.result.check(statuses == [(403, True, True)] * 2, f"/v2 in a frozen league (status, Alpaca's 403, trading_blocked): {statuses}")
            window["v2 while frozen"] = statuses
        if reset:
            # A reset while frozen: the new portfolio is frozen too.
            made = await self.reset(reset, self.clients[0])
            if made:
                status, answer, _ = await self.clients[1].request("POST", "/api/stock/buy", reset.token,
                                                                  {"symbol": "R1", "amount": 1, "portfolioId": made["portfolioId"]})
                self.result.check(status == 409 and answer.get("code") == "trading_frozen",
                                  f"a portfolio made by a reset while frozen traded: {status} {answer}")
        await asyncio.sleep(max(0, window["answered"] + hold - time.monotonic()))
        window["resting at unfreeze"] = await self.resting()
        window["unfreeze at"] = await self.clock()
        window["unfreeze sent"] = time.monotonic()
        answers = await asyncio.gather(*(self.clients[i % 2].request("POST", f"/api/leagues/{league}/unfreeze", token)
                                         for i in range(at_once)))
        window["unfreeze answered"] = time.monotonic()
        wrong = [(s, a) for s, a, _ in answers if not (s == 200 and a.get("frozen") is False and a.get("frozenReason") is None)]
        self.result.check(not wrong, f"{at_once} unfreezes at once: {wrong[:2]}")
        for status, _, _ in answers:
            if status == 200:
                self.acted("league.unfreeze")
        told, expected = await self.told_once(RESUMED)
        self.result.check(told == expected, f"'{RESUMED}' notices after {at_once} unfreezes at once: {told}, expected {expected}")

    async def journal_window(self, hold):
        """The host asks for a journal note on every trade and order (through one process)
        for `hold` seconds, then no longer (through the other), while the pupils trade with
        and without notes."""
        league, token = self.league["id"], self.host[0]
        journal = self.journal
        journal["on sent"] = time.monotonic()
        status, answer, _ = await self.clients[0].request("PATCH", f"/api/leagues/{league}", token, {"journalRequired": True})
        journal["on answered"] = time.monotonic()
        journal["on at"] = await self.clock()
        self.result.check(status == 200 and answer.get("journalRequired") is True, f"asking for notes answered {status}: {answer}")
        if status == 200:
            self.acted("league.update")
        await asyncio.sleep(hold)
        journal["off at"] = await self.clock()
        journal["off sent"] = time.monotonic()
        status, answer, _ = await self.clients[1].request("PATCH", f"/api/leagues/{league}", token, {"journalRequired": False})
        journal["off answered"] = time.monotonic()
        self.result.check(status == 200 and answer.get("journalRequired") is False, f"no longer asking for notes answered {status}: {answer}")
        if status == 200:
            self.acted("league.update")

    async def reset(self, pupil, client, own=False):
        """One reset of the pupil's league portfolio, by the host (or the pupil): the answer
        names the pupil, its new portfolio and the one archived; trading the old one is 404."""
        before = pupil.portfolio
        path = f"/api/leagues/{self.league['id']}/reset" if own else f"/api/leagues/{self.league['id']}/members/{pupil.user_id}/reset"
        status, made, _ = await client.request("POST", path, pupil.token if own else self.host[0])
        ok = (status == 200 and made.get("userId") == pupil.user_id and made.get("previousPortfolioId") == before
              and made.get("resets") == pupil.resets + 1 and made.get("portfolioId") not in pupil.portfolios)
        answered = time.time()
        self.result.check(ok, f"resetting pupil {pupil.index} (portfolio {before}, {pupil.resets} resets): {status} {made}")
        if status != 200:
            return None
        if not own:
            self.acted("league.reset_member", pupil.user_id)
        self.adopt(pupil, made, own, answered)
        for other in self.clients:
            status, answer, _ = await other.request("POST", "/api/stock/buy", pupil.token, {"symbol": "R1", "amount": 1, "portfolioId": before})
            self.result.check(status == 404 and answer.get("code") == "not_found", f"a trade on portfolio {before} after its reset: {status} {answer}")
        return made

    async def rest(self, pupil):
        """A limit buy of HOST at its lower price for the pupil (on the first process),
        while HOST is up: it rests. Its id if it rests."""
        status, made, _ = await self.clients[0].request("POST", "/api/orders", pupil.token, {
            "symbol": "HOST", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": HOST_PRICES[1], "timeInForce": "gtc",
            "portfolioId": pupil.portfolio})
        if status == 201:
            pupil.orders[made["id"]] = made["portfolioId"]
            self.keep.add(made["id"])
        return made["id"] if status == 201 and made["status"] == "new" else None

    def adopt(self, pupil, made, own, answered):
        self.previous[made["previousPortfolioId"]] = (pupil.index, answered)
        pupil.portfolios.append(made["portfolioId"])
        pupil.portfolio = made["portfolioId"]
        pupil.resets += 1
        pupil.own_resets += own

    async def reset_while_filling(self):
        """The host resets pupil 0 (on the second process) just after HOST drops, with
        three of its limit buys resting and twelve more being placed: each is filled or
        cancelled by the reset, never both and never left open. Pupil 0's key then trades
        the new portfolio."""
        pupil = self.pupils[0]
        await self.moment("rose")
        self.hold_up = True
        try:
            known = set(pupil.orders)
            await asyncio.gather(*(self.rest(pupil) for _ in range(3)))
            placed = [order for order in pupil.orders if order not in known and pupil.orders[order] == pupil.portfolio]
        finally:
            self.hold_up = False
        await self.moment("dropped")
        await asyncio.sleep(random.uniform(0, 0.3))  # the matcher fills them meanwhile, on the first process
        # Twelve more limit buys, below any price HOST takes, sent 25 ms apart around the reset
        # (on the first process): each is placed before it (and cancelled by it) or refused
        # (404) after it.
        before = pupil.portfolio

        async def later(delay, request):
            await asyncio.sleep(delay)
            return await request

        racing = [later(0.025 * i, self.clients[0].request("POST", "/api/orders", pupil.token, {
            "symbol": "HOST", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "9.00", "timeInForce": "gtc",
            "portfolioId": before})) for i in range(12)]
        made, *raced = await asyncio.gather(later(0.1, self.reset(pupil, self.clients[1])), *racing)
        for status, answer, _ in raced:
            if status == 201:
                pupil.orders[answer["id"]] = before
                placed.append(answer["id"])
        refused = [(s, a) for s, a, _ in raced if s != 201 and not (s == 404 and a.get("code") == "not_found")]
        self.result.check(not refused, f"orders racing a reset: {refused}")
        rows = await self.database.query_async(f"SELECT status, count(*) FROM orders WHERE id IN ({','.join(map(str, placed)) or 'NULL'}) GROUP BY 1")
        self.host_reset = {"orders resting or racing it": len(placed), "racing ones refused after it": sum(s == 404 for s, _, _ in raced),
                           **{status: int(n) for status, n in rows}}
        self.result.check(placed and set(self.host_reset) <= {"orders resting or racing it", "racing ones refused after it", "filled", "canceled"},
                          f"the reset pupil's resting orders: {self.host_reset}")
        if not made:
            return
        # The key on the old portfolio now acts on the new one (on both processes, once their key caches let go).
        await asyncio.sleep(KEY_CACHE + 0.3)
        seen = []
        for client in self.clients:
            status, account, _ = await client.request("GET", "/v2/account", None, headers=alpaca_headers(self.key))
            seen.append((status, account.get("account_number")))
        body = {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day", "client_order_id": f"class-{uuid.uuid4().hex}"}
        status, answer, _ = await self.clients[1].request("POST", "/v2/orders", None, body, headers=alpaca_headers(self.key))
        stored = await self.database.query_async(f"SELECT portfolio_id FROM orders WHERE client_order_id = '{body['client_order_id']}'")
        self.counts["v2 orders"] += status == 200
        number = f"PA{made['portfolioId']:010d}"
        self.result.check(seen == [(200, number)] * 2 and status == 200 and stored == [[str(made["portfolioId"])]],
                          f"the key moved to portfolio {made['portfolioId']}: accounts {seen}, order {status} {answer} stored on {stored}")
        self.host_reset["key moved"] = seen == [(200, number)] * 2 and stored == [[str(made["portfolioId"])]]

    async def own_resets(self):
        """Pupils 0, 1 and 2 each send AT_ONCE resets of their own at once, on both
        processes: exactly RESETS_ALLOWED are made (one after another: each archives the
        portfolio the one before made), the rest are 409 no_resets_left; then one more is
        refused too. The host's reset of pupil 0 used none of its allowance."""
        pupils = self.pupils[:3]
        league = self.league["id"]
        befores = {p.index: (p.portfolio, p.resets) for p in pupils}
        batches = await asyncio.gather(*(asyncio.gather(*(self.clients[i % 2].request("POST", f"/api/leagues/{league}/reset", p.token)
                                                          for i in range(AT_ONCE))) for p in pupils))
        answered = time.time()
        tally = {}
        for pupil, answers in zip(pupils, batches):
            made = sorted((a for s, a, _ in answers if s == 200), key=lambda a: a["resets"])
            refused = [a for s, a, _ in answers if s == 409 and a.get("code") == "no_resets_left"]
            before, resets = befores[pupil.index]
            chain = [before] + [a["portfolioId"] for a in made]
            ok = (len(made) == RESETS_ALLOWED and len(refused) == AT_ONCE - RESETS_ALLOWED
                  and [a["resets"] for a in made] == [resets + 1 + i for i in range(RESETS_ALLOWED)]
                  and [a["previousPortfolioId"] for a in made] == chain[:-1] and all(a["userId"] == pupil.user_id for a in made))
            self.result.check(ok, f"pupil {pupil.index}'s {AT_ONCE} own resets at once: {[(s, a) for s, a, _ in answers]}")
            for answer in made:
                self.adopt(pupil, answer, True, answered)
            tally[f"pupil {pupil.index}"] = f"{len(made)} made, {len(refused)} no_resets_left"
            status, answer, _ = await self.clients[1].request("POST", f"/api/leagues/{league}/reset", pupil.token)
            self.result.check(status == 409 and answer.get("code") == "no_resets_left", f"a reset beyond the allowance: {status} {answer}")
        rows = await self.database.query_async(
            f"SELECT user_id, resets, own_resets FROM league_members WHERE league_id = {league} AND user_id IN ({','.join(str(p.user_id) for p in pupils)})")
        counted = {int(u): (int(r), int(o)) for u, r, o in rows}
        expected = {p.user_id: (p.resets, p.own_resets) for p in pupils}
        self.result.check(counted == expected, f"resets counted {counted}, expected {expected}")
        self.own = tally

    # The class roster and erasures.

    async def warm(self, pupil):
        """Both processes know the pupil's token (and key): each has just let it in."""
        seen = [(await client.request("GET", "/api/me", pupil.token))[0] for client in self.clients]
        if pupil.key:
            seen += [(await client.request("GET", "/v2/account", None, headers=alpaca_headers(pupil.key)))[0] for client in self.clients]
        self.result.check(seen == [200] * len(seen), f"pupil {pupil.index}'s token and key before they end: {seen}")

    async def refused(self, action, method, path, code, client=None, body=None):
        """A host action the server refuses with 403 `code` (none may be logged)."""
        status, answer, _ = await (client or self.clients[1]).request(method, path, self.host[0], body)
        self.result.check(status == 403 and answer.get("code") == code, f"{method} {path} by the host: {status} {answer}, not 403 {code}")
        self.refused_actions.append((action, status))

    async def probe(self, pupil, token, key, since, kind):
        """From `since` (the end's answer), on both processes at once: the ended token reads
        the account and buys on the pupil's portfolio (each buy under an Idempotency-Key of
        its own), and the ended key reads the account and places an order under a client
        order id of its own; again and again for PROBE_FOR seconds, and on a slow machine
        until a round was sent wholly after ENDED_SETTLES on each process (at most 15 s)."""
        requests = [("GET", "/api/me", None, None, None),
                    ("POST", "/api/stock/buy", {"symbol": "R1", "amount": 1, "portfolioId": pupil.portfolio}, "idempotency", None)]
        if key:
            requests += [("GET", "/v2/account", None, None, key),
                         ("POST", "/v2/orders", {"symbol": "R1", "qty": 1, "side": "buy", "type": "market", "time_in_force": "day"},
                          "order", key)]

        async def on(process):
            client = self.clients[process]
            settled = False
            while (time.monotonic() - since < PROBE_FOR or not settled) and time.monotonic() - since < 15:
                began = time.monotonic()
                for method, path, body, writes, with_key in requests:
                    ident = f"stale-{uuid.uuid4().hex}"
                    headers = alpaca_headers(with_key) if with_key else {}
                    if writes == "idempotency":
                        headers["Idempotency-Key"] = ident
                    elif writes == "order":
                        body = {**body, "client_order_id": ident}
                    sent = time.monotonic()
                    status, answer, _ = await client.request(method, path, None if with_key else token, body, headers=headers)
                    self.ended.append({"by": kind, "pupil": pupil.index, "credential": with_key["keyId"] if with_key else token,
                                       "key": bool(with_key), "sent": sent, "process": process, "status": status, "answer": answer,
                                       "writes": (writes, ident) if writes else None, "path": path})
                    if status == 200 and method == "POST":
                        if with_key:
                            self.fail(f"pupil {pupil.index}'s ended key placed an order {sent - since:.2f} s after {kind}: {answer}")
                        else:
                            pupil.trades[answer["trade"]["id"]] = pupil.portfolio  # its portfolio's trade (checked with the rest)
                settled = settled or began - since > ENDED_SETTLES
                await asyncio.sleep(0.05)

        await asyncio.gather(*(on(process) for process in range(len(self.clients))))

    async def reset_password(self):
        """The host resets a roster student's password (on the first process) while it
        trades: its old token is refused on both processes, its old password no longer
        logs in, and it logs in with the new one and trades on. The host's reset of a
        self-registered pupil's password is refused (not_managed)."""
        pupil = self.pupils[ROSTER_PUPIL]
        league = self.league["id"]
        await self.refused("league.password_reset", "POST", f"/api/leagues/{league}/members/{self.pupils[1].user_id}/password", "not_managed")
        await self.warm(pupil)
        old_token, old_password = pupil.token, pupil.password
        pupil.new_password = asyncio.Event()
        pupil.ending = "reset"
        status, answer, _ = await self.clients[0].request("POST", f"/api/leagues/{league}/members/{pupil.user_id}/password", self.host[0])
        answered = time.monotonic()
        pupil.dead[old_token] = answered
        pupil.ending = None
        new = answer.get("password") if status == 200 and isinstance(answer, dict) else None
        self.result.check(isinstance(new, str) and len(new) >= 12 and new != old_password and set(answer) == {"password"},
                          f"resetting pupil {pupil.index}'s password: {status} {answer}")
        if new:
            self.acted("league.password_reset", pupil.user_id)
            pupil.password = new
        pupil.new_password.set()
        await self.probe(pupil, old_token, None, answered, "password reset")
        logins = []
        for client, password in zip(self.clients, (old_password, new)):
            status, _, _ = await client.request("POST", "/api/auth/login", body={"username": pupil.username, "password": password})
            logins.append(status)
        self.result.check(logins == [401, 200], f"logging in with the old and the new password after the reset: {logins}")
        self.password_reset = {"pupil": pupil.index, "old and new password logins": logins}

    async def check_before_erasure(self, pupil):
        """With the pupil's trader paused: its league portfolio passes the ledger checks and
        holds exactly its acknowledged trades and orders (they go with the account)."""
        pupil.paused = True
        while pupil.inflight:
            await asyncio.sleep(0.01)
        ids = ",".join(map(str, pupil.portfolios))
        found, violations, unkeyed = map(int, (await self.database.query_async(ledger_host_at_cost(pupil.portfolios)))[0])
        trades = {int(t): o for t, o in await self.database.query_async(
            f"SELECT t.id, coalesce((SELECT o.id::text FROM orders o WHERE o.trade_id = t.id), '') FROM trades t WHERE t.portfolio_id IN ({ids})")}
        orders = {int(o) for o, in await self.database.query_async(f"SELECT id FROM orders WHERE portfolio_id IN ({ids})")}
        missing = [t for t in pupil.trades if t not in trades]
        foreign = [t for t, o in trades.items() if t not in pupil.trades and not (o and int(o) in pupil.orders)]
        lost = [o for o in pupil.orders if o not in orders]
        extra = [o for o in orders if o not in pupil.orders and not any(trades.get(t) == str(o) for t in pupil.trades)]
        checked = {"pupil": pupil.index, "portfolios": found, "violations": violations, "trades": len(trades), "orders": len(orders)}
        self.result.check(found == len(pupil.portfolios) and violations == 0 and unkeyed == 0 and not missing and not foreign
                          and not lost and not extra and trades,
                          f"pupil {pupil.index} before its erasure: {checked}, {unkeyed} unkeyed trades; trades {len(missing)} missing, "
                          f"{len(foreign)} not its own; orders {len(lost)} lost, {len(extra)} unknown")
        pupil.paused = False
        return checked

    async def erase(self, pupil, own):
        """The pupil's account erased while it trades: by the pupil itself (`DELETE /api/me`
        with its password, after a wrong one is refused, on the second process) or by the
        host (`DELETE .../members/{id}/account`, on the first, after the host's erasure of a
        self-registered pupil is refused). Checked just before (its export too, when it
        leaves by itself); afterwards its token and key are probed on both processes, and a
        second erasure by the host is refused."""
        league = self.league["id"]
        if own:
            known = set(pupil.trades)
            status, export, _ = await self.clients[0].request("GET", "/api/me/export", pupil.token)
            exported = {t["id"] for t in export.get("trades", [])} if status == 200 and isinstance(export, dict) else set()
            self.result.check(status == 200 and export.get("user", {}).get("id") == pupil.user_id and known <= exported
                              and pupil.portfolio in [p.get("id") for p in export.get("portfolios", [])],
                              f"pupil {pupil.index}'s export: {status}, {len(known - exported)} of its {len(known)} trades missing")
            status, answer, _ = await self.clients[1].request("DELETE", "/api/me", pupil.token, {"password": "not my password"})
            self.result.check(status == 403 and answer.get("code") == "wrong_password", f"erasing with a wrong password: {status} {answer}")
        else:
            await self.refused("league.member_delete", "DELETE", f"/api/leagues/{league}/members/{self.pupils[2].user_id}/account", "not_managed")
        checked = await self.check_before_erasure(pupil)
        await self.warm(pupil)
        await asyncio.sleep(random.uniform(0.2, 0.6))  # trading again
        pupil.ending = "erased"
        sent = time.monotonic()
        if own:
            status, answer, _ = await self.clients[1].request("DELETE", "/api/me", pupil.token, {"password": pupil.password})
        else:
            status, answer, _ = await self.clients[0].request("DELETE", f"/api/leagues/{league}/members/{pupil.user_id}/account", self.host[0])
        pupil.erased_at = time.monotonic()
        pupil.dead[pupil.token] = pupil.erased_at
        kind = "erased by itself" if own else "erased by the host"
        self.result.check(status == 204, f"pupil {pupil.index} {kind}: {status} {answer}")
        if status == 204 and not own:
            self.acted("league.member_delete", pupil.user_id)
        if not own:
            await self.refused("league.member_delete", "DELETE", f"/api/leagues/{league}/members/{pupil.user_id}/account", "not_managed")
        _, shown, _ = await self.clients[1].request("GET", f"/api/leagues/{league}", self.host[0])
        members = [m.get("userId") for m in shown.get("members", [])]
        self.result.check(shown.get("memberCount") == len(self.present()) and pupil.user_id not in members,
                          f"the league after pupil {pupil.index} was erased: {shown.get('memberCount')} members, {members}")
        await self.probe(pupil, pupil.token, pupil.key, pupil.erased_at, kind)
        self.erasures.append({**checked, "how": kind, "answered in s": round(pupil.erased_at - sent, 2)})

    async def audit_watch(self, deadline):
        """Once a second, every audit event's row: none seen before may change or go, the
        count only grows."""
        while self.running(deadline):
            await self.audit_sample()
            await asyncio.sleep(1)

    async def audit_sample(self):
        rows = {int(i): h for i, h in await self.database.query_async("SELECT id, md5(e::text) FROM audit_events e")}
        changed = [i for i, h in self.audit_seen.items() if rows.get(i) != h]
        if changed:
            self.audit_samples["changed or gone"].append(changed[:5])
        counts = self.audit_samples["counts"]
        if counts and len(rows) < counts[-1]:
            self.audit_samples["changed or gone"].append(f"the count fell from {counts[-1]} to {len(rows)}")
        counts.append(len(rows))
        self.audit_samples["taken"] += 1
        for i, h in rows.items():
            self.audit_seen.setdefault(i, h)

    # After the load.

    async def check(self):
        """The freezes held (no trade, fill or new order in the league while frozen; the
        orders resting through each filled after it), every pupil told once of each freeze,
        unfreeze and reset; the resets' portfolios (archived and new) pass the ledger
        checks, hold exactly the pupils' acknowledged trades and orders, and nothing traded
        an archived portfolio after its reset; the standings count the resets."""
        database, league = self.database, self.league["id"]
        # The orders resting through a freeze fill once HOST drops after it (a stop-limit one
        # once HOST has risen and dropped: a busy matcher may miss a short rise, so HOST goes
        # on moving here, up to ten times, and ends down).
        through = set().union(*(w["resting at freeze"] & w["resting at unfreeze"] for w in self.freezes))
        for _ in range(10):
            if not through & await self.resting():
                break
            await self.quote(HOST_PRICES[0])
            await asyncio.sleep(0.5)
            await self.quote(HOST_PRICES[1])
            await asyncio.sleep(1.0)
        windows = []
        for window in self.freezes:
            inside = (await database.query_async(f"""
                SELECT (SELECT count(*) FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
                        WHERE p.league_id = {league} AND t.created_at BETWEEN '{window["frozen at"]}' AND '{window["unfreeze at"]}'),
                       (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                        WHERE p.league_id = {league} AND o.filled_at BETWEEN '{window["frozen at"]}' AND '{window["unfreeze at"]}'),
                       (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                        WHERE p.league_id = {league} AND o.created_at BETWEEN '{window["frozen at"]}' AND '{window["unfreeze at"]}'),
                       (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                        WHERE p.league_id = {league} AND o.triggered_at BETWEEN '{window["frozen at"]}' AND '{window["unfreeze at"]}')"""))[0]
            trades, fills, placed, triggered = map(int, inside)
            through = window["resting at freeze"] & window["resting at unfreeze"]
            rows = await database.query_async(
                f"SELECT status, filled_at > '{window['unfreeze at']}', count(*) FROM orders WHERE id IN ({','.join(map(str, through)) or 'NULL'}) GROUP BY 1, 2")
            after = {f"{status}{' after' if later == 't' else ''}": int(n) for status, later, n in rows}
            # (What an order left open is, should one be: its type, triggered or not.)
            left = await database.query_async(
                f"SELECT type, triggered_at IS NOT NULL, count(*) FROM orders WHERE status = 'new' AND id IN ({','.join(map(str, through)) or 'NULL'}) GROUP BY 1, 2")
            kept = sorted(f"{status}{' after' if later == 't' else ''}" for status, later in await database.query_async(
                f"SELECT status, filled_at > '{window['unfreeze at']}' FROM orders WHERE id IN ({','.join(map(str, window['kept'])) or 'NULL'})"))
            windows.append({"requests at once": window["at once"], "trades, fills, new orders, triggers while frozen": trades + fills + placed + triggered,
                            "limit buys placed to rest just before": len(window["kept"]), "of them at the end": kept,
                            "orders resting at the freeze": len(window["resting at freeze"]),
                            "orders resting through it": len(through), "then": after,
                            "new orders resting": len(window["resting at unfreeze"] - window["resting at freeze"])})
            self.result.check(trades == fills == placed == triggered == 0,
                              f"while frozen ({window['frozen at']} to {window['unfreeze at']}): {trades} trades, {fills} fills, {placed} new orders, "
                              f"{triggered} stop-limit orders triggered")
            self.result.check(not window["resting at unfreeze"] - window["resting at freeze"], "an order of a frozen league was placed")
            self.result.check(set(after) <= {"filled after", "canceled"} and after.get("filled after", 0) > 0,
                              f"the {len(through)} orders resting through a freeze: {after}; open ones (type, triggered, count): {left}")
            self.result.check(window["kept"] and window["kept"] <= through and kept == ["filled after"] * len(window["kept"]),
                              f"the limit buys placed to rest through a freeze: {kept}")
        self.result.check(not self.traded_while_frozen, f"trades or orders answered while frozen: {self.traded_while_frozen[:3]}")
        # While the league asked for notes, nothing was placed or traded without one (a
        # resting order's fill is its order's: it was placed before) and notes were kept.
        if self.journal.get("off at"):
            unnoted, noted = map(int, (await database.query_async(f"""
                SELECT (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                        WHERE p.league_id = {league} AND o.note IS NULL
                          AND o.created_at BETWEEN '{self.journal["on at"]}' AND '{self.journal["off at"]}')
                     + (SELECT count(*) FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
                        WHERE p.league_id = {league} AND t.note IS NULL AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id)
                          AND t.created_at BETWEEN '{self.journal["on at"]}' AND '{self.journal["off at"]}'),
                       (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                        WHERE p.league_id = {league} AND o.note LIKE 'pupil %: reason %')"""))[0])
            self.result.check(unnoted == 0, f"{unnoted} orders or trades without a note while the league asked for one")
            self.result.check(not self.unnoted_while_required, f"answered without a note while required: {self.unnoted_while_required[:3]}")
            self.result.check(self.counts["refused without a note"] > 0, "no pupil's trade or order met the journal rule")
            self.result.check(noted > 0, "no journal note was kept")
        else:
            self.result.check(False, "the host never asked for journal notes")
        self.result.check(self.counts["refused while frozen"] > 0, "no pupil's trade or order met a freeze")
        # Every pupil was told once of each freeze, unfreeze and reset; the host, who has no seat, of none.
        # (The erased pupils' notices went with them.)
        present = self.present()
        told = {title: await self.notices(title) for title in (FROZEN, RESUMED, RESET)}
        expected = {FROZEN: len(self.freezes), RESUMED: len(self.freezes)}
        wrong = [(title, p.index, told[title].get(p.user_id)) for p in present for title in told
                 if told[title].get(p.user_id) != expected.get(title, p.resets)]
        wrong += [(title, "host", told[title][self.host[1]]) for title in told if told[title][self.host[1]]]
        self.result.check(not wrong, f"notices (title, pupil, count) not as expected: {wrong}")
        # The portfolios: each pupil has one live league portfolio, the last reset's; the
        # others are archived, each by a reset answered; each was funded once with the starting cash.
        rows = await database.query_async(f"""
            SELECT p.user_id, p.id, p.archived_at IS NOT NULL, p.reserved_cash,
                   (SELECT count(*) FROM cash_movements c WHERE c.portfolio_id = p.id AND c.kind = 'starting_cash' AND c.amount = {STARTING_CASH}),
                   (SELECT count(*) FROM cash_movements c WHERE c.portfolio_id = p.id AND c.kind = 'starting_cash')
            FROM portfolios p WHERE p.league_id = {league}""")
        portfolios = {int(r[1]): r for r in rows}
        mine = {p.user_id: p for p in present}
        wrong = []
        for pupil in present:
            held = sorted(i for i, r in portfolios.items() if int(r[0]) == pupil.user_id)
            live = [i for i in held if portfolios[i][2] == "f"]
            listed = await self.live_portfolio(pupil)
            if held != sorted(pupil.portfolios) or live != [pupil.portfolio] or listed != live:
                wrong.append((pupil.index, held, live, listed, pupil.portfolios))
        self.result.check(not wrong and all(int(r[0]) in mine for r in rows),
                          f"league portfolios (pupil, in the database, live, listed, from the answers): {wrong}")
        archived = [i for i, r in portfolios.items() if r[2] == "t"]
        self.result.check(sorted(archived) == sorted(self.previous), f"archived {sorted(archived)}, reset answers {sorted(self.previous)}")
        funded = [i for i, r in portfolios.items() if (r[4], r[5]) != ("1", "1")]
        self.result.check(not funded, f"league portfolios not funded exactly once with {STARTING_CASH}: {funded}")
        stray = [(index, portfolio) for index, portfolio in self.not_found if self.previous.get(portfolio, (None,))[0] != index]
        self.result.check(not stray, f"404 on a league portfolio no reset archived: {stray[:5]}")
        # Nothing happened on an archived portfolio once its reset was answered (dated by the
        # database's clock, the machine's); its open orders were all cancelled by the reset,
        # none left for the matcher's sweep to cancel ("The portfolio was closed.").
        answered = ",".join(f"({portfolio}, to_timestamp({at}))" for portfolio, (_, at) in self.previous.items()) or "(NULL::int8, NULL::timestamptz)"
        late = [int(n) for n in (await database.query_async(f"""
            WITH reset (portfolio_id, answered_at) AS (VALUES {answered})
            SELECT (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                    WHERE p.league_id = {league} AND p.archived_at IS NOT NULL AND o.status = 'new'),
                   (SELECT count(*) FROM trades t JOIN reset r USING (portfolio_id) WHERE t.created_at > r.answered_at),
                   (SELECT count(*) FROM orders o JOIN reset r USING (portfolio_id)
                    WHERE o.created_at > r.answered_at OR o.filled_at > r.answered_at),
                   (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                    WHERE p.league_id = {league} AND o.reject_reason = 'The portfolio was closed.'),
                   (SELECT count(*) FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                    WHERE p.league_id = {league} AND p.archived_at IS NOT NULL AND o.reject_reason = 'The league portfolio was reset.'),
                   (SELECT coalesce(sum(h.reserved_quantity), 0) FROM holdings h JOIN portfolios p ON p.id = h.portfolio_id
                    WHERE p.league_id = {league} AND p.archived_at IS NOT NULL)"""))[0]]
        open_archived, late_trades, late_orders, swept, cancelled_by_reset, reserved_shares = late
        reserved_archived = sum(float(r[3]) for r in portfolios.values() if r[2] == "t") + reserved_shares
        left_open = []
        if swept or open_archived:
            # (order, portfolio, placed, portfolio archived, cancelled): left open by the reset.
            left_open = await database.query_async(f"""
                SELECT o.id, o.portfolio_id, o.created_at, p.archived_at, o.canceled_at FROM orders o JOIN portfolios p ON p.id = o.portfolio_id
                WHERE p.league_id = {league} AND p.archived_at IS NOT NULL
                  AND (o.status = 'new' OR o.reject_reason = 'The portfolio was closed.')""")
        self.result.check(open_archived == late_trades == late_orders == swept == 0 and reserved_archived == 0,
                          f"archived portfolios: {open_archived} open orders, {late_trades} trades and {late_orders} orders after the reset was answered, "
                          f"{swept} orders the reset left open (cancelled later by the sweep), {reserved_archived} still reserved: {left_open[:5]}")
        # The ledger of every league portfolio, archived and new; its trades are exactly the pupils'.
        ids = sorted(portfolios)
        found, violations, unkeyed = map(int, (await database.query_async(portfolio_ledger(ids)))[0])
        self.result.check(found == len(ids) and violations == 0 and unkeyed == 0,
                          f"league portfolios: {found} of {len(ids)} found, {violations} violations, {unkeyed} trades without order or key")
        trades = {int(t): (int(p), o) for t, p, o in await database.query_async(
            f"SELECT t.id, t.portfolio_id, coalesce((SELECT o.id::text FROM orders o WHERE o.trade_id = t.id), '') FROM trades t "
            f"WHERE t.portfolio_id IN ({','.join(map(str, ids))})")}
        acked = {trade: portfolio for p in present for trade, portfolio in p.trades.items()}
        orders = {order: portfolio for p in present for order, portfolio in p.orders.items()}
        keyed_orders = {int(o) for o, in await database.query_async(
            f"SELECT id FROM orders WHERE client_order_id LIKE 'class-%' AND portfolio_id IN ({','.join(map(str, ids))})")}
        missing = [t for t, p in acked.items() if trades.get(t, (None,))[0] != p]
        foreign = [t for t, (p, o) in trades.items() if t not in acked and not (o and (int(o) in orders or int(o) in keyed_orders))]
        stored = {int(o): int(p) for o, p in await database.query_async(
            f"SELECT id, portfolio_id FROM orders WHERE portfolio_id IN ({','.join(map(str, ids))})")}
        lost = [o for o, p in orders.items() if stored.get(o) != p]
        # A market trade with a journal note is written with its order row: the order of an acknowledged trade.
        noted_trades = {int(o) for t, (p, o) in trades.items() if o and t in acked}
        extra = [o for o in stored if o not in orders and o not in keyed_orders and o not in noted_trades]
        prices = [r[0] for r in await database.query_async(
            f"SELECT DISTINCT price FROM trades WHERE symbol = 'HOST' AND portfolio_id IN ({','.join(map(str, ids))})")]
        self.result.check(not missing and not foreign and not lost and not extra,
                          f"league trades: {len(missing)} acknowledged not found, {len(foreign)} not the pupils'; orders: {len(lost)} lost, {len(extra)} unknown")
        self.result.check(all(float(p) == float(HOST_PRICES[1]) for p in prices), f"HOST filled at {prices}, not only at {HOST_PRICES[1]}")
        # The key moved with every reset of pupil 0's portfolio.
        key_portfolio = (await database.query_async(f"SELECT portfolio_id FROM api_keys WHERE key_id = '{self.key['keyId']}'"))[0][0]
        self.result.check(int(key_portfolio) == self.pupils[0].portfolio, f"pupil 0's key is on {key_portfolio}, not {self.pupils[0].portfolio}")
        # The standings (the host's view) count every reset; the host is not ranked.
        _, board, _ = await self.clients[1].request("GET", f"/api/leagues/{league}/leaderboard?limit=50", self.host[0])
        _, shown, _ = await self.clients[0].request("GET", f"/api/leagues/{league}", self.host[0])
        counted = {int(u): int(r) for u, r in await database.query_async(f"SELECT user_id, resets FROM league_members WHERE league_id = {league}")}
        resets = {p.user_id: p.resets for p in present}
        on_board = {s["userId"]: s.get("resets") for s in board.get("items", [])}
        on_page = {s["userId"]: s.get("resets") for s in shown.get("members", [])}
        self.result.check(counted == resets and on_board == resets and on_page == resets and board.get("total") == len(present)
                          and shown.get("memberCount") == len(present) and shown.get("frozen") is False,
                          f"resets: database {counted}, leaderboard {on_board}, league {on_page}, expected {resets}")
        filled, stops = map(int, (await database.query_async(
            f"SELECT count(*), count(*) FILTER (WHERE type = 'stop_limit') FROM orders "
            f"WHERE status = 'filled' AND type IN ('limit', 'stop_limit') AND portfolio_id IN ({','.join(map(str, ids))})"))[0])
        self.result.check(filled > self.counts["orders filled at once"] and stops > 0, f"pupils' resting orders filled later: {filled}, stop-limit {stops}")
        accounts = await self.check_accounts()
        audit = await self.check_audit()
        # Every answer of the class's clients: no 5xx or dropped request, every error problem+json (Alpaca's under /v2).
        failed = sum(n for c in self.clients for status, n in c.statuses.items() if status >= 500 or status == 0)
        problems = [p for c in self.clients for p in c.problems]
        self.result.check(failed == 0 and not problems, f"the class's requests: {failed} 5xx or failed, not problem+json: {problems[:3]}")
        for client in self.clients:
            await client.close()
        return {
            "class pupils": len(self.pupils), "class trades": self.counts["trades"], "class trades refused": self.counts["refused"],
            "class limit and stop-limit orders": self.counts["orders"], "of them filled": filled, "stop-limit orders filled": stops,
            "of them filled at once": self.counts["orders filled at once"], "class cancels": self.counts["cancels"],
            "class requests refused while frozen": self.counts["refused while frozen"],
            "class answered 200 while frozen": len(self.traded_while_frozen), "class freezes": windows,
            "'Trading frozen' notices per pupil": sorted({told[FROZEN].get(p.user_id) for p in present}),
            "host reset while its orders filled": self.host_reset, "own resets at once": self.own,
            "class resets": sum(p.resets for p in self.pupils), "class portfolios (archived)": f"{len(ids)} ({len(archived)})",
            "class orders cancelled by resets": cancelled_by_reset, "class orders a reset left open": swept + open_archived,
            "class 404s on archived portfolios": len(self.not_found),
            "class ledger violations": violations, "class 5xx or failed": failed, "host's steps (at s, taking s)": self.steps,
            "password reset and erasures (at s, taking s)": self.account_steps, **accounts, **audit,
        }

    async def check_accounts(self):
        """The roster and the erasures: nothing is left of an erased account (in any table
        with a user or portfolio column; final standings may keep its row, named `erased`);
        every request with an ended token or key sent more than ENDED_SETTLES after the end
        was answered is 401 on both processes and wrote nothing; the roster student whose
        password was reset logged in again and traded on."""
        database = self.database
        erased = [p for p in self.pupils if p.erased_at is not None]
        self.result.check(len(erased) == 2, f"pupils erased: {[p.index for p in erased]}")
        ids = ",".join(str(p.user_id) for p in erased) or "NULL"
        columns = await database.query_async(LEFTOVER_COLUMNS)
        left = await database.query_async(leftovers(columns, [p.user_id for p in erased], [i for p in erased for i in p.portfolios]))
        left = [(name, int(n)) for name, n in left if int(n)]
        standing, misnamed, named = map(int, (await database.query_async(f"""
            SELECT (SELECT count(*) FROM league_standings WHERE user_id IN ({ids}))
                 + (SELECT count(*) FROM league_live_standings WHERE user_id IN ({ids})),
                   (SELECT count(*) FROM league_standings WHERE user_id IN ({ids})
                    AND (username <> 'erased' OR coalesce(owner_username, 'erased') <> 'erased'))
                 + (SELECT count(*) FROM league_live_standings WHERE user_id IN ({ids})
                    AND (username <> 'erased' OR coalesce(owner_username, 'erased') <> 'erased')),
                   (SELECT count(*) FROM users WHERE lower(username) IN ({','.join(repr(p.username.lower()) for p in erased) or "NULL"}))"""))[0])
        self.result.check(not left and misnamed == 0 and named == 0,
                          f"erased pupils {[p.index for p in erased]}: rows left {left}, {misnamed} standings rows still named, "
                          f"{named} accounts of their names")
        self.result.check(len(columns) >= 15, f"only {len(columns)} columns searched for an erased account's rows")
        # The ended tokens and keys: refused everywhere once settled, nothing written.
        late, window, stale_writes, reached = [], collections.Counter(), [], collections.Counter()
        kinds = {LEAVER: "erased by itself", ERASED_PUPIL: "erased by the host", ROSTER_PUPIL: "password reset"}
        for record in self.ended:
            pupil = self.pupils[record["pupil"]]
            end = pupil.erased_at if record["key"] else pupil.dead.get(record["credential"])
            if end is None:
                continue  # a token that did not end (the reset pupil's new one)
            after = record["sent"] - end
            status, answer = record["status"], record["answer"]
            if after <= 0:
                continue  # sent before the end was answered
            if after <= ENDED_SETTLES:
                window[f"{kinds[pupil.index]}: {status}"] += 1
                continue
            reached[(kinds[pupil.index], "key" if record["key"] else "token", record["process"])] += 1
            refused = status == 401 and (alpaca_error(401, answer) and answer["code"] == 40110000 if record["key"]
                                         else isinstance(answer, dict) and answer.get("code") == "unauthorized")
            if not refused:
                late.append((kinds[pupil.index], record["by"], record["path"], round(after, 2), record["process"], status, str(answer)[:100]))
            if record["writes"]:
                stale_writes.append(record["writes"])
        keys = ",".join(f"'{ident}'" for kind, ident in stale_writes if kind == "idempotency") or "NULL"
        cids = ",".join(f"'{ident}'" for kind, ident in stale_writes if kind == "order") or "NULL"
        written = int((await database.query_async(
            f"SELECT (SELECT count(*) FROM idempotency_keys WHERE key IN ({keys})) + (SELECT count(*) FROM orders WHERE client_order_id IN ({cids}))"))[0][0])
        self.result.check(not late and written == 0, f"requests with an ended token or key after {ENDED_SETTLES} s: {len(late)} not 401 "
                                                     f"{late[:5]}; {written} of their {len(stale_writes)} writes stored")
        missing = [(kind, what, process) for kind in kinds.values() for what in ("token", "key") for process in range(len(self.clients))
                   if not (what == "key" and kind == "password reset") and not reached[(kind, what, process)]]
        self.result.check(not missing, f"no request with an ended token or key reached a process after it settled: {missing}")
        reset = self.pupils[ROSTER_PUPIL]
        self.result.check(reset.relogins >= 1 and reset.acked_after_relogin > 0,
                          f"the roster student whose password was reset: {reset.relogins} logins again, "
                          f"{reset.acked_after_relogin} trades and orders after")
        return {"class roster": [f"{s['displayName']}: {s['username']}" for s in self.roster],
                "password reset": {**self.password_reset, "logged in again": reset.relogins,
                                   "its trades and orders after": reset.acked_after_relogin},
                "erasures (checked just before)": self.erasures, "erased accounts' rows left": left,
                "their standings rows kept (named 'erased')": standing, "columns searched for erased accounts": len(columns),
                "ended-token and key requests within 1 s (by status)": dict(window),
                "ended-token and key requests after 1 s": sum(reached.values()), "of them not 401": len(late),
                "their writes stored": written}

    async def check_audit(self):
        """The league's audit log: exactly one event per host action acknowledged in the run
        (each by the host, naming whom it touched), none for the refused ones; the same
        through the host's paged listing; the self-erasure's one account.delete, in no
        league; no event of the run ever changed or went (sampled each second), and the
        database refuses to change or remove one."""
        database, league, host = self.database, self.league["id"], self.host
        status, _, _ = await self.clients[1].request("GET", f"/api/leagues/{league}/report.csv", host[0])
        self.result.check(status == 200, f"the host's gradebook: {status}")
        if status == 200:
            self.acted("league.report_export")
        rows = await database.query_async(
            f"SELECT id, actor_id, action, coalesce(target_user_id::text, ''), details::text FROM audit_events WHERE league_id = {league} ORDER BY id")
        logged = collections.Counter(r[2] for r in rows)
        expected = collections.Counter(action for action, _ in self.audited)
        targets = {action: sorted(int(r[3]) for r in rows if r[2] == action and r[3]) for action in logged}
        wanted = {action: sorted(t for a, t in self.audited if a == action and t is not None) for action in expected}
        roster = [r[4] for r in rows if r[2] == "league.roster_create"]
        self.result.check(logged == expected and {int(r[1]) for r in rows} == {host[1]} and targets == wanted,
                          f"the league's audit log: {dict(logged)}, expected {dict(expected)}; targets {targets}, expected {wanted}")
        self.result.check(len(roster) == 1 and f'"userIds": {sorted(s["userId"] for s in self.roster)}'.replace(" ", "") in roster[0].replace(" ", ""),
                          f"the roster's event: {roster}")
        listed, before = [], None
        for _ in range(50):
            status, page, _ = await self.clients[0].request(
                "GET", f"/api/leagues/{league}/audit?limit=50" + (f"&before={before}" if before else ""), host[0])
            if status != 200:
                self.result.check(False, f"the league's audit log listed: {status} {page}")
                break
            listed += page["items"]
            before = page["nextBefore"]
            if before is None:
                break
        self.result.check([(e["id"], e["action"], e["actorId"]) for e in listed] == [(int(r[0]), r[2], int(r[1])) for r in reversed(rows)],
                          f"the league's audit log as listed: {len(listed)} events, {len(rows)} stored")
        status, answer, _ = await self.clients[1].request("GET", f"/api/leagues/{league}/audit", self.pupils[0].token)
        self.result.check(status == 403 and answer.get("code") == "forbidden", f"a pupil reading the league's audit log: {status} {answer}")
        leaver = self.pupils[LEAVER].user_id
        own = await database.query_async("SELECT actor_id, coalesce(target_user_id::text, ''), coalesce(league_id::text, '') "
                                         "FROM audit_events WHERE action = 'account.delete'")
        status, page, _ = await self.clients[0].request("GET", f"/api/admin/audit?action=account.delete&actorId={leaver}", self.admin)
        items = page.get("items", []) if isinstance(page, dict) else []
        by_pupils = int((await database.query_async(
            f"SELECT count(*) FROM audit_events WHERE action <> 'account.delete' AND actor_id IN ({','.join(str(p.user_id) for p in self.pupils)})"))[0][0])
        self.result.check(own == [[str(leaver), str(leaver), ""]] and len(items) == 1 and items[0].get("actorUsername") is None
                          and items[0].get("targetUserId") == leaver and by_pupils == 0,
                          f"the self-erasure's audit event: {own}, listed {items}; {by_pupils} events by pupils")
        # Append-only: the database refuses to change or remove an event (42501), whoever asks.
        refusals = []
        for statement in ("UPDATE audit_events SET details = details WHERE id = (SELECT min(id) FROM audit_events)",
                          "DELETE FROM audit_events WHERE id = (SELECT min(id) FROM audit_events)", "TRUNCATE audit_events"):
            try:
                await database.query_async(f"\\set VERBOSITY verbose\nBEGIN;\n{statement};\nROLLBACK;\n")
                refusals.append(f"{statement.split()[0]}: allowed")
            except RuntimeError as error:
                refusals.append(f"{statement.split()[0]}: {'42501' if '42501' in str(error) else str(error)[:120]}")
        self.result.check(all(r.endswith(": 42501") for r in refusals), f"changing the audit log: {refusals}")
        await self.audit_sample()
        samples = self.audit_samples
        self.result.check(not samples["changed or gone"] and samples["taken"] > 5, f"audit events sampled each second: {samples['taken']} samples, "
                                                                                     f"changed or gone: {samples['changed or gone'][:3]}")
        return {"league audit events (by action)": dict(sorted(logged.items())), "host actions refused (none logged)": len(self.refused_actions),
                "audit log listed (events)": len(listed), "audit samples": samples["taken"],
                "audit events at the end": samples["counts"][-1] if samples["counts"] else None, "audit changes refused": refusals}
