#!/usr/bin/env python3
"""make test-cluster: a cluster on loopback (scripts/cluster: three servers behind
HAProxy, pgbouncer, a Patroni primary and synchronous replica) under load from keyed
trades, resting orders, readers and stream clients, while one part after another is
killed. Each scenario asserts its figures; the run ends with a table (also written as
JSON to .build/cluster/results.json, the cluster's logs to .build/cluster/logs) and a non-zero exit when anything failed.

    Tests/cluster/suite.py [--only reads bots server pgbouncer replica primary] [--binary PATH]
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reliability"))
from harness import ADMIN, JWT_SECRET, ROOT, Client, Database, StreamWatcher, new_key  # noqa: E402
from suite import FLIP_PRICES, Ledger, Result, check_ledger, keyed_trader, orders_left_open, register_players, resting_flow, seed_market  # noqa: E402

HTTP_PORT = int(os.environ.get("TEST_CLUSTER_HTTP_PORT", "18190"))
# Below Linux's ephemeral ports (32768–60999): a port an outgoing connection of an earlier
# run left in TIME-WAIT cannot be listened on.
PORT_BASE = int(os.environ.get("TEST_CLUSTER_PORT_BASE", "27500"))
# The cluster's settings a failover waits on (scripts/cluster): Patroni's ttl.
WRITE_OUTAGE_TARGET = 30.0


class Cluster:
    """scripts/cluster with a name and ports of its own, servers set up for tests."""

    def __init__(self, binary, logs):
        self.env = dict(os.environ)
        self.env.update({
            "CLUSTER_NAME": "cluster-test", "CLUSTER_HTTP_PORT": str(HTTP_PORT), "CLUSTER_PORT_BASE": str(PORT_BASE),
            "CLUSTER_BINARY": binary, "CLUSTER_SEED": "0",
            "PASSWORD_HASH_PROFILE": "test", "JWT_SECRET": JWT_SECRET, "LOG_LEVEL": "notice",
            "QUOTE_PROVIDER": "database", "ADMIN_USERNAME": ADMIN[0], "ADMIN_PASSWORD": ADMIN[1],
            "STARTING_CASH": "10000.00", "DATABASE_POOL_SIZE": "16", "ORDER_SWEEP_SECONDS": "1",
            "REGISTRATIONS_PER_ADDRESS": "1000000", "LOGIN_FAILURES_PER_ADDRESS": "1000000",
            "LOGIN_FAILURES_GLOBAL": "1000000",
        })
        self.logs = logs
        self.database = Database()
        self.base = f"http://127.0.0.1:{HTTP_PORT}"

    def sh(self, *args, check=True):
        done = subprocess.run([os.path.join(ROOT, "scripts", "cluster"), *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True)
        if check and done.returncode != 0:
            raise RuntimeError(f"scripts/cluster {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
        return done.stdout.strip()

    async def run(self, *args):
        """`sh` on a thread of its own, so the load goes on while the part stops or starts."""
        return await asyncio.to_thread(self.sh, *args)

    async def metrics(self):
        return await asyncio.to_thread(self.server_metrics)

    def start(self):
        self.sh("destroy", check=False)
        self.sh("start")
        self.database.url = self.sh("url", "primary")

    def leader(self):
        return self.sh("leader", check=False)

    def sync(self):
        return self.sh("sync", check=False)

    def server_metrics(self):
        """Each running server's stale-read counters: {server: {metric: value}}."""
        figures = {}
        for index in (1, 2, 3):
            port = PORT_BASE + 50 + index
            done = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True)
            values = {}
            for line in done.stdout.splitlines():
                if line.startswith(("db_stale_reads_total", "db_every_commit_reads_total", "db_replica_fallbacks_total", "db_replica_lag_seconds")):
                    name, value = line.rsplit(" ", 1)
                    values[name] = float(value)
            figures[f"server{index}"] = values
        return figures

    async def wait(self, condition, timeout, step=0.5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            await asyncio.sleep(step)
        return False


def reads_answered(metrics, server, name="db_stale_reads_total"):
    """How many reads of the metric `name` the `server` (replica or primary) answered, over every process."""
    return sum(v.get(f'{name}{{server="{server}"}}', 0) for v in metrics.values())


class Load:
    """Keyed trades, resting orders, readers and two stream clients through the balancer,
    with the moment of every answered write and every read kept."""

    def __init__(self, client, admin, players, watchers):
        self.client = client
        self.admin = admin
        self.players = players
        self.watchers = watchers
        self.ledger = Ledger()
        self.writes = []  # monotonic times of answered trades (200, or 422 refused by the database)
        self.reads = []   # (monotonic time it was sent, status)
        self.failed_writes = {}
        self.flow = {"resting orders placed": 0, "resting orders replaced": 0}

    async def trader(self, deadline):
        await keyed_trader(self.client, self.players, self.ledger, deadline, lambda: False,
                           give_up_after=60, answered_at=self.writes, failed=self.failed_writes)

    async def reader(self, deadline):
        token, _ = self.players[0]
        paths = ["/api/stock/market?limit=5", "/api/stock/R1/chart", "/api/stock/movers"]
        while time.monotonic() < deadline:
            sent = time.monotonic()
            status, _, _ = await self.client.request("GET", random.choice(paths), token, timeout=5)
            self.reads.append((sent, status))
            await asyncio.sleep(0.1)

    async def run(self, seconds, traders=16):
        deadline = time.monotonic() + seconds
        await asyncio.gather(*(self.trader(deadline) for _ in range(traders)), self.reader(deadline), self.reader(deadline),
                             resting_flow(self.client, self.admin, self.players, deadline, self.flow))

    def write_gap(self, since):
        """The longest time without an answered write from `since` on (the outage)."""
        return self.write_gap_at(since)[0]

    def write_gap_at(self, since):
        """(the longest time without an answered write from `since` on, when it began, in
        seconds after `since`)."""
        times = [since] + sorted(t for t in self.writes if t >= since)
        gaps = [(b - a, a - since) for a, b in zip(times, times[1:])]
        return max(gaps, default=(None, None))

    def reads_between(self, start, end):
        window = [status for t, status in self.reads if start <= t <= end]
        return sum(1 for s in window if s == 200), len(window)

    def failed_reads(self, start, end):
        """Statuses of the reads that failed in the window: {status: count}."""
        failed = {}
        for t, status in self.reads:
            if start <= t <= end and status != 200:
                failed[status] = failed.get(status, 0) + 1
        return failed


async def prepare(cluster, players_count=40):
    client = Client(cluster.base, connections=96)
    admin = await seed_market(client)
    players = await register_players(client, players_count, f"cl{random.randint(0, 10**6)}_")
    watchers = [StreamWatcher(cluster.base, token, {"orders": True, "quotes": ["FLIP"]}).start() for token, _ in players[:2]]
    return client, admin, players, watchers


def finish_checks(result, cluster, load):
    check_ledger(result, cluster.database, load.ledger)
    result.figures.update(load.flow)
    result.figures["failed write attempts by status"] = load.failed_writes
    result.check(load.ledger.unfinished == 0, f"{load.ledger.unfinished} orders never answered in 60 s of retries")


async def scenario_reads(cluster, client, admin, players, watchers):
    """A player reads their own writes: right after each acknowledged buy, the profit and
    loss (a read the replica serves) shows the shares, whichever server answers; and the
    replica does serve reads."""
    result = Result("reading one's own writes")
    before = cluster.server_metrics()
    mismatches = rounds = 0

    async def player(token):
        nonlocal mismatches, rounds
        status, portfolio, _ = await client.request("GET", "/api/portfolio", token)
        assert status == 200, portfolio
        held = next((h["quantity"] for h in portfolio.get("holdings", []) if h["symbol"] == "R9"), 0)
        for _ in range(20):
            status, _, _ = await client.request("POST", "/api/stock/buy", token, {"symbol": "R9", "amount": 1},
                                                headers={"Idempotency-Key": new_key()})
            if status != 200:
                continue
            held += 1
            rounds += 1
            status, pnl, _ = await client.request("GET", f"/api/portfolios/{portfolio['id']}/pnl", token)
            shown = next((h["quantity"] for h in pnl.get("holdings", []) if h["symbol"] == "R9"), 0) if status == 200 else None
            mismatches += shown != held

    await asyncio.gather(*(player(token) for token, _ in players[10:20]))
    after = cluster.server_metrics()
    on_replica = reads_answered(after, "replica") - reads_answered(before, "replica")
    result.figures.update({"buys then reads": rounds, "reads without the buy": mismatches, "stale-tolerant reads on the replica": on_replica})
    result.check(rounds >= 150, f"only {rounds} buys were answered")
    result.check(mismatches == 0, f"{mismatches} of {rounds} reads right after a buy did not show it")
    # A read on the process that made the buy waits for the replica to have it (often the
    # primary answers); on the other two, the replica answers: a quarter at the very least.
    result.check(on_replica >= rounds / 4, f"only {on_replica} of {rounds} reads went to the replica")
    return result


BOT_PRICES = ("20.50", "20.00")


async def scenario_bots(cluster, client, admin, players, watchers):
    """Bots poll their account and positions on the replica and never read them older than
    their last fill: each bot buys R5 with market orders (filled as placed) and BOTS with
    resting limit orders the matcher fills on whichever server sees the price fall; as soon
    as a bot knows of a fill (its order reads filled), `/v2/positions` shows the shares and
    `/v2/account` the cash the primary holds, whichever server answers; and the replica
    answers most of those polls. Every fill is at the price the symbol ends at (R5's fixed
    quote, BOTS's lower one), as the later scenarios' ledger checks value holdings."""
    result = Result("bots read their fills")
    status, body, _ = await client.request("PUT", "/api/admin/instruments", admin, [{"symbol": "BOTS", "name": "Bot Reads Corp"}])
    assert status == 200, body
    status, body, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "BOTS", "price": BOT_PRICES[0]}])
    assert status == 200, body
    before = cluster.server_metrics()
    figures = {"fills": 0, "fills by the matcher": 0, "polls": 0, "positions older than the fill": 0,
               "accounts older than the fill": 0, "orders not filled in 30 s": 0}
    done = asyncio.Event()

    async def mover():
        index = 0
        while not done.is_set():
            index += 1
            await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "BOTS", "price": BOT_PRICES[index % 2]}], timeout=10)
            await asyncio.sleep(0.4)

    async def filled(token, order):
        deadline = time.monotonic() + 30
        while order.get("status") != "filled" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            status, body, _ = await client.request("GET", f"/v2/orders/{order['id']}", token)
            if status == 200:
                order = body
        return order.get("status") == "filled"

    async def positions(token):
        status, body, _ = await client.request("GET", "/v2/positions", token)
        return {p["symbol"]: int(p["qty"]) for p in body} if status == 200 else None

    async def bot(token, user_id):
        held = await positions(token)
        for round_ in range(16):
            limit = round_ % 2 == 1
            symbol = "BOTS" if limit else "R5"
            ticket = {"symbol": symbol, "qty": "1", "side": "buy", "type": "limit" if limit else "market",
                      "time_in_force": "gtc" if limit else "day"}
            if limit:
                ticket["limit_price"] = BOT_PRICES[1]
            status, order, _ = await client.request("POST", "/v2/orders", token, ticket)
            if status != 200:
                result.check(False, f"a bot's order was refused: {status} {order}")
                continue
            resting = order.get("status") != "filled"
            if not await filled(token, order):
                figures["orders not filled in 30 s"] += 1
                continue
            held[symbol] = held.get(symbol, 0) + 1
            figures["fills"] += 1
            figures["fills by the matcher"] += resting
            # The bot knows of the fill: its next polls, on any server, must show it.
            shown = await positions(token)
            status, account, _ = await client.request("GET", "/v2/account", token)
            cash = Decimal(account["cash"]) if status == 200 else None
            # Nothing else moves this bot's money: the primary's cash now is the cash after the fill.
            primary_cash = Decimal(await cluster.database.scalar_async(
                f"SELECT cash FROM portfolios WHERE user_id = {int(user_id)} AND kind = 'personal'"))
            figures["polls"] += 2
            figures["positions older than the fill"] += shown != held
            figures["accounts older than the fill"] += cash != primary_cash

    moving = asyncio.create_task(mover())
    await asyncio.gather(*(bot(token, user_id) for token, user_id in players[20:30]))
    done.set()
    await moving
    status, body, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "BOTS", "price": BOT_PRICES[1]}])
    result.check(status == 200, f"BOTS's last price was not set: {status} {body}")
    after = cluster.server_metrics()
    on_replica = reads_answered(after, "replica", "db_every_commit_reads_total") - reads_answered(before, "replica", "db_every_commit_reads_total")
    on_primary = reads_answered(after, "primary", "db_every_commit_reads_total") - reads_answered(before, "primary", "db_every_commit_reads_total")
    figures.update({"polls on the replica": on_replica, "polls on the primary": on_primary})
    result.figures.update(figures)
    result.check(figures["fills"] >= 140, f"only {figures['fills']} of 160 bot orders filled")
    result.check(figures["fills by the matcher"] >= 20, f"only {figures['fills by the matcher']} fills by the matcher")
    result.check(figures["positions older than the fill"] == 0,
                 f"{figures['positions older than the fill']} polls of /v2/positions did not show the fill the bot knew of")
    result.check(figures["accounts older than the fill"] == 0,
                 f"{figures['accounts older than the fill']} polls of /v2/account did not show the fill's cash")
    # The cluster's replica is synchronous with remote_apply: it takes the polls.
    result.check(on_replica >= figures["polls"] / 2, f"only {on_replica} of {figures['polls']} bot polls went to the replica")
    result.check(int(cluster.database.scalar("SELECT count(*) FROM trades WHERE symbol = 'BOTS' AND price <> 20.00")) == 0,
                 "a BOTS limit buy at 20.00 filled at another price")
    return result


async def scenario_server(cluster, client, admin, players, watchers):
    """kill -9 one app server under load: the balancer routes around it; retried keys lose nothing."""
    result = Result("kill -9 an app server")
    load = Load(client, admin, players, watchers)
    connections = sum(w.connections for w in watchers)

    async def disrupt():
        await asyncio.sleep(5)
        killed = time.monotonic()
        await cluster.run("kill", "server2")
        await asyncio.sleep(8)
        await cluster.run("start-part", "server2")
        return killed

    killed, _ = await asyncio.gather(disrupt(), load.run(20))
    finish_checks(result, cluster, load)
    gap = load.write_gap(killed)
    ok, total = load.reads_between(killed, killed + 8)
    result.figures.update({"longest write gap after the kill s": round(gap, 2), "reads answered while it was down": f"{ok} of {total}",
                           "stream reconnections": sum(w.connections for w in watchers) - connections})
    result.check(gap < 5, f"writes stopped for {gap:.1f} s after one server of three was killed")
    result.check(total > 0 and ok == total, f"reads while a server was down: {ok} of {total} answered")
    return result


async def scenario_pgbouncer(cluster, client, admin, players, watchers):
    """kill -9 pgbouncer: the servers answer 503 while it is gone and recover within seconds of its return."""
    result = Result("kill -9 pgbouncer")
    load = Load(client, admin, players, watchers)
    marks = {}

    async def disrupt():
        await asyncio.sleep(5)
        await cluster.run("kill", "pgbouncer")
        marks["killed"] = time.monotonic()
        await asyncio.sleep(6)
        await cluster.run("start-part", "pgbouncer")
        marks["back"] = time.monotonic()

    await asyncio.gather(disrupt(), load.run(22))
    finish_checks(result, cluster, load)
    after = sorted(t for t in load.writes if t >= marks["back"])
    recovery = after[0] - marks["back"] if after else None
    during = {k: v for k, v in load.failed_writes.items()}
    result.figures.update({"first write after pgbouncer's return s": round(recovery, 2) if recovery is not None else None})
    result.check(recovery is not None and recovery < 5, f"writes came back {recovery} s after pgbouncer did")
    result.check(set(during) <= {503}, f"failed writes answered other than 503: {during}")
    return result


async def scenario_replica(cluster, client, admin, players, watchers):
    """Stop the replica: writes go on (Patroni drops it from synchronous_standby_names), and
    reads fall back to the primary at once."""
    result = Result("stop the replica")
    replica = cluster.sync()
    result.check(replica in ("node1", "node2"), f"no synchronous replica before the scenario: {replica!r}")
    load = Load(client, admin, players, watchers)
    marks = {}

    async def disrupt():
        await asyncio.sleep(5)
        marks["before"] = await cluster.metrics()
        marks["stopped"] = time.monotonic()
        await cluster.run("stop-part", replica)
        marks["down"] = time.monotonic()
        await asyncio.sleep(8)
        marks["after"] = await cluster.metrics()
        await cluster.run("start-part", replica)
        marks["back"] = time.monotonic()

    await asyncio.gather(disrupt(), load.run(20))
    finish_checks(result, cluster, load)
    gap, gap_start = load.write_gap_at(marks["stopped"])
    ok, total = load.reads_between(marks["stopped"], marks["back"])
    fell_back = reads_answered(marks["after"], "primary") - reads_answered(marks["before"], "primary")
    rejoined = await cluster.wait(lambda: cluster.sync() == replica, 90)
    result.figures.update({"longest write gap after the stop s": round(gap, 2), "it began s after the stop": round(gap_start, 2),
                           "replica started again s after the stop": round(marks["back"] - marks["stopped"], 2),
                           "reads answered while it was down": f"{ok} of {total}",
                           "failed reads by status": load.failed_reads(marks["stopped"], marks["back"]),
                           "stale reads on the primary while it was down": fell_back, "replica back as synchronous": rejoined})
    result.check(gap < 10, f"writes stopped for {gap:.1f} s when the replica stopped")
    # A read in flight on the replica as it shuts down may be lost (its client retries);
    # every later one is answered by the primary.
    result.check(total > 0 and ok >= 0.95 * total, f"reads while the replica was down: {ok} of {total} answered")
    result.check(fell_back > 0, "no read went to the primary while the replica was down")
    result.check(rejoined, "the replica did not come back as the synchronous standby within 90 s")
    return result


async def scenario_primary(cluster, client, admin, players, watchers):
    """kill -9 the primary (Patroni and PostgreSQL): the replica is promoted, every
    acknowledged trade is on it once, reads go on, streams get a gap and a snapshot, and
    the old primary rejoins as the replica."""
    result = Result("kill -9 the primary")
    old = cluster.leader()
    result.check(old in ("node1", "node2"), f"no primary before the scenario: {old!r}")
    load = Load(client, admin, players, watchers)
    gaps_before = [len(w.of_type("gap")) for w in watchers]
    snapshots_before = [len(w.of_type("snapshot")) for w in watchers]
    marks = {}

    async def disrupt():
        await asyncio.sleep(5)
        marks["killed"] = time.monotonic()
        await cluster.run("kill", old)

    await asyncio.gather(disrupt(), load.run(50))
    # A request its client gave up on during the outage may still be waiting in pgbouncer
    # (query_wait_timeout, 10 s) and land later: FLIP's quote is set once more after that,
    # so the ledger is checked at the price the resting orders filled at.
    await asyncio.sleep(12)
    for _ in range(30):
        status, _, _ = await client.request("POST", "/api/admin/quotes", admin, [{"symbol": "FLIP", "price": FLIP_PRICES[1]}], timeout=10)
        if status == 200:
            break
        await asyncio.sleep(1)
    new = cluster.leader()
    cluster.database.url = cluster.sh("url", "primary")
    finish_checks(result, cluster, load)
    left = await orders_left_open(cluster.database)
    outage = load.write_gap(marks["killed"])
    after_kill = sorted(t for t in load.writes if t >= marks["killed"])
    first_write = next((b for a, b in zip([marks["killed"]] + after_kill, after_kill) if b - a > 2), None)
    ok, total = load.reads_between(marks["killed"], first_write or marks["killed"] + outage)
    await asyncio.sleep(2)
    gaps = [len(w.of_type("gap")) - g for w, g in zip(watchers, gaps_before)]
    snapshots = [len(w.of_type("snapshot")) - s for w, s in zip(watchers, snapshots_before)]
    cluster.sh("start-part", old)
    rejoined_at = time.monotonic()
    rejoined = await cluster.wait(lambda: cluster.sync() == old, 120)
    result.figures.update({
        "old primary": old, "new primary": new, "writes back after s": round(outage, 1),
        "reads answered during the outage": f"{ok} of {total}",
        "failed reads by status": load.failed_reads(marks["killed"], marks["killed"] + outage),
        "failed reads at s after the kill": [round(t - marks["killed"], 1) for t, status in load.reads
                                             if marks["killed"] <= t <= marks["killed"] + outage and status != 200],
        "stream gaps": gaps, "stream snapshots": snapshots,
        "resting orders left open": left,
        "old primary back as synchronous replica s": round(time.monotonic() - rejoined_at, 1) if rejoined else None,
    })
    result.check(new in ("node1", "node2") and new != old, f"no promotion: primary {new!r} after killing {old!r}")
    result.check(outage <= WRITE_OUTAGE_TARGET, f"writes were gone for {outage:.1f} s (target {WRITE_OUTAGE_TARGET} s)")
    result.check(total > 0 and ok >= 0.9 * total, f"reads during the outage: {ok} of {total} answered")
    result.check(all(g >= 1 for g in gaps), f"stream clients without a gap event: {gaps}")
    result.check(all(s >= 1 for s in snapshots), f"stream clients without a fresh snapshot: {snapshots}")
    result.check(left == 0, f"{left} resting orders crossed by the price were never filled")
    result.check(rejoined, "the old primary did not rejoin as the synchronous replica within 120 s")
    return result


SCENARIOS = {"reads": scenario_reads, "bots": scenario_bots, "server": scenario_server, "pgbouncer": scenario_pgbouncer, "replica": scenario_replica, "primary": scenario_primary}


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "mockstock"))
    parser.add_argument("--logs", default=os.path.join(ROOT, ".build", "cluster"))
    parser.add_argument("--keep", action="store_true", help="leave the cluster running afterwards")
    args = parser.parse_args()
    os.makedirs(args.logs, exist_ok=True)
    cluster = Cluster(args.binary, args.logs)
    results = []
    started = time.monotonic()
    try:
        cluster.start()
        print(f"== cluster up in {time.monotonic() - started:.1f} s", flush=True)
        client, admin, players, watchers = await prepare(cluster)
        for name in args.only:
            print(f"== {name} ...", flush=True)
            began = time.monotonic()
            result = await SCENARIOS[name](cluster, client, admin, players, watchers)
            result.figures["seconds taken"] = round(time.monotonic() - began, 1)
            results.append(result)
            print(f"   {'PASS' if result.passed else 'FAIL'} {json.dumps(result.figures)}", flush=True)
            for failure in result.failures:
                print(f"   ! {failure}", flush=True)
        for watcher in watchers:
            await watcher.stop()
        problems = client.problems
        await client.close()
        if problems:
            failed = Result("answers are problem+json")
            failed.check(False, f"{len(problems)} error answers without problem+json: {problems[:3]}")
            results.append(failed)
    except Exception as error:  # the cluster did not come up, or a scenario broke: a failure, never a skip
        failed = Result("cluster")
        failed.check(False, f"{type(error).__name__}: {error}")
        results.append(failed)
        print(f"   ! {error}", flush=True)
    finally:
        logs = cluster.sh("logs", check=False)
        if logs and os.path.isdir(logs):
            shutil.rmtree(os.path.join(args.logs, "logs"), ignore_errors=True)
            shutil.copytree(logs, os.path.join(args.logs, "logs"))
        if not args.keep:
            cluster.sh("destroy", check=False)
    with open(os.path.join(args.logs, "results.json"), "w") as out:
        json.dump([{"name": r.name, "passed": r.passed, "figures": r.figures, "failures": r.failures} for r in results], out, indent=2)
    print("\n| Scenario | Result | Figures |\n|---|---|---|")
    for r in results:
        figures = ", ".join(f"{k}: {v}" for k, v in r.figures.items())
        print(f"| {r.name} | {'pass' if r.passed else 'FAIL'} | {figures} |")
    return 0 if results and all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
