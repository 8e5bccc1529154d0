"""Processes and clients for the reliability suite: a private PostgreSQL cluster, server
processes on loopback that can be killed and restarted, an HTTP client that counts every
status, and the ledger checks run in SQL."""
import asyncio
import json
import os
import signal
import subprocess
import time
import uuid

import aiohttp

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The PostgreSQL cluster under scripts/pg-local (RELIABILITY_CLUSTER names another, so that
# two runs on one machine do not share one).
CLUSTER = os.environ.get("RELIABILITY_CLUSTER", "reliability")
JWT_SECRET = "reliability-secret-reliability-secret-reliability-0123"
ADMIN = ("reliability_admin", "reliability admin password")
PASSWORD = "reliability password"


def run(*command, check=True, **kwargs):
    return subprocess.run(command, cwd=ROOT, check=check, capture_output=True, text=True, **kwargs)


class Database:
    """The cluster under scripts/pg-local; `crash` stops it in immediate mode."""

    def __init__(self):
        self.url = None

    def start(self):
        run("scripts/pg-local", "start", CLUSTER)
        self.url = run("scripts/pg-local", "url", CLUSTER).stdout.strip()

    def crash(self):
        run("scripts/pg-local", "crash", CLUSTER)

    def destroy(self):
        run("scripts/pg-local", "destroy", CLUSTER, check=False)

    def fresh(self):
        self.destroy()
        self.start()

    def query(self, sql):
        """Rows of a query as lists of strings (psql -At, fields split on |)."""
        out = run("psql", self.url, "-AtX", "-v", "ON_ERROR_STOP=1", input=sql).stdout
        return [line.split("|") for line in out.splitlines() if line]

    def scalar(self, sql):
        rows = self.query(sql)
        return rows[0][0] if rows else None

    async def query_async(self, sql):
        """`query` without blocking the event loop (the load goes on meanwhile)."""
        process = await asyncio.create_subprocess_exec(
            "psql", self.url, "-AtX", "-v", "ON_ERROR_STOP=1", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate(sql.encode())
        if process.returncode != 0:
            raise RuntimeError(f"psql: {err.decode().strip()}")
        return [line.split("|") for line in out.decode().splitlines() if line]

    async def scalar_async(self, sql):
        process = await asyncio.create_subprocess_exec(
            "psql", self.url, "-AtX", "-c", sql, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, _ = await process.communicate()
        return out.decode().strip() if process.returncode == 0 else None


class Server:
    """One `mockstock serve` process on loopback."""

    def __init__(self, binary, database, port, log_path, **settings):
        self.binary = binary
        self.database = database
        self.port = port
        self.log_path = log_path
        self.settings = settings
        self.process = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def environment(self):
        env = dict(os.environ)
        env.update({
            "DATABASE_URL": self.database.url, "HOST": "127.0.0.1", "PORT": str(self.port),
            "PASSWORD_HASH_PROFILE": "test", "JWT_SECRET": JWT_SECRET, "LOG_LEVEL": "warning",
            "QUOTE_PROVIDER": "database", "ADMIN_USERNAME": ADMIN[0], "ADMIN_PASSWORD": ADMIN[1],
            "STARTING_CASH": "10000.00", "DATABASE_POOL_SIZE": "16",
            # Every simulated player connects from loopback, one address: the per-address
            # budgets are raised here; the hostile scenario runs with the defaults.
            "REGISTRATIONS_PER_ADDRESS": "1000000", "LOGIN_FAILURES_PER_ADDRESS": "1000000",
            "LOGIN_FAILURES_GLOBAL": "1000000",
        })
        env.update({key: str(value) for key, value in self.settings.items()})
        return env

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen([self.binary, "serve"], cwd=ROOT, env=self.environment(), stdout=log, stderr=log)

    async def wait_ready(self, timeout=30.0):
        """Seconds until /readyz answered 200; raises after `timeout`."""
        started = time.monotonic()
        async with aiohttp.ClientSession() as session:
            while time.monotonic() - started < timeout:
                try:
                    async with session.get(f"{self.base}/readyz", timeout=aiohttp.ClientTimeout(total=1)) as response:
                        if response.status == 200:
                            return time.monotonic() - started
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError(f"server not ready after {timeout} s")

    def kill9(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill9()


def alpaca_error(status, body):
    """Whether `body` is Alpaca's error for `status`: exactly `{"code": <int>, "message": <text>}`,
    the code naming the status (status × 100,000 + 10,000), but for a 422: 40010001 (a value
    Alpaca refuses) or 42210000 (a client_order_id reused for another order)."""
    if not (isinstance(body, dict) and set(body) == {"code", "message"} and type(body["code"]) is int
            and isinstance(body["message"], str) and body["message"]):
        return False
    if status == 422:
        return body["code"] in (40010001, 42210000)
    return body["code"] == status * 100_000 + 10_000


def alpaca_headers(key):
    """The headers of a request made with an API key (`{"keyId", "secret"}`)."""
    return {"APCA-API-KEY-ID": key["keyId"], "APCA-API-SECRET-KEY": key["secret"]}


class Client:
    """HTTP with a tally of statuses; every answer that is not JSON or problem+json is noted."""

    def __init__(self, base, connections=256):
        self.base = base
        self.connector = aiohttp.TCPConnector(limit=connections, force_close=False)
        self.session = aiohttp.ClientSession(connector=self.connector)
        self.statuses = {}
        self.problems = []

    async def close(self):
        await self.session.close()

    async def request(self, method, path, token=None, body=None, headers=None, timeout=15.0, raw=None, content_type=None):
        """(status, parsed JSON or text, seconds); status 0 when the connection failed."""
        all_headers = dict(headers or {})
        if token:
            all_headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body)
            all_headers["Content-Type"] = "application/json"
        if raw is not None:
            data = raw
            all_headers["Content-Type"] = content_type or "application/json"
        started = time.monotonic()
        try:
            async with self.session.request(method, self.base + path, data=data, headers=all_headers,
                                            timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                text = await response.text()
                status = response.status
                kind = response.headers.get("Content-Type", "")
        except (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError):
            status, text, kind = 0, "", ""
        elapsed = time.monotonic() - started
        self.statuses[status] = self.statuses.get(status, 0) + 1
        parsed = text
        if kind.startswith("application/json") or kind.startswith("application/problem+json"):
            try:
                parsed = json.loads(text)
            except ValueError:
                pass
        if status >= 400 and path.startswith("/v2/"):
            # Under /v2 an error is Alpaca's, not problem+json.
            if not (kind.startswith("application/json") and alpaca_error(status, parsed)):
                self.problems.append(f"{method} {path}: {status} without Alpaca's error shape ({kind!r}: {text[:80]!r})")
        elif status >= 400 and not kind.startswith("application/problem+json"):
            self.problems.append(f"{method} {path}: {status} without problem+json ({kind!r})")
        return status, parsed, elapsed

    async def login(self, username, password):
        status, body, _ = await self.request("POST", "/api/auth/login", body={"username": username, "password": password})
        assert status == 200, (status, body)
        return body["token"]

    async def register(self, username):
        status, body, _ = await self.request("POST", "/api/auth/register", body={"username": username, "password": PASSWORD})
        assert status == 201, (status, body)
        return body["token"], body["user"]["id"]


class StreamWatcher:
    """A live-stream client that stays connected: it authenticates, subscribes, keeps every
    event, and when the socket drops (a killed server) connects and subscribes again."""

    def __init__(self, base, token, subscription):
        self.url = base.replace("http://", "ws://") + "/api/stream"
        self.token = token
        self.subscription = subscription
        self.events = []
        self.connections = 0
        self.closes = []
        self.task = None

    def start(self):
        self.task = asyncio.create_task(self.run())
        return self

    async def run(self):
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    async with session.ws_connect(self.url, heartbeat=None) as socket:
                        await socket.send_json({"action": "auth", "token": self.token})
                        await socket.send_json({"action": "subscribe", **self.subscription})
                        self.connections += 1
                        async for message in socket:
                            if message.type == aiohttp.WSMsgType.TEXT:
                                self.events.append(json.loads(message.data))
                        self.closes.append(socket.close_code)
                except (aiohttp.ClientError, ConnectionError, asyncio.TimeoutError):
                    pass
                await asyncio.sleep(0.2)

    def of_type(self, kind):
        return [event.get("data", {}) for event in self.events if event.get("type") == kind]

    async def wait_for(self, kind, matching=lambda data: True, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(matching(data) for data in self.of_type(kind)):
                return True
            await asyncio.sleep(0.05)
        return False

    async def wait_for_price(self, symbol, price, timeout=10.0):
        """Whether the price reached the socket, as a quote event or in a snapshot (the one
        after a gap, when the price was set while the server was not listening)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            quotes = self.of_type("quote") + [q for snapshot in self.of_type("snapshot") for q in snapshot.get("quotes", [])]
            if any(q["symbol"] == symbol and q["price"] == price for q in quotes):
                return True
            await asyncio.sleep(0.05)
        return False

    async def stop(self):
        if self.task:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass


def new_key():
    return uuid.uuid4().hex


# Ledger checks, each one SQL statement (so one consistent snapshot).

# With fixed prices and no fees, trading never changes a portfolio's net worth, and every
# other change of cash is a cash movement: cash + Σ quantity × price − paid in is zero. A
# portfolio in another currency values its holdings at the rate now (fixed too) and loses
# the spread on each fill: what the fill's price was beyond the dollar price at that rate
# (to four decimals, as holdings are valued).
# (Practice portfolios trade at past closes: their figures are checked against their
# history instead.)
# A scenario league's instruments (instruments.league_id) move with the league's days:
# its portfolios' worth moves by the market alone, Σ over their trades of the position
# they opened × (the price now − the fill's), the fill's side counted as booked (its
# amount). SCENARIO_MOVE is that; it is zero for every other portfolio. (The suite's
# scenario leagues trade in dollars under plain rules: no spread, impact or rate. The
# price now is the quote the league's advance stored, which every one of its instruments
# has; read from `quotes`, as the view `current_prices` would cost the snapshot 70 ms.)
SCENARIO_MOVE = """(SELECT coalesce(sum(CASE t.side WHEN 'buy' THEN t.quantity * q.price - t.amount ELSE t.amount - t.quantity * q.price END), 0)
         FROM trades t JOIN instruments i ON i.symbol = t.symbol AND i.league_id IS NOT NULL
         JOIN quotes q ON q.symbol = t.symbol WHERE t.portfolio_id = p.id)"""
WORTH_DRIFT = """
SELECT count(*) FROM portfolios p
WHERE p.kind <> 'practice' AND abs(
        p.cash + coalesce((SELECT sum(v.value) FROM holding_values v WHERE v.portfolio_id = p.id), 0)
      + (SELECT coalesce(sum(fee), 0) FROM trades t WHERE t.portfolio_id = p.id)
      + (SELECT coalesce(sum(t.quantity * abs(t.price - round(q.price * fx_usd_to(p.cash_currency), 4))), 0)
         FROM trades t JOIN quotes q USING (symbol) WHERE t.portfolio_id = p.id AND t.fx_rate IS NOT NULL)
      -- A realistic league's fills pay their spread and impact over the quote.
      + (SELECT coalesce(sum(t.quantity * (t.spread + t.impact)), 0) FROM trades t WHERE t.portfolio_id = p.id AND t.fx_rate IS NULL)
      - """ + SCENARIO_MOVE + """
      - (SELECT coalesce(sum(amount), 0) FROM cash_movements c WHERE c.portfolio_id = p.id)) > 0
"""

# Cash never below zero but where a league lends; quantities only below zero in leagues
# that allow short selling.
NEGATIVE = """
SELECT (SELECT count(*) FROM portfolios WHERE NOT may_borrow AND (cash < 0 OR reserved_cash > cash))
     + (SELECT count(*) FROM portfolios p WHERE p.may_borrow AND NOT EXISTS (
            SELECT 1 FROM leagues l WHERE l.id = p.league_id AND l.margin_percent IS NOT NULL))
     + (SELECT count(*) FROM holdings h WHERE h.quantity < 0 AND NOT EXISTS (
            SELECT 1 FROM portfolios p JOIN leagues l ON l.id = p.league_id WHERE p.id = h.portfolio_id AND l.allow_short_selling))
"""

# The stored cash and quantities are what the history says.
REPLAY = """
SELECT
  (SELECT count(*) FROM portfolios p WHERE p.cash <>
      (SELECT coalesce(sum(amount), 0) FROM cash_movements c WHERE c.portfolio_id = p.id)
    - (SELECT coalesce(sum(CASE side WHEN 'buy' THEN amount + fee ELSE fee - amount END), 0) FROM trades t WHERE t.portfolio_id = p.id))
+ (SELECT count(*) FROM holdings h WHERE h.quantity <>
      (SELECT coalesce(sum(CASE side WHEN 'buy' THEN quantity ELSE -quantity END), 0) FROM trades t
       WHERE t.portfolio_id = h.portfolio_id AND t.symbol = h.symbol)
    + (SELECT coalesce(sum(x.quantity_after - x.quantity_before), 0)
       FROM corporate_action_applications x JOIN corporate_actions a ON a.id = x.action_id
       WHERE x.portfolio_id = h.portfolio_id AND a.symbol = h.symbol))
+ (SELECT count(*) FROM portfolios p WHERE p.paid_in <>
      (SELECT coalesce(sum(amount), 0) FROM cash_movements c
       WHERE c.portfolio_id = p.id AND c.kind NOT IN ('dividend', 'cash_in_lieu', 'interest', 'borrow_fee')))
-- What is reserved is what the open orders hold back, and each filled order's trade is that order's.
+ (SELECT count(*) FROM portfolios p WHERE p.reserved_cash <>
      (SELECT coalesce(sum(reserved_cash), 0) FROM orders o WHERE o.portfolio_id = p.id AND o.status = 'new'))
+ (SELECT count(*) FROM holdings h WHERE h.reserved_quantity <>
      (SELECT coalesce(sum(reserved_quantity), 0) FROM orders o
       WHERE o.portfolio_id = h.portfolio_id AND o.symbol = h.symbol AND o.status = 'new'))
-- (An order filled in part under a volume cap: its trade is its last fill, of what was left.)
+ (SELECT count(*) FROM orders o JOIN trades t ON t.id = o.trade_id
   WHERE (t.portfolio_id, t.symbol, t.side, t.quantity) IS DISTINCT FROM (o.portfolio_id, o.symbol, o.side, o.quantity - o.filled_quantity))
-- Under a volume cap every fill but a forced sale was counted against it, once.
+ (SELECT count(*) FROM (SELECT portfolio_id, symbol, sum(quantity) AS counted FROM volume_fills GROUP BY 1, 2) v
   WHERE v.counted <> (SELECT coalesce(sum(t.quantity), 0) FROM trades t
                       WHERE t.portfolio_id = v.portfolio_id AND t.symbol = v.symbol AND t.source <> 'liquidation'))
-- Orders with legs: of a pair of legs, a filled one leaves its sibling closed (no two
-- fills, none left open beside it); no leg still waits once its entry has closed.
+ (SELECT count(*) FROM orders a JOIN orders b ON b.id = a.sibling_id WHERE a.status = 'filled' AND b.status IN ('filled', 'new', 'held'))
+ (SELECT count(*) FROM orders l JOIN orders e ON e.id = l.parent_id WHERE l.status = 'held' AND e.status <> 'new')
-- A replacement is all or nothing: each replaced order and its successor name each other.
+ (SELECT count(*) FROM orders o WHERE o.status = 'replaced' AND NOT EXISTS (
      SELECT 1 FROM orders n WHERE n.id = o.replaced_by AND n.replaces = o.id))
+ (SELECT count(*) FROM orders n WHERE n.replaces IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM orders o WHERE o.id = n.replaces AND o.status = 'replaced' AND o.replaced_by = n.id))
-- Every resting limit or stop order that filled told its owner once (notify_order_outcome),
-- whichever process filled it and whatever was killed meanwhile.
+ (SELECT count(*) FROM users u WHERE
      (SELECT count(*) FROM orders o WHERE o.user_id = u.id AND o.status = 'filled' AND o.type <> 'market')
   <> (SELECT count(*) FROM notifications n WHERE n.user_id = u.id AND n.title LIKE 'Order to % filled at %'
         AND (n.body LIKE 'Your limit order%' OR n.body LIKE 'Your stop order%' OR n.body LIKE 'Your stop-limit order%')))
"""


def portfolio_ledger(ids):
    """The ledger checks above for the dollar portfolios `ids` alone, in one statement:
    (portfolios found, violations, trades not tied to an order or an Idempotency-Key).
    Violations count, per portfolio: net worth + fees ≠ money paid in (cash movements);
    negative cash or shares, cash below what open orders reserve; cash, quantities or
    paid-in other than the history rebuilds; reservations other than the open orders
    hold; a filled order whose trade is not that order's. (A scenario league's portfolio's
    worth moves by its market: SCENARIO_MOVE.)"""
    ids = ",".join(str(int(i)) for i in ids) or "NULL"
    return f"""
SELECT (SELECT count(*) FROM portfolios WHERE id IN ({ids})),
  (SELECT count(*) FROM portfolios p WHERE p.id IN ({ids}) AND abs(
        p.cash + coalesce((SELECT sum(v.value) FROM holding_values v WHERE v.portfolio_id = p.id), 0)
      + (SELECT coalesce(sum(fee), 0) FROM trades t WHERE t.portfolio_id = p.id)
      - {SCENARIO_MOVE}
      - (SELECT coalesce(sum(amount), 0) FROM cash_movements c WHERE c.portfolio_id = p.id)) > 0)
+ (SELECT count(*) FROM portfolios p WHERE p.id IN ({ids}) AND (p.cash < 0 OR p.reserved_cash > p.cash))
+ (SELECT count(*) FROM holdings h WHERE h.portfolio_id IN ({ids}) AND h.quantity < 0)
+ (SELECT count(*) FROM portfolios p WHERE p.id IN ({ids}) AND p.cash <>
      (SELECT coalesce(sum(amount), 0) FROM cash_movements c WHERE c.portfolio_id = p.id)
    - (SELECT coalesce(sum(CASE side WHEN 'buy' THEN amount + fee ELSE fee - amount END), 0) FROM trades t WHERE t.portfolio_id = p.id))
+ (SELECT count(*) FROM holdings h WHERE h.portfolio_id IN ({ids}) AND h.quantity <>
      (SELECT coalesce(sum(CASE side WHEN 'buy' THEN quantity ELSE -quantity END), 0) FROM trades t
       WHERE t.portfolio_id = h.portfolio_id AND t.symbol = h.symbol)
    + (SELECT coalesce(sum(x.quantity_after - x.quantity_before), 0)
       FROM corporate_action_applications x JOIN corporate_actions a ON a.id = x.action_id
       WHERE x.portfolio_id = h.portfolio_id AND a.symbol = h.symbol))
+ (SELECT count(*) FROM portfolios p WHERE p.id IN ({ids}) AND p.paid_in <>
      (SELECT coalesce(sum(amount), 0) FROM cash_movements c
       WHERE c.portfolio_id = p.id AND c.kind NOT IN ('dividend', 'cash_in_lieu', 'interest', 'borrow_fee')))
+ (SELECT count(*) FROM portfolios p WHERE p.id IN ({ids}) AND p.reserved_cash <>
      (SELECT coalesce(sum(reserved_cash), 0) FROM orders o WHERE o.portfolio_id = p.id AND o.status = 'new'))
+ (SELECT count(*) FROM holdings h WHERE h.portfolio_id IN ({ids}) AND h.reserved_quantity <>
      (SELECT coalesce(sum(reserved_quantity), 0) FROM orders o
       WHERE o.portfolio_id = h.portfolio_id AND o.symbol = h.symbol AND o.status = 'new'))
+ (SELECT count(*) FROM orders o JOIN trades t ON t.id = o.trade_id WHERE o.portfolio_id IN ({ids})
   AND (t.portfolio_id, t.symbol, t.side, t.quantity) IS DISTINCT FROM (o.portfolio_id, o.symbol, o.side, o.quantity)),
  (SELECT count(*) FROM trades t WHERE t.portfolio_id IN ({ids})
     AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id)
     AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.trade_id = t.id))
"""


def order_rows(cids):
    """Every order placed under one of these client order ids (whoever placed it):
    client order id, UUID, user, portfolio, status, trade (empty when none)."""
    quoted = ",".join("'" + cid.replace("'", "''") + "'" for cid in cids) or "NULL"
    return f"""
SELECT o.client_order_id, o.uuid, o.user_id, o.portfolio_id, o.status, coalesce(o.trade_id::text, '')
FROM orders o WHERE o.client_order_id IN ({quoted})
"""


# Every row a deleted user (and their portfolios) could have left, in every table with a
# user or portfolio column but the standings (frozen standings of finished leagues keep a
# deleted player's row, named `erased`; live ones are a cache taken afresh) and the audit
# log (which keeps ids by design): a query that lists them, run first to build the count.
LEFTOVER_COLUMNS = """
SELECT c.table_name, c.column_name FROM information_schema.columns c
JOIN information_schema.tables t USING (table_schema, table_name)
WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
  AND (c.column_name IN ('user_id', 'portfolio_id', 'owner_id', 'bot_owner_id', 'managed_by')
       OR (c.table_name = 'users' AND c.column_name = 'id')
       OR (c.table_name = 'portfolios' AND c.column_name = 'id'))
  AND c.table_name NOT IN ('league_standings', 'league_live_standings')
ORDER BY 1, 2
"""


def leftovers(columns, user_ids, portfolio_ids):
    """One statement counting, per table and column of `columns` (rows of LEFTOVER_COLUMNS),
    the rows naming one of these users or portfolios: [(table.column, count)] of those > 0,
    and the number of columns looked at."""
    users = ",".join(str(int(i)) for i in user_ids) or "NULL"
    portfolios = ",".join(str(int(i)) for i in portfolio_ids) or "NULL"
    parts = []
    for table, column in columns:
        if table == "portfolios" and column == "id":
            ids = portfolios
        elif column == "portfolio_id":
            ids = portfolios
        else:
            ids = users
        parts.append(f"SELECT '{table}.{column}', count(*) FROM {table} WHERE {column} IN ({ids})")
    return " UNION ALL ".join(parts)
