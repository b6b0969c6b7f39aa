"""Mutation testing of the code that decides scores, with mutmut: does the suite notice a broken grader?

mutmut (pinned in requirements-mutation.txt, configured under ``[tool.mutmut]`` in pyproject.toml) copies
``autograder/`` and ``tests/`` into ``mutants/``, rewrites the three targets there so that each function can
run any one of its mutants, runs the fast tests once to learn which tests reach which function, then runs
each mutant in a fork against the tests that reach it. A mutant that survives is a missing test or a
change that cannot alter behaviour: the latter are listed, with the reason, in
tools/mutation-equivalent.txt; any other survivor makes the exit status 1.

The targets: ``judge`` (autograder/grade/submission/judge.py), ``sanitize`` (autograder/grade/submission/sanitize.py) and
``core``, the verdict (autograder/checks/verdict.py), the comparators (autograder/checks/compare.py) and the
reading of outcomes (autograder/checks/evidence.py). mutmut mutates those whole files; their messages and
encoding have tests of their own, so only the mutants of the functions in CORE are run.

What this driver adds to ``mutmut run``:
- it points AUTOGRADER_ROOT at this checkout: the tests import the mutated package from ``mutants/`` (mutmut
  puts it first on sys.path, before the editable install's finder), whose own root would have no solutions;
- a score per target with the listed equivalents taken out; a survivor is matched to an entry by its function
  and its changed lines, not by mutmut's number alone (an edit to a function renumbers its mutants), and an
  entry that no survivor matches any more is reported;
- ``--replace OLD NEW``: a hand-written mutant, which mutmut cannot run; HAND_WRITTEN are the grader bugs
  of issue 29 written that way (``--hand-written`` runs them all; each must be killed on its own).

Run it from the repository's root, after ``.venv/bin/pip install -r requirements-mutation.txt``:

    .venv/bin/python tools/mutation.py                    # every mutant of every target, then the scores
    .venv/bin/python tools/mutation.py judge              # one target
    .venv/bin/python tools/mutation.py --survivors        # re-run the last run's survivors (after a new test)
    .venv/bin/python tools/mutation.py --mutant NAME      # one mutant (a glob too); `mutmut show NAME` shows it
    .venv/bin/python tools/mutation.py --report           # the last run's scores, running nothing
    .venv/bin/python tools/mutation.py --hand-written     # the issue's bugs, written by hand
    .venv/bin/python tools/mutation.py judge --replace "len(got) != len(reference)" "len(got) < len(reference)"
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("mutation-equivalent.txt")
REQUIREMENTS = ROOT / "requirements-mutation.txt"
MUTMUT = Path(sys.executable).with_name("mutmut")  # the console script: `python -m mutmut` imports twice

# the verdict and everything it calls to compare: the comparators, the reading of outcomes, the (ok, message) form
CORE = (
    *(f"autograder.checks.compare.{name}" for name in (
        "xǁComparatorǁ*", "xǁcloseǁ*", "xǁequalǁ*", "xǁpredicateǁ*", "x__as_array__mutmut_*", "x__plain__mutmut_*",
        "x__types__mutmut_*")),
    "autograder.checks.evidence.xǁOutcomeǁfrom_json__mutmut_*",
    "autograder.checks.verdict.x_verdict__mutmut_*", "autograder.checks.verdict.x_judge__mutmut_*")
# a target: the files mutmut mutates for it (a hand-written mutant's text is found in one of them) and the mutants run
TARGETS = {
    "judge": (("autograder/grade/submission/judge.py",), ("autograder.grade.submission.judge.*",)),
    "sanitize": (("autograder/grade/submission/sanitize.py",), ("autograder.grade.submission.sanitize.*",)),
    "core": (("autograder/checks/verdict.py", "autograder/checks/compare.py", "autograder/checks/evidence.py"), CORE),
}
KILLED = ("killed", "timeout", "caught by type check", "segfault")  # the tests (or the machine) noticed


@dataclass(frozen=True)
class HandWritten:
    """A grader bug as a person would write it: ``old`` (once in the target's file) replaced by ``new``."""

    target: str
    old: str
    new: str
    what: str


HAND_WRITTEN = (
    HandWritten("judge", 'return result("error", _error(cell.outputs))',
                'return result("error", _error(cell.outputs), earned=True)',
                "a test cell that raised earns its points"),
    HandWritten("judge", "return result(\"timeout\", cell.detail or \"the test was interrupted",
                "return result(\"timeout\", earned=True, message=cell.detail or \"the test was interrupted",
                "a timed-out cell earns its points"),
    HandWritten("judge", "if len(got) != len(reference):", "if len(got) < len(reference):",
                "extra evidence payloads ignored"),
    HandWritten("judge", 'if found == {"passed"}:', 'if "passed" in found:',
                "any passed test makes the exercise passed"),
    HandWritten("core", "if not (len(got) == len(want) == len(cases)):", "if False:",
                "the student's outcome count is not checked"),
    HandWritten("core", 'if evidence.get("check") != check_id:', "if False:", "evidence for another check id accepted"),
    HandWritten("core", "atol: float = 1e-8, rtol: float = 1e-6, kind", "atol: float = 1e-2, rtol: float = 1e-2, kind",
                "close()'s default tolerance loosened to 1e-2"),
    HandWritten("core", "if g.shape != w.shape:", "if False:", "the shape check dropped"),
    HandWritten("core", "if got.raised and expected in got.raised:", "if got.raised:", "any exception accepted"),
    HandWritten("core", "if g == w and _types(g) == _types(w):", "if g == w:", "types ignored (True for 1, 1.0 for 1)"),
)


def mutmut(*args: str, capture: bool = False) -> subprocess.CompletedProcess:
    """mutmut in this checkout, with the tests reading the course (solutions/) from here, not from mutants/."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(ROOT)}
    return subprocess.run([str(MUTMUT), *args], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE if capture else None, stderr=subprocess.STDOUT if capture else None)


def require_pinned_mutmut() -> None:
    pin = re.search(r"^mutmut==(\S+)", REQUIREMENTS.read_text(), re.M).group(1)
    try:
        installed = metadata.version("mutmut")
    except metadata.PackageNotFoundError:
        installed = None
    if installed != pin or not MUTMUT.exists():
        raise SystemExit(f"mutmut {pin} is needed (found {installed or 'none'} for {sys.executable}): "
                         f"{Path(sys.executable).with_name('pip')} install -r requirements-mutation.txt")


def in_target(name: str, target: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TARGETS[target][1])


def results() -> dict[str, str]:
    """mutant name -> status ("killed", "survived", "not checked", ...) as mutmut last saved them."""
    out = mutmut("results", "--all", "true", capture=True)
    found = {}
    for line in out.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("autograder."):
            found[name] = status
    return found


def diff_of(name: str) -> list[str]:
    """The changed lines of a mutant (``-old`` and ``+new``), as ``mutmut show`` prints them."""
    out = mutmut("show", name, capture=True).stdout
    return [line.rstrip() for line in out.splitlines()
            if line[:1] in "-+" and not line.startswith(("---", "+++"))]


@dataclass(frozen=True)
class Equivalent:
    """A listed mutant: mutmut's name for it, the lines it changes and why no test can notice."""

    name: str
    diff: tuple[str, ...]
    why: str

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return function_of(self.name), self.diff


def function_of(name: str) -> str:
    """The mutated function's part of a mutant's name (``autograder.grade.submission.judge.x_score`` of ``..._mutmut_8``)."""
    return name.rpartition("__mutmut_")[0]


def equivalents() -> list[Equivalent]:
    """tools/mutation-equivalent.txt: a mutant's name, its changed lines indented by four spaces, then ``why:``."""
    known, name, diff = [], None, []
    for line in EQUIVALENT.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            name, diff = line.strip(), []
        elif line.strip().startswith("why:") and name:
            known.append(Equivalent(name, tuple(diff), line.strip().removeprefix("why:").strip()))
            name = None
        elif name:
            diff.append(line[4:].rstrip())
    return known


def report(targets: list[str]) -> int:
    """Print each target's score over its mutants that mutmut ran; 1 when an unlisted mutant survived.

    A survivor is equivalent when a listed entry names a mutant of the same function with the same changed
    lines: an edit elsewhere in the function renumbers its mutants without making the entry wrong."""
    status = results()
    listed = {e.key: e for e in equivalents()}
    problems, matched = [], set()
    for target in targets:
        names = [n for n in status if in_target(n, target)]
        counts: dict[str, int] = {}
        for name in names:
            s = status[name]
            if s == "survived":
                key = function_of(name), tuple(diff_of(name))
                if key in listed:
                    matched.add(key)
                    s = "equivalent"
            counts[s] = counts.get(s, 0) + 1
            if s not in (*KILLED, "equivalent", "not checked"):  # survived, no tests (none reaches it), suspicious...
                problems.append(f"{s.upper()}: {name}  (mutmut show {name})")
        run_functions = {function_of(n) for n in names if status[n] != "not checked"}
        for key, entry in listed.items():
            if key not in matched and key[0] in run_functions:
                problems.append(f"LISTED, BUT NO SURVIVOR OF {key[0]} MAKES THAT CHANGE: {entry.name} (killed now, "
                                f"or the code changed): remove or update its entry")
        run = sum(v for k, v in counts.items() if k != "not checked")
        killed = sum(counts.get(k, 0) for k in KILLED)
        killable = run - counts.get("equivalent", 0)
        score = f"{killed / killable:.1%}" if killable else "n/a"
        detail = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        print(f"{target} ({', '.join(TARGETS[target][0])}): {killed} of {killable} non-equivalent mutants killed: "
              f"{score} [{detail}]", flush=True)
    for p in problems:
        print(f"  {p}", file=sys.stderr)
    if problems:
        print(f"Kill each survivor with a test, or list it with its changed lines and the reason in "
              f"{EQUIVALENT.relative_to(ROOT)}.", file=sys.stderr)
    return 1 if problems else 0


def run_hand_written(mutant: HandWritten | None) -> bool:
    """Run the fast tests against one hand-written mutant (None: the code as it is, which must pass), in a copy
    of the package as mutmut would; True if killed.

    The copy is a folder of its own holding the package, the tests and pyproject.toml: pytest inserts the
    folder of the tests' package first on sys.path, so running the checkout's tests would import the
    checkout's package, not the copy."""
    files = [ROOT / f for f in TARGETS[mutant.target if mutant else "judge"][0]]
    found = [p for p in files if mutant and mutant.old in p.read_text()]
    if mutant and (len(found) != 1 or found[0].read_text().count(mutant.old) != 1):
        where = ", ".join(str(p.relative_to(ROOT)) for p in files)
        raise SystemExit(f"{mutant.old!r} occurs {sum(p.read_text().count(mutant.old) for p in files)} times in "
                         f"{where}; give text that occurs exactly once")
    path = found[0] if mutant else files[0]
    text = path.read_text()
    tests = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["pytest_add_cli_args_test_selection"]
    with tempfile.TemporaryDirectory(prefix="hand-mutant-") as tmp:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "autograder", Path(tmp) / "autograder", ignore=ignore)
        shutil.copytree(ROOT / "tests", Path(tmp) / "tests", ignore=ignore)
        shutil.copy2(ROOT / "pyproject.toml", tmp)
        if mutant:
            (Path(tmp) / path.relative_to(ROOT)).write_text(text.replace(mutant.old, mutant.new))
        env = {**os.environ, "AUTOGRADER_ROOT": str(ROOT)}
        where = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"],
                               cwd=tmp, env=env, capture_output=True, text=True).stdout.strip()
        if not where.startswith(tmp):
            raise SystemExit(f"the copy would import the package from {where}, not the mutant in {tmp}")
        done = subprocess.run([sys.executable, "-m", "pytest", *tests, "-x", "-q", "-n", "0", "-p", "no:cacheprovider"],
                              cwd=tmp, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1) or (mutant is None and done.returncode):
        raise SystemExit(f"pytest exited {done.returncode} on {mutant.what if mutant else 'the unmutated code'}:\n"
                         f"{done.stdout[-3000:]}")
    return done.returncode == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Mutation testing, with mutmut, of the grader's judge, sanitizer and verdict/comparators. "
                    "Targets: judge (307 mutants), sanitize (265), core (687 of the mutants of verdict.py, "
                    "compare.py and evidence.py). Each mutant runs the fast tests that reach its function, two "
                    "at a time (--max-children 2). Measured on 2 cores: judge 128 s and sanitize 365 s with the "
                    "machine otherwise idle, core 211 s while two test suites shared the cores; the whole tool "
                    "about 12 minutes. The first run of a checkout adds about 40 s to generate the mutants and "
                    "30 s to learn which tests reach which function; --survivors (after a new test) re-learns "
                    "that and re-runs the last survivors in about a minute; --mutant runs one mutant in about a "
                    "minute; --hand-written runs the 10 hand-written bugs, one at a time.",
        epilog=f"Survivors not listed in {EQUIVALENT.relative_to(ROOT)} make the exit status 1. mutmut's own "
               "commands work here too (`mutmut browse`, `mutmut show NAME`) with AUTOGRADER_ROOT=$PWD set.")
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--report", action="store_true", help="print the last run's scores and survivors, run nothing")
    parser.add_argument("--survivors", action="store_true", help="re-run the targets' mutants that survived last time")
    parser.add_argument("--mutant", nargs="+", metavar="NAME", help="run these mutants only (names or globs)")
    parser.add_argument("--replace", nargs=2, metavar=("OLD", "NEW"),
                        help="run one hand-written mutant of one target: the text OLD (once in it) replaced by NEW")
    parser.add_argument("--hand-written", action="store_true", help="run the hand-written bugs of HAND_WRITTEN")
    parser.add_argument("--max-children", type=int, default=2, metavar="N", help="mutants run at once (default 2)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.targets) - set(TARGETS))
    if unknown:
        parser.error(f"no target {', '.join(unknown)}; the targets are {', '.join(TARGETS)}")
    targets = args.targets or list(TARGETS)
    if args.replace or args.hand_written:
        if args.replace and len(args.targets) != 1:
            parser.error("--replace needs exactly one target")
        chosen = [HandWritten(targets[0], *args.replace, "by hand")] if args.replace else \
            [m for m in HAND_WRITTEN if m.target in targets]
        run_hand_written(None)  # the tests pass as the code stands, so a failure below is the mutant's doing
        survived = 0
        for m in chosen:
            start = time.monotonic()
            killed = run_hand_written(m)
            survived += not killed
            print(f"{'killed  ' if killed else 'SURVIVED'} {m.target}: {m.what} ({time.monotonic() - start:.0f} s)",
                  flush=True)
        return 1 if survived else 0
    require_pinned_mutmut()
    if not args.report:
        if args.mutant:
            batches = [("the mutants asked for", args.mutant)]
        elif args.survivors:
            last = results()
            names = [n for n, s in last.items() if s == "survived" and any(in_target(n, t) for t in targets)]
            if not names:
                print("no survivors to re-run")
            # a new test is why one re-runs survivors, but mutmut runs a mutant only against the tests its
            # saved stats say reach the function: forget them, so it learns again (about 30 s)
            (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
            batches = [("the last survivors", names)] if names else []
        else:
            batches = [(t, list(TARGETS[t][1])) for t in targets]
        for what, patterns in batches:
            start = time.monotonic()
            done = mutmut("run", "--max-children", str(args.max_children), *patterns)
            if done.returncode:
                raise SystemExit(f"mutmut run exited {done.returncode} on {what}")
            print(f"{what}: mutmut ran in {time.monotonic() - start:.0f} s", flush=True)
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
