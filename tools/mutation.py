"""Mutation testing of the code that decides scores: does the suite notice when the grader is broken?

Each mutant is one small change to the syntax tree of a target (a comparison flipped, a guard that
never fires, a constant changed, a statement dropped, a returned value replaced by None). The mutant
runs in a forked child that imports the mutated module in place of the file and runs the target's
fast tests with ``-x``; a failing test kills the mutant. A mutant that survives is either a missing
test or a change that cannot alter behaviour: the latter are listed, with the reason, in
tools/mutation-equivalent.txt, and everything else is reported as a survivor (exit status 1).

Why our own runner rather than mutmut: mutmut 3 mutates whole files (core.py's verdict and comparators
are a third of it, the rest is encoding and hints with tests of their own), copies the package into a
mutants/ folder that this editable install would not import, and is not in requirements.txt; this
runner needs nothing beyond the standard library and pytest. It never writes a file of the checkout.

Run it from the repository's root with its virtualenv:

    .venv/bin/python tools/mutation.py                      # every target: hours on 2 busy cores (see --help)
    .venv/bin/python tools/mutation.py judge                # one target (judge: about an hour there)
    .venv/bin/python tools/mutation.py core --sample 50     # an estimate of one target's score
    .venv/bin/python tools/mutation.py core --match "TEXT"  # re-run the mutants whose name holds TEXT
    .venv/bin/python tools/mutation.py --list core          # the mutants, without running anything
"""
from __future__ import annotations

import argparse
import ast
import copy
import importlib.abc
import importlib.util
import os
import random
import signal
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("mutation-equivalent.txt")


@dataclass(frozen=True)
class Target:
    """A module to mutate, the top-level definitions of it that are in scope (None: all), its tests, and
    the modules those tests import (imported once in the runner; a child re-imports what depends on the
    mutated module, and keeps the rest)."""

    module: str
    path: str
    scope: frozenset[str] | None
    tests: tuple[str, ...]
    preload: tuple[str, ...] = ()
    select: str = "not grading and not slow"  # the tests' -m: the fast ones ("" for every test of the files)


PRELOAD = ("numpy", "nbformat", "pytest", "torch", "xdist", "autograder.grade.submission", "autograder.checks.nb01",
           "tests.harness", "tests.builders", "tests.adversarial.evidence")
TARGETS = {
    "judge": Target("autograder.grade.judge", "autograder/grade/judge.py", None,
                    ("tests/grade/test_judge.py", "tests/adversarial/test_forged_evidence.py"), PRELOAD),
    "sanitize": Target("autograder.grade.sanitize", "autograder/grade/sanitize.py", None,
                       ("tests/grade/test_sanitize.py",), PRELOAD + ("autograder.release",), select=""),
    # the verdict and the comparators; encode/decode, the hints and the running of checks have their own tests
    "core": Target("autograder.checks.core", "autograder/checks/core.py",
                   frozenset({"Comparator", "close", "_as_array", "equal", "_plain", "_types", "predicate",
                              "Verdict", "verdict", "judge"}),
                   ("tests/adversarial/test_comparators.py", "tests/adversarial/test_forged_evidence.py",
                    "tests/grade/test_judge.py"), PRELOAD),
}
PYTEST_ARGS = ("-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", "-W", "ignore")
TIMEOUT = 120.0  # seconds one mutant's tests may take before it counts as killed (a mutant that loops)

SWAP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
        ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
BINOP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
         ast.Mod: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    """One change: the node it applies to (by type and position), what it does, and where (for people)."""

    key: tuple
    kind: str
    arg: int
    where: str  # "qualname | the source line"
    description: str

    @property
    def name(self) -> str:
        return f"{self.where} | {self.description}"


def _key(node: ast.AST) -> tuple:
    return (type(node).__name__, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _scoped(tree: ast.Module, scope: frozenset[str] | None):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (scope is None or node.name in scope):
            yield node


def mutants(target: Target) -> list[Mutant]:
    """Every mutant of the target's definitions in scope, in source order."""
    source = (ROOT / target.path).read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    found: list[Mutant] = []
    for definition in _scoped(tree, target.scope):
        for node in ast.walk(definition):
            if not hasattr(node, "lineno"):
                continue
            where = f"{definition.name} | {lines[node.lineno - 1].strip()}"

            def add(kind: str, description: str, arg: int = 0) -> None:
                found.append(Mutant(_key(node), kind, arg, where, description))

            if isinstance(node, ast.Compare):
                for i, op in enumerate(node.ops):
                    if type(op) in SWAP:
                        add("cmp", f"{type(op).__name__} -> {SWAP[type(op)].__name__} ({ast.unparse(node)})", i)
            elif isinstance(node, ast.BoolOp):
                add("bool", f"{type(node.op).__name__} -> the other ({ast.unparse(node)[:80]})")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                add("not", f"drop `not` ({ast.unparse(node)[:80]})")
            elif isinstance(node, ast.BinOp) and type(node.op) in BINOP:
                add("binop", f"{type(node.op).__name__} -> {BINOP[type(node.op)].__name__} ({ast.unparse(node)[:80]})")
            elif isinstance(node, ast.Constant) and type(node.value) in (bool, int, float):
                add("const", f"constant {node.value!r} -> {_changed(node.value)!r}")
            elif isinstance(node, (ast.If, ast.IfExp, ast.While)):
                add("never", f"`{ast.unparse(node.test)[:80]}` is never true")
                add("always", f"`{ast.unparse(node.test)[:80]}` is always true")
            elif isinstance(node, ast.Return) and node.value is not None and not (
                    isinstance(node.value, ast.Constant) and node.value.value is None):
                add("return", f"return None instead of {ast.unparse(node.value)[:80]}")
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Raise, ast.Continue, ast.Break)):
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                    continue  # a docstring
                add("drop", f"drop `{ast.unparse(node)[:80]}`")
    # the same change on the same text twice in one definition (two bare `continue`s): number them
    counts: dict[str, int] = {}
    for m in found:
        counts[m.name] = counts.get(m.name, 0) + 1
    seen: dict[str, int] = {}
    for i, m in enumerate(found):
        if counts[m.name] > 1:
            seen[m.name] = seen.get(m.name, 0) + 1
            found[i] = Mutant(m.key, m.kind, m.arg, m.where, f"{m.description} (#{seen[m.name]})")
    return found


def _changed(value):
    if type(value) is bool:
        return not value
    if type(value) is int:
        return value + 1
    return value * 1e4 if value else 1.0  # a float: a tolerance loosened by four decades; 0.0 becomes 1.0


class _Apply(ast.NodeTransformer):
    def __init__(self, mutant: Mutant):
        self.mutant = mutant

    def visit(self, node):
        node = self.generic_visit(node)
        if not hasattr(node, "lineno") or _key(node) != self.mutant.key:
            return node
        kind, arg = self.mutant.kind, self.mutant.arg
        if kind == "cmp":
            node.ops[arg] = SWAP[type(node.ops[arg])]()
        elif kind == "bool":
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif kind == "not":
            return node.operand
        elif kind == "binop":
            node.op = BINOP[type(node.op)]()
        elif kind == "const":
            node.value = _changed(node.value)
        elif kind in ("never", "always"):
            node.test = ast.Constant(kind == "always")
        elif kind == "return":
            node.value = ast.Constant(None)
        elif kind == "drop":
            return ast.Pass()
        return node


def mutated_code(target: Target, mutant: "Mutant | tuple[str, str] | None"):
    """The target compiled with ``mutant`` applied: a :class:`Mutant`, an (old, new) text replacement or None."""
    text = (ROOT / target.path).read_text()
    if isinstance(mutant, tuple):
        old, new = mutant
        if text.count(old) != 1:
            raise SystemExit(f"--replace: {old!r} occurs {text.count(old)} times in {target.path}; give text "
                             "that occurs exactly once")
        return compile(text.replace(old, new), str(ROOT / target.path), "exec")
    tree = ast.parse(text)
    if mutant is not None:
        tree = ast.fix_missing_locations(_Apply(mutant).visit(copy.deepcopy(tree)))
    return compile(tree, str(ROOT / target.path), "exec")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the target module from mutated code instead of its file."""

    def __init__(self, name: str, path: str, code):
        self.name, self.path, self.code = name, path, code

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        return importlib.util.spec_from_file_location(name, self.path, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)


def _forget(name: str) -> None:
    """Drop ``name`` from the imported modules, with every module of ours that holds something of it
    (a module, function or class; until no more do), so that they import the mutant afresh."""
    doomed = {name}
    while True:
        more = {n for n, m in list(sys.modules.items())
                if n not in doomed and n.startswith(("autograder", "tests")) and _holds(m, doomed)}
        if not more:
            break
        doomed |= more
    for n in doomed:
        sys.modules.pop(n, None)
        parent, _, child = n.rpartition(".")
        if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
            delattr(sys.modules[parent], child)


def _holds(module, doomed: set[str]) -> bool:
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            if value.__name__ in doomed:
                return True
        elif isinstance(value, (type, types.FunctionType)) and getattr(value, "__module__", None) in doomed:
            return True
    return False


def run_tests(target: Target, mutant: "Mutant | tuple[str, str] | None") -> tuple[str, float]:
    """"killed", "survived" or "timeout" for one mutant (None: the unmutated code must pass: "survived")."""
    code = mutated_code(target, mutant)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: import the mutant, run the tests, report through the exit status
        status = 3
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            if mutant is not None:
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            _forget(target.module)
            sys.meta_path.insert(0, _Finder(target.module, str(ROOT / target.path), code))
            import pytest

            select = ["-m", target.select] if target.select else []
            status = int(pytest.main([*target.tests, *PYTEST_ARGS, *select]))
        finally:
            os._exit(status)
    deadline = start + TIMEOUT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    if code == 0:
        return "survived", seconds
    if code in (1, 2):  # tests failed, or the mutant broke their collection
        return "killed", seconds
    raise SystemExit(f"pytest exited {code} on {mutant or 'the unmutated code'}: "
                     f"run `python -m pytest {' '.join(target.tests)}` and fix that first")


def equivalent() -> dict[str, str]:
    """name -> reason, from tools/mutation-equivalent.txt (`name` line, then an indented `why:` line)."""
    known, name = {}, None
    for line in EQUIVALENT.read_text().splitlines() if EQUIVALENT.exists() else []:
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("    why: ") and name:
            known[name] = line.removeprefix("    why: ").strip()
        else:
            name = line.strip()
    return known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Mutation testing of the grader's judge (138 mutants), sanitizer (161) and verdict/comparators "
                    "(326). Each mutant runs the target's fast tests in a forked child: 10 to 40 s a mutant on 2 "
                    "busy cores (measured: judge's first 110 mutants took 50 minutes at load 9-14), so every "
                    "target takes several hours there; --sample 50 gives an estimate in 15-30 minutes, "
                    "--match and --replace one mutant in under a minute; --list is instant.",
        epilog="Survivors not listed in tools/mutation-equivalent.txt make the exit status 1.")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help=f"which targets, of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="run N mutants of each target drawn at random (seeded by --seed), not all: a quicker "
                             "estimate of the score")
    parser.add_argument("--seed", type=int, default=0, help="which sample --sample draws")
    parser.add_argument("--replace", nargs=2, metavar=("OLD", "NEW"),
                        help="run one hand-written mutant instead: the text OLD (once in the target) replaced by NEW")
    parser.add_argument("--from", dest="start", type=int, default=1, metavar="N",
                        help="start at the N-th mutant of each target (to finish a run that was stopped)")
    parser.add_argument("--match", default="", metavar="TEXT",
                        help="run only the mutants whose printed name contains TEXT (to re-run a survivor)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.targets) - set(TARGETS))
    if unknown:
        parser.error(f"no target {', '.join(unknown)}; the targets are {', '.join(TARGETS)}")
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))  # tests/ is a package of the checkout, as under pytest
    known = equivalent()
    survivors, totals = [], {}
    for name in args.targets or list(TARGETS):
        target = TARGETS[name]
        if args.replace:
            if len(args.targets) != 1:
                parser.error("--replace needs exactly one target")
            for module in target.preload:
                __import__(module)
            verdict, seconds = run_tests(target, tuple(args.replace))
            print(f"{target.path}: the mutant {args.replace[0]!r} -> {args.replace[1]!r} was {verdict} "
                  f"({seconds:.1f} s)")
            return 0 if verdict != "survived" else 1
        found = [m for m in mutants(target) if args.match in f"{target.path} | {m.name}"]
        found = found[args.start - 1:]
        if args.sample and args.sample < len(found):
            found = sorted(random.Random(args.seed).sample(found, args.sample), key=found.index)
        if not args.list:
            for module in target.preload:  # once here, not in every child
                __import__(module)
        if args.list:
            for m in found:
                print(f"{target.path} | {m.name}")
            continue
        verdict, seconds = run_tests(target, None)
        if verdict != "survived":
            raise SystemExit(f"the unmutated {target.path} fails its own tests ({verdict}); fix that first")
        print(f"{target.path}: {len(found)} mutants; the unmutated tests take {seconds:.1f} s", flush=True)
        counts = {"killed": 0, "timeout": 0, "equivalent": 0, "survived": 0}
        for i, m in enumerate(found, 1):
            verdict, _ = run_tests(target, m)
            if i % 10 == 0:
                print(f"  {i}/{len(found)} mutants run", flush=True)
            if verdict == "survived" and f"{target.path} | {m.name}" in known:
                verdict = "equivalent"
            counts[verdict] += 1
            if verdict == "survived":
                survivors.append(f"{target.path} | {m.name}")
                print(f"  SURVIVED {target.path} | {m.name}", flush=True)
        killable = len(found) - counts["equivalent"]
        score = (counts["killed"] + counts["timeout"]) / killable if killable else 1.0
        totals[name] = (score, counts)
        print(f"{target.path}: score {score:.1%} ({counts})", flush=True)
    if args.list:
        return 0
    for name, (score, counts) in totals.items():
        print(f"{name}: {score:.1%} of the non-equivalent mutants killed {counts}")
    if survivors:
        print(f"{len(survivors)} mutant(s) survived; kill each with a test, or list it with the reason in "
              f"{EQUIVALENT.relative_to(ROOT)}:", file=sys.stderr)
        for s in survivors:
            print(f"  {s}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
