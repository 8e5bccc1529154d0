"""Browser tests of running a class and of a player's own account: a host's class roster
(logins made from pasted names, printed as cards, a student logging in with them, a new
password, an erased student), who has not traded yet, the join code and link copied and
the join sheet printed, the league's audit log and the admin's, a league's retention of
its class logins, and a player downloading their data and erasing their account.

Run by scripts/test-browser with the other suites (test_web_client.py imports this
module's tests), or alone once a server is up:

    MOCKSTOCK_URL=http://127.0.0.1:18091 python3 Tests/browser/test_class_and_account.py

Each new screen is saved at a desktop's and a phone's size (class-*-desktop.png,
class-*-phone.png), and the printed sheets as the printer gets them (class-*-print.png).
"""
import base64
import json
import os
import urllib.error
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from support import ADMIN, BASE, PASSWORD, SCREENSHOTS, BrowserTest, call, login

NAMES = ["Ana Lee", "José Núñez", "Mia Wong", "Sam Taylor", "Bartholomew-Alexander Smithers-Wolstenholme"]
DESKTOP = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}

# What is displayed once the page is printed: whether the page's own parts are hidden,
# and the print area shown.
PRINTED = """
const shown = (element) => element && getComputedStyle(element).display !== 'none';
return {
  page: ['header.top', 'main', '#flash'].filter((css) => shown(document.querySelector(css))),
  area: shown(document.getElementById('print-area')),
  cards: [...document.querySelectorAll('#print-area .login-card')].map((card) => card.innerText),
  sheet: document.querySelector('#print-area .join-sheet')?.innerText ?? null,
};
"""


def login_fails(username, password):
    """Whether the server refuses the username and password (401)."""
    try:
        login(username, password)
    except urllib.error.HTTPError as error:
        return error.code == 401
    return False


class ClassAndAccountTest(BrowserTest):
    """A host with a class of five, an admin reading the audit log, and a player who leaves."""

    # Helpers

    def accept(self, *words):
        alert = self.wait(EC.alert_is_present())
        for text in words:
            self.assertIn(text, alert.text)
        alert.accept()

    def rows(self, css):
        return self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map((row) => [...row.cells].map((c) => c.innerText.trim()))", css)

    def capture(self, name, css=None):
        """The page (or the box at `css`, from its top to its bottom), beyond the screen;
        with `css` "screen", what the screen shows (a dialog over the page)."""
        if css == "screen":
            self.driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}.png"))
            return
        if css:
            box = self.driver.execute_script(
                "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                "return {y: r.top + window.scrollY, height: r.height}", css)
            width = self.driver.execute_script("return document.documentElement.clientWidth")
            clip = {"x": 0, "y": max(0, box["y"] - 8), "width": width, "height": box["height"] + 16, "scale": 1}
        else:
            size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        image = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
        with open(os.path.join(SCREENSHOTS, f"{name}.png"), "wb") as file:
            file.write(base64.b64decode(image["data"]))

    def shot_sizes(self, name, css=None):
        """The screen at a desktop's size and at a phone's (390 px wide, where nothing may
        be wider than the screen), as name-desktop.png and name-phone.png."""
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"), timeout=20)
        for size, metrics in (("desktop", DESKTOP), ("phone", PHONE)):
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
            self.wait(lambda d: d.execute_script("return window.innerWidth") == metrics["width"])
            if size == "phone":
                width = self.driver.execute_script("return document.documentElement.scrollWidth")
                self.assertLessEqual(width, 390, f"{name} is {width}px wide on a phone")
            self.capture(f"{name}-{size}", css)
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def catch_print(self):
        """window.print counts its calls instead of opening the browser's dialog."""
        self.driver.execute_script("window.printed = 0; window.print = () => { window.printed += 1; }")

    def printed(self, name):
        """What a printer gets of the page (print media emulated), saved as name-print.png."""
        self.assertEqual(self.driver.execute_script("return window.printed"), 1, "the print dialog was not asked for once")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        try:
            shown = self.driver.execute_script(PRINTED)
            self.capture(f"{name}-print")
        finally:
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        self.assertEqual(shown["page"], [], "the page itself is printed")
        self.assertTrue(shown["area"], "the sheet is not printed")
        self.catch_print()
        return shown

    def download_folder(self):
        folder = os.path.abspath(os.path.join(SCREENSHOTS, "downloads"))
        os.makedirs(folder, exist_ok=True)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
        return folder

    # The journeys

    def test_class_roster(self):
        """A host creates a league that erases its class logins 30 days after it ends, pastes
        five names and gets five logins (printed as cards: the print shows the cards alone),
        copies the code and the link and prints the join sheet; a student logs in with the
        printed card and sees their name; one trades and leaves the "not traded yet" list;
        the host gives another a new password (the old one fails, the new one works) and
        erases a third (gone from the lists, the login refused); the audit log lists it all."""
        driver = self.driver
        self.fresh_session()
        host = f"class_host_{self.suffix}"
        self.sign_in(host, register=True)
        self.go("#/leagues")
        self.find("#league-name").send_keys("Economics 10C")
        Select(self.find("#league-mode")).select_by_value("isolated")
        self.click("#league-host-only")
        self.find("#league-delete-after").send_keys("30")
        self.shot_sizes("class-01-create", "#create-league")
        self.click_centered("#create-league button[type='submit']")
        self.text_in("#flash", "League “Economics 10C” created")
        league_url = driver.current_url
        league = int(league_url.rsplit("/", 1)[1])
        code = self.find("#league-code").text
        # The retention shows on the league and in the host's settings.
        self.text_in("#league-class-logins", "30 days after the end")
        self.assertEqual(self.find("#settings-delete-after").get_attribute("value"), "30")
        self.assertEqual(call(f"/api/leagues/{league}", token=login(host, PASSWORD))["deleteManagedAfterDays"], 30)

        # The class: nobody yet; the server listens on loopback, so the link is this
        # browser's address, with a note saying how to serve a class.
        self.text_in("#not-traded", "No members yet.")
        self.text_in("#students", "No class logins yet")
        link = f"{BASE}/join/{code}"
        self.assertEqual(self.find("#invite .join-link").text, link)
        self.text_in("#loopback-note", "HOST=0.0.0.0")
        self.text_in("#loopback-note", "“Serving a class” in the README")

        # The code and the link copied: the clipboard holds them.
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": BASE, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        clipboard = "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('unreadable: ' + e))"
        self.click_centered("#copy-code")
        self.text_in("#copy-status", "Copied the join code.")
        self.assertEqual(driver.execute_async_script(clipboard), code)
        self.click_centered("#copy-link")
        self.text_in("#copy-status", "Copied the join link.")
        self.assertEqual(driver.execute_async_script(clipboard), link)
        # The join sheet: the league, its code in large letters, the link.
        self.catch_print()
        self.click_centered("#print-join-sheet")
        sheet = self.printed("class-02-join-sheet")["sheet"]
        for text in ("Economics 10C", code, link):
            self.assertIn(text, sheet)

        # Five names pasted make five logins, shown once, with a warning.
        self.find("#roster-names").send_keys("\n".join(NAMES) + "\n\n")
        self.click_centered("#roster-create")
        self.text_in("#roster-result", "5 logins made")
        self.text_in("#roster-result", "they are shown only this once")
        logins = self.rows("#roster-result")
        self.assertEqual([row[0] for row in logins], NAMES)
        self.assertEqual(len({row[1] for row in logins}), 5)
        credentials = {name: (username, password) for name, username, password in logins}
        self.wait(lambda d: len(self.rows("#students")) == 5)
        self.text_in("#league-members", "5")
        self.shot_sizes("class-03-logins", "#class")
        # Printed: one card per student, and nothing of the page.
        self.click_centered("#print-cards")
        cards = self.printed("class-04-cards")["cards"]
        self.assertEqual(len(cards), 5)
        for card, (name, (username, password)) in zip(cards, credentials.items()):
            for text in ("Economics 10C", name, username, password, code):
                self.assertIn(text, card)
        # Nobody has traded yet; the standings name each student and their username.
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#not-traded-list li")) == 5)
        ana, ana_password = credentials["Ana Lee"]
        self.text_in("#standings", f"Ana Lee ({ana})")

        # A student logs in with the printed card and sees their name.
        card = cards[0]
        printed_username = card.split("Username")[1].split()[0]
        printed_password = card.split("Password")[1].split()[0]
        self.assertEqual((printed_username, printed_password), (ana, ana_password))
        self.fresh_session()
        self.sign_in(printed_username, printed_password)
        self.text_in("#account-link", "Ana Lee")
        self.go("#/account")
        self.text_in("#account-name", "Ana Lee")
        self.text_in("#account-username", ana)
        self.text_in("#account-managed", "Your teacher made this login")
        self.shot_sizes("class-05-student-account")
        # On a phone, whose menu is folded, her name stands beside MockStock.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        self.text_in("#whoami", "Ana Lee")
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.sign_out()

        # She trades: she is no longer among those who have not.
        token = login(ana, ana_password)
        seat = next(p for p in call("/api/portfolios", token=token) if p["leagueId"] == league)
        call("/api/stock/buy", {"symbol": "KO", "amount": 1, "portfolioId": seat["id"]}, token)
        self.sign_in(host)
        driver.get(league_url)
        self.text_in("#not-traded-count", "4 members of 5 have not traded yet")
        self.assertNotIn("Ana Lee", self.find("#not-traded-list").text)
        self.assertEqual(self.rows("#students")[0][:3], ["Ana Lee", ana, "1"])

        # A new password for Mia: the old one fails, the new one works; a card to print.
        mia, mia_old = credentials["Mia Wong"]
        self.click_centered(f"button[data-password='{mia}']")
        self.accept(f"Give Mia Wong ({mia}) a new password?")
        self.text_in("#password-result", f"New password for Mia Wong ({mia})")
        mia_new = self.find("#new-password").text
        self.assertNotEqual(mia_new, mia_old)
        self.assertTrue(login_fails(mia, mia_old))
        self.assertTrue(login(mia, mia_new))
        self.shot_sizes("class-06-new-password", "#students")
        self.catch_print()
        self.click_centered("#print-card")
        cards = self.printed("class-07-card")["cards"]
        self.assertEqual(len(cards), 1)
        self.assertIn(mia_new, cards[0])

        # Sam erased, after a confirmation naming him: gone from the lists, his login refused.
        sam, sam_password = credentials["Sam Taylor"]
        self.click_centered(f"button[data-erase='{sam}']")
        self.wait(EC.alert_is_present()).dismiss()
        self.assertEqual(len(self.rows("#students")), 5)
        self.click_centered(f"button[data-erase='{sam}']")
        self.accept(f"Erase the account of Sam Taylor ({sam})?", "cannot be undone")
        self.text_in("#flash", f"The account of Sam Taylor ({sam}) was erased.")
        self.wait(lambda d: len(self.rows("#students")) == 4)
        self.assertNotIn("Sam Taylor", self.find("#students").text)
        self.wait(lambda d: "Sam Taylor" not in self.find("#standings").text)
        self.assertNotIn("Sam Taylor", self.find("#not-traded").text)
        self.text_in("#league-members", "4")
        self.assertTrue(login_fails(sam, sam_password))

        # The retention changed in the settings: kept (emptied) no longer shows.
        field = self.find("#settings-delete-after")
        field.clear()
        self.click_centered("#settings-save")
        self.text_in("#flash", "Settings of “Economics 10C” saved.")
        self.wait(lambda d: not d.find_elements(By.ID, "league-class-logins"))

        # The audit log, newest first: each of these actions, by whom and to whom.
        self.wait(lambda d: len(self.rows("#league-audit")) == 4)
        actions = driver.execute_script("return [...document.querySelectorAll('#league-audit [data-action]')].map((e) => e.dataset.action)")
        self.assertEqual(actions, ["league.update", "league.member_delete", "league.password_reset", "league.roster_create"])
        rows = self.rows("#league-audit")
        self.assertEqual(rows[0][2], "Changed the league's settings")
        self.assertEqual(rows[1][1:3], [host, "Erased a student's account"])
        self.assertEqual(rows[2][1:4], [host, "Gave a student a new password", f"Mia Wong ({mia})"])
        self.assertEqual(rows[3][2], "Created class logins")
        self.assertIn("students: 5", rows[3][4])
        self.shot_sizes("class-08-audit", "#audit")
        self.shot_sizes("class-09-host-page")
        self.sign_out()

    def test_admin_audit(self):
        """An admin's actions listed in the admin's audit log, filtered by action, actor and league."""
        self.fresh_session()
        self.sign_in(*ADMIN)
        self.go("#/admin")
        self.find("#quote-symbol").send_keys("KO")
        self.find("#quote-price").send_keys("61.25")
        self.click_centered("#quote-form button[type='submit']")
        self.text_in("#quote-result", "KO now trades at 61.25")
        self.find("#broadcast-title").send_keys("Markets open late")
        self.click_centered("#broadcast-form button[type='submit']")
        self.text_in("#broadcast-result", "Sent.")
        self.driver.refresh()
        self.wait(lambda d: len(self.rows("#admin-audit")) >= 2)
        self.assertEqual(self.rows("#admin-audit")[0][2], "Told everyone")
        Select(self.find("#audit-action")).select_by_value("admin.quotes")
        self.click_centered("#audit-filters button[type='submit']")
        self.wait(lambda d: set(d.execute_script("return [...document.querySelectorAll('#admin-audit [data-action]')].map((e) => e.dataset.action)")) == {"admin.quotes"})
        self.assertIn("symbols: KO", self.rows("#admin-audit")[0][5])
        self.shot_sizes("class-10-admin-audit", "#audit")
        # By actor: a player who never acted has nothing.
        player = call("/api/auth/register", {"username": f"quiet_{self.suffix}", "password": PASSWORD})["user"]["id"]
        Select(self.find("#audit-action")).select_by_value("")
        self.find("#audit-actor").send_keys(str(player))
        self.click_centered("#audit-filters button[type='submit']")
        self.text_in("#admin-audit", "No action matches these filters.")
        self.sign_out()

    def test_account(self):
        """A player downloads their data, then erases their account: a wrong password is
        refused in the server's words, the right one logs out to the login page, which
        says so; the login is refused, and the username can be registered again."""
        driver = self.driver
        self.fresh_session()
        player = f"leaver_{self.suffix}"
        self.sign_in(player, register=True)
        token = driver.execute_script("return sessionStorage.getItem('mockstock.token')")
        me = call("/api/me", token=token)
        self.assertIsNone(me["displayName"])
        self.go("#/account")
        self.text_in("#account-username", player)
        self.assertEqual(driver.find_elements(By.ID, "account-managed"), [])
        self.assertFalse(driver.find_element(By.ID, "whoami").is_displayed())
        self.assertEqual(self.find("#account-link").text, "Account")
        self.shot_sizes("class-11-account")

        # Her data, saved as the server names it.
        folder = self.download_folder()
        saved = os.path.join(folder, f"mockstock-account-{me['id']}.json")
        if os.path.exists(saved):
            os.remove(saved)
        self.click_centered("#export-download")
        self.text_in("#export-status", f"Downloaded mockstock-account-{me['id']}.json.")
        self.wait(lambda d: os.path.exists(saved) and not any(n.endswith(".crdownload") for n in os.listdir(folder)), timeout=10)
        with open(saved, encoding="utf-8") as file:
            data = json.load(file)
        self.assertEqual(data["user"]["username"], player)
        self.assertTrue(any(p["kind"] == "personal" for p in data["portfolios"]))

        # A wrong password erases nothing; the right one erases the account.
        self.click_centered("#erase-open")
        self.find("#erase-password").send_keys("not my password")
        self.click("#erase-confirm")
        self.text_in("#erase-error", "The password is wrong; the account was not erased.")
        self.shot_sizes("class-12-erase-dialog", "screen")
        self.assertTrue(login(player, PASSWORD))
        field = self.find("#erase-password")
        field.clear()
        field.send_keys(PASSWORD)
        self.click("#erase-confirm")
        self.find("#auth-form")
        self.text_in("#flash", "Your account was erased")
        self.shot_sizes("class-13-erased")
        self.assertTrue(login_fails(player, PASSWORD))
        # The username is free again.
        self.sign_in(player, register=True)
        self.assertNotEqual(call("/api/me", token=login(player, PASSWORD))["id"], me["id"])
        self.sign_out()


if __name__ == "__main__":
    unittest.main(verbosity=2)
