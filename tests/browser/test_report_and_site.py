"""Do report.html, a learner's feedback page and the course site read right in Debian's Chromium, offline?

Every page is opened over file:// with every request to anything but a local file refused and recorded:
no page may ask for one, log a console error, or show raw TeX (``$...$``) once MathJax has typeset it.
The report and feedback come from a made-up class (tests/builders.py; grading is tested elsewhere);
the site is built with the real `python -m autograder site`.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grade import report
from tests import builders

from .conftest import require_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser_report_and_site")]

RAW_TEX = re.compile(r"\$[^$\s][^$]*\$|\\(?:frac|sqrt|mathbb|mathrm|partial|sum|begin)\b")
# The page's text outside code: a Matplotlib label such as r"softmax$(q \\cdot k)$" is code and stays as typed.
PROSE = """() => { const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, .jp-InputArea-editor, script').forEach(n => n.remove());
  document.documentElement.appendChild(body); const text = body.innerText; body.remove(); return text; }"""
SITE_PAGES = ["index.html", "04_softmax_and_probability.html", "09_attention.html"]


@pytest.fixture(scope="module")
def made_up_class(tmp_path_factory) -> Path:
    results, recorded = builders.made_up_class(100, seed=7)
    out = tmp_path_factory.mktemp("class")
    report.write_outputs(out, results, recorded)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require_chromium()
    out = tmp_path_factory.mktemp("site") / "site"
    proc = subprocess.run([sys.executable, "-m", "autograder", "site", "--out", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout.strip())
    return out


def open_offline(page, path: Path, shots: Path, name: str) -> tuple[str, list[str]]:
    """Open ``path`` with the network refused; return its text and every console error or outside request."""
    trouble: list[str] = []
    page.on("console", lambda m: trouble.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda exc: trouble.append(f"page error: {exc}"))
    page.on("requestfailed", lambda r: trouble.append(f"failed request: {r.url}") if r.url.startswith("file:")
            else None)

    def refuse(route):
        trouble.append(f"asked the network for {route.request.url}")
        route.abort()

    page.route(re.compile(r"^(?!file:|data:|about:).*"), refuse)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    if page.evaluate("typeof window.MathJax !== 'undefined'"):
        # MathJax typesets after load; a callback queued behind the page's Typeset runs when it is done.
        page.evaluate("() => new Promise(done => MathJax.Hub.Queue(done))")
    page.screenshot(path=shots / f"{name}.png", full_page=False)
    return page.inner_text("body"), trouble


def test_the_class_report_reads_offline_with_mistakes_counted(made_up_class, page, shots):
    text, trouble = open_offline(page, made_up_class / "report.html", shots, "report")
    assert not trouble, trouble
    assert "Class report" in text and "Pass rate per exercise" in text and "Mistakes the class made" in text
    assert re.search(r"\b\d+ of \d+\b: you subtracted the max of the whole array", text), text[:2000]
    assert "Could not be graded" in text and "late penalty" in text
    page.screenshot(path=shots / "report_full.png", full_page=True)
    # A mistake's student links to that student's feedback page, which opens.
    link = page.locator("ul.mistakes a").first
    target = link.get_attribute("href")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(target), (page.url, target)
    assert "Score:" in page.inner_text("body")


def test_a_feedback_page_reads_offline(made_up_class, page, shots):
    feedback = sorted((made_up_class / "feedback").glob("*/*.html"))[0]
    text, trouble = open_offline(page, feedback, shots, "feedback")
    assert not trouble, trouble
    assert "Score:" in text and ("failed" in text or "passed" in text)


@pytest.mark.parametrize("name", SITE_PAGES)
def test_site_pages_render_their_math_offline(site, page, shots, name):
    text, trouble = open_offline(page, site / name, shots, f"site_{name.removesuffix('.html')}")
    assert not trouble, trouble
    prose = page.evaluate(PROSE)
    assert len(prose) > 2000, f"{name}: hardly any text outside code"
    raw = RAW_TEX.findall(prose)
    assert not raw, f"{name} shows raw TeX on screen: {raw[:5]}"
    if name != "index.html":
        typeset = page.evaluate("document.querySelectorAll('.MathJax_CHTML').length")
        assert typeset > 20, f"{name}: only {typeset} formulas typeset"
        # A formula is real layout, not text: MathJax's own fonts were loaded from the site folder.
        assert page.evaluate("document.fonts.check('12px MJXc-TeX-math-I') || "
                             "[...document.fonts].some(f => f.family.includes('MJXc') && f.status === 'loaded')")
        assert "How to run this notebook" in text and "YOUR CODE HERE" in text
    else:
        assert "Contents" in text and "10 · The decoder block" in text
