"""Does a student notebook's ipywidgets lab respond in a real JupyterLab?

The test opens a student notebook the way a learner who has done its exercises does (the released
notebook with every exercise answered by the course's code), runs all cells, moves the lab's slider and
asserts that the lab's output text changed. Run All must run every cell: a learner who has answered
everything is not stopped anywhere, so a cell that raises fails the test and says where. (A fresh
notebook stops at its first check by design, "Run All stops at the first exercise you have not finished
yet", which is why this test once had to run cells past the errors.) Screenshots of each step are kept when
$BROWSER_SCREENSHOTS is set; a failed run keeps the page as it was (tests/browser/conftest.py).
"""
from __future__ import annotations

import ast
import os
import re
import time
from pathlib import Path

import nbformat
import pytest

from .conftest import keep_shot

pytestmark = pytest.mark.browser

# Notebooks with a slider lab, in the order we prefer to test them: the lightest Run All first (06's kernel
# costs about 6 core-seconds under nbval, 04's about 10).
LAB_NOTEBOOKS = ("06", "04", "05", "07")
POLL_MS = 250  # a wait checks four times a second, not at every frame (a core-second per wait of 10 s)
KERNEL_TIMEOUT_MS = 120_000
# Controls are removed before reading a lab's output, so that a slider's own readout
# moving does not count as the lab responding.
CONTROLS = (".widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-checkbox, "
            ".widget-text, .widget-button, .widget-radio, .widget-play, .widget-select")

JS_KERNEL_STATUS = """async () => {
    const w = window.jupyterapp.shell.currentWidget;
    if (!w || !w.sessionContext) return 'no notebook';
    await w.context.ready;
    await w.sessionContext.ready;
    const k = w.sessionContext.session && w.sessionContext.session.kernel;
    return k ? k.status : 'no kernel';
}"""

JS_CELLS = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    return w.content.widgets.map((cell, index) => {
        const m = cell.model;
        const outputs = m.type === 'code' ? m.outputs.toJSON() : [];
        const error = outputs.find(o => o.output_type === 'error');
        return {index, type: m.type, count: m.type === 'code' ? m.executionCount : null,
                error: error ? `${error.ename}: ${error.evalue}` : null,
                head: m.sharedModel.getSource().split('\\n')[0].slice(0, 80)};
    });
}"""

JS_LAB_SOURCE = """() => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets.find(c => c.node.querySelector('.widget-slider'));
    return cell ? cell.model.sharedModel.getSource() : '';
}"""

JS_OUTPUT = """([cell, controls]) => {
    const area = cell.querySelector('.jp-Cell-outputArea') || cell;
    const clone = area.cloneNode(true);
    clone.querySelectorAll(controls).forEach(e => e.remove());
    const text = clone.textContent.replace(/\\s+/g, ' ').trim();
    const images = Array.from(area.querySelectorAll('img')).map(i => i.src.length + ':' + i.src.slice(-64));
    return {text, images: images.join('|')};
}"""


WIDGETS = re.compile(r"\bipywidgets\b|\binteract\b|widgets\.")  # code that makes (or imports) a lab


def lab_notebook(root: Path) -> Path | None:
    """The first student notebook (04, then 06, 05, 07) whose code uses ipywidgets.

    $BROWSER_LAB_NOTEBOOK (a prefix such as 06) tries that notebook instead.
    """
    for prefix in [os.environ["BROWSER_LAB_NOTEBOOK"]] if os.environ.get("BROWSER_LAB_NOTEBOOK") else LAB_NOTEBOOKS:
        for path in sorted(root.glob(f"{prefix}_*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            if any(c.cell_type == "code" and WIDGETS.search(c.source) for c in nb.cells):
                return path
    return None


def answered_copy(released: Path) -> Path:
    """Beside the released notebook, the same notebook with every exercise answered by the course's code."""
    from tests.builders import right_notebook

    answered = released.with_name(released.stem + "_answered.ipynb")
    nbformat.write(right_notebook(released.stem), answered)
    return answered


def exercises_used_by(notebook: Path, lab_source: str) -> list[str]:
    """Exercise functions (solution cells' grade_ids) that the lab's code calls."""
    nb = nbformat.read(notebook, as_version=4)
    names = [c.metadata.nbgrader["grade_id"] for c in nb.cells
             if c.metadata.get("nbgrader", {}).get("solution") and "grade_id" in c.metadata.nbgrader]
    try:
        tree = ast.parse(lab_source)
    except SyntaxError:  # IPython syntax: fall back to the text
        return [n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\s*\(", lab_source)]
    called = {node.func.id for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return [n for n in names if n in called]


def wait_for_kernel_idle(page, timeout_ms: int = KERNEL_TIMEOUT_MS) -> None:
    deadline = time.monotonic() + timeout_ms / 1000
    status = None
    while time.monotonic() < deadline:
        status = page.evaluate(JS_KERNEL_STATUS)
        if status == "idle":
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the notebook's kernel is still '{status}' after {timeout_ms / 1000:.0f} s")


def open_notebook(page, url: str, name: str) -> None:
    page.goto(f"{url}/lab/tree/{name}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext", timeout=KERNEL_TIMEOUT_MS,
                           polling=POLL_MS)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=KERNEL_TIMEOUT_MS)
    wait_for_kernel_idle(page)


def wait_for_images(page, element) -> None:
    """Wait until every image in an element has loaded and been decoded, so screenshots show plots."""
    page.wait_for_function(
        "(el) => Array.from(el.querySelectorAll('img')).every(i => i.complete && i.naturalWidth > 0)",
        arg=element.element_handle(), timeout=15_000, polling=POLL_MS)
    page.evaluate("(el) => Promise.all(Array.from(el.querySelectorAll('img')).map(i => i.decode().catch(() => null)))",
                  element.element_handle())
    page.wait_for_timeout(300)


def settle(page, lab, output: dict, quiet_s: float = 1.5, timeout_s: float = 60) -> dict:
    """The lab's output once it has stopped changing and the kernel is idle (each key press may run the lab)."""
    deadline = time.monotonic() + timeout_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(300)
        now = page.evaluate(JS_OUTPUT, [lab.element_handle(), CONTROLS])
        if now != output:
            output, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s and page.evaluate(JS_KERNEL_STATUS) == "idle":
            return output
    return output


def move_slider(page, slider) -> str:
    """Move a slider to a new value by keyboard, or by dragging when keys do nothing; say how."""
    readout = slider.locator(".widget-readout")
    before = readout.inner_text() if readout.count() else None
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    if readout.count() and readout.inner_text() != before:
        return f"keyboard: {before} -> {readout.inner_text()}"
    box = slider.locator(".noUi-target, .slider").first.bounding_box()
    hb = handle.bounding_box()
    page.mouse.move(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.8 * box["width"], hb["y"] + hb["height"] / 2, steps=10)
    page.mouse.up()
    page.wait_for_timeout(300)
    return f"drag: {before} -> {readout.inner_text() if readout.count() else '?'}"


def test_lab_slider_changes_the_output(lab_server, page, shots):
    """After Run All on a fresh student notebook, does moving the lab's slider change what the lab prints?"""
    released = lab_notebook(lab_server.root)
    if released is None:
        pytest.skip(f"no student notebook with an ipywidgets lab yet (looked for "
                    f"{', '.join(p + '_*.ipynb' for p in LAB_NOTEBOOKS)} in notebooks/)")
    notebook = answered_copy(released)
    report = [f"notebook: {notebook.name}"]
    started = time.monotonic()
    open_notebook(page, lab_server.url, notebook.name)
    report.append(f"opened, kernel idle after {time.monotonic() - started:.1f} s")

    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_for_kernel_idle(page)
    keep_shot(page, shots / "01_after_run_all.png")
    cells = page.evaluate(JS_CELLS)
    errors = [c for c in cells if c["error"]]
    never_ran = [c for c in cells if c["type"] == "code" and c["count"] is None]
    report.append(f"Run All: {len(cells)} cells, {len(errors)} raised "
                  f"(first: cell {errors[0]['index']} `{errors[0]['head']}` -> {errors[0]['error']})" if errors
                  else f"Run All: {len(cells)} cells, none raised")

    if errors or never_ran:
        (shots / "report.txt").write_text("\n".join(report) + "\n")
        where = (f"cell {errors[0]['index']} `{errors[0]['head']}` raised {errors[0]['error'][:300]}" if errors
                 else f"cell {never_ran[0]['index']} `{never_ran[0]['head']}` never ran")
        raise AssertionError(f"{notebook.name}: Run All stopped: {where}; {len(never_ran)} code cells never ran. "
                             "Every exercise is answered, so every cell must run.\n" + "\n".join(report))
    sliders = page.locator(".jp-Notebook .jp-Cell:has(.widget-slider)")
    try:
        sliders.first.wait_for(state="attached", timeout=30_000)
    except Exception:
        page.screenshot(path=shots / "02_no_slider.png")
        (shots / "report.txt").write_text("\n".join(report) + "\n")
        raise AssertionError(f"{notebook.name}: no `.widget-slider` appeared after running every cell; "
                             f"see {shots / '02_no_slider.png'}\n" + "\n".join(report))

    lab = sliders.first
    lab_source = page.evaluate(JS_LAB_SOURCE)
    used = exercises_used_by(notebook, lab_source)
    report.append(f"the lab calls these exercises: {used}" if used else "the lab calls no exercise")
    output = lab.locator(".jp-Cell-outputArea").first
    output.scroll_into_view_if_needed()
    wait_for_images(page, output)
    before = settle(page, lab, page.evaluate(JS_OUTPUT, [lab.element_handle(), CONTROLS]))
    keep_shot(page, shots / "02_lab_before.png")
    keep_shot(output, shots / "02_lab_output_before.png")

    how = move_slider(page, lab.locator(".widget-slider").first)
    report.append(f"moved the slider by {how}")
    deadline = time.monotonic() + 20
    after = before
    while time.monotonic() < deadline and after == before:
        page.wait_for_timeout(250)
        after = page.evaluate(JS_OUTPUT, [lab.element_handle(), CONTROLS])
    after = settle(page, lab, after)
    output.scroll_into_view_if_needed()
    wait_for_images(page, output)
    keep_shot(page, shots / "03_lab_after.png")
    keep_shot(output, shots / "03_lab_output_after.png")
    report += [f"lab output before: {before['text'][:300]!r}", f"lab output after:  {after['text'][:300]!r}",
               f"images before/after: {before['images'].count('|') + bool(before['images'])}/"
               f"{after['images'].count('|') + bool(after['images'])}, changed: {before['images'] != after['images']}",
               f"total {time.monotonic() - started:.1f} s"]
    (shots / "report.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))

    assert "NotImplementedError" not in after["text"], (
        f"{notebook.name}: the lab calls an exercise the learner has not written yet "
        f"(its output shows NotImplementedError): {after['text'][:300]!r}")
    assert "Traceback" not in after["text"] and "Error" not in after["text"].split(":")[0], (
        f"{notebook.name}: the lab raised when the slider moved: {after['text'][:300]!r}")
    assert after["text"] != before["text"], (
        f"{notebook.name}: moving the lab's slider ({how}) did not change its output text "
        f"{before['text'][:200]!r}; the page is kept in {shots}")
