"""Does a term run on JupyterHub as docs/grading.md says, in a real browser, with real Unix users?

``python -m autograder hub --test`` starts JupyterHub on 127.0.0.1 (an instructor and two students, each a
Unix user; the course's exchange; the students' image, the course from its wheel with no solutions/).
Debian's Chromium, driven by Playwright, then plays one assignment through:

* the instructor generates and releases 04 from formgrader;
* the first student logs in, fetches 04 on the Assignments page, answers ``sequence_probability`` right and
  ``expectation`` wrong, runs the notebook (each check's message shows), presses Validate and submits;
* the instructor collects in formgrader, runs ``python -m autograder grade submitted`` in a terminal of
  their server, gives the wrong exercise a point in formgrader, grades again and releases the feedback;
* the student fetches the feedback on the Assignments page and opens it: their score with the
  instructor's point, and the mistake named;
* the second student sees none of the first's files, in the browser or in a terminal, and runs 05 in
  their server on their own fetched 01-04 (the learner's pieces, autograder.pieces).

Along the way it measures what docs/grading.md quotes: the Hub's start, each server's start and memory,
and the time from a submission to its feedback. Needs root (it creates the users) and a Python every user
can run, like the exchange tests: tools/test-as-instructor.sh runs it with the ordinary user's install.
Screenshots go to $BROWSER_SCREENSHOTS/test_hub/ when set.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograder import pieces
from tests.browser.conftest import CHROMIUM_ARGS, keep_shot, require_chromium
from tests.builders import fill_in, free_port
from tests.course.unix import python_every_user_can_run, remove_users_made_by_this_run

pytestmark = [pytest.mark.hub, pytest.mark.browser, pytest.mark.slow, pytest.mark.nbgrader,
              pytest.mark.xdist_group("hub")]

TEACHER, FIRST, SECOND = "ag_hubteacher", "ag_hubstudent1", "ag_hubstudent2"
COURSE_ID = "transformer-math"
A4 = "04_softmax_and_probability"
A5 = "05_gradients_and_chain_rule"
EARLIER = sorted({p.assignment for p in pieces.NEEDS[A5]})  # what 05 builds on: 01 and 04
RIGHT = "def sequence_probability(cond_probs):\n    return float(np.prod(cond_probs))\n"
# a known mistake of tests/checks/test_nb04.py: the check names it "a plain average"
WRONG = ("def expectation(values, probs):\n    probs = np.asarray(probs)\n"
         "    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):\n"
         "        raise ValueError('not a distribution')\n"
         "    return float(np.mean(values))\n")
OVERRIDE_COMMENT = "Weight each value by its probability: sum(values * probs)."
START_TIMEOUT = 240  # seconds: the test term's image build and the Hub's start on 2 busy cores
SERVER_TIMEOUT_MS = 180_000
KERNEL_TIMEOUT_MS = 300_000
# How often a wait in the page asks again. Playwright's default for wait_for_function is every animation
# frame (60 a second): over a minute of Validate, Chromium renders thousands of frames for nothing.
POLL_MS = 250
NEWS = "@jupyterlab/apputils-extension:notification"  # the JupyterLab plugin whose settings hold the news feed
NEWS_QUESTION = "official Jupyter news"  # JupyterLab asks "Would you like to get notified about official Jupyter news?"


def shots_folder(tmp: Path) -> Path:
    env = os.environ.get("BROWSER_SCREENSHOTS")
    folder = Path(env) / "test_hub" if env else tmp / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _home(user: str) -> Path | None:
    import pwd
    try:
        return Path(pwd.getpwnam(user).pw_dir)
    except KeyError:
        return None


def _answer(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return None


class Hub:
    """``python -m autograder hub --test`` in its own process group, stopped (and every server with it) at the end."""

    def __init__(self, python: str, folder: Path):
        self.folder, self.port, self.password = folder, free_port(), "hub-" + secrets.token_hex(6)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "hub.log"
        cmd = [python, "-m", "autograder", "hub", "--test", "--dir", str(folder / "term"), "--port", str(self.port),
               "--instructor", TEACHER, "--students", f"{FIRST},{SECOND}", "--password", self.password,
               # arguments for jupyterhub: the test reads cells and kernels through JupyterLab's app object
               "--", '--Spawner.args=["--LabApp.expose_app_in_browser=True"]']
        env = {"PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
               "HOME": "/root", "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.monotonic()
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self.prepared = self.answered = None
        deadline = started + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the hub command exited {self.proc.returncode}:\n{self.text()[-4000:]}")
            if self.prepared is None and "Test term on" in self.text():
                self.prepared = time.monotonic() - started
            if self.prepared is not None and _answer(f"{self.url}/hub/api") == 200:
                self.answered = time.monotonic() - started
                return
            time.sleep(0.25)
        self.stop()
        raise AssertionError(f"the Hub did not answer {self.url} within {START_TIMEOUT} s:\n{self.text()[-4000:]}")

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # JupyterHub stops every server and its proxy
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def servers_of(user: str) -> list[int]:
    """Process ids of ``user``'s single-user server(s)."""
    import psutil
    return [p.pid for p in psutil.process_iter(["username", "cmdline"])
            if p.info["username"] == user and "jupyterhub.singleuser" in " ".join(p.info["cmdline"] or [])]


def hub_memory_mib(pid: int) -> float:
    """PSS of JupyterHub and its proxy in MiB (the users' servers, also its children, are counted apart)."""
    import psutil
    hub = psutil.Process(pid)
    proxy = [p for p in hub.children() if p.name() == "node"]
    return sum(p.memory_full_info().pss for p in (hub, *proxy)) / 2**20


def memory_mib(pid: int) -> tuple[float, float]:
    """(PSS of the server process, PSS of it and its kernels) in MiB: what the machine pays for one user."""
    import psutil
    proc = psutil.Process(pid)
    own = proc.memory_full_info().pss
    kids = sum(p.memory_full_info().pss for p in proc.children(recursive=True))
    return own / 2**20, (own + kids) / 2**20


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    python = python_every_user_can_run()
    require_chromium()
    for user in (TEACHER, FIRST, SECOND):  # each run starts a term afresh; the users may stay
        home = _home(user)
        if home and home.is_dir():
            for entry in home.iterdir():
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    folder = Path(tempfile.mkdtemp(prefix="ag-hub-"))
    folder.chmod(0o755)
    hub = Hub(python, folder)
    try:
        yield hub
    finally:
        hub.stop()
        shutil.rmtree(folder, ignore_errors=True)
        # the students the Hub made (those there before stay); not the teacher: tests/test_hub_command.py uses
        # ag_hubteacher too, in the main suite, which runs beside this phase of the test command
        remove_users_made_by_this_run(FIRST, SECOND)


# ------------------------------------------------------------------------------------------ the browser

JS_TERMINAL = """async ([base, command, timeoutMs]) => {
    // A terminal of this user's server, as JupyterLab opens one: its REST call, then its websocket.
    const xsrf = decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || '');
    const made = await fetch(`${base}api/terminals`, {method: 'POST', headers: {'X-XSRFToken': xsrf}});
    if (!made.ok) return {name: null, out: `POST api/terminals: ${made.status}`};
    const {name} = await made.json();
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}terminals/websocket/${name}`);
    let out = '';
    return await new Promise((resolve) => {
        const done = () => { ws.close(); resolve({name, out}); };
        const timer = setTimeout(done, timeoutMs);
        ws.onmessage = (event) => {
            const [kind, text] = JSON.parse(event.data);
            if (kind !== 'stdout') return;
            out += text;
            if (/DONE=\\d+/.test(out)) { clearTimeout(timer); done(); }
        };
        ws.onopen = () => ws.send(JSON.stringify(['stdin', command + '; echo DONE=$?\\r']));
    });
}"""

JS_KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return k ? k.status : 'no kernel';
}"""

# Run All has finished: the kernel is idle and either the last code cell ran or a cell stopped it with an error
# (the kernel is idle for a moment between two cells too, so the caller asks again until it holds a while).
JS_RUN_ALL_DONE = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    const k = w.sessionContext.session && w.sessionContext.session.kernel;
    if (!k || k.status !== 'idle') return false;
    const code = w.content.widgets.filter((c) => c.model.type === 'code');
    const stopped = code.some((c) => c.model.outputs.toJSON().some((o) => o.output_type === 'error'));
    return stopped || code[code.length - 1].model.executionCount !== null;
}"""

JS_CELLS = """() => window.jupyterapp.shell.currentWidget.content.widgets.map((cell) => {
    // What each cell shows under it, as JupyterLab renders its outputs (cells out of view are not in the page).
    const outputs = cell.model.type === 'code' ? cell.model.outputs.toJSON() : [];
    const shown = outputs.map((o) => o.output_type === 'stream' ? [].concat(o.text).join('')
        : o.output_type === 'error' ? o.traceback.join('\\n')
        : [].concat((o.data || {})['text/plain'] || []).join('')).join('\\n');
    const errors = outputs.filter((o) => o.output_type === 'error').map((o) => `${o.ename}: ${o.evalue}`);
    return {type: cell.model.type, count: cell.model.type === 'code' ? cell.model.executionCount : null, errors,
            id: (cell.model.getMetadata('nbgrader') || {}).grade_id || null,
            tags: cell.model.getMetadata('tags') || [], shown: shown.replace(/\\x1b\\[[0-9;]*m/g, '')};
})"""


class Person:
    """One person at their own browser (a Chromium context of its own: their own cookies)."""

    def __init__(self, browser, hub: Hub, user: str, shots: Path):
        self.hub, self.user, self.shots = hub, user, shots
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.base = f"{hub.url}/user/{user}/"
        self.server_start = None

    def shot(self, name: str, page=None) -> None:
        """A screenshot of this step when $BROWSER_SCREENSHOTS asks for them (a failure keeps every page anyway)."""
        keep_shot(page or self.page, self.shots / f"{self.user}-{name}.png", full_page=True)

    def log_in(self) -> None:
        """Log in on the Hub's page; the Hub starts this user's server (wait for it with :meth:`lab`)."""
        page = self.page
        page.goto(f"{self.hub.url}/hub/login")
        page.fill("#username_input", self.user)
        page.fill("#password_input", self.hub.password)
        self.logged_in = time.monotonic()
        page.click("#login_submit")

    def lab(self, *, asked_news: bool) -> None:
        """Wait for JupyterLab of this user's own server; answer No when it asks about its news feed (the
        instructors' installation asks once; a students' image is set not to, and nobody waits for it there)."""
        page = self.page
        page.wait_for_url(re.compile(rf"/user/{self.user}/lab"), timeout=SERVER_TIMEOUT_MS)
        page.wait_for_selector("#jp-main-dock-panel", timeout=SERVER_TIMEOUT_MS)
        self.server_start = time.monotonic() - self.logged_in
        if asked_news:
            try:
                page.locator(".jp-toast-button", has_text="No").click(timeout=5_000)
            except Exception:  # noqa: BLE001 - no question asked: nothing to dismiss
                pass
        self.shot("lab")

    def news_question(self) -> int:
        """How many times JupyterLab's question about its news feed shows on this person's page now."""
        return self.page.get_by_text(NEWS_QUESTION).count()

    def lab_settings(self, plugin: str) -> dict:
        """JupyterLab's settings of ``plugin`` in force for this user, from their server's settings API: each
        the user's own value, else the default of the schema it serves (the image's overrides in it)."""
        response = self.context.request.get(f"{self.base}lab/api/settings/{plugin}")
        assert response.ok, (response.status, response.text()[:500])
        found = response.json()
        return {**{k: v.get("default") for k, v in found["schema"]["properties"].items()}, **found["settings"]}

    def terminal(self, command: str, timeout_s: float = 300) -> str:
        found = self.page.evaluate(JS_TERMINAL, [self.base, command, int(timeout_s * 1000)])
        assert found["name"], found["out"]
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", found["out"])

    def menu(self, *path: str) -> None:
        """Open the menu bar's ``path[0]`` and click each item of the rest. A click on the bar's label can
        close the menu instead of opening it (Lumino toggles a label it still holds as active after an
        Escape), and once in CI the item never showed in 30 s: each step waits a little, then closes
        whatever is open and tries again, three times, and the last failure comes with a screenshot."""
        page = self.page
        for attempt in range(3):
            try:
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{path[0]}$")).click()
                for item in path[1:]:
                    found = page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).last
                    found.click(timeout=10_000)
                return
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: close any menu, look again
                if attempt == 2:
                    self.shot(f"menu-{'-'.join(path)}")
                    raise
                page.keyboard.press("Escape")  # closes an open menu; the next click on the label opens it

    def assignment_list(self):
        self.menu("Nbgrader", "Assignment List")
        panel = self.page.locator("#nbgrader-assignment-list")
        panel.wait_for(timeout=30_000)
        return panel

    def wait_idle(self, timeout_ms: int = KERNEL_TIMEOUT_MS) -> None:
        self.page.wait_for_function(f"() => ({JS_KERNEL_IDLE})() === 'idle'", timeout=timeout_ms, polling=POLL_MS)

    def run_all(self, timeout_s: float = KERNEL_TIMEOUT_MS / 1000) -> float:
        """Run → Run All Cells, and wait until it has finished; the seconds it took."""
        started = time.monotonic()
        self.menu("Run", "Run All Cells")
        held = 0
        while held < 8:  # 2 s of "done" in a row
            if time.monotonic() - started > timeout_s:
                raise AssertionError(f"Run All did not finish within {timeout_s:.0f} s")
            held = held + 1 if self.page.evaluate(JS_RUN_ALL_DONE) else 0
            self.page.wait_for_timeout(250)
        return time.monotonic() - started - 2

    def cells(self) -> list[dict]:
        return self.page.evaluate(JS_CELLS)

    def cell_node(self, grade_id: str):
        index = next(i for i, c in enumerate(self.cells()) if c["id"] == grade_id)
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def type_into(self, grade_id: str, code: str) -> None:
        """Replace an exercise cell's code, typed as the student would (select all, type)."""
        editor = self.cell_node(grade_id).locator(".cm-content")
        editor.click()
        self.page.keyboard.press("Control+a")
        self.page.keyboard.insert_text(code)

    def open_notebook(self, path: str) -> None:
        """Open a notebook in the JupyterLab already on the page, as a double click in its file browser does
        (JupyterLab's docmanager:open): loading JupyterLab again for it costs Chromium and the server seconds."""
        self.page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", path)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=SERVER_TIMEOUT_MS)
        self.wait_idle()


def modal_text(page) -> str:
    """The text of formgrader's result dialog, then close it."""
    modal = page.locator(".modal.in, .modal.show").last
    modal.wait_for(timeout=180_000)
    text = modal.inner_text()
    modal.locator(".modal-footer button").last.click()
    modal.wait_for(state="hidden", timeout=30_000)
    return text


def assignment_row(page, assignment: str):
    return page.locator("tr", has=page.locator("td.name a", has_text=assignment))


def solved_fetched(path: Path, assignment: str, owner: str) -> None:
    """The student's own saved notebook: the fetched one with every exercise answered (their code)."""
    nb = fill_in(nbformat.read(path, as_version=4), assignment, markers=False)
    nbformat.write(nb, path)
    shutil.chown(path, owner, owner)


@pytest.fixture(scope="module")
def played(term, tmp_path_factory):
    """The whole assignment, once, in Chromium; each test reads what it saw. Returns a record of it."""
    from playwright.sync_api import sync_playwright

    shots = shots_folder(tmp_path_factory.mktemp("hub-shots"))
    seen: dict = {"hub_start_s": term.answered, "prepare_s": term.prepared, "load": os.getloadavg(), "phases": {}}
    began = time.monotonic()

    def phase(name: str) -> None:  # where the time goes: seconds since the browser started, at each step
        seen["phases"][name] = round(time.monotonic() - began, 1)

    course = term.folder / "term" / "course"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(require_chromium()), headless=True, args=CHROMIUM_ARGS)
        people: list[Person] = []
        try:
            people = teacher, first, second = [Person(browser, term, u, shots) for u in (TEACHER, FIRST, SECOND)]
            for person in people:  # three people log in at once: the Hub starts their servers side by side
                person.log_in()
            for person in people:
                person.lab(asked_news=person is teacher)
            seen["server_start_s"] = [person.server_start for person in people]
            seen["news_settings"] = {p.user: p.lab_settings(NEWS) for p in (first, second)}
            seen["memory_mib_hub_and_proxy"] = hub_memory_mib(term.proc.pid)
            for person in (teacher, first):  # what nbgrader puts in each one's menu
                person.menu("Nbgrader")
                seen[f"menu_{person.user}"] = [i.inner_text() for i in person.page.locator(".lm-Menu-itemLabel").all()
                                               if i.inner_text().strip()]
                person.page.keyboard.press("Escape")
            teacher.menu("Nbgrader", "Course List")
            courses = teacher.page.locator("#nbgrader-course-list")
            courses.get_by_text(COURSE_ID).first.wait_for(timeout=60_000)
            seen["course_list"] = courses.inner_text()
            teacher.shot("course-list")

            phase('servers')
            # -------------------------------------------------------- the instructor releases 04
            fg = teacher.context.new_page()
            opened = fg.goto(f"{teacher.base}formgrader/manage_assignments")
            seen["formgrader_frames"] = opened.headers.get("content-security-policy", "")
            for assignment in (A4, *(a for a in (*EARLIER, A5) if a != A4)):  # 04, then what 05 needs
                row = assignment_row(fg, assignment)
                row.wait_for(timeout=60_000)
                row.locator("td.assign a").click()
                generated = modal_text(fg)
                row.locator("td.release a").click()
                released = modal_text(fg)
                if assignment == A4:
                    seen["generated"], seen["released"] = generated, released
                    seen["status_after_release"] = row.locator("td.status").inner_text()
            teacher.shot("formgrader-released", fg)

            phase('released')
            # -------------------------------------------------------- the first student's homework
            panel = first.assignment_list()
            released = panel.locator("#released_assignments_list")
            released.locator(".list_item", has_text=A4).wait_for(timeout=60_000)
            first.shot("assignments-released")
            # long after each JupyterLab started (its question comes seconds after the page, and stays)
            seen["news_question"] = {p.user: p.news_question() for p in (first, second)}
            released.locator(".list_item", has_text=A4).locator("button", has_text="Fetch").click()
            fetched = panel.locator("#fetched_assignments_list .list_item", has_text=A4).first
            fetched.wait_for(timeout=60_000)
            first.open_notebook(f"{A4}/{A4}.ipynb")
            first.type_into("sequence_probability", RIGHT)
            first.type_into("expectation", WRONG)
            seen["run_04_s"] = first.run_all()
            first.page.keyboard.press("Control+s")
            first.page.wait_for_timeout(1000)
            # saved before it is submitted, however long the save takes: the tab loses its "unsaved" mark
            first.page.wait_for_function("() => !document.querySelector('.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')",
                                         timeout=60_000, polling=POLL_MS)
            seen["cells"] = first.cells()
            first.cell_node("test_expectation").scroll_into_view_if_needed()
            first.shot("checks")
            seen["memory_mib_with_kernel"] = memory_mib(servers_of(FIRST)[0])
            first.page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click()
            dialog = first.page.locator(".jp-Dialog")
            dialog.wait_for(timeout=180_000)
            first.page.wait_for_function(
                "() => !document.querySelector('.jp-Dialog').innerText.includes('Validating')", timeout=180_000,
                polling=POLL_MS)
            seen["validate"] = dialog.inner_text()
            first.shot("validate")
            dialog.locator("button").last.click()
            panel = first.assignment_list()
            fetched = panel.locator("#fetched_assignments_list .list_item", has_text=A4).first
            fetched.locator("button", has_text="Submit").click()
            submitted = panel.locator("#submitted_assignments_list .list_item")
            submitted.first.wait_for(timeout=60_000)
            seen["t_submitted"] = time.monotonic()
            seen["submitted"] = panel.locator("#submitted_assignments_list").inner_text()
            first.shot("submitted")

            phase('submitted')
            # -------------------------------------------------------- the instructor grades
            fg.reload()
            row = assignment_row(fg, A4)
            row.locator("td.collect a").click()
            seen["collected"] = modal_text(fg)
            started = time.monotonic()
            seen["grade"] = teacher.terminal("python -m autograder grade submitted --jobs 1", timeout_s=600)
            seen["grade_s"] = time.monotonic() - started
            from nbgrader.api import Gradebook
            with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
                submission = gb.find_submission_notebook(A4, A4, FIRST).id
            fg.goto(f"{teacher.base}formgrader/submissions/{submission}", wait_until="networkidle")
            fg.wait_for_selector("input.score#test_expectation", timeout=60_000)
            seen["review"] = fg.inner_text("body")
            saved = None
            for _ in range(3):  # formgrader saves each field in the background when it loses focus
                for field, value in (("input.score#test_expectation", "1"),
                                     ("textarea#expectation-comment", OVERRIDE_COMMENT)):
                    fg.locator(field).fill(value)
                    fg.locator(field).press("Tab")
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and saved != (1, OVERRIDE_COMMENT):
                    time.sleep(0.5)
                    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
                        saved = (gb.find_grade("test_expectation", A4, A4, FIRST).manual_score,
                                 gb.find_comment("expectation", A4, A4, FIRST).manual_comment)
                if saved == (1, OVERRIDE_COMMENT):
                    break
            seen["saved"] = saved
            teacher.shot("override", fg)
            seen["regrade"] = teacher.terminal("python -m autograder grade submitted --jobs 1", timeout_s=600)
            fg.goto(f"{teacher.base}formgrader/manage_assignments")
            row = assignment_row(fg, A4)
            row.wait_for(timeout=60_000)
            row.locator("td.release-feedback a").click()
            seen["feedback_released"] = modal_text(fg)

            phase('feedback released')
            # -------------------------------------------------------- the student reads the feedback
            panel = first.assignment_list()
            panel.locator("#refresh_assignments_list").click()
            item = panel.locator("#submitted_assignments_list .list_item", has_text=A4).first
            item.locator("button", has_text="Fetch Feedback").click()
            item.locator("a", has_text="view feedback").click()
            page_file = first.page.locator(".jp-DirListing-item", has_text=".html")
            page_file.first.dblclick()
            frame = first.page.frame_locator(".jp-HTMLViewer iframe, iframe").last
            frame.locator("body").wait_for(timeout=60_000)
            seen["feedback"] = frame.locator("body").inner_text()
            seen["submit_to_feedback_s"] = time.monotonic() - seen.pop("t_submitted")
            first.shot("feedback")

            phase('feedback read')
            # -------------------------------------------------------- the second student sees nothing of it
            seen["memory_mib_idle"] = memory_mib(servers_of(SECOND)[0])
            panel = second.assignment_list()
            panel.locator("#released_assignments_list .list_item", has_text=A4).wait_for(timeout=60_000)
            seen["second_assignments"] = panel.inner_text()
            second.shot("assignments")
            first_home = _home(FIRST)
            exchange = term.folder / "term" / "exchange" / COURSE_ID
            seen["second_terminal"] = second.terminal(
                f"ls {first_home}; cat {first_home}/{A4}/{A4}.ipynb; ls {exchange}/inbound; ls {exchange}/feedback;"
                f" ls {course}")
            seen["second_urls"] = {}
            probe = second.context.new_page()  # a tab of their own browser: their JupyterLab stays as it is
            for path in (f"lab/tree/{A4}/{A4}.ipynb", f"files/{A4}/{A4}.ipynb", f"api/contents/{A4}"):
                response = probe.goto(f"{term.url}/user/{FIRST}/{path}")
                seen["second_urls"][path] = (response.status if response else None, probe.inner_text("body"))
            second.shot("first-s-server", probe)
            response = probe.goto(f"{second.base}formgrader/manage_assignments")
            seen["student_formgrader"] = response.status if response else None
            probe.close()

            phase('second checked')
            # -------------------------------------------------------- 05 on the second student's own pieces
            panel = second.assignment_list()
            for a in (*EARLIER, A5):  # fetched on the Assignments page, as the first student fetched 04
                panel.locator("#released_assignments_list .list_item", has_text=a).first.locator(
                    "button", has_text="Fetch").click()
                panel.locator("#fetched_assignments_list .list_item", has_text=a).first.wait_for(timeout=60_000)
            seen["fetched_more"] = panel.locator("#fetched_assignments_list").inner_text()
            for a in (*EARLIER, A5):  # the student's work, saved: each exercise answered
                solved_fetched(_home(SECOND) / a / f"{a}.ipynb", a, SECOND)
            second.open_notebook(f"{A5}/{A5}.ipynb")
            seen["run_05_s"] = second.run_all()
            seen["cells_05"] = second.cells()
            phase("05 ran")
            setup = next(i for i, c in enumerate(seen["cells_05"]) if "setup" in c["tags"])
            second.page.locator(".jp-Notebook .jp-Cell").nth(setup).scroll_into_view_if_needed()
            second.shot("05-whose-pieces")
        except Exception:
            print("\nwhat the term showed before it stopped:\n" + "\n".join(
                f"{k}: {str(v)[-3000:]}" for k, v in seen.items()), file=sys.stderr)
            for person in people:  # each browser as it was when the term stopped
                for i, page in enumerate(person.context.pages):
                    try:
                        page.screenshot(path=str(shots / f"failed-{person.user}-{i}.png"), full_page=True)
                    except Exception as exc:  # a page that is gone: say so, keep the first error
                        print(f"no screenshot of {person.user}'s page {i}: {exc}", file=sys.stderr)
            print(f"screenshots of every page when it stopped: {shots}", file=sys.stderr)
            raise
        finally:
            browser.close()
    print("\nmeasured on the Hub:", json.dumps({k: v for k, v in seen.items() if k.endswith(("_s", "_mib", "load"))
                                                 or k.startswith("memory")}, default=str))
    if os.environ.get("BROWSER_SCREENSHOTS"):
        (shots / "measurements.json").write_text(json.dumps(
            {k: v for k, v in seen.items() if k.endswith("_s") or k.startswith(("memory", "load"))}, indent=1))
        (shots / "seen.json").write_text(json.dumps(seen, indent=1, default=str))  # everything the term showed
    return seen


def cell(cells: list[dict], grade_id: str) -> dict:
    return next(c for c in cells if c["id"] == grade_id)


def test_the_instructor_releases_04_from_formgrader(played, term):
    assert "Successfully created the student version" in played["generated"], played["generated"]
    assert "Successfully released" in played["released"], played["released"]
    assert played["status_after_release"].strip() == "released"
    outbound = term.folder / "term" / "exchange" / COURSE_ID / "outbound" / A4 / f"{A4}.ipynb"
    assert outbound.exists()
    text = outbound.read_text()
    assert "BEGIN HIDDEN TESTS" not in text and "### BEGIN SOLUTION" not in text


def test_a_student_fetches_answers_runs_the_checks_validates_and_submits(played):
    cells = played["cells"]
    right, wrong = cell(cells, "test_sequence_probability"), cell(cells, "test_expectation")
    assert right["count"] is not None and not right["errors"], right
    assert "✔ sequence_probability:" in right["shown"] and "passed" in right["shown"], right
    assert "CheckFailure" in wrong["shown"] and "plain average" in wrong["shown"], wrong
    assert "Traceback" not in wrong["shown"] and "compare.py" not in wrong["shown"], wrong  # the message, not our frames
    assert "expectation" in played["validate"] and "plain average" in played["validate"], played["validate"]
    assert A4 in played["submitted"] or re.search(r"\d{4}-\d\d-\d\d", played["submitted"]), played["submitted"]


def test_the_instructor_collects_grades_overrides_and_releases_feedback(played):
    assert "Successfully collected" in played["collected"] or FIRST in played["collected"], played["collected"]
    grade = played["grade"]
    assert "DONE=0" in grade, grade[-3000:]
    assert "plain average" in played["review"], "formgrader shows why the test failed"
    assert played["saved"] == (1, OVERRIDE_COMMENT)
    assert "DONE=0" in played["regrade"], played["regrade"][-3000:]
    assert "Successfully released feedback" in played["feedback_released"] or "release" in \
        played["feedback_released"].lower(), played["feedback_released"]


def test_the_student_reads_the_instructors_score_and_the_named_mistake(played):
    page = played["feedback"]
    assert "plain average" in page, page[:3000]
    assert OVERRIDE_COMMENT in page and "changed by your instructor" in page, page[:3000]
    assert "BEGIN HIDDEN TESTS" not in page and "hidden=True" not in page


def test_the_second_student_sees_nothing_of_the_first(played):
    shown = played["second_terminal"]
    assert shown.count("Permission denied") >= 4, shown
    assert "sequence_probability" not in shown and "np.prod" not in shown, shown
    assert "DONE=" in shown
    for path, (status, body) in played["second_urls"].items():
        assert status in (403, 404) or "403" in body, (path, status, body[:500])
        assert "np.prod" not in body and "sequence_probability" not in body, (path, body[:500])
    second = played["second_assignments"]  # 04 to fetch, nothing of the first student's
    assert A4 in second and "There are no downloaded assignments." in second, second
    assert "There are no submitted assignments." in second and "feedback" not in second.lower(), second
    assert played["student_formgrader"] == 404, "a student's server runs without formgrader"


def test_instructors_get_formgrader_and_the_course_list_students_the_assignment_list(played):
    assert played[f"menu_{TEACHER}"][:3] == ["Assignment List", "Course List", "Formgrader"], played[f"menu_{TEACHER}"]
    assert played[f"menu_{FIRST}"] == ["Assignment List"], played[f"menu_{FIRST}"]
    assert COURSE_ID in played["course_list"], played["course_list"]
    # why formgrader opens in a tab of its own (docs/grading.md): JupyterHub forbids framing a server's pages
    assert "frame-ancestors 'none'" in played["formgrader_frames"], played["formgrader_frames"]


def test_students_meet_jupyterlab_without_the_question_about_its_news(played, term):
    """The students' image turns JupyterLab's news feed (and its update notices) off: the file is in the image,
    each student's server serves those settings, and neither student's page asks. The instructors'
    installation is left as it was installed."""
    image = term.folder / "term" / "students-image"
    overrides = json.loads((image / "share" / "jupyter" / "lab" / "settings" / "overrides.json").read_text())
    assert overrides[NEWS] == {"fetchNews": "false", "checkForUpdates": False}, overrides
    for student in (FIRST, SECOND):
        settings = played["news_settings"][student]
        assert settings["fetchNews"] == "false" and settings["checkForUpdates"] is False, (student, settings)
        assert played["news_question"][student] == 0, played["news_question"]
    staff = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"  # the term's staff_python
    assert not staff.exists() or NEWS not in json.loads(staff.read_text())


def test_no_root_owned_file_is_left_in_the_instructors_course(played, term):
    """After the whole term (the course copied, the wheel and the image built as root, then released,
    collected, graded and fed back by the instructor), every file of the instructor's course is theirs: no
    root-owned build/, dist/ or *.egg-info, nothing they could not replace."""
    import pwd

    course = term.folder / "term" / "course"
    teacher = pwd.getpwnam(TEACHER).pw_uid
    assert course.stat().st_uid == teacher and course.stat().st_mode & 0o777 == 0o700
    others = [f"{p} ({p.lstat().st_uid})" for p in course.rglob("*") if p.lstat().st_uid != teacher]
    assert not others, others
    assert (course / "gradebook.db").exists() and (course / "release" / A4).is_dir()  # the term did run there
    assert not [p for pattern in ("build", "dist", "*.egg-info") for p in course.glob(pattern)]


def test_05_runs_in_the_hub_on_the_students_own_fetched_notebooks(played):
    assert all(a in played["fetched_more"] for a in (*EARLIER, A5)), played["fetched_more"]
    cells = played["cells_05"]
    setup = next(c for c in cells if "setup" in c["tags"])
    lines = [line for line in setup["shown"].splitlines() if line.strip()]
    for piece in pieces.NEEDS[A5]:
        assert any(f"yours: from ../{piece.assignment}/{piece.assignment}.ipynb" in line for line in lines
                   if line.startswith(piece.name)), (piece.name, lines)
    errors = [(c["id"], c["errors"]) for c in cells if c["type"] == "code" and c["errors"]]
    assert not errors, errors
    assert [c for c in cells if c["type"] == "code"][-1]["count"] is not None, "Run All reached the last cell"



def test_a_students_image_that_reaches_the_solutions_is_refused():
    """An image with the course from a clone (solutions/ beside it) is no students' image: the Hub refuses it."""
    import sysconfig

    from autograder import hub, paths

    python = python_every_user_can_run()
    image = Path(tempfile.mkdtemp(prefix="ag-clone-image-"))
    try:
        image.chmod(0o755)
        subprocess.run([python, "-m", "venv", "--without-pip", "--clear", str(image)], check=True, capture_output=True)
        site = Path(subprocess.run([str(image / "bin" / "python"), "-c",
                                    "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   check=True, capture_output=True, text=True).stdout.strip())
        (site / "clone.pth").write_text(f"{paths.root()}\n{sysconfig.get_paths()['purelib']}\n")
        with pytest.raises(hub.HubError, match=r"reaches the course's solutions \(.*solutions\): install the course "
                                               r"into it from its wheel"):
            hub.check_image(image)
    finally:
        shutil.rmtree(image, ignore_errors=True)
