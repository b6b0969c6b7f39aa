"""Does `python -m autograder site` build the course's website from the student notebooks, offline, and say no clearly?

The whole site is built once per module (about 10 s); its pages are checked as files here and in
Chromium in tests/browser/test_report_and_site.py.
"""
from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import paths, website
from autograder.nbio import is_solution_cell, read_notebook

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
    out = tmp_path_factory.mktemp("site") / "site"
    proc = cli("site", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout.strip())
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
    assert page.count('src="data:image/png') >= 2, "the figures given cells draw are missing"
    assert "P(cat, sleeps) =" in page and "product of probabilities:" in page, "a printed demo is missing"
    assert "vnd.autograder.evidence" not in page and "passed:" not in page, "a check's output reached the page"
    # the code says print("you predicted", ...); only its output would carry the reference's answer
    assert not re.search(r"you predicted \(", page), "a prediction's answer (the reference's prediction) is on the page"


def test_given_outputs_take_only_outputs_of_unchanged_given_cells():
    solution = read_notebook(paths.solutions_dir() / "04_softmax_and_probability.ipynb")
    student = read_notebook(paths.notebooks_dir() / "04_softmax_and_probability.ipynb")
    changed = next(c for c in student.cells if c.cell_type == "code" and not is_solution_cell(c)
                   and not c.metadata.get("nbgrader") and "print(" in c.source)
    changed.source += "\n# edited"
    filled = website.given_outputs(student, solution)
    assert filled > 5 and not changed.get("outputs"), "an edited cell must not borrow the reference's output"
    for cell in student.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader"):
            assert not cell.get("outputs"), f"{cell.metadata['nbgrader'].get('grade_id')} got outputs"
    widget = {"output_type": "display_data", "data": {website.WIDGET_MIME: {}, "text/plain": "x"}, "metadata": {}}
    assert website.shown_output(widget) is None
    assert website.shown_output({"output_type": "error", "ename": "E", "evalue": "", "traceback": []}) is None


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
