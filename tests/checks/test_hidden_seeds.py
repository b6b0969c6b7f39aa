"""Do the hidden tests reject every known mistake, and accept every correct answer, under every run seed?

The grader picks a run seed and the hidden inputs follow it, so a hidden test that catches a mistake
under seed 0 only by luck (random logits whose target happens to be the row's largest, say) would give
the points back under another seed. Each known-wrong implementation of tests/checks/test_nbNN.py is
judged here by the hidden check of its exercise under seeds 0 to 20, calling the check directly
(no notebook runs): it must fail under every one of them. Each differently written correct answer must
pass under every one, so that the fixed cases added for the first rule do not reject honest code.

Questions (predictions) are left out: their hidden check compares with one fixed answer, whatever the seed.
"""
from __future__ import annotations

import importlib
import textwrap
from dataclasses import dataclass

import pytest

from autograder.checks import core
from tests.harness import Mistake, notebook

pytestmark = pytest.mark.slow  # about a minute of CPU: every known mistake of 01-09 under 21 seeds
SEEDS = range(21)
NOTEBOOKS = ["01", "02", "03", "04", "05", "06", "07", "08", "09"]


@dataclass(frozen=True)
class Entry:
    """One implementation of one exercise to judge under every seed; ``wrong`` says which verdict is due."""

    assignment: str
    exercise: str
    label: str
    source: str
    wrong: bool

    def __str__(self) -> str:
        return f"{self.assignment[:2]}-{'fails' if self.wrong else 'passes'}_{self.exercise}_{self.label}"


def _module(nn: str):
    return importlib.import_module(f"tests.checks.test_nb{nn}")


def _check(assignment: str, exercise: str) -> core.Check:
    core.checks_module(assignment)
    return core.REGISTRY[f"{assignment}:{exercise}"]


def _is_question(assignment: str, exercise: str) -> bool:
    from autograder.checks.questions import Question

    return isinstance(_check(assignment, exercise), Question)


def _entries() -> list[pytest.param]:
    params = []
    for nn in NOTEBOOKS:
        module = _module(nn)
        items = [Entry(module.A, m.exercise, m.label, m.source, True) for m in module.MISTAKES
                 if isinstance(m, Mistake)]
        items += [Entry(module.A, e, "alternative", s, False) for e, s in module.ALTERNATIVES.items()]
        for entry in items:
            if not _is_question(entry.assignment, entry.exercise):
                params.append(pytest.param(entry, id=str(entry), marks=getattr(pytest.mark, f"nb{nn}")))
    return params


def _implementation(entry: Entry):
    """The entry's function or class, defined among the reference notebook's other definitions."""
    ns = dict(notebook(entry.assignment).base)
    exec(compile(textwrap.dedent(entry.source), f"<{entry}>", "exec"), ns)
    return ns[entry.exercise]


def _verdict(check: core.Check, obj, seed: int) -> str | None:
    """None when ``obj`` passes the hidden cases of run ``seed``, else the failure's message."""
    try:
        for case in check.cases(True, seed):
            case.compare(core.capture(lambda c=case: c.call(obj)), core.capture(case.want), case)
    except core.CheckFailure as failure:
        return str(failure) or type(failure).__name__
    return None


@pytest.mark.parametrize("entry", _entries())
def test_hidden_tests_judge_the_same_under_every_seed(entry: Entry):
    check = _check(entry.assignment, entry.exercise)
    obj = _implementation(entry)
    verdicts = {seed: _verdict(check, obj, seed) for seed in SEEDS}
    if entry.wrong:
        lucky = [seed for seed, failure in verdicts.items() if failure is None]
        assert not lucky, (f"{entry}: the hidden tests of {entry.exercise} miss this mistake under run seeds "
                           f"{lucky} (of {SEEDS.start}-{SEEDS.stop - 1}): add a fixed case that catches it")
    else:
        rejected = {seed: failure for seed, failure in verdicts.items() if failure is not None}
        assert not rejected, (f"{entry}: a correct {entry.exercise} fails the hidden tests under run seeds "
                              f"{sorted(rejected)}: {next(iter(rejected.values()))}")
