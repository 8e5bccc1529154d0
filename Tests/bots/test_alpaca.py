"""Bots: the official Alpaca SDK (alpaca-py, unmodified) against a live MockStock server.

Each test registers players over MockStock's own API, creates an API key there, and
then talks to the server only through alpaca-py's clients with `url_override`.
Run by scripts/test-bots (make test-bots), which starts the server."""
import json
import os
import queue
import threading
import time
import unittest
import uuid

from datetime import date, datetime, timezone

from alpaca.common.exceptions import APIError
from alpaca.data.enums import Adjustment
from alpaca.data.historical.stock import StockHistoricalDataClient
from alpaca.data.live.stock import StockDataStream
from alpaca.data.requests import (StockBarsRequest, StockLatestBarRequest, StockLatestQuoteRequest,
                                  StockLatestTradeRequest, StockSnapshotRequest)
from alpaca.data.timeframe import TimeFrame
from alpaca.trading.client import TradingClient
from alpaca.trading.stream import TradingStream
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as websocket
from alpaca.trading.enums import AssetClass, AssetStatus
from alpaca.trading.enums import OrderClass, OrderSide, OrderStatus, OrderType, QueryOrderStatus, TimeInForce
from alpaca.trading.enums import ActivityType, PositionSide
from alpaca.trading.models import NonTradeActivity, TradeActivity
from alpaca.trading.requests import (ClosePositionRequest, GetAssetsRequest, GetCalendarRequest, GetOrdersRequest,
                                     GetPortfolioHistoryRequest, LimitOrderRequest, MarketOrderRequest, ReplaceOrderRequest,
                                     StopLossRequest, TakeProfitRequest, TrailingStopOrderRequest)

from common import BASE, call, new_key, player, set_price, wait_for


def trading(key):
    return TradingClient(key["keyId"], key["secret"], paper=True, url_override=BASE)


class ApiKeysTest(unittest.TestCase):
    def test_keys_are_shown_once_listed_without_secret_and_revoked(self):
        token = player("keeper")
        key = new_key(token, name="my bot")
        self.assertRegex(key["keyId"], r"^PK[A-Z0-9]{18}$")
        self.assertEqual(len(key["secret"]), 40)
        status, keys = call("GET", "/api/api-keys", token)
        self.assertEqual(status, 200)
        self.assertEqual([(k["keyId"], k["name"], k["portfolioId"]) for k in keys], [(key["keyId"], "my bot", key["portfolioId"])])
        self.assertNotIn("secret", keys[0])
        self.assertEqual(trading(key).get_account().cash, "10000.00")
        # The key was used: listed with its last use.
        self.assertIsNotNone(call("GET", "/api/api-keys", token)[1][0]["lastUsedAt"])
        # Revoked, it stops working at once (on this single process).
        self.assertEqual(call("DELETE", f"/api/api-keys/{key['keyId']}", token)[0], 204)
        with self.assertRaises(APIError) as refused:
            trading(key).get_account()
        self.assertEqual((refused.exception.status_code, refused.exception.code), (401, 40110000))

    def test_a_wrong_secret_or_another_users_key_id_is_refused(self):
        key = new_key(player("owner"))
        with self.assertRaises(APIError) as refused:
            TradingClient(key["keyId"], "x" * 40, paper=True, url_override=BASE).get_account()
        self.assertEqual(refused.exception.status_code, 401)
        # Another user cannot revoke it, nor bind a key to the owner's portfolio.
        thief = player("thief")
        self.assertEqual(call("DELETE", f"/api/api-keys/{key['keyId']}", thief)[0], 404)
        self.assertEqual(call("POST", "/api/api-keys", thief, {"portfolioId": key["portfolioId"]})[0], 404)
        self.assertEqual(trading(key).get_account().cash, "10000.00")

    def test_a_key_can_trade_a_league_portfolio(self):
        token = player("leaguer")
        status, league = call("POST", "/api/leagues/create", token, {"name": "Bots welcome", "mode": "isolated", "startingCash": "25000"})
        self.assertEqual(status, 201, league)
        portfolios = call("GET", "/api/portfolios", token)[1]
        league_portfolio = next(p["id"] for p in portfolios if p["leagueId"] == league["id"])
        key = new_key(token, portfolioId=league_portfolio)
        account = trading(key).get_account()
        self.assertEqual(account.cash, "25000.00")
        self.assertNotEqual(str(account.id), str(trading(new_key(token)).get_account().id))


class TradingApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.token = player("alpaca")
        cls.client = trading(new_key(cls.token))

    def test_account(self):
        account = self.client.get_account()
        self.assertIsInstance(account.id, uuid.UUID)
        self.assertEqual((account.cash, account.buying_power, account.equity, account.currency), ("10000.00", "10000.00", "10000.00", "USD"))
        self.assertEqual(account.status.value, "ACTIVE")
        self.assertFalse(account.trading_blocked)

    def test_portfolio_history(self):
        # The portfolio began today: one point, at today's live value.
        history = self.client.get_portfolio_history(GetPortfolioHistoryRequest(period="1W", timeframe="1D"))
        account = self.client.get_account()
        self.assertEqual(len(history.timestamp), 1)
        self.assertEqual((history.equity[-1], history.base_value, history.profit_loss), (float(account.equity), float(account.equity), [0.0]))
        self.assertEqual(history.timeframe, "1D")
        with self.assertRaises(APIError) as refused:
            self.client.get_portfolio_history(GetPortfolioHistoryRequest(period="1D", timeframe="15Min"))
        self.assertEqual((refused.exception.status_code, refused.exception.code), (422, 40010001))

    def test_clock_and_calendar(self):
        clock = self.client.get_clock()
        if clock.is_open:
            self.assertLess(clock.timestamp, clock.next_close)
        else:
            self.assertLess(clock.timestamp, clock.next_open)
        days = self.client.get_calendar(GetCalendarRequest(start="2026-01-05", end="2026-01-09"))
        self.assertEqual([d.date.isoformat() for d in days], ["2026-01-05", "2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09"])

    def test_assets(self):
        assets = self.client.get_all_assets(GetAssetsRequest(status=AssetStatus.ACTIVE, asset_class=AssetClass.US_EQUITY))
        by_symbol = {a.symbol: a for a in assets}
        self.assertIn("AAPL", by_symbol)
        apple = self.client.get_asset("AAPL")
        self.assertEqual((apple.symbol, apple.name, apple.tradable), ("AAPL", by_symbol["AAPL"].name, True))
        self.assertEqual(self.client.get_asset(apple.id).symbol, "AAPL")
        with self.assertRaises(APIError) as missing:
            self.client.get_asset("NOSUCH")
        self.assertEqual((missing.exception.status_code, missing.exception.code), (404, 40410000))



class OrdersTest(unittest.TestCase):
    """Orders go through the same engine as /api/orders: reservations, fills, cancels."""

    def setUp(self):
        self.token = player("orderbot")
        self.client = trading(new_key(self.token))
        set_price("MSFT", "300.00")

    def test_market_order_fills_at_once(self):
        order = self.client.submit_order(MarketOrderRequest(symbol="MSFT", qty=2, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))
        self.assertIsInstance(order.id, uuid.UUID)
        self.assertEqual((order.symbol, order.qty, order.side, order.status), ("MSFT", "2", OrderSide.BUY, OrderStatus.FILLED))
        self.assertEqual((order.filled_qty, order.filled_avg_price), ("2", "300.00"))
        # The account is the portfolio /api shows (the first trade also earned a reward).
        account, portfolio = self.client.get_account(), call("GET", "/api/portfolio", self.token)[1]
        self.assertEqual((account.cash, account.long_market_value, account.equity), (portfolio["cash"], "600.00", portfolio["netWorth"]))
        # The same order through MockStock's own API.
        mine = call("GET", "/api/orders?status=all", self.token)[1]["items"]
        self.assertEqual([o["uuid"] for o in mine], [str(order.id)])

    def test_limit_order_rests_fills_after_a_price_move_and_lists(self):
        order = self.client.submit_order(LimitOrderRequest(
            symbol="MSFT", qty=3, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, limit_price=290, client_order_id="dip-buyer-1"))
        self.assertEqual((order.status, order.limit_price, order.client_order_id), (OrderStatus.NEW, "290.00", "dip-buyer-1"))
        self.assertEqual(self.client.get_account().buying_power, "9130.00")
        self.assertEqual([o.id for o in self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.OPEN))], [order.id])
        self.assertEqual(self.client.get_order_by_client_id("dip-buyer-1").id, order.id)
        set_price("MSFT", "289.50")
        filled = wait_for(lambda: (o := self.client.get_order_by_id(order.id)).status == OrderStatus.FILLED and o)
        self.assertTrue(filled, "the limit order did not fill after the price fell below its limit")
        self.assertEqual((filled.filled_qty, filled.filled_avg_price), ("3", "289.50"))
        closed = self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.CLOSED, symbols=["MSFT"]))
        self.assertEqual([o.id for o in closed], [order.id])
        self.assertEqual(self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.OPEN)), [])

    def test_cancel_one_and_all(self):
        first = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, limit_price=100))
        second = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.DAY, limit_price=101))
        third = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, limit_price=102))
        self.client.cancel_order_by_id(first.id)
        self.assertEqual(self.client.get_order_by_id(first.id).status, OrderStatus.CANCELED)
        # Cancelling it again: no longer open.
        with self.assertRaises(APIError) as again:
            self.client.cancel_order_by_id(first.id)
        self.assertEqual(again.exception.status_code, 422)
        canceled = self.client.cancel_orders()
        self.assertEqual(sorted(str(c.id) for c in canceled), sorted([str(second.id), str(third.id)]))
        self.assertTrue(all(c.status == 200 for c in canceled))
        self.assertEqual(self.client.get_account().buying_power, "10000.00")

    def test_replace_then_cancel(self):
        order = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=3, side=OrderSide.BUY, time_in_force=TimeInForce.DAY, limit_price=250))
        new = self.client.replace_order_by_id(order.id, ReplaceOrderRequest(qty=5, limit_price=240.5, time_in_force=TimeInForce.GTC))
        self.assertNotEqual(new.id, order.id)
        self.assertEqual((new.status, new.qty, new.limit_price, new.time_in_force, new.replaces),
                         (OrderStatus.NEW, "5", "240.50", TimeInForce.GTC, order.id))
        old = self.client.get_order_by_id(order.id)
        self.assertEqual((old.status, old.replaced_by), (OrderStatus.REPLACED, new.id))
        self.assertIsNotNone(old.replaced_at)
        # Only the replacement's 5 × 240.50 is held back now.
        self.assertEqual(self.client.get_account().buying_power, "8797.50")
        # A replaced order cannot be replaced again; a replacement needing more cash than there is changes nothing.
        for attempt, status, code in ((lambda: self.client.replace_order_by_id(order.id, ReplaceOrderRequest(qty=1)), 422, 40010001),
                                      (lambda: self.client.replace_order_by_id(new.id, ReplaceOrderRequest(qty=100)), 403, 40310000),
                                      (lambda: self.client.replace_order_by_id(new.id, ReplaceOrderRequest(trail=2.0)), 422, 40010001)):
            with self.assertRaises(APIError) as refused:
                attempt()
            self.assertEqual((refused.exception.status_code, refused.exception.code), (status, code), refused.exception.message)
        self.assertEqual([o.id for o in self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.OPEN))], [new.id])
        self.client.cancel_order_by_id(new.id)
        self.assertEqual(self.client.get_order_by_id(new.id).status, OrderStatus.CANCELED)
        self.assertEqual(self.client.get_account().buying_power, "10000.00")

    def test_trailing_stop_follows_the_price_and_fills(self):
        self.client.submit_order(MarketOrderRequest(symbol="MSFT", qty=4, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))
        order = self.client.submit_order(TrailingStopOrderRequest(
            symbol="MSFT", qty=4, side=OrderSide.SELL, time_in_force=TimeInForce.GTC, trail_percent=2))
        # 300 × 0.98: the stop since placing.
        self.assertEqual((order.type, order.status, order.trail_percent, order.hwm, order.stop_price),
                         (OrderType.TRAILING_STOP, OrderStatus.NEW, "2", "300.00", "294.00"))
        set_price("MSFT", "310.00")
        moved = wait_for(lambda: (o := self.client.get_order_by_id(order.id)).hwm == "310.00" and o)
        self.assertTrue(moved, "the stop did not follow the new high")
        self.assertEqual(moved.stop_price, "303.80")
        # A new trail keeps its unit (percent): the replacement trails from the price now, 310 × 0.97.
        replaced = self.client.replace_order_by_id(order.id, ReplaceOrderRequest(trail=3))
        self.assertEqual((replaced.trail_percent, replaced.stop_price, replaced.replaces), ("3", "300.70", order.id))
        set_price("MSFT", "300.50")
        filled = wait_for(lambda: (o := self.client.get_order_by_id(replaced.id)).status == OrderStatus.FILLED and o)
        self.assertTrue(filled, "the trailing stop did not fill when the price fell to it")
        self.assertEqual((filled.filled_qty, filled.filled_avg_price), ("4", "300.50"))

    def test_bracket_and_oco_with_alpacas_names(self):
        # A bracket: a market buy whose take-profit and stop-loss open when it fills.
        order = self.client.submit_order(MarketOrderRequest(
            symbol="MSFT", qty=5, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, order_class=OrderClass.BRACKET,
            take_profit=TakeProfitRequest(limit_price=330), stop_loss=StopLossRequest(stop_price=280)))
        self.assertEqual((order.order_class, order.status, order.filled_avg_price), (OrderClass.BRACKET, OrderStatus.FILLED, "300.00"))
        self.assertEqual([(leg.type, leg.side, leg.status, leg.qty) for leg in order.legs],
                         [(OrderType.LIMIT, OrderSide.SELL, OrderStatus.NEW, "5"), (OrderType.STOP, OrderSide.SELL, OrderStatus.NEW, "5")])
        self.assertEqual((order.legs[0].limit_price, order.legs[1].stop_price), ("330.00", "280.00"))
        # Listed nested, the legs are under their entry only; flat, they are orders of their own too.
        nested = self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.ALL, nested=True))
        self.assertEqual([o.id for o in nested], [order.id])
        flat = self.client.get_orders(GetOrdersRequest(status=QueryOrderStatus.OPEN))
        self.assertEqual(sorted(o.id for o in flat), sorted(leg.id for leg in order.legs))
        # The price falls through the stop: the stop-loss sells, the take-profit is cancelled.
        set_price("MSFT", "279.00")
        stopped = wait_for(lambda: (o := self.client.get_order_by_id(order.id)).legs[1].status == OrderStatus.FILLED and o)
        self.assertTrue(stopped, "the stop-loss did not fill")
        self.assertEqual((stopped.legs[1].filled_avg_price, stopped.legs[0].status), ("279.00", OrderStatus.CANCELED))
        self.assertEqual(self.client.get_all_positions(), [])
        # An OCO on shares held: a limit sale at the take-profit and a stop below it, the shares held once.
        self.client.submit_order(MarketOrderRequest(symbol="MSFT", qty=3, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))
        oco = self.client.submit_order(LimitOrderRequest(
            symbol="MSFT", qty=3, side=OrderSide.SELL, time_in_force=TimeInForce.GTC, order_class=OrderClass.OCO,
            take_profit=TakeProfitRequest(limit_price=290), stop_loss=StopLossRequest(stop_price=270)))
        self.assertEqual((oco.order_class, oco.type, oco.limit_price, oco.status), (OrderClass.OCO, OrderType.LIMIT, "290.00", OrderStatus.NEW))
        self.assertEqual([(leg.type, leg.stop_price, leg.status) for leg in oco.legs], [(OrderType.STOP, "270.00", OrderStatus.NEW)])
        set_price("MSFT", "291.00")
        taken = wait_for(lambda: (o := self.client.get_order_by_id(oco.id)).status == OrderStatus.FILLED and o)
        self.assertTrue(taken, "the take-profit did not fill")
        self.assertEqual((taken.filled_avg_price, taken.legs[0].status), ("291.00", OrderStatus.CANCELED))

    def test_refusals_raise_api_errors_with_alpacas_codes(self):
        cases = [
            (MarketOrderRequest(symbol="MSFT", qty=1000, side=OrderSide.BUY, time_in_force=TimeInForce.DAY), 403, 40310000),
            (MarketOrderRequest(symbol="NOSUCH", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.DAY), 422, 40010001),
            (MarketOrderRequest(symbol="MSFT", qty=1, side=OrderSide.SELL, time_in_force=TimeInForce.DAY), 403, 40310000),
            (MarketOrderRequest(symbol="MSFT", notional=100, side=OrderSide.BUY, time_in_force=TimeInForce.DAY), 422, 40010001),
            (LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.OPG, limit_price=1), 422, 40010001),
            (MarketOrderRequest(symbol="MSFT", qty=1.5, side=OrderSide.BUY, time_in_force=TimeInForce.DAY), 422, 40010001),
        ]
        for request, status, code in cases:
            with self.assertRaises(APIError, msg=str(request)) as refused:
                self.client.submit_order(request)
            self.assertEqual((refused.exception.status_code, refused.exception.code), (status, code), refused.exception.message)
        self.assertEqual(self.client.get_account().cash, "10000.00")

    def test_another_users_order_is_not_found(self):
        order = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, limit_price=100))
        other = trading(new_key(player("snoop")))
        for attempt in (lambda: other.get_order_by_id(order.id), lambda: other.cancel_order_by_id(order.id),
                        lambda: other.replace_order_by_id(order.id, ReplaceOrderRequest(qty=2)),
                        lambda: other.get_order_by_client_id(order.client_order_id)):
            with self.assertRaises(APIError) as refused:
                attempt()
            self.assertEqual(refused.exception.status_code, 404)
        self.assertEqual(self.client.get_order_by_id(order.id).status, OrderStatus.NEW)



class PositionsTest(unittest.TestCase):
    def setUp(self):
        self.token = player("holder")
        self.client = trading(new_key(self.token))
        set_price("KO", "60.00")
        set_price("PEP", "170.00")

    def buy(self, symbol, qty):
        return self.client.submit_order(MarketOrderRequest(symbol=symbol, qty=qty, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))

    def test_positions_are_the_holdings_valued_at_current_prices(self):
        self.buy("KO", 10)
        self.buy("PEP", 2)
        set_price("KO", "63.00")
        positions = {p.symbol: p for p in self.client.get_all_positions()}
        self.assertEqual(sorted(positions), ["KO", "PEP"])
        ko = self.client.get_open_position("KO")
        self.assertEqual((ko.qty, ko.side, ko.avg_entry_price, ko.current_price), ("10", PositionSide.LONG, "60.00", "63.00"))
        self.assertEqual((ko.market_value, ko.cost_basis, ko.unrealized_pl, ko.unrealized_plpc), ("630.00", "600.00", "30.00", "0.05"))
        self.assertEqual(str(ko.asset_id), str(self.client.get_asset("KO").id))
        with self.assertRaises(APIError) as missing:
            self.client.get_open_position("MSFT")
        self.assertEqual(missing.exception.status_code, 404)

    def test_close_part_by_qty_and_percentage_then_all(self):
        self.buy("KO", 10)
        order = self.client.close_position("KO", ClosePositionRequest(qty="3"))
        self.assertEqual((order.side, order.qty, order.status), (OrderSide.SELL, "3", OrderStatus.FILLED))
        self.assertEqual(self.client.get_open_position("KO").qty, "7")
        self.client.close_position("KO", ClosePositionRequest(percentage="50"))  # 3.5 → 3 whole shares
        self.assertEqual(self.client.get_open_position("KO").qty, "4")
        self.client.close_position("KO")
        self.assertEqual(self.client.get_all_positions(), [])

    def test_close_all_positions_cancelling_open_orders(self):
        self.buy("KO", 5)
        self.buy("PEP", 1)
        resting = self.client.submit_order(LimitOrderRequest(symbol="KO", qty=1, side=OrderSide.SELL, time_in_force=TimeInForce.GTC, limit_price=99))
        closed = self.client.close_all_positions(cancel_orders=True)
        self.assertEqual(sorted(c.symbol for c in closed), ["KO", "PEP"])
        self.assertTrue(all(c.status == 200 for c in closed))
        self.assertEqual(self.client.get_order_by_id(resting.id).status, OrderStatus.CANCELED)
        self.assertEqual(self.client.get_all_positions(), [])
        account = self.client.get_account()
        self.assertEqual((account.long_market_value, account.cash, account.buying_power), ("0.00", account.equity, account.equity))



class ActivitiesTest(unittest.TestCase):
    """alpaca-py has no method for activities: bots call GET /v2/account/activities and
    parse the items with the SDK's activity models."""

    def test_fills_and_cash_movements_in_the_sdks_models(self):
        client = trading(new_key(player("ledger")))
        set_price("KO", "60.00")
        order = client.submit_order(MarketOrderRequest(symbol="KO", qty=4, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))
        raw = client.get("/account/activities")
        activities = [TradeActivity(**a) if a["activity_type"] == "FILL" else NonTradeActivity(**a) for a in raw]
        fill = next(a for a in activities if isinstance(a, TradeActivity))
        self.assertEqual((fill.symbol, fill.qty, fill.price, fill.side, fill.order_id), ("KO", 4, 60.0, OrderSide.BUY, order.id))
        self.assertEqual(str(fill.account_id), str(client.get_account().id))
        deposit = next(a for a in activities if a.activity_type == ActivityType.CSD)
        self.assertEqual(deposit.net_amount, 10000.0)
        # Filtered by type, paged oldest first.
        fills = client.get("/account/activities/FILL")
        self.assertEqual([a["order_id"] for a in fills], [str(order.id)])
        first = client.get("/account/activities", {"direction": "asc", "page_size": 1})
        self.assertEqual(first[0]["activity_type"], "CSD")
        rest = client.get("/account/activities", {"direction": "asc", "page_token": first[0]["id"]})
        self.assertEqual(len(rest), len(raw) - 1)


class MarketDataTest(unittest.TestCase):
    """Bars from the stored daily prices (the demo market holds AAPL's 4-for-1 split of 2020-08-31)."""

    @classmethod
    def setUpClass(cls):
        cls.key = new_key(player("quant"))
        cls.data = StockHistoricalDataClient(cls.key["keyId"], cls.key["secret"], url_override=BASE)

    def daily(self, symbols, adjustment, **window):
        return self.data.get_stock_bars(StockBarsRequest(symbol_or_symbols=symbols, timeframe=TimeFrame.Day, adjustment=adjustment, **window))

    def test_daily_bars_raw_and_split_adjusted(self):
        window = {"start": datetime(2020, 8, 27, 4, tzinfo=timezone.utc), "end": datetime(2020, 9, 1, 4, tzinfo=timezone.utc)}
        raw = self.daily(["AAPL", "MSFT"], Adjustment.RAW, **window)
        apple = raw.data["AAPL"]
        self.assertEqual([b.timestamp.date() for b in apple], [date(2020, 8, 27), date(2020, 8, 28), date(2020, 8, 31), date(2020, 9, 1)])
        self.assertEqual([b.close for b in apple], [500.04, 499.23, 129.04, 134.18])
        self.assertEqual(len(raw.data["MSFT"]), 4)
        adjusted = self.daily("AAPL", Adjustment.SPLIT, **window).data["AAPL"]
        self.assertEqual([b.close for b in adjusted], [125.01, 124.8075, 129.04, 134.18])
        self.assertEqual(adjusted[1].volume, apple[1].volume * 4)

    def test_weekly_bars_and_a_limit(self):
        weekly = self.data.get_stock_bars(StockBarsRequest(
            symbol_or_symbols="AAPL", timeframe=TimeFrame.Week, start=datetime(2020, 9, 1, tzinfo=timezone.utc),
            end=datetime(2020, 9, 30, tzinfo=timezone.utc), adjustment=Adjustment.RAW)).data["AAPL"]
        self.assertEqual([b.timestamp.date() for b in weekly], [date(2020, 8, 31), date(2020, 9, 7), date(2020, 9, 14), date(2020, 9, 21), date(2020, 9, 28)])
        self.assertEqual(weekly[1].open, self.daily("AAPL", Adjustment.RAW, start=datetime(2020, 9, 8, 4, tzinfo=timezone.utc),
                                                    end=datetime(2020, 9, 8, 5, tzinfo=timezone.utc)).data["AAPL"][0].open)
        limited = self.daily(["AAPL", "MSFT"], Adjustment.RAW, start=datetime(2020, 9, 1, tzinfo=timezone.utc), limit=3)
        self.assertEqual(sum(len(bars) for bars in limited.data.values()), 3)

    def test_latest_bar_quote_and_trade(self):
        set_price("NVDA", "123.45")
        quote = self.data.get_stock_latest_quote(StockLatestQuoteRequest(symbol_or_symbols=["NVDA"]))["NVDA"]
        trade = self.data.get_stock_latest_trade(StockLatestTradeRequest(symbol_or_symbols="NVDA"))["NVDA"]
        self.assertEqual((quote.ask_price, quote.bid_price, trade.price), (123.45, 123.45, 123.45))
        bar = self.data.get_stock_latest_bar(StockLatestBarRequest(symbol_or_symbols="AAPL"))["AAPL"]
        self.assertEqual(bar.timestamp.date(), date(2021, 4, 21))

    def test_snapshots(self):
        set_price("AAPL", "170.00")
        snapshots = self.data.get_stock_snapshot(StockSnapshotRequest(symbol_or_symbols=["AAPL", "MSFT"]))
        apple = snapshots["AAPL"]
        self.assertEqual((apple.latest_trade.price, apple.latest_quote.ask_price), (170.0, 170.0))
        self.assertEqual((apple.daily_bar.timestamp.date(), apple.previous_daily_bar.timestamp.date()), (date(2021, 4, 21), date(2021, 4, 20)))
        # The price just set is this minute's bar.
        self.assertEqual(apple.minute_bar.close, 170.0)
        self.assertLess(abs(apple.minute_bar.timestamp - datetime.now(timezone.utc)).total_seconds(), 120)
        self.assertIn("MSFT", snapshots)

    def test_minute_and_hour_bars_from_price_changes(self):
        start = datetime.now(timezone.utc).replace(second=0, microsecond=0)
        prices = ["50.00", "54.50", "49.25", "51.75"]
        for price in prices:
            set_price("INTC", price)
        minutes = self.data.get_stock_bars(StockBarsRequest(symbol_or_symbols="INTC", timeframe=TimeFrame.Minute, start=start)).data["INTC"]
        # One bar, or two if a minute ended meanwhile: the first opens at 50, the last closes at 51.75.
        self.assertIn(len(minutes), (1, 2))
        self.assertEqual((minutes[0].open, minutes[-1].close), (50.0, 51.75))
        self.assertEqual((max(b.high for b in minutes), min(b.low for b in minutes)), (54.5, 49.25))
        self.assertTrue(all(b.timestamp.second == 0 and b.timestamp >= start for b in minutes))
        hours = self.data.get_stock_bars(StockBarsRequest(
            symbol_or_symbols="INTC", timeframe=TimeFrame.Hour, start=start.replace(minute=0))).data["INTC"]
        self.assertEqual((hours[-1].close, hours[-1].timestamp.minute), (51.75, 0))
        # Timeframes the SDK itself would refuse to send.
        headers = {"APCA-API-KEY-ID": self.key["keyId"], "APCA-API-SECRET-KEY": self.key["secret"]}
        for timeframe in ("90Min", "24Hour", "0Min"):
            status, body = call("GET", f"/v2/stocks/bars?symbols=INTC&timeframe={timeframe}", headers=headers)
            self.assertEqual((status, body["code"]), (422, 40010001), timeframe)


class TradeUpdatesTest(unittest.TestCase):
    """alpaca-py's TradingStream at /stream: the key's own orders as they change."""

    def setUp(self):
        set_price("MSFT", "300.00")
        self.key = new_key(player("streambot"))
        self.client = trading(self.key)
        self.updates = queue.Queue()
        self.stream = TradingStream(self.key["keyId"], self.key["secret"], paper=True, url_override=BASE.replace("http", "ws", 1) + "/stream")

        async def handler(update):
            self.updates.put(update)
        self.stream.subscribe_trade_updates(handler)
        self.thread = threading.Thread(target=self.stream.run, daemon=True)
        self.thread.start()
        self.assertTrue(wait_for(lambda: self.stream._running), "the stream did not authenticate")
        time.sleep(0.3)  # its listen message reaches the server

    def tearDown(self):
        self.stream.stop()
        self.thread.join(timeout=10)

    def next_update(self):
        try:
            return self.updates.get(timeout=10)
        except queue.Empty:
            self.fail("no trade update within 10 s")

    def test_new_replaced_fill_and_canceled_orders_arrive_and_others_do_not(self):
        # Another player's orders never reach this key's stream.
        trading(new_key(player("neighbour"))).submit_order(
            MarketOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.DAY))
        order = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=2, side=OrderSide.BUY, time_in_force=TimeInForce.GTC, limit_price=290))
        new = self.next_update()
        self.assertEqual((new.event, new.order.id, new.order.status), ("new", order.id, OrderStatus.NEW))

        replacement = self.client.replace_order_by_id(order.id, ReplaceOrderRequest(qty=3))
        events = {update.order.id: update for update in (self.next_update(), self.next_update())}
        self.assertEqual((events[order.id].event, events[order.id].order.replaced_by), ("replaced", replacement.id))
        self.assertEqual((events[replacement.id].event, events[replacement.id].order.replaces), ("new", order.id))

        set_price("MSFT", "289.00")
        fill = self.next_update()
        self.assertEqual((fill.event, fill.order.id, fill.order.status), ("fill", replacement.id, OrderStatus.FILLED))
        self.assertEqual((fill.price, fill.qty, fill.order.filled_avg_price), (289.0, 3.0, "289.00"))
        self.assertIsInstance(fill.execution_id, uuid.UUID)

        resting = self.client.submit_order(LimitOrderRequest(symbol="MSFT", qty=1, side=OrderSide.BUY, time_in_force=TimeInForce.DAY, limit_price=100))
        self.assertEqual(self.next_update().event, "new")
        self.client.cancel_order_by_id(resting.id)
        canceled = self.next_update()
        self.assertEqual((canceled.event, canceled.order.id, canceled.order.canceled_at is not None), ("canceled", resting.id, True))
        self.assertTrue(self.updates.empty())


class TradeStreamProtocolTest(unittest.TestCase):
    """The socket itself, as a client library other than alpaca-py would meet it."""

    URL = BASE.replace("http", "ws", 1) + "/stream"

    def test_a_wrong_secret_is_answered_unauthorized_and_closed(self):
        key = new_key(player("wrongsecret"))
        with websocket(self.URL) as socket:
            socket.send(json.dumps({"action": "authenticate", "data": {"key_id": key["keyId"], "secret_key": "x" * 40}}))
            reply = json.loads(socket.recv(timeout=5))
            self.assertEqual(reply, {"stream": "authorization", "data": {"action": "authenticate", "status": "unauthorized"}})
            with self.assertRaises(ConnectionClosed) as closed:
                socket.recv(timeout=5)
            self.assertEqual(closed.exception.rcvd.code, 1008)

    def test_listen_is_answered_and_a_revoked_key_ends_the_socket(self):
        token = player("revoker")
        key = new_key(token)
        with websocket(self.URL) as socket:
            socket.send(json.dumps({"action": "authenticate", "data": {"key_id": key["keyId"], "secret_key": key["secret"]}}))
            self.assertEqual(json.loads(socket.recv(timeout=5))["data"]["status"], "authorized")
            socket.send(json.dumps({"action": "listen", "data": {"streams": ["trade_updates", "account_updates"]}}))
            self.assertEqual(json.loads(socket.recv(timeout=5)), {"stream": "listening", "data": {"streams": ["trade_updates"]}})
            socket.send("not json")
            self.assertIn("error", json.loads(socket.recv(timeout=5))["data"])
            self.assertEqual(call("DELETE", f"/api/api-keys/{key['keyId']}", token)[0], 204)
            with self.assertRaises(ConnectionClosed) as closed:
                socket.recv(timeout=10)
            self.assertEqual(closed.exception.rcvd.code, 1008)

    def test_without_an_upgrade_it_is_426(self):
        self.assertEqual(call("GET", "/stream")[0], 426)


class MarketDataStreamTest(unittest.TestCase):
    """alpaca-py's StockDataStream at /v2/iex (msgpack): trades, quotes and minute bars of
    the prices stored, for the symbols subscribed and no others."""

    def test_trades_quotes_and_the_minutes_bar_arrive_for_subscribed_symbols(self):
        key = new_key(player("databot"))
        set_price("AMD", "100.00")
        received = queue.Queue()

        async def handler(item):
            received.put(item)
        stream = StockDataStream(key["keyId"], key["secret"], url_override=BASE.replace("http", "ws", 1) + "/v2/iex")
        stream.subscribe_trades(handler, "AMD")
        stream.subscribe_quotes(handler, "AMD")
        stream.subscribe_bars(handler, "AMD")
        thread = threading.Thread(target=stream.run, daemon=True)
        thread.start()
        try:
            self.assertTrue(wait_for(lambda: stream._running), "the stream did not authenticate")
            time.sleep(0.5)  # its subscription reaches the server
            set_price("INTC", "30.00")  # not subscribed: nothing arrives for it
            set_price("AMD", "101.25")
            set_price("AMD", "102.50")
            items = [received.get(timeout=10) for _ in range(4)]
            trades = [item for item in items if type(item).__name__ == "Trade"]
            quotes = [item for item in items if type(item).__name__ == "Quote"]
            self.assertEqual([(t.symbol, t.price, t.size) for t in trades], [("AMD", 101.25, 1), ("AMD", 102.5, 1)])
            self.assertEqual([(q.symbol, q.bid_price, q.ask_price) for q in quotes], [("AMD", 101.25, 101.25), ("AMD", 102.5, 102.5)])
            self.assertIsNotNone(trades[0].timestamp.tzinfo)
            # The minute's bar, once it has ended (at most a minute and a second later).
            bar = received.get(timeout=65)
            self.assertEqual(type(bar).__name__, "Bar")
            self.assertEqual((bar.symbol, bar.high, bar.close), ("AMD", 102.5, 102.5))
            self.assertEqual(bar.timestamp.second, 0)
            self.assertTrue(received.empty())
        finally:
            stream.stop()
            thread.join(timeout=10)


# The channels a subscription reply lists empty (the game has no data for them).
EMPTY_CHANNELS = {name: [] for name in ["updatedBars", "dailyBars", "statuses", "lulds", "corrections", "cancelErrors"]}


class MarketDataStreamProtocolTest(unittest.TestCase):
    """The market-data socket in JSON, as a client other than alpaca-py would meet it."""

    URL = BASE.replace("http", "ws", 1) + "/v2/iex"

    def test_greeting_auth_errors_subscription_and_a_price(self):
        key = new_key(player("jsondata"))
        with websocket(self.URL) as socket:
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "success", "msg": "connected"}])
            socket.send(json.dumps({"action": "subscribe", "trades": ["AAPL"]}))
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "error", "code": 401, "msg": "not authenticated"}])
            socket.send(json.dumps({"action": "auth", "key": key["keyId"], "secret": key["secret"]}))
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "success", "msg": "authenticated"}])
            socket.send(json.dumps({"action": "subscribe", "trades": ["AAPL"], "quotes": ["*"], "bars": []}))
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "subscription", "trades": ["AAPL"], "quotes": ["*"], "bars": [], **EMPTY_CHANNELS}])
            socket.send(json.dumps({"action": "unsubscribe", "quotes": ["*"]}))
            self.assertEqual(json.loads(socket.recv(timeout=5))[0]["quotes"], [])
            socket.send("not json")
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "error", "code": 400, "msg": "invalid syntax"}])
            set_price("AAPL", "171.05")
            trade = json.loads(socket.recv(timeout=5))
            self.assertEqual([(m["T"], m["S"], m["p"], m["s"]) for m in trade], [("t", "AAPL", 171.05, 1)])

    def test_a_wrong_secret_is_refused_with_402_and_closed(self):
        key = new_key(player("wrongdata"))
        with websocket(self.URL) as socket:
            socket.recv(timeout=5)
            socket.send(json.dumps({"action": "auth", "key": key["keyId"], "secret": "x" * 40}))
            self.assertEqual(json.loads(socket.recv(timeout=5)), [{"T": "error", "code": 402, "msg": "auth failed"}])
            with self.assertRaises(ConnectionClosed) as closed:
                socket.recv(timeout=5)
            self.assertEqual(closed.exception.rcvd.code, 1008)

    def test_without_an_upgrade_it_is_426(self):
        self.assertEqual(call("GET", "/v2/iex")[0], 426)
        self.assertEqual(call("GET", "/v2/sip")[0], 426)


class ReadmeExampleTest(unittest.TestCase):
    """The README's alpaca-py examples, run as written but for the key, secret and address."""

    @staticmethod
    def blocks():
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")) as readme:
            section = readme.read().split("## Bring your Alpaca bot", 1)[1].split("\n## ", 1)[0]
        return [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]

    def test_the_examples_trade_and_hear_the_fill(self):
        import contextlib
        import io
        key = new_key(player("readme"))
        set_price("AAPL", "150.00")
        example, stream_example = self.blocks()
        placeholder = '"PK…", "…secret…", "http://127.0.0.1:8080"'
        self.assertIn(placeholder, example)
        example = example.replace(placeholder, f'"{key["keyId"]}", "{key["secret"]}", "{BASE}"')
        printed = io.StringIO()
        scope = {}
        with contextlib.redirect_stdout(printed):
            exec(compile(example, "README example", "exec"), scope)
        lines = printed.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("20-day average "), lines)
        self.assertIn("OrderStatus.FILLED 150.00 OrderStatus.NEW [('AAPL', '3')]", lines[1])

        self.assertTrue(stream_example.rstrip().endswith("stream.run()   # blocks; stream.stop() from another thread ends it"))
        stream_example = stream_example.replace("ws://127.0.0.1:8080", BASE.replace("http", "ws", 1))
        with contextlib.redirect_stdout(printed):
            exec(compile(stream_example.replace("stream.run()", "pass"), "README stream example", "exec"), scope)
            stream = scope["stream"]
            thread = threading.Thread(target=stream.run, daemon=True)
            thread.start()
            self.assertTrue(wait_for(lambda: stream._running))
            time.sleep(0.3)
            set_price("AAPL", "120.00")  # below the example's limit order (90 % of the last close, 133.50): it fills
            heard = wait_for(lambda: "fill AAPL 2 120.0" in printed.getvalue())
            stream.stop()
            thread.join(timeout=10)
        self.assertTrue(heard, printed.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=2)
