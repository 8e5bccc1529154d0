"""The rule check (scripts/check-rules) passes on the tree as it is and fails on each kind
of restatement planted in a copy of it: a rule written out again outside its owner, an
owner file that is gone, a test named in the table that does not exist.

    python3 -m unittest Tests/rules/test_check_rules.py     (make test runs it)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(ROOT, "scripts", "check-rules")
COPIED = ("Sources", "sql", "Public", "Tests", "docs/rules.md")


def run(root):
    result = subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


class CheckRulesTests(unittest.TestCase):
    def setUp(self):
        self.tree = tempfile.mkdtemp(prefix="check-rules-")
        for part in COPIED:
            source, target = os.path.join(ROOT, part), os.path.join(self.tree, part)
            if os.path.isdir(source):
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(".build", "__pycache__"))
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy(source, target)

    def tearDown(self):
        shutil.rmtree(self.tree)

    def append(self, path, text):
        with open(os.path.join(self.tree, path), "a", encoding="utf-8") as f:
            f.write(text)

    def test_the_tree_keeps_its_rules(self):
        status, output = run(self.tree)
        self.assertEqual(status, 0, output)
        self.assertIn("each tell-tale only in its owner", output)

    def test_a_running_league_written_out_again_fails(self):
        self.append("Sources/MockStock/Leagues/StandingsStore.swift",
                    '\nlet planted = "SELECT id FROM leagues WHERE finished_at IS NULL AND starts_at <= now()"\n')
        status, output = run(self.tree)
        self.assertEqual(status, 1, output)
        self.assertIn("Sources/MockStock/Leagues/StandingsStore.swift:", output)
        self.assertIn("Whether a league has been finished", output)
        self.assertIn("Whether a league runs", output)
        self.assertIn("its owner is sql/functions/league_finished.sql", output)

    def test_a_market_day_in_sql_text_fails_in_any_case(self):
        self.append("sql/functions/money_text.sql", "\nSELECT (now() at time zone 'America/New_York')::date;\n")
        status, output = run(self.tree)
        self.assertEqual(status, 1, output)
        self.assertIn("sql/functions/money_text.sql:", output)
        self.assertIn("tell-tale `AT TIME ZONE`", output)
        self.assertIn("tell-tale `America/New_York`", output)

    def test_money_formatted_by_hand_in_a_notice_fails(self):
        self.append("Sources/MockStock/Leagues/StandingsStore.swift",
                    "\nlet planted = \"'You won ' || to_char(net_worth, 'FM999G990D00')\"\n")
        status, output = run(self.tree)
        self.assertEqual(status, 1, output)
        self.assertIn("An amount of money in a notification's words", output)

    def test_the_same_text_in_its_owner_or_in_a_comment_passes(self):
        self.append("sql/functions/market_day.sql", "\n-- (p_at AT TIME ZONE p_zone) explained\n")
        self.append("Sources/MockStock/Leagues/StandingsStore.swift", "\n/// Not `finished_at IS NULL`: league_finished.\n")
        status, output = run(self.tree)
        self.assertEqual(status, 0, output)

    def test_a_missing_owner_or_test_fails(self):
        os.remove(os.path.join(self.tree, "sql/functions/league_running.sql"))
        with open(os.path.join(self.tree, "docs/rules.md"), encoding="utf-8") as f:
            rules = f.read()
        with open(os.path.join(self.tree, "docs/rules.md"), "w", encoding="utf-8") as f:
            f.write(rules.replace("`activityCursor`", "`noSuchTestAnywhere`"))
        status, output = run(self.tree)
        self.assertEqual(status, 1, output)
        self.assertIn("its owner sql/functions/league_running.sql does not exist", output)
        self.assertIn("its test noSuchTestAnywhere is not under Tests/", output)


if __name__ == "__main__":
    unittest.main()
