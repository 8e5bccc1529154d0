"""Browser tests of how the web client writes what a player reads: money in a league's
own currency (yen grouped, without decimals), an order's duration in the order dialog's
words, only the order types a league allows, the currencies the ECB no longer publishes
apart from the rates now, and the site's icon.

Run after the server is up, like test_web_client.py (scripts/test-browser), with
MOCKSTOCK_URL, MOCKSTOCK_ADMIN_USERNAME/PASSWORD and SCREENSHOTS; each screen is saved at
1280x900 and at 390x844 (fmt-*-desktop.png, fmt-*-phone.png).
"""
import csv
import datetime
import gzip
import os
import unittest
import urllib.error
import urllib.request
from decimal import Decimal, ROUND_HALF_UP
from xml.etree import ElementTree

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from support import BASE, DATA, PASSWORD, BrowserTest, call

FX_FILE = os.path.join(DATA, "ecb-fx-daily.csv.gz")


def yen(text):
    """An amount from the API as yen are written: rounded half away from zero to the yen,
    grouped by thousands, "−" for a loss."""
    value = Decimal(text).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return f"{'−' if value < 0 else ''}¥{abs(value):,}"


def discontinued_in_data():
    """The currencies of the ECB file seeded whose last rate is more than a month older
    than the file's last day, with that day."""
    with gzip.open(FX_FILE, "rt") as file:
        rows = list(csv.DictReader(file))
    last_day = max(row["Date"] for row in rows)
    last = {}
    for row in rows:
        for currency, rate in row.items():
            if currency and currency != "Date" and rate not in ("", "N/A"):
                last[currency] = max(last.get(currency, ""), row["Date"])
    cutoff = (datetime.date.fromisoformat(last_day) - datetime.timedelta(days=31)).isoformat()
    return {currency: day for currency, day in last.items() if day < cutoff}


class FormattingTest(BrowserTest):

    # Helpers

    def shows(self, read, expected, what, timeout=15):
        """Waits until `read()` (the page, read in one go) gives `expected`."""
        try:
            self.wait(lambda d: read() == expected, timeout)
        except TimeoutException:
            self.fail(f"{what} never showed {expected!r}; it shows {read()!r}")

    def shots(self, name, css=None):
        """The screen at 1280x900 and at 390x844, scrolled to `css` when given."""
        for size, (width, height) in (("desktop", (1280, 900)), ("phone", (390, 844))):
            self.driver.set_window_size(width, height)
            if css:
                self.driver.execute_script("document.querySelector(arguments[0])?.scrollIntoView({block: 'center'})", css)
            self.shot(f"fmt-{name}-{size}")
        self.driver.set_window_size(1280, 900)

    def column(self, css, index):
        """One column of the rows under `css`, read in one go (pages re-render)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((row) => row.cells[arguments[1]]?.innerText.trim() ?? '')",
            css, index)

    def row(self, css, first):
        """The cells of the first row under `css` whose first cell starts with `first`."""
        return self.driver.execute_script(
            "const row = [...document.querySelectorAll(arguments[0])].find((r) => r.cells[0]?.innerText.trim().startsWith(arguments[1]));"
            "return row ? [...row.cells].map((cell) => cell.innerText.trim()) : []", css, first)

    def options(self, css):
        return self.driver.execute_script("return [...document.querySelectorAll(arguments[0] + ' option')].map((o) => o.value)", css)

    def register(self, username):
        self.fresh_session()
        self.go("#/login")
        self.find("#auth-form")
        self.click("#auth-switch")
        self.text_in("#auth-submit", "Create account")
        self.find("#username").send_keys(username)
        self.find("#password").send_keys(PASSWORD)
        self.click("#auth-submit")
        self.wait(lambda d: "#/login" not in d.current_url)
        return self.driver.execute_script("return sessionStorage.getItem('mockstock.token')")

    def create_league(self, name, currency="USD", cash=None, forbidden_types=()):
        self.go("#/leagues")
        self.find("#league-name").send_keys(name)
        Select(self.find("#league-mode")).select_by_value("isolated")
        Select(self.find("#league-currency")).select_by_value(currency)
        if cash:
            field = self.find("#league-cash")
            field.clear()
            field.send_keys(cash)
        for order_type in forbidden_types:
            self.click(f"#rule-type-{order_type}")
        self.click("#create-league button[type='submit']")
        self.text_in("#flash", f"League “{name}” created")

    # The journeys

    def test_money_in_yen(self):
        """A league in yen: cash, values, prices, trades and the leaderboard in yen, grouped
        and without decimals; the converter groups too and writes yen without decimals."""
        token = self.register(f"yuki_{self.suffix}")
        self.create_league("Yen class", currency="JPY", cash="52866.23")
        self.shows(lambda: self.column("main tbody tr", 2), ["¥52,866"], "The leaderboard's net worth")
        self.shots("league-yen")

        league = next(p for p in call("/api/portfolios", token=token) if p["kind"] == "league")
        order = call("/api/orders", {"symbol": "AAPL", "side": "buy", "quantity": 1, "type": "market", "timeInForce": "day",
                                     "portfolioId": league["id"]}, token)
        self.assertEqual(order["status"], "filled")
        valued = call(f"/api/portfolio?portfolioId={league['id']}", token=token)
        holding = valued["holdings"][0]

        self.go(f"#/portfolio?id={league['id']}")
        self.text_in("main tbody", "AAPL")
        self.shows(lambda: self.find("#cash").text, yen(valued["cash"]), "Cash")
        self.shows(lambda: self.find("#net-worth").text, yen(valued["netWorth"]), "Net worth")
        self.shows(lambda: self.row("main tbody tr", "AAPL")[2:5],
                   [yen(holding["price"]), yen(holding["value"]), yen(holding["averageCost"])], "The holding's price, value and cost")
        self.shots("portfolio-yen")

        trade = call(f"/api/transactions?portfolioId={league['id']}", token=token)["items"][0]
        self.go(f"#/transactions?id={league['id']}")
        self.shows(lambda: self.row("main tbody tr", "")[4:7], [yen(trade["price"]), yen(trade["amount"]), yen(trade["fee"])],
                   "The trade's price, amount and fee")
        self.shots("history-yen")
        self.go(f"#/transactions?id={league['id']}&view=activity")
        self.shows(lambda: self.column("#activities tbody tr", 4), [yen(f"-{trade['amount']}"), f"+{yen('52866.23')}"],
                   "The cash column")
        self.text_in("#activities", f"1 at {yen(trade['price'])}, fee ¥0")
        self.shots("activity-yen")

        self.go(f"#/orders?id={league['id']}")
        self.text_in("#order-history tbody", f"Filled at {yen(order['filledAveragePrice'])}")
        self.shots("orders-yen")

        history = call(f"/api/portfolios/{league['id']}/history?currency=JPY", token=token)
        self.go(f"#/analytics?id={league['id']}")
        self.shows(lambda: self.find("#history-worth").text, yen(history["points"][-1]["netWorth"]), "Analytics' net worth")
        self.text_in("#allocation", f"cash {yen(valued['cash'])}.")
        self.shots("analytics-yen")

        # The converter: 100,000 dollars in yen at the ECB's rates of a day.
        converted = call("/api/fx/convert?from=USD&to=JPY&amount=100000&date=2020-03-02", token=token)
        self.go("#/fx")
        field = self.find("#fx-amount")
        field.clear()
        field.send_keys("100000")
        Select(self.find("#fx-from")).select_by_value("USD")
        Select(self.find("#fx-to")).select_by_value("JPY")
        self.find("#fx-date").send_keys("03022020")  # 2020-03-02, month first
        self.click("#fx-convert-button")
        self.text_in("#fx-result", f"100,000.00 USD = {yen(converted['result'])[1:]} JPY at {converted['rate']}")
        self.shots("converter-yen", "#fx-result")

    def test_league_order_types(self):
        """The order dialog offers only the order types the chosen portfolio's league
        allows, says why, and offers every type again for the personal portfolio."""
        self.register(f"otto_{self.suffix}")
        self.create_league("Two types", forbidden_types=("stop", "stop_limit", "trailing_stop"))
        self.text_in("#rules", "market, limit")

        self.go("#/stock/AAPL")
        self.text_in("#stock-symbol", "AAPL")
        self.click("#order")
        self.find("#order-portfolio")
        self.assertEqual(self.options("#order-type"), ["market", "limit", "stop", "stop_limit", "trailing_stop"])
        Select(self.find("#order-portfolio")).select_by_visible_text("League: Two types")
        self.shows(lambda: self.options("#order-type"), ["market", "limit"], "The league's order types")
        self.text_in("#order-types-note", "This league allows market and limit orders.")
        self.shots("order-dialog-league", "#order-types-note")

        # Back in the personal portfolio, every type again; a stop order chosen there
        # becomes a market order when the league's portfolio is chosen.
        Select(self.find("#order-portfolio")).select_by_visible_text("Personal portfolio")
        self.shows(lambda: self.options("#order-type"), ["market", "limit", "stop", "stop_limit", "trailing_stop"], "The personal portfolio's order types")
        self.wait(EC.invisibility_of_element_located((By.ID, "order-types-note")))
        Select(self.find("#order-type")).select_by_value("stop")
        self.find("#order-stop")
        Select(self.find("#order-portfolio")).select_by_visible_text("League: Two types")
        self.shows(lambda: self.options("#order-type"), ["market", "limit"], "The league's order types")
        self.assertEqual(Select(self.find("#order-type")).first_selected_option.get_attribute("value"), "market")
        self.wait(EC.invisibility_of_element_located((By.ID, "order-stop")))

    def test_order_durations(self):
        """Open orders say how long they last in the order dialog's words."""
        token = self.register(f"olga_{self.suffix}")
        self.go("#/stock/AAPL")
        self.click("#order")
        offered = self.driver.execute_script("return [...document.querySelectorAll('#order-tif option')].map((o) => [o.value, o.text])")
        self.click("#order-form .actions button[type='button']")
        words = dict(offered)
        self.assertEqual(words["gtc"], "Good till cancelled")
        # Two orders far below the price rest.
        for duration in ("gtc", "day"):
            call("/api/orders", {"symbol": "AAPL", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00",
                                 "timeInForce": duration}, token)
        self.go("#/orders")
        self.text_in("#open-orders tbody", "AAPL")
        self.shows(lambda: sorted(self.column("#open-orders tbody tr", 5)), sorted([words["gtc"], words["day"]]),
                   "The open orders' durations")
        self.shots("open-orders")

    def test_currencies_no_longer_published(self):
        """A currency whose last rate is years old is listed apart, with that day, and not
        among the rates now, against the euro or any base."""
        gone = discontinued_in_data()
        self.assertTrue(gone, "the seeded file has currencies the ECB stopped publishing")
        self.register(f"ugo_{self.suffix}")
        for base in ("EUR", "USD"):
            self.go(f"#/fx?base={base}")
            self.find("#fx-rates tbody")
            now = self.column("#fx-rates tbody tr", 0)
            self.assertIn("JPY", now)
            for currency in gone:
                self.assertNotIn(currency, now, f"{currency} is listed among the rates now against {base}")
            self.find("#fx-discontinued tbody")
            for currency, day in gone.items():
                self.assertEqual(self.row("#fx-discontinued tbody tr", currency)[2], day, currency)
            self.text_in("#fx-discontinued", "No longer published")
            self.text_in("#fx-rates-when", "Rates now, set")
        # "Set" is the oldest of the rates now, not the last rate of a currency no longer published.
        oldest = self.driver.execute_script("return new Date(arguments[0]).toLocaleDateString()", f"{min(gone.values())}T12:00:00Z")
        self.assertNotIn(oldest, self.find("#fx-rates-when").text)
        self.shots("currencies", "#fx-discontinued")

    def test_favicon(self):
        """The site's icon is an SVG the server serves, and the page links it."""
        try:
            with urllib.request.urlopen(f"{BASE}/favicon.svg", timeout=10) as response:
                status, kind, body = response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as error:
            self.fail(f"GET /favicon.svg answered {error.code}")
        self.assertEqual(status, 200)
        self.assertTrue(kind.startswith("image/svg+xml"), kind)
        self.assertEqual(ElementTree.fromstring(body).tag, "{http://www.w3.org/2000/svg}svg")
        self.driver.get(f"{BASE}/")
        link = self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "link[rel='icon']")))
        self.assertEqual(link.get_attribute("href"), f"{BASE}/favicon.svg")
        self.assertEqual(link.get_attribute("type"), "image/svg+xml")
        self.driver.get(f"{BASE}/favicon.svg")
        self.shot("fmt-favicon")


if __name__ == "__main__":
    unittest.main(verbosity=2)
