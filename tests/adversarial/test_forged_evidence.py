"""Does evidence with the right shape but the wrong content ever earn points?

Two levels. The verdict itself (:func:`autograder.checks.core.verdict`) is given forged payloads made
in this process: the right check id with no outcomes or too few, another check's id, malformed
outcomes. Then one notebook 01 is graded through the public ``grade_one``, each exercise forging its
evidence a different way from inside the student's own cells (a deleted function, an empty or short
outcome list, another check's payload, a payload shown twice): each such exercise scores 0, and every
other exercise keeps its full points.
"""
from __future__ import annotations

import sys

import pytest

from autograder.checks import core, nb01
from autograder.engine import Limits
from autograder.grade.submission.grade_one import grade_one, run_reference
from autograder.grade.submission.manual import is_manual_id
from autograder.nbio import exercise_of
from tests.adversarial.evidence import payload, right_decode, right_encode, stub_encode, wrong_encode
from tests.builders import A, right_notebook, solutions, solution_index, solve, write_submission

# one worker runs this module, so its module-scoped fixture (a reference run and a graded notebook) is built once
pytestmark = pytest.mark.xdist_group("test_forged_evidence")
ENCODE = payload(nb01.encode, right_encode)
DECODE = payload(nb01.decode, right_decode)


def verdict(evidence, reference=ENCODE) -> core.Verdict:
    return core.verdict(evidence, reference, seed=0)


# --------------------------------------------------------------------------- the verdict on forged payloads

def test_the_right_evidence_passes():
    """The other tests here fail on forged payloads; this one proves the same route passes honest ones."""
    assert verdict(ENCODE) == core.Verdict(True, "encode: 2 checks passed")


@pytest.mark.parametrize("outcomes, found", [
    ([], 0),  # the right check id and nothing to compare
    (ENCODE["outcomes"][:1], 1),  # the first of two outcomes only
    (ENCODE["outcomes"] * 2, 4),  # every outcome twice
])
def test_the_right_check_id_with_a_wrong_number_of_outcomes_fails(outcomes, found):
    v = verdict({"check": ENCODE["check"], "outcomes": outcomes})
    assert not v.ok and v.attempted
    assert v.message == f"expected 2 results, found {found}"


def test_a_reference_with_a_wrong_number_of_outcomes_fails_too():
    """The count is checked against the cases the grader builds, not only between the two runs."""
    short = {"check": ENCODE["check"], "outcomes": ENCODE["outcomes"][:1]}
    assert not verdict(short, short).ok


@pytest.mark.parametrize("check_id", ["01_tokens_and_ids:decode:visible", "01_tokens_and_ids:encode:hidden",
                                      "02_x:encode:visible", "", None])
def test_evidence_labelled_for_another_check_fails_even_when_its_values_would_pass(check_id):
    v = verdict({"check": check_id, "outcomes": ENCODE["outcomes"]})
    assert v == core.Verdict(False, f"expected results of 01_tokens_and_ids:encode:visible, found {check_id!r}")


def test_the_payloads_of_two_checks_swapped_both_fail():
    assert not verdict(DECODE, ENCODE).ok and not verdict(ENCODE, DECODE).ok


def test_a_payload_without_a_check_id_fails():
    v = verdict({"outcomes": ENCODE["outcomes"]})
    assert not v.ok and "found None" in v.message


MALFORMED = "unreadable results (ValueError: malformed outcome)"


@pytest.mark.parametrize("outcomes, message", [
    (None, "unreadable results (TypeError: 'NoneType' object is not iterable)"),
    ("all passed", MALFORMED),  # a string is read letter by letter, and a letter is not a record
    ([{"value": [1, 0, 5]}, {}], MALFORMED),
    ([{"value": [1, 0, 5]}, {"passed": True}], MALFORMED),
    ([{"value": [1, 0, 5]}, {"raised": "ValueError"}], MALFORMED),
    ([{"value": [1, 0, 5]}, {"raised": [1]}], MALFORMED),
    ([{"value": [1, 0, 5]}, "value"], MALFORMED),  # a record's key, not a record
    ([{"value": [1, 0, 5]}, ["value"]], MALFORMED),
    ([{"value": {"__mystery__": 1}}, {"value": []}], "unreadable results (ValueError: unknown evidence record: "
                                                     "['__mystery__'])"),
])
def test_malformed_outcomes_never_pass(outcomes, message):
    v = verdict({"check": ENCODE["check"], "outcomes": outcomes})
    assert (v.ok, v.message) == (False, message)


@pytest.mark.parametrize("data, outcome", [
    ({"value": [1, 0, 5]}, core.Outcome(value=[1, 0, 5])),
    ({"value": None}, core.Outcome(value=None)),
    ({"raised": ["KeyError", "LookupError", "Exception"], "message": "'dog'"},
     core.Outcome(raised=("KeyError", "LookupError", "Exception"), message="'dog'")),
    ({"raised": ["ValueError"]}, core.Outcome(raised=("ValueError",), message="")),
    ({"raised": ["ValueError"], "message": 3}, core.Outcome(raised=("ValueError",), message="3")),
    ({"raised": [], "value": 1}, core.Outcome(raised=(), message="")),  # "raised" decides, even when empty
])
def test_an_outcome_is_read_as_recorded(data, outcome):
    assert core.Outcome.from_json(data) == outcome


def test_a_reference_with_an_unreadable_check_id_fails_closed():
    for check_id in ("encode", "01_tokens_and_ids:encode", "a:b:c:d"):
        forged = {"check": check_id, "outcomes": ENCODE["outcomes"]}
        v = verdict(forged, forged)
        assert not v.ok and v.message.startswith("unreadable results"), v.message


def test_a_wrong_value_fails_with_the_cases_message():
    assert verdict(payload(nb01.encode, wrong_encode)) == core.Verdict(
        False, 'encode(["the", "dog", "sat"], vocab): item 0 differs (expected 1, got 2); expected [1, 0, 5], '
               'got [2, 1, 6].')


def test_the_stub_fails_as_not_attempted():
    assert verdict(payload(nb01.encode, stub_encode)) == core.Verdict(
        False, "not attempted yet: replace `raise NotImplementedError()` with your code (the function still "
               "raises NotImplementedError).", attempted=False)


def test_the_verdict_imports_the_checks_of_an_assignment_not_imported_yet(monkeypatch):
    """The grader's process has imported no notebook's checks when the first payload arrives."""
    for key in [k for k in core.REGISTRY if k.startswith("01_tokens_and_ids:")]:
        monkeypatch.delitem(core.REGISTRY, key)
    for name in [m for m in sys.modules if m.split(".")[:3] == ["autograder", "checks", "nb01"]]:  # a package
        monkeypatch.delitem(sys.modules, name)
    assert verdict(ENCODE).ok
    assert "01_tokens_and_ids:decode" in core.REGISTRY


def test_the_verdict_takes_a_registered_check_as_it_is(monkeypatch):
    """The registry first: an assignment is imported only when none of its checks is registered (a check
    registered for an assignment that has no module of its own is found, not looked for in a module)."""
    echo = core.Check("99_made_up", "echo",
                      lambda hidden, rng: [core.Case("echo(2)", core.call_with(2), core.const(2))])
    monkeypatch.setitem(core.REGISTRY, "99_made_up:echo", echo)
    evidence = {"check": "99_made_up:echo:visible", "outcomes": [{"value": 2.0}]}
    assert verdict(evidence, evidence) == core.Verdict(True, "echo: 1 checks passed")


def test_judge_is_the_verdict_as_a_pair():
    assert core.judge(ENCODE, ENCODE, seed=0) == (True, "encode: 2 checks passed")
    assert core.judge({"check": ENCODE["check"], "outcomes": []}, ENCODE, seed=0) == (
        False, "expected 2 results, found 0")


# --------------------------------------------------------------------------- forged from the student's cells

ORIGINAL = "_core.REGISTRY['01_tokens_and_ids:{name}']"  # the check as the set-up cell imported it
FORGE_PRELUDE = "from autograder.checks import core as _core\n"

FORGERIES = {
    # the function deleted: its test cells raise NameError
    "encode": None,
    # the right check id, no outcomes at all
    "decode": """
def _empty(fn, hidden=False):
    _core.emit({"check": ORIGINAL.check_id(hidden), "outcomes": []})
check.decode = _empty
""",
    # the right check id, the real outcomes less the last one
    "one_hot": """
def _short(fn, hidden=False):
    sink = []
    _core.SINKS.append(sink.append)
    try:
        ORIGINAL(fn, hidden=hidden)
    finally:
        _core.SINKS.pop()
    _core.emit(dict(sink[0], outcomes=sink[0]["outcomes"][:-1]))
check.one_hot = _short
""",
    # another exercise's real, passing payload shown in this exercise's test cells
    "embedding_lookup": """
def _swapped(fn, hidden=False):
    _core.REGISTRY['01_tokens_and_ids:one_hot'](one_hot, hidden=hidden)
check.embedding_lookup = _swapped
""",
    # the real, passing payload shown twice
    "most_frequent_pair": """
def _twice(fn, hidden=False):
    ORIGINAL(fn, hidden=hidden)
    ORIGINAL(fn, hidden=hidden)
check.most_frequent_pair = _twice
""",
}


def forged_notebook():
    """Notebook 01 answered right, with each exercise of FORGERIES forging its evidence."""
    nb = right_notebook()
    answers = solutions()
    for name, forgery in FORGERIES.items():
        if forgery is None:
            nb.cells[solution_index(nb, name)].source = "# I deleted my function\n"
            continue
        original = ORIGINAL.format(name=name)
        solve(nb, name, answers[name] + "\n" + FORGE_PRELUDE + forgery.replace("ORIGINAL", original))
    return nb


@pytest.fixture(scope="module")
def forged_scores(tmp_path_factory):
    limits = Limits(cell_timeout=30)
    reference = run_reference(A, seed=0, limits=limits, engine="engine")
    path = write_submission(tmp_path_factory.mktemp("forged"), "forger", forged_notebook())
    result = grade_one(path, assignment=A, seed=0, reference=reference, limits=limits)
    assert not result.fatal, result.problems
    return {s.grade_id: s for s in result.scores}


@pytest.mark.grading
def test_each_forged_exercise_scores_zero(forged_scores):
    forged = {gid: s for gid, s in forged_scores.items() if exercise_of(gid) in FORGERIES}
    assert {exercise_of(gid) for gid in forged} == set(FORGERIES), "every forgery has its test cells"
    earned = {gid: (s.points, s.status, s.message) for gid, s in forged.items() if s.points}
    assert not earned, f"forged evidence earned points: {earned}"


@pytest.mark.grading
@pytest.mark.parametrize("gid, status, phrase", [
    ("test_encode", "error", "NameError: name 'encode' is not defined"),
    ("test_encode_hidden", "error", "NameError"),
    ("test_decode", "failed", "expected 1 results, found 0"),
    ("test_decode_hidden", "failed", "expected 2 results, found 0"),
    ("test_one_hot", "failed", "results, found"),
    ("test_embedding_lookup", "failed", "expected results of 01_tokens_and_ids:embedding_lookup:visible, "
                                        "found '01_tokens_and_ids:one_hot:visible'"),
    ("test_most_frequent_pair", "failed", "expected 1 check result(s), found 2"),
    ("test_most_frequent_pair_hidden", "failed", "expected 1 check result(s), found 2"),
])
def test_each_forgery_fails_for_its_own_reason(forged_scores, gid, status, phrase):
    s = forged_scores[gid]
    assert (s.points, s.status) == (0.0, status), s
    assert phrase in s.message, s.message


@pytest.mark.grading
def test_nothing_is_lost_elsewhere(forged_scores):
    """A forgery (or a NameError) in one exercise costs no other exercise a point."""
    # the bug hunt's written why is scored by a person, and the forger left it as released
    honest = {gid: s for gid, s in forged_scores.items()
              if exercise_of(gid) not in FORGERIES and not is_manual_id(gid)}
    assert len(honest) >= 10, sorted(honest)
    short = {gid: (s.points, s.max_points, s.status, s.message) for gid, s in honest.items()
             if s.points != s.max_points or s.status != "passed"}
    assert not short, short
