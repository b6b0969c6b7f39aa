"""Do report.html, a learner's feedback page and the course site read right in Debian's Chromium, offline?

Every page is opened over file:// with every request to anything but a local file refused and recorded:
no page may ask for one, log a console error, or show raw TeX (``$...$``) once MathJax has typeset it.
Each is opened at a desktop width (1280 px) and a phone's (390 px), where nothing may be wider than the
screen, and a screenshot of each is kept when $BROWSER_SCREENSHOTS is set. axe-core runs at both widths, its
colour-contrast rule at the phone's only (tests/browser/axe.py says why that covers the desktop's).
The report and feedback come from a made-up class of 100 records (tests/builders.py) and from the class
of issue 25 graded for real (tests/broken_class.py, graded once for this module and
tests/grade/test_broken_class.py); the site is built with the real `python -m autograder site`.
"""
from __future__ import annotations

import re
import datetime
import os
from pathlib import Path

import pytest

from autograder import paths
from autograder.grade.output import report
from tests import broken_class, builders
from tests.site_build import built_site

from .axe import assert_accessible
from .conftest import keep_shot, require_chromium

# the same group as tests/grade/test_broken_class.py: one worker grades issue 25's class once for both
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group(broken_class.GROUP)]
WIDTHS = {"desktop": 1280, "phone": 390}
# what scrolls sideways on purpose: code, tables and formulas keep their layout inside their own box
# (MathJax's hidden MathML for screen readers is clipped, never seen; the page's own width still counts it)
SCROLLERS = ("pre, table, .scroll, .MathJax_Display, .MJX_Assistive_MathML, .jp-OutputArea-output, "
             ".jp-RenderedHTMLCommon table")
WIDER_THAN_SCREEN = """(scrollers) => { const w = document.documentElement.clientWidth; const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest(scrollers) || el.closest('details:not([open])')) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1) out.push(`${el.tagName.toLowerCase()}.${el.className}: right ${Math.round(r.right)} px`);
  }
  return {page: document.documentElement.scrollWidth, screen: w, inner: window.innerWidth, over: out.slice(0, 5)}; }"""
# Code and outputs hide no text: a box whose lines are longer than it is wide does not clip them, and no box
# around it cuts it off (a box that scrolls may hold it) (JupyterLab's .jp-InputArea-editor{overflow:hidden} did, at 390 px); lines are kept
# whole (white-space: pre), never broken mid-word (JupyterLab's word-break: break-all on outputs).
CUT_OFF = """() => { const out = [];
  for (const el of document.querySelectorAll('pre, .jp-OutputArea-output')) {
    const r = el.getBoundingClientRect(); if (!r.width || el.closest('details:not([open])')) continue;
    const cs = getComputedStyle(el), name = `${el.tagName.toLowerCase()}.${el.className}`;
    if (el.scrollWidth > el.clientWidth + 1 && ['hidden', 'clip'].includes(cs.overflowX)) out.push(`${name} clips its lines`);
    if (el.tagName === 'PRE' && el.closest('.jp-Notebook') && (cs.whiteSpace !== 'pre' || cs.wordBreak === 'break-all'))
      out.push(`${name} wraps its lines (${cs.whiteSpace}, ${cs.wordBreak})`);
    const right = cs.overflowX === 'visible' ? r.left + el.scrollWidth : r.right;  // where its text ends
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (['auto', 'scroll'].includes(ox)) break;  // a box that scrolls holds it
      if (['hidden', 'clip'].includes(ox) && a.getBoundingClientRect().right < right - 1) {
        out.push(`${name} is cut off by ${a.tagName.toLowerCase()}.${a.className}`); break; }
    }
  }
  return out.slice(0, 5); }"""
# The longest lines of prose, in characters (formulas left out): a line longer than about 80 is hard to follow.
LONGEST_LINES = """() => { const lengths = [];
  const blocks = [...document.querySelectorAll('.jp-RenderedMarkdown :is(p, li), .site-page :is(p, li), .site-box p')]
    .filter(p => p.offsetParent && p.textContent.length > 100).slice(0, 40);
  for (const p of blocks) {
    const lines = new Map(), walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT); let node;
    while ((node = walk.nextNode())) {
      if (node.parentElement.closest('.MathJax, .MathJax_Display, .MJX_Assistive_MathML, script')) continue;
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0]; if (!rect) continue;
        const line = Math.round(rect.top / 4); lines.set(line, (lines.get(line) || 0) + 1); } }
    lengths.push(...lines.values());
  }
  return Math.max(0, ...lengths); }"""
# A table's column of short entries (a letter, a number) wider than half the table: it took the others' room
# (a formula alone in a cell, which MathJax sizes to the whole line, made 09's column "j" 988 px wide).
COLUMN_HOGS = """() => { const out = [];
  for (const t of document.querySelectorAll('.jp-RenderedMarkdown table, .site-page table')) {
    const rows = [...t.rows], width = t.getBoundingClientRect().width;
    if (!rows.length || rows[0].cells.length < 3) continue;
    for (let i = 0; i < rows[0].cells.length; i++) {
      const cells = rows.map(r => r.cells[i]).filter(Boolean);
      const text = Math.max(...cells.map(c => (c.querySelector('script') || c).textContent.trim().length));
      const w = cells[0].getBoundingClientRect().width;
      if (text <= 12 && w > width / 2) out.push(`${t.parentElement.getAttribute('aria-label')}: column ${i + 1} is ${Math.round(w)} of ${Math.round(width)} px`);
    }
  }
  return out; }"""

RAW_TEX = re.compile(r"\$[^$\s][^$]*\$|\\(?:frac|sqrt|mathbb|mathrm|partial|sum|begin)\b")
# The page's text outside code: a Matplotlib label such as r"softmax$(q \\cdot k)$" is code and stays as typed.
PROSE = """() => { const body = document.body.cloneNode(true);
  body.querySelectorAll('pre, code, .jp-InputArea-editor, script').forEach(n => n.remove());
  document.documentElement.appendChild(body); const text = body.innerText; body.remove(); return text; }"""

# Every notebook's page shows a figure from a given cell: drawn by it alone (09's score sizes), or with an
# exercise's function, then drawn with the course's own and captioned so (04's plots call the learner's softmax)
DRAWN_CAPTION = "Drawn with the course's own"
# ...and where a notebook's figure is drawn with an exercise, the caption names it: 07's score table answers a
# prediction and stays off its page, so its figure is the rotation picture drawn with the course's apply_rope
DRAWN_WITH = {"04_softmax_and_probability.html": "softmax", "07_complex_rotations_and_rope.html": "apply_rope"}


def notebook_page_of_the_day(day: int | None = None) -> str:
    """One notebook's page, turning with the date through all ten (each within ten days of runs): a notebook
    page typeset by MathJax in Chromium at two widths costs about 20 core-seconds, and two of them were a
    twentieth of the test command's CPU. The page kind is the same for every notebook; its words differ."""
    names = [f"{a}.html" for a in paths.assignments()]
    day = datetime.date.today().toordinal() if day is None else day
    return names[day % len(names)]


# AUTOGRADER_SITE_ALL=1: every notebook's page, as before a release
SITE_PAGES = ["index.html", *([f"{a}.html" for a in paths.assignments()] if os.environ.get("AUTOGRADER_SITE_ALL") == "1"
                              else [notebook_page_of_the_day()]), "figures.html"]


@pytest.fixture(scope="module")
def made_up_class(tmp_path_factory) -> Path:
    results, recorded = builders.made_up_class(100, seed=7)
    out = tmp_path_factory.mktemp("class")
    report.write_outputs(out, results, recorded)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require_chromium()
    return built_site(tmp_path_factory)  # built once per session, shared with tests/test_website.py


@pytest.fixture(scope="module")
def issue_class(tmp_path_factory):
    require_chromium()  # fail before spending a minute grading on a machine without the browser
    return broken_class.graded(tmp_path_factory.mktemp("broken_class"))


def fits(page, name: str) -> None:
    """Nothing on the page is wider than the screen, outside the boxes that scroll on purpose."""
    seen = page.evaluate(WIDER_THAN_SCREEN, SCROLLERS)
    assert seen["page"] <= min(seen["screen"], seen["inner"]) + 1 and not seen["over"], (
        f"{name} is wider than the screen: {seen}")


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
    keep_shot(page, shots / f"{name}.png", full_page=False)
    return page.inner_text("body"), trouble


def at_width(page, width: str) -> None:
    page.set_viewport_size({"width": WIDTHS[width], "height": 900 if width == "desktop" else 844})


def test_the_class_report_reads_offline_with_mistakes_counted(made_up_class, page, shots):
    text, trouble = open_offline(page, made_up_class / "report.html", shots, "report")
    assert not trouble, trouble
    assert "Class report" in text and "Pass rate per exercise" in text and "Mistakes the class made" in text
    assert re.search(r"\b\d+ of \d+\b: you subtracted the max of the whole array", text), text[:2000]
    assert "Could not be graded" in text and "late penalty" in text
    keep_shot(page, shots / "report_full.png", full_page=True)
    # A mistake's student links to that student's feedback page, which opens.
    link = page.locator("ul.mistakes a").first
    target = link.get_attribute("href")
    link.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(target), (page.url, target)
    assert "Score:" in page.inner_text("body")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["report", "feedback"])
def test_the_made_up_class_pages_fit_and_pass_axe(made_up_class, page, shots, kind, width):
    """The report of 100 submissions over every notebook (its widest tables), and a feedback page with every
    section unfolded: nothing wider than the screen, no serious or critical axe-core violation."""
    at_width(page, width)
    path = made_up_class / "report.html" if kind == "report" else sorted((made_up_class / "feedback").glob("*/*.html"))[0]
    _, trouble = open_offline(page, path, shots, f"made_up_{kind}_{width}")
    assert not trouble, trouble
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    fits(page, path.name)
    assert_accessible(page, f"{path.name} at {WIDTHS[width]} px", contrast=width == "phone")


def test_a_feedback_page_reads_offline(made_up_class, page, shots):
    feedback = sorted((made_up_class / "feedback").glob("*/*.html"))[0]
    text, trouble = open_offline(page, feedback, shots, "feedback")
    assert not trouble, trouble
    assert "Score:" in text and ("failed" in text or "passed" in text)


def test_the_notebook_page_turns_through_every_notebook():
    assert {notebook_page_of_the_day(day) for day in range(10)} == {f"{a}.html" for a in paths.assignments()}


# Pages where every figure a given cell draws is a prediction's answer (01's cosine map answers
# predict_cat_neighbours, its merge-cost plot predict_merge_savings; 02's circle predict_smallest_stretch): the
# site shows none of them, as it must (autograder.site_outputs.drawn_figures), so these pages hold no figure.
ONLY_PREDICTION_FIGURES = {"01_tokens_and_ids.html", "02_shapes_and_matmul.html"}


def kept_figures(name: str) -> int:
    """How many figures of the reference run the site keeps under ``name``'s given cells (the site's own rule:
    :func:`autograder.site_outputs.given_outputs`), each of which the page must show."""
    from autograder.nbio import read_notebook
    from autograder.site_outputs import IMAGE_MIMES, given_outputs

    stem = name.removesuffix(".html")
    student = read_notebook(paths.notebooks_dir() / f"{stem}.ipynb")
    given_outputs(student, read_notebook(paths.solutions_dir() / f"{stem}.ipynb"), stem)
    return sum(any(m in o.get("data", {}) for m in IMAGE_MIMES)
               for c in student.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", SITE_PAGES)
def test_site_pages_render_their_math_offline(site, page, shots, name, width):
    at_width(page, width)
    text, trouble = open_offline(page, site / name, shots, f"site_{name.removesuffix('.html')}_{width}")
    keep_shot(page, shots / f"site_{name.removesuffix('.html')}_{width}_full.png", full_page=True)
    assert not trouble, trouble
    fits(page, name)
    assert_accessible(page, f"{name} at {WIDTHS[width]} px", contrast=width == "phone")
    cut = page.evaluate(CUT_OFF)
    assert not cut, f"{name}: code or an output hides text: {cut}"
    if name == "figures.html":
        assert page.locator("figure img").count() >= 6
        return
    prose = page.evaluate(PROSE)
    assert len(prose) > 2000, f"{name}: hardly any text outside code"
    raw = RAW_TEX.findall(prose)
    assert not raw, f"{name} shows raw TeX on screen: {raw[:5]}"
    longest = page.evaluate(LONGEST_LINES)
    assert 30 < longest <= 85, f"{name}: a line of prose holds {longest} characters"
    hogs = page.evaluate(COLUMN_HOGS)
    assert not hogs, f"{name}: a column of short entries takes most of its table: {hogs}"
    if name != "index.html":
        typeset = page.evaluate("document.querySelectorAll('span.MathJax').length")
        assert typeset > 20, f"{name}: only {typeset} formulas typeset"
        # A formula is real layout, not text: the STIX web fonts shipped with MathJax were loaded from the site.
        assert page.evaluate("[...document.fonts].some(f => f.family.includes('STIX') && f.status === 'loaded')")
        assert "How to run this notebook" in text and "YOUR CODE HERE" in text
        assert "On this page" in text and page.locator("nav.site-toc a").count() >= 4
        # the notebook's title comes before any box, and the figures its given cells drew are on the page
        title = page.locator("h1").first.bounding_box()
        box = page.locator(".site-boxes").first.bounding_box()
        assert title["y"] < box["y"], "the title must come before the boxes"
        # (07 once showed none: its score table answers predict_equal_cells and its rotation lab is a widget)
        kept = kept_figures(name)
        assert kept >= 1 or name in ONLY_PREDICTION_FIGURES, f"{name}: no given cell keeps a figure for the site"
        assert page.locator(".jp-OutputArea-output img").count() >= kept, f"{name}: a given cell's figure is missing"
        captions = page.locator("figure.site-drawn figcaption").all_inner_texts()
        assert all(c.startswith(DRAWN_CAPTION) for c in captions), captions
        if name in DRAWN_WITH:
            assert any(f"course's own {DRAWN_WITH[name]}" in c for c in captions), \
                f"{name}'s plots call the learner's {DRAWN_WITH[name]}: the course's own draws them, captioned so"
        # unfolded, "How to run this notebook" (long file names in code) and the hints fit too
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        fits(page, f"{name} with every box unfolded")
        assert not page.evaluate(CUT_OFF), f"{name}, unfolded: {page.evaluate(CUT_OFF)}"
    else:
        assert "Contents" in text and "10 · The decoder block" in text
        # the first screen shows the course's title and what it is, not how to install it
        first = page.evaluate("[...document.querySelectorAll('h1, h2, pre')].map(el => el.tagName)[0]")
        install = page.locator('pre[aria-label="Install command"]').bounding_box()
        assert first == "H1" and install["y"] > page.viewport_size["height"], "the install command comes first"
        # the map of ten ideas is a table, and its formulas are typeset like a notebook's
        typeset = page.evaluate("document.querySelectorAll('table span.MathJax').length")
        assert typeset >= 1, f"the contents' table has {typeset} formulas typeset"


# --------------------------------------------------------------------------- issue 25's class, graded for real

@pytest.mark.grading
@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_of_a_broken_class_names_everyone_and_fits(issue_class, page, shots, width):
    at_width(page, width)
    text, trouble = open_offline(page, issue_class.out / "report.html", shots, f"broken_report_{width}")
    keep_shot(page, shots / f"broken_report_{width}_full.png", full_page=True)
    assert not trouble, trouble
    fits(page, "report.html")
    assert_accessible(page, f"report.html at {WIDTHS[width]} px", contrast=width == "phone")
    for student in broken_class.STUDENTS:
        assert student in text
    assert "Look at these first: 2" in text and "SyntaxError (line 1)" in text and "timed out" in text
    # a row and the problems under it read without scrolling sideways, though the tables may scroll in their box
    right = page.evaluate("Math.max(...[...document.querySelectorAll('tr[data-row] td, [data-problems]')]"
                          ".map(el => el.getBoundingClientRect().right))")
    assert right <= page.evaluate("document.documentElement.clientWidth") + 1, f"a row reaches {right} px"
    # the autograded notebook link points at a file that is there
    href = page.locator('a[href^="autograded/"]').first.get_attribute("href")
    assert (issue_class.out / href).is_file(), href


@pytest.mark.grading
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("student", ["syntax_and_loop", "blank", "global_max_1", "right_1"])
def test_feedback_pages_of_a_broken_class_read_on_any_screen(issue_class, page, shots, width, student):
    at_width(page, width)
    path = issue_class.out / "feedback" / student / f"{broken_class.A}.html"
    text, trouble = open_offline(page, path, shots, f"broken_feedback_{student}_{width}")
    keep_shot(page, shots / f"broken_feedback_{student}_{width}_full.png", full_page=True)
    assert not trouble, trouble
    fits(page, f"{student}'s feedback")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # passed ones are folded
    fits(page, f"{student}'s feedback, unfolded")
    assert_accessible(page, f"{student}'s feedback at {WIDTHS[width]} px", contrast=width == "phone")
    assert not re.search(r"\btest_\w+", text), re.findall(r"\btest_\w+", text)
    want = {"syntax_and_loop": "SyntaxError on line 1", "blank": "Nothing was filled in",
            "global_max_1": "points lost", "right_1": "(not attempted)"}[student]  # right, but the why not written
    assert want in text, text[:1500]
