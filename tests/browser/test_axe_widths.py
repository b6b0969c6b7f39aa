"""The rule that lets axe-core's colour-contrast run at the phone's width only (tests/browser/axe.py) sees what
would make the desktop's width a page of its own: a colour or a weight set for some widths, or a font that is
larger at the phone's width, in the page's own styles or in a style sheet linked from the disk."""
from __future__ import annotations

import pytest

from .axe import width_rules_that_change_contrast

pytestmark = [pytest.mark.browser]

PAGE = """<!doctype html><html lang="en"><head><title>t</title>{link}<style>p{{color:#222}}{rule}</style></head>
<body><main><p>text</p></main></body></html>"""


@pytest.mark.parametrize("rule, seen", [
    ("", False),
    ("@media (max-width:40rem){p{margin:0;font-size:.9em}}", False),   # a shrink at the phone's width
    ("@media (max-width:40rem){body{font-size:15px}}", False),
    ("@media (max-width:40rem){p{color:#777}}", True),
    ("@media (min-width:40rem){p{background:#eee}}", True),
    ("@media (max-width:40rem){p{font-size:1.3em}}", True),           # larger on the phone: desktop is stricter
    ("@media (min-width:40rem){p{font-size:.8em}}", True),            # smaller on the desktop
    ("@media (max-width:40rem){p{font-weight:700}}", True),
    ("@media print{p{color:#999}}", False),                            # not a width
])
def test_a_rule_for_some_widths_that_changes_contrast_is_seen(page, tmp_path, rule, seen):
    path = tmp_path / "page.html"
    path.write_text(PAGE.format(link="", rule=rule), encoding="utf-8")
    page.goto(path.as_uri())
    assert bool(width_rules_that_change_contrast(page)) == seen, rule


def test_a_linked_sheet_is_read_from_the_disk(page, tmp_path):
    (tmp_path / "site.css").write_text("@media (max-width:40rem){p{color:#777}}", encoding="utf-8")
    path = tmp_path / "page.html"
    path.write_text(PAGE.format(link='<link rel="stylesheet" href="site.css">', rule=""), encoding="utf-8")
    page.goto(path.as_uri())
    found = width_rules_that_change_contrast(page)
    assert found and "color" in found[0], found
