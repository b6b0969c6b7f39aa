"""The similarity check's pages in Debian's Chromium: the class report's section, similarity.html and a pair's
side-by-side page, offline, at a desktop width (1280 px) and a phone's (390 px): nothing wider than the screen
(code scrolls in its own box, which a keyboard can reach), no serious or critical axe-core violation.

The class: 30 students of tests/similarity_class.py on notebook 04, 4 of whom copy.
"""
from __future__ import annotations

import pytest

from autograder import paths
from autograder.grade.output import classreport
from autograder.nbio import write_atomic
from autograder.similarity.pages import write_outputs
from autograder.similarity.run import find_similar
from tests.similarity_class import make_class

from .axe import assert_accessible
from .conftest import keep_shot

pytestmark = [pytest.mark.browser]
WIDTHS = {"desktop": 1280, "phone": 390}
OVERFLOW = """() => { const w = document.documentElement.clientWidth; const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('pre, table, .scroll')) continue;
    const r = el.getBoundingClientRect(); if (r.width > 0 && r.right > w + 1) out.push(el.tagName + '.' + el.className);
  }
  return {page: document.documentElement.scrollWidth, screen: w, over: out.slice(0, 5)}; }"""


@pytest.fixture(scope="module")
def similarity_out(tmp_path_factory):
    root = tmp_path_factory.mktemp("similarity-pages")
    make_class(root / "submitted", paths.root(), ["04_softmax_and_probability"], students=30, copiers=4, seed=11)
    out = root / "submitted-graded"
    result = find_similar(root / "submitted", jobs=1)
    assert result.pairs, "the class has planted copies: some pair must be named"
    write_outputs(out, result, root / "submitted")
    write_atomic(out / "report.html", classreport.page([], out))
    return out


def test_the_similarity_pages_fit_and_pass_axe(similarity_out, page, shots):
    """One page (one browser context) for the three pages at both widths: a context costs a fifth of a
    core-second, and the six checks need no isolation from each other."""
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    pair = sorted((similarity_out / "similarity").glob("*.html"))[0]
    for width, pixels in WIDTHS.items():
        page.set_viewport_size({"width": pixels, "height": 900 if width == "desktop" else 844})
        for kind, path in (("report", similarity_out / "report.html"), ("similarity", similarity_out / "similarity.html"),
                           ("pair", pair)):
            page.goto(path.as_uri())
            keep_shot(page, shots / f"{kind}_{width}.png", full_page=False)
            text = page.inner_text("body")
            assert "not who copied" in text and "What it cannot see" in text, path.name
            if kind == "pair":
                assert page.locator("mark").count() > 1 and page.locator("pre[tabindex='0']").count() >= 2
            else:
                assert page.locator("#similarity a[href^='similarity/']").count() >= 1, path.name
            size = page.evaluate(OVERFLOW)
            assert size["page"] <= size["screen"] and not size["over"], f"{path.name} at {pixels} px: {size}"
            assert_accessible(page, f"{path.name} at {pixels} px", contrast=width == "phone")
