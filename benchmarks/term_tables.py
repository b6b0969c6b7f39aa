"""benchmarks/term.py's printing: the tables and the lines of its report, from measured (or made-up) numbers."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from benchmarks.term_class import KINDS
from benchmarks.term_figures import (CORES, LOOPER_GOAL, LOOPERS_SHARE_GOAL, TERM_GOAL, TERM_STUDENTS, Extrapolation,
                                     Spread, TimeLimits)
from benchmarks.term_measure import Graded
from benchmarks.term_split import Split, course_items


def fmt_seconds(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 120 else f"{s:.1f} s"


@dataclass
class Row:
    """One notebook's line of the table (core-seconds per submission)."""

    notebook: str
    subs: int
    graded: Spread  # grade's core-s per submission, all kinds, one value per --repeat
    ordinary: Spread  # the same without the looping and crashing submissions
    right: Spread  # the same for its right submissions (estimated: see submission_cpu)
    floor: Spread
    learner: Spread

    @property
    def course(self) -> float:
        return self.right.min - self.learner.min


def notebook_table(rows: list[Row]) -> list[str]:
    head = (f"{'notebook':30} {'subs':>4} {'all':>13} {'ordinary':>13} {'right':>13} {'floor':>13} {'learner':>13} "
            f"{'course':>7} {'right/floor':>11} {'learner%':>8} {'course%':>7} {'course/learner':>14}")
    lines = [head]

    def line(name, subs, g, o, r, f, l, cells):
        c = r - l
        return (f"{name:30} {subs:4d} " + " ".join(f"{x:>13}" for x in cells) +
                f" {c:7.3f} {r / f if f else float('nan'):11.2f} {100 * l / r if r else 0:8.1f} "
                f"{100 * c / r if r else 0:7.1f} {c / l if l else float('inf'):14.1f}")

    for r in rows:
        lines.append(line(r.notebook, r.subs, r.graded.min, r.ordinary.min, r.right.min, r.floor.min, r.learner.min,
                          [str(r.graded), str(r.ordinary), str(r.right), str(r.floor), str(r.learner)]))
    subs = sum(r.subs for r in rows)
    if subs:
        avg = [sum(getattr(r, k).min * r.subs for r in rows) / subs
               for k in ("graded", "ordinary", "right", "floor", "learner")]
        lines.append(line("term (per submission)", subs, *avg, [f"{x:.3f}" for x in avg]))
    return lines


SPLIT_COLUMNS = ("total", "learner", "inputs", "harness", "evidence", "tests_other", "demo", "demo_alone", "setup",
                 "library", "solutions")


def split_table(splits: dict[str, list[Split]], forked: dict[str, Spread]) -> list[str]:
    """The floor split, min±spread over the warm runs, and the solution's cells in forked children."""
    head = f"{'notebook':30} " + " ".join(f"{c:>13}" for c in SPLIT_COLUMNS) + f" {'forked':>13}"
    lines = [head]
    for a, runs in splits.items():
        cells = [str(Spread([getattr(s, c) for s in runs])) for c in SPLIT_COLUMNS]
        lines.append(f"{a:30} " + " ".join(f"{c:>13}" for c in cells) +
                     (f" {str(forked[a]):>13}" if a in forked else ""))
    return lines


def kind_table(walls: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = [f"{'notebook':30} " + " ".join(f"{k:>12}" for k in KINDS)]
    for a in sorted(walls):
        cells = []
        for k in KINDS:
            v = walls[a].get(k, [])
            cells.append(f"{statistics.mean(v):7.2f} x{len(v):<3d}" if v else f"{'-':>12}")
        lines.append(f"{a:30} " + " ".join(cells))
    return lines




def worst_course_side(raw: dict[str, list[dict]], most: int = 5) -> list[str]:
    """Per notebook, the largest course-side costs of its warm run with the least total."""
    lines = []
    for a, runs in raw.items():
        best = min(runs[1:], key=lambda r: Split.of(r).total)  # the first run warmed up
        split = Split.of(best)
        lines.append(f"{a}: course side {split.course:.3f} s of {split.total:.3f} s")
        lines += [f"   {seconds:7.3f} s  {what}" for seconds, what in course_items(best)[:most]]
    return lines


def grading_line(number: int, what: str, g: Graded) -> str:
    """One ``grade`` run of a grading: wall, CPU by each account, the first result."""
    tl = g.profile.get("timeline", {})
    first = g.first_polled if g.first_polled is not None else math.nan
    return (f"grading {number}, {what}: wall {g.wall:.1f} s; CPU {g.cpu:.1f} core-s "
            f"({'cgroup cpuacct' if g.cgroup_cpu is not None else 'profile.json'}; profile.json "
            f"{g.profile['total_cpu']:.1f}, RUSAGE_CHILDREN {g.rusage_cpu:.1f}); first result {first:.2f} s "
            f"(polled), {tl.get('first result', math.nan):.2f} s (profile timeline; class started "
            f"{tl.get('class started', math.nan):.2f} s)")


def extrapolation_lines(ex: Extrapolation, ordinary: Extrapolation, *, measured_wall: float, ordinary_n: int,
                        submissions: int, assignments: int, counts: dict[str, int], load: str) -> list[str]:
    """The formula with its terms; checked against the ordinary run it came from (``ordinary``: the same formula
    with that run's own CPU, ``ordinary_n`` submissions in ``measured_wall`` seconds), which says how many cores'
    worth the machine gave; and the 500-student term on 2 cores and on that many."""
    k_eff = ordinary.effective_cores(measured_wall, ordinary_n)
    term_n = TERM_STUDENTS * assignments
    at_load = Extrapolation(ex.startup, ex.once, ex.per_submission, k_eff).wall(term_n)
    return [
        f"extrapolation: T(N) = S + (F + c * N * A) / k, S = {ex.startup:.2f} s (to the first result), "
        f"F = {ex.once:.1f} core-s (start-up, warm-up, references, discovery), c = {ex.per_submission:.3f} core-s a submission "
        f"(the term's CPU as one run would spend it, but F, over {submissions} submissions: "
        f"{', '.join(f'{counts[k]} {k}' for k in ('slow', 'looping', 'crashing'))} among them), A = {assignments}, "
        f"k = {ex.cores:g}",
        f"  check against the ordinary run ({ordinary_n} submissions, c = {ordinary.per_submission:.3f}): predicted "
        f"{ordinary.wall(ordinary_n):.1f} s on {ex.cores:g} idle cores, measured {measured_wall:.1f} s: it had "
        f"{k_eff:.2f} cores' worth ({load})",
        f"  {TERM_STUDENTS} students ({term_n} submissions): {fmt_seconds(ex.wall(term_n))} on {ex.cores:g} cores; "
        f"{fmt_seconds(at_load)} at the ordinary run's {k_eff:.2f} cores"]


def goal_lines(limits: TimeLimits, slow: int, term: Extrapolation, term_submissions: int) -> list[str]:
    """Issue 48's goals on time limits, each with its figure and whether it is met."""
    def met(ok: bool) -> str:
        return "met" if ok else "NOT MET"

    wall = term.wall(term_submissions)
    return [
        f"a looping submission: {limits.per_looper:.2f} core-s (mean of {limits.looping}; goal <= {LOOPER_GOAL:g}: "
        f"{met(limits.per_looper <= LOOPER_GOAL)})",
        f"the loopers' share of the term's CPU: {100 * limits.loopers_share:.1f}% ({limits.looping_cpu:.1f} of "
        f"{limits.term_cpu:.1f} core-s; goal <= {100 * LOOPERS_SHARE_GOAL:g}%: "
        f"{met(limits.loopers_share <= LOOPERS_SHARE_GOAL)})",
        f"right but slow submissions timed out: {len(limits.slow_cut)} of {slow} (goal 0: "
        f"{met(not limits.slow_cut)})" + "".join(f"; {s} {a}" for s, a in limits.slow_cut),
        f"looping submissions not timed out: {len(limits.loops_uncut)} of {limits.looping} (goal 0: "
        f"{met(not limits.loops_uncut)})" + "".join(f"; {s} {a}" for s, a in limits.loops_uncut),
        f"{TERM_STUDENTS} students ({term_submissions} submissions) on {term.cores:g} cores: "
        f"{fmt_seconds(wall)} (goal < {fmt_seconds(TERM_GOAL)}: {met(wall < TERM_GOAL)})"]


def stock_ratio_line(stock_cpu: float, stock_wall: float, ours: Spread, term_wall_per_submission: float) -> str:
    return (f"ours on the same submissions: {ours} core-s a submission (estimated as above, min±spread over the "
            f"gradings): core-s ratio {stock_cpu / ours.min:.1f}x. Stock nbgrader grades one notebook at a "
            f"time on one core, ours on {CORES}: on {CORES} idle cores the throughput ratio is "
            f"{CORES * stock_cpu / ours.min:.1f}x (measured here, loaded: stock {stock_wall:.2f} s a "
            f"submission; ours {term_wall_per_submission:.2f} s a submission over the whole term)")
