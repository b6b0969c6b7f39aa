"""Does the judge score every kind of cell result by the rules, failing closed, without running a notebook?

The cells here are made up (:class:`~autograder.engine.RunResult` by hand); the evidence is real,
recorded in this process from notebook 01's ``encode`` and ``decode`` checks. Each rule is tested by a
case that a broken rule would score differently: a raised cell earning points, a missing or extra
payload ignored, one passed test making an exercise passed.
"""
from __future__ import annotations

import itertools
from typing import get_args

import numpy as np
import pytest

from autograder.checks import core, nb01
from autograder.grade.submission import judge
from autograder.engine import CellResult, RunResult
from autograder.grade.submission.sanitize import Plan, SourceTest
from tests.adversarial.evidence import (display, payload, right_decode, right_encode, stub_encode,
                                        wrong_encode)

SEED = 0
ENCODE = payload(nb01.encode, right_encode)
DECODE = payload(nb01.decode, right_decode)
WRONG = payload(nb01.encode, wrong_encode)
STUB = payload(nb01.encode, stub_encode)


def source_test(gid: str = "test_encode", points: float = 2.0) -> SourceTest:
    return SourceTest(gid, None, "check.encode(encode)", "check.encode(encode)", {}, points, "encode")


def cell(status: str = "ok", *outputs: dict, detail: str = "", index: int = 0) -> CellResult:
    return CellResult(index, status, list(outputs), detail=detail)


def error_output(ename: str = "NameError", evalue: str = "name 'encode' is not defined") -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}


def one(c: CellResult | None, reference: list | None = None, points: float = 2.0) -> judge.TestScore:
    return judge._score_one(c, source_test(points=points), [ENCODE] if reference is None else reference, SEED)


# --------------------------------------------------------------------------- one test cell

def test_a_cell_whose_evidence_matches_the_reference_earns_exactly_its_points():
    s = one(cell("ok", display(ENCODE)), points=2.5)
    assert (s.grade_id, s.points, s.max_points, s.status) == ("test_encode", 2.5, 2.5, "passed")
    assert s.message == "encode: 2 checks passed" and s.mistake == ""
    assert s.to_json() == {"grade_id": "test_encode", "points": 2.5, "max_points": 2.5, "status": "passed",
                           "message": "encode: 2 checks passed", "mistake": ""}


@pytest.mark.parametrize("status, detail, want_status, want_message", [
    ("timeout", "", "timeout", "the test was interrupted: it ran too long (an infinite loop?)"),
    ("timeout", "interrupted after 60 s", "timeout", "interrupted after 60 s"),
    ("crashed", "", "error", "the kernel died while running this test"),
    ("crashed", "killed: out of memory", "error", "killed: out of memory"),
    ("skipped", "", "missing", "this test did not run"),
    ("skipped", "not run: could not get this far", "missing", "not run: could not get this far"),
])
def test_a_cell_that_did_not_finish_earns_nothing_even_with_the_right_evidence(status, detail, want_status,
                                                                               want_message):
    s = one(cell(status, display(ENCODE), detail=detail))
    assert (s.points, s.max_points, s.status) == (0.0, 2.0, want_status)
    assert s.message == want_message


def test_a_cell_that_raised_earns_nothing_even_after_showing_the_right_evidence():
    s = one(cell("error", display(ENCODE), error_output()))
    assert (s.points, s.status) == (0.0, "error")
    assert s.message == "NameError: name 'encode' is not defined"


def test_an_error_output_in_a_cell_reported_ok_still_earns_nothing():
    """The engine's status and the outputs are two witnesses: either one saying "raised" is enough."""
    s = one(cell("ok", display(ENCODE), error_output("ValueError", "\x1b[31mbad\x1b[0m")))
    assert (s.points, s.status, s.message) == (0.0, "error", "ValueError: bad")


def test_an_error_status_without_an_error_output_still_says_the_cell_raised():
    s = one(cell("error", display(ENCODE)))
    assert (s.points, s.status, s.message) == (0.0, "error", "the cell raised an error")


@pytest.mark.parametrize("output, message", [
    ({"output_type": "error"}, "Error:"),  # a kernel's error record with no name and no value
    ({"output_type": "error", "ename": "KeyboardInterrupt"}, "KeyboardInterrupt:"),
    ({"output_type": "error", "evalue": "no name"}, "Error: no name"),
])
def test_an_error_output_without_a_name_or_value_is_still_named(output, message):
    s = one(cell("error", output))
    assert (s.points, s.status, s.message) == (0.0, "error", message)


def test_an_unknown_cell_status_earns_nothing():
    s = one(cell("finished", display(ENCODE)))
    assert (s.points, s.status) == (0.0, "error")


def test_a_test_cell_that_never_ran_is_missing():
    s = one(None)
    assert (s.points, s.max_points, s.status, s.message) == (0.0, 2.0, "missing", "this test did not run")


def test_a_test_without_reference_evidence_is_missing_even_when_the_student_passed():
    s = judge._score_one(cell("ok", display(ENCODE)), source_test(), None, SEED)
    assert (s.points, s.status, s.message) == (0.0, "missing", "no reference evidence for this test")


@pytest.mark.parametrize("shown, reference, found", [
    ([], [ENCODE], 0),  # a cell that printed nothing (the check call removed, or caught)
    ([ENCODE, ENCODE], [ENCODE], 2),  # the right payload shown twice
    ([ENCODE, DECODE], [ENCODE], 2),  # an extra payload of another check
    ([ENCODE], [ENCODE, ENCODE], 1),  # one call of two
])
def test_too_few_or_too_many_payloads_earn_nothing(shown, reference, found):
    s = one(cell("ok", *map(display, shown)), reference)
    assert (s.points, s.status) == (0.0, "failed")
    assert s.message == f"expected {len(reference)} check result(s), found {found}"


def test_two_matching_payloads_earn_the_points_and_say_both():
    s = one(cell("ok", display(ENCODE), display(DECODE)), [ENCODE, DECODE])
    assert (s.points, s.status) == (2.0, "passed")
    assert s.message == "encode: 2 checks passed; decode: 1 checks passed"


def test_payloads_in_the_wrong_order_earn_nothing():
    s = one(cell("ok", display(DECODE), display(ENCODE)), [ENCODE, DECODE])
    assert (s.points, s.status) == (0.0, "failed")
    assert "expected results of 01_tokens_and_ids:encode:visible" in s.message


def test_one_failing_payload_of_two_earns_nothing():
    s = one(cell("ok", display(ENCODE), display(WRONG)), [ENCODE, ENCODE])
    assert (s.points, s.status) == (0.0, "failed")


def test_a_wrong_answer_fails_with_the_check_message():
    s = one(cell("ok", display(WRONG)))
    assert (s.points, s.status) == (0.0, "failed")
    assert s.message.startswith('encode(["the", "dog", "sat"], vocab): item 0 differs')


def test_the_stub_is_not_attempted():
    s = one(cell("ok", display(STUB)))
    assert (s.points, s.status) == (0.0, "not attempted")
    assert "NotImplementedError" in s.message


@pytest.mark.parametrize("forged", ["encode: 2 checks passed", 1, None, ["check", "outcomes"]])
def test_a_payload_that_is_not_a_record_earns_nothing(forged):
    """It is read as an empty record: no check id, so not the results the test asked for."""
    s = one(cell("ok", display(forged)))
    assert (s.points, s.status) == (0.0, "failed")
    assert s.message == "expected results of 01_tokens_and_ids:encode:visible, found None"


def test_the_mistake_a_failed_check_recognised_is_kept_for_the_class_report():
    mistake = "the message of a known mistake"
    check = core.Check("01_tokens_and_ids", "encode", lambda hidden, rng: [core.Case(
        "encode([])", core.call_with([], {}), core.const([]),
        core.equal(), hints=[lambda got, want: mistake])])
    wrong = {"check": ENCODE["check"], "outcomes": [{"value": [7]}]}
    right = {"check": ENCODE["check"], "outcomes": [{"value": []}]}
    saved = core.REGISTRY["01_tokens_and_ids:encode"]
    core.REGISTRY["01_tokens_and_ids:encode"] = check
    try:
        s = one(cell("ok", display(wrong)), [right])
    finally:
        core.REGISTRY["01_tokens_and_ids:encode"] = saved
    assert (s.points, s.status, s.mistake) == (0.0, "failed", mistake)
    assert s.message.startswith(mistake)  # the likely cause first: nbgrader's Validate keeps ~100 characters


def test_a_score_is_saved_and_read_back_with_its_prediction():
    prediction = core.Prediction("(80, 80)", False, "rows")
    score = judge.TestScore("q_shape", 1.0, 1.0, "passed", "recorded", prediction=prediction)
    saved = {"grade_id": "q_shape", "points": 1.0, "max_points": 1.0, "status": "passed", "message": "recorded",
             "mistake": "", "prediction": {"answer": "(80, 80)", "right": False, "why": "rows"}}
    assert score.to_json() == saved
    assert judge.TestScore.from_json(saved) == score


def test_a_score_saved_without_a_prediction_reads_back_without_one():
    saved = {"grade_id": "test_encode", "points": 0.0, "max_points": 2.0, "status": "failed", "message": "m",
             "mistake": "off by one"}
    assert judge.TestScore.from_json(saved) == judge.TestScore("test_encode", 0.0, 2.0, "failed", "m", "off by one")
    assert judge.TestScore.from_json(saved).to_json() == saved, "no prediction key is written for a plain test"


# --------------------------------------------------------------------------- what a cell displayed

def test_evidence_is_read_from_displays_and_results_only():
    outputs = [{"output_type": "stream", "name": "stdout", "text": "hi"},
               display(ENCODE),
               {"output_type": "execute_result", "data": {core.EVIDENCE_MIME: DECODE}, "metadata": {}},
               {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}},
               {"output_type": "display_data", "data": None},
               {"output_type": "stream", "data": {core.EVIDENCE_MIME: WRONG}},
               "not an output"]
    assert judge.evidence_of(outputs) == [ENCODE, DECODE]


def test_the_error_message_is_the_first_error_without_colour_and_cut_to_500_characters():
    outputs = [{"output_type": "stream", "text": "x"}, error_output("KeyError", "\x1b[1m" + "k" * 900),
               error_output("ValueError", "second")]
    message = judge._error(outputs)
    assert message == "KeyError: " + "k" * 490


# --------------------------------------------------------------------------- a whole run

TESTS = [source_test("test_encode", 1.0), source_test("test_decode", 2.0), source_test("test_never_run", 3.0)]
REFERENCE = {"test_encode": [ENCODE], "test_decode": [DECODE], "test_never_run": [ENCODE]}


def run_of(*cells: CellResult) -> RunResult:
    return RunResult(list(cells), isolation="made up")


def test_score_gives_one_score_per_source_test_in_source_order_from_the_cell_at_its_position():
    plan = Plan(["x"] * 5, {3: "test_decode", 1: "test_encode"})
    run = run_of(cell("ok", index=0), cell("ok", display(ENCODE), index=1), cell("ok", index=2),
                 cell("ok", display(DECODE), index=3), cell("ok", display(ENCODE), index=4))
    scores = judge.score(run, plan, TESTS, REFERENCE, seed=SEED)
    assert [(s.grade_id, s.points, s.status) for s in scores] == [
        ("test_encode", 1.0, "passed"), ("test_decode", 2.0, "passed"), ("test_never_run", 0.0, "missing")]


def test_score_reads_each_test_from_its_own_position_not_its_neighbour():
    plan = Plan(["x"] * 2, {0: "test_encode", 1: "test_decode"})
    run = run_of(cell("ok", display(DECODE), index=0), cell("ok", display(ENCODE), index=1))
    scores = judge.score(run, plan, TESTS[:2], REFERENCE, seed=SEED)
    assert [(s.points, s.status) for s in scores] == [(0.0, "failed"), (0.0, "failed")]


def test_a_tampered_test_is_graded_from_the_source_and_says_so():
    plan = Plan(["x"] * 2, {0: "test_encode", 1: "test_decode"}, tampered={"test_decode": "its code was edited"})
    run = run_of(cell("ok", display(ENCODE), index=0), cell("ok", display(DECODE), index=1))
    scores = judge.score(run, plan, TESTS[:2], REFERENCE, seed=SEED)
    assert [(s.points, s.status) for s in scores] == [(1.0, "passed"), (2.0, "tampered")]
    assert scores[1].message == ("test cell changed (its code was edited); graded from the original. "
                                 "decode: 1 checks passed")


def test_a_test_cell_without_a_cell_result_is_missing():
    plan = Plan(["x"], {0: "test_encode"})
    scores = judge.score(run_of(), plan, TESTS[:1], REFERENCE, seed=SEED)
    assert [(s.points, s.status) for s in scores] == [(0.0, "missing")]


# --------------------------------------------------------------------------- the reference's own run

def test_the_reference_evidence_is_every_test_cells_payloads():
    plan = Plan(["x"] * 3, {0: "test_encode", 2: "test_decode"})
    run = run_of(cell("ok", display(ENCODE), index=0), cell("ok", index=1), cell("ok", display(DECODE), index=2))
    assert judge.reference_evidence(run, plan, seed=SEED) == {"test_encode": [ENCODE], "test_decode": [DECODE]}


@pytest.mark.parametrize("cells, phrase", [
    ([], "test cell test_encode did not pass (did not run)"),
    ([cell("error", error_output("ImportError", "no torch"), index=0)],
     "did not pass (error: ImportError: no torch); the first cell that failed is cell 0"),
    ([cell("ok", index=0)], "recorded no evidence"),
    ([cell("ok", display({"check": "01_tokens_and_ids:encode:visible", "outcomes": []}), index=0)],
     "does not pass against itself: expected 2 results, found 0"),
])
def test_a_reference_that_fails_its_own_tests_stops_grading_with_the_reason(cells, phrase):
    with pytest.raises(judge.ReferenceRunError, match="the solution's test cell test_encode") as raised:
        judge.reference_evidence(run_of(*cells), Plan(["x"], {0: "test_encode"}), seed=SEED)
    assert phrase in str(raised.value)


def test_the_reference_error_names_the_first_cell_that_failed_and_the_runs_problems():
    printed = {"output_type": "stream", "name": "stdout", "text": "fine"}
    run = RunResult([cell("ok", printed, index=0), cell("ok", printed, error_output("OSError", "disk"), index=1),
                     cell("skipped", detail="not run", index=2)], isolation="x", problems=["out of memory"])
    with pytest.raises(judge.ReferenceRunError) as raised:
        judge.reference_evidence(run, Plan(["x"] * 3, {2: "test_encode"}), seed=SEED)
    assert str(raised.value) == ("the solution's test cell test_encode did not pass (skipped: not run); "
                                 "the first cell that failed is cell 1 (ok: OSError: disk); out of memory")


def test_the_reference_error_lists_every_problem_of_the_run():
    run = RunResult([cell("skipped", detail="not run", index=0)], isolation="x",
                    problems=["out of memory", "the time budget is spent"])
    with pytest.raises(judge.ReferenceRunError) as raised:
        judge.reference_evidence(run, Plan(["x"], {0: "test_encode"}), seed=SEED)
    assert str(raised.value).endswith("(skipped: not run); out of memory; the time budget is spent")


def seeded_check() -> core.Check:
    """A check whose hidden case draws its input from the run's seed, as hidden tests do, and whose predicate
    accepts only the answer for that input: evidence judged with another seed does not fit."""
    def build(hidden, rng):
        drawn = int(rng.integers(10**9))
        return [core.Case("a draw", core.call_with(), core.const(drawn),
                          core.predicate(lambda got, want: None if got == drawn else "not this seed's draw"))]
    return core.Check("01_tokens_and_ids", "encode", build)


def seeded_payload(seed: int) -> dict:
    """What the seeded check records for the right answer under ``seed`` (the draw, computed here from the seed)."""
    check_id = "01_tokens_and_ids:encode:hidden"
    draw = int(np.random.default_rng(core.seed_for(check_id, seed)).integers(10**9))
    return {"check": check_id, "outcomes": [{"value": draw}]}


def test_the_reference_is_judged_with_the_runs_seed(monkeypatch):
    monkeypatch.setitem(core.REGISTRY, "01_tokens_and_ids:encode", seeded_check())
    run = run_of(cell("ok", display(seeded_payload(7)), index=0))
    plan = Plan(["x"], {0: "test_encode"})
    assert judge.reference_evidence(run, plan, seed=7) == {"test_encode": [seeded_payload(7)]}
    with pytest.raises(judge.ReferenceRunError, match="not this seed's draw"):
        judge.reference_evidence(run, plan, seed=8)


def test_a_student_is_judged_with_the_runs_seed(monkeypatch):
    monkeypatch.setitem(core.REGISTRY, "01_tokens_and_ids:encode", seeded_check())
    run = run_of(cell("ok", display(seeded_payload(7)), index=0))
    plan = Plan(["x"], {0: "test_encode"})
    reference = {"test_encode": [seeded_payload(7)]}
    assert [(s.points, s.status) for s in judge.score(run, plan, TESTS[:1], reference, seed=7)] == [(1.0, "passed")]
    assert [s.status for s in judge.score(run, plan, TESTS[:1], reference, seed=8)] == ["failed"]


# --------------------------------------------------------------------------- a question's prediction

class Predicted(core.Check):
    """A check that records the learner's prediction beside a passing verdict, as a question does: any
    well-formed answer passes, and whether it was right is kept."""

    def recorded(self, got, want):
        answer, truth = got[0].decoded, want[0].decoded
        return core.Prediction(str(answer), answer == truth, "" if answer == truth else "the reason")


def predicted_payload(answer) -> dict:
    return {"check": "01_tokens_and_ids:decode:visible", "outcomes": [{"value": answer}]}


@pytest.mark.parametrize("answer, message, prediction", [
    (3, "decode: prediction recorded (right)", core.Prediction("3", True, "")),
    (4, "decode: prediction recorded (wrong)", core.Prediction("4", False, "the reason")),
])
def test_a_predictions_points_are_for_its_form_and_its_answer_is_kept(monkeypatch, answer, message, prediction):
    question = Predicted("01_tokens_and_ids", "decode", lambda hidden, rng: [
        core.Case("your prediction", core.call_with(), core.const(3), core.predicate(lambda got, want: None))])
    monkeypatch.setitem(core.REGISTRY, "01_tokens_and_ids:decode", question)
    s = one(cell("ok", display(ENCODE), display(predicted_payload(answer))), [ENCODE, predicted_payload(3)])
    assert (s.points, s.status, s.prediction) == (2.0, "passed", prediction)
    assert s.message == f"encode: 2 checks passed; {message}"
    assert one(cell("ok", display(ENCODE))).prediction is None, "a plain check records no prediction"


# --------------------------------------------------------------------------- an exercise's status

RANK = {"failed": 0, "error": 1, "timeout": 2, "missing": 3, "tampered": 4, "manual": 5, "not attempted": 6,
        "passed": 7}  # manual: a written answer a person scores, its own exercise (why_...)


def expected_status(statuses: frozenset[str]) -> str:
    """The rule in words: every test passed -> passed; only stubs and stub-passes -> not attempted;
    otherwise the most serious problem, a failed check before an error before a timeout..."""
    if statuses == {"passed"}:
        return "passed"
    if statuses and statuses - {"passed"} == {"not attempted"}:
        return "not attempted"
    problems = statuses - {"passed", "not attempted"}
    return min(problems, key=RANK.__getitem__) if problems else "failed"


ALL_SETS = [frozenset(c) for n in range(1, len(get_args(judge.Status)) + 1)
            for c in itertools.combinations(get_args(judge.Status), n)]


@pytest.mark.parametrize("statuses", ALL_SETS, ids=lambda s: "+".join(sorted(s)))
def test_exercise_status_truth_table(statuses):
    for order in (sorted(statuses), sorted(statuses, reverse=True)):
        assert judge.exercise_status(order) == expected_status(statuses)
        assert judge.exercise_status(order + order) == expected_status(statuses), "duplicates change nothing"


@pytest.mark.parametrize("statuses, want", [
    (["passed", "passed"], "passed"),
    (["passed", "failed"], "failed"),
    (["passed", "not attempted"], "not attempted"),
    (["not attempted", "failed"], "failed"),
    (["error", "failed"], "failed"),
    (["timeout", "error"], "error"),
    (["missing", "timeout"], "timeout"),
    (["tampered", "missing"], "missing"),
    (["tampered", "passed"], "tampered"),
    (["tampered", "not attempted"], "tampered"),
    ([], "failed"),  # an exercise with no test cannot pass
])
def test_exercise_status_examples_written_out(statuses, want):
    assert judge.exercise_status(statuses) == want
    assert judge.exercise_status(iter(statuses)) == want, "any iterable, read once"


def test_the_status_lists_agree():
    assert sorted(get_args(judge.Status)) == sorted(judge.WORST_FIRST) == sorted(RANK)


def test_every_checks_cases_are_built_without_torch():
    """Every verdict builds its check's cases in the grader's process: its ``want`` may use torch when it runs
    in a notebook, but building a case must not import it (1.7 core-seconds, once per class, on the grader's
    one core before the first result: notebook 04's softmax cases once did)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from autograder.checks.registry import REGISTRY, checks_module\n"
        "from autograder import paths\n"
        "for a in paths.assignments():\n"
        "    checks_module(a)\n"
        "assert 'torch' not in sys.modules, 'importing the checks imported torch'\n"
        "for key, check in sorted(REGISTRY.items()):\n"
        "    for hidden in (False, True):\n"
        "        check.cases(hidden, 7)\n"
        "        assert 'torch' not in sys.modules, f'building the cases of {key} (hidden={hidden}) imported torch'\n"
        "print(len(REGISTRY))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout) > 0  # the checks were there to build
