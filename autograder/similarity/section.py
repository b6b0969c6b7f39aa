"""The similarity section: the same HTML in the class report (``report.html``) and on ``similarity.html``.

It names pairs and links each to its side-by-side page (:mod:`.pages`); it says, before any name, that it
finds answers that look alike, not who copied, and what it cannot see.
"""
from __future__ import annotations

from html import escape
from urllib.parse import quote

from .records import PAGES, Pair, Similarity

# Added to the report's own style; the pair pages use it as it is.
SIMILARITY_STYLE = """.pairs td,.pairs th{white-space:nowrap}.pairs td.ex{white-space:normal;min-width:12rem}
.caveat{background:#eef4fb;padding:.5rem .8rem;border-left:4px solid #0072B2;max-width:75ch}
.sbs{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}.sbs figure{margin:0;min-width:0}
.sbs pre{overflow-x:auto;background:#f7f7f7;padding:.5rem;border:1px solid #ddd;font-size:.85em;margin:.3rem 0}
.sbs pre:focus{outline:3px solid #0072B2}mark{background:#fde68a;color:#111;text-decoration:underline dotted #8a5a00}
@media (max-width:40rem){.sbs{grid-template-columns:minmax(0,1fr)}.pairs td,.pairs th{white-space:normal}}"""


def e(text: object) -> str:
    return escape(str(text), quote=True)


def caveat(result: Similarity | None = None) -> str:
    """What the check finds and what it cannot see, in the words the instructor reads first."""
    too_short = sum(t.too_short for t in result.exercises) if result else 0
    short = (f" {too_short} answer(s) of this class were too short to tell apart and were not compared." if too_short
             else "")
    return ('<div class="caveat"><p><b>This finds answers that look alike, not who copied.</b> Two students who '
            "worked together as allowed, who followed the same worked example, or who reached the short obvious "
            "answer look alike too; a pair here is a reason to read both answers and talk with the students, never "
            "a verdict on its own.</p>"
            "<p><b>What it cannot see:</b> lines the course gave (the stub, the docstring, given code) and answers "
            "too short to tell apart (a one-line <code>Q @ K.T</code>) never count; code copied and then rewritten "
            "line by line, an answer translated from another language or produced by an AI assistant, work "
            "shared outside this class, and text and markdown answers are not compared. Names, comments, blank "
            "lines, line breaks and the order of functions are set aside, so renaming and reformatting do not "
            f"hide a copy.{short}</p></div>")


def _chance(p: Pair) -> str:
    """The chance of sharing this many exercises by chance alone, in words."""
    if p.chance < 1e-9:
        return "less than 1 in a billion"
    return f"about 1 in {max(1, round(1 / p.chance)):,}"


def pair_row(p: Pair, pages: str) -> str:
    names = "; ".join(f"{s.assignment} {s.grade_id}" for s in p.shared)
    return (f'<tr data-pair="{e(p.a)} {e(p.b)}" data-shared="{len(p.shared)}">'
            f'<th scope="row"><a href="{e(pages)}/{quote(p.slug)}">{e(p.a)} and {e(p.b)}</a></th>'
            f'<td class="num">{len(p.shared)} of {p.both_answered}</td><td class="num">{p.expected:.2f}</td>'
            f"<td>{_chance(p)}</td><td class=\"ex\">{e(names)}</td></tr>")


def section(result: Similarity, *, pages: str = PAGES) -> str:
    """The section for ``result``; ``pages`` is the folder of the side-by-side pages, relative to the page."""
    pairs = result.pairs
    compared = sum(t.answered for t in result.exercises)
    head = (f"<p><b>{len(pairs)} pair(s) of students</b> gave answers alike on {result.min_exercises} or more "
            "exercises.</p>" if pairs else
            f"<p>No pair of students gave answers alike on {result.min_exercises} or more exercises.</p>")
    table = ""
    if pairs:
        table = ("<p>Most exercises first (also in <code>similarity.csv</code>); a pair's names open both answers "
                 'side by side.</p><table class="pairs"><caption>Pairs alike on several exercises</caption><thead><tr>'
                 '<th scope="col">students</th><th scope="col">exercises alike (of those both answered)</th>'
                 '<th scope="col">alike by chance, expected</th><th scope="col">chance of this many</th>'
                 '<th scope="col">exercises</th></tr></thead><tbody>'
                 + "".join(pair_row(p, pages) for p in pairs) + "</tbody></table>")
    unread = ""
    if result.unread:
        unread = ("<p>Not compared: " + "; ".join(f"{e(u.student)} ({e(u.assignment)}): {e(u.why)}"
                                                   for u in result.unread) + ".</p>")
    return (f'<section id="similarity" data-pairs="{len(pairs)}"><h2>Answers that look alike</h2>' + caveat(result)
            + f"<p>{compared} answer(s) of {result.students} student(s) compared, exercise by exercise. Two answers "
            "are <i>alike</i> when the rarer parts they share (runs of code after names, comments and layout are "
            "set aside) are far likelier from copying than from chance, judged by how many of the class wrote "
            "each part. <i>Alike by chance, expected</i> is how many exercises two students who worked alone "
            "would share, from how often pairs in this class are alike on each exercise.</p>"
            + head + table + unread + "</section>")
