"""Does `python -m autograder site` build the course's website from the student notebooks, offline, and say no clearly?

The whole site is built once per module (about 10 s); its pages are checked as files here and in
Chromium in tests/browser/test_report_and_site.py.
"""
from __future__ import annotations

import ast
import copy
import html
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import learner_work, paths, site_outputs, website
from autograder.checks import questions
from autograder.nbio import is_solution_cell, read_notebook
from tests.site_build import built_site

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = pytest.mark.xdist_group("test_website")

README = (paths.root() / "README.md").read_text(encoding="utf-8")
NOTEBOOKS = sorted(p.stem for p in paths.notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
REMOTE = re.compile(r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//|"""
                    r"""@import\s+url\(\s*["']?(?:https?:)?//|import\(\s*["'](?:https?:)?//""", re.I)


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, timeout=300,
                          env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> website.Site:
    """The site as `python -m autograder site --out DIR` builds it."""
    out = built_site(tmp_path_factory)  # shared with the browser's tests of the same site
    pages = sorted(out.glob("*.html"))
    return website.Site(out=out, pages=pages, seconds=0.0, bytes=sum(p.stat().st_size for p in out.rglob("*")
                                                                     if p.is_file()))


def test_readme_gives_every_notebook_its_line_the_install_command_and_the_figures():
    builds = website.readme_builds(README)
    assert sorted(builds) == [n[:2] for n in NOTEBOOKS], "README's notebook table and notebooks/ disagree"
    assert "pip install -r requirements.txt" in website.readme_install(README)
    figures = website.readme_figures(README)
    assert len(figures) >= 6 and all(f.caption and f.title for f in figures)
    assert all((paths.root() / "examples" / "figures" / f"{f.stem}.svg").exists() for f in figures)


def test_a_figures_alt_text_names_it_and_leaves_its_caption_to_the_caption(built):
    """A screen reader reads the alt text and then the figcaption: the caption is said once."""
    figures = [found for page in built.pages for found in re.findall(
        r'<figure id="[^"]+"><img [^>]*?alt="([^"]*)"[^>]*><figcaption><b>([^<]*)\.</b> ([^<]*)',
        page.read_text(encoding="utf-8"))]
    assert len(figures) >= 6, "the README's figures are on the site's pages"
    for alt, title, caption in figures:
        assert alt == title and caption[:40] not in alt, (alt, caption)


def test_every_notebook_has_a_page_in_prerequisite_order(built):
    index = (built.out / "index.html").read_text(encoding="utf-8")
    positions = [index.find(f'href="{n}.html"') for n in NOTEBOOKS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), "contents are not in 01..10 order"
    for number, line in website.readme_builds(README).items():
        assert f'data-builds="{number}"' in index, f"notebook {number} has no line on what it builds"
    for n in NOTEBOOKS:
        page = (built.out / f"{n}.html").read_text(encoding="utf-8")
        assert "How to run this notebook" in page and "nbgrader fetch_assignment" in page
        assert (built.out / "notebooks" / f"{n}.ipynb").exists(), f"{n}: the notebook is not downloadable"


def test_the_site_is_built_from_the_student_notebooks_never_the_solutions(built):
    """Does every exercise show its stub, and no page carry a solution or a hidden test?"""
    for n in NOTEBOOKS:
        page = (built.out / f"{n}.html").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in page and "BEGIN HIDDEN TESTS" not in page, n
        assert "NotImplementedError" in page, f"{n}: no exercise stub on the page"
        solution = read_notebook(paths.solutions_dir() / f"{n}.ipynb")
        student = read_notebook(paths.notebooks_dir() / f"{n}.ipynb")
        given = "\n".join(c.source for c in student.cells)
        for cell in solution.cells:  # a solution line the learner never sees must not be on the page
            if is_solution_cell(cell):
                lines = [ln.strip() for ln in cell.source.splitlines()
                         if len(ln.strip()) > 30 and ln.strip() not in given]
                leaked = [ln for ln in lines if ln in page]
                assert not leaked, f"{n}: solution code on the page: {leaked[:2]}"


def test_the_site_loads_nothing_from_another_host(built):
    for path in built.out.glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert not REMOTE.search(text), f"{path.name} loads {REMOTE.search(text).group(0)!r}"
    assert (built.out / "mathjax" / "MathJax.js").exists()
    assert 'src="mathjax/MathJax.js?config=' in (built.out / "04_softmax_and_probability.html").read_text()


def test_figures_from_the_readme_are_on_the_site(built):
    figures = (built.out / "figures.html").read_text(encoding="utf-8")
    for fig in website.readme_figures(README):
        assert f'src="figures/{fig.stem}.svg"' in figures and (built.out / "figures" / f"{fig.stem}.svg").exists()
    assert 'src="figures/temperature.svg"' in (built.out / "04_softmax_and_probability.html").read_text()


def test_site_size_and_pages_are_reported(built):
    print(f"site: {len(built.pages)} pages, {built.bytes / 2**20:.1f} MiB")
    assert built.bytes < 20 * 2**20, "the site grew past 20 MiB: is all of MathJax copied?"


# --------------------------------------------------------------------------- bad input

def test_out_that_is_a_file_is_refused_in_one_line(tmp_path):
    target = tmp_path / "site.html"
    target.write_text("mine")
    proc = cli("site", "--out", str(target))
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "is a file" in proc.stderr and target.read_text() == "mine"


def test_a_folder_of_other_files_is_never_replaced(tmp_path):
    (tmp_path / "thesis.tex").write_text("keep me")
    proc = cli("site", "--out", str(tmp_path))
    assert proc.returncode == 2 and "other files" in proc.stderr and (tmp_path / "thesis.tex").exists()


def test_missing_mathjax_says_what_to_install(tmp_path):
    import os

    env = {**os.environ, "MATHJAX_DIR": str(tmp_path / "nowhere")}
    proc = cli("site", "--out", str(tmp_path / "site"), env=env)
    assert proc.returncode == 1 and "jupyter-server-mathjax" in proc.stderr and not (tmp_path / "site").exists()


def test_mathjax_comes_from_a_python_package_not_debian():
    """Does the site build after README's Python install alone (no /usr/share/javascript)?"""
    found = website.mathjax_dir()
    assert "jupyter_server_mathjax" in str(found) and (found / "MathJax.js").is_file(), found
    assert any(line.startswith("jupyter-server-mathjax==") for line in
               (paths.root() / "requirements.txt").read_text().splitlines()), "pin it in requirements.txt"


# --------------------------------------------------------------------------- outputs of given cells

def test_given_cells_show_their_reference_outputs_and_exercises_show_none(built):
    page = (built.out / "04_softmax_and_probability.html").read_text(encoding="utf-8")
    # given cells that read no exercise print these in the reference run (the numbers are only in the outputs):
    # a softmax worked by hand, and the NLL of a confident and of an unlikely guess
    assert "[0.6652 0.2447 0.09  ]" in page and "p = 0.8: NLL = 0.223 nats" in page, "a printed demo is missing"
    assert "vnd.autograder.evidence" not in page and "passed:" not in page, "a check's output reached the page"
    # the code says print("you predicted", ...); only its output would carry the reference's answer
    assert not re.search(r"you predicted \(", page), "a prediction's answer (the reference's prediction) is on the page"
    attention = (built.out / "09_attention.html").read_text(encoding="utf-8")
    assert attention.count('src="data:image/png') >= 1, "a figure a given cell draws without an exercise is missing"


def solution_run_lines(n: str, kept: str) -> dict[str, list[str]]:
    """Per given cell of notebook ``n`` that calls one of its exercises by name (a plain oracle: the name followed
    by "("), the lines its solution run printed, less any line a kept cell's output (``kept``) or the notebook's
    own text also holds (a header printed as written in the code)."""
    written = "\n".join(c.source for c in read_notebook(paths.notebooks_dir() / f"{n}.ipynb").cells)
    solution = read_notebook(paths.solutions_dir() / f"{n}.ipynb")
    names = {c.metadata["nbgrader"]["grade_id"] for c in solution.cells if is_solution_cell(c)}
    found = {}
    for cell in solution.cells:
        if cell.cell_type != "code" or cell.metadata.get("nbgrader"):
            continue
        if not any(re.search(rf"\b{re.escape(name)}\(", cell.source) for name in names):
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        lines = [ln.strip() for ln in text.splitlines()
                 if len(ln.strip()) > 15 and ln.strip() not in kept and ln.strip() not in written]
        if lines:
            found[cell.source.splitlines()[0][:60]] = lines
    return found


def test_no_output_of_the_solution_run_under_an_exercise_the_learner_has_not_written(built):
    """Does no page show what the solution run printed in a cell that calls an exercise? The learner's page has
    only the stub, so "equal to the NumPy version: True" under it would be the course's answer, not theirs."""
    checked = 0
    for n in NOTEBOOKS:
        page = html.unescape((built.out / f"{n}.html").read_text(encoding="utf-8"))
        shown = read_notebook(paths.notebooks_dir() / f"{n}.ipynb")
        assert all(c.cell_type != "code" or not c.get("outputs") for c in shown.cells), "released without outputs"
        website.given_outputs(shown, read_notebook(paths.solutions_dir() / f"{n}.ipynb"), n)
        kept = "\n".join("".join(o.get("text", "")) for c in shown.cells if c.cell_type == "code" for o in c.outputs)
        for cell, lines in solution_run_lines(n, kept).items():
            leaked = [ln for ln in lines if ln in page]
            assert not leaked, f"{n}: the solution run's output of {cell!r} is on the page: {leaked[:2]}"
            checked += 1
    assert checked > 40, f"only {checked} cells calling an exercise were checked"
    attention = html.unescape((built.out / "09_attention.html").read_text(encoding="utf-8"))
    assert "equal to the NumPy version: True" not in attention, "the example of issue 40"


def test_no_page_says_whose_pieces_the_set_up_took(built):
    """The set-up lines of 05, 09 and 10 ("... the course's: the notebooks here are the course's solutions, not
    yours") are the course's run, never the learner's: no page shows them."""
    for path in built.out.glob("*.html"):
        text = html.unescape(path.read_text(encoding="utf-8"))
        assert "the course's solutions" not in text and "the course's:" not in text, path.name


DRAWN = re.compile(r'<figure class="site-drawn"><img\b[^>]*\bsrc="data:image/(?:png|jpeg);base64,[^"]+"[^>]*>'
                   r"<figcaption>(.*?)</figcaption></figure>", re.S)


def figure_cells_calling(n: str, names: set[str]) -> list[str]:
    """The given cells of notebook ``n`` that call one of ``names`` by name (a plain oracle: the name followed by
    "(") and drew a figure in the reference run, as the same code in both notebooks: the first line of each."""
    solution = {c.get("id"): c for c in read_notebook(paths.solutions_dir() / f"{n}.ipynb").cells}
    found = []
    for cell in read_notebook(paths.notebooks_dir() / f"{n}.ipynb").cells:
        ran = solution.get(cell.get("id"))
        if cell.cell_type != "code" or cell.metadata.get("nbgrader") or ran is None or ran.source != cell.source:
            continue
        drew = any(k.startswith("image/") for o in ran.get("outputs", []) for k in o.get("data", {}))
        if drew and any(re.search(rf"\b{re.escape(name)}\(", cell.source) for name in names):
            found.append(cell.source.splitlines()[0])
    return found


def test_04s_figures_are_on_its_page_drawn_with_the_courses_softmax_and_captioned_so(built):
    """04's figure cells call the learner's softmax, which the released notebook only stubs: its page shows the
    figures the course's own softmax drew (the reference run's images, never its code nor a line it printed), and
    says so under each. Once, 04's page had no figure at all."""
    n = "04_softmax_and_probability"
    page = (built.out / f"{n}.html").read_text(encoding="utf-8")
    solution = read_notebook(paths.solutions_dir() / f"{n}.ipynb")
    exercises = {c.metadata["nbgrader"]["grade_id"] for c in solution.cells if is_solution_cell(c)}
    cells = figure_cells_calling(n, {name for name in exercises if name.startswith("softmax")})
    assert cells, "the guard: 04 has a given figure cell that calls its softmax"
    captions = DRAWN.findall(page)
    assert len(captions) >= len(cells), f"04's page shows {len(captions)} figures for the {len(cells)} cells {cells}"
    assert any("the course's own <code>softmax" in c for c in captions), captions
    assert all(c.startswith("Drawn with the course's own") and "not with your work" in c for c in captions), captions


def test_07s_page_shows_a_rotation_drawn_with_the_courses_apply_rope_and_not_its_score_table(built):
    """07's score table answers predict_equal_cells, so it stays off the page; its page once had no figure at all.
    The picture of one row turned by apply_rope at positions 0 .. 6 answers no prediction: it travels, drawn with
    the course's own apply_rope and captioned so."""
    n = "07_complex_rotations_and_rope"
    page = (built.out / f"{n}.html").read_text(encoding="utf-8")
    assert figure_cells_calling(n, {"apply_rope"}), "the guard: 07 has a given figure cell that calls apply_rope"
    captions = DRAWN.findall(page)
    assert captions, "07's page shows no figure"
    assert all(c.startswith("Drawn with the course's own") and "not with your work" in c for c in captions), captions
    assert any("the course's own <code>apply_rope</code>" in c for c in captions), captions
    assert not [c for c in captions if "diagonal_spread" in c or "predict_" in c], "the score table answers a prediction"


def test_a_figure_drawn_with_an_exercise_is_the_courses_on_every_page_and_never_a_predictions(built):
    """Any notebook's given cell that draws with an exercise's function shows the reference run's figure, captioned
    with the names it was drawn with; a figure drawn from a prediction's answer stays off the page (it would be
    the answer), as does everything else the cell printed."""
    shown = 0
    for n in NOTEBOOKS:
        page = (built.out / f"{n}.html").read_text(encoding="utf-8")
        student = read_notebook(built.out / "notebooks" / f"{n}.ipynb")  # the notebook the page was built from
        solution = read_notebook(paths.solutions_dir() / f"{n}.ipynb")
        website.given_outputs(student, solution, n)
        drawn = [o for c in student.cells if c.cell_type == "code" for o in c.outputs if website.DRAWN in o.get("metadata", {})]
        assert len(DRAWN.findall(page)) == len(drawn), n
        for output in drawn:
            assert set(output.data) <= set(website.IMAGE_MIMES), f"{n}: more than the figure travelled"
            assert not [name for name in output.metadata[website.DRAWN] if questions.is_question(n, name)], n
        shown += len(drawn)
    assert shown >= 5, f"only {shown} figures drawn with an exercise across the course"


def test_a_figure_drawn_from_a_prediction_or_from_changed_code_is_left_out():
    """The rule alone, on a small notebook: the figure of a cell that calls the exercise travels with its names
    and without its printed line; the same cell edited, or one drawing a prediction's answer, shows nothing."""
    def notebook(stub: str, outputs: bool):
        nb = nbformat.v4.new_notebook()
        exercise = nbformat.v4.new_code_cell(stub)
        exercise.metadata["nbgrader"] = {"grade_id": "softmax", "solution": True, "grade": False, "locked": False}
        question = nbformat.v4.new_code_cell("def predict_argmax():\n    return 0")
        question.metadata["nbgrader"] = {"grade_id": "predict_argmax", "solution": True, "grade": False,
                                         "locked": False}
        cells = [nbformat.v4.new_code_cell("import numpy as np\nimport matplotlib.pyplot as plt"), exercise, question,
                 nbformat.v4.new_code_cell("p = softmax(np.zeros(3))\nplt.plot(p)\nprint('sums to', p.sum())"),
                 nbformat.v4.new_code_cell("plt.plot([predict_argmax()])"),
                 nbformat.v4.new_code_cell("plt.plot(softmax(np.ones(2)))")]
        for i, cell in enumerate(cells):
            cell["id"] = f"c{i}"
            if outputs and i >= 3:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="sums to 1.0\n"),
                                nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})]
        nb.cells = cells
        return nb

    solution = notebook("def softmax(z):\n    e = np.exp(z - z.max())\n    return e / e.sum()", outputs=True)
    student = notebook("def softmax(z):\n    raise NotImplementedError", outputs=False)
    student.cells[5].source += "  # mine"
    asked = []
    real = site_outputs.is_question  # where the rule looks it up
    try:
        site_outputs.is_question = lambda assignment, name: asked.append(name) or name.startswith("predict_")
        website.given_outputs(student, solution, "04_softmax_and_probability")
    finally:
        site_outputs.is_question = real
    figure = student.cells[3].outputs
    assert [o.data for o in figure] == [{"image/png": "iVBOR"}], "the figure alone, not its printed line"
    assert figure[0].metadata[website.DRAWN] == ["softmax"]
    assert "Drawn with the course's own <code>softmax</code>" in website.with_alt('<div><img src="x"></div>', figure[0])
    assert student.cells[4].outputs == [] and "predict_argmax" in asked, "a prediction's answer, drawn"
    assert student.cells[5].outputs == [], "changed code borrows no output"


# --------------------------------------------------------------------------- which cells are the learner's work

def tainted_by(*cells: str, exercises: frozenset = frozenset({"softmax"})) -> list[bool]:
    """For each cell in order: does it depend on the learner's work (:func:`learner_work.depends_on`)?"""
    tainted = set(exercises)
    trees = [ast.parse(c) for c in cells]
    imported = learner_work.imported_names(trees)
    return [learner_work.depends_on(t, tainted, imported) for t in trees]


def test_a_name_computed_from_an_exercise_is_followed_from_cell_to_cell():
    assert tainted_by("import numpy as np\nz = np.zeros(3)",  # a module and a given value
                      "probs = softmax(z)",  # calls the exercise
                      "print(probs.sum())",  # uses what it returned
                      "history = []\nhistory.append(softmax(z))",  # filled with it in place
                      "print(len(history))",
                      "def sharpen(x):\n    return softmax(2 * x)",  # a function that calls it
                      "print(sharpen(z))",
                      "print(np.exp(z))") == [False, True, True, True, True, True, True, False]


def test_a_fresh_value_a_loop_variable_or_a_module_is_not_the_learners_work():
    assert tainted_by("import numpy as np\nx = softmax(np.zeros(2))",
                      "x = np.arange(3)\nprint(x)",  # rebound to a fresh value first
                      "for n in range(3):\n    m = n * 2\nprint(m)",
                      "rng = np.random.default_rng(0)\nprint(rng.normal())",  # a method of a module's object
                      "print([softmax for softmax in range(3)])") == [True, False, False, False, False]
    # the set-up's earlier pieces are the learner's too: 09's softmax comes from their 04
    assert "softmax" in learner_work.exercise_names(read_notebook(paths.notebooks_dir() / "09_attention.ipynb"),
                                                     "09_attention")


def test_the_set_up_cell_and_an_unreadable_cell_show_nothing():
    student = read_notebook(paths.notebooks_dir() / "09_attention.ipynb")
    setup = next(i for i, c in enumerate(student.cells) if c.cell_type == "code" and "use_pieces(" in c.source)
    student.cells.insert(setup + 1, nbformat.v4.new_code_cell("print(1 +)"))
    theirs = learner_work.learners_cells(student, "09_attention")
    assert setup in theirs and setup + 1 in theirs, "the set-up prints whose pieces it took; a cell nobody can read"
    solution = read_notebook(paths.solutions_dir() / "09_attention.ipynb")
    shown = read_notebook(paths.notebooks_dir() / "09_attention.ipynb")
    website.given_outputs(shown, solution, "09_attention")
    ran = next(c for c in solution.cells if c.get("id") == shown.cells[setup].get("id"))
    assert not shown.cells[setup].outputs and ran.outputs, "the guard: the reference run printed its lines"


def test_given_outputs_take_only_outputs_of_unchanged_given_cells():
    solution = read_notebook(paths.solutions_dir() / "04_softmax_and_probability.ipynb")
    student = read_notebook(paths.notebooks_dir() / "04_softmax_and_probability.ipynb")
    changed = next(c for c in student.cells if c.cell_type == "code" and "def naive_softmax" in c.source)
    changed.source += "\n# edited"
    filled = website.given_outputs(student, solution, "04_softmax_and_probability")
    assert filled >= 2 and not changed.get("outputs"), "an edited cell must not borrow the reference's output"
    for cell in student.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader"):
            assert not cell.get("outputs"), f"{cell.metadata['nbgrader'].get('grade_id')} got outputs"
    widget = {"output_type": "display_data", "data": {website.WIDGET_MIME: {}, "text/plain": "x"}, "metadata": {}}
    assert website.shown_output(widget) is None
    assert website.shown_output({"output_type": "error", "ename": "E", "evalue": "", "traceback": []}) is None


def test_math_in_readme_is_typeset_on_the_contents_and_figures_pages(built):
    """README's lines on the contents page (the map of ten ideas is a table) may hold TeX: the page loads the
    site's own MathJax, configured as the notebook pages are, and the formula is in the table as written."""
    index = (built.out / "index.html").read_text(encoding="utf-8")
    notebook = (built.out / "04_softmax_and_probability.html").read_text(encoding="utf-8")
    script = f'src="mathjax/MathJax.js?config={website.MATHJAX_CONFIG}"'
    for page in (index, (built.out / "figures.html").read_text(encoding="utf-8")):
        assert script in page and "inlineMath: [ ['$','$']" in page and 'webFont: "STIX-Web"' in page
    assert "inlineMath: [ ['$','$']" in notebook, "the same configuration as a notebook's page"
    assert re.search(r"<td>[^<]*\$[^$<]+\$[^<]*</td>", index), "the ideas table's formula is not in a cell"
    assert "$QK^\\top$" in index and (built.out / "mathjax" / "MathJax.js").is_file()


def test_every_notebook_page_has_its_contents_after_its_title(built):
    for n in NOTEBOOKS:
        page = (built.out / f"{n}.html").read_text(encoding="utf-8")
        assert website.TOC_PLACEHOLDER not in page, n
        toc = page.index('class="site-box site-toc"')
        assert page.index("<h1") < page.index('class="site-boxes"') < toc, f"{n}: the title must come first"
        toc_html = re.findall(r'<nav class="site-box site-toc".*?</nav>', page, re.S)[0]
        ids = {html.unescape(i) for i in re.findall(r'\bid="([^"]+)"', page)}  # as the browser reads them
        links = [html.unescape(a) for a in re.findall(r'href="#([^"]+)"', toc_html)]
        assert len(links) >= 3, f"{n}: hardly any contents"
        missing = [a for a in links if a not in ids]
        assert not missing, f"{n}: contents link to sections that are not on the page: {missing}"


def test_a_rebuild_replaces_the_earlier_site(tmp_path):
    """Does building again into the same folder replace it whole (a page of a removed notebook goes)?"""
    one = tmp_path / "notebooks"
    one.mkdir()
    (one / "04_softmax_and_probability.ipynb").write_bytes(
        (paths.notebooks_dir() / "04_softmax_and_probability.ipynb").read_bytes())
    out = tmp_path / "site"
    website.build_site(out=out, notebooks_dir=one)
    (out / "stale.html").write_text("old")
    site = website.build_site(out=out, notebooks_dir=one)
    assert not (out / "stale.html").exists() and (out / "04_softmax_and_probability.html").exists()
    assert [p.name for p in site.pages] == ["index.html", "figures.html", "04_softmax_and_probability.html"]
    assert not list(tmp_path.glob(".site.building-*")), "a temporary build folder was left behind"


# --------------------------------------------------------------------------- for a keyboard and a screen reader
# (axe-core checks the pages in Chromium: tests/browser/test_report_and_site.py)

def contrast(fg: str, bg: str) -> float:
    """WCAG's contrast ratio of two #rrggbb colours."""
    def luminance(colour: str) -> float:
        rgb = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_code_colours_reach_4_5_to_1_on_the_code_background():
    """Are the syntax colours site.css sets readable on JupyterLab's code background (#f5f5f5) and on white?"""
    colours = dict(re.findall(r"--jp-mirror-editor-([\w-]+)-color:(#[0-9a-f]{6})", website.CSS))
    assert {"comment", "number", "operator"} <= set(colours), colours
    assert contrast("#408080", "#f5f5f5") < 4.5, "the guard: JupyterLab's own comment colour fails"
    for name, colour in colours.items():
        assert contrast(colour, "#f5f5f5") >= 4.5 and contrast(colour, "#ffffff") >= 4.5, (name, colour)
    assert "opacity:1!important" in website.CSS, "a prompt at 40% opacity is #b0b0b0 on white, 2.16:1"


def test_every_scroll_box_is_focusable_and_named(built):
    """Is each box that may scroll sideways (code, a table, the install command) one a keyboard can reach, each
    table's a region with a name of its own, with no other tab stop left by nbconvert; two navigations named apart;
    no image left without words?"""
    for path in sorted(built.out.glob("*.html")):
        page = path.read_text(encoding="utf-8")
        assert "No description has been provided" not in page, path.name
        assert 'jp-Cell-inputWrapper" tabindex' not in page, path.name
        assert not re.search(r'<div class="highlight[^"]*"><pre>', page), f"{path.name}: code a keyboard cannot scroll"
        boxes = re.findall(r"(<[^<>]*>)\s*<table>", page)
        assert all(b.startswith('<div class="scroll" tabindex="0" role="region" aria-label="') for b in boxes), (
            path.name, boxes)
        labels = re.findall(r'role="region" aria-label="([^"]+)"', page)
        assert len(labels) == len(set(labels)), f"{path.name}: two regions with one name: {labels}"
        navs = re.findall(r'<nav\b[^>]*aria-label="([^"]+)"', page)
        assert navs and len(navs) == len(set(navs)), f"{path.name}: navigations named alike: {navs}"
        assert "<main" in page, path.name
    attention = (built.out / "09_attention.html").read_text(encoding="utf-8")
    assert 'aria-label="Table 1: j, key k_j, value v_j"' in attention
    assert "<th><i>j</i></th>" in attention, "a header that is only a formula is text a screen reader finds"
    # site.css comes after JupyterLab's styles, or their overflow:hidden and word-break win the tie
    assert attention.rindex("<style") < attention.index('href="site.css"')


def test_a_figure_is_described_in_the_notebook_s_own_words():
    """The paragraph after the figure's cell, else the one before it (a heading after it starts another section),
    else the cell's first comment; nbconvert's alt is replaced by it."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    nb = nbformat.v4.new_notebook(cells=[
        md("Below: the weights as $q \\cdot k_j$ grows.\n\n<details>hint</details>"), code("plot()", outputs=[png]),
        md("Notice that **each row** sums to 1. Then more.\n\nAnother paragraph."),
        md("The picture: a mask."), code("# The causal mask\ndraw()", outputs=[copy.deepcopy(png)]),
        md("## Next section\n\nText."), code("x = 1"),
        code("# Its spectrum\nshow()", outputs=[copy.deepcopy(png)])])
    assert website.describe_figures(nb) == 3
    alts = [c.outputs[0].metadata[website.ALT] for c in nb.cells if c.cell_type == "code" and c.outputs]
    assert alts == ["Notice that each row sums to 1. Then more.", "The picture: a mask.", "Its spectrum"]
    nb.cells = nb.cells[:2]
    assert website.figure_description(nb.cells, 1) == "Below: the weights as q · k_j grows."
    img = '<div class="jp-RenderedImage"><img src="data:image/png;base64,x" class="">'
    assert website.with_alt(img, nb.cells[1].outputs[0]).startswith('<div class="jp-RenderedImage"><img alt="Notice')


def test_keyboard_scrolling_wraps_tables_and_names_their_headers():
    page = ('<div class="jp-Cell-inputWrapper" tabindex="0"><div class="highlight hl-ipython3"><pre>x = 1</pre></div>'
            "<table><thead><tr><th></th><th>$k_j$</th><th>score $q$</th></tr></thead></table>"
            '<table border="1" class="dataframe"><tr><td>1</td></tr></table>')
    done = website.keyboard_scrolling(page)
    assert '<div class="jp-Cell-inputWrapper"><div class="highlight hl-ipython3"><pre tabindex="0">' in done
    assert ('<div class="scroll" tabindex="0" role="region" aria-label="Table 1: k_j, score q"><table><thead><tr>'
            "<td></td><th><i>k</i><sub>j</sub></th><th>score $q$</th></tr></thead></table></div>") in done
    assert '<table border="1" class="dataframe">' in done and done.count('class="scroll"') == 1, "an output's own"
