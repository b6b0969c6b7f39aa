"""``python -m autograder site --out DIR``: the course as a static website, readable offline.

Built from the student notebooks in ``notebooks/`` (never ``solutions/``): every notebook rendered by
nbconvert's JupyterLab template, a contents page in the prerequisite order (01 to 10) with README's line
on what each one builds, README's figures, and on every page how to run the notebook and the page's own
contents. A given cell (neither an exercise nor a test) shows what it printed or drew in the reference run
stored in ``solutions/``; only its outputs are taken from there, never a line of code. Math is typeset in
the browser by MathJax 2.7, the version nbconvert's template is written for, copied from the Python
package ``jupyter-server-mathjax`` (in requirements.txt) into the site; no page loads anything from
another host, so the site works from a USB stick or a folder opened over ``file://``.
"""
from __future__ import annotations

import copy
import html
import importlib.util
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html

from . import paths
from .checks.core import EVIDENCE_MIME
from .nbio import grade_id, is_solution_cell, read_notebook, write_atomic, write_atomic_bytes

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # needs a live kernel; the page has none


def mathjax_dir() -> Path:
    """MathJax 2.7: $MATHJAX_DIR when set, else the copy the ``jupyter-server-mathjax`` package ships."""
    if os.environ.get("MATHJAX_DIR"):
        return Path(os.environ["MATHJAX_DIR"])
    spec = importlib.util.find_spec("jupyter_server_mathjax")
    if spec is None or not spec.submodule_search_locations:
        return Path("jupyter_server_mathjax-is-not-installed")
    return Path(list(spec.submodule_search_locations)[0]) / "static"


# What the pages load of the MathJax 2.7 that jupyter-server-mathjax ships: TeX input, HTML-CSS output and
# its STIX web fonts (the package has neither CommonHTML nor the TeX fonts); the SVG output, the other
# locales and the unused configurations would add about 6 MB that no page uses.
MATHJAX_PARTS = ("MathJax.js", "config/TeX-AMS-MML_HTMLorMML-full.js", "config/Safe.js", "extensions",
                 "jax/input/TeX", "jax/output/HTML-CSS", "jax/element", "fonts/HTML-CSS/STIX-Web", "localization/en")
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
MATHJAX_SKIPPED = ("a11y",)  # 3.7 MB of screen-reader explorers, loaded only when a reader turns them on in
# MathJax's menu; the pages keep the hidden MathML that screen readers read by default
# Read by MathJax as it starts, before nbconvert's own configuration: use the STIX web fonts copied with it
# (MathJax would otherwise look for its TeX fonts, which are not there, and fall back to images, also absent).
# site.css keeps the hidden MathML for screen readers in the page's font: MathJax's native-MathML styles
# would send it to the TeX fonts, and the browser would ask for files that are not there.
MATHJAX_FONTS = """<script type="text/x-mathjax-config">
MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null,
                                 linebreaks: {automatic: true}}});
</script>"""
MARKER = ".autograder-site"  # marks a folder this command built, so a rebuild may replace it
# Which notebook each of README's figures illustrates (a figure not listed here is on the figures page only).
FIGURE_NOTEBOOK = {"temperature": "04", "gradient_step": "05", "frequency_two_scales": "06", "causal_mask": "08",
                   "attention_weights": "09", "loss_curve": "10"}

# nbconvert's JupyterLab page without what it would fetch from a CDN: require.js and Mermaid (no notebook
# here uses them) and the widget manager (widget outputs are left out: they need a running kernel); the
# site's own boxes (a raw cell marked site_block) are written as they are.
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}{{ resources.site_mathjax_fonts }}{{ super() }}{%- endblock html_head_js_mathjax -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block extra_css -%}<link rel="stylesheet" href="site.css">{%- endblock extra_css -%}
{%- block body_header -%}{{ super() }}{{ resources.site_before }}{%- endblock body_header -%}
{%- block rawcell scoped -%}{%- if cell.metadata.get('site_block') -%}{{ cell.source }}{%- else -%}{{ super() }}{%- endif -%}{%- endblock rawcell -%}
{%- block body_footer -%}{{ resources.site_after }}{{ super() }}{%- endblock body_footer -%}
"""

CSS = """.site-nav,.site-box,.site-page{max-width:62rem;margin:1rem auto;padding:0 1rem;
font-family:system-ui,sans-serif;line-height:1.45;color:#222}
.site-nav{display:flex;gap:1.2rem;flex-wrap:wrap;border-bottom:1px solid #ddd;padding-bottom:.5rem}
.site-box{background:#f3f7fb;border:1px solid #c9d9ea;border-radius:.4rem;padding:.6rem 1rem}
.site-box pre,.site-page pre{background:#fff;border:1px solid #ddd;padding:.5rem;overflow-x:auto;font-size:.88em}
.site-page figure{margin:1.5rem 0}.site-page figure img,.site-box img{max-width:100%;height:auto;
border:1px solid #eee}.site-page ol.contents li{margin:.5rem 0}.site-page table{border-collapse:collapse}
.site-page td,.site-page th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
.site-page table{display:block;overflow-x:auto;max-width:100%}.site-page h1,.site-nav a{overflow-wrap:anywhere}
.site-box figure img{max-width:min(100%,34rem)}figcaption{font-size:.92em;color:#333}.site-page a.anchor-link{display:none}
.site-boxes{margin:1rem 0}.site-boxes .site-box{margin:.8rem 0;max-width:none}
/* in line with the text column, which sits beside the input prompts */
@media (min-width:40rem){.site-boxes{margin:1rem 32px 1rem 86px}}
nav.site-toc ol{margin:.3rem 0;padding-left:1.4rem}nav.site-toc li{margin:.15rem 0}
.jp-OutputArea-output img{max-width:100%;height:auto}
@media (max-width:40rem){.jp-InputPrompt,.jp-OutputPrompt{display:none}}
.MJX_Assistive_MathML [mathvariant]{font-family:inherit!important}
.jp-RenderedMarkdown code{overflow-wrap:anywhere}"""


class SiteUsageError(ValueError):
    """Bad input from the command line (exit 2)."""


class SiteToolMissing(RuntimeError):
    """Something the build needs is not installed (exit 1)."""


@dataclass(frozen=True)
class Notebook:
    number: str  # "04"
    stem: str  # "04_softmax_and_probability"
    title: str  # from its first heading
    builds: str  # README's "you build" line


@dataclass(frozen=True)
class Figure:
    stem: str
    title: str
    caption: str  # README's paragraph under the figure


@dataclass(frozen=True)
class Site:
    out: Path
    pages: list[Path]
    seconds: float
    bytes: int


# --------------------------------------------------------------------------- what README says

def readme_builds(readme: str) -> dict[str, str]:
    """Notebook number -> its "you build" line, from README's notebook table (| 01 | `tokens_and_ids` | ... |)."""
    rows = re.findall(r"^\|\s*(\d\d)\s*\|\s*`[^`]+`\s*\|\s*(.+?)\s*\|\s*$", readme, re.M)
    return {number: text for number, text in rows}


def readme_install(readme: str) -> str:
    """README's first command: install everything and open the course in JupyterLab."""
    block = re.search(r"```bash\n(.*?)```", readme, re.S)
    line = block.group(1).splitlines()[0] if block else ""
    return line.split("#")[0].strip() or "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt"


def readme_figures(readme: str) -> list[Figure]:
    """README's figures in order: each ``### title``, its ``![..](examples/figures/NAME.png)`` and its caption."""
    section = readme.split("## Figures", 1)[-1].split("\n## ", 1)[0]
    figures = []
    for m in re.finditer(r"^### (.+?)\n\s*!\[[^\]]*\]\(examples/figures/([\w-]+)\.\w+\)\s*\n\n(.+?)(?=\n\n|\Z)",
                         section, re.M | re.S):
        figures.append(Figure(stem=m.group(2), title=m.group(1).strip(), caption=" ".join(m.group(3).split())))
    return figures


def notebook_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return ""


# --------------------------------------------------------------------------- pages

e = html.escape


def _shell(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<!-- Generated by `python -m autograder site` from notebooks/ and README.md: do not edit. -->'
            f'\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, '
            f'initial-scale=1"><title>{e(title)}</title><link rel="stylesheet" href="site.css"></head>\n'
            f"<body>{body}</body></html>\n")


def _nav(notebooks: list[Notebook], here: str = "") -> str:
    links = ['<a href="index.html">Contents</a>', '<a href="figures.html">Figures</a>']
    stems = [n.stem for n in notebooks]
    if here in stems:
        i = stems.index(here)
        if i > 0:
            links.append(f'<a href="{e(stems[i - 1])}.html" rel="prev">← {e(notebooks[i - 1].title)}</a>')
        if i + 1 < len(stems):
            links.append(f'<a href="{e(stems[i + 1])}.html" rel="next">{e(notebooks[i + 1].title)} →</a>')
    return f'<nav class="site-nav" aria-label="Course">{"".join(links)}</nav>'


def how_to_run(nb: Notebook, install: str) -> str:
    return f"""<details class="site-box"><summary><b>How to run this notebook</b></summary>
<p><b>On your computer, in JupyterLab.</b> In a copy of the course repository (Python 3.11), install
everything and open the course:</p>
<pre><code>{e(install)}</code></pre>
<p>then open <code>notebooks/{e(nb.stem)}.ipynb</code>, work top to bottom, and before you hand it in run the
self-check: <code>.venv/bin/python -m autograder validate notebooks/{e(nb.stem)}.ipynb</code>.
You can also <a href="notebooks/{e(nb.stem)}.ipynb" download>download this notebook</a> alone.</p>
<p><b>On your course's JupyterHub (nbgrader).</b> Open the <i>Assignments</i> tab, fetch
<code>{e(nb.stem)}</code> and open it; or, in a terminal on the hub,
<code>nbgrader fetch_assignment {e(nb.stem)} --course COURSE</code> (your instructor gives the course id).
Submit from the same tab, or with <code>nbgrader submit {e(nb.stem)} --course COURSE</code>.</p>
</details>"""


def figure_html(fig: Figure, src: str) -> str:
    return (f'<figure id="{e(fig.stem)}"><img src="{e(src)}" alt="{e(fig.title)}. {e(fig.caption)}" '
            f'loading="lazy"><figcaption><b>{e(fig.title)}.</b> {e(fig.caption)}</figcaption></figure>')


def _inline(rendered: str) -> str:
    """markdown2html's one paragraph without its <p>."""
    return re.sub(r"^\s*<p>|</p>\s*$", "", rendered)


def contents_page(notebooks: list[Notebook], readme: str, install: str) -> str:
    intro = re.search(r"\n(From token IDs.+?)\n\n", readme, re.S)
    ideas = re.search(r"## The map: ten ideas\n(.+?)(?=\n## )", readme, re.S)
    items = "".join(f'<li value="{int(n.number)}"><a href="{e(n.stem)}.html"><b>{e(n.title)}</b></a><br>'
                    f'<span data-builds="{e(n.number)}">You build: {_inline(markdown2html(n.builds))}</span></li>'
                    for n in notebooks)
    body = f"""{_nav(notebooks)}<main class="site-page">
<h1>The mathematics of Transformers, in ten notebooks</h1>
{f"<p>{e(' '.join(intro.group(1).split()))}</p>" if intro else ""}
<h2>Contents</h2>
<p>In prerequisite order: each notebook uses what the ones before it built.</p>
<ol class="contents">{items}</ol>
{markdown2html(ideas.group(0)) if ideas else ""}
<h2>How to run the notebooks</h2>
<p><b>Locally in JupyterLab</b> (Python 3.11; CPU-only PyTorch, JupyterLab and nbgrader are installed into
<code>.venv</code>):</p>
<pre><code>{e(install)}</code></pre>
<p><b>On a JupyterHub with nbgrader</b>: fetch each notebook from the <i>Assignments</i> tab (or
<code>nbgrader fetch_assignment NN_name --course COURSE</code>) and submit it from there.
Each notebook's page says the exact commands.</p>
<p><a href="figures.html">The course's figures</a>.</p>
</main>"""
    return _shell("The mathematics of Transformers", body)


def figures_page(notebooks: list[Notebook], figures: list[Figure], sources: dict[str, str]) -> str:
    by_number = {n.number: n for n in notebooks}
    parts = []
    for fig in figures:
        nb = by_number.get(FIGURE_NOTEBOOK.get(fig.stem, ""))
        where = f'<p>Used in <a href="{e(nb.stem)}.html">{e(nb.title)}</a>.</p>' if nb else ""
        parts.append(figure_html(fig, sources[fig.stem]) + where)
    body = (f'{_nav(notebooks)}<main class="site-page"><h1>Figures</h1><p>The course\'s figures, regenerated by '
            f'<code>python examples/plot_foundations.py</code>.</p>{"".join(parts)}</main>')
    return _shell("Figures", body)


# --------------------------------------------------------------------------- what a given cell showed

def given_outputs(student, solution) -> int:
    """Give each given cell of ``student`` (neither an exercise nor a test) the outputs it had in the
    reference run, ``solution`` with its stored outputs; returns how many cells got some.

    A cell is matched by id and must hold the same source in both, so an output always belongs to the code
    shown above it. Only outputs travel: the solution's code never reaches the page. The grader's evidence
    records and widgets (which need a running kernel) are left out."""
    reference = {c.get("id"): c for c in solution.cells if c.cell_type == "code"}
    # A prediction question (an exercise named predict_*) asks for a commitment before the answer: a cell that
    # prints the learner's prediction would print the reference's, the answer itself, so it stays blank.
    predictions = {grade_id(c) for c in solution.cells if is_solution_cell(c) and grade_id(c).startswith("predict_")}
    filled = 0
    for cell in student.cells:
        if cell.cell_type != "code" or is_solution_cell(cell) or grade_id(cell):
            continue
        if any(re.search(rf"\b{re.escape(name)}\b", cell.source) for name in predictions):
            continue
        ran = reference.get(cell.get("id"))
        if ran is None or ran.source != cell.source or is_solution_cell(ran) or grade_id(ran):
            continue
        outputs = [o for o in (shown_output(o) for o in ran.get("outputs", [])) if o is not None]
        if outputs:
            cell.outputs, cell.execution_count = outputs, ran.get("execution_count")
            filled += 1
    return filled


def shown_output(output):
    """``output`` as a static page can show it, or None (evidence records, widgets, errors)."""
    if output.get("output_type") == "error":
        return None
    if output.get("output_type") in ("display_data", "execute_result"):
        data = {k: v for k, v in output.get("data", {}).items() if k != EVIDENCE_MIME}
        if WIDGET_MIME in data or not data:
            return None
        output = copy.deepcopy(output)
        output["data"] = data
    return output


def contents_of(body: str) -> list[tuple[str, str]]:
    """(anchor, heading text) of each section (h2) of a rendered notebook, in order."""
    found = []
    for m in re.finditer(r'<h2 id="([^"]+)"[^>]*>(.*?)</h2>', body, re.S):
        text = re.sub(r"<[^>]+>", "", m.group(2)).replace("¶", "").strip()
        found.append((html.unescape(m.group(1)), html.unescape(text)))
    return found


TOC_PLACEHOLDER = "<!--site-contents-->"


def page_contents(body: str) -> str:
    """``body`` with its placeholder replaced by a list of links to its sections."""
    items = "".join(f'<li><a href="#{e(anchor, quote=True)}">{e(text)}</a></li>' for anchor, text in contents_of(body))
    toc = (f'<nav class="site-box site-toc" aria-label="On this page"><b>On this page</b><ol>{items}</ol></nav>'
           if items else "")
    return body.replace(TOC_PLACEHOLDER, toc, 1)


def after_title(nb, block: str):
    """A copy of ``nb`` with ``block`` (HTML) right after its first markdown cell, the title and introduction,
    so a reader meets the notebook's name before any box."""
    nb = copy.deepcopy(nb)
    # the title's cell (a "# heading"), not the generated header above it; else the first markdown cell
    markdown = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    first = next((i for i in markdown if re.search(r"^#\s", nb.cells[i].source, re.M)), markdown[0] if markdown else -1)
    raw = nbformat.v4.new_raw_cell(block)
    # our own HTML, written as it is: nbconvert's clean_html would escape <details> and <nav>
    raw.metadata.update(raw_mimetype="text/html", site_block=True)
    nb.cells.insert(first + 1, raw)
    return nb


# --------------------------------------------------------------------------- build

# MathJax's HTML-CSS output declares a font at about:blank to test web-font loading; over file:// Chromium
# refuses it with a console error (a cross-origin request). An empty data: URL fails the same way, quietly.
BLANK_FONT = ("src:\"url('about:blank')\"", "src:\"url('data:,')\"")


def copy_mathjax(source: Path, target: Path) -> None:
    """The parts of MathJax 2.7 that the pages load (symlinks copied as files), its blank test font made local."""
    for part in MATHJAX_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, target / part, ignore=shutil.ignore_patterns(*MATHJAX_SKIPPED))
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target / part)
    config = target / f"config/{MATHJAX_CONFIG.split(',')[0]}.js"
    text = config.read_text(encoding="utf-8")
    if BLANK_FONT[0] in text:
        write_atomic(config, text.replace(BLANK_FONT[0], BLANK_FONT[1]))


def check_inputs(out: Path, mathjax: Path, notebooks_dir: Path) -> None:
    """Refuse bad input before anything is written: a file or a foreign folder as ``out``, no MathJax, no notebooks."""
    if out.exists() and not out.is_dir():
        raise SiteUsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise SiteUsageError(f"--out {out} is a folder with other files in it; give an empty or new folder "
                             "(a folder an earlier `site` built is replaced)")
    if not (mathjax / "MathJax.js").is_file():
        raise SiteToolMissing(f"MathJax is not at {mathjax}: install the course's Python packages "
                              "(`pip install -r requirements.txt`, which has jupyter-server-mathjax) or set "
                              "MATHJAX_DIR to a MathJax 2.7 folder")
    missing = [p for p in MATHJAX_PARTS if not (mathjax / p).exists()]
    if missing:
        raise SiteToolMissing(f"{mathjax} lacks {', '.join(missing)}: is it MathJax 2.7?")
    if not sorted(notebooks_dir.glob("[0-9][0-9]_*.ipynb")):
        raise SiteToolMissing(f"no student notebooks in {notebooks_dir} (run `python -m autograder release`)")


def build_site(*, out: Path, notebooks_dir: Path | None = None, readme: Path | None = None,
               mathjax: Path | None = None, solutions_dir: Path | None = None) -> Site:
    """Build the whole site into ``out`` (a new folder, or one this function built before, which it replaces).

    The build happens in a temporary folder beside ``out`` and is renamed into place at the end, so a
    failed build never leaves half a site.
    """
    started = time.perf_counter()
    notebooks_dir = notebooks_dir or paths.notebooks_dir()
    solutions_dir = solutions_dir or paths.solutions_dir()
    mathjax = mathjax or mathjax_dir()
    readme_text = (readme or paths.root() / "README.md").read_text(encoding="utf-8")
    check_inputs(out, mathjax, notebooks_dir)
    builds, install = readme_builds(readme_text), readme_install(readme_text)
    figures = readme_figures(readme_text)
    figure_dir = paths.root() / "examples" / "figures"

    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        copy_mathjax(mathjax, work / "mathjax")
        write_atomic(work / "site.css", CSS + "\n")
        sources = {}
        for fig in figures:  # the SVG where there is one: sharp at any zoom, and smaller than the PNG
            src = next((figure_dir / f"{fig.stem}.{ext}" for ext in ("svg", "png")
                        if (figure_dir / f"{fig.stem}.{ext}").exists()), None)
            if src is not None:
                write_atomic_bytes(work / "figures" / src.name, src.read_bytes())
                sources[fig.stem] = f"figures/{src.name}"
        figures = [f for f in figures if f.stem in sources]

        files = sorted(notebooks_dir.glob("[0-9][0-9]_*.ipynb"))
        loaded = [(path, read_notebook(path)) for path in files]
        notebooks = [Notebook(number=p.stem[:2], stem=p.stem, title=notebook_title(nb) or p.stem,
                              builds=builds.get(p.stem[:2], "")) for p, nb in loaded]
        exporter = HTMLExporter(template_name="lab", template_file="site.html.j2",
                                extra_loaders=[DictLoader({"site.html.j2": TEMPLATE})],
                                mathjax_url=f"mathjax/MathJax.js?config={MATHJAX_CONFIG}")
        pages = []
        for (path, nb), info in zip(loaded, notebooks):
            figs = "".join(figure_html(f, sources[f.stem]) for f in figures if FIGURE_NOTEBOOK.get(f.stem) == info.number)
            boxes = (f'<div class="site-boxes">{how_to_run(info, install)}'
                     + (f'<details class="site-box" open><summary><b>This notebook\'s figure</b></summary>{figs}'
                        "</details>" if figs else "") + f"{TOC_PLACEHOLDER}</div>")
            shown = copy.deepcopy(nb)
            reference = solutions_dir / path.name
            if reference.is_file():  # the outputs of the reference run, for the given cells only
                given_outputs(shown, read_notebook(reference))
            body, _ = exporter.from_notebook_node(after_title(shown, boxes),
                                                  resources={"metadata": {"name": info.title},
                                                             "site_mathjax_fonts": MATHJAX_FONTS,
                                                             "site_before": _nav(notebooks, info.stem),
                                                             "site_after": _nav(notebooks, info.stem)})
            body = page_contents(body)
            write_atomic(work / f"{info.stem}.html", body)
            write_atomic_bytes(work / "notebooks" / path.name, path.read_bytes())
            pages.append(out / f"{info.stem}.html")
        write_atomic(work / "index.html", contents_page(notebooks, readme_text, install))
        write_atomic(work / "figures.html", figures_page(notebooks, figures, sources))
        write_atomic(work / MARKER, "built by `python -m autograder site`; a rebuild replaces this folder\n")
        size = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        os.chmod(work, 0o755)  # mkdtemp's 0700 would hide the site from a web server's user
        if out.exists():
            shutil.rmtree(out)
        os.replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Site(out=out, pages=[out / "index.html", out / "figures.html", *pages],
                seconds=time.perf_counter() - started, bytes=size)
