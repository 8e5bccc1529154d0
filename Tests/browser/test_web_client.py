"""Browser tests of the web client in a real headless Chromium (selenium + chromedriver).

Run by scripts/test-browser (make test-browser), which starts PostgreSQL and a server
with the demo market and sets MOCKSTOCK_URL, MOCKSTOCK_ADMIN_USERNAME/PASSWORD and
SCREENSHOTS (a folder that receives one PNG per main screen).
"""
import datetime
import json
import os
import re
import time
import unittest
import urllib.error
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from support import ADMIN, BASE, PASSWORD, SCREENSHOTS, BrowserTest, call, login, make_driver, month_first, moved, price_followups_done
# Running a class and a player's own account: run with these journeys (BROWSER_TESTS=ClassAndAccountTest alone).
from test_class_and_account import ClassAndAccountTest  # noqa: F401
from test_teams import TeamsTest  # noqa: F401
from test_scenario_league import ScenarioLeagueTest  # noqa: F401


class WebClientTest(BrowserTest):
    """One player's journey through every main screen, then a second player in a league."""

    # Helpers

    def tmp_files(self, contents):
        """Writes each named text to a file of its own; returns the paths by name."""
        folder = os.path.join(SCREENSHOTS, "uploads")
        os.makedirs(folder, exist_ok=True)
        paths = {}
        for name, text in contents.items():
            paths[name] = os.path.abspath(os.path.join(folder, name))
            with open(paths[name], "w", encoding="utf-8") as file:
                file.write(text)
        return paths

    def upload(self, file_input, path, form):
        self.find(file_input).send_keys(path)
        self.click(f"{form} button[type='submit']")

    def trade(self, side, quantity, double_click=False):
        self.click(f"#{side}")
        field = self.find("#trade-quantity")
        field.clear()
        field.send_keys(str(quantity))
        self.text_in("#trade-estimate", "$")
        if double_click:
            ActionChains(self.driver).double_click(self.find("#trade-confirm")).perform()
        else:
            self.click("#trade-confirm")

    def place_order(self, side, order_type, quantity, limit=None, stop=None, tif="day", holds=None, trail=None, before_confirm=None):
        """`holds`: what the dialog must say the order holds back (the server's preview)."""
        self.click("#order")
        Select(self.find("#order-side")).select_by_value(side)
        Select(self.find("#order-type")).select_by_value(order_type)
        field = self.find("#order-quantity")
        field.clear()
        field.send_keys(str(quantity))
        if limit:
            self.find("#order-limit").send_keys(limit)
        if stop:
            self.find("#order-stop").send_keys(stop)
        if trail:
            self.find("#order-trail").send_keys(trail)
        Select(self.find("#order-tif")).select_by_value(tif)
        if holds:
            self.text_in("#order-explain", f"While open it holds back {holds}.")
        if before_confirm:
            before_confirm()
        self.click("#order-confirm")

    @staticmethod
    def admin_post(path, body):
        """An admin's request through the API, as something the page did not do."""
        return call(path, body, login(*ADMIN))

    def set_price(self, symbol, price):
        self.admin_post("/api/admin/quotes", [{"symbol": symbol, "price": price}])
        price_followups_done()

    @staticmethod
    def with_key(key_id, secret, path, body=None):
        """A bot's request with an API key (Alpaca's headers), as its program would send it:
        the HTTP status and the parsed answer."""
        headers = {"APCA-API-KEY-ID": key_id, "APCA-API-SECRET-KEY": secret, "Content-Type": "application/json"}
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{BASE}{path}", data=data, headers=headers, method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def rows(self, css):
        """The cells' text of each row of the table at `css`, read in one go."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map((row) => [...row.cells].map((c) => c.innerText.trim()))", css)

    def column_of(self, css, title):
        """The cells' text of the column headed `title` in the table at `css`, read in one go."""
        return self.driver.execute_script(
            "const table = document.querySelector(arguments[0] + ' table');"
            "if (!table) return [];"
            "const index = [...table.tHead.rows[0].cells].findIndex((c) => c.textContent.trim() === arguments[1]);"
            "return index < 0 ? null : [...table.tBodies[0].rows].map((row) => row.cells[index].innerText.trim())", css, title)

    def standing_names(self):
        """The players of the league's standings (the host's page has other tables too)."""
        return [row[1] for row in self.rows("#standings")]

    def bot_card(self, bot):
        return f"li.bot[data-bot='{bot}']"

    def type_when(self, css, when):
        """Types a day and time into the datetime-local field at `css` as a user does
        (month first, then the time after a Tab), over what it held."""
        field = self.find(css)
        field.clear()
        field.send_keys(when.strftime("%m%d%Y"), Keys.TAB, when.strftime("%I%M%p"))
        self.assertEqual(field.get_attribute("value"), when.strftime("%Y-%m-%dT%H:%M"))

    def accept(self, *words):
        """Accepts the confirmation on screen, once it says each of `words`."""
        alert = self.wait(EC.alert_is_present())
        for text in words:
            self.assertIn(text, alert.text)
        alert.accept()

    def shot_of(self, name, css):
        """A screenshot with `css` in the middle of the screen, once no toast covers it."""
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"), timeout=20)
        self.driver.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", css)
        self.shot(name)

    # The journey, in order.

    def test_journey(self):
        driver = self.driver
        alice, bob = f"alice_{self.suffix}", f"bob_{self.suffix}"

        # Registration lands on the demo market (signed out, whatever ran before).
        self.go("")
        driver.execute_script("sessionStorage.clear()")
        self.go("#/login")
        self.find("#auth-form")
        self.shot("01-login")
        self.sign_in(alice, register=True)
        self.find("#market-search")
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "main tbody tr")) == 20)
        self.text_in("#market-count", "stocks")
        self.find("#winners li")
        self.shot("02-market")

        # Search by company name, then sort and page.
        box = self.find("#market-search")
        box.send_keys("apple")
        box.submit()
        self.wait(lambda d: "AAPL" in self.table_texts())
        Select(self.find("#market-sort")).select_by_value("-symbol")
        self.wait(lambda d: "sort=-symbol" in d.current_url)

        # The stock page and its chart ranges.
        self.go("#/market?search=AAPL")
        self.click("main tbody a[href='#/stock/AAPL']")
        self.text_in("#stock-symbol", "AAPL")
        chart = self.wait(lambda d: d.find_element(By.CSS_SELECTOR, "#chart-box[data-points]"))
        year_points = int(chart.get_attribute("data-points"))
        self.find("#chart-box canvas")
        self.text_in("#corporate-actions", "4-for-1 split")
        self.text_in("#corporate-actions", "Dividend of $0.205 a share")
        self.shot("03-stock")
        self.click("button[data-range='1m']")
        self.wait(lambda d: d.find_element(By.ID, "chart-box").get_attribute("data-range") == "1m")
        month_points = int(self.wait(lambda d: d.find_element(By.CSS_SELECTOR, "#chart-box[data-range='1m']")).get_attribute("data-points"))
        self.assertLess(month_points, year_points)
        self.assertGreater(month_points, 10)

        # Buy with a double click: one trade, not two.
        self.trade("buy", 2, double_click=True)
        self.text_in("#flash", "Bought 2 AAPL")
        self.text_in("#position", "You hold 2 shares")

        # The portfolio and the history show it.
        self.go("#/portfolio")
        self.text_in("main tbody", "AAPL")
        self.assertEqual(self.table_texts(1), ["2"])
        self.find(".chart canvas")
        self.shot("04-portfolio")
        self.go("#/transactions")
        self.text_in("main tbody", "AAPL")
        self.assertEqual(self.table_texts(1), ["Buy"])

        # Sell one; the history grows.
        self.go("#/stock/AAPL")
        self.trade("sell", 1)
        self.text_in("#flash", "Sold 1 AAPL")
        self.go("#/transactions")
        self.wait(lambda d: self.table_texts(1) == ["Sell", "Buy"])
        self.shot("05-history")

        # Too big an order is refused in words, and nothing is traded.
        self.go("#/stock/AAPL")
        self.trade("buy", 1000000)
        self.text_in("#trade-error", "not enough cash")
        self.shot("06-insufficient-funds")
        self.click("dialog .actions button[type='button']")
        self.go("#/transactions")
        self.wait(lambda d: self.table_texts(1) == ["Sell", "Buy"])

        # A league; a second player joins with its code; both are ranked.
        self.go("#/leagues")
        self.find("#league-name").send_keys("Class 7B")
        self.click("#create-league button[type='submit']")
        code = self.find("#league-code").text
        # A code a class can type: capitals and digits without look-alikes; a link to share.
        self.assertRegex(code, r"^[A-HJKMNP-Z2-9]{12}$")
        link = self.find("#league-join-link").get_attribute("href")
        self.assertTrue(link.endswith(f"/join/{code}"), link)
        league_url = driver.current_url
        self.sign_out()
        self.sign_in(bob, register=True)
        self.go("#/leagues")
        # One character wrong: "no league has that code".
        self.find("#join-code").send_keys(("B" if code[0] != "B" else "C") + code[1:])
        self.click("#join-league button[type='submit']")
        self.text_in("#join-league .error", "No league has that code")
        # The shared link opens the join screen with the code filled in; typed in lower case, it joins.
        driver.get(link.replace(code, code.lower()))
        self.wait(lambda d: self.find("#join-code").get_attribute("value") == code.lower())
        self.click("#join-league button[type='submit']")
        self.wait(lambda d: sorted(self.standing_names()) == sorted([alice, bob]))
        self.shot("07-league")

        # The owner kicks the second player, after confirming.
        self.sign_out()
        self.sign_in(alice)
        driver.get(league_url)
        self.wait(lambda d: sorted(self.standing_names()) == sorted([alice, bob]))
        self.click(f"button[data-kick='{bob}']")
        self.wait(EC.alert_is_present()).accept()
        self.wait(lambda d: self.standing_names() == [alice])

        # Achievements and notifications, with the unread badge.
        self.go("#/achievements")
        self.find("#achievements .earned")
        self.shot("08-achievements")
        self.find("#unread")
        self.go("#/notifications")
        self.text_in("#notices", "Achievement earned")
        self.shot("09-notifications")

        # A phone-sized screen.
        driver.set_window_size(390, 844)
        self.go("#/market")
        self.find("main tbody tr")
        self.shot("10-market-phone")
        driver.set_window_size(1280, 900)

        # An expired or revoked token sends the player back to log in, with a message.
        driver.execute_script("sessionStorage.setItem('mockstock.token', 'expired.token.value')")
        self.go("#/portfolio")
        self.find("#auth-form")
        self.text_in("#flash", "session has ended")

        # The admin page, for admins only.
        self.sign_in(ADMIN[0], ADMIN[1])
        self.find("#admin-link")
        self.go("#/admin")
        self.find("#quote-symbol").send_keys("AAPL")
        self.find("#quote-price").send_keys("123.45")
        self.click("#quote-form button[type='submit']")
        self.text_in("#quote-result", "AAPL now trades at 123.45")

        # Uploads name the line of a bad row as an editor counts lines, also after a
        # quoted description that spans two lines; nothing of a refused file is kept.
        symbol = f"MS{self.suffix[:4].upper()}"
        files = self.tmp_files({
            "bad-instruments.csv": 'symbol,name,description\n'
                                   f'{symbol},Mock Stock Inc.,"Makes games\nfor classrooms."\n'
                                   'NO/SLASH,Slash Corp,\n',
            "instruments.csv": 'symbol,name,description\n'
                               f'{symbol},Mock Stock Inc.,"Makes games\nfor classrooms."\n',
            "bad-prices.csv": "symbol,date,open,high,low,close,volume\n"
                              f"{symbol},2024-01-02,10,11,9,10.5,1000\n"
                              f"{symbol},2024-02-30,10,11,9,10.5,1000\n",
            "prices.csv": "symbol,date,open,high,low,close,volume\n"
                          f"{symbol},2024-01-02,10,11,9,10.5,1000\n"
                          f"{symbol},2024-01-03,10.5,12,10,11.75,1200\n",
        })
        self.upload("#instruments-file", files["bad-instruments.csv"], "#instruments-form")
        self.text_in("#instruments-result", "Line 4: symbol must be")
        # The page reads the line from the server's answer (its `line` field).
        self.assertEqual(self.find("#instruments-result").get_attribute("data-line"), "4")
        self.upload("#prices-file", files["prices.csv"], "#prices-form")
        self.text_in("#prices-result", "Line 2: unknown symbol; add the instrument first")
        self.assertEqual(self.find("#prices-result").get_attribute("data-line"), "2")
        self.upload("#instruments-file", files["instruments.csv"], "#instruments-form")
        self.text_in("#instruments-result", "1 instrument saved")
        self.upload("#prices-file", files["bad-prices.csv"], "#prices-form")
        self.text_in("#prices-result", "Line 3: date must be a real day")
        self.upload("#prices-file", files["prices.csv"], "#prices-form")
        self.text_in("#prices-result", "2 rows saved")
        self.shot("11-admin")
        quote = self.find("#quote-symbol")
        quote.clear()
        quote.send_keys(symbol)
        price = self.find("#quote-price")
        price.clear()
        price.send_keys("12.25")
        self.click("#quote-form button[type='submit']")
        self.text_in("#quote-result", f"{symbol} now trades at 12.25")
        self.go(f"#/stock/{symbol}")
        self.text_in("main", "Makes games")
        self.text_in("#stock-price", "12.25")

    def test_bots(self):
        """Bot players: created from My bots (a bad name, a taken one and a sixth refused in
        the server's words), a key whose secret is shown once, revoked; seated in a league by
        its code, marked as a bot with its owner in the standings, ranked apart when the
        league's host says so, refused when the league forbids bots; deleted."""
        driver = self.driver
        self.fresh_session()
        olga = f"olga_{self.suffix}"
        robo, robo2 = f"robo_{self.suffix}", f"robo2_{self.suffix}"
        self.sign_in(olga, register=True)
        self.click("#nav a[href='#/bots']")
        self.text_in("main h1", "My bots")
        self.text_in("#no-bots", "You have no bots yet")

        # Two bots; then a name that breaks the rules and one that is taken (the owner's own).
        for name in (robo, robo2):
            self.find("#bot-name").send_keys(name)
            self.click_centered("#bot-form button[type='submit']")
            self.text_in("#flash", f"Bot “{name}” created")
            self.find(self.bot_card(name))
        self.assertEqual(self.driver.execute_script("return [...document.querySelectorAll('li.bot h2')].map((e) => e.textContent)"), [robo, robo2])
        self.text_in(f"{self.bot_card(robo)} .bot-portfolios", "Personal portfolio")
        self.find("#bot-name").send_keys("no spaces allowed")
        self.click_centered("#bot-form button[type='submit']")
        self.text_in("#bot-error", "name must be 3–32 characters of letters, digits")
        field = self.find("#bot-name")
        field.clear()
        field.send_keys(olga.upper())
        self.click_centered("#bot-form button[type='submit']")
        self.text_in("#bot-error", "That username is taken.")
        # Five is the most: the sixth is refused, and the five stay.
        for number in range(3, 6):
            field = self.find("#bot-name")
            field.clear()
            field.send_keys(f"robo{number}_{self.suffix}")
            self.click_centered("#bot-form button[type='submit']")
            self.find(self.bot_card(f"robo{number}_{self.suffix}"))
        self.find("#bot-name").send_keys(f"robo6_{self.suffix}")
        self.click_centered("#bot-form button[type='submit']")
        self.text_in("#bot-error", "A player has at most 5 bots; delete one first.")
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "li.bot")), 5)
        self.shot("28-bots")

        # A key for the bot's personal portfolio: its secret is shown once, with a warning,
        # and it works; after a reload the key is listed and the secret is gone.
        card = self.bot_card(robo)
        self.assertEqual(Select(self.find(f"{card} .key-portfolio")).first_selected_option.text, "Personal portfolio")
        self.find(f"{card} .key-name").send_keys("backtester")
        self.click_centered(f"{card} .new-key-button")
        self.text_in("#new-key-secret", "Copy the secret now: it will not be shown again.")
        key_id, secret = self.find("#new-key-id").text, self.find("#new-key-secret-text").text
        self.assertRegex(key_id, r"^PK[A-Z0-9]{18}$")
        self.assertEqual(len(secret), 40)
        self.text_in(f"{card} li[data-key='{key_id}']", "backtester")
        self.text_in(f"{card} li[data-key='{key_id}']", "Personal portfolio")
        self.shot_of("29-bots-new-key", "#new-key-secret")
        status, account = self.with_key(key_id, secret, "/v2/account")
        self.assertEqual(status, 200, account)
        driver.refresh()
        self.text_in(f"{card} li[data-key='{key_id}']", key_id)
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#new-key-secret"), [])
        self.assertNotIn(secret, driver.page_source)
        # Revoked after confirming: gone from the list, and it no longer works.
        self.click_centered(f"button[data-revoke='{key_id}']")
        self.wait(EC.alert_is_present()).accept()
        self.text_in("#flash", f"Key {key_id} revoked.")
        self.text_in(f"{card} .keys-empty", "No keys yet")
        self.assertEqual(self.with_key(key_id, secret, "/v2/account")[0], 401)

        # A league with a 1% commission, bots allowed (the form's default).
        self.go("#/leagues")
        self.find("#league-name").send_keys("Bot league")
        self.assertEqual(Select(self.find("#league-bot-policy")).first_selected_option.get_attribute("value"), "allowed")
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.find("#rule-commission-percent").send_keys("1")
        self.click("#create-league button[type='submit']")
        self.text_in("#league-bots", "Allowed")
        self.text_in("#bot-policy-text", "bots play and are ranked with everyone")
        code = self.find("#league-code").text
        league_url = driver.current_url

        # Both bots seated by its code (a wrong code refused, a second seat too).
        self.go("#/bots")
        seat = f"{card} .seat-code"
        self.find(seat).send_keys(("B" if code[0] != "B" else "C") + code[1:])
        self.click_centered(f"{card} .seat-button")
        self.text_in(f"{card} .seat + .error", "No league has that code")
        self.find(seat).clear()
        self.find(seat).send_keys(code)
        self.click_centered(f"{card} .seat-button")
        self.text_in("#flash", f"“{robo}” now plays in “Bot league”.")
        self.text_in(f"{card} .bot-portfolios", "League: Bot league")
        self.find(seat).send_keys(code)
        self.click_centered(f"{card} .seat-button")
        self.text_in(f"{card} .seat + .error", f"“{robo}” already plays in that league.")
        self.find(f"{self.bot_card(robo2)} .seat-code").send_keys(code)
        self.click_centered(f"{self.bot_card(robo2)} .seat-button")
        self.text_in("#flash", f"“{robo2}” now plays in “Bot league”.")
        # The flash comes before the cards are drawn again with the new seat: wait for them.
        self.text_in(f"{self.bot_card(robo2)} .bot-portfolios", "League: Bot league")

        # The bot's program trades its league portfolio with a key made for it: 1 share.
        Select(self.find(f"{card} .key-portfolio")).select_by_visible_text("League: Bot league")
        self.click_centered(f"{card} .new-key-button")
        self.text_in("#new-key-secret", "New key for League: Bot league")
        league_key, league_secret = self.find("#new-key-id").text, self.find("#new-key-secret-text").text
        status, order = self.with_key(league_key, league_secret, "/v2/orders",
                                      {"symbol": "AAPL", "qty": "1", "side": "buy", "type": "market", "time_in_force": "day"})
        self.assertEqual((status, order["status"]), (200, "filled"), order)
        # The owner buys 10 in her league portfolio: ten times the commission.
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Bot league")
        field = self.find("#trade-quantity")
        field.clear()
        field.send_keys("10")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 10 AAPL")

        # The standings mark the bots with their owner; one table, ranked by the server.
        driver.get(league_url)
        self.text_in("#standings", robo2)
        self.wait(lambda d: [r[:2] for r in self.rows("#standings")] ==
                  [["1", f"{robo2} bot by {olga}"], ["2", f"{robo} bot by {olga}"], ["3", olga]])
        self.text_in("#league-members", "3")
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#bot-standings"), [])
        self.shot_of("30-league-bots", "#standings")

        # Ranked apart: two tables, each ranked from 1 by the server.
        Select(self.find("#bot-policy-select")).select_by_value("separate")
        self.click_centered("#bot-policy-form button[type='submit']")
        self.text_in("#flash", "Bots in “Bot league”: ranked apart")
        self.text_in("#league-bots", "Ranked apart")
        self.wait(lambda d: [r[:2] for r in self.rows("#standings")] == [["1", olga]])
        self.wait(lambda d: [r[:2] for r in self.rows("#bot-standings")] ==
                  [["1", f"{robo2} bot by {olga}"], ["2", f"{robo} bot by {olga}"]])
        self.text_in("#humans-heading", "People")
        self.text_in("#bots-heading", "Bots")
        self.shot_of("31-league-bots-separate", "#humans-heading")
        # Still ranked apart after a reload: the page asks the server, which remembers.
        driver.refresh()
        self.text_in("#bot-standings", robo2)
        self.assertEqual(Select(self.find("#bot-policy-select")).first_selected_option.get_attribute("value"), "separate")
        # The bots' table follows a bot's trade without a reload (the page asks again: a
        # change among bots alone raises no standings event).
        worth = self.rows("#bot-standings")[1][2]
        status, order = self.with_key(league_key, league_secret, "/v2/orders",
                                      {"symbol": "AAPL", "qty": "1", "side": "buy", "type": "market", "time_in_force": "day"})
        self.assertEqual((status, order["status"]), (200, "filled"), order)
        self.wait(lambda d: self.rows("#bot-standings")[1][2] not in ("", worth), timeout=20)
        self.assertEqual(self.rows("#bot-standings")[1][1], f"{robo} bot by {olga}")
        # Ranked another way by the viewer: still two tables, each read in that order.
        Select(self.find("#rank-by")).select_by_value("return")
        self.text_in("#rank-note", "Ranked by return for you")
        self.wait(lambda d: [r[:2] for r in self.rows("#standings")] == [["1", olga]])
        self.wait(lambda d: sorted(r[1] for r in self.rows("#bot-standings")) == sorted([f"{robo2} bot by {olga}", f"{robo} bot by {olga}"])
                  and self.rows("#bot-standings")[0][0] == "1")
        self.assertIn("rankBy=return", driver.current_url)
        Select(self.find("#rank-by")).select_by_value("netWorth")
        self.text_in("#rank-note", "Ranked by net worth, the league's order.")
        self.wait(lambda d: [r[:2] for r in self.rows("#bot-standings")] ==
                  [["1", f"{robo2} bot by {olga}"], ["2", f"{robo} bot by {olga}"]])

        # Forbidden: no bot joins, and no key is made for the league's portfolios; the
        # server's words say so.
        Select(self.find("#bot-policy-select")).select_by_value("forbidden")
        self.click_centered("#bot-policy-form button[type='submit']")
        self.text_in("#league-bots", "Forbidden")
        self.text_in("#bot-policy-text", "no bot joins, and no API key trades here")
        self.go("#/bots")
        robo3 = self.bot_card(f"robo3_{self.suffix}")
        self.find(f"{robo3} .seat-code").send_keys(code)
        self.click_centered(f"{robo3} .seat-button")
        self.text_in(f"{robo3} .seat + .error", "This league forbids bots: no bot may join it and no API key may trade its portfolios.")
        Select(self.find(f"{card} .key-portfolio")).select_by_visible_text("League: Bot league")
        self.click_centered(f"{card} .new-key-button")
        self.text_in(f"{card} .new-key + .error", "This league forbids bots")
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#new-key-secret"), [])
        self.shot_of("32-bots-forbidden", f"{robo3} .seat + .error")

        # Deleting a bot asks first; declined, nothing changes; confirmed, it is gone, with
        # its seat in the league.
        self.click_centered(f"{card} .delete-bot")
        self.wait(EC.alert_is_present()).dismiss()
        self.find(card)
        self.click_centered(f"{card} .delete-bot")
        self.wait(EC.alert_is_present()).accept()
        self.text_in("#flash", f"Bot “{robo}” deleted.")
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, card))
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "li.bot")), 4)
        self.assertEqual(self.with_key(league_key, league_secret, "/v2/account")[0], 401)
        driver.get(league_url)
        self.wait(lambda d: sorted(r[1] for r in self.rows("#standings")) == sorted([olga, f"{robo2} bot by {olga}"]))
        self.text_in("#league-members", "2")
        self.sign_out()

    def test_live(self):
        """Prices, fills, notices and standings arrive on the live stream while a page is
        open, without reloading it."""
        driver = self.driver
        self.fresh_session()
        erin = f"erin_{self.suffix}"
        self.sign_in(erin, register=True)
        self.set_price("NVDA", "400.00")
        self.go("#/market?search=NVDA")
        self.text_in("main tbody", "$400.00")
        self.set_price("NVDA", "412.34")
        self.text_in("main tbody", "$412.34", timeout=5)
        self.shot("18-market-live")

        # The stock page's price follows; so do the prices and values of the portfolio.
        self.go("#/stock/NVDA")
        self.text_in("#stock-price", "412.34")
        self.set_price("NVDA", "415.00")
        self.text_in("#stock-price", "415.00", timeout=5)
        self.trade("buy", 2)
        self.text_in("#flash", "Bought 2 NVDA")
        self.go("#/portfolio")
        self.text_in("main tbody", "NVDA")
        self.text_in("#holdings-value", "$830.00")
        worth = self.find("#net-worth").text
        self.set_price("NVDA", "420.00")
        self.text_in("main tbody", "$840.00", timeout=5)
        # Net worth, holdings value and the gain follow, valued by the server.
        self.text_in("#holdings-value", "$840.00", timeout=5)
        self.wait(lambda d: self.find("#net-worth").text not in ("", worth), timeout=5)
        self.text_in("[data-figure='gain:NVDA']", "+$10.00", timeout=5)

        # An order that fills while another page is open raises a toast there.
        self.go("#/stock/NVDA")
        self.place_order("buy", "limit", 1, limit="410", tif="gtc")
        self.text_in("#flash", "placed")
        self.go("#/portfolio")
        self.set_price("NVDA", "409.00")
        self.text_in("#toasts", "Order to buy 1 NVDA filled at $409.00", timeout=5)
        self.text_in("main tbody", "Nvidia 3", timeout=5)
        self.shot("19-fill-toast")
        # The fill stays in Notifications after the toast is gone.
        self.go("#/notifications")
        self.text_in("#notices", "Order to buy 1 NVDA filled at $409.00")
        self.text_in("#notices", "Your limit order to buy 1 NVDA filled at $409.00 a share in your personal portfolio.")

        # A broadcast shows at once and raises the unread badge (the fallback poll is every 30 s).
        before = int(self.find("#unread").text or "0") if driver.find_element(By.ID, "unread").is_displayed() else 0
        self.admin_post("/api/admin/notifications", {"title": "Markets close early", "body": "The exchange closes at 1 pm."})
        self.text_in("#toasts", "Markets close early", timeout=5)
        self.text_in("#unread", str(before + 1), timeout=5)

        # The open league's leaderboard follows the prices.
        self.go("#/leagues")
        self.find("#league-name").send_keys("Live class")
        self.click("#create-league button[type='submit']")
        self.text_in("main tbody", erin)
        worth = self.table_texts(2)
        self.set_price("NVDA", "500.00")
        self.wait(lambda d: self.table_texts(2) not in ([], worth), timeout=10)
        self.shot("20-league-live")

        # A classmate joins below the rows shown and leaves again: the roster and the count
        # follow without a reload.
        self.text_in("#league-members", "1")
        code = self.find("#league-code").text
        classmate = f"ivan_{self.suffix}"
        token = call("/api/auth/register", {"username": classmate, "password": PASSWORD})["token"]
        call(f"/api/leagues/join/{code}", {}, token)
        self.text_in("main tbody", classmate, timeout=10)
        self.text_in("#league-members", "2", timeout=10)
        self.shot("21-league-joined-live")
        league = driver.execute_script("return location.hash.split('/')[2]")
        call(f"/api/leagues/leave/{league}", None, token, method="DELETE")
        self.wait(lambda d: classmate not in self.table_texts(1), timeout=10)
        self.text_in("#league-members", "1", timeout=10)

    def test_polling_without_socket(self):
        """A browser that cannot open the stream still sees an order fill, by polling."""
        driver, this = make_driver(), self.driver
        try:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.WebSocket;"})
            self.driver = driver
            self.go("")
            self.sign_in(f"frank_{self.suffix}", register=True)
            self.set_price("AMZN", "180.00")
            self.go("#/stock/AMZN")
            self.place_order("buy", "limit", 1, limit="175", tif="gtc")
            self.text_in("#flash", "placed")
            self.go("#/orders")
            self.text_in("#open-orders tbody", "AMZN")
            self.set_price("AMZN", "174.00")
            self.text_in("#order-history tbody", "Filled at $174.00", timeout=15)
        finally:
            self.driver = this
            driver.quit()

    def test_analytics_and_currencies(self):
        """The analytics page (value, returns, P&L by method, allocation, comparison) in
        dollars and in euros, and the currencies page's rates, converter and chart."""
        driver = self.driver
        self.fresh_session()
        self.sign_in(f"dora_{self.suffix}", register=True)
        self.set_price("KO", "50.00")
        self.go("#/stock/KO")
        self.text_in("#stock-price", "50.00")
        self.trade("buy", 10)
        self.text_in("#flash", "Bought 10")
        self.set_price("KO", "60.00")
        self.go("#/stock/KO")
        self.text_in("#stock-price", "60.00")
        self.trade("sell", 4)
        self.text_in("#flash", "Sold 4")

        self.go("#/analytics")
        self.text_in("#history-worth", "$")
        self.text_in("#returns", "Time-weighted return")
        self.text_in("#returns", "the market (equal-weighted)")
        # A benchmark the market does not trade is said in words; the box stays to change it.
        box = self.find("#benchmark")
        box.clear()
        box.send_keys("SPY")
        box.submit()
        self.text_in("#benchmark-unknown", "SPY is not traded in this market. Compare with “market”")
        box = self.find("#benchmark")
        box.clear()
        box.send_keys("market")
        box.submit()
        self.text_in("#returns", "the market (equal-weighted)")
        # A stock that does not exist: said so, with a way on, and no "Try again".
        self.go("#/stock/NOPE")
        self.text_in("#not-found", "No instrument has the symbol NOPE.")
        self.assertEqual(self.driver.find_elements(By.XPATH, "//button[text()='Try again']"), [])
        self.go("#/analytics")
        self.text_in("#history-worth", "$")
        # Sold 4 at 60 after buying 10 at 50: 40 realized, 6 × 10 unrealized, by any method here.
        self.text_in("#pnl-realized", "+$40.00")
        self.text_in("#pnl-unrealized", "+$60.00")
        self.text_in("#allocation-symbols", "KO")
        self.text_in("#allocation-symbols", "100.00%")
        self.text_in("#correlation", "AAPL")
        self.text_in("#correlation", "1.0000")
        # Bought and sold today: no daily returns yet, and the risk card says what it needs.
        self.text_in("#risk-none", "at least two days of returns")
        self.shot("21-analytics")
        driver.execute_script("document.querySelector('#pnl').scrollIntoView()")
        self.shot("21b-analytics-pnl")
        driver.execute_script("document.querySelector('#compare').scrollIntoView()")
        self.shot("21c-analytics-compare")
        self.click("#method-fifo")
        # Read in one go: the section redraws itself.
        self.wait(lambda d: d.execute_script("return document.querySelector('#method-fifo')?.getAttribute('aria-current')") == "page")
        self.text_in("#pnl-realized", "+$40.00")
        Select(self.find("#analytics-currency")).select_by_value("EUR")
        self.text_in("#history-worth", "€")
        self.text_in("#allocation", "€")
        self.shot("22-analytics-euros")

        self.go("#/fx")
        self.text_in("#fx-rates", "USD")
        self.text_in("#fx-rates-when", "Rates now, set")
        field = self.find("#fx-amount")
        field.clear()
        field.send_keys("100")
        Select(self.find("#fx-from")).select_by_value("USD")
        Select(self.find("#fx-to")).select_by_value("EUR")
        self.click("#fx-convert-button")
        self.text_in("#fx-result", "(the rate now, set")
        self.find("#fx-date").send_keys("03022020")  # 2020-03-02 in the date input's month-first order
        self.click("#fx-convert-button")
        # 100 / 1.1122, the ECB's dollar rate of that day.
        self.text_in("#fx-result", "100.00 USD = 89.91 EUR at 0.899119 (the reference rates of 2020-03-02)")
        self.find("#fx-chart canvas")
        self.shot("23-currencies")
        self.sign_out()

    def test_euro_league(self):
        """A host creates a league in euros with a spread: its league portfolio holds euros,
        a buy pays the dollar price at the rate plus the spread, the leaderboard counts in euros."""
        self.fresh_session()
        self.sign_in(f"hana_{self.suffix}", register=True)
        self.go("#/leagues")
        self.find("#league-name").send_keys("Euro class")
        Select(self.find("#league-mode")).select_by_value("isolated")
        Select(self.find("#league-currency")).select_by_value("EUR")
        self.find("#rule-fx-spread").send_keys("1")
        self.find("#rule-commission-flat").send_keys("2")
        self.click("#create-league button[type=submit]")
        self.text_in("#flash", "League “Euro class” created")
        self.text_in("#league-currency-rule", "EUR: dollar stocks at the rate now, 1.00% over it for buys")
        self.text_in("main tbody", "€100,000.00")
        self.shot("26-euro-league")

        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Euro class")
        field = self.find("#trade-quantity")
        field.clear()
        field.send_keys("2")
        self.text_in("#trade-estimate", "Paid in EUR at the rate now, with the league's spread.")
        self.click("#trade-confirm")
        # The confirmation names the portfolio and the commission paid.
        self.text_in("#flash", "EUR a dollar) in the league “Euro class”: €")
        self.text_in("#flash", "commission €2.00 included")
        self.text_in("#flash", "Cash now €")
        self.text_in("#position", "You hold 2 shares in the league “Euro class”.")

        self.go("#/portfolio")
        Select(self.find("#portfolio-select")).select_by_visible_text("League: Euro class")
        self.text_in("#portfolio-currency", "This league portfolio holds EUR")
        self.text_in("#net-worth", "€")
        self.text_in("main tbody", "AAPL")
        self.text_in("main tbody", "€")
        self.shot("27-euro-portfolio")
        # From the league's holding, the next trade starts in the league's portfolio.
        self.click("main tbody a")
        self.text_in("#stock-symbol", "AAPL")
        self.click("#sell")
        self.assertEqual(Select(self.find("#trade-portfolio")).first_selected_option.text, "League: Euro class")
        self.click("#trade-dialog-cancel")
        self.sign_out()

    def test_market_period(self):
        """The demo history ends on the last trading day before today, a chart says which
        days it shows, and a practice portfolio's start day is one with prices."""
        driver = self.driver
        self.fresh_session()
        self.sign_in(f"kiri_{self.suffix}", register=True)
        span = call("/api/market/clock", token=login(*ADMIN))["history"]
        through = datetime.date.fromisoformat(span["through"])
        lag = (datetime.datetime.now(datetime.timezone.utc).date() - through).days
        self.assertTrue(1 <= lag <= 5, f"the history ends {lag} days ago ({through})")

        def in_words(day):
            return driver.execute_script(
                "const [y, m, d] = arguments[0].split('-').map(Number);"
                "return new Date(y, m - 1, d).toLocaleDateString(undefined, {year: 'numeric', month: 'short', day: 'numeric'})", day)
        self.go("#/stock/AAPL")
        self.text_in("#chart-span", f"to {in_words(span['through'])}.")
        self.click("[data-range='5y']")
        # Five years asked, three there: the caption says which.
        self.text_in("#chart-span", f"Daily closes from {in_words(span['from'])} to {in_words(span['through'])}.")
        self.shot("26-chart-period")

        self.go("#/portfolio")
        self.text_in("#practice-start-hint", f"Prices from {in_words(span['from'])} to {in_words(span['through'])}")
        start = self.find("#practice-start")
        self.assertEqual((start.get_attribute("min"), start.get_attribute("max")), (span["from"], span["through"]))
        self.find("#practice-name").send_keys("Too early")
        before = (datetime.date.fromisoformat(span["from"]) - datetime.timedelta(days=30)).isoformat()
        start.send_keys(month_first(before))
        self.click("#practice-create")
        self.text_in("#practice-status", f"Choose a start day with prices: from {in_words(span['from'])} to {in_words(span['through'])}.")
        # Left empty, it starts on the history's first day: a back-dated buy is in order.
        start.clear()
        self.click("#practice-create")
        self.text_in("#flash", "Practice portfolio “Too early” created")
        practice = driver.execute_script("return new URLSearchParams(location.hash.split('?')[1]).get('id')")
        # The trade dialog trades a practice portfolio on a past day, at its close.
        self.go(f"#/stock/AAPL?portfolio={practice}")
        self.click("#buy")
        self.assertEqual(Select(self.find("#trade-portfolio")).first_selected_option.text, "Practice: Too early")
        field = self.find("#trade-quantity")
        field.clear()
        field.send_keys("3")
        self.find("#trade-day").send_keys(month_first(moved("2019-01-02")))
        self.text_in("#trade-estimate", "Fills at the close of")
        self.shot("27-backdated-trade")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 3 AAPL at $")
        self.text_in("#flash", "in the practice portfolio “Too early”")
        trades = call(f"/api/transactions?portfolioId={practice}", token=driver.execute_script("return sessionStorage.getItem('mockstock.token')"))
        self.assertEqual([t["createdAt"][:10] for t in trades["items"]], [moved("2019-01-02")])
        # Another portfolio offers no past day.
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("Personal portfolio")
        self.assertFalse(self.driver.find_element(By.ID, "trade-day-row").is_displayed())
        self.click("#trade-dialog-cancel")
        self.sign_out()

    def test_practice_portfolio(self):
        """Creating a practice portfolio that starts on a past day, importing a broker's trades
        (a bad file refused by line), deposits and a refused withdrawal, its CSV, its
        analytics in its own currency, and deleting it."""
        driver = self.driver
        self.fresh_session()
        self.sign_in(f"gina_{self.suffix}", register=True)
        self.go("#/portfolio")
        self.find("#practice-form")
        self.find("#practice-name").send_keys("Replay 2021")
        field = self.find("#practice-cash")
        field.clear()
        field.send_keys("5000")
        Select(self.find("#practice-currency")).select_by_value("EUR")
        self.find("#practice-start").send_keys(month_first(moved("2021-01-04")))
        self.click("#practice-create")
        self.text_in("#flash", "Practice portfolio “Replay 2021” created with $5,000.00.")
        self.text_in("#cash", "$5,000.00")
        self.text_in("#portfolio-select", "Practice: Replay 2021")
        # Kept in dollars, its worth in its own currency is said too.
        self.text_in("#portfolio-base", "Kept in dollars, like the stocks it holds: worth €")
        self.text_in("#portfolio-base", "Its analytics are in EUR.")

        # A broker's file: a bad side on line 3 refuses all of it; the fixed file trades.
        def csv_file(name, text):
            path = os.path.join(SCREENSHOTS, name)
            with open(path, "w") as out:
                out.write(text)
            return path
        header = f"date,symbol,side,quantity,price,fee\n{moved('2021-01-05')},AAPL,buy,10,131.01,1\n"
        self.find("#import-file").send_keys(csv_file("import-bad.csv", header + f"{moved('2021-01-06')},AAPL,hold,4,126.60,0\n"))
        self.click("#import-submit")
        self.text_in("#practice-status", "Line 3: side must be buy or sell.")
        self.text_in("#cash", "$5,000.00")
        self.driver.execute_script("document.querySelector('#practice-status').scrollIntoView({block: 'center'})")
        self.shot("25-practice-import-refused")
        self.find("#import-file").send_keys(csv_file("import-good.csv", header + f"{moved('2021-01-06')},AAPL,sell,4,126.60,0\n"))
        self.click("#import-submit")
        self.text_in("#flash", "Imported 2 trades from import-good.csv.")
        # 5000 − 1310.10 − 1 + 506.40, and the 6 shares left earned February's 0.205 a share.
        self.text_in("#cash", "$4,196.53")
        self.text_in("main tbody", "AAPL")

        self.find("#cash-amount").send_keys("250")
        self.click("#cash-submit")
        self.text_in("#flash", "Deposited $250.00.")
        self.text_in("#cash", "$4,446.53")
        self.find("#cash-amount").send_keys("-10000")
        self.click("#cash-submit")
        self.text_in("#practice-status", "not enough cash free")
        self.click("#practice-export")
        self.text_in("#practice-status", "Downloaded portfolio-")
        self.shot("24-practice-portfolio")

        practice = driver.execute_script("return new URLSearchParams(location.hash.split('?')[1]).get('id')")
        self.go(f"#/analytics?id={practice}")
        self.text_in("#history-worth", "€")
        self.wait(lambda d: d.execute_script("return document.querySelector('#analytics-currency')?.value") == "EUR")
        # Held since 2021: the risk card has the server's figures over every day since.
        self.text_in("#risk", "daily returns, against the market")
        for figure in ("#risk-volatility", "#risk-drawdown"):
            self.wait(lambda d, f=figure: re.fullmatch(r"\d+\.\d{2}%", d.find_element(By.CSS_SELECTOR, f).text.strip()))
        for figure in ("#risk-sharpe", "#risk-sortino", "#risk-beta"):
            self.wait(lambda d, f=figure: re.fullmatch(r"−?\d+\.\d{2}", d.find_element(By.CSS_SELECTOR, f).text.strip()))
        driver.execute_script("document.querySelector('#risk').scrollIntoView()")
        self.shot("24b-practice-risk")

        self.go(f"#/portfolio?id={practice}")
        self.click("#practice-delete")
        self.wait(EC.alert_is_present()).accept()
        self.text_in("#flash", "Practice portfolio “Replay 2021” deleted.")
        # Only the personal portfolio is left: no switcher.
        self.wait(lambda d: d.execute_script("return document.querySelector('#practice') !== null && document.querySelector('#portfolio-select') === null"))
        self.sign_out()

    def test_orders(self):
        """Placing, seeing and cancelling a limit order, seeing one fill after a price move,
        and a league with house rules."""
        self.fresh_session()
        self.sign_in(f"carol_{self.suffix}", register=True)
        self.set_price("MSFT", "300.00")
        self.go("#/stock/MSFT")
        self.text_in("#stock-price", "300.00")

        # A limit buy below the price rests and holds back its cash.
        self.place_order("buy", "limit", 3, limit="250", tif="gtc", holds="$750.00 of cash, commission included")
        self.text_in("#flash", "Buy 3 MSFT (Limit $250.00): placed")
        self.go("#/portfolio")
        self.text_in("#reserved", "$750.00 held for open orders")
        self.text_in("#buying-power", "$9,250.00")
        self.go("#/orders")
        self.text_in("#open-orders tbody", "Limit $250.00")
        self.assertEqual(self.table_texts(1), ["MSFT"])
        self.shot("12-orders")

        # Cancelling it, after confirming, releases the cash.
        self.click("#open-orders button[data-cancel]")
        self.wait(EC.alert_is_present()).accept()
        self.text_in("#open-orders", "No open orders")
        self.text_in("#order-history tbody", "Cancelled")
        self.go("#/portfolio")
        self.text_in("#buying-power", "$10,000.00")

        # Another one fills when the price falls to its limit; the open orders page
        # notices by itself.
        self.go("#/stock/MSFT")
        self.place_order("buy", "limit", 2, limit="250", tif="day")
        self.text_in("#flash", "placed")
        self.go("#/orders")
        self.text_in("#open-orders tbody", "MSFT")
        self.set_price("MSFT", "249.50")
        self.text_in("#order-history tbody", "Filled at $249.50", timeout=20)
        self.text_in("#open-orders", "No open orders")
        self.shot("13-order-filled")
        self.go("#/portfolio")
        self.text_in("main tbody", "MSFT")

        # A dividend dated today reaches the two shares held; the history shows it with the trades.
        today = time.strftime("%Y-%m-%d", time.gmtime())
        self.admin_post("/api/admin/corporate-actions", {"symbol": "MSFT", "kind": "dividend", "exDate": today, "amount": "0.56"})
        deadline = time.monotonic() + 25
        while True:
            self.go(f"#/transactions?view=activity&t={time.monotonic()}")
            self.find("#activities")
            if "Dividend" in self.find("#activities").text or time.monotonic() > deadline:
                break
            time.sleep(1)
        self.text_in("#activities", "Dividend")
        self.text_in("#activities", "+$1.12")
        self.text_in("#activities", "Bought")
        self.shot("17-history-everything")

        # A stop order on the ticket shows its stop price field; a refusal is in words.
        self.go("#/stock/MSFT")
        self.place_order("sell", "stop", 5, stop="200")
        self.text_in("#order-error", "does not hold that many shares")
        self.text_in("#order-explain", "does not hold that many shares")
        self.shot("16-order-refused")
        self.click("#order-form .actions button[type='button']")

        # A trailing stop: the ticket takes a trail in percent; the open order shows its stop
        # (2 % under MSFT's 249.50 since placing: 244.51).
        self.place_order("sell", "trailing_stop", 2, trail="2%", tif="gtc", holds="2 shares",
                         before_confirm=lambda: (self.text_in("#order-explain", "The stop follows the highest price since placing"),
                                                 self.shot("16b-order-trailing")))
        self.text_in("#flash", "placed")
        self.go("#/orders")
        self.text_in("#open-orders tbody", "Trailing 2%, stop $244.51")
        self.shot_of("16c-order-trailing-open", "#open-orders")
        # The history says what made each fill: the limit order's.
        self.go("#/transactions")
        self.text_in("main tbody", "Order")
        self.shot("16d-history-how")

        # A bracket: a market buy with a take-profit and a stop-loss, which open once it fills.
        self.go("#/stock/MSFT")
        self.click("#order")
        Select(self.find("#order-side")).select_by_value("buy")
        Select(self.find("#order-type")).select_by_value("market")
        quantity = self.find("#order-quantity")
        quantity.clear()
        quantity.send_keys("2")
        Select(self.find("#order-class")).select_by_value("bracket")
        self.find("#order-take-profit").send_keys("260")
        self.find("#order-stop-loss").send_keys("240")
        self.text_in("#order-explain", "sold at the take-profit or the stop-loss, whichever comes first")
        self.shot("16g-order-bracket")
        self.click("#order-confirm")
        self.text_in("#flash", "Its exits are under Orders.")
        self.go("#/orders")
        self.text_in("#open-orders tbody", "Take-profit: limit $260.00")
        self.text_in("#open-orders tbody", "Stop-loss: stop $240.00")
        self.shot_of("16h-order-bracket-exits", "#open-orders")
        # The price reaches the take-profit: it sells, and the stop-loss is cancelled with it.
        self.set_price("MSFT", "261.00")
        self.text_in("#order-history tbody", "Filled at $261.00", timeout=20)
        self.text_in("#order-history tbody", "The other leg filled.")

        # A league with house rules shows them.
        self.go("#/leagues")
        self.find("#league-name").send_keys("Rules class")
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.find("#rule-commission-flat").send_keys("1")
        self.find("#rule-max-position").send_keys("20")
        self.click("#rule-type-stop")
        self.click("#rule-type-stop_limit")
        self.click("#rule-shorts")
        self.find("#rule-margin").send_keys("200")
        self.shot("14-league-rules-form")
        # An amount typed as people write it is explained in words, not the browser's "match the format".
        cash = self.find("#league-cash")
        cash.clear()
        cash.send_keys("$100,000")
        self.click("#create-league button[type='submit']")
        self.text_in("#create-league .error", "Starting cash: enter a plain amount such as 2500 or 2500.50")
        cash.clear()
        cash.send_keys("100000")
        self.click("#create-league button[type='submit']")
        self.text_in("#rules", "$1.00")
        self.text_in("#rules", "20.00% of net worth")
        self.text_in("#rules", "market, limit")
        self.text_in("#rules", "allowed (margin 200.00%)")
        self.text_in("#league-fills-rule", "at the last price")
        self.text_in("#league-margin-rule", "cash only")
        self.shot("15-league-rules")

        # The realistic preset fills in the fills and margin; the league page says them in words.
        self.go("#/leagues")
        self.find("#league-name").send_keys("Realistic class")
        Select(self.find("#league-mode")).select_by_value("isolated")
        Select(self.find("#rule-preset")).select_by_value("realistic")
        self.assertEqual(self.find("#rule-fill-price").get_attribute("value"), "quote")
        self.assertEqual(self.find("#rule-spread-bps").get_attribute("value"), "10")
        self.assertEqual(self.find("#rule-margin-percent").get_attribute("value"), "50")
        self.assertEqual(self.find("#rule-volume-cap").get_attribute("value"), "2.5")
        # A preset is a start: the host changes the debit rate.
        debit = self.find("#rule-debit-rate")
        debit.clear()
        debit.send_keys("6")
        self.shot_of("15b-league-realism-form", "#league-realism")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#league-fills-rule", "at the ask and the bid, 10 basis points apart")
        self.text_in("#league-fills-rule", "impact 0.1")
        self.text_in("#league-fills-rule", "at most 2.5% of yesterday's volume a day in each symbol")
        self.text_in("#rules", "buy from $5.00")
        self.text_in("#league-margin-rule", "buys may borrow: 50.00% of the positions paid in equity")
        self.text_in("#league-margin-rule", "below 25.00% at a close is a margin call")
        self.text_in("#league-interest-rule", "6.00% a year on borrowed cash; 3.00% a year on shorts, charged at each close")
        self.shot_of("15c-league-realistic-rules", "#rules")

        # Its volume cap: a stock that traded 400 shares yesterday fills 2.5 % of that, 10
        # shares a day; an order of 25 fills 10 and waits, and the orders page says so.
        league_id = self.driver.current_url.rsplit("/", 1)[1]
        token = login(f"carol_{self.suffix}", PASSWORD)
        portfolio = next(p["id"] for p in call("/api/portfolios", token=token) if str(p.get("leagueId")) == league_id)
        symbol = f"CQ{self.suffix[:4].upper()}"
        admin = login(*ADMIN)
        call("/api/admin/instruments", [{"symbol": symbol, "name": "Capped Quarry Inc."}], admin, method="PUT")
        yesterday = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)).strftime("%Y-%m-%d")
        bar = f"symbol,date,open,high,low,close,volume\n{symbol},{yesterday},20,20,20,20,400\n".encode()
        request = urllib.request.Request(f"{BASE}/api/admin/prices", data=bar, method="POST",
                                         headers={"Content-Type": "text/csv", "Authorization": f"Bearer {admin}"})
        urllib.request.urlopen(request, timeout=10).read()
        self.set_price(symbol, "20.00")
        placed = call("/api/orders", {"symbol": symbol, "side": "buy", "quantity": 25, "type": "limit", "limitPrice": "21",
                                      "timeInForce": "gtc", "portfolioId": portfolio}, token)
        self.assertEqual((placed["status"], placed["filledQuantity"]), ("partially_filled", 10))
        self.go(f"#/orders?id={portfolio}")
        self.text_in("#open-orders tbody", "10 of 25 filled")
        self.shot_of("16e-order-partly-filled", "#open-orders")
        # Cancelled, it says how much had filled, at what price (the ask, 10 basis points over 20).
        self.click("#open-orders button[data-cancel]")
        self.wait(EC.alert_is_present()).accept()
        self.text_in("#order-history tbody", "Cancelled (10 of 25 filled at $20.01)")
        # Its part is no order of its own: the history holds that one order alone.
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#order-history tbody tr")), 1)
        self.shot_of("16f-order-partly-filled-closed", "#order-history")


    def test_league_host(self):
        """A host who does not play: a league created with resets allowed, its settings
        changed (an end in the past refused in the server's words), trading frozen with a
        reason — a member sees the banner and a trade refused in the server's words, then
        trading resumed while the member's page is open — a member's portfolio reset by the
        host (once from the standings, once while the member looks at it), and the member's
        own resets until none are left."""
        driver = self.driver
        self.fresh_session()
        tess, uma = f"tess_{self.suffix}", f"uma_{self.suffix}"
        self.sign_in(tess, register=True)
        self.go("#/leagues")
        # Resets are for isolated leagues: the field shows once that mode is chosen.
        self.find("#league-name").send_keys("Host class")
        self.assertFalse(driver.find_element(By.ID, "league-resets").is_displayed())
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.find("#league-resets").send_keys("2")
        self.click("#league-host-only")
        self.shot_of("33-league-host-create", "#league-resets")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", "League “Host class” created")
        # Hosting without a seat: not ranked, nothing to leave (deleting ends it), no resets of one's own.
        self.text_in("#host-seat", "You host this league without playing")
        self.text_in("#standings", "No members.")
        self.text_in("#league-members", "0")
        self.text_in("#trading-state", "Open")
        self.assertEqual(driver.find_elements(By.ID, "leave-league"), [])
        self.find("#delete-league")
        self.assertEqual(driver.find_elements(By.ID, "my-resets"), [])
        league_url = driver.current_url
        league = league_url.rsplit("/", 1)[1]
        code = self.find("#league-code").text
        # The league is in the host's list, marked as theirs.
        self.go("#/leagues")
        self.text_in("main tbody", "Host class host, not playing")
        driver.get(league_url)

        # A member joins; the host sees them without a reload, with their count of resets.
        registered = call("/api/auth/register", {"username": uma, "password": PASSWORD})
        member, member_id = registered["token"], registered["user"]["id"]
        call(f"/api/leagues/join/{code}", {}, member)
        self.wait(lambda d: [[r[1], r[4]] for r in self.rows("#standings")] == [[uma, "0"]], timeout=10)
        self.text_in("#league-members", "1")

        # Settings: an end in the past is refused in the server's words; then a name, an
        # end, a late-join window and a cap are saved.
        now = datetime.datetime.now().replace(second=0, microsecond=0)
        name = self.find("#settings-name")
        name.clear()
        name.send_keys("Host class 7B")
        self.find("#settings-max").send_keys("30")
        self.type_when("#settings-ends", now - datetime.timedelta(days=2))
        self.click_centered("#settings-save")
        self.text_in("#settings-error", "endsAt must be in the future")
        self.assertEqual(self.find("main h1").text, "Host class")
        ends = now + datetime.timedelta(days=60)
        self.type_when("#settings-ends", ends)
        self.type_when("#settings-join-until", now + datetime.timedelta(days=7))
        self.click_centered("#settings-save")
        self.text_in("#flash", "Settings of “Host class 7B” saved.")
        self.text_in("main h1", "Host class 7B")
        self.text_in("#league-members", "1 of 30")
        self.text_in("#league-runs", str(ends.year))
        self.text_in("#league-join-until", "Joins until")
        self.assertEqual(self.find("#settings-max").get_attribute("value"), "30")

        # Trading frozen with a reason: the host's tools and the banner say so.
        self.find("#freeze-reason").send_keys("Quiz on Friday: trading stops until then")
        self.click_centered("#freeze-button")
        self.text_in("#flash", "Trading in “Host class 7B” is frozen; its members are told.")
        self.text_in("#trading-state", "Frozen: “Quiz on Friday: trading stops until then”")
        self.text_in("#frozen-banner", "Trading is frozen. The host says: “Quiz on Friday: trading stops until then”")
        self.find("#unfreeze-button")
        self.shot_of("34-league-host-frozen", "#host")

        # The host resets the member's portfolio, after a confirmation (declined once).
        self.click_centered(f"button[data-reset='{uma}']")
        self.wait(EC.alert_is_present()).dismiss()
        self.assertEqual([r[4] for r in self.rows("#standings")], ["0"])
        self.click_centered(f"button[data-reset='{uma}']")
        self.accept(f"Reset {uma}'s league portfolio in “Host class 7B”?", "starts again with $100,000.00")
        self.text_in("#flash", f"{uma}'s league portfolio starts again with $100,000.00 (reset 1 time so far).")
        self.wait(lambda d: [r[4] for r in self.rows("#standings")] == ["1"])
        self.shot_of("35-league-host-standings", "#standings")
        self.sign_out()

        # The member sees the banner with the reason, and the resets so far (the host's counted).
        self.sign_in(uma)
        driver.get(league_url)
        self.text_in("#frozen-banner", "The host says: “Quiz on Friday: trading stops until then”")
        self.text_in("#my-resets-allowed", "2")
        self.text_in("#my-resets-used", "1")
        self.assertEqual(driver.find_elements(By.ID, "host"), [])
        self.shot_of("36-league-member-frozen", "#frozen-banner")
        # A trade in the league's portfolio is refused in words naming the league and the host's reason.
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Host class 7B")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#trade-error", "Trading in “Host class 7B” is frozen by its host. The host says: “Quiz on Friday: trading stops until then”. "
                     "Open orders wait and may still be cancelled")
        self.shot("37-trade-frozen")
        self.click("#trade-dialog-cancel")

        # Trading resumes while the member's league page is open: the banner goes by itself.
        driver.get(league_url)
        self.find("#frozen-banner")
        call(f"/api/leagues/{league}/unfreeze", {}, login(tess, PASSWORD))
        self.text_in("#toasts", "Trading resumed", timeout=10)
        self.wait(lambda d: not d.find_elements(By.ID, "frozen-banner"), timeout=10)
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Host class 7B")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 1 AAPL at")
        self.text_in("#flash", "in the league “Host class 7B”")

        # The host resets it while the member looks at it: the page moves to the new one,
        # which holds no shares.
        self.go("#/portfolio")
        Select(self.find("#portfolio-select")).select_by_visible_text("League: Host class 7B")
        self.text_in("main tbody", "AAPL")
        call(f"/api/leagues/{league}/members/{member_id}/reset", {}, login(tess, PASSWORD))
        self.text_in("#flash", "Your league portfolio “Host class 7B” was reset: here is the new one.", timeout=10)
        self.text_in("main section.grow", "No shares yet.")
        self.assertEqual(Select(self.find("#portfolio-select")).first_selected_option.text, "League: Host class 7B")

        # The member resets their own: the next trade starts in the new league portfolio.
        driver.get(league_url)
        self.text_in("#my-resets-used", "2")
        self.click_centered("#reset-mine")
        self.accept("Reset your league portfolio in “Host class 7B”?")
        self.text_in("#flash", "Your league portfolio in “Host class 7B” starts again with $100,000.00.")
        self.text_in("#my-resets-used", "3")
        self.go("#/stock/AAPL")
        self.text_in("#position", "You hold no AAPL shares.")
        self.click("#buy")
        self.assertEqual(Select(self.find("#trade-portfolio")).first_selected_option.text, "League: Host class 7B")
        self.click("#trade-dialog-cancel")
        # The host's resets are not the member's: one more of their own, then none is left.
        driver.get(league_url)
        self.click_centered("#reset-mine")
        self.accept()
        self.text_in("#my-resets-used", "4")
        self.click_centered("#reset-mine")
        self.accept()
        self.text_in("#my-reset-error", "You have used the 2 resets this league allows.")
        self.text_in("#my-resets-used", "4")
        self.shot_of("38-league-no-resets-left", "#my-resets")
        self.sign_out()

    def test_league_journal_and_news(self):
        """A league that asks for a journal note: the note marked required in the trade and
        order dialogs and a trade without one refused in the server's words; news posted by
        the host and seen by a member, live; the journal read by the member (their own) and
        by the host (everyone's, or one member's); the requirement lifted in the settings."""
        driver = self.driver
        self.fresh_session()
        wes, xia = f"wes_{self.suffix}", f"xia_{self.suffix}"
        self.sign_in(wes, register=True)
        self.go("#/leagues")
        self.find("#league-name").send_keys("Journal class")
        self.assertFalse(driver.find_element(By.ID, "league-journal").is_displayed())
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.click("#league-journal")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", "League “Journal class” created")
        self.text_in("#league-journal-rule", "a note on every trade and order")
        self.assertTrue(self.find("#settings-journal").is_selected())
        league_url = driver.current_url
        league = league_url.rsplit("/", 1)[1]
        code = self.find("#league-code").text

        # The host posts news; it is listed, newest first.
        self.text_in("#news-list-empty", "No news yet: post the first for your members.")
        self.click_centered("#news-post summary")
        self.find("#news-title").send_keys("Welcome")
        self.find("#news-body").send_keys("Trade with care.\nSay why in a note.")
        self.click_centered("#news-form button[type='submit']")
        self.text_in("#flash", "News “Welcome” posted; every member is notified.")
        self.text_in("#news-list", "Welcome")
        self.text_in("#news-list", "Say why in a note.")
        self.assertEqual(self.find("#news-title").get_attribute("value"), "")

        # The host plays too: in the league portfolio the note is required, and a buy without
        # one is refused in the server's words; with one it trades. Elsewhere it is optional.
        self.go("#/stock/AAPL")
        self.click("#buy")
        self.text_in("#trade-note-need", "(optional)")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Journal class")
        self.text_in("#trade-note-need", "(required in this league)")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#trade-error", "This league asks for a journal note on every order and trade")
        self.shot("39-trade-note-required")
        self.find("#trade-note").send_keys("Steady earnings, fair price")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 1 AAPL")
        self.text_in("#flash", "in the league “Journal class”")
        # The order ticket asks too, and places the order with its note.
        self.click("#order")
        Select(self.find("#order-portfolio")).select_by_visible_text("League: Journal class")
        self.text_in("#order-note-need", "(required in this league)")
        Select(self.find("#order-type")).select_by_value("limit")
        self.find("#order-limit").send_keys("100")
        self.text_in("#order-explain", "This league asks for a journal note")
        self.find("#order-note").send_keys("Buy more if it dips to 100")
        self.text_in("#order-explain", "While open it holds back $100.00")
        self.click("#order-confirm")
        self.text_in("#flash", "placed")
        self.sign_out()

        # A member reads the news, and sees new news arrive while the league page is open.
        registered = call("/api/auth/register", {"username": xia, "password": PASSWORD})
        call(f"/api/leagues/join/{code}", {}, registered["token"])
        self.sign_in(xia)
        driver.get(league_url)
        self.text_in("#news-list", "Trade with care.")
        self.assertEqual(driver.find_elements(By.ID, "news-form"), [])
        self.text_in("#journal-title", "Your trade journal")
        self.text_in("#journal-list-empty", "No notes yet")
        call(f"/api/leagues/{league}/news", {"title": "Exam week", "body": "Trading stays open."}, login(wes, PASSWORD))
        self.text_in("#toasts", "Journal class: Exam week", timeout=10)
        self.wait(lambda d: d.execute_script(
            "return [...document.querySelectorAll('#news-list h3')].map((e) => e.textContent)") == ["Exam week", "Welcome"], timeout=10)
        self.assertFalse(driver.find_element(By.ID, "news-list-older").is_displayed())
        self.shot_of("40-league-news", "#news")
        # Five at a time: four more, and the oldest is one "Older news" away.
        for number in range(1, 5):
            call(f"/api/leagues/{league}/news", {"title": f"Tip {number}", "body": "Diversify."}, login(wes, PASSWORD))
        headlines = "return [...document.querySelectorAll('#news-list h3')].map((e) => e.textContent)"
        self.wait(lambda d: d.execute_script(headlines) == ["Tip 4", "Tip 3", "Tip 2", "Tip 1", "Exam week"], timeout=10)
        self.click_centered("#news-list-older")
        self.wait(lambda d: d.execute_script(headlines)[-2:] == ["Exam week", "Welcome"])
        self.assertFalse(driver.find_element(By.ID, "news-list-older").is_displayed())
        # Their own trade with a note shows in their journal, and only theirs.
        self.go("#/stock/MSFT")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Journal class")
        self.find("#trade-note").send_keys("Cloud growth")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 1 MSFT")
        driver.get(league_url)
        self.text_in("#journal-list", "Cloud growth")
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#journal-list li")), 1)
        self.text_in("#journal-list", "Buy 1 MSFT")
        self.sign_out()

        # The host reads everyone's notes, newest first, or one member's.
        self.sign_in(wes)
        driver.get(league_url)
        self.wait(lambda d: d.execute_script(
            "return [...document.querySelectorAll('#journal-list .note')].map((e) => e.textContent)")
            == ["Cloud growth", "Buy more if it dips to 100", "Steady earnings, fair price"])
        self.text_in("#journal-list", f"{xia} · Buy 1 MSFT")
        self.shot_of("41-league-journal", "#journal")
        Select(self.find("#journal-member")).select_by_visible_text(xia)
        self.wait(lambda d: d.execute_script(
            "return [...document.querySelectorAll('#journal-list .note')].map((e) => e.textContent)") == ["Cloud growth"])

        # Lifted: the rules say notes are optional, and a trade without one goes through.
        self.click("#settings-journal")
        self.click_centered("#settings-save")
        self.text_in("#flash", "Settings of “Journal class” saved.")
        self.text_in("#league-journal-rule", "notes optional")
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Journal class")
        self.text_in("#trade-note-need", "(optional)")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 1 AAPL")
        self.sign_out()

    def test_league_ranking(self):
        """Standings ranked another way: the risk columns ("—" in a fresh league, excess
        return against the league's benchmark), the Rank by switch reordering the table for
        the viewer only (kept by a reload, re-read when standings arrive), the host's order
        and benchmark in the settings (an unknown symbol refused in the server's words), the
        new order the members' default, and the gradebook downloaded as a file."""
        driver = self.driver
        self.fresh_session()
        kim, lou = f"kim_{self.suffix}", f"lou_{self.suffix}"
        downloads = os.path.abspath(os.path.join(SCREENSHOTS, "downloads"))
        os.makedirs(downloads, exist_ok=True)
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        self.sign_in(kim, register=True)
        self.go("#/leagues")
        self.find("#league-name").send_keys("Ranked class")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", "League “Ranked class” created")
        league_url = driver.current_url
        league = league_url.rsplit("/", 1)[1]
        code = self.find("#league-code").text

        # Two members whose orders differ: kim is given another $100,000 (money paid in,
        # no return), lou buys JNJ, whose price then rises (a return on less money).
        registered = call("/api/auth/register", {"username": lou, "password": PASSWORD})
        lou_token = registered["token"]
        call(f"/api/leagues/join/{code}", {}, lou_token)
        kim_id = call("/api/auth/login", {"username": kim, "password": PASSWORD})["user"]["id"]
        self.admin_post(f"/api/admin/users/{kim_id}/funds", {"amount": "100000.00"})
        self.set_price("JNJ", "150.00")
        call("/api/stock/buy", {"symbol": "JNJ", "amount": 10}, lou_token)
        self.set_price("JNJ", "180.00")

        # The league's order, net worth, is the default and marked as such; a fresh league
        # has no risk figures yet, and says what excess return is measured against.
        driver.get(league_url)
        self.wait(lambda d: self.column_of("#standings", "Player") == [kim, lou])
        rank_by = Select(self.find("#rank-by"))
        self.assertEqual(rank_by.first_selected_option.text, "Net worth (league's order)")
        self.text_in("#rank-note", "Ranked by net worth, the league's order.")
        for title in ("Sharpe", "Sortino", "Drawdown", "Excess vs market"):
            self.assertEqual(self.column_of("#standings", title), ["—", "—"], title)
        self.text_in("#risk-note", "Excess return is measured against the market (equal-weighted).")
        self.shot_of("42-league-ranking", "#board-heading")

        # By return, for this viewer only: lou first, ranked 1 by the server.
        rank_by.select_by_value("return")
        self.wait(lambda d: self.column_of("#standings", "Player") == [lou, kim])
        self.assertEqual(self.column_of("#standings", "Rank"), ["1", "2"])
        self.text_in("#rank-note", "Ranked by return for you; the league ranks by net worth.")
        self.assertIn("rankBy=return", driver.current_url)
        self.shot_of("43-league-by-return", "#board-heading")
        # Standings arriving on the stream (in the league's order) read the page again in this one.
        gain = self.column_of("#standings", "Return")[0]
        self.set_price("JNJ", "200.00")
        self.wait(lambda d: (self.column_of("#standings", "Return") or [""])[0] not in ("", gain), timeout=10)
        self.assertEqual(self.column_of("#standings", "Player"), [lou, kim])
        # A reload keeps it; the league's order brings the default back.
        driver.refresh()
        self.wait(lambda d: self.column_of("#standings", "Player") == [lou, kim])
        self.assertEqual(Select(self.find("#rank-by")).first_selected_option.get_attribute("value"), "return")
        Select(self.find("#rank-by")).select_by_value("netWorth")
        self.wait(lambda d: self.column_of("#standings", "Player") == [kim, lou])
        self.text_in("#rank-note", "Ranked by net worth, the league's order.")
        self.assertNotIn("rankBy", driver.current_url)

        # The host's settings: an unknown benchmark is refused in the server's words; then the
        # league ranks by return against AAPL.
        benchmark = self.find("#settings-benchmark")
        self.assertEqual(benchmark.get_attribute("value"), "market")
        benchmark.clear()
        benchmark.send_keys("NOPE")
        self.click_centered("#settings-save")
        self.text_in("#settings-error", "No instrument has the symbol NOPE.")
        self.text_in("#risk-note", "the market (equal-weighted)")
        benchmark = self.find("#settings-benchmark")
        benchmark.clear()
        benchmark.send_keys("aapl")
        Select(self.find("#settings-rank-by")).select_by_value("return")
        self.click_centered("#settings-save")
        self.text_in("#flash", "Settings of “Ranked class” saved.")
        self.wait(lambda d: self.column_of("#standings", "Player") == [lou, kim])
        self.assertEqual(Select(self.find("#rank-by")).first_selected_option.text, "Return (league's order)")
        self.text_in("#rank-note", "Ranked by return, the league's order.")
        self.text_in("#risk-benchmark", "AAPL")
        self.assertEqual(self.column_of("#standings", "Excess vs AAPL"), ["—", "—"])
        self.assertEqual(self.find("#settings-benchmark").get_attribute("value"), "AAPL")
        self.shot_of("44-league-host-ranking", "#league-settings")

        # The gradebook: a file named as the server says, one row per member in the league's order.
        saved = os.path.join(downloads, f"league-{league}-gradebook.csv")
        if os.path.exists(saved):
            os.remove(saved)
        self.click_centered("#gradebook-download")
        self.text_in("#gradebook-status", f"Downloaded league-{league}-gradebook.csv.")
        self.wait(lambda d: os.path.exists(saved) and not any(n.endswith(".crdownload") for n in os.listdir(downloads)), timeout=10)
        with open(saved, encoding="utf-8") as file:
            lines = file.read().splitlines()
        self.assertEqual(lines[0], "rank,username,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt")
        self.assertEqual([line.split(",")[:2] for line in lines[1:]], [["1", lou], ["2", kim]])
        self.shot_of("45-league-gradebook", "#gradebook")
        self.sign_out()

        # A member: the host's order is the default, marked as the league's; no gradebook.
        self.sign_in(lou)
        driver.get(league_url)
        self.wait(lambda d: self.column_of("#standings", "Player") == [lou, kim])
        self.assertEqual(Select(self.find("#rank-by")).first_selected_option.text, "Return (league's order)")
        self.text_in("#rank-note", "Ranked by return, the league's order.")
        self.assertEqual(driver.find_elements(By.ID, "gradebook-download"), [])
        Select(self.find("#rank-by")).select_by_value("netWorth")
        self.wait(lambda d: self.column_of("#standings", "Player") == [kim, lou])
        self.text_in("#rank-note", "Ranked by net worth for you; the league ranks by return.")
        self.shot_of("46-league-member-ranking", "#board-heading")
        self.sign_out()

    def selected(self, heading, select):
        """The portfolio chosen in `select` once the page headed `heading` is drawn."""
        self.text_in("main h1", heading)
        return self.wait(lambda d: d.execute_script(
            "const s = document.querySelector(arguments[0]); return s && s.value", select))

    def shot_sizes(self, name, css=None):
        """The screen as it is, at a desktop's size and then at a phone's (390x844, the
        page laid out again for it, a dialog left open), as name-desktop/-phone.png."""
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"), timeout=20)
        for size, metrics in (("desktop", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}),
                              ("phone", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})):
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            self.wait(lambda d: d.execute_script("return window.innerWidth") == metrics["width"])
            if css:
                self.driver.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", css)
            if size == "phone":
                width = self.driver.execute_script("return document.documentElement.scrollWidth")
                self.assertLessEqual(width, 390, f"{name} is {width}px wide on a phone")
            self.shot(f"{name}-{size}")
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def test_student_path(self):
        """A class's student: the join link opened while logged out leads through
        registering into the league, as a member (a destination that is not one of the
        app's pages is never followed); the league portfolio shown first on Portfolio,
        Orders, History and Analytics, and the portfolio last picked remembered across
        pages and a reload; a trade and an order refused while the host has frozen trading
        name the league and the host's reason; every notification marked read at once."""
        driver = self.driver
        teacher, student = f"teacher_{self.suffix}", f"student_{self.suffix}"
        host = call("/api/auth/register", {"username": teacher, "password": PASSWORD})["token"]
        league = call("/api/leagues/create", {"name": "Economics 9B", "mode": "isolated", "ownerPlays": False}, host)
        code, league_id = league["code"], league["id"]

        # The join link, opened while logged out: the login page says why, and once the
        # student has registered they are in the league.
        self.fresh_session()
        driver.get(f"{BASE}/join/{code}")
        self.find("#auth-form")
        self.text_in("#auth-why", f"to join the league with the code {code}")
        self.shot_sizes("47-join-link-login")
        self.click("#auth-switch")
        self.text_in("#auth-submit", "Create account")
        self.find("#username").send_keys(student)
        self.find("#password").send_keys(PASSWORD)
        self.click("#auth-submit")
        self.wait(lambda d: d.current_url.endswith(f"#/leagues/{league_id}"))
        self.text_in("#flash", "You joined “Economics 9B”.")
        self.text_in("main h1", "Economics 9B")
        self.wait(lambda d: self.column_of("#standings", "Player") == [student])
        self.assertEqual(call(f"/api/leagues/{league_id}", token=host)["memberCount"], 1)
        self.shot_sizes("48-join-link-joined", "#flash")
        # Nothing is kept for the next login: it opens the portfolio.
        self.sign_out()
        self.sign_in(student)
        self.wait(lambda d: d.current_url.endswith("#/portfolio"))
        # A destination that is not a page of the app is never followed.
        self.sign_out()
        for planted in ("https://example.com/", "//example.com/#/market", "#/login", "javascript:alert(1)"):
            driver.execute_script("sessionStorage.setItem('mockstock.destination', arguments[0])", planted)
            self.sign_in(student)
            self.wait(lambda d: d.current_url.startswith(BASE) and d.current_url.endswith("#/portfolio"))
            self.sign_out()
        # Opened while signed in, the join link fills the code in and joins when asked: the
        # league already joined opens its page.
        self.sign_in(student)
        driver.get(f"{BASE}/join/{code}")
        self.wait(lambda d: self.find("#join-code").get_attribute("value") == code)
        self.click("#join-league button[type='submit']")
        self.wait(lambda d: d.current_url.endswith(f"#/leagues/{league_id}"))
        self.text_in("#flash", "You are in “Economics 9B” already.")

        # Their only league portfolio comes first on each page with a portfolio select.
        token = login(student, PASSWORD)
        portfolios = call("/api/portfolios", token=token)
        seat = str(next(p["id"] for p in portfolios if p["leagueId"] == league_id))
        personal = str(next(p["id"] for p in portfolios if p["kind"] == "personal"))
        pages = (("#/portfolio", "Portfolio", "#portfolio-select"), ("#/orders", "Orders", "#portfolio-select"),
                 ("#/transactions", "History", "#history-portfolio"), ("#/analytics", "Analytics", "#analytics-portfolio"))
        for route, heading, select in pages:
            self.go(route)
            self.assertEqual(self.selected(heading, select), seat, f"{heading} shows the league portfolio first")
        self.go("#/orders")
        self.assertEqual(self.selected("Orders", "#portfolio-select"), seat)
        self.shot_sizes("49-orders-league-first")
        # Picked on one page, a portfolio is shown first on every page, after a reload too.
        Select(self.find("#portfolio-select")).select_by_value(personal)
        self.wait(lambda d: d.current_url.endswith(f"#/orders?id={personal}"))
        driver.refresh()
        for route, heading, select in pages:
            self.go(route)
            driver.refresh()
            self.assertEqual(self.selected(heading, select), personal, f"{heading} shows the portfolio picked last")
        self.go("#/transactions")
        Select(self.find("#history-portfolio")).select_by_value(seat)
        self.wait(lambda d: d.current_url.endswith(f"#/transactions?id={seat}"))
        self.go("#/portfolio")
        driver.refresh()
        self.assertEqual(self.selected("Portfolio", "#portfolio-select"), seat)
        # Kept for this player only.
        me = call("/api/me", token=token)
        self.assertEqual(driver.execute_script("return localStorage.getItem(arguments[0])", f"mockstock.shownPortfolio.{me['id']}"), seat)

        # The host freezes trading with a reason: a buy and an order in the league
        # portfolio are refused in words naming the league and the reason.
        call(f"/api/leagues/{league_id}/freeze", {"reason": "Quiz on Friday about diversification"}, host)
        frozen = "Trading in “Economics 9B” is frozen by its host. The host says: “Quiz on Friday about diversification”."
        self.go("#/stock/AAPL")
        self.click("#buy")
        Select(self.find("#trade-portfolio")).select_by_visible_text("League: Economics 9B")
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#trade-error", frozen)
        self.text_in("#trade-error", "Open orders wait and may still be cancelled")
        self.shot_sizes("50-trade-frozen-reason")
        self.click("#trade-dialog-cancel")
        self.click("#order")
        Select(self.find("#order-portfolio")).select_by_visible_text("League: Economics 9B")
        self.click("#order-confirm")
        self.text_in("#order-error", frozen)
        driver.execute_script("document.querySelector('dialog').close()")

        # Notifications: the joining achievement, the freeze and a broadcast are unread;
        # Mark all read reads them all, and the badge goes.
        self.admin_post("/api/admin/notifications", {"title": "Markets close early", "body": "The exchange closes at 1 pm."})
        unread = len(call("/api/notifications?unread=true", token=token)["items"])
        self.assertGreaterEqual(unread, 3)
        self.go("#/notifications")
        self.text_in("#unread", str(unread))
        self.find("#notices li.unread")
        self.shot_sizes("51-notifications-unread")
        self.click("#mark-all-read")
        self.text_in("#flash", f"{unread} notifications marked read.")
        self.wait(lambda d: not d.find_element(By.ID, "unread").is_displayed())
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#notices li.unread"))
        self.assertEqual(call("/api/notifications?unread=true", token=token)["items"], [])
        self.shot_sizes("52-notifications-all-read")
        self.click("#mark-all-read")
        self.text_in("#flash", "Nothing was unread.")
        self.sign_out()

if __name__ == "__main__":
    unittest.main(verbosity=2)
