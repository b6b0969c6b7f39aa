"""``python -m autograder similarity``: what copying hides is set aside, the given code never counts, planted
copies are found in a small synthetic class and independent work is not named; the outputs are written.

The figures at class size (500 students, ten notebooks) are benchmarks/similarity.py's; this is the cheap part.
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from autograder import paths
from autograder.cli import main
from autograder.grade.output import classreport
from autograder.similarity import compare
from autograder.similarity.answers import course_exercises
from autograder.similarity.fingerprints import fingerprint, normalised_tokens
from autograder.similarity.run import find_similar
from tests.similarity_class import long_enough, make_class

NOTEBOOK = "04_softmax_and_probability"

ORIGINAL = '''def entropy(p):
    """Given docstring."""
    # YOUR CODE HERE
    probs = np.asarray(p, dtype=float)
    if np.any(probs < 0):
        raise ValueError("negative probability")
    logs = np.log(np.where(probs > 0, probs, 1.0))
    return float(-np.sum(probs * logs))

def helper(values, weights):
    total = np.sum(values * weights, axis=-1)
    return total / np.sum(weights, axis=-1)
'''
# renamed, recommented, reformatted (a line split, two joined), helpers in the other order
DISGUISED = '''def helper(xs, ws):
    # weighted mean
    s = np.sum(xs * ws,
               axis=-1); return s / np.sum(ws, axis=-1)

def entropy(p):
    """Given docstring."""
    # YOUR CODE HERE
    q = np.asarray(p, dtype=float)   # as an array
    if np.any(q < 0):
        raise ValueError("probabilities must be >= 0")
    lg = np.log(
        np.where(q > 0, q, 1.0)
    )
    return float(-np.sum(q * lg))
'''
GIVEN = frozenset({'"""Given docstring."""', "# YOUR CODE HERE", "def entropy(p):"})


def test_names_comments_layout_and_function_order_do_not_hide_a_copy():
    a = fingerprint(normalised_tokens(ORIGINAL, given=GIVEN))
    b = fingerprint(normalised_tokens(DISGUISED, given=GIVEN))
    assert a.hashes == b.hashes and len(a.hashes) > 10


# the same answer as ORIGINAL, its lines split with temporaries, a constant named, the terms of a product the
# other way round, a comparison from the other side, a print left in, `+=`, and a docstring in the helper
SPLIT = '''def entropy(p):
    """Given docstring."""
    # YOUR CODE HERE
    probs = np.asarray(p, dtype=float)
    negative = probs < 0
    if np.any(negative):
        raise ValueError("negative probability")
    one = 1.0
    safe = np.where(0 < probs, probs, one)
    print(safe.shape)
    logs = np.log(safe)
    product = logs * probs
    total = np.sum(product)
    result = float(-total)
    return result

def helper(values, weights):
    """Weighted mean along the last axis."""
    total = 0
    total += np.sum(weights * values, axis=-1)
    norm = np.sum(weights, axis=-1)
    return total / norm
'''


def test_temporaries_the_order_of_terms_and_docstrings_do_not_hide_a_copy():
    a, b = (fingerprint(normalised_tokens(code, given=GIVEN)) for code in (ORIGINAL, SPLIT))
    tokens = lambda fp: [t[0] for t in fp.tokens]  # noqa: E731
    # `total` is assigned twice (= then +=): a name, not a temporary, so the helper's first line stays apart
    assert tokens(a)[:tokens(a).index("def")] == tokens(b)[:tokens(b).index("def")]
    assert len(a.hashes & b.hashes) >= 0.8 * len(a.hashes)
    # every token keeps its place in the answer: a temporary's value is marked where the student wrote it
    def in_place(text, start, end):
        written = SPLIT[start:end]
        return (written == text or (text == "V" and written.isidentifier()) or (text == "S" and written[0] in "'\"")
                or (text in ("=", "+") and written == "+=") or (text, written) == ("<", ">"))
    assert all(in_place(*token) for token in b.tokens if token[0])
    where = next(start for text, start, _ in b.tokens if text == "where")
    assert SPLIT.rfind("\n", 0, where) == SPLIT.index("\n    safe = ")  # marked on the line that computes it


def test_one_name_for_every_step_reads_as_a_name_for_each():
    given = frozenset({"def f(a, b):"})
    one = "def f(a, b):\n    x = a @ b\n    x = x / 2\n    x += 1\n    return np.exp(x)\n"
    each = "def f(a, b):\n    scores = a @ b\n    half = scores / 2\n    return np.exp(1 + half)\n"
    assert [t[0] for t in normalised_tokens(one, given=given)] == [t[0] for t in normalised_tokens(each, given=given)]
    # in a loop or in two branches, the values are not one after another: the name stays
    for kept in ("def f(a, b):\n    t = 0\n    for i in a:\n        t += i\n    return t\n",
                 "def f(a, b):\n    x = a\n    if b:\n        x = b\n    return x\n"):
        assert "return V" in " ".join(t[0] for t in normalised_tokens(kept, given=given))


def test_independent_statements_in_another_order_read_the_same_but_a_dependent_one_does_not_move():
    given = frozenset({"def f(x, y):"})
    checks = ["    assert x.ndim == 2\n", "    if y < 0:\n        raise ValueError('y')\n", "    n = len(x)\n",
              "    m = y.size\n"]
    body = "    x = x[:n]\n    return x * m\n"
    orders = ([0, 1, 2, 3], [3, 1, 0, 2], [1, 3, 2, 0])
    read = {" ".join(t[0] for t in normalised_tokens("def f(x, y):\n" + "".join(checks[i] for i in order) + body,
                                                     given=given)) for order in orders}
    assert len(read) == 1, read
    # `x = x[:n]` writes what the check reads: the check stays before it
    moved = "def f(x, y):\n    x = x[:2]\n    assert x.ndim == 2\n    return x\n"
    assert " ".join(t[0] for t in normalised_tokens(moved, given=given)).startswith("V = V [ : 2 ] assert")


def test_a_temporary_read_twice_or_a_parameter_reassigned_stays():
    code = "def f(x, y):\n    t = np.exp(x)\n    x = x + 1\n    return t / t.sum() + x\n"
    tokens = " ".join(t[0] for t in normalised_tokens(code, given=frozenset({"def f(x, y):"})))
    assert tokens == "V = np . exp V V = 1 + V return V + V / V . sum", tokens


def test_the_given_lines_and_bound_names_are_left_out_but_library_names_stay():
    tokens = [t[0] for t in normalised_tokens(ORIGINAL, given=GIVEN) if t[0]]  # "": where a given def was
    assert "Given" not in " ".join(tokens) and tokens[:5] == ["V", "=", "np", ".", "asarray"]
    assert "probs" not in tokens and "dtype" in tokens  # a variable is V, a keyword argument's name stays


def test_a_different_answer_has_different_fingerprints():
    other = ORIGINAL.replace("np.log(np.where(probs > 0, probs, 1.0))", "np.log2(probs + 1e-12) * np.log(2)")
    a, b = (fingerprint(normalised_tokens(code, given=GIVEN)) for code in (ORIGINAL, other))
    assert a.hashes != b.hashes and a.hashes & b.hashes


def test_a_one_line_answer_is_too_short_to_tell_apart():
    assert len(normalised_tokens("def f(Q, K):\n    return Q @ K.T\n", given=frozenset({"def f(Q, K):"}))) \
        < compare.MIN_TOKENS


def test_the_stub_itself_gives_nothing_to_compare():
    for ex in course_exercises(NOTEBOOK):
        stub = json.loads((paths.notebooks_dir() / f"{NOTEBOOK}.ipynb").read_text())
        cell = next(c for c in stub["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == ex.grade_id)
        assert fingerprint(normalised_tokens("".join(cell["source"]), given=ex.given)).size == 0, ex.grade_id


def test_an_answer_copied_word_for_word_is_too_short_to_tell_apart_in_a_small_class_but_not_in_a_large_one():
    def answers(n):  # n students with fingerprints of their own, two of whom share 6 rare ones word for word
        found = {f"s{i}": frozenset(range(1000 * i, 1000 * i + 6)) for i in range(n)}
        found["s1"] = found["s0"]
        return found

    pairs, short = compare.alike_pairs(answers(20))
    assert not pairs and {"s0", "s1"} <= short  # 6 rare fingerprints weigh about 6 x log(0.8 * 20 / 1.5)
    pairs, short = compare.alike_pairs(answers(500))
    assert [(p.a, p.b) for p in pairs] == [("s0", "s1")] and not short


def test_chance_of_at_least():
    assert compare.chance_of_at_least(0, 0.3) == 1.0
    assert compare.chance_of_at_least(1, 0.5) == pytest.approx(0.3934693)  # 1 - e^-0.5
    assert 0 < compare.chance_of_at_least(3, 0.01) < 2e-7  # 0.01^3 / 6, not lost to rounding


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """40 students on notebook 04, 5 of whom copy 3 to 10 exercises from another: renamed, recommented, helpers
    reordered, lines split or joined, one exercise written afresh. (benchmarks/similarity.py also rewrites a
    step now and then, which can hide a copy of a short answer.)"""
    folder = tmp_path_factory.mktemp("similarity") / "submitted"
    planted = make_class(folder, paths.root(), [NOTEBOOK], students=40, copiers=5, seed=7, rewrite=0.0)
    return folder, planted


def test_planted_copies_are_found_and_independent_work_is_not(small_class):
    folder, planted = small_class
    found = find_similar(folder, jobs=1)
    named = {(p.a, p.b) for p in found.pairs}
    # the planted pairs that share 3 or more exercises long enough to compare (both answers)
    expected = {tuple(sorted(pair)) for pair, n in long_enough(folder, planted.pairs).items() if n >= 3}
    assert expected and expected <= named, f"missed: {expected - named}"
    assert named <= {tuple(sorted(pair)) for pair in planted.pairs}, f"independent pairs named: {named - expected}"
    assert found.students == 40 and all(t.answered + t.not_compared <= 40 for t in found.exercises)
    assert any(t.too_short == 40 for t in found.exercises)  # the predictions: one short line each
    for p in found.pairs:
        assert 0 < p.chance < 0.01 and len(p.shared) <= p.both_answered


def test_the_command_writes_the_csv_the_pages_and_the_report_section(small_class, tmp_path, capsys):
    folder, planted = small_class
    broken = tmp_path / "submitted"
    shutil.copytree(folder, broken)
    (broken / "s0000" / NOTEBOOK / f"{NOTEBOOK}.ipynb").write_text("{not json")
    out = tmp_path / "out"
    assert main(["similarity", str(broken), "--out", str(out), "--jobs", "1"]) == 0
    said = capsys.readouterr().out
    assert "pair(s) alike on 3 or more exercises" in said and "not proof of copying" in said
    assert "not compared: s0000" in said  # a notebook that cannot be read is named, and the class goes on
    # the answers too short to tell apart are said per exercise, never counted as compared
    assert "too short at this class size" in said and "predict_" in said.split("per exercise")[1]
    compared = int(said.split("Compared ")[1].split()[0])
    assert compared == sum(t.answered for t in find_similar(broken, jobs=1).exercises)
    rows = list(csv.DictReader((out / "similarity.csv").open()))
    pairs = {(r["student_a"], r["student_b"]) for r in rows}
    assert pairs and all(int(r["exercises_alike"]) >= 3 for r in rows)
    for r in rows:
        page = (out / r["page"]).read_text()
        assert r["grade_id"] in page and "<mark>" in page and "not who copied" in page
    html = classreport.page([], out)  # the report shows the section saved beside it
    assert 'id="similarity"' in html and f'data-pairs="{len(pairs)}"' in html and "What it cannot see" in html
    assert "Answers too short to compare, per exercise" in html and "too short at this class size" in html
    assert 'id="similarity"' not in classreport.page([], tmp_path)  # and nothing where similarity never ran


def test_a_mistyped_folder_or_assignment_is_a_usage_error(tmp_path, capsys):
    assert main(["similarity", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["similarity", str(tmp_path), "--assignment", "04_softmax"]) == 2
    assert "not an assignment of this course" in capsys.readouterr().err


def test_the_synthetic_class_inlines_a_step_with_its_parentheses_so_a_copy_computes_what_its_source_does():
    """A copier who folds a temporary into the next line keeps its parentheses (`(a + b) * 3`): a copy that
    computed something else (`a + b * 3`) is not a disguise, and read differently from its source."""
    import random

    import numpy as np

    from tests.similarity_class import Step, new_style, render
    steps = [Step("clip", "-1"), Step("scale", "3"), Step("reduce", "sum")]
    style = new_style(random.Random(1), len(steps))
    style.forms, style.noise, style.checks, style.prints, style.hoist = [4, 4, 0], {}, [], frozenset(), frozenset()
    style.helpers, style.comments = False, [None] * 3
    apart, inlined = (render(steps, style, ["x"], "    ") for style.inline in ([False] * 3, [True, True, False]))
    x = np.array([[-3.0, 0.5, 2.0], [1.0, -0.2, -5.0]])
    values = []
    for body in (apart, inlined):
        space: dict = {"np": np}
        exec(f"def f(x):\n{body}\n", space)
        values.append(space["f"](x))
    np.testing.assert_allclose(values[1], values[0])
    tokens = [[t[0] for t in normalised_tokens(f"def f(x):\n{body}")] for body in (apart, inlined)]
    assert tokens[1] == tokens[0]


def test_a_pair_alike_on_all_but_one_exercise_is_named_when_the_last_supports_it():
    """Two exercises alike (score 20 or more) and a third at 10 or more (a short answer copied, or one with a
    step rewritten) name a pair; one exercise alike and two that only support do not, nor two alike alone."""
    from autograder.grade.output.alike import ExerciseTally
    from autograder.similarity.compare import Alike
    from autograder.similarity.run import _add_up, _Outcome

    scores = {("a", "b"): (25.0, 30.0, 12.0), ("c", "d"): (25.0, 12.0, 12.0), ("e", "f"): (25.0, 30.0)}
    part = _Outcome(students=set("abcdef"))
    for i in range(3):
        gid = f"ex{i}"
        part.alike["nb", gid] = [Alike(x, y, s[i]) for (x, y), s in scores.items() if i < len(s)]
        part.answered["nb", gid] = set("abcdef")
        part.tallies.append(ExerciseTally("nb", gid, 6, 0, sum(1 for p in part.alike["nb", gid] if p.score >= 20)))
    found = _add_up([part], 3, 0.0)
    assert [(p.a, p.b, [s.score for s in p.shared]) for p in found.pairs] == [("a", "b", [25.0, 30.0, 12.0])]
    assert 0 < found.pairs[0].chance < 1  # the chance of the two alike ones, not of three


def test_a_score_between_support_and_alike_is_found_only_when_asked_for():
    answers = {f"s{i}": frozenset(range(1000 * i, 1000 * i + 6)) for i in range(500)}
    answers["s1"] = frozenset(list(answers["s0"])[:3]) | {999_999, 999_998, 999_997}  # half of s0's, rare
    strong, _ = compare.alike_pairs(answers)
    weak, _ = compare.alike_pairs(answers, at=compare.SUPPORT)
    assert not strong and [(p.a, p.b) for p in weak] == [("s0", "s1")]
    assert compare.SUPPORT <= weak[0].score < compare.ALIKE
    # an answer too short at this class size (could not be alike even copied word for word) supports nothing
    answers["s2"] = answers["s3"] = frozenset({5_000_001, 5_000_002, 5_000_003})
    weak, short = compare.alike_pairs(answers, at=compare.SUPPORT)
    assert {"s2", "s3"} <= short and [(p.a, p.b) for p in weak] == [("s0", "s1")]
