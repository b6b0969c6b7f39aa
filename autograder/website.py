"""``python -m autograder site --out DIR``: the course as a static website, readable offline.

Built from the student notebooks in ``notebooks/`` (never ``solutions/``): every notebook rendered by
nbconvert's JupyterLab template, a contents page in the prerequisite order (01 to 10) with README's line
on what each one builds, README's figures, and on every page how to run the notebook. Math is typeset
in the browser by MathJax 2.7, the version nbconvert's template is written for, copied from Debian's
``libjs-mathjax`` into the site; no page loads anything from another host, so the site works from a USB
stick or a folder opened over ``file://``.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html

from . import paths
from .nbio import read_notebook, write_atomic, write_atomic_bytes

MATHJAX = Path(os.environ.get("MATHJAX_DIR", "/usr/share/javascript/mathjax"))  # Debian's libjs-mathjax
# What nbconvert's MathJax configuration (TeX input, CommonHTML output) loads; the other output
# processors, the unpacked sources and the STIX fonts would add about 50 MB that no page uses.
MATHJAX_PARTS = ("MathJax.js", "config/TeX-AMS_CHTML-full.js", "config/Safe.js", "extensions", "jax/input/TeX",
                 "jax/output/CommonHTML", "jax/element", "fonts/HTML-CSS/TeX/woff", "localization/en")
MATHJAX_CONFIG = "TeX-AMS_CHTML-full,Safe"  # as nbconvert's own default URL asks for
MARKER = ".autograder-site"  # marks a folder this command built, so a rebuild may replace it
# Which notebook each of README's figures illustrates (a figure not listed here is on the figures page only).
FIGURE_NOTEBOOK = {"temperature": "04", "gradient_step": "05", "frequency_two_scales": "06", "causal_mask": "08",
                   "attention_weights": "09", "loss_curve": "10"}

# nbconvert's JupyterLab page without what it would fetch from a CDN: require.js and Mermaid (no notebook
# here uses them) and the widget manager (the student notebooks ship without outputs, so no widget state).
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block extra_css -%}<link rel="stylesheet" href="site.css">{%- endblock extra_css -%}
{%- block body_header -%}{{ super() }}{{ resources.site_before }}{%- endblock body_header -%}
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
.site-box figure img{max-width:min(100%,34rem)}figcaption{font-size:.92em;color:#333}.site-page a.anchor-link{display:none}"""


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


# --------------------------------------------------------------------------- build

def copy_mathjax(source: Path, target: Path) -> None:
    """The parts of MathJax 2.7 that nbconvert's configuration loads (symlinks copied as files)."""
    for part in MATHJAX_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, target / part)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target / part)


def check_inputs(out: Path, mathjax: Path, notebooks_dir: Path) -> None:
    if out.exists() and not out.is_dir():
        raise SiteUsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise SiteUsageError(f"--out {out} is a folder with other files in it; give an empty or new folder "
                             "(a folder an earlier `site` built is replaced)")
    if not (mathjax / "MathJax.js").is_file():
        raise SiteToolMissing(f"MathJax is not at {mathjax}: install Debian's libjs-mathjax "
                              "(`apt-get install libjs-mathjax`) or set MATHJAX_DIR to a MathJax 2.7 folder")
    missing = [p for p in MATHJAX_PARTS if not (mathjax / p).exists()]
    if missing:
        raise SiteToolMissing(f"{mathjax} lacks {', '.join(missing)}: is it MathJax 2.7?")
    if not sorted(notebooks_dir.glob("[0-9][0-9]_*.ipynb")):
        raise SiteToolMissing(f"no student notebooks in {notebooks_dir} (run `python -m autograder release`)")


def build_site(*, out: Path, notebooks_dir: Path | None = None, readme: Path | None = None,
               mathjax: Path = MATHJAX) -> Site:
    """Build the whole site into ``out`` (a new folder, or one this function built before, which it replaces).

    The build happens in a temporary folder beside ``out`` and is renamed into place at the end, so a
    failed build never leaves half a site.
    """
    started = time.perf_counter()
    notebooks_dir = notebooks_dir or paths.notebooks_dir()
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
            before = (_nav(notebooks, info.stem) + how_to_run(info, install)
                      + (f'<details class="site-box" open><summary><b>This notebook\'s figure</b></summary>{figs}</details>'
                         if figs else ""))
            body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": info.title},
                                                                 "site_before": before,
                                                                 "site_after": _nav(notebooks, info.stem)})
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
