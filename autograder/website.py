"""``python -m autograder site --out DIR``: the course as a static website, readable offline.

Built from the student notebooks in ``notebooks/`` (never ``solutions/``): every notebook rendered by
nbconvert's JupyterLab template, a contents page in the prerequisite order (01 to 10) with README's line
on what each one builds, README's figures, and on every page how to run the notebook and the page's own
contents. What each given cell shows under it comes from the reference run stored in ``solutions/`` and is
decided by :mod:`.site_outputs` (only where it does not depend on the learner's work; only outputs, never a
line of code); this module renders the pages around it. Math is typeset in the browser by MathJax 2.7, the
version nbconvert's template is written for, copied from the Python package ``jupyter-server-mathjax`` (in
requirements.txt) into the site, on every page, the contents and the figures included; no page loads anything
from another host, so the site works from a USB stick or a folder opened over ``file://``.
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
from .nbio import notebook_title, read_notebook, write_atomic, write_atomic_bytes
from .site_outputs import DRAWN, IMAGE_MIMES, drawn_caption, given_outputs
from .site_outputs import WIDGET_MIME, shown_output  # noqa: F401  the site's tests read them from here too


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
# site's own boxes (a raw cell marked site_block) are written as they are; an image gets the alt text
# describe_figures found for it. site.css comes after JupyterLab's styles, so that its rules win a tie.
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}{{ resources.site_mathjax_fonts }}{{ super() }}{%- endblock html_head_js_mathjax -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block notebook_css -%}{{ super() }}<link rel="stylesheet" href="site.css">{%- endblock notebook_css -%}
{%- block body_header -%}{{ super() }}{{ resources.site_before }}{%- endblock body_header -%}
{%- block rawcell scoped -%}{%- if cell.metadata.get('site_block') -%}{{ cell.source }}{%- else -%}{{ super() }}{%- endif -%}{%- endblock rawcell -%}
{%- block body_footer -%}{{ resources.site_after }}{{ super() }}{%- endblock body_footer -%}
{%- block data_png scoped -%}{{ super() | site_alt(output) }}{%- endblock data_png -%}
{%- block data_jpg scoped -%}{{ super() | site_alt(output) }}{%- endblock data_jpg -%}
"""

CSS = """.site-nav,.site-box,.site-page{max-width:62rem;margin:1rem auto;padding:0 1rem;
font-family:system-ui,sans-serif;line-height:1.45;color:#222}
.site-nav{display:flex;gap:1.2rem;flex-wrap:wrap;border-bottom:1px solid #ddd;padding-bottom:.5rem}
.site-box{background:#f3f7fb;border:1px solid #c9d9ea;border-radius:.4rem;padding:.6rem 1rem}
.site-box pre,.site-page pre{background:#fff;border:1px solid #ddd;padding:.5rem;overflow-x:auto;font-size:.88em}
.site-page figure{margin:1.5rem 0}.site-page figure img,.site-box img{max-width:100%;height:auto;
border:1px solid #eee}.site-page ol.contents li{margin:.5rem 0}.site-page table{border-collapse:collapse}
.site-page td,.site-page th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
.site-page h1,.site-nav a{overflow-wrap:anywhere}
.site-box figure img{max-width:min(100%,34rem)}figcaption{font-size:.92em;color:#333}.site-drawn{margin:0 0 .6rem}.site-page a.anchor-link{display:none}
.site-boxes{margin:1rem 0}.site-boxes .site-box{margin:.8rem 0;max-width:none}
/* in line with the text column, which sits beside the input prompts */
@media (min-width:40rem){.site-boxes{margin:1rem 32px 1rem 86px}}
nav.site-toc ol{margin:.3rem 0;padding-left:1.4rem}nav.site-toc li{margin:.15rem 0}
.jp-OutputArea-output img{max-width:100%;height:auto}
@media (max-width:40rem){.jp-InputPrompt,.jp-OutputPrompt{display:none}}
.MJX_Assistive_MathML [mathvariant]{font-family:inherit!important}
/* that hidden MathML is a 1 px box at its formula's left edge: a formula that starts at the end of a line would
   put it past the screen's edge (07 at 390 px: 391); at the formula's right edge it stays inside the text */
.MJX_Assistive_MathML{left:auto!important;right:0}
.jp-RenderedMarkdown code,.site-box code{overflow-wrap:anywhere}
/* Code and outputs keep every line whole: a long one scrolls sideways inside its own box, one a keyboard can
   focus (see keyboard_scrolling), never clipped (JupyterLab's overflow:hidden) nor broken mid-word (break-all). */
.jp-InputArea,.jp-InputArea-editor,.jp-OutputArea-child{overflow:visible;min-width:0}
.jp-InputArea-editor pre,.jp-RenderedMarkdown pre{overflow-x:auto;white-space:pre;overflow-wrap:normal}
.jp-OutputArea-output{overflow-x:auto}.jp-OutputArea-output pre{overflow:visible;white-space:pre;word-break:normal;
overflow-wrap:normal}
/* JupyterLab makes an output a table row below 760 px, and a row never scrolls: a block does */
@media (max-width:760px){.jp-OutputArea-child,.jp-OutputArea-child .jp-OutputArea-output{display:block;width:auto}}
/* A wide table scrolls in its own box (the page never does); no column takes the others' room: MathJax sizes a
   formula alone in its cell to the whole line (MathJax_FullWidth), for line breaking, which a table reads as wide. */
.scroll{overflow-x:auto;max-width:100%}
:is(td,th)>.MathJax.MathJax_FullWidth{display:inline!important;width:auto!important}
:is(td,th)>.MathJax_FullWidth .math{width:auto!important}
@media (max-width:40rem){.site-page td,.site-page th{padding:.2rem .3rem}.site-page table{font-size:.9em}}
/* Lines of prose a reader can follow: at most about 80 characters, which 60ch is (a ch is a digit's width, wider
   than most letters), in a page centred under its links; code lines up to about 110 characters fit beside the
   prompts at 1280 px. */
.jp-RenderedMarkdown :is(p,li,dd,blockquote,summary),.site-page :is(p,li),.site-box p{max-width:60ch}
body.jp-Notebook>main{max-width:66rem;margin:0 auto}
/* Text at 4.5:1 or more on its background (WCAG AA). Code on #f5f5f5: comments 4.17 -> 4.84, numbers
   4.26 -> 5.09, operator words 4.4 -> 5.2, errors 3.67 -> 5.94; prompts (#616161 at 40% opacity, 2.16) 6.19. */
.jp-Notebook{--jp-mirror-editor-comment-color:#3a7575;--jp-mirror-editor-number-color:#007a00;
--jp-mirror-editor-operator-color:#9a1ee6;--jp-mirror-editor-meta-color:#9a1ee6;--jp-mirror-editor-error-color:#c00000}
.jp-InputPrompt,.jp-OutputPrompt{opacity:1!important}"""


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


# --------------------------------------------------------------------------- pages

e = html.escape


def _shell(title: str, body: str, head: str = "") -> str:
    """A page of the site's own; ``head`` goes into its <head> (MathJax: :func:`mathjax_head`)."""
    return (f'<!DOCTYPE html>\n<!-- Generated by `python -m autograder site` from notebooks/ and README.md: do not edit. -->'
            f'\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, '
            f'initial-scale=1"><title>{e(title)}</title><link rel="stylesheet" href="site.css">{head}</head>\n'
            f"<body>{body}</body></html>\n")


def mathjax_head(exporter: HTMLExporter) -> str:
    """The MathJax a notebook's page loads (the site's copy, nbconvert's own configuration: ``$...$`` inline,
    ``$$...$$`` displayed), for the site's other pages: README's lines there may hold math too."""
    macro = "{% from 'mathjax.html.j2' import mathjax %}{{ mathjax(url) }}"
    return MATHJAX_FONTS + exporter.environment.from_string(macro).render(url=exporter.mathjax_url)


def _nav(notebooks: list[Notebook], here: str = "", label: str = "Course") -> str:
    """The links between pages; ``label`` names it apart from a page's other navigation (a screen reader lists
    each by its name)."""
    links = ['<a href="index.html">Contents</a>', '<a href="figures.html">Figures</a>']
    stems = [n.stem for n in notebooks]
    if here in stems:
        i = stems.index(here)
        if i > 0:
            links.append(f'<a href="{e(stems[i - 1])}.html" rel="prev">← {e(notebooks[i - 1].title)}</a>')
        if i + 1 < len(stems):
            links.append(f'<a href="{e(stems[i + 1])}.html" rel="next">{e(notebooks[i + 1].title)} →</a>')
    return f'<nav class="site-nav" aria-label="{e(label)}">{"".join(links)}</nav>'


def how_to_run(nb: Notebook, install: str) -> str:
    return f"""<details class="site-box"><summary><b>How to run this notebook</b></summary>
<p><b>On your computer, in JupyterLab.</b> In a copy of the course repository (Python 3.11), install
everything and open the course:</p>
{command_box(install, "Install command")}
<p>then open <code>notebooks/{e(nb.stem)}.ipynb</code>, work top to bottom, and before you hand it in run the
self-check: <code>.venv/bin/python -m autograder validate notebooks/{e(nb.stem)}.ipynb</code>.
You can also <a href="notebooks/{e(nb.stem)}.ipynb" download>download this notebook</a> alone.</p>
<p><b>On your course's JupyterHub (nbgrader).</b> Open the <i>Assignments</i> tab, fetch
<code>{e(nb.stem)}</code> and open it; or, in a terminal on the hub,
<code>nbgrader fetch_assignment {e(nb.stem)} --course COURSE</code> (your instructor gives the course id).
Submit from the same tab, or with <code>nbgrader submit {e(nb.stem)} --course COURSE</code>.</p>
</details>"""


def command_box(command: str, label: str) -> str:
    """A command in a box that scrolls sideways on a narrow screen: a named region a keyboard can focus."""
    return f'<pre tabindex="0" role="region" aria-label="{e(label)}"><code>{e(command)}</code></pre>'


def figure_html(fig: Figure, src: str) -> str:
    # the caption right below says the rest: an alt text that repeated it was read out twice
    return (f'<figure id="{e(fig.stem)}"><img src="{e(src)}" alt="{e(fig.title)}" '
            f'loading="lazy"><figcaption><b>{e(fig.title)}.</b> {e(fig.caption)}</figcaption></figure>')


def _inline(rendered: str) -> str:
    """markdown2html's one paragraph without its <p>."""
    return re.sub(r"^\s*<p>|</p>\s*$", "", rendered)


def contents_page(notebooks: list[Notebook], readme: str, install: str, mathjax: str = "") -> str:
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
{keyboard_scrolling(markdown2html(ideas.group(0))) if ideas else ""}
<h2>How to run the notebooks</h2>
<p><b>Locally in JupyterLab</b> (Python 3.11; CPU-only PyTorch, JupyterLab and nbgrader are installed into
<code>.venv</code>):</p>
{command_box(install, "Install command")}
<p><b>On a JupyterHub with nbgrader</b>: fetch each notebook from the <i>Assignments</i> tab (or
<code>nbgrader fetch_assignment NN_name --course COURSE</code>) and submit it from there.
Each notebook's page says the exact commands.</p>
<p><a href="figures.html">The course's figures</a>.</p>
</main>"""
    return _shell("The mathematics of Transformers", body, mathjax)


def figures_page(notebooks: list[Notebook], figures: list[Figure], sources: dict[str, str],
                 mathjax: str = "") -> str:
    by_number = {n.number: n for n in notebooks}
    parts = []
    for fig in figures:
        nb = by_number.get(FIGURE_NOTEBOOK.get(fig.stem, ""))
        where = f'<p>Used in <a href="{e(nb.stem)}.html">{e(nb.title)}</a>.</p>' if nb else ""
        parts.append(figure_html(fig, sources[fig.stem]) + where)
    body = (f'{_nav(notebooks)}<main class="site-page"><h1>Figures</h1><p>The course\'s figures, regenerated by '
            f'<code>python examples/plot_foundations.py</code>.</p>{"".join(parts)}</main>')
    return _shell("Figures", body, mathjax)


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


# --------------------------------------------------------------------------- for a keyboard and a screen reader

ALT = "site_alt"  # an image output's metadata key: its alt text, which TEMPLATE's data_png and data_jpg write
# TeX commands as a screen reader should say them in an alt text or a label; any other \name reads as its name
TEX_WORDS = {"cdot": "·", "times": "×", "dots": "…", "ldots": "…", "cdots": "…", "le": "≤", "leq": "≤", "ge": "≥",
             "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "to": "→", "rightarrow": "→", "infty": "∞",
             "left": "", "right": "", "top": "T"}


def plain_text(markdown: str) -> str:
    """Markdown with TeX as plain words, for an alt text or a label: ``**a** $q \\cdot k_j$`` -> ``a q · k_j``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)  # a link: its words
    text = re.sub(r"\\(?:text|mathrm|mathbf|operatorname)\{([^}]*)\}", r"\1", text)
    text = re.sub(r"\\[,;:! ]", " ", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: TEX_WORDS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"<[^>]+>|[*`${}\\]", "", text)
    return " ".join(text.split())


def _paragraphs(markdown: str) -> list[str]:
    """The blocks of a Markdown cell, folded hints (<details>) left out, each on one line."""
    text = re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


def _is_prose(block: str) -> bool:
    return not block.startswith(("#", "<", "|", "```", "$$", "- ", "* ", "1. "))


def _sentences(text: str, limit: int = 300) -> str:
    """The first sentences of ``text`` up to about ``limit`` characters (always the first one)."""
    kept = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(\"])", text):
        if kept and len(" ".join(kept + [sentence])) > limit:
            break
        kept.append(sentence)
    return " ".join(kept)


def figure_description(cells, i: int) -> str:
    """What the notebook itself says about the figure code cell ``i`` draws, for the image's alt text: the paragraph
    just after it (the course's "Notice that ..." line), else the last paragraph just before it, else the cell's
    first comment line."""
    after = _paragraphs(cells[i + 1].source) if i + 1 < len(cells) and cells[i + 1].cell_type == "markdown" else []
    before = _paragraphs(cells[i - 1].source) if i > 0 and cells[i - 1].cell_type == "markdown" else []
    if after and _is_prose(after[0]):  # a heading first opens the next section: it says nothing of this figure
        return _sentences(plain_text(after[0]))
    if before and _is_prose(before[-1]):
        return _sentences(plain_text(before[-1]))
    comment = re.search(r"^\s*#+\s*(\S.*)$", cells[i].source, re.M)
    return comment.group(1).strip() if comment else "A figure drawn by the code above."


def describe_figures(nb) -> int:
    """Give each image the given cells of ``nb`` show an alt text from the notebook's own words
    (:func:`figure_description`), where nbconvert would write "No description has been provided for this image";
    returns how many images got one."""
    described = 0
    for i, cell in enumerate(nb.cells):
        images = [o for o in cell.get("outputs", []) if any(m in o.get("data", {}) for m in IMAGE_MIMES)]
        if cell.cell_type != "code" or not images:
            continue
        alt = figure_description(nb.cells, i)
        for output in images:
            output.setdefault("metadata", {})[ALT] = alt
            described += 1
    return described


def with_alt(img_html: str, output) -> str:
    """nbconvert's <img> of ``output`` with the alt text :func:`describe_figures` gave it (a Jinja filter), and a
    figure the course's code drew (:func:`.site_outputs.drawn_figures`) in a <figure> whose caption says so."""
    alt = (output.get("metadata") or {}).get(ALT)
    img_html = img_html.replace("<img ", f'<img alt="{e(alt)}" ', 1) if alt else img_html
    names = (output.get("metadata") or {}).get(DRAWN)
    if names:
        img_html = re.sub(r"<img\b[^>]*>", lambda m: f'<figure class="site-drawn">{m.group(0)}<figcaption>'
                          f"{drawn_caption(list(names))}</figcaption></figure>", img_html, count=1)
    return img_html


def keyboard_scrolling(page: str) -> str:
    """``page`` (HTML) with every box that may scroll sideways focusable, so a keyboard scrolls it too: a code cell's
    and a Markdown code block's <pre>, and each table, in a box of its own named after its header cells (its empty
    header cells, a table's corner, become plain cells, and a header that is only a letter as a formula, $j$ or
    $k_j$, is written as text, <i>j</i>: a screen reader finds no text in a formula's MathML). nbconvert's focusable cell wrappers never scroll (the boxes
    inside them do) and leave the tab order; the outputs it made focusable are the boxes that scroll (site.css)."""
    page = page.replace('<div class="jp-Cell-inputWrapper" tabindex="0">', '<div class="jp-Cell-inputWrapper">')
    page = re.sub(r'(<div class="highlight[^"]*">)<pre>', r'\1<pre tabindex="0">', page)
    page = page.replace("<pre><code>", '<pre tabindex="0"><code>')
    number = iter(range(1, 10**6))

    def box(m: re.Match) -> str:
        heads = [plain_text(html.unescape(re.sub(r"<[^>]+>", "", h)))
                 for h in re.findall(r"<th[^>]*>(.*?)</th>", m.group(0), re.S)]
        table = re.sub(r"<th([^>]*)>\s*</th>", r"<td\1></td>", m.group(0))
        table = re.sub(r"<th([^>]*)>\s*\$([A-Za-z])(?:_\{?([A-Za-z0-9]+)\}?)?\$\s*</th>", lambda h: f"<th{h.group(1)}>"
                       f"<i>{h.group(2)}</i>" + (f"<sub>{h.group(3)}</sub>" if h.group(3) else "") + "</th>", table)
        label = f"Table {next(number)}" + (f": {', '.join(h for h in heads if h)}" if any(heads) else "")
        return f'<div class="scroll" tabindex="0" role="region" aria-label="{e(label)}">{table}</div>'

    return re.sub(r"<table>.*?</table>", box, page, flags=re.S)


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
                                mathjax_url=f"mathjax/MathJax.js?config={MATHJAX_CONFIG}",
                                filters={"site_alt": with_alt})
        pages = []
        for (path, nb), info in zip(loaded, notebooks):
            figs = "".join(figure_html(f, sources[f.stem]) for f in figures if FIGURE_NOTEBOOK.get(f.stem) == info.number)
            boxes = (f'<div class="site-boxes">{how_to_run(info, install)}'
                     + (f'<details class="site-box" open><summary><b>This notebook\'s figure</b></summary>{figs}'
                        "</details>" if figs else "") + f"{TOC_PLACEHOLDER}</div>")
            shown = copy.deepcopy(nb)
            reference = solutions_dir / path.name
            if reference.is_file():  # the outputs of the reference run, for the given cells only
                given_outputs(shown, read_notebook(reference), info.stem)
            describe_figures(shown)
            body, _ = exporter.from_notebook_node(after_title(shown, boxes),
                                                  resources={"metadata": {"name": info.title},
                                                             "site_mathjax_fonts": MATHJAX_FONTS,
                                                             "site_before": _nav(notebooks, info.stem),
                                                             "site_after": _nav(notebooks, info.stem,
                                                                                "Course (end of page)")})
            body = keyboard_scrolling(page_contents(body))
            write_atomic(work / f"{info.stem}.html", body)
            write_atomic_bytes(work / "notebooks" / path.name, path.read_bytes())
            pages.append(out / f"{info.stem}.html")
        math = mathjax_head(exporter)
        write_atomic(work / "index.html", contents_page(notebooks, readme_text, install, math))
        write_atomic(work / "figures.html", figures_page(notebooks, figures, sources, math))
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
