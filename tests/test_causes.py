"""Is a failure traced to the earlier exercise that caused it, in the learner's check and in the grader?

A softmax without the max subtraction makes softmax_temperature and sample_token fail too; the learner
should read "your softmax fails its own check: fix it first" before anything about the later exercise,
and the class report should count "caused by softmax" instead of "no known mistake recognised".
"""
from __future__ import annotations

import numpy as np
import pytest

from autograder.checks import causes, core
from autograder.checks import nb04 as check
from autograder.grade.submission.judge import TestScore as Score, trace_causes  # aliased: pytest would try to collect a Test* class

pytestmark = pytest.mark.nb04


def softmax(z, axis=-1):  # the classic mistake: no max subtraction, so exp(1000) overflows
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def stable_softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return softmax(np.asarray(logits, dtype=float) / temperature)


def softmax_temperature_unguarded(logits, temperature):  # and a mistake of its own: no check of tau > 0
    return softmax(np.asarray(logits, dtype=float) / temperature)


@pytest.fixture
def local(monkeypatch):
    monkeypatch.setattr(core.SETTINGS, "mode", "local")


def test_a_check_that_fails_because_an_earlier_exercise_fails_says_so_first(local, capsys):
    check.softmax_temperature(softmax_temperature)  # the visible cases are small logits: it passes them
    assert "passed" in capsys.readouterr().out
    with pytest.raises(core.CheckFailure) as failure:
        check.softmax_temperature(softmax_temperature_unguarded)
    message = str(failure.value)
    assert message.startswith("Your softmax fails its own check: fix it first, and this one may pass as it is.")
    assert "fix it first" in message[:100]  # nbgrader's Validate shows about 100 characters
    assert "subtract the max" in message.splitlines()[0]  # softmax's own check's words, whole
    assert failure.value.mistake == causes.mistake_of("softmax")


def test_the_same_exercise_on_a_right_softmax_passes_and_blames_nothing(local, capsys, monkeypatch):
    monkeypatch.setitem(softmax_temperature.__globals__, "softmax", stable_softmax)
    wrong = lambda logits, temperature: stable_softmax(np.asarray(logits, dtype=float) * temperature)  # noqa: E731
    with pytest.raises(core.CheckFailure) as failure:
        check.softmax_temperature(wrong)  # its own mistake: no earlier exercise to blame
    assert "fails its own check" not in str(failure.value)


def test_names_used_finds_the_globals_a_function_and_a_class_read():
    used = causes.names_used(softmax_temperature)
    assert used["softmax"] is softmax and "temperature" not in used

    class Layer:
        def forward(self, z):
            return stable_softmax(z)
    assert causes.names_used(Layer) == {"stable_softmax": stable_softmax}
    assert causes.names_in_source("def f(z):\n    return softmax(z / t)\n") >= {"softmax", "t"}
    assert causes.names_in_source("def f(:\n") == set()  # a SyntaxError names nothing


def score(grade_id: str, status: str, message: str = "", mistake: str = "") -> Score:
    return Score(grade_id, 0.0 if status != "passed" else 1.0, 1.0, status, message, mistake)


SOURCES = {
    "softmax": "def softmax(z, axis=-1):\n    e = np.exp(z)\n    return e / e.sum(axis=axis, keepdims=True)\n",
    "softmax_temperature": "def softmax_temperature(logits, t):\n    return softmax(logits / t)\n",
    "sample_token": "def sample_token(logits, rng, t=1.0):\n    p = softmax_temperature(logits, t)\n"
                    "    return int(rng.choice(len(p), p=p))\n",
    "entropy": "def entropy(p):\n    return float(-(p * np.log(p)).sum())\n",
}


def test_an_attribute_of_the_same_name_is_not_a_call_to_the_exercise():
    """04's bug hunt calls F.cross_entropy: that is torch's, not the learner's cross_entropy, so a failing
    cross_entropy must not be named as its cause."""
    import torch.nn.functional as F  # noqa: F401 - read by the function below, as the notebook's cell does

    namespace = {"F": F, "cross_entropy": lambda logits, targets: 0.0}
    exec("def next_token_loss(logits, targets):\n    return F.cross_entropy(logits, targets)\n", namespace)
    exec("def total(logits, targets):\n    return cross_entropy(logits, targets) + 1\n", namespace)
    assert set(causes.names_used(namespace["next_token_loss"])) == {"F"}
    assert set(causes.names_used(namespace["total"])) == {"cross_entropy"}


def test_the_grader_traces_a_failed_hidden_test_to_the_failing_exercise_it_calls():
    scores = [score("test_softmax", "passed"), score("test_softmax_hidden", "failed", "nan at row 0"),
              score("test_softmax_temperature", "passed"),
              score("test_softmax_temperature_hidden", "failed", "got nan"),
              score("test_sample_token_hidden", "error", "ValueError: probabilities contain NaN"),
              score("test_entropy_hidden", "failed", "wrong sign", mistake="the sign of the log"),
              score("test_entropy", "passed")]
    trace_causes(scores, SOURCES)
    by_id = {s.grade_id: s for s in scores}
    temp = by_id["test_softmax_temperature_hidden"]
    assert temp.message.startswith(causes.cause_sentence("softmax")) and temp.message.endswith("got nan")
    assert temp.mistake == "caused by softmax, which fails its own check"
    sample = by_id["test_sample_token_hidden"]  # traced through softmax_temperature to the root, softmax
    assert sample.mistake == "caused by softmax, which fails its own check"
    assert sample.message.startswith("Your softmax fails its own check (this calls it through softmax_temperature): "
                                     "fix it first")
    assert by_id["test_softmax_hidden"].message == "nan at row 0"  # the cause itself blames nobody
    assert by_id["test_entropy_hidden"].mistake == "the sign of the log"  # calls nothing that failed
    assert by_id["test_softmax_temperature"].message == ""  # a passed test is left alone


def test_a_known_mistake_stays_the_mistake_and_the_cause_still_comes_first():
    scores = [score("test_softmax", "failed", "nan"),
              score("test_softmax_temperature", "failed", "multiplied by t", mistake="multiplied by the temperature")]
    trace_causes(scores, SOURCES)
    assert scores[1].mistake == "multiplied by the temperature"
    assert scores[1].message.startswith("Your softmax fails its own check")


def test_a_cycle_of_failing_exercises_ends_instead_of_looping():
    cycle = {"a": "def a():\n    return b()\n", "b": "def b():\n    return a()\n"}
    scores = [score("test_a", "failed", "x"), score("test_b", "failed", "y")]
    trace_causes(scores, cycle)
    assert scores[0].mistake == "caused by b, which fails its own check"
    assert scores[1].mistake == "caused by a, which fails its own check"


def test_an_exercise_not_in_the_sources_or_calling_only_itself_is_never_its_own_cause():
    recursive = {"softmax": "def softmax(z):\n    return softmax(z)\n"}
    scores = [score("test_softmax", "failed", "boom"), score("test_unknown", "failed", "x")]
    trace_causes(scores, recursive)
    assert [s.message for s in scores] == ["boom", "x"] and not any(s.mistake for s in scores)


def test_the_class_report_and_the_feedback_page_name_the_cause_not_no_known_mistake():
    from autograder.grade.output import classreport, feedback
    from autograder.grade.submission.results import SubmissionResult

    A = "04_softmax_and_probability"

    def final(student: str) -> SubmissionResult:
        scores = [score("test_softmax", "passed"), score("test_softmax_hidden", "failed", "nan at row 0"),
                  score("test_softmax_temperature", "passed"),
                  score("test_softmax_temperature_hidden", "failed", "got nan")]
        trace_causes(scores, SOURCES)
        return SubmissionResult.from_json({"student_id": student, "assignment_id": A, "problems": [],
                                      "scores": [{"grade_id": s.grade_id, "points": s.points, "max_points": s.max_points,
                                                  "status": s.status, "message": s.message, "mistake": s.mistake}
                                                 for s in scores]})

    page = classreport.page([final("ann"), final("bob")])
    assert "caused by softmax, which fails its own check" in page
    import re
    section = re.search(r'<h4 data-exercise="softmax_temperature">.*?(?=<h4|</section>)', page, re.S).group(0)
    assert "caused by softmax" in section and "no known mistake recognised" not in section, section
    mine = feedback.page(final("ann"))  # a hidden test's message stays hidden; its cause is said
    assert "Your <code>softmax</code> fails its own check: fix it first" in mine and "caused by softmax" in mine
    assert causes.traced_to(causes.mistake_of("softmax")) == "softmax" and causes.traced_to("the sign of the log") == ""
