"""The web client on a phone: at 390x844 no page is wider than the screen, and what a
player reads on each main screen (a holding's shares, price, value and gain, the market's
prices, the analytics figures and charts, a league's join code and its two tables when it
ranks bots apart — with their risk figures, and in another order picked with Rank by — a
host's tools with the order, benchmark and gradebook, the buttons in each standing, the
banner of a frozen league, its news and trade journal, a bot's new key and its buttons,
the unread badge) is on screen without scrolling sideways. The same pages at 1280x900 keep
their tables.

Run after the server is up, like test_web_client.py (scripts/test-browser), with
MOCKSTOCK_URL and SCREENSHOTS; each screen is saved as phone-*.png and desktop-*.png.
"""
import base64
import os
import unittest

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from support import PASSWORD, SCREENSHOTS, BrowserTest, call, login

FROZEN_REASON = "Quiz on Friday about diversification: trading stops until the papers are marked"
# A league's name as long as the server takes (64 characters), which the portfolio selects name.
LONG_LEAGUE = "Year 9 economics with Mrs Featherstonehaugh-Appleby, autumn term"
# The standings' risk columns, in a league measured against the market.
RISK = ("Sharpe", "Sortino", "Drawdown", "Excess vs market")
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
BOUGHT = {"AAPL": 15, "GOOGL": 2, "KO": 30}

# Why an element is not fully on screen, or "" when it is: it must be rendered, lie
# inside the screen's width and inside every box that clips it (a table that scrolls
# in its own box hides what is past its edge), and be what the screen shows at its
# middle once the page is scrolled to it.
WHY_NOT_ON_SCREEN = """
const [element, screenWidth] = arguments;
const width = Math.min(window.innerWidth, screenWidth);
const style = getComputedStyle(element);
let box = element.getBoundingClientRect();
if (style.display === 'none' || style.visibility === 'hidden' || box.width === 0 || box.height === 0) return 'not shown';
if (box.left < 0 || box.right > width + 0.5) return `spans ${box.left}-${box.right}px of a ${width}px screen`;
for (let parent = element.parentElement; parent; parent = parent.parentElement) {
  if (getComputedStyle(parent).overflowX === 'visible') continue;
  const clip = parent.getBoundingClientRect();
  if (box.left < clip.left - 0.5 || box.right > clip.right + 0.5) return `cut by <${parent.tagName.toLowerCase()} class="${parent.className}">`;
}
const height = Math.min(box.height, window.innerHeight);
window.scrollTo(window.scrollX, window.scrollY + box.top - (window.innerHeight - height) / 2);
box = element.getBoundingClientRect();
const seen = document.elementFromPoint(box.left + box.width / 2, box.top + height / 2);
if (!seen || !(element.contains(seen) || seen.contains(element))) return `covered by ${seen ? seen.outerHTML.slice(0, 80) : 'nothing'}`;
return '';
"""

# The rendered elements inside `container` that stick out of its content box (into its
# padding or past its border).
STICKING_OUT = """
const container = arguments[0];
const outer = container.getBoundingClientRect();
const style = getComputedStyle(container);
const left = outer.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
const right = outer.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
return [...container.querySelectorAll('*')].filter((element) => {
  const box = element.getBoundingClientRect();
  return box.width > 0 && (box.left < left - 0.5 || box.right > right + 0.5);
}).map((element) => `<${element.tagName.toLowerCase()} id="${element.id}" class="${element.className}"> ${Math.round(element.getBoundingClientRect().right - right)}px past the right`);
"""

# The cells of one column of `table`, found by its heading.
COLUMN = """
const [table, title] = arguments;
const index = [...table.tHead.rows[0].cells].findIndex((cell) => cell.textContent.trim() === title);
return index < 0 ? [] : [...table.tBodies[0].rows].map((row) => row.cells[index]);
"""


class PhoneLayoutTest(BrowserTest):
    """A player with holdings, a league and an unread notice, on a phone and a desktop."""

    # Helpers

    def charts_drawn(self):
        """Waits until every chart on the page is drawn (they draw on the next frame)."""
        self.wait(lambda d: d.execute_script(
            "return !!window.Chart && [...document.querySelectorAll('main canvas')].every((c) => Chart.getChart(c))"))

    def shot(self, name):
        """The whole page, not only the part on screen, once no toast covers it."""
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"))
        self.driver.execute_script("window.scrollTo(0, 0)")
        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        image = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        with open(os.path.join(SCREENSHOTS, f"{name}.png"), "wb") as file:
            file.write(base64.b64decode(image["data"]))

    def phone(self):
        """A phone's screen (a mobile viewport, which zooms out of a page too wide for it);
        the page is drawn afresh on it."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        self.driver.refresh()

    def desktop(self):
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.set_window_size(1280, 900)
        self.driver.refresh()

    def column(self, table, title):
        cells = self.driver.execute_script(COLUMN, table, title)
        self.assertTrue(cells, f"no column {title!r}")
        return cells

    def assert_no_sideways_scroll(self, page, screen="desktop"):
        page_width, width = self.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        self.assertLessEqual(page_width, width, f"the {page} page is {page_width}px wide on a {width}px screen")
        # A phone zooms out of a page wider than itself, which widens innerWidth.
        if screen == "phone":
            self.assertEqual(width, PHONE["width"], f"the phone zoomed out of the {page} page")

    def assert_on_screen(self, elements, what):
        for element in elements:
            why = self.driver.execute_script(WHY_NOT_ON_SCREEN, element, PHONE["width"])
            self.assertEqual(why, "", f"{what} {element.text.splitlines()[:1]!r} is not on screen: {why}")

    def assert_whole_table(self, css, what):
        """The table in the box at `css` (one that scrolls sideways) fits in it: every column,
        the host's buttons too, is seen without scrolling it."""
        widths = self.driver.execute_script(
            "const box = document.querySelector(arguments[0]); return [box.scrollWidth, box.clientWidth]", css)
        self.assertLessEqual(widths[0], widths[1], f"{what} scroll sideways: {widths[0]}px in {widths[1]}px")

    def assert_inside(self, container, what):
        out = self.driver.execute_script(STICKING_OUT, container)
        self.assertEqual(out, [], f"{what} has content wider than itself")

    def buy(self, symbol, quantity):
        self.go(f"#/stock/{symbol}")
        self.text_in("#stock-symbol", symbol)
        self.click("#buy")
        field = self.find("#trade-quantity")
        field.clear()
        field.send_keys(str(quantity))
        self.text_in("#trade-estimate", "$")
        self.click("#trade-confirm")
        self.text_in("#flash", f"Bought {quantity} {symbol}")

    # The pages, each shown on `screen` ("phone" or "desktop") and checked on a phone.

    def portfolio(self, screen):
        self.go("#/portfolio")
        for symbol in BOUGHT:
            self.text_in("main tbody", symbol)
        self.charts_drawn()
        self.shot(f"{screen}-portfolio")
        self.assert_no_sideways_scroll("portfolio", screen)
        if screen == "phone":
            holdings = self.find("main section.grow table")
            for title in ("Stock", "Shares", "Price", "Value", "Gain"):
                self.assert_on_screen(self.column(holdings, title), f"the holding's {title.lower()}")
            self.assert_inside(self.find("main .summary"), "the portfolio summary")
            self.assert_inside(self.find("main .side .chart"), "the allocation chart")
        else:
            self.assertTrue(self.find("main section.grow thead").is_displayed(), "the holdings lost their table on a desktop")

    def market(self, screen):
        self.go("#/market")
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "main tbody tr")) == 20)
        self.find("#winners li")
        self.shot(f"{screen}-market")
        self.assert_no_sideways_scroll("market", screen)
        if screen == "phone":
            prices = self.find("main .table-scroll table")
            for title in ("Symbol", "Price", "%"):
                self.assert_on_screen(self.column(prices, title), f"the market's {title}")
            self.assert_inside(self.find("#winners"), "today's winners")
        else:
            self.assertTrue(self.find("main thead").is_displayed(), "the market lost its table on a desktop")

    def analytics(self, screen):
        self.go("#/analytics")
        self.text_in("#history-worth", "$")
        self.text_in("#returns", "Time-weighted return")
        self.text_in("#pnl-realized", "$")
        for symbol in BOUGHT:
            self.text_in("#allocation-symbols", symbol)
        self.text_in("#correlation", "1.0000")
        self.text_in("#risk", "Risk figures need at least two days of returns")
        self.charts_drawn()
        self.shot(f"{screen}-analytics")
        self.assert_no_sideways_scroll("analytics", screen)
        if screen == "phone":
            cards = self.driver.find_elements(By.CSS_SELECTOR, "section.card.analytics")
            self.assertEqual(len(cards), 6)
            for card in cards:
                self.assert_on_screen([card], "the analytics card")
                self.assert_inside(card, f"the analytics card {card.get_attribute('id')!r}")
            figures = ["#history-worth", "#history-paid", "#twr", "#irr", "#pnl-realized", "#pnl-unrealized",
                       "#allocation canvas", "#allocation-symbols td"]
            self.assert_on_screen([e for css in figures for e in self.driver.find_elements(By.CSS_SELECTOR, css)], "the figure")

    def order_ticket(self, screen):
        """The order ticket with exits (a bracket's take-profit and stop-loss): every field on
        the screen, nothing wider than it."""
        symbol = next(iter(BOUGHT))
        self.go(f"#/stock/{symbol}")
        self.text_in("#stock-symbol", symbol)
        self.click("#order")
        Select(self.find("#order-class")).select_by_value("bracket")
        self.find("#order-take-profit").send_keys("1000")
        self.find("#order-stop-loss").send_keys("1")
        self.text_in("#order-explain", "whichever comes first")
        self.shot(f"{screen}-order-exits")
        self.assert_no_sideways_scroll("order ticket", screen)
        if screen == "phone":
            for css in ("#order-class", "#order-take-profit", "#order-stop-loss", "#order-confirm"):
                # (The ticket scrolls within itself on a phone, as the player would.)
                field = self.find(css)
                self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", field)
                self.assert_on_screen([field], "the order ticket's field")
            self.assert_inside(self.find("#order-form"), "the order ticket")
        self.click("#order-form .actions button[type='button']")

    def portfolio_select_page(self, screen, route, name, heading, select):
        """A page with a portfolio select showing the league of the long name: no wider
        than the screen, the select on it (its name cut with an ellipsis on a phone)."""
        self.go(f"{route}?id={self.long_seat}")
        self.text_in("main h1", heading)
        self.wait(lambda d: d.execute_script("return document.querySelector(arguments[0])?.value", select) == self.long_seat)
        self.assertIn(f"League: {LONG_LEAGUE}", Select(self.find(select)).first_selected_option.text)
        self.shot(f"{screen}-{name}")
        self.assert_no_sideways_scroll(name, screen)
        if screen == "phone":
            self.assertLessEqual(self.driver.execute_script("return document.documentElement.scrollWidth"), PHONE["width"])
            self.assert_on_screen([self.find(select)], f"the {name} page's portfolio select")

    def league(self, screen, league_url, code):
        self.driver.get(league_url)
        self.text_in("#league-code", code)
        self.find("main tbody tr")
        self.shot(f"{screen}-league")
        self.assert_no_sideways_scroll("league", screen)
        if screen == "phone":
            self.checked_while_redrawn(self.league_on_phone, code)
        else:
            self.assertTrue(self.checked_while_redrawn(lambda: self.find("#bot-standings thead").is_displayed()),
                            "the bots lost their table on a desktop")
            for title in RISK:
                self.assertTrue(self.checked_while_redrawn(lambda t=title: self.column(self.find("#standings table"), t)[0].is_displayed()),
                                f"the standings lost their {title} column on a desktop")
            self.assert_whole_table("#standings", "the standings")
            self.assert_whole_table("#bot-standings", "the bots' standings")
        # Another order, picked by the viewer: both tables read again in it, and still on screen.
        Select(self.find("#rank-by")).select_by_value("return")
        self.text_in("#rank-note", "Ranked by return for you")
        self.find("#bot-standings table")
        self.shot(f"{screen}-league-by-return")
        self.assert_no_sideways_scroll("league ranked by return", screen)
        if screen == "phone":
            self.checked_while_redrawn(self.league_on_phone, code)

    def checked_while_redrawn(self, check, *args):
        """Runs `check` again when the page redrew what it was reading: the league page
        draws its tables afresh as standings arrive (the bots' table every 10 s)."""
        for attempt in range(3):
            try:
                return check(*args)
            except StaleElementReferenceException:
                if attempt == 2:
                    raise

    def league_on_phone(self, code):
        code_box = self.find("#league-code")
        self.assert_on_screen([code_box], "the join code")
        self.assert_inside(self.driver.execute_script("return arguments[0].parentElement", code_box), "the join code's card")
        self.assertEqual(code_box.text, code, "the join code is broken over lines")
        self.assert_on_screen([self.find("#rank-by")], "the Rank by switch")
        self.assert_inside(self.find("#league-board"), "the leaderboard")
        self.assert_on_screen([self.find("#rank-note"), self.find("#risk-note")], "the leaderboard's note")
        board = self.find("#standings table")
        for title in ("Player", "Net worth", "Return", *RISK):
            self.assert_on_screen(self.column(board, title), f"the leaderboard's {title.lower()}")
        # The league ranks bots apart: their own table, each marked with its owner.
        bots = self.find("#bot-standings table")
        for title in ("Rank", "Player", "Net worth", "Return", *RISK):
            self.assert_on_screen(self.column(bots, title), f"the bots' {title.lower()}")
        self.assert_on_screen(self.driver.find_elements(By.CSS_SELECTOR, "#bot-standings .tag, #bot-standings .owner"), "the bot's mark")
        self.assert_on_screen([self.find("#bot-policy-select"), self.find("#bot-policy-form button")], "the bot policy's control")

    def host_league(self, screen):
        """The host's page of an isolated league where she plays and members may reset: open
        (the freeze form) and frozen with a long reason (the banner, Resume)."""
        token = login(f"pia_{self.suffix}", PASSWORD)
        call(f"/api/leagues/{self.host_league_id}/unfreeze", {}, token)
        self.driver.get(self.host_league_url)
        self.find("#freeze-form")
        self.text_in("#standings", self.classmate)
        self.text_in("#news-list", "Diversification week")
        self.text_in("#journal-list", "Consumer staples")
        self.text_in("#league-margin-rule", "below 25.00% at a close is a margin call")
        self.shot(f"{screen}-league-host")
        self.assert_inside(self.find("#league-interest-rule"), "the league's interest and fees")
        self.assert_no_sideways_scroll("host's league", screen)
        if screen == "phone":
            self.checked_while_redrawn(self.host_on_phone, False)
        call(f"/api/leagues/{self.host_league_id}/freeze", {"reason": FROZEN_REASON}, token)
        self.driver.refresh()
        self.find("#unfreeze-button")
        self.text_in("#frozen-banner", FROZEN_REASON)
        self.text_in("#standings", self.classmate)
        self.shot(f"{screen}-league-host-frozen")
        self.assert_no_sideways_scroll("host's frozen league", screen)
        if screen == "phone":
            self.checked_while_redrawn(self.host_on_phone, True)
        else:
            self.assertTrue(self.checked_while_redrawn(lambda: self.find("#standings thead").is_displayed()),
                            "the host's standings lost their table on a desktop")
            self.assert_whole_table("#standings", "the host's standings")

    def host_on_phone(self, frozen):
        host = self.find("#host")
        self.assert_inside(host, "the host tools")
        self.assert_on_screen(host.find_elements(By.CSS_SELECTOR, "input, select, button"), "the host's control")
        self.assert_on_screen(host.find_elements(By.CSS_SELECTOR, "label"), "the host's label")
        self.assert_on_screen([self.find("#settings-rank-by"), self.find("#settings-benchmark"), self.find("#gradebook-download")],
                              "the host's order, benchmark and gradebook")
        if frozen:
            self.assert_on_screen([self.find("#frozen-banner")], "the frozen banner")
            self.assert_inside(self.find("#frozen-banner"), "the frozen banner")
        board = self.find("#standings table")
        for title in ("Rank", "Player", "Net worth", "Return", "Resets", *RISK):
            self.assert_on_screen(self.column(board, title), f"the standings' {title.lower()}")
        self.assert_on_screen([self.find("#rank-by")], "the Rank by switch")
        buttons = board.find_elements(By.CSS_SELECTOR, "button")
        self.assertGreaterEqual(len(buttons), 3, "the standings have a Reset for each player and a Kick for the classmate")
        self.assert_on_screen(buttons, "the standing's button")
        mine = self.find("#my-resets")
        self.assert_inside(mine, "the player's own resets")
        self.assert_on_screen(mine.find_elements(By.CSS_SELECTOR, "button, a"), "the player's reset")
        self.assert_on_screen([self.find("#leave-league"), self.find("#delete-league")], "the league's button")
        news = self.find("#news")
        self.assert_inside(news, "the league news")
        self.assert_on_screen(news.find_elements(By.CSS_SELECTOR, "summary, h3, .body"), "the news")
        if not self.driver.execute_script("return document.querySelector('#news-post').open"):
            self.click_centered("#news-post summary")
        self.assert_on_screen(self.find("#news-form").find_elements(By.CSS_SELECTOR, "label, input, textarea, button"), "the news form's field")
        journal = self.find("#journal")
        self.assert_inside(journal, "the trade journal")
        self.assert_on_screen(journal.find_elements(By.CSS_SELECTOR, "select, button:not([hidden]), .entry-head, .note"), "the journal")

    def bots(self, screen):
        """My bots, with a new key's secret shown (made on this screen: a reload forgets it)."""
        self.go("#/bots")
        self.find(f"li.bot[data-bot='{self.bot}']")
        self.click_centered(f"li.bot[data-bot='{self.bot}'] .new-key-button")
        self.text_in("#new-key-secret", "Copy the secret now")
        card = self.find(f"li.bot[data-bot='{self.bot}']")
        self.shot(f"{screen}-bots")
        self.assert_no_sideways_scroll("bots", screen)
        if screen == "phone":
            self.assert_on_screen([self.find("#new-key-id"), self.find("#new-key-secret-text")], "the new key")
            self.assert_inside(self.find("#new-key-secret"), "the new key's box")
            self.assert_inside(card, "the bot's card")
            self.assert_inside(self.find("#bot-form"), "the form that creates a bot")
            buttons = card.find_elements(By.CSS_SELECTOR, "button")
            self.assertGreaterEqual(len(buttons), 6)
            self.assert_on_screen(buttons, "the bot's button")
            self.assert_on_screen(card.find_elements(By.CSS_SELECTOR, "select, input"), "the bot's field")

    def test_phone_layout(self):
        driver = self.driver
        self.go("")
        driver.execute_script("sessionStorage.clear()")
        self.go("#/login")
        self.click("#auth-switch")
        self.text_in("#auth-submit", "Create account")
        self.find("#username").send_keys(f"pia_{self.suffix}")
        self.find("#password").send_keys(PASSWORD)
        self.click("#auth-submit")
        self.find("#market-search")

        # Shares of three companies, one with a long name; the first trade earns an
        # achievement, whose notice stays unread.
        for symbol, quantity in BOUGHT.items():
            self.buy(symbol, quantity)
        self.go("#/leagues")
        self.find("#league-name").send_keys("Phone class of the year")
        Select(self.find("#league-bot-policy")).select_by_value("separate")
        self.click("#create-league button[type='submit']")
        code = self.find("#league-code").text
        league_url = driver.current_url
        # A bot of hers, with a long name, seated in the league, where it is ranked apart.
        self.bot = f"pia_trend_follower_{self.suffix}"
        self.go("#/bots")
        self.find("#bot-name").send_keys(self.bot)
        self.click_centered("#bot-form button[type='submit']")
        self.find(f"li.bot[data-bot='{self.bot}'] .seat-code").send_keys(code)
        self.click_centered(f"li.bot[data-bot='{self.bot}'] .seat-button")
        self.text_in("#flash", "now plays in “Phone class of the year”")
        # An isolated league she hosts and plays in, where members may reset, with a
        # classmate of a long name.
        self.go("#/leagues")
        self.find("#league-name").send_keys("Phone host class with a long name")
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.find("#league-resets").send_keys("3")
        # Realistic fills and margin: its page says them in words.
        Select(self.find("#rule-preset")).select_by_value("realistic")
        self.click_centered("#create-league button[type='submit']")
        self.find("#host")
        self.host_league_url = driver.current_url
        self.host_league_id = self.host_league_url.rsplit("/", 1)[1]
        self.classmate = f"classmate_long_name_{self.suffix}"
        classmate = call("/api/auth/register", {"username": self.classmate, "password": PASSWORD})["token"]
        call(f"/api/leagues/join/{self.find('#league-code').text}", {}, classmate)
        # News from her, and a note of the classmate's on a trade: the page's news and journal.
        call(f"/api/leagues/{self.host_league_id}/news", {
            "title": "Diversification week: hold at least five companies from three sectors",
            "body": "Read the chapter on risk first.\nThen trade, and say why in a note."}, login(f"pia_{self.suffix}", PASSWORD))
        seat = next(p for p in call("/api/portfolios", token=classmate) if p["leagueId"] == int(self.host_league_id))
        call("/api/stock/buy", {"symbol": "KO", "amount": 3, "portfolioId": seat["id"],
                                "note": "Consumer staples hold up when the market falls; a steady dividend while I learn."}, classmate)
        # A class league of the longest name the server takes, which she joins: Orders and
        # History name it in their portfolio selects.
        self.assertEqual(len(LONG_LEAGUE), 64)
        long_league = call("/api/leagues/create", {"name": LONG_LEAGUE, "mode": "isolated"}, classmate)
        pia = login(f"pia_{self.suffix}", PASSWORD)
        call(f"/api/leagues/join/{long_league['code']}", {}, pia)
        self.long_seat = str(next(p["id"] for p in call("/api/portfolios", token=pia) if p["leagueId"] == long_league["id"]))
        self.go("#/portfolio")
        self.assertRegex(self.find("#unread").text, r"^[1-9]")

        # Each page is checked on its own, so one page's failure still shows the others'.
        self.phone()
        self.go("#/portfolio")
        with self.subTest("the menu on a phone"):
            self.find("main tbody tr")
            self.shot("phone-menu-closed")
            # The closed menu carries the unread count; the open one, on its notifications link.
            try:
                self.wait(lambda d: d.execute_script(
                    "return document.querySelector('.menu-toggle .badge')?.textContent === document.querySelector('#unread').textContent"))
            except TimeoutException:
                self.fail("the menu button shows no unread count")
            self.assert_on_screen([self.find(".menu-toggle .badge")], "the menu's unread badge")
        with self.subTest("the open menu on a phone"):
            self.click(".menu-toggle")
            self.assertRegex(self.find("#unread").text, r"^[1-9]")
            self.shot("phone-menu")
            self.assert_on_screen([self.find("#unread")], "the unread badge in the menu")
            self.assert_no_sideways_scroll("open menu", "phone")
            self.click("#nav a[href='#/portfolio']")
            self.wait(EC.invisibility_of_element_located((By.ID, "nav")))
        for screen in ("phone", "desktop"):
            if screen == "desktop":
                self.desktop()
            for name, page in (("portfolio", self.portfolio), ("market", self.market), ("analytics", self.analytics),
                               ("order ticket", self.order_ticket)):
                with self.subTest(f"the {name} page on a {screen}"):
                    page(screen)
            for route, name, heading, select in (("#/orders", "orders", "Orders", "#portfolio-select"),
                                                 ("#/transactions", "history", "History", "#history-portfolio")):
                with self.subTest(f"the {name} page of a league with a long name on a {screen}"):
                    self.portfolio_select_page(screen, route, name, heading, select)
            with self.subTest(f"a league on a {screen}"):
                self.league(screen, league_url, code)
            with self.subTest(f"a host's league on a {screen}"):
                self.host_league(screen)
            with self.subTest(f"my bots on a {screen}"):
                self.bots(screen)


if __name__ == "__main__":
    unittest.main(verbosity=2)
