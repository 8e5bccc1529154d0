"""Scenario leagues in the reliability suite: isolated leagues with a market of their own
(`"market": {"kind": "replay", ...}`), replaying a window of stored daily history on the
league's clock — advanced by its host (`POST /api/leagues/{id}/market/advance`) or by every
server process's chore (`dayMinutes`) — with events the host scripts ahead
(`POST /api/leagues/{id}/events`). Each league's instruments are instruments of their own
(`SYMBOL@LEAGUE`, shown without the suffix); `league_bars` is the one rule of their prices
and `league_market_advance` their one writer.

`ScenarioPlay` is the conservation scenario's part: a host advances a league day by day
while its members trade it on both processes (market trades, resting limit and stop orders
that cross on later days, `day` orders that must expire), and a blind league on a clock of
a minute a day started minutes ago, so that several days are due at once and the two
processes' chores race to advance it. `ScenarioCrash` is the crash scenario's: a host
advancing a long window and leagues whose clocks turn while the server processes are
killed. `hostile_setup` and `hostile_cases` are the hostile scenario's (and
`hostile_stored_orders`, orders naming stored symbols). The conservation and crash parts end with
checks read from the database (`check_markets`).

The servers apply the `sql/` of their working directory (or `RESOURCE_DIR`) at every start:
run them against the tree their binary was built from (docs/RELIABILITY.md, Notes)."""
import asyncio
import collections
import json
import random
import time
import uuid
from datetime import date, timedelta
from decimal import Decimal

from harness import Client, alpaca_headers, portfolio_ledger

# The stored history the leagues replay: six instruments over 140 weekdays of 2019 (no
# other scenario stores 2019 bars, so only these have closes in the windows). Closes move
# 2–8 % a day; SCNE has no bar on three days (a league replays its last bar then, without
# volume) and SCNF splits 2-for-1 (a league replays split-adjusted prices).
SYMBOLS = ("SCNA", "SCNB", "SCNC", "SCND", "SCNE", "SCNF")


def weekdays(first, count):
    days, day = [], first
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day.isoformat())
        day += timedelta(days=1)
    return days


DAYS = weekdays(date(2019, 1, 2), 140)
GAPS = {"SCNE": {5, 17, 60}}
SPLIT = ("SCNF", 12)


def history_csv():
    rng = random.Random(2019)
    rows = ["symbol,date,open,high,low,close,volume,dividend,split"]
    for symbol in SYMBOLS:
        price = float(rng.choice([20, 35, 50, 80, 120]))
        for index, day in enumerate(DAYS):
            before = price
            if index:
                price = max(2.0, price * (1 + rng.choice([-1, 1]) * rng.uniform(0.02, 0.08)))
            if index in GAPS.get(symbol, ()):
                continue
            factor = 2 if symbol == SPLIT[0] and index >= SPLIT[1] else 1
            split = 2 if (symbol, index) == SPLIT else 1
            o, c = before / factor, price / factor
            rows.append(f"{symbol},{day},{o:.2f},{max(o, c) * 1.01:.2f},{min(o, c) * 0.99:.2f},{c:.2f},{rng.randint(50_000, 150_000)},0,{split}")
    return "\n".join(rows) + "\n"


def window(first, count):
    """The market of a window of `count` trading days from DAYS[first]."""
    return {"kind": "replay", "from": DAYS[first], "to": DAYS[first + count - 1]}


async def seed_history(client, admin):
    status, body, _ = await client.request("PUT", "/api/admin/instruments", admin,
                                           [{"symbol": s, "name": f"Scenario {s[-1]} Corp", "sector": "Replays"} for s in SYMBOLS])
    assert status == 200, body
    status, body, _ = await client.request("POST", "/api/admin/prices", admin, raw=history_csv().encode(), content_type="text/csv")
    assert status == 200, body


def iso(moment):
    """An epoch moment as the API takes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


# Checks, each one SQL statement (one consistent snapshot).

# Each scenario league's market now, one row per league, every figure a count:
# league, day, days, instruments;
# quotes not that day's close (league_bars; source 'league', its previous close the day
# before's) ; stored bars other than league_bars says for a day passed (dated bar_days[k]);
# bars league_bars has for the days passed; bars stored of its instruments (exactly one
# per instrument and day passed: no more, none dated otherwise);
# events due (day ≤ the day); due ones not applied exactly once (applied, with its news row,
# one news row of its headline); ones beyond the day applied (or posted); news rows that are
# no applied event's; members told of an applied event other than once (one who joined as
# it applied may not have been);
# fills of its instruments; fills at no close of a day passed; open `day` orders placed
# before the day began — more than a second before, and (a figure) within the second before,
# whose placing transaction raced the advance's expiry and committed after it (the sweep
# expires those, `league_day_ended`); `day` orders expired; orders expired otherwise
# (a gtc order, or another reason);
# trades, holdings and orders of its instruments outside its portfolios.
MARKETS = """
WITH m AS (SELECT * FROM league_markets WHERE league_id IN ({ids})),
bars AS MATERIALIZED (SELECT m.league_id, b.* FROM m CROSS JOIN LATERAL league_bars(m.league_id, 1, m.day) b),
ours AS (SELECT li.league_id, li.symbol FROM league_instruments li JOIN m USING (league_id))
SELECT m.league_id, m.day, cardinality(m.real_days), (SELECT count(*) FROM ours WHERE ours.league_id = m.league_id),
  (SELECT count(*) FROM ours li
     LEFT JOIN quotes q ON q.symbol = li.symbol
     LEFT JOIN bars b ON b.league_id = li.league_id AND b.symbol = li.symbol AND b.day = m.day
     LEFT JOIN bars y ON y.league_id = li.league_id AND y.symbol = li.symbol AND y.day = m.day - 1
   WHERE li.league_id = m.league_id AND (b.close IS NULL OR q.price IS DISTINCT FROM b.close OR q.source IS DISTINCT FROM 'league'
                                         OR q.previous_close IS DISTINCT FROM y.close)),
  (SELECT count(*) FROM bars b LEFT JOIN daily_bars d ON d.symbol = b.symbol AND d.day = m.bar_days[b.day]
   WHERE b.league_id = m.league_id AND (d.close IS DISTINCT FROM b.close OR d.open IS DISTINCT FROM b.open OR d.high IS DISTINCT FROM b.high
                                        OR d.low IS DISTINCT FROM b.low OR d.volume IS DISTINCT FROM b.volume)),
  (SELECT count(*) FROM bars b WHERE b.league_id = m.league_id),
  (SELECT count(*) FROM daily_bars d JOIN ours li ON li.symbol = d.symbol WHERE li.league_id = m.league_id),
  (SELECT count(*) FROM league_events e WHERE e.league_id = m.league_id AND e.day <= m.day),
  (SELECT count(*) FROM league_events e WHERE e.league_id = m.league_id AND e.day <= m.day AND (
      e.applied_at IS NULL OR NOT EXISTS (SELECT 1 FROM league_news n WHERE n.id = e.news_id AND n.league_id = m.league_id AND n.title = e.headline)
      OR (SELECT count(*) FROM league_news n WHERE n.league_id = m.league_id AND n.title = e.headline) <> 1)),
  (SELECT count(*) FROM league_events e WHERE e.league_id = m.league_id AND e.day > m.day AND (
      e.applied_at IS NOT NULL OR e.news_id IS NOT NULL
      OR EXISTS (SELECT 1 FROM league_news n WHERE n.league_id = m.league_id AND n.title = e.headline))),
  (SELECT count(*) FROM league_news n WHERE n.league_id = m.league_id AND NOT EXISTS (
      SELECT 1 FROM league_events e WHERE e.news_id = n.id AND e.applied_at IS NOT NULL)),
  (SELECT count(*) FROM league_events e JOIN league_members lm ON lm.league_id = e.league_id JOIN leagues l ON l.id = e.league_id
   WHERE e.league_id = m.league_id AND e.applied_at IS NOT NULL
     AND (SELECT count(*) FROM notifications n WHERE n.user_id = lm.user_id AND n.title = l.name || ': ' || e.headline)
         NOT IN (CASE WHEN lm.joined_at < e.applied_at - interval '1 second' THEN 1 ELSE 0 END, 1)),
  (SELECT count(*) FROM trades t JOIN ours li ON li.symbol = t.symbol WHERE li.league_id = m.league_id),
  (SELECT count(*) FROM trades t JOIN ours li ON li.symbol = t.symbol WHERE li.league_id = m.league_id
     AND NOT EXISTS (SELECT 1 FROM bars b WHERE b.league_id = m.league_id AND b.symbol = t.symbol AND b.close = t.price)),
  (SELECT count(*) FROM orders o JOIN ours li ON li.symbol = o.symbol
   WHERE li.league_id = m.league_id AND o.status = 'new' AND o.time_in_force = 'day' AND o.created_at < m.advanced_at - interval '1 second'),
  (SELECT count(*) FROM orders o JOIN ours li ON li.symbol = o.symbol
   WHERE li.league_id = m.league_id AND o.status = 'new' AND o.time_in_force = 'day'
     AND o.created_at >= m.advanced_at - interval '1 second' AND o.created_at < m.advanced_at),
  (SELECT count(*) FROM orders o JOIN ours li ON li.symbol = o.symbol
   WHERE li.league_id = m.league_id AND o.status = 'expired' AND o.time_in_force = 'day'),
  (SELECT count(*) FROM orders o JOIN ours li ON li.symbol = o.symbol
   WHERE li.league_id = m.league_id AND o.status = 'expired' AND (o.time_in_force <> 'day' OR o.reject_reason IS DISTINCT FROM 'The league day ended.')),
  (SELECT count(*) FROM trades t JOIN ours li ON li.symbol = t.symbol JOIN portfolios p ON p.id = t.portfolio_id
   WHERE li.league_id = m.league_id AND p.league_id IS DISTINCT FROM m.league_id)
+ (SELECT count(*) FROM holdings h JOIN ours li ON li.symbol = h.symbol JOIN portfolios p ON p.id = h.portfolio_id
   WHERE li.league_id = m.league_id AND p.league_id IS DISTINCT FROM m.league_id)
+ (SELECT count(*) FROM orders o JOIN ours li ON li.symbol = o.symbol JOIN portfolios p ON p.id = o.portfolio_id
   WHERE li.league_id = m.league_id AND p.league_id IS DISTINCT FROM m.league_id)
FROM m ORDER BY m.league_id
"""
MARKET_FIELDS = ["league", "day", "days", "instruments", "quotes wrong", "bars wrong", "bars expected", "bars stored", "events due",
                 "due events not applied once", "events applied early", "news not an event's", "members not told once",
                 "fills", "fills at no close", "day orders left from an earlier day", "day orders that raced the day's end",
                 "day orders expired", "orders expired wrongly",
                 "instruments traded outside the league"]

# Across the whole database: a scenario league's instruments are held, traded and ordered
# only in that league's portfolios, and a scenario league's portfolios hold, trade and
# order only its instruments (every other portfolio only the real market's).
PLACEMENT = """
SELECT (SELECT count(*) FROM holdings h JOIN instruments i ON i.symbol = h.symbol JOIN portfolios p ON p.id = h.portfolio_id
        WHERE i.league_id IS DISTINCT FROM (SELECT m.league_id FROM league_markets m WHERE m.league_id = p.league_id))
     + (SELECT count(*) FROM trades t JOIN instruments i ON i.symbol = t.symbol JOIN portfolios p ON p.id = t.portfolio_id
        WHERE i.league_id IS DISTINCT FROM (SELECT m.league_id FROM league_markets m WHERE m.league_id = p.league_id))
     + (SELECT count(*) FROM orders o JOIN instruments i ON i.symbol = o.symbol JOIN portfolios p ON p.id = o.portfolio_id
        WHERE i.league_id IS DISTINCT FROM (SELECT m.league_id FROM league_markets m WHERE m.league_id = p.league_id)),
       (SELECT count(*) FROM trades t JOIN instruments i ON i.symbol = t.symbol WHERE i.league_id IS NOT NULL)
"""

# Every moment's market, cheaply (taken once a second under load, and while processes are
# killed): per league, each instrument's quote is the close stored for the day now (dated
# bar_days[day]) and stamped with the advance's moment, it has exactly one bar per day
# passed, and exactly the events of the days passed are applied: an advance is all or
# nothing. The number of instruments and events that are not so.
SNAPSHOT = """
SELECT (SELECT count(*) FROM league_markets m JOIN league_instruments li USING (league_id)
        LEFT JOIN quotes q ON q.symbol = li.symbol
        LEFT JOIN daily_bars d ON d.symbol = li.symbol AND d.day = m.bar_days[m.day]
        WHERE m.league_id IN ({ids}) AND (q.price IS DISTINCT FROM d.close OR q.as_of IS DISTINCT FROM m.advanced_at
              OR (SELECT count(*) FROM daily_bars x WHERE x.symbol = li.symbol) <> m.day))
     + (SELECT count(*) FROM league_events e JOIN league_markets m USING (league_id)
        WHERE m.league_id IN ({ids}) AND (e.day <= m.day) <> (e.applied_at IS NOT NULL))
"""

# The league's closes of the days passed, and its fills with their orders (moments as epoch seconds).
CLOSES = """
SELECT m.league_id, b.symbol, b.day, b.close FROM league_markets m CROSS JOIN LATERAL league_bars(m.league_id, 1, m.day) b
WHERE m.league_id IN ({ids})
"""
FILLS = """
SELECT li.league_id, t.id, t.symbol, t.side, t.price, extract(epoch FROM t.created_at), coalesce(o.type, 'market'),
       coalesce(o.limit_price::text, ''), coalesce(o.stop_price::text, ''), coalesce(extract(epoch FROM o.created_at)::text, '')
FROM trades t JOIN league_instruments li ON li.symbol = t.symbol LEFT JOIN orders o ON o.trade_id = t.id
WHERE li.league_id IN ({ids})
"""
EXPIRED = """
SELECT li.league_id, o.id, extract(epoch FROM o.created_at), extract(epoch FROM o.expired_at)
FROM orders o JOIN league_instruments li ON li.symbol = o.symbol
WHERE li.league_id IN ({ids}) AND o.status = 'expired'
"""
# A host's advances: the league's start (day 1), then each answered advance (its audit
# event, written in the advance's transaction: its moment is the advance's).
HOST_ADVANCES = """
SELECT extract(epoch FROM m.advanced_at), m.day, 'now' FROM league_markets m WHERE m.league_id = {league}
UNION ALL SELECT extract(epoch FROM l.created_at), 1, 'start' FROM leagues l WHERE l.id = {league}
UNION ALL SELECT extract(epoch FROM a.at), (a.details ->> 'day')::int, 'advance' FROM audit_events a
WHERE a.league_id = {league} AND a.action = 'league.market_advance'
"""
# A fill is at the quote of its moment: for a trade a member sent, a moment while its
# request was in flight — or up to STALE before it was sent, as a process's quote cache
# holds a price up to QUOTE_CACHE_MS (500 ms) should the stream's announcement of another
# process's advance be late, and an advance's moment is its transaction's start, before it
# commits; for a resting order's fill, a moment from (STALE before) its placing to the
# fill's transaction. (Not the fill's transaction alone: a trade reads its quote before its
# transaction begins, which under load can be seconds later; see docs/RELIABILITY.md.)
STALE = 1.5


class Days:
    """A league's days over time: the moments (database epoch seconds) its market moved on,
    and every moment an advance ran (an order a day's end expired bears one)."""

    def __init__(self):
        self.moves = []  # (moment, day), the day growing
        self.advances = set()

    def add(self, moment, day):
        moment, day = float(moment), int(day)
        self.advances.add(round(moment, 6))
        if not self.moves or day > self.moves[-1][1]:
            self.moves.append((moment, day))

    def at(self, moment):
        """The day at `moment` (None before the league's first)."""
        day = None
        for at, reached in self.moves:
            if at <= moment:
                day = reached if day is None else max(day, reached)
        return day


async def host_days(database, league):
    """A host-advanced league's days: its start (day 1), then each advance answered (its
    audit event, written in the advance's transaction, bears the advance's moment; one that
    moved nothing, as the second of two sent at once may, has the day it found)."""
    rows = sorted((float(at), int(day)) for at, day, _ in await database.query_async(HOST_ADVANCES.format(league=int(league))))
    days = Days()
    for at, day in rows:
        days.add(at, day)
    return days


async def watch_days(database, days, ids):
    """Adds to `days` (league id -> Days) each league's start and the market's last move,
    as its row shows them now (read often enough, every move of a league on a clock)."""
    joined = ",".join(str(int(i)) for i in ids)
    for league, at, day, started in await database.query_async(
            f"SELECT m.league_id, extract(epoch FROM m.advanced_at), m.day, extract(epoch FROM l.created_at) "
            f"FROM league_markets m JOIN leagues l ON l.id = m.league_id WHERE m.league_id IN ({joined})"):
        known = days[int(league)]
        if not known.moves:
            known.add(started, 1)
        known.add(at, day)


async def check_markets(result, database, leagues, days, label, sent):
    """The end checks of scenario leagues `leagues` (ids), `days` their Days: each market
    as `MARKETS` reads it, its fills at the quote of their moment (`sent`: trade id -> the
    epoch moments its request was first sent and answered), its expired orders at an
    advance's; the placement of every league's instruments; figures per league."""
    ids = ",".join(str(int(i)) for i in leagues)
    rows = await database.query_async(MARKETS.format(ids=ids))
    figures = {}
    for row in rows:
        got = dict(zip(MARKET_FIELDS, (int(v) for v in row)))
        league = got["league"]
        wrong = {k: got[k] for k in ("quotes wrong", "bars wrong", "due events not applied once", "events applied early", "news not an event's",
                                     "members not told once", "fills at no close", "day orders left from an earlier day",
                                     "orders expired wrongly", "instruments traded outside the league") if got[k]}
        expected_bars = got["day"] * got["instruments"]
        if got["bars expected"] != expected_bars or got["bars stored"] != expected_bars:
            wrong["bars"] = f"{got['bars stored']} stored, {got['bars expected']} by league_bars, {expected_bars} for {got['day']} days"
        result.check(not wrong and got["instruments"] > 0, f"{label} league {league}'s market: {wrong} ({got})")
        figures[league] = got
    result.check(sorted(figures) == sorted(int(i) for i in leagues), f"{label}: markets found {sorted(figures)} of {leagues}")
    # Fills at the quote of their moment (STALE): a close of a day the league was at while
    # the member's request was in flight, or from its order's placing to the fill; within a
    # limit order's limit, a stop's stop.
    closes = collections.defaultdict(dict)
    for league, symbol, day, close in await database.query_async(CLOSES.format(ids=ids)):
        closes[(int(league), symbol)][int(day)] = Decimal(close)
    off_time, off_limit, later, kinds = [], [], collections.Counter(), collections.Counter()
    unwatched = 0
    for league, trade, symbol, side, price, at, kind, limit, stop, placed in await database.query_async(FILLS.format(ids=ids)):
        league, trade, price, at = int(league), int(trade), Decimal(price), float(at)
        kinds[(league, kind)] += 1
        known = days[league]
        if trade in sent:
            since, until = sent[trade][0] - STALE, sent[trade][1]
        elif placed:
            since, until = float(placed) - STALE, at
        else:
            # A trade no member's request is known for (none in these leagues): its transaction's moment.
            since, until = at - STALE, at
            unwatched += 1
        first, last = known.at(since), known.at(until)
        allowed = {d for d in range(first or 1, (last or 0) + 1)}
        if not any(closes[(league, symbol)].get(d) == price for d in allowed):
            off_time.append((league, trade, symbol, str(price), (first, last),
                             [str(closes[(league, symbol)].get(d)) for d in sorted(allowed)]))
        if (kind in ("limit", "stop_limit") and limit and (price > Decimal(limit) if side == "buy" else price < Decimal(limit))) or (
                kind == "stop" and stop and (price < Decimal(stop) if side == "buy" else price > Decimal(stop))):
            off_limit.append((league, int(trade), kind, side, str(price), limit, stop))
        if placed and known.at(float(placed)) is not None and known.at(at) > known.at(float(placed)):
            later[(league, kind)] += 1
    result.check(not off_time, f"{label}: {len(off_time)} fills not at the quote of their moment: {off_time[:3]}")
    result.check(not off_limit, f"{label}: {len(off_limit)} fills beyond their order's limit or stop: {off_limit[:3]}")
    # Each expired order expired at one of its league's advances ("when the league day ends"),
    # or after one, by the sweep, when it was placed before it: its placing raced that
    # advance and committed after the advance's expiry (`league_day_ended`).
    expired_wrongly = []
    for league, order, placed, expired in await database.query_async(EXPIRED.format(ids=ids)):
        advances = days[int(league)].advances
        ended = max((moment for moment in advances if moment <= float(expired)), default=None)
        if round(float(expired), 6) not in advances and not (ended is not None and float(placed) < ended):
            expired_wrongly.append((int(league), int(order), float(placed), float(expired)))
    result.check(not expired_wrongly, f"{label}: {len(expired_wrongly)} orders expired at no advance of their league: {expired_wrongly[:3]}")
    misplaced, league_fills = (int(n) for n in (await database.query_async(PLACEMENT))[0])
    result.check(misplaced == 0, f"{label}: {misplaced} holdings, trades or orders of an instrument outside its market's portfolios")
    return {"markets": {str(k): {f: v for f, v in g.items() if f != "league"} for k, g in figures.items()},
            "fills by league and kind": {f"{k[0]} {k[1]}": n for k, n in sorted(kinds.items())},
            "resting fills on a later day than placed": {f"{k[0]} {k[1]}": n for k, n in sorted(later.items())},
            "fills not at their moment's quote": len(off_time), "fills beyond limit or stop": len(off_limit),
            "fills of no request or order known": unwatched,
            "orders expired at no advance": len(expired_wrongly), "instruments outside their market": misplaced,
            "fills of league instruments (all leagues)": league_fills}


async def league_seats(client, owner, members, body):
    """A league `owner` creates with `body`, which each of `members` (token, user id) joins:
    the league and each member's (token, league portfolio)."""
    status, league, _ = await client.request("POST", "/api/leagues/create", owner, body)
    assert status == 201, league
    seats = []
    for token, _ in members:
        status, joined, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", token)
        assert status == 200, joined
        mine = (await client.request("GET", "/api/portfolios", token))[1]
        seats.append((token, next(p["id"] for p in mine if p["leagueId"] == league["id"])))
    return league, seats


class Member:
    def __init__(self, token, portfolio, league):
        self.token = token
        self.portfolio = portfolio
        self.league = league  # the league's id
        self.prices = {}  # shown symbol -> price, as the league's market last showed it
        self.read_at = 0.0
        self.held = collections.Counter()  # shares as the member's trades answered (fills may change them)
        self.doomed = set()  # day orders priced never to fill: left alone, they must expire


def resting_body(member, symbol, price, rng=random):
    """A resting order of `symbol` (quoted `price`): a limit buy under the quote, a limit
    sale over it or a stop sale under it (of shares held), a stop buy over it, each `gtc` or
    `day`; or a `day` limit buy at a fifth of the quote, which never fills (it must expire).
    The body, and whether it is the last kind."""
    held = member.held[symbol] > 0
    body = {"symbol": symbol, "quantity": rng.randint(1, 3), "timeInForce": rng.choice(["gtc", "day"]), "portfolioId": member.portfolio}
    choice = rng.random()
    if choice < 0.3:
        body.update({"side": "buy", "type": "limit", "limitPrice": f"{price * Decimal(rng.uniform(0.9, 0.99)):.2f}"})
    elif choice < 0.45 and held:
        body.update({"side": "sell", "type": "limit", "limitPrice": f"{price * Decimal(rng.uniform(1.01, 1.1)):.2f}"})
    elif choice < 0.6 and held:
        body.update({"side": "sell", "type": "stop", "stopPrice": f"{price * Decimal(rng.uniform(0.9, 0.99)):.2f}"})
    elif choice < 0.75:
        body.update({"side": "buy", "type": "stop", "stopPrice": f"{price * Decimal(rng.uniform(1.01, 1.1)):.2f}"})
    else:
        body.update({"side": "buy", "type": "limit", "limitPrice": f"{price / 5:.2f}", "timeInForce": "day"})
        return body, True
    return body, False


class ScenarioPlay:
    """The conservation scenario's scenario leagues: `tasks` runs the host and members of
    a host-advanced league, a blind league on a clock, and the market's snapshots."""

    HOSTED_DAYS = 24  # the host league's window (the load reaches day 15 or so)
    CLOCK_DAYS = 12
    # The clock league starts this long before it is made: day 4 is due at once, day 5
    # starts fifteen seconds later (and day 6 a minute after that).
    CLOCK_LATE = 225

    def __init__(self, result, database, bases, admin):
        self.result = result
        self.database = database
        self.clients = [Client(base, connections=16) for base in bases]
        self.admin = admin
        self.host = None
        self.hosted = None  # the host league (its create answer)
        self.clocked = None  # the clock league
        self.members = []  # of the host league
        self.clock_members = []
        self.clock_players = []  # (token, user id), seated in the clock league once it is made
        self.counts = collections.Counter()
        self.answers = []  # the host's advances: (days asked, day answered)
        self.host_day = 1  # the host league's day, as its host was last answered
        self.events = collections.defaultdict(list)  # league -> [(day, headline, event id)] acknowledged
        self.days = collections.defaultdict(Days)  # the clock league's days, as watched
        self.snapshots = {"taken": 0, "violations": 0}
        self.failures = 0
        self.key = None  # an API key on the first member's league portfolio
        self.sent = {}  # acknowledged market trade id -> (sent, answered), epoch seconds

    def fail(self, message):
        self.failures += 1
        if self.failures <= 20:
            self.result.check(False, message)

    async def prepare(self, host, members, clock_players):
        """The history, the host league (hosted without a seat, plain rules) and its members
        seated, then the clock league (`clock_league`), just before the load starts."""
        client = self.clients[0]
        await seed_history(client, self.admin)
        self.host = host
        self.hosted, seats = await league_seats(client, host[0], members, {
            "name": "Replay 2019", "mode": "isolated", "startingCash": "10000", "ownerPlays": False,
            "market": {**window(0, self.HOSTED_DAYS), "dayMinutes": None, "blind": False}})
        market = self.hosted["market"]
        self.result.check(market == {"kind": "replay", "from": DAYS[0], "to": DAYS[self.HOSTED_DAYS - 1], "dayMinutes": None, "blind": False,
                                     "day": 1, "days": self.HOSTED_DAYS}, f"the host league's market: {market}")
        self.members = [Member(token, portfolio, self.hosted["id"]) for token, portfolio in seats]
        self.clock_players = clock_players
        # Each member opens with two shares of every instrument and, on each, a `gtc` limit buy
        # and stop sale 3 % under the price and a stop buy 3 % over it, which later days cross
        # (day 5's event takes 20 % off everything, days 3 and 8 add 25 and 40 % to three),
        # and a `day` buy at a fifth of it, which the next day expires.
        for member in self.members:
            await self.opening(member, client)
        self.key = (await client.request("POST", "/api/api-keys", self.members[0].token, {"portfolioId": self.members[0].portfolio}))[1]
        # Last, just before the load: the clock league.
        await self.clock_league()

    async def opening(self, member, client, orders=True):
        """Two shares of every instrument and (`orders`) the resting orders `prepare` says."""
        await self.market(member, client)
        for symbol, price in member.prices.items():
            began = time.time()
            status, answer, _ = await client.request("POST", "/api/stock/buy", member.token, {"symbol": symbol, "amount": 2, "portfolioId": member.portfolio},
                                                     headers={"Idempotency-Key": uuid.uuid4().hex})
            if status != 200:
                self.fail(f"a member's opening buy of {symbol}: {status} {answer}")
                continue
            self.sent[answer["trade"]["id"]] = (began, time.time())
            member.held[symbol] = answer["position"]["quantity"]
            if not orders:
                continue
            for body in ({"side": "buy", "type": "limit", "limitPrice": f"{price * Decimal('0.97'):.2f}"},
                         {"side": "sell", "type": "stop", "stopPrice": f"{price * Decimal('0.97'):.2f}"},
                         {"side": "buy", "type": "stop", "stopPrice": f"{price * Decimal('1.03'):.2f}"},
                         {"side": "buy", "type": "limit", "limitPrice": f"{price / 5:.2f}", "timeInForce": "day"}):
                body = {"symbol": symbol, "quantity": 1, "timeInForce": "gtc", "portfolioId": member.portfolio, **body}
                status, answer, _ = await client.request("POST", "/api/orders", member.token, body)
                if status != 201:
                    self.fail(f"a member's opening order {body}: {status} {answer}")
                elif body["timeInForce"] == "day":
                    member.doomed.add(answer["id"])
                self.counts["opening orders placed"] += status == 201

    def tasks(self, deadline, seconds):
        return [self.hosting(deadline, seconds), self.clock_watch(deadline, self.clocked["id"]),
                *(self.trader(m, deadline) for m in self.members + self.clock_members), self.snapshot_loop(deadline)]

    def portfolio_ids(self):
        return [m.portfolio for m in self.members + self.clock_members]

    def sample(self):
        """League portfolios for the end's figures check: (token, portfolio id)."""
        return [(m.token, m.portfolio) for m in self.members[:2] + self.clock_members[:2]]

    async def market(self, member, client=None):
        status, market, _ = await (client or random.choice(self.clients)).request("GET", f"/api/leagues/{member.league}/market", member.token)
        if status != 200:
            self.fail(f"reading league {member.league}'s market: {status} {market}")
            return None
        member.prices = {s["symbol"]: Decimal(s["price"]) for s in market["symbols"]}
        member.read_at = time.monotonic()
        return market

    # The host.

    async def event(self, league, day, headline, symbols=None, change="10", process=0, passed=False):
        """Scripts an event; `passed`: for a day the league has reached, so refused
        (`event_day_passed`); "maybe": either."""
        body = {"day": day, "changePercent": change, "headline": headline}
        if symbols is not None:
            body["symbols"] = symbols
        status, answer, _ = await self.clients[process].request("POST", f"/api/leagues/{league}/events", self.host[0], body)
        code = answer.get("code") if isinstance(answer, dict) else None
        if status == 201 and passed is not True:
            if not (answer.get("day") == day and answer.get("applied") is False and answer.get("headline") == headline
                    and answer.get("symbols") == (sorted(symbols) if symbols else None) and Decimal(answer.get("changePercent")) == Decimal(change)):
                self.fail(f"an event answered {answer} for {body}")
            self.events[league].append((day, headline, answer["id"]))
            self.counts["events scheduled"] += 1
        elif status == 409 and code == "event_day_passed" and passed:
            self.counts["events refused for a day reached"] += 1
        else:
            self.fail(f"an event {body} on league {league}: {status} {answer}")
        return status

    async def advance(self, league, days, process):
        body = {"days": days} if days is not None else None
        status, answer, _ = await self.clients[process].request("POST", f"/api/leagues/{league}/market/advance", self.host[0], body)
        if status != 200 or not isinstance(answer, dict) or answer.get("kind") != "replay":
            self.fail(f"advancing league {league} by {days}: {status} {answer}")
            return None
        self.answers.append((days, answer["day"]))
        self.counts["advances answered"] += 1
        return answer["day"]

    async def hosting(self, deadline, seconds):
        """Events scripted ahead (one for every instrument, one for the window's last day,
        which the load does not reach), then an advance every `seconds`/15 on either process
        — one by two days, one without a body, two at once on both processes — scripting an
        event two days ahead every other day, and trying one for the day reached (refused)."""
        league = self.hosted["id"]
        names = sorted(s["symbol"] for s in (await self.market(self.members[0]))["symbols"])
        await self.event(league, 3, "Day three: SCNA wins a contract", symbols=[names[0]], change="25")
        await self.event(league, 5, "Day five: the whole market falls", change="-20", process=1)
        await self.event(league, 8, "Day eight: two rally", symbols=names[1:3], change="40")
        await self.event(league, self.HOSTED_DAYS, "The last day: never reached in the load", change="-50", process=1)
        interval = seconds / 15
        step = 0
        start = time.monotonic()
        while time.monotonic() < deadline - interval / 2:
            step += 1
            await asyncio.sleep(max(0.0, start + step * interval - time.monotonic()))
            day = self.host_day
            if step == 4:
                answers = await asyncio.gather(self.advance(league, 1, 0), self.advance(league, 1, 1))
                # Each answers the market as it left it: one day on, or two if the second read the first's day.
                if None in answers or not (set(answers) <= {day + 1, day + 2} and max(answers) in (day + 1, day + 2)):
                    self.fail(f"two advances at once from day {day}: {answers}")
                self.counts["advances sent two at once"] += 2
                self.host_day = max([d for d in answers if d is not None] or [day])
                continue
            days = 2 if step == 7 else (None if step == 5 else 1)
            answered = await self.advance(league, days, step % 2)
            if answered is not None:
                if answered != day + (days or 1):
                    self.fail(f"advancing by {days or 1} from day {day} answered day {answered}")
                self.host_day = answered
            if step % 2 == 0:
                day = self.host_day
                await self.event(league, day + 2, f"Day {day + 2}: SCNB news, scripted on day {day}", symbols=[names[1]], change="-10",
                                 process=1 - step % 2)
                await self.event(league, day, f"Too late for day {day}", change="5", passed=True)

    async def clock_league(self):
        """A blind league on a clock of a minute a day, started CLOCK_LATE seconds ago: day 4
        is due at once (the processes' chores race to advance it there), day 5 starts
        fifteen seconds later, in the load. Events for day 3 (scripted unless a chore has
        moved it already), day 5 for every instrument, day 6 for one and the window's last
        day; its members join, each with two shares of every instrument and a `day` buy at a
        fifth of the price, which a turn of the clock expires."""
        started = time.time() - self.CLOCK_LATE
        status, league, _ = await self.clients[1].request("POST", "/api/leagues/create", self.host[0], {
            "name": "Blind clock", "mode": "isolated", "startingCash": "10000", "ownerPlays": False, "startsAt": iso(started),
            "market": {**window(30, self.CLOCK_DAYS), "dayMinutes": 1, "blind": True}})
        assert status == 201, league
        self.clocked = league
        market = league.get("market") or {}
        self.result.check(market.get("blind") is True and market.get("from") is None and market.get("to") is None and market.get("dayMinutes") == 1
                          and market.get("days") == self.CLOCK_DAYS, f"the clock league's market: {market}")
        lid = league["id"]
        await self.event(lid, 3, "Blind day three", change="15", passed="maybe")
        await self.event(lid, 5, "Blind day five: everything drops", change="-25")
        for token, _ in self.clock_players:
            status, joined, _ = await random.choice(self.clients).request("POST", f"/api/leagues/join/{league['code']}", token)
            assert status == 200, joined
            mine = (await self.clients[0].request("GET", "/api/portfolios", token))[1]
            member = Member(token, next(p["id"] for p in mine if p["leagueId"] == lid), lid)
            self.clock_members.append(member)
            await self.opening(member, self.clients[0], orders=False)
            symbol, price = sorted(member.prices.items())[0]
            status, answer, _ = await self.clients[0].request("POST", "/api/orders", token, {
                "symbol": symbol, "side": "buy", "quantity": 1, "type": "limit", "limitPrice": f"{price / 5:.2f}", "timeInForce": "day",
                "portfolioId": member.portfolio})
            if status == 201:
                member.doomed.add(answer["id"])
            else:
                self.fail(f"a clock member's day order: {status} {answer}")
        names = sorted(self.clock_members[0].prices)
        self.result.check(names == [f"S{n:02d}" for n in range(1, len(names) + 1)] and len(names) >= 5, f"the blind league's symbols: {names}")
        await self.event(lid, 6, "Blind day six: S01 soars", symbols=names[:1], change="30", process=1)
        await self.event(lid, self.CLOCK_DAYS, "Blind last day", change="10")

    async def clock_watch(self, deadline, league):
        """The clock league's days as they pass (its market row, read every 0.25 s), and an
        event for a day reached (refused)."""
        tried = False
        while time.monotonic() < deadline:
            await watch_days(self.database, self.days, [league])
            if self.days[league].moves[-1][1] >= 5 and not tried:
                tried = True
                await self.event(league, 5, "Too late for blind day five", change="1", passed=True)
            await asyncio.sleep(0.25)

    # The members.

    async def trader(self, member, deadline):
        """On either process: market trades under Idempotency-Keys (a sixth sized to
        overdraw or oversell), resting orders (`resting_body`), cancels of open orders."""
        while time.monotonic() < deadline:
            client = random.choice(self.clients)
            if not member.prices or time.monotonic() - member.read_at > 1.0:
                if await self.market(member, client) is None:
                    await asyncio.sleep(0.2)
                    continue
            symbol = random.choice(list(member.prices))
            price = member.prices[symbol]
            roll = random.random()
            if roll < 0.35:
                kind = "trade"
                side = "sell" if member.held[symbol] and random.random() < 0.4 else "buy"
                amount = random.randint(1, 4)
                if random.random() < 1 / 6:
                    amount = 1_000_000 if side == "buy" else 100_000
                began = time.time()
                status, answer, _ = await client.request("POST", f"/api/stock/{side}", member.token,
                                                         {"symbol": symbol, "amount": amount, "portfolioId": member.portfolio},
                                                         headers={"Idempotency-Key": uuid.uuid4().hex})
                if status == 200:
                    self.sent[answer["trade"]["id"]] = (began, time.time())
                    member.held[symbol] = answer["position"]["quantity"]
                    if answer["trade"]["symbol"] != symbol or answer["position"]["symbol"] != symbol:
                        self.fail(f"a league trade answered another symbol than {symbol}: {answer}")
            elif roll < 0.85:
                kind = "order"
                body, doomed = resting_body(member, symbol, price)
                status, answer, _ = await client.request("POST", "/api/orders", member.token, body)
                if status == 201:
                    self.counts[f"orders placed ({body['type']} {body['side']} {body['timeInForce']})"] += 1
                    if answer.get("symbol") != symbol:
                        self.fail(f"a league order answered another symbol than {symbol}: {answer}")
                    if doomed:
                        member.doomed.add(answer["id"])
            else:
                kind = "cancel"
                status, page, _ = await client.request("GET", f"/api/orders?portfolioId={member.portfolio}", member.token)
                mine = [o["id"] for o in page.get("items", []) if o["id"] not in member.doomed] if status == 200 else []
                if not mine:
                    await asyncio.sleep(0.05)
                    continue
                status, answer, _ = await client.request("DELETE", f"/api/orders/{random.choice(mine)}", member.token)
            code = answer.get("code") if isinstance(answer, dict) else None
            if status in (200, 201):
                self.counts[f"{kind}s acknowledged"] += 1
            elif status == 422 and code in ("insufficient_funds", "insufficient_shares") and kind != "cancel":
                self.counts[f"{kind}s refused for cash or shares"] += 1
            elif status == 409 and code == "order_not_open" and kind == "cancel":
                self.counts["cancels of an order no longer open"] += 1
            else:
                self.fail(f"a league member's {kind} answered {status}: {answer}")
            await asyncio.sleep(random.uniform(0.1, 0.25))

    async def snapshot_loop(self, deadline):
        """`SNAPSHOT` once a second while the load runs: every moment's market all or nothing."""
        while time.monotonic() < deadline:
            ids = ",".join(str(league["id"]) for league in (self.hosted, self.clocked) if league)
            found = await self.database.scalar_async(SNAPSHOT.format(ids=ids))
            if found:
                self.snapshots["taken"] += 1
                self.snapshots["violations"] += int(found)
            await asyncio.sleep(1)

    # The end.

    async def check(self):
        database = self.database
        hosted = self.hosted["id"]
        clocked = self.clocked["id"]
        # The clock league reaches the day its clock shows within a sweep (5 s) of it.
        for _ in range(40):
            await watch_days(database, self.days, [clocked])
            behind = await database.query_async(
                f"SELECT m.day, league_market_day(m, l, now()) FROM league_markets m JOIN leagues l ON l.id = m.league_id WHERE m.league_id = {clocked}")
            if behind[0][0] == behind[0][1]:
                break
            await asyncio.sleep(0.25)
        self.result.check(behind[0][0] == behind[0][1], f"the clock league's day and its clock's: {behind}")
        days = {hosted: await host_days(database, hosted), clocked: self.days[clocked]}
        figures = await check_markets(self.result, database, [hosted, clocked], days, "conservation", self.sent)
        host_market, clock_market = figures["markets"].get(str(hosted), {}), figures["markets"].get(str(clocked), {})
        # Not vacuous: the host league moved on day by day and was traded, its events came;
        # the clock league jumped several days at once, crossed a day in the load and was traded.
        moves = self.days[clocked].moves
        jumps = [b[1] - a[1] for a, b in zip(moves, moves[1:])]
        self.result.check(host_market.get("day", 0) >= 6 and host_market.get("day") == self.host_day,
                          f"the host league reached day {host_market.get('day')}, its host was answered {self.host_day}")
        self.result.check(host_market.get("fills", 0) >= 30 and clock_market.get("fills", 0) >= 5,
                          f"league fills: {host_market.get('fills')}, {clock_market.get('fills')}")
        self.result.check(host_market.get("events due", 0) >= 3 and clock_market.get("events due", 0) >= 1,
                          f"events due: {host_market}, {clock_market}")
        self.result.check(host_market.get("day orders expired", 0) > 0 and clock_market.get("day orders expired", 0) > 0,
                          f"day orders expired: {host_market}, {clock_market}")
        self.result.check(jumps and jumps[0] >= 2 and clock_market.get("day", 0) >= 5,
                          f"the clock league's days {moves}: no jump of several days at once, or day 5 not reached")
        later = figures["resting fills on a later day than placed"]
        self.result.check(later.get(f"{hosted} limit", 0) > 0 and later.get(f"{hosted} stop", 0) > 0,
                          f"resting limit and stop orders filled on a later day than placed: {later}")
        self.result.check(self.snapshots["violations"] == 0 and self.snapshots["taken"] >= 10, f"market snapshots: {self.snapshots}")
        # The members' portfolios pass the ledger checks (their worth moving with the market's days).
        ids = self.portfolio_ids()
        found, violations, unkeyed = map(int, (await database.query_async(portfolio_ledger(ids)))[0])
        self.result.check(found == len(ids) and violations == 0 and unkeyed == 0,
                          f"league portfolios: {found} of {len(ids)} found, {violations} violations, {unkeyed} trades tied to no order or key")
        # A member sees the events that happened, the host all of them.
        member = self.members[0]
        status, seen, _ = await self.clients[0].request("GET", f"/api/leagues/{hosted}/events", member.token)
        status_all, every, _ = await self.clients[1].request("GET", f"/api/leagues/{hosted}/events", self.host[0])
        applied = sorted(e["id"] for e in every if e.get("applied")) if status_all == 200 else None
        self.result.check(status == 200 and sorted(e["id"] for e in seen) == applied and applied
                          and sorted(e["id"] for e in every) == sorted(i for _, _, i in self.events[hosted]),
                          f"the host league's events: a member sees {seen}, the host {every}")
        # No answer to a member shows a stored symbol, nor, in the blind league, the period's real symbols, names or dates.
        shown = await self.shown(self.members[0], hosted, blind=False) + await self.shown(self.clock_members[0], clocked, blind=True)
        self.result.check(not shown, f"answers showing a stored symbol, or a blind league's secrets: {shown[:4]}")
        failed = sum(n for c in self.clients for status, n in c.statuses.items() if status >= 500 or status == 0)
        problems = [p for c in self.clients for p in c.problems]
        self.result.check(failed == 0 and not problems, f"scenario league requests: {failed} 5xx or failed, not problem+json: {problems[:3]}")
        for client in self.clients:
            await client.close()
        return {
            "scenario leagues": {"host league": host_market, "clock league": clock_market},
            "scenario clock league's moves (day, s after made)": [(d, round(at - moves[0][0], 1)) for at, d in moves],
            "scenario host advances (days asked, day answered)": self.answers,
            "scenario counts": dict(sorted(self.counts.items())),
            "scenario fills by league and kind": figures["fills by league and kind"], "scenario resting fills on a later day": later,
            "scenario market snapshots": self.snapshots, "scenario ledger violations": violations,
            "scenario answers showing a stored symbol or a blind league's secrets": len(shown),
            "scenario 5xx or failed": failed,
        }

    async def shown(self, member, league, blind):
        """What a member's reads show that they should not: a stored symbol (`@LEAGUE`), and
        in a blind league a real symbol, name, sector or date of the period; or an answer
        other than 200. [(path, what)]."""
        found = []
        secrets = [f"@{league}"] + ([*SYMBOLS, "Scenario ", "Replays", "2019-"] if blind else [])
        portfolio = member.portfolio
        paths = [f"/api/portfolio?portfolioId={portfolio}", f"/api/orders?portfolioId={portfolio}&status=all&limit=100",
                 f"/api/transactions?portfolioId={portfolio}", f"/api/activities?portfolioId={portfolio}", f"/api/leagues/{league}/market",
                 f"/api/leagues/{league}/events", f"/api/leagues/{league}", f"/api/leagues/{league}/news", f"/api/leagues/{league}/leaderboard",
                 "/api/notifications", f"/api/portfolios/{portfolio}/history", "/api/portfolios", "/api/leagues",
                 f"/api/portfolios/{portfolio}/pnl"]
        # The first member's key on its league portfolio reads its positions under /v2 too.
        for path in paths + (["/v2/positions"] if member is self.members[0] else []):
            key = path.startswith("/v2/")
            status, body, _ = await self.clients[0].request("GET", path, None if key else member.token,
                                                            headers=alpaca_headers(self.key) if key else None)
            text = body if isinstance(body, str) else json.dumps(body)
            if status != 200:
                found.append((path, status))
                continue
            found += [(path.split("?")[0], secret) for secret in secrets if secret in text]
        return found


# The crash scenario's part.

class ScenarioCrash:
    """Scenario leagues while server processes are killed: a host advances a long window
    (one to three days at a time, on either process, retried after a kill, until its last
    day) with events scripted ahead, while its members trade it (market trades under
    Idempotency-Keys retried until answered, into the crash scenario's ledger; resting
    limit and stop orders; `day` orders that must expire); and eight leagues on a clock of
    a minute a day whose days turn at moments spread over the run (the first with days
    due at once), each with an event for every instrument on the day that turns, a member's
    resting buy that the event's fall fills and a `day` order the turn expires. A second
    server process runs the same chores and is killed too, at moments of its own."""

    HOSTED_DAYS = 130
    CLOCKS = (6, 11, 16, 21, 26, 31, 36, 41)  # seconds after it is made at which each clock league's next day starts

    def __init__(self, result, database, clients, admin, ledger):
        self.result = result
        self.database = database
        self.clients = clients  # one per server process
        self.admin = admin
        self.ledger = ledger
        self.host = None
        self.hosted = None
        self.members = []
        self.clocks = []  # (league, member, resting buy id, day order id)
        self.counts = collections.Counter()
        self.acknowledged_days = [1]
        self.snapshots = {"taken": 0, "violations": 0, "unanswered": 0}
        self.days = collections.defaultdict(Days)
        self.recoveries = []  # of the second process
        self.sent = {}  # acknowledged market trade id -> (first sent, answered), epoch seconds

    async def request(self, method, path, token, body=None, headers=None, give_up=30.0):
        """A request sent to either process until one answers (they are killed)."""
        until = time.monotonic() + give_up
        while True:
            status, answer, _ = await random.choice(self.clients).request(method, path, token, body, headers=headers, timeout=10)
            if status not in (0, 503) or time.monotonic() > until:
                return status, answer
            self.counts["requests sent again after a kill"] += 1
            await asyncio.sleep(0.2)

    async def prepare(self, host, members, clock_members):
        client = self.clients[0]
        await seed_history(client, self.admin)
        self.host = host
        self.hosted, seats = await league_seats(client, host[0], members, {
            "name": "Crash replay", "mode": "isolated", "startingCash": "10000", "ownerPlays": False, "market": window(0, self.HOSTED_DAYS)})
        self.members = [Member(token, portfolio, self.hosted["id"]) for token, portfolio in seats]
        # Events ahead: every ninth day, every third of them for every instrument.
        for n, day in enumerate(range(4, self.HOSTED_DAYS + 1, 9)):
            body = {"day": day, "changePercent": random.choice(["-30", "-12.5", "15", "40"]), "headline": f"Crash replay day {day}"}
            if n % 3:
                body["symbols"] = random.sample(SYMBOLS, 2)
            status, answer, _ = await client.request("POST", f"/api/leagues/{self.hosted['id']}/events", host[0], body)
            assert status == 201, answer
        for index, (offset, (token, _)) in enumerate(zip(self.CLOCKS, clock_members)):
            # Day 2 starts `offset` seconds after the league is made; the first league's day 4
            # does (days 2 and 3 are due at once).
            made = time.time()
            late = 60 - offset + (120 if index == 0 else 0)
            turn = 4 if index == 0 else 2
            status, league, _ = await client.request("POST", "/api/leagues/create", host[0], {
                "name": f"Crash clock {index}", "mode": "isolated", "startingCash": "10000", "ownerPlays": False, "startsAt": iso(made - late),
                "market": {**window(40 + 5 * index, 10), "dayMinutes": 1, "blind": index % 2 == 1}})
            assert status == 201, league
            # Every instrument falls 30 % on each day to its turn (the first league's days 2 and 3
            # may have come already: refused).
            for day in range(2, turn + 1):
                body = {"day": day, "changePercent": "-30", "headline": f"Crash clock {index} day {day}"}
                status, answer, _ = await client.request("POST", f"/api/leagues/{league['id']}/events", host[0], body)
                assert status == 201 or (status == 409 and day < turn), answer
            status, joined, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", token)
            assert status == 200, joined
            mine = (await client.request("GET", "/api/portfolios", token))[1]
            member = Member(token, next(p["id"] for p in mine if p["leagueId"] == league["id"]), league["id"])
            status, market, _ = await client.request("GET", f"/api/leagues/{league['id']}/market", token)
            assert status == 200, market
            symbol, price = market["symbols"][0]["symbol"], Decimal(market["symbols"][0]["price"])
            # A buy at 85 % of the price, which the fall crosses (a day moves the history at most 8 %),
            # and a day order at a fifth of it, which nothing crosses (three falls and days leave a quarter).
            orders = []
            for factor, force in (("0.85", "gtc"), ("0.2", "day")):
                status, placed, _ = await client.request("POST", "/api/orders", token, {
                    "symbol": symbol, "side": "buy", "quantity": 5, "type": "limit", "limitPrice": f"{price * Decimal(factor):.2f}",
                    "timeInForce": force, "portfolioId": member.portfolio})
                assert status == 201, placed
                orders.append(placed["id"])
            self.clocks.append((league, member, *orders))

    def tasks(self, deadline, seconds, second_server):
        return [self.hosting(deadline, seconds), *(self.trader(m, deadline) for m in self.members), self.snapshot_loop(deadline),
                self.clock_watch(deadline), killer(second_server, deadline, self.recoveries)]

    def league_ids(self):
        return [self.hosted["id"]] + [league["id"] for league, _, _, _ in self.clocks]

    def clock_ids(self):
        return [league["id"] for league, _, _, _ in self.clocks]

    async def hosting(self, deadline, seconds):
        """Advances of one to three days on either process, paced to reach the last day
        near the end of the run; each answer the market at least that far."""
        league = self.hosted["id"]
        pause = seconds / (self.HOSTED_DAYS / 1.75)
        while time.monotonic() < deadline:
            days = random.choice([1, 1, 2, 3])
            status, answer = await self.request("POST", f"/api/leagues/{league}/market/advance", self.host[0], {"days": days}, give_up=10)
            code = answer.get("code") if isinstance(answer, dict) else None
            if status == 200:
                self.counts["host advances answered"] += 1
                self.acknowledged_days.append(answer["day"])
            elif status == 409 and code == "market_last_day":
                self.counts["host advances refused at the last day"] += 1
                break
            else:
                self.counts[f"host advances answered {status}"] += 1
                self.result.check(status in (0, 503), f"a crash league advance answered {status}: {answer}")
            await asyncio.sleep(random.uniform(0.5, 1.5) * pause)

    async def trader(self, member, deadline):
        """Market trades under keys sent again until answered (into the crash ledger), and
        resting orders (`resting_body`)."""
        while time.monotonic() < deadline:
            if not member.prices or time.monotonic() - member.read_at > 1.0:
                status, market = await self.request("GET", f"/api/leagues/{member.league}/market", member.token, give_up=10)
                if status != 200:
                    continue
                member.prices = {s["symbol"]: Decimal(s["price"]) for s in market["symbols"]}
                member.read_at = time.monotonic()
            symbol = random.choice(list(member.prices))
            if random.random() < 0.6:
                side = "sell" if member.held[symbol] and random.random() < 0.4 else "buy"
                key = uuid.uuid4().hex
                self.ledger.attempts += 1
                began = time.time()
                status, answer = await self.request("POST", f"/api/stock/{side}", member.token,
                                                    {"symbol": symbol, "amount": random.randint(1, 4), "portfolioId": member.portfolio},
                                                    headers={"Idempotency-Key": key})
                if status == 200:
                    self.ledger.acknowledged[key] = answer["trade"]["id"]
                    self.sent[answer["trade"]["id"]] = (began, time.time())
                    member.held[symbol] = answer["position"]["quantity"]
                    self.counts["league trades acknowledged"] += 1
                elif status == 422:
                    self.counts["league trades refused for cash or shares"] += 1
                else:
                    self.ledger.unfinished += 1
                    self.result.check(status in (0, 503), f"a crash league trade answered {status}: {answer}")
            else:
                body, _ = resting_body(member, symbol, member.prices[symbol])
                status, answer = await self.request("POST", "/api/orders", member.token, body)
                self.counts["league orders placed" if status == 201 else f"league orders answered {status}"] += 1
                self.result.check(status in (201, 422, 0, 503), f"a crash league order answered {status}: {answer}")
            await asyncio.sleep(random.uniform(0.05, 0.15))

    async def snapshot_loop(self, deadline):
        """`SNAPSHOT` twice a second while the processes are killed."""
        ids = ",".join(map(str, self.league_ids()))
        while time.monotonic() < deadline:
            found = await self.database.scalar_async(SNAPSHOT.format(ids=ids))
            if found:
                self.snapshots["taken"] += 1
                self.snapshots["violations"] += int(found)
            else:
                self.snapshots["unanswered"] += 1
            await asyncio.sleep(0.5)

    async def clock_watch(self, deadline):
        while time.monotonic() < deadline:
            await watch_days(self.database, self.days, self.clock_ids())
            await asyncio.sleep(0.25)

    async def check(self):
        """After the run (the processes up again): every clock league reaches its clock's
        day, each one's resting buy filled and its `day` order expired; each market passes
        `check_markets`; the second process came back within 10 s each time."""
        database = self.database
        clock_ids = ",".join(map(str, self.clock_ids()))
        resting = ",".join(str(r) for _, _, r, _ in self.clocks)
        for _ in range(60):
            await watch_days(database, self.days, self.clock_ids())
            behind = await database.query_async(
                f"SELECT m.league_id, m.day, league_market_day(m, l, now()) FROM league_markets m JOIN leagues l ON l.id = m.league_id "
                f"WHERE m.league_id IN ({clock_ids}) AND m.day <> league_market_day(m, l, now())")
            open_now = int((await database.query_async(f"SELECT count(*) FROM orders WHERE id IN ({resting}) AND status = 'new'"))[0][0])
            if not behind and not open_now:
                break
            await asyncio.sleep(0.5)
        self.result.check(not behind, f"clock leagues behind their clocks after the kills: {behind}")
        statuses = {int(o): s for o, s in await database.query_async(
            "SELECT id, status FROM orders WHERE id IN (" + ",".join(f"{r},{d}" for _, _, r, d in self.clocks) + ")")}
        wrong = [(league["id"], statuses.get(r), statuses.get(d)) for league, _, r, d in self.clocks
                 if statuses.get(r) != "filled" or statuses.get(d) != "expired"]
        self.result.check(not wrong, f"clock leagues' resting buys not filled or day orders not expired: {wrong}")
        days = {self.hosted["id"]: await host_days(database, self.hosted["id"]), **{i: self.days[i] for i in self.clock_ids()}}
        figures = await check_markets(self.result, database, self.league_ids(), days, "crash", self.sent)
        markets = figures["markets"]
        hosted = markets.get(str(self.hosted["id"]), {})
        self.result.check(hosted.get("day", 0) >= max(self.acknowledged_days) and hosted.get("day", 0) >= 20,
                          f"the crash host league is at day {hosted.get('day')}, its host was answered up to {max(self.acknowledged_days)}")
        self.result.check(hosted.get("events due", 0) >= 4 and hosted.get("fills", 0) >= 20 and hosted.get("day orders expired", 0) > 0,
                          f"the crash host league: {hosted}")
        clocks = [markets.get(str(i), {}) for i in self.clock_ids()]
        self.result.check(all(c.get("day", 0) >= 2 and c.get("events due", 0) >= 1 for c in clocks), f"the clock leagues: {clocks}")
        self.result.check(self.snapshots["violations"] == 0 and self.snapshots["taken"] >= 20, f"crash market snapshots: {self.snapshots}")
        ids = [m.portfolio for m in self.members] + [member.portfolio for _, member, _, _ in self.clocks]
        found, violations, _ = map(int, (await database.query_async(portfolio_ledger(ids)))[0])
        self.result.check(found == len(ids) and violations == 0, f"crash league portfolios: {found} of {len(ids)}, {violations} violations")
        self.result.check(len(self.recoveries) >= 4 and max(self.recoveries) < 10, f"the second process's recoveries: {self.recoveries}")
        starts = {int(l): float(s) for l, s in await database.query_async(
            f"SELECT id, extract(epoch FROM starts_at) FROM leagues WHERE id IN ({clock_ids})")}
        late = [[(day, round(at - starts[i] - 60 * (day - 1), 1)) for at, day in self.days[i].moves[1:]] for i in self.clock_ids()]
        return {
            "scenario host league": hosted,
            "scenario clock leagues (day, events due, fills)": [(c.get("day"), c.get("events due"), c.get("fills")) for c in clocks],
            "scenario clock leagues' moves (day, s after its start on the clock)": late,
            "scenario second process kills": len(self.recoveries),
            "scenario second process slowest recovery s": round(max(self.recoveries), 2) if self.recoveries else None,
            "scenario counts": dict(sorted(self.counts.items())), "scenario fills by league and kind": figures["fills by league and kind"],
            "scenario market snapshots": self.snapshots, "scenario ledger violations": violations,
        }


async def killer(server, deadline, recoveries):
    """Kills a server process (`kill -9`) every 3–7 s and starts it again at once."""
    while True:
        await asyncio.sleep(random.uniform(3, 7))
        if time.monotonic() > deadline - 2:
            return
        server.kill9()
        server.start()
        recoveries.append(await server.wait_ready(timeout=30))


# The hostile scenario's part.

async def hostile_setup(result, client, database, admin, victim, attacker, sneaky):
    """What the scenario-league cases attack, made before the fingerprint (and checked as it
    is made): the history; a league of the victim's that its host advances (ten days, at day
    3, an event applied on day 2 and one waiting for day 5), where the attacker plays; a
    league of the victim's on a clock; one at the last day of its window; and one of the
    real market."""
    await seed_history(client, admin)
    scenario = {}

    async def create(body, token=victim):
        status, made, _ = await client.request("POST", "/api/leagues/create", token, body)
        assert status == 201, f"a scenario league {body}: {status} {made}"
        return made

    league = await create({"name": "Hostile replay", "mode": "isolated", "market": window(100, 10)})
    scenario["league"] = league
    status, joined, _ = await client.request("POST", f"/api/leagues/join/{league['code']}", attacker)
    result.check(status == 200, f"the attacker joining the scenario league: {status} {joined}")
    scenario["attacker portfolio"] = next(p["id"] for p in (await client.request("GET", "/api/portfolios", attacker))[1]
                                          if p["leagueId"] == league["id"])
    lid = league["id"]
    made = []
    for day, headline in ((2, "Hostile day two"), (5, "Hostile day five")):
        status, event, _ = await client.request("POST", f"/api/leagues/{lid}/events", victim,
                                                {"day": day, "changePercent": "-10", "headline": headline})
        result.check(status == 201, f"the victim's event for day {day}: {status} {event}")
        made.append(event.get("id"))
    status, market, _ = await client.request("POST", f"/api/leagues/{lid}/market/advance", victim, {"days": 2})
    result.check(status == 200 and market.get("day") == 3, f"advancing the victim's league to day 3: {status} {market}")
    scenario["symbols"] = [s["symbol"] for s in market.get("symbols", [])]
    # A member sees the events that happened, the host all of them.
    _, seen, _ = await client.request("GET", f"/api/leagues/{lid}/events", attacker)
    _, every, _ = await client.request("GET", f"/api/leagues/{lid}/events", victim)
    result.check([e.get("id") for e in seen] == made[:1] and [e.get("id") for e in every] == made,
                 f"the scenario league's events: the attacker sees {seen}, the victim {every}")
    scenario["clock"] = await create({"name": "Hostile clock", "mode": "isolated", "market": {**window(100, 10), "dayMinutes": 1440}})
    last = await create({"name": "Hostile last day", "mode": "isolated", "market": window(110, 2)})
    status, market, _ = await client.request("POST", f"/api/leagues/{last['id']}/market/advance", victim)
    result.check(status == 200 and market.get("day") == 2 == market.get("days"), f"advancing to the last day: {status} {market}")
    scenario["last"] = last
    scenario["plain"] = await create({"name": "Hostile plain", "mode": "isolated"})
    scenario["other"] = await create({"name": "Sneaky replay", "mode": "isolated", "market": window(100, 10)}, token=sneaky)
    scenario["figures"] = {"scenario leagues": int(database.scalar("SELECT count(*) FROM league_markets")),
                           "league instruments": int(database.scalar("SELECT count(*) FROM league_instruments"))}
    return scenario


async def hostile_cases(expect, scenario, victim, attacker, sneaky):
    """Scenario leagues under hostile input (see hostile_setup for what they aim at): bad
    markets on a league's creation, bad events, bad advances, members and strangers
    advancing and scripting, and stored symbols named in trades. Every refusal a 4xx
    problem+json with its code; nothing made or moved (the fingerprint)."""
    cases = 0
    invalid, bad = {422}, {400}
    league = scenario["league"]["id"]
    clock, last, plain, other = scenario["clock"]["id"], scenario["last"]["id"], scenario["plain"]["id"], scenario["other"]["id"]
    portfolio = scenario["attacker portfolio"]
    symbol = scenario["symbols"][0]
    huge = "x" * (10 * 1024 * 1024)

    async def case(method, path, token, expected, code, **kwargs):
        nonlocal cases
        cases += 1
        return await expect(method, path, token, expected, code=code, **kwargs)

    # POST /api/leagues/create with a bad `market`.
    good = {**window(100, 10), "dayMinutes": None, "blind": False}
    markets = [
        {**good, "kind": kind} for kind in ["live", "REPLAY", "", None, 7, ["replay"], {"kind": "replay"}, "replay'; DROP TABLE league_markets;--"]
    ] + [
        {**good, "from": DAYS[109], "to": DAYS[100]}, {**good, "to": DAYS[100]},
    ] + [
        {**good, "from": day} for day in ["2019-02-30", "2019-13-01", "yesterday", "20190514", "2019-5-14", "2019-05-14T00:00:00Z", "",
                                          None, 20190514, "0000-01-01", "2019-05-14'; DROP TABLE daily_bars;--", "x" * 200_000,
                                          {"$gt": ""}, ["2019-05-14"]]
    ] + [
        {**good, "to": day} for day in ["2019-06-31", "tomorrow", None, 7]
    ] + [
        {**good, "dayMinutes": minutes} for minutes in [0, 1441, -1, "x", "60", 1.5, 1e300, 2 ** 63, True, [1], {}]
    ] + [
        {**good, "blind": blind} for blind in ["yes", 1, "true", [True], {}]
    ] + [
        # No history in the window, one trading day, a window whose days hold no close.
        {**good, "from": "1990-01-01", "to": "1990-12-31"}, {**good, "from": DAYS[100], "to": DAYS[100]},
        {**good, "from": "2030-01-01", "to": "2030-06-30"},
        # Missing fields, the wrong shape, nesting.
        {"kind": "replay", "from": DAYS[100]}, {"kind": "replay", "to": DAYS[109]}, {}, "replay", 7, [good],
        {**good, "kind": {"kind": {"kind": "replay"}}}, {**good, "from": [[[[[[[[DAYS[100]]]]]]]]]},
    ]
    for market in markets:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed",
                   body={"name": "Bad market", "mode": "isolated", "market": market})
    # A market only in an isolated league, and never with allowedSymbols.
    for body in [{"name": "Shared market", "market": good}, {"name": "Shared market", "mode": "shared", "market": good},
                 {"name": "Listed", "mode": "isolated", "market": good, "rules": {"allowedSymbols": ["SCNA"]}}]:
        await case("POST", "/api/leagues/create", attacker, invalid, "validation_failed", body=body)
    nested = '{"name":"Nested","mode":"isolated","market":' + "[" * 5000 + "]" * 5000 + "}"
    for raw in [nested, '{"name":"x","mode":"isolated","market":{"kind":"replay","from":', '{"name":"x","mode":"isolated","market":{"kind":"replay"}}}',
                '{"name":"x","mode":"isolated","market":{"kind":"replay","from":"2019-05-14","to":"2019-05-27","dayMinutes":1' + "0" * 400 + '}}']:
        await case("POST", "/api/leagues/create", attacker, bad, "bad_request", raw=raw)
    await case("POST", "/api/leagues/create", attacker, {413}, "payload_too_large",
               raw='{"name":"x","mode":"isolated","market":{"kind":"' + huge + '"}}')

    # POST /api/leagues/{id}/events: the victim's league is at day 3 of 10.
    events = f"/api/leagues/{league}/events"
    event = {"day": 6, "changePercent": "10", "headline": "Fine"}
    for day in [0, 1, -1, 11, 10 ** 6, 2 ** 31, "x", "6", 6.5, None, True, [6]]:
        await case("POST", events, victim, invalid, "validation_failed", body={**event, "day": day})
    # (A number beyond a double's range is not taken for JSON: 400.)
    await case("POST", events, victim, {400}, "bad_request", body={**event, "day": 10 ** 400})
    for day in [2, 3]:
        await case("POST", events, victim, {409}, "event_day_passed", body={**event, "day": day})
    for change in ["-91", "501", "-90.00001", "500.00001", "abc", "1.00001", "NaN", "Infinity", "1e3", "", "10%", None, [10], {"v": 10}, "1e400"]:
        await case("POST", events, victim, invalid, "validation_failed", body={**event, "changePercent": change})
    for headline in ["", "   ", "x" * 121, None, 7, ["Fine"], "bell\x07", "evil\u202egnp", "nul\x00", "a" + "\u0301" * 200]:
        await case("POST", events, victim, invalid, "validation_failed", body={**event, "headline": headline})
    for body in ["", "x" * 2001, 7, ["body"], "bell\x07"]:
        await case("POST", events, victim, invalid, "validation_failed", body={**event, "body": body})
    for symbols in [[], ["NOPE"], [symbol, "NOPE"], [f"{symbol}@{league}"], [f"{symbol}@{other}"], [1, 2], [None], [""], [symbol] * 1001,
                    symbol, {"symbol": symbol}, ["S01"], ["'; DROP TABLE league_events;--"], [symbol + "\x00"]]:
        await case("POST", events, victim, invalid, "validation_failed", body={**event, "symbols": symbols})
    for body in [{}, {"day": 6}, {"day": 6, "changePercent": "10"}, [event], "event", 6]:
        await case("POST", events, victim, invalid, "validation_failed", body=body)
    for raw in ['{"day":6,', "\x00\x01", '{"day":6}}', "nul"]:
        await case("POST", events, victim, bad, "bad_request", raw=raw)
    await case("POST", events, victim, {413}, "payload_too_large", raw='{"day":6,"changePercent":"1","headline":"' + huge + '"}')
    # Not the host: a member, a stranger, a key of nobody; a league without a market of its own; junk ids.
    await case("POST", events, attacker, {403}, "forbidden", body=event)
    await case("POST", events, sneaky, {404}, "not_found", body=event)
    await case("POST", events, None, {401}, "unauthorized", body=event)
    await case("POST", f"/api/leagues/{other}/events", victim, {404}, "not_found", body=event)
    await case("POST", f"/api/leagues/{plain}/events", victim, {404}, "no_league_market", body=event)
    await case("GET", f"/api/leagues/{league}/events", sneaky, {404}, "not_found")
    await case("GET", f"/api/leagues/{plain}/events", victim, {404}, "no_league_market")
    for junk in ["abc", "-1", "0", "99999999", str(2 ** 63), "%00", "1%20OR%201%3D1", f"{league}.0"]:
        await case("POST", f"/api/leagues/{junk}/events", victim, {404}, "not_found", body=event)
        await case("POST", f"/api/leagues/{junk}/market/advance", victim, {404}, "not_found", body={"days": 1})
        await case("GET", f"/api/leagues/{junk}/market", victim, {404}, "not_found")

    # POST /api/leagues/{id}/market/advance.
    advance = f"/api/leagues/{league}/market/advance"
    for days in [0, -1, "x", 100000, 3001, 2 ** 31, 2 ** 63, 1.5, "1", True, [1], {"n": 1}]:
        await case("POST", advance, victim, invalid, "validation_failed", body={"days": days})
    await case("POST", advance, victim, {400}, "bad_request", body={"days": 10 ** 400})
    for body in [[1], "days", 3]:
        await case("POST", advance, victim, invalid, "validation_failed", body=body)
    for raw in ['{"days":', "\x00\x01", '{"days":1}}', "nul"]:
        await case("POST", advance, victim, bad, "bad_request", raw=raw)
    await case("POST", advance, victim, {413}, "payload_too_large", raw='{"days":1,"pad":"' + huge + '"}')
    await case("POST", advance, attacker, {403}, "forbidden", body={"days": 1})
    await case("POST", advance, attacker, {403}, "forbidden")
    await case("POST", advance, sneaky, {404}, "not_found", body={"days": 1})
    await case("POST", advance, None, {401}, "unauthorized", body={"days": 1})
    await case("POST", f"/api/leagues/{other}/market/advance", victim, {404}, "not_found", body={"days": 1})
    await case("POST", f"/api/leagues/{clock}/market/advance", victim, {409}, "market_on_clock", body={"days": 1})
    await case("POST", f"/api/leagues/{last}/market/advance", victim, {409}, "market_last_day", body={"days": 1})
    await case("POST", f"/api/leagues/{plain}/market/advance", victim, {404}, "no_league_market", body={"days": 1})
    await case("GET", f"/api/leagues/{league}/market", sneaky, {404}, "not_found")
    await case("GET", f"/api/leagues/{plain}/market", victim, {404}, "no_league_market")

    # A league's stored symbols are nobody's to name in a trade: not in its own portfolios,
    # not in a personal one; another league's neither. A real instrument the league does not
    # trade is unknown there. (Orders naming them: `hostile_stored_orders`.)
    for name in stored_names(symbol, league, other) + ["R1"]:
        for side in ("buy", "sell"):
            await case("POST", f"/api/stock/{side}", attacker, {404, 422}, {"unknown_symbol", "validation_failed"},
                       body={"symbol": name, "amount": 1, "portfolioId": portfolio})
    for path in ("/api/orders", "/api/orders/preview"):
        await case("POST", path, attacker, {404}, "unknown_symbol", body={**resting_limit("R1"), "portfolioId": portfolio})
    for name in stored_names(symbol, league, other):
        await case("POST", "/api/stock/buy", attacker, {404, 422}, {"unknown_symbol", "validation_failed"}, body={"symbol": name, "amount": 1})
    return cases


def stored_names(symbol, league, other):
    return [f"{symbol}@{league}", f"{symbol.lower()}@{league}", f"{symbol}@{other}", f"{symbol}@", f"@{league}", f"{symbol}@{league}@{league}"]


def resting_limit(symbol):
    return {"symbol": symbol, "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00", "timeInForce": "gtc"}


async def hostile_stored_orders(client, database, scenario, attacker):
    """Orders naming a stored symbol (`SCNA@LEAGUE`, another league's, `SCNA@`) through
    `/api/orders` and its preview, from a personal portfolio and a league one: each must be
    `404 unknown_symbol`, as a trade through `/api/stock` is (a client never names a stored
    symbol), and none stored. Probed after the state checks: were one placed, it would
    write. What each was answered, and the instrument of every order stored."""
    league, other = scenario["league"]["id"], scenario["other"]["id"]
    symbol = scenario["symbols"][0]
    personal = (await client.request("GET", "/api/portfolio", attacker))[1]["id"]
    before = int(database.scalar("SELECT coalesce(max(id), 0) FROM orders"))
    answered = collections.Counter()
    for name in stored_names(symbol, league, other):
        for where, portfolio in (("personal", personal), ("league", scenario["attacker portfolio"])):
            for path in ("/api/orders", "/api/orders/preview"):
                status, answer, _ = await client.request("POST", path, attacker, {**resting_limit(name), "portfolioId": portfolio})
                answered[f"{path} {where}: {status} {answer.get('code', '') if isinstance(answer, dict) else ''}".strip()] += 1
    stored = database.query(f"SELECT symbol, count(*) FROM orders WHERE id > {before} GROUP BY 1 ORDER BY 1")
    return {"answers": dict(sorted(answered.items())), "orders stored on": {s: int(n) for s, n in stored}}
