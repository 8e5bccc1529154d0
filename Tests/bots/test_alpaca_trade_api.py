"""Bots: the older official Alpaca SDK (alpaca-trade-api 3.2.0, unmodified) against a live
MockStock server.

Many bots still use `alpaca_trade_api.REST` and `alpaca_trade_api.stream.Stream`. Unlike
alpaca-py, this SDK sends single-symbol market-data requests to Alpaca's single-symbol
routes (`/v2/stocks/{symbol}/bars`, `…/bars/latest`, `…/quotes/latest`,
`…/trades/latest`, `…/snapshot`), passes most values through as given (strings stay
strings), reads its market-data address from `APCA_API_DATA_URL` only, and opens the
trade stream at `<base_url>/stream/`. Each test registers players over MockStock's own
API (common.py), creates an API key there (for positions and the trade stream, a key of a
bot player the player owns), and then talks to the server only through the SDK. Run by scripts/test-bots (make test-bots), which starts the server."""
import os
import queue
import threading
import time
import unittest
import uuid
import warnings

from datetime import date

import pandas as pd  # alpaca-trade-api's own dependency: its entities hold pandas timestamps
from alpaca_trade_api import REST
from alpaca_trade_api.rest import APIError, TimeFrame
from alpaca_trade_api.stream import Stream

from common import BASE, bot_key, call, new_key, player, set_price, wait_for

# REST takes no market-data address: each market-data call reads APCA_API_DATA_URL.
os.environ["APCA_API_DATA_URL"] = BASE


def setUpModule():
    # The SDK's own pandas calls (pd.Timestamp(text, unit=…), set_index(inplace=True)) draw
    # pandas' deprecation warnings; they are not the server's doing. (Set here, not at
    # import: unittest's runner resets the warning filters.)
    warnings.filterwarnings("ignore", module=r"alpaca_trade_api\.")


def rest(key):
    return REST(key["keyId"], key["secret"], base_url=BASE, api_version="v2")


def ids(orders):
    return [o.id for o in orders]


class AccountTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.token = player("ata")
        cls.api = rest(new_key(cls.token))

    def test_account(self):
        account = self.api.get_account()
        uuid.UUID(account.id)
        self.assertEqual((account.cash, account.buying_power, account.equity, account.currency), ("10000.00", "10000.00", "10000.00", "USD"))
        self.assertEqual((account.status, account.trading_blocked), ("ACTIVE", False))
        self.assertIsInstance(account.created_at, pd.Timestamp)

    def test_clock_and_calendar(self):
        clock = self.api.get_clock()
        self.assertIsInstance(clock.timestamp, pd.Timestamp)
        self.assertLess(clock.timestamp, clock.next_close if clock.is_open else clock.next_open)
        days = self.api.get_calendar(start="2026-01-05", end="2026-01-09")
        self.assertEqual([d.date.date() for d in days], [date(2026, 1, d) for d in range(5, 10)])
        self.assertTrue(all(d.open < d.close for d in days))

    def test_assets(self):
        assets = {a.symbol: a for a in self.api.list_assets(status="active", asset_class="us_equity")}
        self.assertIn("AAPL", assets)
        self.assertEqual(len(self.api.list_assets()), len(assets))
        apple = self.api.get_asset("AAPL")
        self.assertEqual((apple.symbol, apple.name, apple.tradable, apple.status), ("AAPL", assets["AAPL"].name, True, "active"))
        self.assertEqual(self.api.get_asset(apple.id).symbol, "AAPL")
        with self.assertRaises(APIError) as missing:
            self.api.get_asset("NOSUCH")
        self.assertEqual((missing.exception.status_code, missing.exception.code), (404, 40410000))

    def test_portfolio_history(self):
        # The portfolio began today: one point, at today's live value.
        history = self.api.get_portfolio_history(period="1W", timeframe="1D")
        equity = float(self.api.get_account().equity)
        self.assertEqual((len(history.timestamp), history.equity[-1], history.base_value, history.profit_loss), (1, equity, equity, [0]))
        self.assertEqual(history.timeframe, "1D")
        self.assertEqual(len(history.df), 1)
        with self.assertRaises(APIError) as refused:
            self.api.get_portfolio_history(period="1D", timeframe="15Min")
        self.assertEqual((refused.exception.status_code, refused.exception.code), (422, 40010001))


class OrdersTest(unittest.TestCase):
    """Orders go through the same engine as /api/orders: reservations, fills, cancels."""

    def setUp(self):
        self.token = player("ataorders")
        self.api = rest(new_key(self.token))
        set_price("MSFT", "300.00")

    def test_market_order_fills_at_once(self):
        order = self.api.submit_order("MSFT", qty=2, side="buy", type="market", time_in_force="day")
        uuid.UUID(order.id)
        self.assertEqual((order.symbol, order.qty, order.side, order.type, order.status), ("MSFT", "2", "buy", "market", "filled"))
        self.assertEqual((order.filled_qty, order.filled_avg_price), ("2", "300.00"))
        self.assertIsInstance(order.filled_at, pd.Timestamp)
        fetched = self.api.get_order(order.id)
        self.assertEqual((fetched.id, fetched.status, fetched.filled_avg_price), (order.id, "filled", "300.00"))
        self.assertEqual(self.api.get_order_by_client_order_id(order.client_order_id).id, order.id)
        self.assertEqual(ids(self.api.list_orders(status="all")), [order.id])
        self.assertEqual(ids(self.api.list_orders(status="closed", symbols=["MSFT"], side="buy", direction="asc", nested=True)), [order.id])
        self.assertEqual(self.api.list_orders(), [])  # open orders, by default
        # The account is the portfolio /api shows (the first trade also earned a reward).
        account, portfolio = self.api.get_account(), call("GET", "/api/portfolio", self.token)[1]
        self.assertEqual((account.cash, account.long_market_value, account.equity), (portfolio["cash"], "600.00", portfolio["netWorth"]))

    def test_limit_order_rests_then_fills_after_a_price_move(self):
        # Prices as strings, the way this SDK's docstrings show them.
        order = self.api.submit_order("MSFT", qty=3, side="buy", type="limit", time_in_force="gtc", limit_price="290", client_order_id="ata-dip-1")
        self.assertEqual((order.status, order.limit_price, order.client_order_id, order.filled_qty), ("new", "290.00", "ata-dip-1", "0"))
        self.assertEqual(self.api.get_account().buying_power, "9130.00")
        self.assertEqual(ids(self.api.list_orders(status="open")), [order.id])
        self.assertEqual(self.api.get_order_by_client_order_id("ata-dip-1").id, order.id)
        set_price("MSFT", "289.50")
        filled = wait_for(lambda: (o := self.api.get_order(order.id)).status == "filled" and o)
        self.assertTrue(filled, "the limit order did not fill after the price fell below its limit")
        self.assertEqual((filled.filled_qty, filled.filled_avg_price), ("3", "289.50"))
        self.assertEqual(ids(self.api.list_orders(status="closed", symbols=["MSFT"])), [order.id])
        self.assertEqual(self.api.list_orders(status="open"), [])

    def test_replace_then_cancel(self):
        order = self.api.submit_order("MSFT", qty=3, side="buy", type="limit", time_in_force="day", limit_price=250)
        # replace_order sends qty as given: here a JSON string.
        new = self.api.replace_order(order.id, qty="5", limit_price="240.5", time_in_force="gtc")
        self.assertNotEqual(new.id, order.id)
        self.assertEqual((new.status, new.qty, new.limit_price, new.time_in_force, new.replaces), ("new", "5", "240.50", "gtc", order.id))
        old = self.api.get_order(order.id)
        self.assertEqual((old.status, old.replaced_by), ("replaced", new.id))
        self.assertIsInstance(old.replaced_at, pd.Timestamp)
        # Only the replacement's 5 × 240.50 is held back now.
        self.assertEqual(self.api.get_account().buying_power, "8797.50")
        with self.assertRaises(APIError) as again:
            self.api.replace_order(order.id, qty="1")
        self.assertEqual((again.exception.status_code, again.exception.code), (422, 40010001))
        self.assertIsNone(self.api.cancel_order(new.id))
        canceled = self.api.get_order(new.id)
        self.assertEqual(canceled.status, "canceled")
        self.assertIsInstance(canceled.canceled_at, pd.Timestamp)
        with self.assertRaises(APIError) as no_longer_open:
            self.api.cancel_order(new.id)
        self.assertEqual(no_longer_open.exception.status_code, 422)
        self.assertEqual(self.api.get_account().buying_power, "10000.00")

    def test_cancel_all_orders(self):
        orders = [self.api.submit_order("MSFT", qty=1, side="buy", type="limit", time_in_force=tif, limit_price=price)
                  for tif, price in (("gtc", "100"), ("day", "101"), ("gtc", "102"))]
        self.assertEqual(self.api.get_account().buying_power, "9697.00")
        self.assertIsNone(self.api.cancel_all_orders())
        self.assertEqual(self.api.list_orders(status="open"), [])
        self.assertEqual([self.api.get_order(o.id).status for o in orders], ["canceled"] * 3)
        self.assertEqual(self.api.get_account().buying_power, "10000.00")

    def test_refusals_raise_api_errors_with_alpacas_codes(self):
        cases = [
            (dict(symbol="MSFT", qty=1000, side="buy"), 403, 40310000),
            (dict(symbol="NOSUCH", qty=1, side="buy"), 422, 40010001),
            (dict(symbol="MSFT", qty=1, side="sell"), 403, 40310000),
            (dict(symbol="MSFT", notional=100, side="buy"), 422, 40010001),
        ]
        for order, status, code in cases:
            with self.assertRaises(APIError, msg=str(order)) as refused:
                self.api.submit_order(type="market", time_in_force="day", **order)
            self.assertEqual((refused.exception.status_code, refused.exception.code), (status, code), str(refused.exception))
        self.assertEqual(self.api.get_account().cash, "10000.00")


class PositionsTest(unittest.TestCase):
    def setUp(self):
        # A bot player of its own (POST /api/bots), as a student's bot plays.
        self.api = rest(bot_key("ataholder"))
        set_price("KO", "60.00")
        set_price("PEP", "170.00")

    def buy(self, symbol, qty):
        return self.api.submit_order(symbol, qty=qty, side="buy", type="market", time_in_force="day")

    def test_positions_are_the_holdings_valued_at_current_prices(self):
        self.buy("KO", 10)
        self.buy("PEP", 2)
        set_price("KO", "63.00")
        self.assertEqual(sorted(p.symbol for p in self.api.list_positions()), ["KO", "PEP"])
        ko = self.api.get_position("KO")
        self.assertEqual((ko.qty, ko.side, ko.avg_entry_price, ko.current_price), ("10", "long", "60.00", "63.00"))
        self.assertEqual((ko.market_value, ko.cost_basis, ko.unrealized_pl), ("630.00", "600.00", "30.00"))
        self.assertEqual(float(ko.unrealized_plpc), 0.05)
        self.assertEqual(ko.asset_id, self.api.get_asset("KO").id)
        with self.assertRaises(APIError) as missing:
            self.api.get_position("MSFT")
        self.assertEqual(missing.exception.status_code, 404)

    def test_close_part_of_a_position_then_all_of_it(self):
        self.buy("KO", 10)
        # close_position answers the closing order (wrapped in the SDK's Position entity).
        order = self.api.close_position("KO", qty=3)
        self.assertEqual((order.symbol, order.side, order.qty, order.status), ("KO", "sell", "3", "filled"))
        self.assertEqual(self.api.get_position("KO").qty, "7")
        self.assertEqual((self.api.close_position("KO").qty, self.api.list_positions()), ("7", []))
        with self.assertRaises(APIError) as gone:
            self.api.get_position("KO")
        self.assertEqual(gone.exception.status_code, 404)

    def test_close_all_positions(self):
        self.buy("KO", 5)
        self.buy("PEP", 1)
        closed = self.api.close_all_positions()
        self.assertEqual(sorted((c.symbol, c.status, c.body["side"], c.body["qty"]) for c in closed),
                         [("KO", 200, "sell", "5"), ("PEP", 200, "sell", "1")])
        self.assertEqual(self.api.list_positions(), [])
        account = self.api.get_account()
        self.assertEqual((account.long_market_value, account.cash), ("0.00", account.equity))


class ActivitiesTest(unittest.TestCase):
    def test_fills_and_cash_movements(self):
        api = rest(new_key(player("ataledger")))
        set_price("KO", "60.00")
        order = api.submit_order("KO", qty=4, side="buy", type="market", time_in_force="day")
        activities = api.get_activities()
        fill = next(a for a in activities if a.activity_type == "FILL")
        self.assertEqual((fill.symbol, float(fill.qty), float(fill.price), fill.side, fill.order_id), ("KO", 4.0, 60.0, "buy", order.id))
        self.assertEqual(fill.account_id, api.get_account().id)
        self.assertIsInstance(fill.transaction_time, pd.Timestamp)
        deposit = next(a for a in activities if a.activity_type == "CSD")
        self.assertEqual(float(deposit.net_amount), 10000.0)
        # One type (a path segment), several types (a parameter), paged oldest first.
        self.assertEqual([a.order_id for a in api.get_activities("FILL")], [order.id])
        self.assertEqual([a.activity_type for a in api.get_activities(["CSD"])], ["CSD"])
        first = api.get_activities(direction="asc", page_size=1)
        self.assertEqual([a.activity_type for a in first], ["CSD"])
        rest_of_them = api.get_activities(direction="asc", page_token=first[0].id)
        self.assertEqual(len(rest_of_them), len(activities) - 1)


class MarketDataTest(unittest.TestCase):
    """Bars from the stored daily prices (the demo market holds AAPL's 4-for-1 split of
    2020-08-31 and ends on 2021-04-21); quotes and trades at the current price."""

    DAYS = [date(2020, 8, 27), date(2020, 8, 28), date(2020, 8, 31), date(2020, 9, 1)]
    RAW = [500.04, 499.23, 129.04, 134.18]
    SPLIT = [125.01, 124.8075, 129.04, 134.18]

    @classmethod
    def setUpClass(cls):
        cls.api = rest(new_key(player("ataquant")))

    def set_price(self, symbol, price):
        """set_price, then wait until quotes show it: each process keeps a quote for up to
        QUOTE_CACHE_MS (500 ms) unless the announcement of a new one reached it first."""
        set_price(symbol, price)
        self.assertTrue(wait_for(lambda: self.api.get_latest_trades([symbol])[symbol].price == float(price)), f"{symbol} never quoted at {price}")

    @staticmethod
    def days(bars):
        return [t.date() for t in bars.df.index.tz_convert("America/New_York")]

    def test_daily_bars_of_one_symbol(self):
        # GET /v2/stocks/AAPL/bars: the SDK reads a plain list of bars.
        bars = self.api.get_bars("AAPL", TimeFrame.Day, "2020-08-27", "2020-09-01")
        self.assertEqual((self.days(bars), [b.c for b in bars]), (self.DAYS, self.RAW))
        adjusted = self.api.get_bars("AAPL", TimeFrame.Day, "2020-08-27", "2020-09-01", adjustment="split")
        self.assertEqual(list(adjusted.df["close"]), self.SPLIT)
        self.assertEqual(adjusted[1].v, bars[1].v * 4)
        self.assertEqual(len(self.api.get_bars("AAPL", TimeFrame.Day, "2020-08-27", limit=2)), 2)

    def test_daily_bars_of_several_symbols(self):
        bars = self.api.get_bars(["AAPL", "MSFT"], TimeFrame.Day, "2020-08-27", "2020-09-01", adjustment="split")
        frame = bars.df
        self.assertEqual(sorted(set(frame["symbol"])), ["AAPL", "MSFT"])
        apple = frame[frame["symbol"] == "AAPL"]
        self.assertEqual([t.date() for t in apple.index.tz_convert("America/New_York")], self.DAYS)
        self.assertEqual(list(apple["close"]), self.SPLIT)
        self.assertEqual(len(frame[frame["symbol"] == "MSFT"]), 4)
        weekly = self.api.get_bars(["AAPL"], TimeFrame.Week, "2020-09-01", "2020-09-30")
        self.assertEqual(self.days(weekly), [date(2020, 8, 31), date(2020, 9, 7), date(2020, 9, 14), date(2020, 9, 21), date(2020, 9, 28)])
        # limit counts bars across symbols.
        self.assertEqual(len(self.api.get_bars(["AAPL", "MSFT"], TimeFrame.Day, "2020-09-01", limit=3)), 3)

    def test_latest_bar_of_one_symbol(self):
        bar = self.api.get_latest_bar("AAPL")
        last_day = self.api.get_bars(["AAPL"], TimeFrame.Day, "2021-04-21", "2021-04-21")[0]
        self.assertEqual((bar.timestamp.date(), bar.close, bar.volume), (date(2021, 4, 21), last_day.c, last_day.v))

    def test_latest_quote_of_one_symbol(self):
        self.set_price("NVDA", "234.56")
        quote = self.api.get_latest_quote("NVDA")
        self.assertEqual((quote.ask_price, quote.bid_price), (234.56, 234.56))

    def test_latest_trade_of_one_symbol(self):
        self.set_price("NVDA", "234.57")
        self.assertEqual(self.api.get_latest_trade("NVDA").price, 234.57)

    def test_latest_bars_quotes_and_trades_of_several_symbols(self):
        self.set_price("INTC", "45.67")
        bars = self.api.get_latest_bars(["AAPL", "MSFT"])
        self.assertEqual(sorted(bars), ["AAPL", "MSFT"])
        self.assertEqual({s: b.timestamp.date() for s, b in bars.items()}, {"AAPL": date(2021, 4, 21), "MSFT": date(2021, 4, 21)})
        quotes = self.api.get_latest_quotes(["INTC", "MSFT"])
        self.assertEqual((sorted(quotes), quotes["INTC"].ask_price, quotes["INTC"].bid_price), (["INTC", "MSFT"], 45.67, 45.67))
        trades = self.api.get_latest_trades(["INTC", "MSFT"])
        self.assertEqual((sorted(trades), trades["INTC"].price), (["INTC", "MSFT"], 45.67))
        self.assertEqual(trades["MSFT"].price, quotes["MSFT"].ask_price)

    def test_snapshot_of_one_symbol(self):
        self.set_price("AAPL", "171.00")
        snapshot = self.api.get_snapshot("AAPL")
        self.assertEqual((snapshot.latest_trade.price, snapshot.latest_quote.ask_price, snapshot.minute_bar.close), (171.0, 171.0, 171.0))
        self.assertEqual((snapshot.daily_bar.timestamp.date(), snapshot.prev_daily_bar.timestamp.date()), (date(2021, 4, 21), date(2021, 4, 20)))

    def test_snapshots_of_several_symbols(self):
        self.set_price("AAPL", "172.00")
        snapshots = self.api.get_snapshots(["AAPL", "MSFT"])
        self.assertEqual(sorted(snapshots), ["AAPL", "MSFT"])
        apple = snapshots["AAPL"]
        self.assertEqual((apple.latest_trade.price, apple.latest_quote.bid_price, apple.minute_bar.close), (172.0, 172.0, 172.0))
        self.assertEqual((apple.daily_bar.timestamp.date(), apple.prev_daily_bar.timestamp.date()), (date(2021, 4, 21), date(2021, 4, 20)))
        self.assertIsNotNone(snapshots["MSFT"].latest_trade)


class TradeUpdatesTest(unittest.TestCase):
    """alpaca-trade-api's Stream: its trading socket at `<base_url>/stream/`, the key's own
    orders as they change. The market-data sockets stay closed (nothing subscribed)."""

    def setUp(self):
        set_price("MSFT", "300.00")
        # A bot player's key: the stream follows the bot's own portfolio.
        self.key = bot_key("atastream")
        self.api = rest(self.key)
        self.updates = queue.Queue()
        self.stream = Stream(self.key["keyId"], self.key["secret"], base_url=BASE, data_stream_url=BASE)

        async def handler(update):
            self.updates.put(update)
        self.stream.subscribe_trade_updates(handler)
        self.thread = threading.Thread(target=self.stream.run, daemon=True)
        self.thread.start()
        self.assertTrue(wait_for(lambda: self.stream._trading_ws._running), "the stream did not authenticate")
        time.sleep(0.3)  # its listen message reaches the server

    def tearDown(self):
        self.stream.stop()
        self.thread.join(timeout=10)
        self.assertFalse(self.thread.is_alive(), "the stream did not stop")

    def next_update(self, timeout=10):
        try:
            return self.updates.get(timeout=timeout)
        except queue.Empty:
            self.fail(f"no trade update within {timeout} s")

    def until_filled(self, order):
        """The updates of this order, up to and including its fill."""
        updates = []
        while not updates or updates[-1].event != "fill":
            update = self.next_update()
            if update.order["id"] == order.id:
                updates.append(update)
        return updates

    def buy(self, qty):
        return self.api.submit_order("MSFT", qty=qty, side="buy", type="market", time_in_force="day")

    def test_a_market_order_that_fills_at_once_is_new_then_filled(self):
        for qty in (2, 3):
            order = self.buy(qty)
            updates = self.until_filled(order)
            self.assertEqual([u.event for u in updates], ["new", "fill"], f"the updates of a market order for {qty}")
            # The order as placed, then as filled.
            self.assertEqual([(u.order["status"], u.order["filled_qty"]) for u in updates], [("new", "0"), ("filled", str(qty))])

    def test_a_fill_carries_its_price_qty_and_the_position_after_it(self):
        for qty, position in ((2, "2"), (3, "5")):
            order = self.buy(qty)
            fill = self.until_filled(order)[-1]
            self.assertEqual((float(fill.price), float(fill.qty), fill.order["filled_avg_price"]), (300.0, float(qty), "300.00"))
            uuid.UUID(fill.execution_id)
            self.assertEqual(fill._raw.get("position_qty"), position, f"position_qty after buying {qty} (it is the position after the fill)")
        self.assertEqual(self.api.get_position("MSFT").qty, "5")
        sale = self.api.close_position("MSFT", qty=1)
        self.assertEqual(self.until_filled(sale)[-1]._raw.get("position_qty"), "4")

    def test_resting_orders_are_new_replaced_and_canceled_and_others_are_not_heard(self):
        # Another player's orders never reach this key's stream.
        rest(new_key(player("ataneighbour"))).submit_order("MSFT", qty=1, side="buy", type="market", time_in_force="day")
        order = self.api.submit_order("MSFT", qty=2, side="buy", type="limit", time_in_force="gtc", limit_price="290")
        new = self.next_update()
        self.assertEqual((new.event, new.order["id"], new.order["status"]), ("new", order.id, "new"))
        replacement = self.api.replace_order(order.id, qty="3")
        events = {u.order["id"]: u for u in (self.next_update(), self.next_update())}
        self.assertEqual((events[order.id].event, events[order.id].order["replaced_by"]), ("replaced", replacement.id))
        self.assertEqual((events[replacement.id].event, events[replacement.id].order["replaces"]), ("new", order.id))
        self.api.cancel_order(replacement.id)
        canceled = self.next_update()
        self.assertEqual((canceled.event, canceled.order["id"], canceled.order["status"]), ("canceled", replacement.id, "canceled"))
        # Nothing more: no event repeated, none of the neighbour's (an order after all
        # of them is the next update heard).
        marker = self.buy(1)
        heard = [self.next_update(), self.next_update()]
        self.assertEqual([(u.order["id"], u.event) for u in heard], [(marker.id, "new"), (marker.id, "fill")])
        self.assertTrue(self.updates.empty())


if __name__ == "__main__":
    unittest.main(verbosity=2)
