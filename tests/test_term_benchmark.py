"""benchmarks/term.py's pure parts, without grading anything: its options, the term's mix of students, the
extrapolation's and the time limits' arithmetic, what a saved result says, and the tables it prints from made-up
numbers."""
from __future__ import annotations

import json
import math

import pytest

from benchmarks import common, term, term_class, term_figures, term_measure, term_split, term_tables


def test_quick_means_four_students_and_fifty_is_the_default():
    assert term.parse_args(["--quick", "--seed", "1"]).students == term.QUICK_STUDENTS
    assert term.parse_args(["--seed", "1"]).students == 50


@pytest.mark.parametrize("argv", [["--quick", "--students", "9"], ["--students", "0"], ["--runs", "1"],
                                  ["--repeat", "0"], ["--assignments", "99_nothing"], ["--stock-students", "0"],
                                  ["--timeout-factor", "0"],
                                  ["--assignments", "01_tokens_and_ids",
                                   "--stock-assignments", "02_shapes_and_matmul"]])
def test_are_bad_options_refused(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        term.parse_args(argv)
    assert exit_.value.code == 2
    assert "error" in capsys.readouterr().err


def test_does_the_stock_sample_default_to_01_to_04_of_the_term():
    args = term.parse_args(["--seed", "1"])
    assert [a[:2] for a in args.stock_assignments] == ["01", "02", "03", "04"]
    assert len(args.assignments) == 10


@pytest.mark.parametrize("n", [0, 1, 3, 4, 50, 97, 100, 101, 500])
def test_does_allocate_hand_out_exactly_n(n):
    counts = term_class.allocate(n, term_class.PER_HUNDRED, at_least_one=True)
    assert sum(counts.values()) == n and min(counts.values()) >= 0
    if n >= len(term_class.PER_HUNDRED):
        assert min(counts.values()) >= 1


def test_are_a_hundred_submissions_of_a_notebook_the_stated_mix():
    assert term_class.allocate(98, term_class.PER_HUNDRED) == term_class.PER_HUNDRED


def test_is_a_term_slow_thrice_and_loops_and_crashes_once_per_hundred_submissions():
    students = [f"s{i:03d}" for i in range(50)]
    assignments = [f"{i:02d}_nb" for i in range(1, 11)]
    kinds = term_class.term_kinds(students, assignments)
    assert len(kinds) == 500
    for kind, each in (("slow", 15), ("looping", 5), ("crashing", 5)):
        where = [a for (s, a), k in kinds.items() if k == kind]
        assert len(where) == each and len(set(where)) == min(each, 10)  # spread over the notebooks
    right = term_class.allocate(50, term_class.PER_HUNDRED)["right"]
    assert sum(k == "right" for k in kinds.values()) == 10 * right - 25  # they were right ones
    assert kinds == term_class.term_kinds(students, assignments)  # the same term every time


def test_does_even_a_tiny_term_have_one_slow_one_looping_and_one_crashing():
    kinds = term_class.term_kinds(["a", "b"], ["01_x", "02_y"])
    assert sorted(k for k in kinds.values() if k in term_class.PER_TERM) == ["crashing", "looping", "slow"]


def test_are_the_per_term_kinds_interleaved():
    # ceil(3.03) = 4 slow, ceil(1.01) = 2 of each other kind
    assert term_class.per_term_order(101) == ["slow", "looping", "crashing"] * 2 + ["slow"] * 2
    assert term_class.per_term_order(1) == ["slow", "looping", "crashing"]


def test_are_comments_stripped_but_strings_kept():
    source = "# a note\ndef f(x):  # why\n    return '#not a comment'\n"
    assert term_class.strip_comments(source) == "def f(x):\n    return '#not a comment'\n"
    assert term_class.strip_comments("%timeit f(\n") == "%timeit f(\n"  # does not tokenize: unchanged


def test_does_each_style_keep_the_code_and_drop_the_markers():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x  # the answer\n    ### END SOLUTION\n"
    assert term_class.restyle(source, 0, "f") == source
    styled = [term_class.restyle(source, s, "f") for s in range(1, len(term_class.STYLES))]
    assert all("BEGIN SOLUTION" not in s and "return x" in s for s in styled)
    assert "# the answer" not in styled[1] and "print('f written')" in styled[2]


def test_does_the_extrapolation_follow_its_formula():
    ex = term_figures.Extrapolation.of_run(total_cpu=1010.0, once=10.0, submissions=500, startup=3.0, cores=2)
    assert ex.per_submission == pytest.approx(2.0)
    assert ex.wall(500) == pytest.approx(3.0 + (10.0 + 1000.0) / 2)
    assert ex.wall(5000) == pytest.approx(3.0 + (10.0 + 10000.0) / 2)
    assert ex.effective_cores(wall=1013.0, submissions=500) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        term_figures.Extrapolation.of_run(total_cpu=1.0, once=0.0, submissions=0, startup=0.0)


def test_are_shared_costs_spread_over_every_submission():
    profile = {"submissions": {"a": 2, "b": 2}, "unattributed": 0.4,
               "phases": {"": {"start-up": 1.6}, "a": {"cells": 2.0, "reference": 0.4}, "b": {"cells": 4.0}}}
    assert term_figures.per_notebook(profile) == pytest.approx({"a": 1.2 + 0.5, "b": 2.0 + 0.5})
    assert term_figures.once_cpu(profile) == pytest.approx(1.6 + 0.4)  # start-up and references: once a run


def test_is_a_notebooks_cpu_shared_by_wall_seconds():
    profile = {"submissions": {"a": 2, "b": 1}, "unattributed": 0.0,
               "phases": {"": {"start-up": 0.3}, "a": {"cells": 4.0}, "b": {"cells": 1.0}}}
    cpu = term_figures.submission_cpu(profile, {("s1", "a"): 3.0, ("s2", "a"): 1.0, ("s1", "b"): 0.5})
    assert cpu == pytest.approx({("s1", "a"): 3.1, ("s2", "a"): 1.1, ("s1", "b"): 1.1})
    assert term_figures.mean_of(cpu, [("s1", "a"), ("s2", "a")]) == pytest.approx(term_figures.per_notebook(profile)["a"])
    assert math.isnan(term_figures.mean_of(cpu, [("nobody", "a")]))


def test_does_the_notebook_table_print_made_up_numbers():
    rows = [term_tables.Row("01_tokens_and_ids", 50, term_figures.Spread([0.9, 1.0]), term_figures.Spread([0.8]), term_figures.Spread([0.6, 0.7]),
                     term_figures.Spread([0.4, 0.5]), term_figures.Spread([0.1, 0.12])),
            term_tables.Row("10_decoder_block", 50, term_figures.Spread([8.0]), term_figures.Spread([7.9]), term_figures.Spread([9.0]),
                     term_figures.Spread([7.5, 7.7]), term_figures.Spread([0.2, 0.2]))]
    lines = term_tables.notebook_table(rows)
    assert len(lines) == 4
    assert "0.900±0.100" in lines[1] and "0.800±0.000" in lines[1] and "0.600±0.100" in lines[1]
    assert " 1.50 " in lines[1]  # right / floor: 0.6 / 0.4
    assert " 0.500 " in lines[1]  # the course's part: 0.6 - 0.1
    assert lines[-1].startswith("term (per submission)") and "4.800" in lines[-1]  # (0.6 + 9.0) / 2


def test_does_the_split_add_up_from_its_items():
    run = {"items": [
        {"kind": "setup", "label": "cell 1", "seconds": 0.5, "checks": []},
        {"kind": "solution", "label": "f", "seconds": 0.01, "checks": []},
        {"kind": "test", "label": "test_f", "seconds": 1.0, "learner": 0.3, "inputs": 0.2, "calls": 0.6,
         "encode": 0.1, "emit": 0.05, "checks": [{"check": "f", "seconds": 0.95, "learner": 0.3, "inputs": 0.2,
                                                   "calls": 0.6, "encode": 0.1, "emit": 0.05}]},
        {"kind": "demo", "label": "cell 4", "seconds": 2.0, "learner outside checks": 1.5, "checks": []},
        {"kind": "demo", "label": "cell 5", "seconds": 0.25, "checks": []}]}
    s = term_split.Split.of(run)
    assert s.total == pytest.approx(3.76) and s.learner == pytest.approx(0.3) and s.course == pytest.approx(3.46)
    assert s.demo == pytest.approx(2.25) and s.demo_alone == pytest.approx(0.25)
    assert s.harness == pytest.approx(0.2) and s.evidence == pytest.approx(0.15)
    assert s.tests_other == pytest.approx(1.0 - 0.2 - 0.6 - 0.05)
    items = term_split.course_items(run)
    assert items[0][0] == pytest.approx(2.0) and "1.500 s of it in the learner's functions" in items[0][1]
    lines = term_tables.split_table({"01": [s, s]}, {"01": term_figures.Spread([4.0, 4.5])})
    assert "0.300±0.000" in lines[1] and lines[1].endswith("4.000±0.500")


def test_does_spread_say_least_and_range():
    assert str(term_figures.Spread([2.0, 1.5, 1.75])) == "1.500±0.500"
    assert math.isclose(term_figures.Spread([]).min, 0.0)


def graded(profile, cgroup_cpu=None):
    return term_measure.Graded(wall=10.0, cgroup_cpu=cgroup_cpu, rusage_cpu=0.0, first_polled=None, profile=profile,
                               out=None, stdout="")


def test_do_the_runs_of_a_grading_add_up_per_notebook():
    ordinary = graded({"submissions": {"a": 3}, "unattributed": 0.0, "total_cpu": 7.0,
                       "phases": {"": {"start-up": 1.0}, "a": {"cells": 6.0}}})
    looping = graded({"submissions": {"a": 1}, "unattributed": 0.0, "total_cpu": 5.0,
                      "phases": {"": {"start-up": 1.0}, "a": {"cells": 4.0}}})
    run = term_measure.TermRun(ordinary, {"looping": looping})
    assert run.wall == 20.0 and run.cpu == 12.0  # no cgroup here: profile.json's totals
    assert run.per_notebook() == pytest.approx({"a": (6.0 + 4.0 + 2.0) / 4})
    assert term_measure.TermRun(ordinary, {}).per_notebook() == pytest.approx({"a": 7.0 / 3})


def test_does_an_added_run_count_only_its_submissions_in_the_terms_cpu():
    ordinary = graded({"submissions": {"a": 3}, "unattributed": 0.0, "total_cpu": 7.0,
                       "phases": {"": {"start-up": 1.0}, "a": {"cells": 6.0}}})
    # its start-up and the notebook's reference run again: a term graded in one run would not pay them twice
    looping = graded({"submissions": {"a": 1}, "unattributed": 0.5, "total_cpu": 8.0,
                      "phases": {"": {"start-up": 1.5}, "a": {"reference": 2.0, "cells": 3.5, "fork": 0.5}}},
                     cgroup_cpu=16.0)  # the cgroup saw twice what profile.json did: the share is scaled
    assert looping.submissions_cpu == pytest.approx(4.0 * 2)
    run = term_measure.TermRun(ordinary, {"looping": looping})
    assert run.added_cpu("looping") == pytest.approx(8.0) and run.added_cpu("crashing") == 0.0
    assert run.term_cpu == pytest.approx(7.0 + 8.0) and run.cpu == pytest.approx(7.0 + 16.0)


def test_are_the_time_limits_goals_figured_and_judged():
    limits = term_figures.TimeLimits(looping=5, looping_cpu=20.0, term_cpu=400.0, slow_cut=[],
                                     loops_uncut=[("s007", "04_softmax_and_probability")])
    assert limits.per_looper == pytest.approx(4.0) and limits.loopers_share == pytest.approx(0.05)
    ex = term_figures.Extrapolation(startup=10.0, once=50.0, per_submission=0.8, cores=2)
    lines = term_tables.goal_lines(limits, 15, ex, 5000)
    assert lines[0].startswith("a looping submission: 4.00 core-s") and lines[0].endswith("met)")
    assert "5.0%" in lines[1] and lines[1].endswith("met)")
    assert lines[2] == "right but slow submissions timed out: 0 of 15 (goal 0: met)"
    assert "1 of 5 (goal 0: NOT MET); s007 04_softmax_and_probability" in lines[3]
    assert "33.9 min" in lines[4] and lines[4].endswith("NOT MET)")  # 10 + (50 + 0.8 x 5000) / 2 = 2035 s


def test_does_a_saved_result_say_whether_it_timed_out(tmp_path):
    folder = tmp_path / "results" / "s001"
    folder.mkdir(parents=True)
    for assignment, problems, status in (("01_a", ["timeout"], "passed"), ("02_b", ["crashed", "run"], "failed"),
                                         ("03_c", [], "timeout"), ("04_d", [], "passed")):
        (folder / f"{assignment}.json").write_text(json.dumps({
            "student_id": "s001", "assignment_id": assignment, "seconds": 1.5,
            "problems": [{"problem": p, "detail": "...", "fatal": False} for p in problems],
            "scores": [{"grade_id": "test_f", "status": status}]}))
    found = term_measure.outcomes(tmp_path)
    assert {a: o.timed_out for (_, a), o in found.items()} == {"01_a": True, "02_b": False, "03_c": True,
                                                                "04_d": False}
    assert term_measure.worker_seconds(tmp_path)["s001", "04_d"] == 1.5


def test_does_a_score_one_side_lacks_count_as_different():
    same = common.compare_scores({("s", "a", "t1"): 1.0}, {("s", "a", "t1"): 1.0})
    assert same.equal and same.lines({})[-1] == "per-cell scores compared: 1; equal: 1; different: 0"
    off = common.compare_scores({("s", "a", "t1"): 1.0}, {("s", "a", "t1"): 1.0, ("s", "a", "t2"): 0.0})
    assert not off.equal and off.different == [(("s", "a", "t2"), None, 0.0)]
    assert not common.compare_scores({}, {}).equal  # nothing compared proves nothing


def test_are_only_the_given_grade_options_passed_on():
    args = term.parse_args(["--seed", "1", "--timeout-floor", "1.5", "--jobs", "2"])
    assert term.grade_options(args) == ["--jobs", "2", "--timeout-floor", "1.5"]
    assert term.grade_options(term.parse_args(["--seed", "1"])) == []


def test_is_the_extrapolation_checked_against_the_ordinary_run():
    counts = {"slow": 1, "looping": 1, "crashing": 1}
    term = term_figures.Extrapolation(startup=2.0, once=4.0, per_submission=1.0, cores=2)
    ordinary = term_figures.Extrapolation(startup=2.0, once=4.0, per_submission=0.5, cores=2)
    lines = term_tables.extrapolation_lines(term, ordinary, measured_wall=12.0, ordinary_n=32, submissions=34,
                                            assignments=10, counts=counts, load="load average 1.0")
    assert "predicted 12.0 s on 2 idle cores, measured 12.0 s: it had 2.00 cores' worth" in lines[1]  # 2 + 20 / 2
    assert lines[2].startswith("  500 students (5000 submissions): 41.7 min on 2 cores")  # 2 + 5004 / 2 s


def test_does_an_added_run_that_grades_others_too_stop_the_benchmark(tmp_path, monkeypatch):
    submissions, aside = tmp_path / "submitted", tmp_path / "aside"
    (aside / "looping" / "s001" / "01_a").mkdir(parents=True)
    submissions.mkdir()
    regraded = {"submissions": {"01_a": 3}, "unattributed": 0.0, "total_cpu": 1.0, "phases": {}}
    monkeypatch.setattr(term_measure, "grade_term", lambda *args, **kwargs: graded(regraded))
    kinds = {("s000", "01_a"): "right", ("s001", "01_a"): "looping"}
    with pytest.raises(RuntimeError, match="the run adding the 1 looping submissions graded 3"):
        term_measure.grade_runs(submissions, aside, tmp_path / "out", kinds, seed=1, options=[])
    assert not (submissions / "s001").joinpath("01_a").exists()  # taken out again
    only_it = {**regraded, "submissions": {"01_a": 1}}
    monkeypatch.setattr(term_measure, "grade_term", lambda *args, **kwargs: graded(only_it))
    assert list(term_measure.grade_runs(submissions, aside, tmp_path / "out", kinds, seed=1, options=[]).added) == \
        ["looping"]
