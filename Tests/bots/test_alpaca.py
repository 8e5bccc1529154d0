"""Bots: the official Alpaca SDK (alpaca-py, unmodified) against a live MockStock server.

Each test registers players over MockStock's own API, creates an API key there, and
then talks to the server only through alpaca-py's clients with `url_override`.
Run by scripts/test-bots (make test-bots), which starts the server."""
import json
import os
import unittest
import urllib.error
import urllib.request
import uuid

from alpaca.common.exceptions import APIError
from alpaca.trading.client import TradingClient
from alpaca.trading.enums import AssetClass, AssetStatus
from alpaca.trading.requests import GetAssetsRequest, GetCalendarRequest

BASE = os.environ["MOCKSTOCK_URL"]
ADMIN = (os.environ["MOCKSTOCK_ADMIN_USERNAME"], os.environ["MOCKSTOCK_ADMIN_PASSWORD"])
PASSWORD = "bot-owner-password"


def call(method, path, token=None, body=None, headers=None):
    """MockStock's own API: (status, JSON body)."""
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text else None


def player(name):
    """A new player's token."""
    status, body = call("POST", "/api/auth/register", body={"username": f"{name}_{uuid.uuid4().hex[:8]}", "password": PASSWORD})
    assert status == 201, body
    return body["token"]


def admin_token():
    status, body = call("POST", "/api/auth/login", body={"username": ADMIN[0], "password": ADMIN[1]})
    assert status == 200, body
    return body["token"]


def new_key(token, **fields):
    status, key = call("POST", "/api/api-keys", token, fields)
    assert status == 201, key
    return key


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
