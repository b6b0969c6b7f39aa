"""How well ``python -m autograder similarity`` finds planted copies, how rarely it names independent work, how fast.

A synthetic class (tests/similarity_class.py) on the course's released notebooks: every student answers every
exercise in a way of their own; some students copy another's answers to between 3 and 10 exercises (renamed,
recommented, helpers reordered, lines split or joined, one step rewritten now and then, one exercise of the
run written afresh). Prints:

- recall: the planted pairs that share 3 or more non-trivial exercises (both answers long enough to compare,
  the check's own rule), and how many of them were found;
- false positives: the pairs of students who worked alone that were named, per 10,000 such pairs;
- time: wall and CPU seconds of ``find_similar`` (the class is written first, not timed), and the cores.

- with ``--copydetect``: the same figures for copydetect itself on the same class (its own tokeniser, which
  reads every name as ``V``, fingerprints of 25 characters, the released stub as boilerplate), each exercise's
  pairs compared with its ``compare_files`` and alike from a share of copied code (its ``display_t``, 0.33 by
  default, and higher ones), a pair named when alike on 3 or more exercises as ours. It is given only the
  answers long enough by our rule (:data:`MIN_TOKENS` tokens of the student's own): alone it has no rule for
  a one-line answer, and every two students' ``return x @ y.T`` read as a copy. It compares every pair
  that shares a fingerprint and takes about 1 ms an answer to tokenise: run it on a smaller class
  (``--students 150``).

    python benchmarks/similarity.py [--students 500] [--copiers 50] [--assignments 01_tokens_and_ids ...]
                                    [--jobs 2] [--seed 0] [--keep DIR] [--copydetect]

The class is written from the course that :func:`autograder.paths.root` names, and read with it: while the
notebooks are being edited, ``AUTOGRADER_ROOT=<a copy of the repository>`` keeps one course for the whole run
(and for a run before and after a change).

The goals (issues 47 and 55): recall at least 95%, at most 1 independent pair per 10,000 named, 500 students and ten
notebooks in under 60 s on 2 cores. Exit status 1 when a goal is missed.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import paths  # noqa: E402 - after the path above
from autograder.similarity.answers import course_exercises, read_answers  # noqa: E402
from autograder.similarity.compare import MIN_TOKENS  # noqa: E402
from autograder.similarity.run import answer_fingerprints, find_similar  # noqa: E402
from tests.similarity_class import long_enough, make_class  # noqa: E402


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def distinct_answers(folder: Path, assignment: str, skip: set[str]) -> list[int]:
    """Per exercise of ``assignment`` long enough to compare, how many different answers (as compared: after
    names, comments and layout are set aside) the students outside ``skip`` (the copiers) wrote."""
    exercises = {ex.grade_id: ex for ex in course_exercises(assignment)}
    answers, _ = read_answers(folder, assignment, set(exercises))
    kinds: dict[str, set[tuple[str, ...]]] = {}
    for answer in answers:
        if answer.student in skip:
            continue
        fp = answer_fingerprints(answer, exercises[answer.grade_id])
        if fp.size >= MIN_TOKENS:
            kinds.setdefault(answer.grade_id, set()).add(tuple(t[0] for t in fp.tokens))
    return sorted(len(k) for k in kinds.values())


COPYDETECT_SHARES = (0.33, 0.5, 0.7, 0.9)  # copydetect's display_t: its default, and stricter ones


def copydetect_alike(folder: Path, assignments: list[str]) -> dict[float, dict[tuple[str, str], int]]:
    """Per share in :data:`COPYDETECT_SHARES`, how many exercises each pair of students is alike on by copydetect."""
    from copydetect.detector import CodeFingerprint, compare_files  # late: only for --copydetect

    def fingerprint(name: str, code: str, boilerplate=None):
        return CodeFingerprint(name, 25, 1, boilerplate=boilerplate, fp=io.StringIO(code), language="python")

    alike: dict[float, dict[tuple[str, str], int]] = {share: defaultdict(int) for share in COPYDETECT_SHARES}
    for assignment in assignments:
        released = json.loads((paths.notebooks_dir() / f"{assignment}.ipynb").read_text(encoding="utf-8"))
        stubs = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in released["cells"]
                 if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
        exercises = {ex.grade_id: ex for ex in course_exercises(assignment)}
        answers, _ = read_answers(folder, assignment, set(stubs))
        by_exercise: dict[str, dict[str, str]] = defaultdict(dict)
        for answer in answers:  # copydetect has no rule for a one-line answer: it is given ours
            if answer_fingerprints(answer, exercises[answer.grade_id]).size >= MIN_TOKENS:
                by_exercise[answer.grade_id][answer.student] = answer.code
        for gid, codes in by_exercise.items():
            boilerplate = np.array(sorted(fingerprint("stub.py", stubs[gid]).hashes), dtype=np.int64)
            prints = {s: fingerprint(f"{s}.py", code, boilerplate) for s, code in sorted(codes.items())}
            holders: dict[int, list[str]] = defaultdict(list)
            for student, fp in prints.items():
                for h in fp.hashes:
                    holders[h].append(student)
            pairs = {(a, b) for who in holders.values() for i, a in enumerate(who) for b in who[i + 1:]}
            for a, b in pairs:  # a pair that shares no fingerprint has a similarity of 0
                _, (sim_a, sim_b), _ = compare_files(prints[a], prints[b])
                for share in COPYDETECT_SHARES:
                    if max(sim_a, sim_b) >= share:
                        alike[share][a, b] += 1
    return alike


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=500)
    parser.add_argument("--copiers", type=int, default=50, help="students who copy from another (default 50)")
    parser.add_argument("--assignments", nargs="+", default=paths.assignments())
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the class here and keep it (default: a temporary folder)")
    parser.add_argument("--copydetect", action="store_true",
                        help="also run copydetect on the same class (slow: use --students 150)")
    args = parser.parse_args(argv)

    folder = args.keep or Path(tempfile.mkdtemp(prefix="similarity-class-"))
    try:
        if folder.exists():
            shutil.rmtree(folder)
        started = time.perf_counter()
        planted = make_class(folder, paths.root(), args.assignments, students=args.students, copiers=args.copiers,
                             seed=args.seed)
        print(f"class: {args.students} students x {len(args.assignments)} notebooks, written in "
              f"{time.perf_counter() - started:.1f} s; {len(planted.pairs)} planted pairs")
        cpu, wall = _cpu(), time.perf_counter()
        found = find_similar(folder, jobs=args.jobs)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        comparable = {tuple(sorted(k)): n for k, n in long_enough(folder, planted.pairs).items()}
        distinct = distinct_answers(folder, args.assignments[0], {c for _, c in planted.pairs})
        theirs, their_time = {}, (0.0, 0.0)
        if args.copydetect:
            cpu_cd, wall_cd = _cpu(), time.perf_counter()
            theirs = copydetect_alike(folder, args.assignments)
            their_time = (time.perf_counter() - wall_cd, _cpu() - cpu_cd)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)

    named = {(p.a, p.b) for p in found.pairs}
    planted_pairs = {tuple(sorted(k)): shared for k, shared in planted.pairs.items()}
    target = [k for k in planted_pairs if comparable[k] >= 3]
    hits = [k for k in target if k in named]
    # two students who copied from the same one copied each other's answers too: not independent either
    same_source = {tuple(sorted((c1, c2))) for (s1, c1), shared1 in planted.pairs.items()
                   for (s2, c2), shared2 in planted.pairs.items() if s1 == s2 and c1 != c2 and shared1 & shared2}
    related = set(planted_pairs) | same_source
    independent = args.students * (args.students - 1) // 2 - len(related)
    false = [p for p in found.pairs if (p.a, p.b) not in related]
    per_10k = 10_000 * len(false) / independent if independent else 0.0
    answers = sum(t.answered for t in found.exercises)
    print(f"answers compared: {answers} ({sum(t.too_short for t in found.exercises)} too short to tell apart, "
          f"{sum(t.too_short_here for t in found.exercises)} more at this class size) in {len(found.exercises)} "
          "exercises")
    if distinct:
        print(f"independent answers written differently, per exercise of {args.assignments[0]}: {distinct[0]} to "
              f"{distinct[-1]} different ones (as compared) of {args.students - args.copiers}")
    print(f"recall: {len(hits)} of {len(target)} planted pairs sharing 3+ non-trivial exercises found "
          f"({len(hits) / len(target):.1%})" if target else "recall: no planted pair shares 3 exercises")
    print(f"false positives: {len(false)} of {independent} independent pairs named ({per_10k:.2f} per 10,000); "
          f"{sum(1 for p in found.pairs if (p.a, p.b) in same_source)} of {len(same_source)} pairs who copied "
          "from the same student named too")
    print(f"time: {wall:.1f} s wall, {cpu:.1f} s CPU, {args.jobs} worker(s), {os.cpu_count()} core(s) on this machine")
    for k in target:
        if k not in named:
            print(f"  missed: {k[0]} and {k[1]}, {comparable[k]} non-trivial exercises copied")
    for p in false[:10]:
        print(f"  named, independent: {p.a} and {p.b}: " + ", ".join(f"{s.grade_id} ({s.score:.0f})" for s in p.shared))
    for share, counts in theirs.items():
        their_named = {pair for pair, n in counts.items() if n >= found.min_exercises}
        their_false = [pair for pair in their_named if pair not in related]
        print(f"copydetect, alike from a share of {share:.0%}: recall {sum(1 for k in target if k in their_named)} "
              f"of {len(target)}; false positives: {len(their_false)} ({10_000 * len(their_false) / independent:.2f} "
              "per 10,000)")
    if theirs:
        print(f"copydetect's time: {their_time[0]:.1f} s wall, {their_time[1]:.1f} s CPU, one process")
    ok = (not target or len(hits) >= 0.95 * len(target)) and per_10k <= 1 and (
        args.students < 500 or len(args.assignments) < 10 or wall < 60)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
