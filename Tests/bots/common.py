"""What both bot suites share: MockStock's own API, for what a bot's owner does outside
the SDK (register, create a key) and what the admin does (set prices).

Only the standard library: each suite runs in its own virtualenv with its own SDK
(test_alpaca.py with alpaca-py, test_alpaca_trade_api.py with alpaca-trade-api)."""
import json
import os
import time
import urllib.error
import urllib.request
import uuid

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


def bot_key(name):
    """A key of a new bot player (`POST /api/bots`) that a new player owns: the key trades
    the bot's own portfolio."""
    owner = player(f"{name}_owner")
    status, bot = call("POST", "/api/bots", owner, {"name": f"{name}_{uuid.uuid4().hex[:8]}"})
    assert status == 201, bot
    return new_key(owner, botId=bot["id"])


def set_price(symbol, price):
    """Sets an admin quote and waits until the server has followed it up (the orders it
    crosses filled): its `price_followups_pending` gauge reads 0."""
    status, body = call("POST", "/api/admin/quotes", admin_token(), [{"symbol": symbol, "price": price}])
    assert status == 200, body

    def followed_up():
        with urllib.request.urlopen(BASE + "/metrics") as response:
            return any(line.startswith("price_followups_pending ") and float(line.split()[1]) == 0 for line in response.read().decode().splitlines())
    assert wait_for(followed_up, timeout=30), "prices not followed up after 30 s"


def wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    return condition()
