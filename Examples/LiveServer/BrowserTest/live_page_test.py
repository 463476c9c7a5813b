#!/usr/bin/env python3
"""The example server's live page in a real browser (headless Chromium driven by Selenium).

Starts the example server against a real PostgreSQL, changes rows with psql, edits names in two
pages, restarts the server, and checks what each page shows. Prints one line per check with its
timing, and exits with 0 only when every check held. Run by the Swift test
`ExampleServerBrowserTests`, which gives the arguments.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

HOSTILE = "<img src=x onerror=alert(1)>"


class CheckFailed(Exception):
    pass


# How many times longer than stated every wait may take: the Swift test, which runs beside the
# whole suite on a loaded machine, passes a larger factor; the timings printed stay honest.
PATIENCE = float(os.environ.get("LIVE_PAGE_PATIENCE", "1"))


def wait_until(what, condition, timeout):
    """Seconds until `condition()` is truthy, polling; CheckFailed after `timeout` seconds (times
    PATIENCE)."""
    timeout *= PATIENCE
    start = time.monotonic()
    while True:
        if condition():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise CheckFailed(f"{what}: not within {timeout} s")
        time.sleep(0.02)


class Database:
    def __init__(self, psql, url):
        self.psql, self.url = psql, url

    def run(self, sql):
        subprocess.run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c", sql],
                       check=True, capture_output=True)

    def rows(self, sql):
        out = subprocess.run([self.psql, "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c", sql],
                             check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def people(self):
        """[(id, name)] in the server's order: by name (code points), then id."""
        return sorted(((int(i), n) for i, n in self.rows("SELECT id, name FROM people")), key=lambda p: (p[1], p[0]))

    def id_of(self, name):
        return int(self.rows(f"SELECT id FROM people WHERE name = '{name}'")[0][0])

    def open_session(self):
        """A psql session reading statements from its standard input."""
        return subprocess.Popen([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)


class Server:
    def __init__(self, binary, url, port):
        self.binary, self.url, self.port, self.process = binary, url, port, None
        self.base = f"http://127.0.0.1:{port}"

    def start(self):
        env = dict(os.environ, DATABASE_URL=self.url, PORT=str(self.port), LOG_LEVEL="warning")
        self.process = subprocess.Popen([self.binary], env=env)
        wait_until("the server answers", self.answers, 60)

    def answers(self):
        try:
            with urllib.request.urlopen(f"{self.base}/people", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=30)
        if status != 0:
            raise CheckFailed(f"the server exited with {status} on SIGTERM")


class Page:
    """One browser with the page open."""

    def __init__(self, chromium, chromedriver, url):
        options = Options()
        options.binary_location = chromium
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=820,640", "--force-device-scale-factor=1", "--hide-scrollbars"]:
            options.add_argument(argument)
        self.driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
        self.driver.get(url)

    def shown(self):
        """[(id, name)] as the page lists them."""
        return [(int(i), n) for i, n in self.driver.execute_script(
            "return [...document.querySelectorAll('#people li')].map(li => [li.dataset.id, li.querySelector('input').value])")]

    def status(self):
        return self.driver.execute_script("return document.getElementById('status').dataset.state")

    def text(self, element_id):
        return self.driver.execute_script(
            "const e = document.getElementById(arguments[0]); return e.hidden ? null : e.textContent", element_id)

    def edit(self, person_id, name):
        field = self.driver.find_element(By.CSS_SELECTOR, f'li[data-id="{person_id}"] input.name')
        field.click()
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(Keys.DELETE)
        if name:
            field.send_keys(name)
        field.send_keys(Keys.ENTER)

    def alert_shown(self):
        try:
            self.driver.switch_to.alert
            return True
        except NoAlertPresentException:
            return False

    def quit(self):
        self.driver.quit()


def main():
    parser = argparse.ArgumentParser()
    for name in ["server", "database-url", "psql", "port", "chromium", "chromedriver", "screenshot"]:
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()

    database = Database(args.psql, args.database_url)
    server = Server(args.server, args.database_url, int(args.port))
    results, pages = [], []

    def check(name, body):
        start = time.monotonic()
        try:
            detail = body()
            results.append(True)
            print(f"ok    {name} ({detail if detail else f'{time.monotonic() - start:.2f} s'})", flush=True)
        except Exception as error:  # noqa: BLE001 — every failure is reported, and the run goes on
            results.append(False)
            print(f"FAIL  {name}: {type(error).__name__}: {error}", flush=True)

    try:
        server.start()
        database.run("INSERT INTO people (name) VALUES ('Ada Lovelace'), ('Grace Hopper'), ('Alan Turing'), ('Katherine Johnson')")
        database.run("INSERT INTO addresses (person_id, position, street, id) "
                     "SELECT id, 0, street, gen_random_uuid() FROM people JOIN (VALUES ('Ada Lovelace', '12 St James''s Square'), "
                     "('Grace Hopper', 'Arlington, Virginia'), ('Alan Turing', 'Wilmslow')) AS a(person, street) ON name = person")
        def content_security_policy():
            nonces = []
            for _ in range(2):
                with urllib.request.urlopen(server.base + "/", timeout=10) as response:
                    policy, html = response.headers["Content-Security-Policy"], response.read().decode()
                nonce = policy.split("script-src 'nonce-")[1].split("'")[0]
                if "default-src 'none'" not in policy or f"style-src 'nonce-{nonce}'" not in policy or html.count(f'nonce="{nonce}"') != 2 or "{{nonce}}" in html:
                    raise CheckFailed(f"the policy {policy!r} does not name the page's nonce")
                nonces.append(nonce)
            if nonces[0] == nonces[1]:
                raise CheckFailed("two responses had the same nonce")
        check("the page comes with a Content-Security-Policy naming its own fresh nonce", content_security_policy)

        a = Page(args.chromium, args.chromedriver, server.base + "/")
        pages.append(a)

        def renders():
            wait_until("page A lists everyone in order", lambda: a.shown() == database.people(), 10)
            wait_until("page A says live", lambda: a.status() == "live", 10)
        check("the list renders, ordered by name, and says live", renders)

        def appears(what, sql, highlighted=None):
            def body():
                database.run(sql)
                expected = database.people()
                took = wait_until(what, lambda: a.shown() == expected, 2)
                if highlighted and not a.driver.execute_script(
                        f"return document.querySelector('li[data-id=\"{highlighted}\"]').classList.contains('changed')"):
                    raise CheckFailed("the renamed row is not highlighted")
                return f"{took:.2f} s after psql returned"
            return body
        ada = database.id_of("Ada Lovelace")
        check("a psql UPDATE appears within 2 s, highlighted",
              appears("the rename", f"UPDATE people SET name = 'Augusta Ada King' WHERE id = {ada}", highlighted=ada))
        check("a psql INSERT appears within 2 s", appears("the new person", "INSERT INTO people (name) VALUES ('Barbara Liskov')"))
        check("a psql DELETE appears within 2 s", appears("the removal", "DELETE FROM people WHERE name = 'Alan Turing'"))

        b = Page(args.chromium, args.chromedriver, server.base + "/")
        pages.append(b)
        grace = database.id_of("Grace Hopper")

        def edit_in_a_shows_in_b():
            wait_until("page B lists everyone", lambda: b.shown() == database.people(), 10)
            a.edit(grace, "Rear Admiral Grace Hopper")
            took = wait_until("page B shows page A's edit", lambda: (grace, "Rear Admiral Grace Hopper") in b.shown(), 5)
            # The server's live list shows a PATCH's edit as it is written (local first): the
            # commit may come a moment after page B shows it.
            wait_until("the database holds the edit", lambda: database.rows(
                f"SELECT name FROM people WHERE id = {grace}")[0][0] == "Rear Admiral Grace Hopper", 5)
            return f"{took:.2f} s from Enter in A to B"
        check("an edit in page A appears in page B", edit_in_a_shows_in_b)

        def commit_behind_waiting_edits(updates, edits):
            """psql runs `updates` in a transaction, page A makes `edits` [(id, name)], each PATCH
            waits for its row, then psql commits: every edit meets a newer commit."""
            session = database.open_session()
            try:
                session.stdin.write("BEGIN;\n" + "".join(f"{update};\n" for update in updates))
                session.stdin.flush()
                wait_until("psql holds the rows", lambda: database.rows(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'")[0][0] == "1", 10)
                for person_id, name in edits:
                    a.edit(person_id, name)
                wait_until("the PATCHes wait for their rows", lambda: database.rows(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")[0][0] == str(len(edits)), 10)
                session.stdin.write("COMMIT;\n")
                session.stdin.close()
                session.wait(timeout=10)
            finally:
                if session.poll() is None:
                    session.kill()

        def conflict():
            commit_behind_waiting_edits([f"UPDATE people SET name = 'Grace Brewster Murray' WHERE id = {grace}"], [(grace, "Amazing Grace")])
            took = wait_until("page A shows the 409", lambda: a.text("conflict") is not None, 10)
            ours, theirs = a.text("conflict-ours"), a.text("conflict-theirs")
            if (ours, theirs) != ("Amazing Grace", "Grace Brewster Murray"):
                raise CheckFailed(f"the conflict shows yours {ours!r}, theirs {theirs!r}")
            a.driver.find_element(By.ID, "keep-ours").click()
            wait_until("both pages show the kept name", lambda: (grace, "Amazing Grace") in a.shown() and (grace, "Amazing Grace") in b.shown(), 5)
            wait_until("the database holds the kept name", lambda: database.rows(
                f"SELECT name FROM people WHERE id = {grace}")[0][0] == "Amazing Grace", 5)
            return f"409 shown {took:.2f} s after COMMIT; 'Keep yours' written and shown in both"
        check("a conflicting edit shows the 409 with both values, and one can be kept", conflict)

        def later_change_wins_over_the_answer():
            # A stranger's run: psql's rename reached the page before the PATCH's answer, which
            # then showed the older name for good. A slow network makes the answer come last.
            barbara = database.id_of("Barbara Liskov")
            a.driver.execute_cdp_cmd("Network.enable", {})
            a.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
                "offline": False, "latency": 1500, "downloadThroughput": -1, "uploadThroughput": -1})
            try:
                a.edit(barbara, "Barbara, from page A")
                wait_until("the database holds the page's edit", lambda: database.rows(
                    f"SELECT name FROM people WHERE id = {barbara}")[0][0] == "Barbara, from page A", 10)
                database.run(f"UPDATE people SET name = 'Barbara Liskov, from psql' WHERE id = {barbara}")
                wait_until("page B shows psql's rename", lambda: (barbara, "Barbara Liskov, from psql") in b.shown(), 10)
                wait_until("the PATCH is answered", lambda: a.driver.execute_script(
                    "return document.querySelector('li.saving') === null"), 10)
            finally:
                a.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
                    "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
            took = wait_until("page A shows psql's later rename", lambda: (barbara, "Barbara Liskov, from psql") in a.shown(), 5)
            return f"shown {took:.2f} s after the answer"
        check("a rename arriving while the page's own edit is answered slowly stays shown", later_change_wins_over_the_answer)

        def second_conflict_sets_the_first_aside():
            barbara = database.id_of("Barbara Liskov, from psql")
            commit_behind_waiting_edits([f"UPDATE people SET name = 'Grace, by psql' WHERE id = {grace}",
                                         f"UPDATE people SET name = 'Barbara, by psql' WHERE id = {barbara}"],
                                        [(grace, "Grace, from page A"), (barbara, "Barbara, again from page A")])
            wait_until("page A says one edit was set aside", lambda: "set aside for a newer conflict" in (a.text("message") or ""), 10)
            open_on = int(a.driver.execute_script("return document.getElementById('conflict').dataset.id"))
            aside = barbara if open_on == grace else grace
            theirs = {grace: "Grace, by psql", barbara: "Barbara, by psql"}
            wait_until("the row set aside shows the database's name", lambda: (aside, theirs[aside]) in a.shown(), 5)
            a.driver.find_element(By.ID, "keep-theirs").click()
            wait_until("page A shows the database for both", lambda: a.shown() == database.people(), 5)
            return "one dialog, the other row following the database again, and a message"
        check("a second conflict sets the first aside, saying so", second_conflict_sets_the_first_aside)

        def line_break_not_lost():
            # A one-line field drops line breaks: saving what it shows would lose them.
            database.run("INSERT INTO people (name) VALUES (E'Line\\nBreak')")
            broken = int(database.rows("SELECT id FROM people WHERE name = E'Line\\nBreak'")[0][0])
            try:
                wait_until("page A lists the name", lambda: any(i == broken for i, _ in a.shown()), 5)
                if not a.driver.execute_script(f"return document.querySelector('li[data-id=\"{broken}\"] input').readOnly"):
                    raise CheckFailed("the field offers the name for editing")
                a.edit(broken, "Typed over")
                if database.rows(f"SELECT name = E'Line\\nBreak' FROM people WHERE id = {broken}")[0][0] != "t":
                    raise CheckFailed("the name lost its line break")
            finally:  # the later checks compare the page with psql's one-line rows
                database.run(f"DELETE FROM people WHERE id = {broken}")
            wait_until("page A drops the row", lambda: all(i != broken for i, _ in a.shown()), 5)
            return "shown read-only; typing over it changes nothing"
        check("a name holding a line break is not offered for editing, so none is lost", line_break_not_lost)

        def hostile_name_is_text():
            katherine = database.id_of("Katherine Johnson")
            a.edit(katherine, HOSTILE)
            wait_until("page B shows the name", lambda: (katherine, HOSTILE) in b.shown(), 5)
            for page in (a, b):
                if page.driver.find_elements(By.CSS_SELECTOR, "#people img") or page.alert_shown():
                    raise CheckFailed("the name was taken as markup")
            wait_until("the database holds the name as typed", lambda: database.rows(
                f"SELECT name FROM people WHERE id = {katherine}")[0][0] == HOSTILE, 5)
            return "shown as its characters in both pages, no element, no alert"
        check(f"a name {HOSTILE} shows as text", hostile_name_is_text)

        def bad_request_message():
            a.edit(ada, "")
            wait_until("page A shows the 400's message", lambda: a.text("message") == "400: a name cannot be empty", 5)
            wait_until("the field shows the name again", lambda: (ada, "Augusta Ada King") in a.shown(), 5)
        check("a 4xx shows its message", bad_request_message)

        def restart():
            server.stop()
            wait_until("both pages say reconnecting", lambda: a.status() == "reconnecting" and b.status() == "reconnecting", 10)
            database.run(f"UPDATE people SET name = 'Ada, Countess of Lovelace' WHERE id = {ada}")
            database.run("INSERT INTO people (name) VALUES ('Edsger Dijkstra')")
            server.start()
            expected = database.people()
            took = wait_until("both pages converge", lambda: a.shown() == expected and b.shown() == expected
                              and a.status() == "live" and b.status() == "live", 15)
            return f"both live and converged {took:.2f} s after the server answered again"
        check("after a server restart both pages reconnect and show changes made while it was down", restart)

        def screenshot():
            a.driver.execute_script("document.activeElement.blur()")
            if not a.driver.save_screenshot(args.screenshot):
                raise CheckFailed("no screenshot")
            return args.screenshot
        check("a screenshot of page A", screenshot)
    except Exception as error:  # noqa: BLE001
        results.append(False)
        print(f"FAIL  setup: {type(error).__name__}: {error}", flush=True)
    finally:
        for page in pages:
            page.quit()
        if server.process and server.process.poll() is None:
            server.process.kill()
            server.process.wait()
    held = sum(results)
    print(f"browser checks: {held} of {len(results)} held", flush=True)
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
