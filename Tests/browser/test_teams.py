"""Browser tests of a team league: a host creates one (Teams, isolated only), makes a
class roster of four and two teams, seats traders and a viewer (moving one between teams
and taking one off); a trader buys on the team's portfolio, which the selects call
"Team: <name>"; the viewer sees it, is told they watch it, and is refused a trade in the
server's words (403 not_a_trader); the leaderboard ranks teams with their members, and the
history and orders of the team's portfolio say who placed each.

Run by scripts/test-browser with the other suites (test_web_client.py imports this
module's tests), or alone once a server is up:

    MOCKSTOCK_URL=http://127.0.0.1:18091 python3 Tests/browser/test_teams.py

Each new screen is saved at a desktop's and a phone's size (teams-*-desktop.png,
teams-*-phone.png); at the phone's 390 px nothing may be wider than the screen.
"""
import json
import unittest
import urllib.error

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import PASSWORD, BrowserTest, call, login
import test_class_and_account

NAMES = ["Ava Stone", "Ben Okafor", "Cal Rivers", "Dee Marsh"]


class TeamsTest(BrowserTest):
    """A host, a class of four in two teams: two traders, a viewer, a trader moved."""

    # The class test's helpers: rows of a table, screenshots at both sizes, confirmations.
    rows = test_class_and_account.ClassAndAccountTest.rows
    capture = test_class_and_account.ClassAndAccountTest.capture
    shot_sizes = test_class_and_account.ClassAndAccountTest.shot_sizes

    def seat(self, where, username, choice):
        """Picks `choice` ("Bulls — trader") in the seat select of `username` under `where`,
        then waits until the Teams card lists them there with that role (the card is drawn
        again after each answer: a select found just before may be gone, and is found again)."""
        css = f"{where} select[data-seat='{username}']"
        for _ in range(5):
            try:
                select = self.find(css)
                self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", select)
                Select(select).select_by_visible_text(choice)
                break
            except StaleElementReferenceException:
                continue
        team, role = choice.split(" — ")
        self.wait(lambda d: [username, role.capitalize()] in self.team_members(team))

    def team_members(self, team):
        """The usernames and roles the host's Teams card lists on `team`."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll(`#team-list li.team[data-team='${arguments[0]}'] ul.team-members > li`)]"
            ".map((li) => [li.dataset.member, li.querySelector('.tag')?.innerText.trim()])", team)

    def test_team_league(self):
        driver = self.driver
        self.fresh_session()
        host = f"team_host_{self.suffix}"
        self.sign_in(host, register=True)
        self.go("#/leagues")
        self.find("#league-name").send_keys(f"Team Cup {self.suffix}")
        # Teams is an isolated league's: hidden for a shared one.
        self.assertFalse(driver.find_element(By.ID, "league-teams-row").is_displayed())
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.click_centered("#league-teams")
        self.click_centered("#league-host-only")
        self.shot_sizes("teams-01-create", "#create-league")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", "created")
        league = int(driver.current_url.rsplit("/", 1)[1])
        self.text_in("#league-team-mode", "Team league")
        host_token = login(host, PASSWORD)
        self.assertTrue(call(f"/api/leagues/{league}", token=host_token)["teams"])
        self.text_in("#teams-none", "No teams yet")

        # A class roster of four: each may be seated at once.
        self.find("#roster-names").send_keys("\n".join(NAMES))
        self.click_centered("#roster-create")
        self.text_in("#roster-result", "4 logins made")
        credentials = {name: (username, password) for name, username, password in self.rows("#roster-result")}
        ava, ben, cal, dee = (credentials[name][0] for name in NAMES)
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#unassigned-list li")) == 4)
        self.text_in("#unassigned-list", f"Ava Stone ({ava})")

        # Two teams; a name taken is refused in the server's words.
        for name in ("Bulls", "Bears"):
            self.find("#team-name").send_keys(name)
            self.click_centered("#team-create")
            self.text_in("#teams-status", f"Team “{name}” made")
            self.find(f"#team-list li.team[data-team='{name}']")
        self.find("#team-name").send_keys("bulls")
        self.click_centered("#team-create")
        self.find("#team-error")
        self.assertTrue(self.find("#team-error").text)

        # Seats: Ava trades Bulls, Ben watches it; Cal first on Bulls, moved to Bears;
        # Dee on Bears, taken off, then back as a trader.
        self.seat("#unassigned-list", ava, "Bulls — trader")
        self.wait(lambda d: self.team_members("Bulls") == [[ava, "Trader"]])
        self.seat("#unassigned-list", ben, "Bulls — viewer")
        self.seat("#unassigned-list", cal, "Bulls — trader")
        self.seat("#unassigned-list", dee, "Bears — viewer")
        self.wait(lambda d: len(self.team_members("Bulls")) == 3 and len(self.team_members("Bears")) == 1)
        self.text_in("#unassigned", "Every member is on a team.")
        self.seat("#team-list", cal, "Bears — trader")
        self.text_in("#teams-status", f"Cal Rivers ({cal}) is a trader on “Bears”.")
        self.wait(lambda d: sorted(self.team_members("Bears")) == sorted([[cal, "Trader"], [dee, "Viewer"]]))
        self.click_centered(f"#team-list button[data-off='{dee}']")
        self.text_in("#teams-status", f"Dee Marsh ({dee}) is off “Bears”")
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, f"#unassigned-list li[data-member='{dee}']")) == 1)
        self.seat("#unassigned-list", dee, "Bears — trader")
        self.wait(lambda d: sorted(self.team_members("Bears")) == sorted([[cal, "Trader"], [dee, "Trader"]]))
        self.assertEqual(sorted(self.team_members("Bulls")), sorted([[ava, "Trader"], [ben, "Viewer"]]))
        teams = {team["name"]: team for team in call(f"/api/leagues/{league}/teams", token=host_token)}
        bulls = teams["Bulls"]["portfolioId"]
        # Each team's standing shows on its card.
        self.find("#team-list li.team[data-team='Bulls'] .team-standing")
        self.shot_sizes("teams-02-host-teams", "#teams")

        # The trader: her team on the league page, its portfolio as "Team: Bulls".
        self.fresh_session()
        self.sign_in(*credentials["Ava Stone"])
        self.go(f"#/leagues/{league}")
        self.text_in("#my-team-role", "You are a trader on Bulls")
        self.text_in("#my-teammates", f"{ben} · viewer")
        self.shot_sizes("teams-03-my-team", "#teams")
        self.go(f"#/stock/AAPL?portfolio={bulls}")
        self.click("#buy")
        chosen = Select(self.find("#trade-portfolio")).first_selected_option.text
        self.assertEqual(chosen, "Team: Bulls")
        self.assertFalse(driver.find_element(By.ID, "trade-viewer").is_displayed())
        quantity = self.find("#trade-quantity")
        quantity.clear()
        quantity.send_keys("3")
        self.click("#trade-confirm")
        self.text_in("#flash", "Bought 3 AAPL")
        self.text_in("#flash", "in the team “Bulls”")
        ava_token = login(*credentials["Ava Stone"])
        call("/api/orders", {"symbol": "AAPL", "side": "buy", "quantity": 1, "type": "limit", "limitPrice": "1.00",
                             "timeInForce": "gtc", "portfolioId": bulls}, ava_token)
        self.go(f"#/portfolio?id={bulls}")
        self.text_in("#team-portfolio", "The team “Bulls”")
        self.text_in("#team-portfolio", "you trade it")
        self.go(f"#/transactions?id={bulls}")
        self.wait(lambda d: self.rows("main")[:1] and self.rows("main")[0][-1] == "you")
        self.sign_out()

        # The viewer: the portfolio shown, with what he may not do; the dialog says so and
        # does not send; forced, the server refuses in its words.
        self.sign_in(*credentials["Ben Okafor"])
        self.go("#/portfolio")
        self.text_in("#team-portfolio", "You watch this team's portfolio; its traders trade it.")
        self.assertIn("AAPL", self.find("main table").text)
        self.shot_sizes("teams-04-viewer-portfolio")
        self.go(f"#/stock/AAPL?portfolio={bulls}")
        self.click("#buy")
        self.text_in("#trade-viewer", "You watch this team's portfolio; its traders trade it.")
        self.assertFalse(self.find("#trade-confirm").is_enabled())
        self.shot_sizes("teams-05-viewer-trade", "screen")
        driver.execute_script("document.getElementById('trade-confirm').disabled = false")
        self.click("#trade-confirm")
        self.text_in("#trade-error", "You watch this team's portfolio; its traders trade it.")
        self.click("#trade-dialog-cancel")
        with self.assertRaises(urllib.error.HTTPError) as refused:
            call("/api/stock/buy", {"symbol": "AAPL", "amount": 1, "portfolioId": bulls}, login(*credentials["Ben Okafor"]))
        self.assertEqual(refused.exception.code, 403)
        self.assertEqual(json.loads(refused.exception.read())["code"], "not_a_trader")
        # His orders page: the team's open order, who placed it, and no Cancel.
        self.go(f"#/orders?id={bulls}")
        self.text_in("#team-orders", "You watch this team's portfolio")
        self.wait(lambda d: len(self.rows("#open-orders")) == 1)
        self.assertIn(ava, self.rows("#open-orders")[0])
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#open-orders button, #cancel-all"), [])
        self.shot_sizes("teams-06-viewer-orders")
        # The history says who placed the trade.
        self.go(f"#/transactions?id={bulls}")
        self.text_in("#team-history", "each trade says who placed it")
        self.wait(lambda d: self.rows("main")[:1] and self.rows("main")[0][-1] == ava)
        self.shot_sizes("teams-07-history")

        # The leaderboard ranks teams, each with its members; his team is marked.
        self.go(f"#/leagues/{league}")
        self.text_in("#my-team-role", "You are a viewer on Bulls")
        self.wait(lambda d: len(self.rows("#standings")) == 2)
        board = {row[1].splitlines()[0]: row[1] for row in self.rows("#standings")}
        self.assertEqual(set(board), {"Bulls your team", "Bears"})
        self.assertIn(f"{ava}, {ben}", board["Bulls your team"])
        self.assertIn(cal, board["Bears"])
        self.assertIn(dee, board["Bears"])
        self.assertEqual(self.find("#standings th.player").text, "Team")
        self.shot_sizes("teams-08-standings", "#league-board")
        self.sign_out()

        # The host's whole page: the class, the teams with their standings, the board of teams.
        self.sign_in(host)
        self.go(f"#/leagues/{league}")
        self.find("#team-list li.team[data-team='Bears']")
        self.wait(lambda d: len(self.rows("#standings")) == 2)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#standings [data-kick], #my-resets"), [])
        self.shot_sizes("teams-09-host-class", "#class")
        self.shot_sizes("teams-10-host-page")
        self.sign_out()


if __name__ == "__main__":
    unittest.main(verbosity=2)
