"""axe-core in the browser tests: inject it into an open page and list what it finds critical or serious.

axe-core is the version tools/system-packages.sh pins (its ``AXE_VERSION``), installed with
``npm install --global``; its ``axe.min.js`` is read from npm's global root, or from $AXE_CORE_PATH when set.
A missing or different axe-core fails the test with the command that installs it, never a silent skip.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from autograder import paths

SCRIPT = paths.root() / "tools" / "system-packages.sh"
SEVERE = ("critical", "serious")
# Rules of lesser impact the pages are held to as well: each was broken once (issue 40) and is cheap to keep.
ALSO = ("landmark-one-main", "landmark-unique", "empty-table-header", "image-alt")
# What the pages are held to: WCAG 2.0 and 2.1, A and AA, and axe's best practices (landmarks, headings).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
RUN = """async ([tags, contrast]) => {
  const found = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'],
                                         rules: {'color-contrast': {enabled: contrast}}});
  return found.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ') + (n.failureSummary ? ': ' + n.failureSummary.split('\\n')[1] : ''))}));
}"""


def pinned_version() -> str:
    """The axe-core version tools/system-packages.sh installs."""
    m = re.search(r"^AXE_VERSION=(\S+)", SCRIPT.read_text(encoding="utf-8"), re.M)
    assert m, f"{SCRIPT} names no AXE_VERSION"
    return m.group(1)


@functools.cache
def axe_source() -> str:
    """The text of axe.min.js, or a test failure that says how to install it."""
    version = pinned_version()
    install = (f"install it with `bash tools/system-packages.sh` (as root or with sudo), i.e. "
               f"`npm install --global axe-core@{version}`, or set AXE_CORE_PATH to an axe.min.js")
    if os.environ.get("AXE_CORE_PATH"):
        path = Path(os.environ["AXE_CORE_PATH"])
    else:
        try:
            root = subprocess.run(["npm", "root", "--global"], capture_output=True, text=True, timeout=60,
                                  check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError) as exc:
            pytest.fail(f"axe-core: cannot ask npm for its global root ({exc}); {install}", pytrace=False)
        path = Path(root) / "axe-core" / "axe.min.js"
        package = path.parent / "package.json"
        if package.is_file():
            found = re.search(r'"version"\s*:\s*"([^"]+)"', package.read_text(encoding="utf-8"))
            if found and found.group(1) != version:
                pytest.fail(f"axe-core {found.group(1)} is installed at {path.parent}, the tests pin {version}: "
                            f"{install}", pytrace=False)
    if not path.is_file():
        pytest.fail(f"axe-core is missing: no {path}; {install}", pytrace=False)
    return path.read_text(encoding="utf-8")


# Colour-contrast is checked at the phone's width, where text is no larger than at the desktop's (axe lets large
# text pass at 3:1 instead of 4.5:1). What would make the desktop's width a page of its own: a rule for some
# widths (``@media (max-width: ...)`` and the like) that sets a colour or see-through-ness, sets a weight, or
# sets a font size that is not a shrink at the phone's width (in a max-width rule: at most 1em, 100% or 16px,
# the browser's base). Each found: the media condition, the selector and the property.
WIDTH_RULES_THAT_CHANGE_CONTRAST = """(texts) => { const out = [], unread = [];
  const colour = /^(color|background|background-color|background-image|opacity|filter|mix-blend-mode|-webkit-text-fill-color|font-weight)$/;
  const shrinks = (v) => { const m = /^([0-9.]+)(em|rem|%|px)$/.exec(v.trim()); if (!m) return /^(smaller|small|x-small|xx-small)$/.test(v.trim());
    const n = parseFloat(m[1]); return m[2] === '%' ? n <= 100 : m[2] === 'px' ? n <= 16 : n <= 1; };
  const visit = (rules, media) => { for (const r of rules) {
    if (r instanceof CSSMediaRule) { if (/width/.test(r.conditionText)) visit(r.cssRules, r.conditionText); continue; }
    if (!media || !(r instanceof CSSStyleRule)) continue;
    for (const prop of r.style) {
      const size = prop === 'font-size' && !(/max-width/.test(media) && !/min-width/.test(media) && shrinks(r.style.getPropertyValue(prop)));
      if (colour.test(prop) || size) out.push(`@media ${media} { ${r.selectorText} { ${prop}: ${r.style.getPropertyValue(prop)} } }`); } } };
  // a sheet linked over file:// cannot be read from the page (another origin): its text comes from the disk
  for (const sheet of document.styleSheets) { try { visit(sheet.cssRules, ''); } catch (e) { unread.push(sheet.href); } }
  for (const text of texts) { const sheet = new CSSStyleSheet(); sheet.replaceSync(text); visit(sheet.cssRules, ''); }
  return {out, unread}; }"""


def width_rules_that_change_contrast(page) -> list[str]:
    """:data:`WIDTH_RULES_THAT_CHANGE_CONTRAST` over every style sheet of the page, those linked from the disk too."""
    found = page.evaluate(WIDTH_RULES_THAT_CHANGE_CONTRAST, [])
    texts, unreadable = [], []
    for href in found["unread"]:
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(href or "").path))
        if (href or "").startswith("file:") and path.is_file():
            texts.append(path.read_text(encoding="utf-8"))
        else:
            unreadable.append(f"a style sheet neither the page nor the test can read: {href}")
    if texts:
        found = page.evaluate(WIDTH_RULES_THAT_CHANGE_CONTRAST, texts)
    return [*found["out"], *unreadable]


def severe_violations(page, also: tuple[str, ...] = (), contrast: bool = True) -> list[dict]:
    """The critical and serious axe-core violations of the page as it is now, and those of the rules ``also``
    names whatever their impact (each: id, impact, help, and the elements it found, as CSS selectors with the
    first line of why). ``contrast=False`` leaves out axe's colour-contrast rule."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    return [v for v in page.evaluate(RUN, [TAGS, contrast]) if v["impact"] in SEVERE or v["id"] in also]


def assert_accessible(page, name: str, contrast: bool = True) -> None:
    """No critical or serious axe-core violation on the page, nor one of :data:`ALSO`.

    ``contrast=False`` is for the desktop's width of a page also checked at the phone's: colour-contrast is most
    of axe's time (about 30 of the 38 s it takes on a class report of 11,000 elements), and at a wider screen
    what it measures cannot get worse while no rule for some widths changes a colour or a weight or makes the
    phone's text larger. That is asserted here, on the style sheets the browser loaded."""
    if not contrast:
        changes = width_rules_that_change_contrast(page)
        assert not changes, (f"{name}: a rule for some widths changes what colour-contrast measures, so check "
                             f"contrast at this width too: {changes[:5]}")
    found = severe_violations(page, ALSO, contrast)
    assert not found, f"{name}: {len(found)} axe-core violation(s), critical, serious or of {ALSO}:\n" + "\n".join(
        f"  {v['impact']} {v['id']} ({v['help']}), {len(v['nodes'])} element(s): {v['nodes'][:3]}" for v in found)
