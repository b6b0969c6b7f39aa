"""A real JupyterLab server and a real Chromium for the browser tests.

Each test module gets its own headless JupyterLab on 127.0.0.1 over a temporary copy
of the student notebooks and its own Chromium (Debian's /usr/bin/chromium, driven by
Playwright), and each test a fresh browser context of that Chromium (nothing kept from
the test before). Both are always stopped, also on failure.
Screenshots of each step are kept when $BROWSER_SCREENSHOTS is set (in it, a folder per test); otherwise only
a failed test's page is, in its tmp_path.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from autograder import paths
from tests.builders import free_port, venv_env

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SERVER_START_TIMEOUT = 60  # seconds; a cold start on 2 busy cores takes about 5
# Settings every test server starts with: no news popup asking to fetch from the internet.
SETTINGS_OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}


def require_chromium() -> Path:
    """The browser, or a failure that says how to install it (never a silent skip)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests drive Debian's Chromium. "
                    "Install it with `apt-get install -y chromium` (or set CHROMIUM_PATH).", pytrace=False)
    return CHROMIUM


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:PORT, no trailing slash
    root: Path  # the temporary notebooks directory the server serves
    log: Path


def _wait_until_up(proc: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {proc.returncode} before answering:\n"
                               f"{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer {url} within {SERVER_START_TIMEOUT} s:\n"
                       f"{log.read_text(errors='replace')[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server and its kernels (they share its process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


@contextlib.contextmanager
def jupyterlab(root: Path, base: Path, *args: str, env: dict | None = None) -> Iterator[LabServer]:
    """A headless JupyterLab on loopback serving ``root``, with its config, runtime, settings and workspaces
    under ``base`` (the user's own are kept out of the test); stopped on leaving, also on failure."""
    app_settings = base / "app-settings"
    app_settings.mkdir()
    (app_settings / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES))
    env = venv_env(dict(os.environ if env is None else env,
                        JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "runtime"),
                        JUPYTERLAB_SETTINGS_DIR=str(base / "user-settings"),
                        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces")))
    log = base / "server.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        "--IdentityProvider.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={root}", f"--LabApp.app_settings_dir={app_settings}", *args,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_until_up(proc, url, log)
        yield LabServer(url=url, root=root, log=log)
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory) -> LabServer:
    """A headless JupyterLab on loopback over a copy of notebooks/, started and stopped here."""
    require_chromium()  # fail before spending a server start on a machine without the browser
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(paths.notebooks_dir(), root)
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernel must use the inline backend, or plots never show
    with jupyterlab(root, base, "--LabApp.expose_app_in_browser=True", env=env) as server:
        yield server


SCREENSHOTS = os.environ.get("BROWSER_SCREENSHOTS")


def keep_shot(target, path: Path, **options) -> None:
    """A screenshot of a page or an element, when $BROWSER_SCREENSHOTS asks for them. Drawing a long page into
    a PNG costs Chromium up to a core-second (the site test's 16 took 6 of its 37 core-seconds), and the ones
    in tmp_path went unread; a failed test's page is kept anyway (:func:`page`)."""
    if SCREENSHOTS:
        target.screenshot(path=str(path), **options)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report on the test item, for :func:`page` to see whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def shots(request, tmp_path) -> Path:
    """Where this test's screenshots go: $BROWSER_SCREENSHOTS/<test name>/ or tmp_path."""
    env = os.environ.get("BROWSER_SCREENSHOTS")
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")  # test_x[param] -> test_x_param
    folder = Path(env) / name if env else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module, closed with it. Each test gets a context of its own from it
    (:func:`page`): a launch, with Playwright's driver, cost about 2.5 core-seconds, a context a tenth of it.
    Per module, not per session: tests/course/test_hub.py starts Playwright itself, and Playwright's sync API
    refuses a second while one is open in the same process."""
    chromium = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(request, browser, shots):
    """A Playwright page in a fresh context (its own cookies, storage and cache, as a new profile has), closed
    after the test; when the test failed, a screenshot of the whole page as it was is kept first (its path is
    in the test's output)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    try:
        yield opened
    finally:
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            try:
                opened.screenshot(path=str(shots / "failed.png"), full_page=True)
                print(f"the page when the test failed: {shots / 'failed.png'}")
            except Exception as exc:  # noqa: BLE001 - a page that cannot be drawn must not hide the failure
                print(f"no screenshot of the failed page: {exc}")
        context.close()
