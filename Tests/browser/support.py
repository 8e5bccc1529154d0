"""What every browser test of the web client shares: the server's address and admin, the
API called directly (as something the page did not do), a headless Chromium, and a test
case with the waiting helpers. The suites run through scripts/test-browser, which starts
PostgreSQL and a server with the demo market seeded with `--recent` and sets
MOCKSTOCK_URL, MOCKSTOCK_ADMIN_USERNAME/PASSWORD and SCREENSHOTS.
"""
import csv
import gzip
import json
import os
import secrets
import time
import unittest
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import ElementClickInterceptedException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

BASE = os.environ.get("MOCKSTOCK_URL", "http://127.0.0.1:18091")
SCREENSHOTS = os.environ.get("SCREENSHOTS", ".build/screenshots")
ADMIN = (os.environ.get("MOCKSTOCK_ADMIN_USERNAME", "admin"), os.environ.get("MOCKSTOCK_ADMIN_PASSWORD", "admin-password"))
PASSWORD = "browser password"
DATA = os.path.join(os.path.dirname(__file__), "../../data")


def call(path, body=None, token=None, method=None):
    """A request through the API; the parsed answer."""
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{BASE}{path}", data=data, headers=headers, method=method or ("GET" if body is None else "POST"))
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read()
        return json.loads(text) if text else None


def price_followups_done(timeout=30.0):
    """Waits until the server has followed up every stored price (corporate actions, the
    orders it crosses): its `price_followups_pending` gauge reads 0."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{BASE}/metrics", timeout=10) as response:
            lines = response.read().decode().splitlines()
        if any(line.startswith("price_followups_pending ") and float(line.split()[1]) == 0 for line in lines):
            return
        time.sleep(0.01)
    raise AssertionError(f"prices not followed up after {timeout} s")


def login(username, password):
    return call("/api/auth/login", {"username": username, "password": password})["token"]


def month_first(day):
    """A YYYY-MM-DD day as typed into a date input, month first."""
    year, month, date = day.split("-")
    return f"{month}{date}{year}"


_moved = {}


def moved(day):
    """Where the server put a day of the demo prices file: seeded with `--recent`, it moves
    the file's trading days, in order, onto the trading days that end before today. Read
    from Apple's chart, which has every day of the file."""
    if not _moved:
        with gzip.open(os.path.join(DATA, "demo-prices-daily.csv.gz"), "rt") as file:
            original = sorted({row["date"] for row in csv.DictReader(file) if row["symbol"] == "AAPL"})
        shown = [point["date"] for point in call("/api/stock/AAPL/chart?range=5y", token=login(*ADMIN))["points"]]
        assert len(shown) == len(original), (len(shown), len(original))
        _moved.update(zip(original, shown))
    return _moved[day]


def make_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900", "--lang=en-US"):
        options.add_argument(argument)
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


class BrowserTest(unittest.TestCase):
    """One Chromium for the class; helpers that wait for the page instead of sleeping."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(SCREENSHOTS, exist_ok=True)
        cls.driver = make_driver()
        cls.suffix = secrets.token_hex(3)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()

    def wait(self, condition, timeout=15):
        return WebDriverWait(self.driver, timeout).until(condition)

    def find(self, css):
        return self.wait(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def click(self, css):
        element = self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, css)))
        element.click()
        return element

    def click_centered(self, css):
        """Clicks `css` once scrolled to the middle of the screen, clear of the toasts in
        the bottom corner (a first trade's achievement, say), or once they are gone when
        the page is too short to scroll it clear."""
        element = self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, css)))
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        try:
            element.click()
        except ElementClickInterceptedException:
            self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#toasts .toast"), timeout=20)
            element.click()
        return element

    def text_in(self, css, text, timeout=15):
        try:
            self.wait(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text), timeout)
        except TimeoutException:
            found = self.driver.find_elements(By.CSS_SELECTOR, css)
            self.fail(f"{css!r} never showed {text!r}; it shows {[e.text for e in found]!r}")

    def go(self, hash_route):
        self.driver.get(f"{BASE}/{hash_route}")

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}.png"))

    def table_texts(self, column=0):
        """The text of one column of the page's table, read in one go (pages re-render)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('main tbody tr')].map((row) => row.cells[arguments[0]]?.innerText.trim() ?? '')",
            column)

    def sign_in(self, username, password=PASSWORD, register=False):
        self.go("#/login")
        self.find("#auth-form")
        if register:
            self.click("#auth-switch")
            self.text_in("#auth-submit", "Create account")
        self.find("#username").send_keys(username)
        self.find("#password").send_keys(password)
        self.click("#auth-submit")
        try:
            self.wait(lambda d: "#/login" not in d.current_url)
        except TimeoutException:
            self.shot(f"failed-sign-in-{username}")
            raise

    def sign_out(self):
        self.click("#logout")
        self.find("#auth-form")

    def fresh_session(self):
        """A page with nobody signed in."""
        self.driver.get(f"{BASE}/")
        self.driver.execute_script("sessionStorage.clear()")
