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
from pathlib import Path

import pytest

from autograder import paths

SCRIPT = paths.root() / "tools" / "system-packages.sh"
SEVERE = ("critical", "serious")
# Rules of lesser impact the pages are held to as well: each was broken once (issue 40) and is cheap to keep.
ALSO = ("landmark-one-main", "landmark-unique", "empty-table-header", "image-alt")
# What the pages are held to: WCAG 2.0 and 2.1, A and AA, and axe's best practices (landmarks, headings).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
RUN = """async (tags) => {
  const found = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
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


def severe_violations(page, also: tuple[str, ...] = ()) -> list[dict]:
    """The critical and serious axe-core violations of the page as it is now, and those of the rules ``also``
    names whatever their impact (each: id, impact, help, and the elements it found, as CSS selectors with the
    first line of why)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    return [v for v in page.evaluate(RUN, TAGS) if v["impact"] in SEVERE or v["id"] in also]


def assert_accessible(page, name: str) -> None:
    """No critical or serious axe-core violation on the page, nor one of :data:`ALSO`."""
    found = severe_violations(page, ALSO)
    assert not found, f"{name}: {len(found)} axe-core violation(s), critical, serious or of {ALSO}:\n" + "\n".join(
        f"  {v['impact']} {v['id']} ({v['help']}), {len(v['nodes'])} element(s): {v['nodes'][:3]}" for v in found)
