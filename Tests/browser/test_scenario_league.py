"""Browser tests of a scenario league: a league with a market of its own, replaying a
period of the stored history one league day at a time, blind (companies "S01",
"Company 01"… at 100.00, the period's dates hidden) until it ends.

A host creates one through the form (the Market fields shown for an isolated league only,
a random period inside the stored history, blind, days the host advances) and scripts an
event (a bad change explained in words, an unknown symbol refused in the server's); a
member joins, opens a company from the league page, buys it from its stock page (in the
league portfolio, the only one offered) and places a day order on another; the member's
portfolio, orders and history link the league's stock pages. The host advances a day: the member's
portfolio shows the new price without a reload (live quotes of the league's market) and
the day order has expired; another day applies the event, which reaches the member as a
toast and as news and events on the league page. No real symbol or name of the period's
companies, nor its dates, shows on the member's screens (league, stock, orders, history,
portfolio) while the league runs. The host
moves five days on; the league's end comes while the member's league page is open, and
the reveal shows the period's dates, each company's real symbol and name with its change,
and each member's return against holding the market.

Run by scripts/test-browser with the other suites (test_web_client.py imports this
module's tests), or alone once a server is up:

    MOCKSTOCK_URL=http://127.0.0.1:18091 python3 Tests/browser/test_scenario_league.py

Each new screen is saved at a desktop's and a phone's size (scenario-*-desktop.png,
scenario-*-phone.png); at the phone's 390 px nothing may be wider than the screen.
"""
import datetime
import re
import time
import unittest
import urllib.error
from decimal import ROUND_HALF_UP, Decimal

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import PASSWORD, BrowserTest, call, login, make_driver
import test_class_and_account


def percent(text):
    """A percent as the page writes it: "+1.25%", "−0.50%", "0.00%"."""
    value = Decimal(text).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{'+' if value > 0 else ''}{value}%".replace("-", "−")


def price(text):
    """A price in dollars as the page writes it: the server's decimals, two to four."""
    places = min(max(len(text.partition(".")[2].rstrip("0")), 2), 4)
    return f"${Decimal(text).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):,}"


def day_text(day):
    """A YYYY-MM-DD day as the page writes it in English: "Feb 1, 2024"."""
    moment = datetime.date.fromisoformat(day)
    return f"{moment.strftime('%b')} {moment.day}, {moment.year}"


class ScenarioLeagueTest(BrowserTest):
    """A host and a member (each in a browser of their own) in a blind replay."""

    rows = test_class_and_account.ClassAndAccountTest.rows
    capture = test_class_and_account.ClassAndAccountTest.capture
    shot_sizes = test_class_and_account.ClassAndAccountTest.shot_sizes

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.host_browser = cls.driver
        cls.member_browser = make_driver()

    @classmethod
    def tearDownClass(cls):
        cls.member_browser.quit()
        cls.driver = cls.host_browser
        super().tearDownClass()

    def as_host(self):
        self.driver = self.host_browser

    def as_member(self):
        self.driver = self.member_browser

    def page_text(self):
        return self.driver.execute_script("return document.querySelector('main').innerText")

    def hidden_words(self):
        """What a blind league must not show while it runs: the real market's symbols (of
        three letters or more: shorter ones are words and times, "PM") and names, as
        patterns matching them as whole words."""
        market = call("/api/stock/market?limit=200", token=login(self.member, PASSWORD))["items"]
        words = [q["symbol"] for q in market if len(q["symbol"]) >= 3] + [q["name"] for q in market]
        return [re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])") for word in words]

    def assert_nothing_revealed(self, where, period):
        """The page shows no real symbol or name, nor the period's first or last day."""
        text = self.page_text()
        for pattern in self.hidden:
            self.assertIsNone(pattern.search(text), f"{where} shows {pattern.pattern!r} before the league ends")
        for day in period:
            for written in (day, day_text(day)):
                self.assertNotIn(written, text, f"{where} shows the period's day {written}")

    def test_scenario_league(self):
        suffix = self.suffix
        self.host, self.member = f"scn_host_{suffix}", f"scn_member_{suffix}"
        name = f"Crash Course {suffix}"

        # The host's form: the Market fields are an isolated league's; a replay takes no
        # list of symbols and needs its days.
        self.as_host()
        self.fresh_session()
        self.sign_in(self.host, register=True)
        host_token = login(self.host, PASSWORD)
        span = call("/api/market/clock", token=host_token)["history"]
        self.go("#/leagues")
        self.find("#league-name").send_keys(name)
        self.assertFalse(self.driver.find_element(By.ID, "league-market-fields").is_displayed())
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.find("#league-market-fields")
        self.assertFalse(self.driver.find_element(By.ID, "league-market-replay").is_displayed())
        Select(self.find("#league-market-kind")).select_by_value("replay")
        self.assertFalse(self.driver.find_element(By.ID, "rule-symbols").is_displayed())
        self.text_in("#league-market-span", f"from {day_text(span['from'])} to {day_text(span['through'])}")
        first, last = self.find("#league-market-from"), self.find("#league-market-to")
        self.assertEqual((first.get_attribute("min"), first.get_attribute("max")), (span["from"], span["through"]))
        self.assertEqual((last.get_attribute("min"), last.get_attribute("max")), (span["from"], span["through"]))
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#create-league .error", "Market: choose the first and the last day of the period")
        # Twelve weeks at random inside the stored history.
        weeks = self.find("#league-market-weeks")
        weeks.clear()
        weeks.send_keys("12")
        self.click_centered("#league-market-random")
        start, end = first.get_attribute("value"), last.get_attribute("value")
        self.assertTrue(span["from"] <= start < end <= span["through"], (start, end, span))
        self.assertEqual((datetime.date.fromisoformat(end) - datetime.date.fromisoformat(start)).days, 12 * 7 - 1)
        self.click_centered("#league-market-blind")
        Select(self.find("#league-market-pace")).select_by_value("host")
        self.assertFalse(self.driver.find_element(By.ID, "league-market-minutes").is_displayed())
        self.shot_sizes("scenario-01-create", "#create-league")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", f"League “{name}” created")
        league = int(self.driver.current_url.rsplit("/", 1)[1])
        created = call(f"/api/leagues/{league}", token=host_token)
        self.assertEqual(created["market"]["blind"], True)
        self.assertIsNone(created["market"]["dayMinutes"])
        days = created["market"]["days"]
        self.assertGreater(days, 40)

        # Its page: day 1, the period hidden, the host's Next day, the companies at 100.
        self.text_in("#market-day", f"Day 1 of {days}")
        self.text_in("#market-period", "Hidden until the league ends")
        self.text_in("#market-kind", "blind replay")
        self.text_in("#market-next", "The host starts each new day.")
        self.find("#market-next-day")
        self.assertEqual(self.rows("#league-instruments")[0], ["S01", "Company 01", "$100.00", "0.00%"])
        self.text_in("#league-symbols-rule", "the league's own market")
        # An event scripted for day 3: a change written with % is explained, a company the
        # market does not trade refused in the server's words, then S01 down 30 %.
        self.click_centered("#event-post summary")
        self.assertEqual(self.find("#event-day").get_attribute("value"), "2")
        day = self.find("#event-day")
        day.clear()
        day.send_keys("3")
        self.find("#event-symbols").send_keys("s01, ZZZ")
        self.find("#event-change").send_keys("-30%")
        self.find("#event-headline").send_keys("Company 01 recalls its flagship product")
        self.find("#event-body").send_keys("Regulators order the recall; analysts expect a loss.")
        self.click_centered("#event-form button[type='submit']")
        self.text_in("#event-error", "Change: a percent such as -30 or 12.5")
        change = self.find("#event-change")
        change.clear()
        change.send_keys("-30")
        self.click_centered("#event-form button[type='submit']")
        self.text_in("#event-error", "symbols holds ZZZ, which this league's market does not trade.")
        symbols = self.find("#event-symbols")
        symbols.clear()
        symbols.send_keys("s01")
        self.click_centered("#event-form button[type='submit']")
        self.text_in("#event-status", "Event “Company 01 recalls its flagship product” scheduled for day 3.")
        self.wait(lambda d: len(self.rows("#events-table")) == 1)
        self.assertEqual(self.rows("#events-table")[0][1:], ["3", "S01", "−30.00%", "Scheduled"])
        self.shot_sizes("scenario-02-host-league", "#league-market")
        self.shot_sizes("scenario-03-host-events", "#league-events")

        # The member joins by the code and finds the league's market, but not the event.
        self.as_member()
        self.fresh_session()
        self.sign_in(self.member, register=True)
        member_token = login(self.member, PASSWORD)
        self.hidden = self.hidden_words()
        self.go("#/leagues")
        self.find("#join-code").send_keys(created["code"])
        self.click("#join-league button[type='submit']")
        self.text_in("#flash", f"You joined “{name}”.")
        self.text_in("#market-day", f"Day 1 of {days}")
        self.text_in("#events-empty", "Nothing has happened yet.")
        self.assertNotIn("recalls", self.page_text())
        self.assert_nothing_revealed("the league page", (start, end))
        portfolio = next(p for p in call("/api/portfolios", token=member_token) if p["leagueId"] == league)["id"]

        # S01's page in the league: its day, its chart by league day, what it is hidden.
        self.click_centered("#league-instruments a[href*='S01']")
        self.wait(lambda d: d.current_url.endswith(f"#/stock/S01?league={league}"))
        self.text_in("#stock-symbol", "S01")
        self.text_in("h1", "Company 01")
        self.text_in("#stock-day", f"Day 1 of {days}")
        self.text_in("#stock-price", "$100.00")
        self.text_in("#chart-span", "The close of league day 1.")
        self.text_in("#company-hidden", "revealed when the league ends")
        self.text_in("#stock-league", name)
        # A buy in the league portfolio, the only one offered.
        self.click("#buy")
        quantity = self.find("#trade-quantity")
        self.assertFalse(self.driver.find_elements(By.ID, "trade-portfolio"))
        quantity.clear()
        quantity.send_keys("10")
        self.text_in("#trade-estimate", "Estimated cost: $1,000.00")
        self.click("#trade-confirm")
        self.text_in("#flash", f"Bought 10 S01 at $100.00 in the league “{name}”")
        self.text_in("#position", f"You hold 10 shares in the league “{name}”.")
        self.shot_sizes("scenario-04-stock")
        self.assert_nothing_revealed("the stock page", (start, end))
        # A day order on S02 far under its price lasts until the league day ends.
        self.go(f"#/stock/S02?league={league}")
        self.text_in("#stock-symbol", "S02")
        self.click("#order")
        self.assertEqual(Select(self.find("#order-tif")).first_selected_option.text, "Day (until the league day ends)")
        Select(self.find("#order-type")).select_by_value("limit")
        field = self.find("#order-quantity")
        field.clear()
        field.send_keys("5")
        self.find("#order-limit").send_keys("1")
        self.text_in("#order-explain", "While open it holds back $5.00")
        self.click("#order-confirm")
        self.text_in("#flash", "Buy 5 S02 (Limit $1.00): placed.")

        # Orders and the portfolio link the league's stock pages.
        self.go(f"#/orders?id={portfolio}")
        self.wait(lambda d: len(self.rows("#open-orders")) == 1)
        self.assertIn("Day (until the league day ends)", self.rows("#open-orders")[0])
        self.assertTrue(self.find("#open-orders a").get_attribute("href").endswith(f"#/stock/S02?league={league}"))
        self.assert_nothing_revealed("the orders page", (start, end))
        self.go(f"#/transactions?id={portfolio}")
        self.wait(lambda d: len(self.rows("main")) == 1)
        self.assertTrue(self.find("main tbody a").get_attribute("href").endswith(f"#/stock/S01?league={league}"))
        self.assert_nothing_revealed("the history page", (start, end))
        self.go(f"#/portfolio?id={portfolio}")
        self.text_in("#portfolio-scenario", "a market of its own")
        holding = self.find("main tbody tr a")
        self.assertTrue(holding.get_attribute("href").endswith(f"#/stock/S01?league={league}"))
        price_cell = "main tbody tr [data-quote='S01'][data-field='price']"
        self.assertEqual(self.find(price_cell).text, "$100.00")
        self.shot_sizes("scenario-05-portfolio")
        self.assert_nothing_revealed("the portfolio page", (start, end))

        # The host starts day 2: the member's portfolio shows S01's new price at once.
        self.as_host()
        self.click_centered("#market-next-day")
        self.text_in("#market-day", f"Day 2 of {days}")
        self.text_in("#market-status", f"Day 2 of {days} has begun.")
        self.as_member()
        self.wait(lambda d: self.find(price_cell).text != "$100.00", timeout=20)
        moved = call(f"/api/leagues/{league}/market", token=member_token)["symbols"][0]
        self.assertEqual(moved["symbol"], "S01")
        self.text_in(price_cell, price(moved["price"]))
        # The day order ended with its league day.
        self.go(f"#/orders?id={portfolio}")
        self.wait(lambda d: any(row[1] == "S02" for row in self.rows("#order-history")))
        expired = next(row for row in self.rows("#order-history") if row[1] == "S02")
        self.assertEqual(expired[-1], "Expired: The league day ended.")
        self.assertFalse(self.rows("#open-orders"))

        # Day 3 applies the event: the member, on the league page, is told at once.
        self.go(f"#/leagues/{league}")
        self.text_in("#market-day", f"Day 2 of {days}")
        self.as_host()
        self.click_centered("#market-next-day")
        self.text_in("#market-day", f"Day 3 of {days}")
        self.wait(lambda d: self.rows("#events-table")[0][-1] == "Happened")
        self.as_member()
        self.text_in("#toasts", "Company 01 recalls its flagship product", timeout=20)
        self.text_in("#market-day", f"Day 3 of {days}")
        self.text_in("#events-list", "Company 01 recalls its flagship product")
        self.text_in("#events-list", "Day 3 · S01 −30.00%")
        self.text_in("#news-list", "Company 01 recalls its flagship product")
        crashed = self.rows("#league-instruments")[0]
        self.assertEqual(crashed[0], "S01")
        self.assertLess(Decimal(crashed[2].lstrip("$").replace(",", "")), Decimal("85"), crashed)
        self.assertTrue(crashed[3].startswith("−"), crashed)
        self.assert_nothing_revealed("the league page", (start, end))
        self.shot_sizes("scenario-06-member-league", "#league-market")
        self.shot_sizes("scenario-07-member-events", "#league-events")

        # Five days on.
        self.as_host()
        self.click_centered("#market-advance-5")
        self.text_in("#market-day", f"Day 8 of {days}")
        self.as_member()
        self.text_in("#market-day", f"Day 8 of {days}", timeout=20)

        # The league ends (its end moved a few seconds ahead, as the page does not) while
        # the member looks at it: the reveal comes without a reload.
        ends = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
        call(f"/api/leagues/{league}", {"endsAt": ends}, host_token, method="PATCH")
        self.go(f"#/leagues/{league}")
        self.text_in("#market-day", f"Day 8 of {days}")
        self.assertFalse(self.driver.find_element(By.ID, "league-reveal").is_displayed())
        self.find("#league-reveal")  # shown once the end has come
        market = call(f"/api/leagues/{league}/market", token=member_token)
        self.assertTrue(market["ended"])
        self.assertEqual((market["from"], market["to"]), (start, end))
        self.text_in("#market-next", f"The league has ended, on day 8 of {days}.")
        self.text_in("#reveal-period", f"The league's {days} days were the trading days from {day_text(start)} to {day_text(end)}")
        self.text_in("#market-period", f"{day_text(start)} – {day_text(end)}")
        revealed = {row[0]: row for row in self.rows("#reveal-companies")}
        self.assertEqual(len(revealed), 10)
        for company in market["symbols"][:10]:
            self.assertEqual(revealed[company["symbol"]][1], f"{company['realSymbol']} {company['realName']}")
        s01 = market["symbols"][0]
        # The server's change since day 1 (its price against its day-1 price).
        change = (Decimal(s01["price"]) - Decimal(s01["firstPrice"])) / Decimal(s01["firstPrice"]) * 100
        self.assertEqual(Decimal(s01["changePercent"]), change.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
        self.assertEqual(revealed["S01"][3], percent(s01["changePercent"]))
        self.click_centered("#reveal-more")
        self.wait(lambda d: len(self.rows("#reveal-companies")) == len(market["symbols"]))
        # Each member against holding the market.
        standings = {s["username"]: s for s in call(f"/api/leagues/{league}", token=member_token)["members"]}
        against = {s["username"]: s for s in market["againstMarket"]}
        self.text_in("#reveal-market", f"returned {percent(market['marketReturnPercent'])}.")
        rows = {row[0].split(". ", 1)[1]: row for row in self.rows("#reveal-members")}
        self.assertEqual(set(rows), {self.host, self.member})
        for username, row in rows.items():
            mine = standings[username]["returnPercent"]
            self.assertEqual(against[username]["returnPercent"], mine)
            self.assertEqual(Decimal(against[username]["differencePercent"]), Decimal(mine) - Decimal(market["marketReturnPercent"]))
            self.assertEqual(row[1:], [percent(mine), percent(market["marketReturnPercent"]),
                                       percent(against[username]["differencePercent"])])
        self.text_in("#reveal-mine", f"You returned {percent(standings[self.member]['returnPercent'])}")
        self.click_centered("#reveal-more")
        self.shot_sizes("scenario-08-reveal", "#league-reveal")
        # S01's page says what it really was; its market trades no more.
        self.go(f"#/stock/S01?league={league}")
        self.text_in("#company-real", f"Really {s01['realSymbol']} — {s01['realName']}")
        self.text_in("#stock-league", "which has ended: its market trades no more.")
        self.assertFalse(self.driver.find_elements(By.ID, "buy"))
        self.shot_sizes("scenario-09-stock-revealed")


if __name__ == "__main__":
    unittest.main(verbosity=2)
