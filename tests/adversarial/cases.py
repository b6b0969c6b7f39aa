"""Hostile submissions of notebook 01, each built by a small function named for its expected outcome.

Every builder takes a :class:`Context` (where the class lives, what the test watches) and returns
what to write as the submission: a notebook, raw text, or ``(notebook, file name)``. The outcome
each case must have is in :data:`EXPECT`, read by ``test_adversarial.py``.

The honest parts are the reference answers typed into the released notebook's solution cells
(``right_notebook()``: tests/builders.py builds the notebooks); the hostile part is one extra code cell
or one changed solution. The points per exercise and per test cell are read from the solution notebook
(:data:`POINTS`, :data:`TEST_POINTS`).
"""
from __future__ import annotations

import copy
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import paths
from autograder.nbio import exercise_of, exercise_points, points_per_test
from tests.builders import (A, FULL, add_cell, answer_all, blank_notebook, cell_index, copy_cell, none_notebook,
                            right_notebook, setup_index, solutions, solve, source_notebook, write_submission)

_SOURCE = source_notebook(A)
POINTS, TEST_POINTS = exercise_points(_SOURCE), points_per_test(_SOURCE)  # the notebook grows; these follow
VISIBLE = sum(p for gid, p in TEST_POINTS.items() if not gid.endswith("_hidden"))
EVIDENCE_MIME = "application/vnd.autograder.evidence+json"




@dataclass
class Context:
    submissions: Path  # SUBMISSIONS
    out: Path  # --out
    outside: Path  # a host folder no submission may write into (it must stay empty)
    port: int  # a loopback TCP server the test runs; it must see no connection
    host_ip: str  # this machine's non-loopback address, also listened on


@dataclass
class Expect:
    score: float
    status: dict[str, str] = field(default_factory=dict)  # grade_id -> status in scores.csv
    problems: tuple[str, ...] = ()  # problem kinds problems.csv must list ("a|b": either will do)
    no_problems: bool = False  # problems.csv must list nothing for it
    lost: tuple[str, ...] = ()  # exercises that must score zero (all others full)
    # the promise rests on a private filesystem or no network: it cannot hold where namespaces are refused
    # (tests/no_userns.py), and the summary says so there instead
    needs_isolation: bool = False


# --------------------------------------------------------------------------- hostile code

TRANSFORMER = """
ip = get_ipython()
ip.input_transformers_post.append(lambda lines: ["pass\\n"])
ip.input_transformers_cleanup.append(lambda lines: ["pass\\n"])
"""

PATCH_NUMPY = """
import math
import numpy as np
import numpy.testing
yes, quiet = (lambda *a, **k: True), (lambda *a, **k: None)
np.allclose = np.array_equal = np.array_equiv = math.isclose = yes
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, bool)
for name in dir(np.testing):
    if name.startswith("assert"):
        setattr(np.testing, name, quiet)
"""

PATCH_CHECKS = """
from autograder.checks import compare, core, nb01
for name in dir(nb01):
    if isinstance(getattr(nb01, name), core.Check):
        setattr(nb01, name, lambda *a, **k: print("all checks passed"))
core.Check.__call__ = lambda self, *a, **k: print("✔ passed")
core.close = core.equal = compare.close = compare.equal = lambda *a, **k: None
core.CheckFailure = compare.CheckFailure = type("Nothing", (Exception,), {})
"""

PATCH_JUDGE_AND_EMIT = """
from autograder.checks import core, evidence, registry, verdict
core.judge = verdict.judge = lambda evidence, reference: (True, "all checks passed")
_emit = core.emit
def emit(payload):
    payload = dict(payload, verdict="passed", ok=True, passed=True)
    payload["outcomes"] = [{"value": True} for _ in payload.get("outcomes", [])]
    _emit(payload)
core.emit = evidence.emit = registry.emit = emit
"""

ANYTHING = """
class Anything(list):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    def __len__(self): return 3
    def __getitem__(self, i): return self
    def __iter__(self): return iter([self, self, self])
    def __array__(self, *a, **k):
        import numpy as np
        return np.zeros(3)
    __hash__ = object.__hash__
"""

FAKE_EVIDENCE = """
from IPython.display import display
from autograder.checks import core, registry
MIME = "application/vnd.autograder.evidence+json"
def fake(check_id, n=10):
    return {MIME: {"check": check_id, "outcomes": [{"value": [0, 1, 2]} for _ in range(n)],
                   "verdict": "passed"}}
for ex in ["build_vocab", "encode", "decode", "one_hot", "embedding_lookup", "make_lm_pairs",
           "most_frequent_pair", "merge_pair"]:
    for suite in ("visible", "hidden"):
        display(fake(f"01_tokens_and_ids:{ex}:{suite}"), raw=True)
# the check's own evidence is replaced by a copy of its structure with made-up values
core.emit = registry.emit = lambda payload: display(fake(payload["check"], len(payload["outcomes"])), raw=True)
"""

FORGE_FROM_VISIBLE_CHECKS = """
# Evidence forged from the check's own cases: the visible ones carry their expected values
# (a learner sees them anyway); the hidden ones compare with the reference, absent here.
from IPython.display import display
from autograder.checks import core, registry
def forged(payload):
    exercise = payload["check"].split(":")[1]
    hidden = payload["check"].endswith(":hidden")
    check = core.REGISTRY[f"01_tokens_and_ids:{exercise}"]
    outcomes = [core.capture(case.want).to_json() for case in check.cases(hidden)]
    display({core.EVIDENCE_MIME: dict(payload, outcomes=outcomes)}, raw=True)
core.emit = registry.emit = forged  # Check.__call__ emits through registry's name for it
"""

SYS_MODULES = """
import importlib, sys, types
fake = types.ModuleType("autograder.checks.nb01")
fake.__getattr__ = lambda name: (lambda *a, **k: print("✔ passed"))
sys.modules["autograder.checks.nb01"] = fake
sys.modules["autograder.checks.core"] = sys.modules["autograder.checks.registry"] = fake
import autograder.checks
autograder.checks.nb01 = fake
check = importlib.import_module("autograder.checks.nb01")
"""

BUILTINS = """
import builtins
_print, _type = builtins.print, builtins.type
builtins.print = lambda *a, **k: _print("✔ all checks passed")
builtins.isinstance = lambda obj, cls: True
builtins.issubclass = lambda a, b: True
builtins.type = lambda *a: _type(*a) if len(a) != 1 else int
builtins.len = lambda x: 3
"""

FORGE_FRAMES = """
import json, os, struct
def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body
fake = {"output_type": "display_data", "metadata": {},
        "data": {"application/vnd.autograder.evidence+json": {"check": "x", "outcomes": []}}}
for i in range(60):
    for fd in range(3, 64):
        try:
            os.write(fd, frame({"done": i, "status": "ok", "outputs": [fake], "seconds": 0.0, "cut": False}))
        except OSError:
            pass
"""


def _grab_and_run(paths_code: str) -> str:
    """A cell that reads a notebook found at one of the candidate paths and runs its solution cells."""
    return f"""
    import glob, json, os
    loaded = []
    for candidate in {paths_code}:
        try:
            with open(candidate, encoding="utf-8") as f:
                stolen = json.load(f)
        except Exception:
            continue
        for c in stolen["cells"]:
            if c.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
                exec("".join(c["source"]) if isinstance(c["source"], list) else c["source"], globals())
        loaded.append(candidate)
    print("read:", loaded)
    """


def stolen_solutions_code() -> str:
    name = f"{A}.ipynb"
    return repr([
        str(paths.solutions_dir() / name),
        f"/tmp/course/solutions/{name}",
        f"../solutions/{name}", f"../../solutions/{name}", f"../../../solutions/{name}",
    ]) + f" + [os.path.join(os.environ.get('AUTOGRADER_ROOT', '/'), 'solutions', {name!r})]" \
         f" + glob.glob('/*/solutions/{name}') + glob.glob('/*/*/solutions/{name}')" \
         f" + glob.glob('/*/*/*/solutions/{name}') + glob.glob('/*/*/*/*/solutions/{name}')"


READ_REFERENCE_MODULE = """
try:
    from autograder import reference
    mod = reference.import_notebook("01_tokens_and_ids")
    for name in ["build_vocab", "encode", "decode", "one_hot", "embedding_lookup", "make_lm_pairs",
                 "most_frequent_pair", "merge_pair"]:
        globals()[name] = getattr(mod, name)
    print("imported the reference")
except Exception as exc:
    print("no reference:", type(exc).__name__)
"""


# --------------------------------------------------------------------------- the cases

def full_marks_for_honest_submission(ctx):
    return right_notebook()


def zero_for_blank_submission(ctx):
    return blank_notebook()


def zero_for_input_transformer_that_skips_tests(ctx):
    return add_cell(none_notebook(), TRANSFORMER)


def zero_for_always_true_allclose_and_np_testing(ctx):
    return add_cell(none_notebook(), PATCH_NUMPY)


def zero_for_replaced_check_functions(ctx):
    return add_cell(none_notebook(), PATCH_CHECKS)


def zero_for_replaced_judge_and_emit(ctx):
    return add_cell(none_notebook(), PATCH_JUDGE_AND_EMIT)


def zero_for_answers_equal_to_everything(ctx):
    nb = answer_all(add_cell(none_notebook(), ANYTHING), "Anything()")
    return nb


def zero_for_fake_evidence_displayed_by_student(ctx):
    return add_cell(none_notebook(), FAKE_EVIDENCE)


def only_visible_points_for_evidence_forged_from_the_checks(ctx):
    return add_cell(none_notebook(), FORGE_FROM_VISIBLE_CHECKS)


def full_marks_after_the_environment_is_cleared(ctx):
    # evidence mode and the seed are fixed before student code runs, not read from os.environ at each check
    return add_cell(right_notebook(), "import os\nos.environ.clear()\nos.chdir('/')")


def zero_for_sys_modules_tampering(ctx):
    return add_cell(none_notebook(), SYS_MODULES)


def zero_for_patched_builtins(ctx):
    nb = answer_all(add_cell(none_notebook(), ANYTHING), "Anything()")
    return add_cell(nb, BUILTINS, after=setup_index(nb) + 1)  # after Anything, before every answer


def zero_for_forged_frames_on_the_grader_channel(ctx):
    return add_cell(none_notebook(), FORGE_FRAMES, after=len(none_notebook().cells) - 1)


def zero_for_reading_the_solutions(ctx):
    nb = add_cell(none_notebook(), _grab_and_run(stolen_solutions_code()))
    return add_cell(nb, READ_REFERENCE_MODULE)


def zero_for_reading_another_students_submission(ctx):
    honest = ctx.submissions / "full_marks_for_honest_submission" / A / f"{A}.ipynb"
    code = repr([str(honest), f"../../full_marks_for_honest_submission/{A}/{A}.ipynb"]) + \
        f" + glob.glob({str(ctx.submissions)!r} + '/*/*/*.ipynb') + glob.glob('../../*/*/*.ipynb')"
    return add_cell(none_notebook(), _grab_and_run(code))


def zero_for_reading_and_writing_the_gradebook_and_out_folder(ctx):
    return add_cell(none_notebook(), f"""
    import glob, json, os, sqlite3
    from IPython.display import display
    from autograder.checks import core, registry
    out = {str(ctx.out)!r}
    stolen = {{}}
    for path in glob.glob(out + "/reference/*.json") + glob.glob("../../*-graded/reference/*.json"):
        try:
            for payloads in json.load(open(path))["evidence"].values():
                for p in payloads:
                    stolen[p["check"]] = p
        except Exception:
            pass
    # replay the reference's own evidence instead of the student's
    core.emit = registry.emit = lambda payload: display({{core.EVIDENCE_MIME: stolen.get(payload["check"], payload)}},
                                                        raw=True)
    for path in (out + "/PWNED.txt", out + "/results/PWNED.json"):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").write("pwned")
        except OSError:
            pass
    try:
        db = sqlite3.connect(out + "/gradebook.db")
        db.execute("update grade set manual_score = 100")
        db.commit()
    except Exception:
        pass
    print("stolen:", len(stolen))
    """)


def full_marks_but_nothing_written_outside_the_scratch_folder(ctx):
    own = ctx.submissions / "full_marks_but_nothing_written_outside_the_scratch_folder" / A
    targets = [str(ctx.outside / "PWNED.txt"), str(own / "PWNED.txt"), str(own / f"{A}.ipynb"),
               str(ctx.submissions / "PWNED.txt"), str(paths.root() / "PWNED-adversarial.txt"),
               "/tmp/PWNED-adversarial.txt", "/var/tmp/PWNED-adversarial.txt", "/dev/shm/PWNED-adversarial.txt",
               "../PWNED.txt", "../../PWNED.txt"]
    return add_cell(right_notebook(), f"""
    import os
    written = []
    for path in {targets!r}:
        try:
            with open(path, "w") as f:
                f.write("pwned")
            written.append(path)
        except OSError:
            pass
    print("written:", written)
    """, after="test_build_vocab_hidden")


def full_marks_but_no_network(ctx):
    return add_cell(right_notebook(), f"""
    import socket
    reached = []
    for host in ("127.0.0.1", {ctx.host_ip!r}, "localhost"):
        try:
            socket.create_connection((host, {ctx.port}), timeout=1).close()
            reached.append(host)
        except OSError:
            pass
    print("reached:", reached)
    """, after="test_encode_hidden")


# This loop waits rather than spins: it meets three cells (the first at its own limit, the others at the shorter
# one that follows a time-out), and the point is what the time-outs cost the notebook, which is the same for a
# sleeping loop; spinning, it took a core from the rest of the test command for 16 s in each of the test command's
# three gradings of this class. A student's
# busy loop, graded beside honest students, is issue 25's class (tests/broken_class.py); a busy loop
# interrupted, tests/grade/test_engine.py. The fork bomb's children below still spin: they are the hostile load.
def timeout_costs_only_the_looping_exercise(ctx):
    return solve(right_notebook(), "one_hot", """
    def one_hot(ids, vocab_size):
        import time
        while True:
            time.sleep(0.05)
    """)


# These two wait rather than spin too: what they test is the kill that follows an interrupt they defeat, which
# is the same for a sleeping loop, and a spinning one would take a core from the rest of the test command for
# their whole timeout and grace.
def full_marks_after_a_loop_that_ignores_sigint(ctx):
    return add_cell(right_notebook(), """
    import signal, time
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.05)
    """, after="test_decode_hidden")


def full_marks_after_a_loop_that_swallows_keyboardinterrupt(ctx):
    return add_cell(right_notebook(), """
    import time
    while True:
        try:
            while True:
                time.sleep(0.05)
        except KeyboardInterrupt:
            pass
    """, after="test_embedding_lookup_hidden")


def only_decode_lost_when_it_calls_os_exit(ctx):
    return solve(right_notebook(), "decode", """
    def decode(ids, vocab):
        import os
        os._exit(0)
    """)


def full_marks_despite_sys_exit_and_exit(ctx):
    nb = add_cell(right_notebook(), "import sys\nsys.exit()", after="test_build_vocab_hidden")
    return add_cell(nb, "raise SystemExit(3)\n", after="test_one_hot_hidden")


def most_frequent_pair_and_train_bpe_built_on_it_lost_to_a_segfault(ctx):
    return solve(right_notebook(), "most_frequent_pair", """
    def most_frequent_pair(ids):
        import ctypes
        return ctypes.string_at(0)
    """)


def full_marks_despite_a_memory_bomb(ctx):
    return add_cell(right_notebook(), """
    hog = []
    while True:
        hog.append(bytearray(64 * 2**20))
    """, after="test_encode_hidden")


def full_marks_despite_a_fork_bomb(ctx):
    return add_cell(right_notebook(), """
    import os
    for _ in range(10000):
        try:
            os.fork()
        except OSError:
            pass
    while True:
        pass
    """, after="test_build_vocab_hidden")


def full_marks_despite_an_output_flood(ctx):
    nb = add_cell(right_notebook(), """
    line = "flood " * 1000 + "\\n"
    for _ in range(20000):
        print(line, end="")
    """, after="test_build_vocab_hidden")
    return add_cell(nb, "from IPython.display import display\nfor _ in range(5000):\n"
                        "    display({'text/plain': 'x' * 10000}, raw=True)\n", after="test_decode_hidden")


def with_lines(exercise: str, lines: str) -> str:
    """The reference answer to ``exercise`` with ``lines`` run first (right after BEGIN SOLUTION)."""
    marker = "### BEGIN SOLUTION\n"
    source = solutions(A)[exercise]
    assert marker in source
    return source.replace(marker, marker + textwrap.indent(textwrap.dedent(lines).strip() + "\n", "    "), 1)


def full_marks_for_correct_answer_that_floods_output(ctx):
    nb = right_notebook()
    nb.cells[cell_index(nb, "encode")].source = with_lines("encode", 'print("debug " * 300_000)')
    return nb


def full_marks_despite_input(ctx):
    nb = add_cell(right_notebook(), "name = input('Your name? ')\nprint(name)\n", after="test_build_vocab_hidden")
    return add_cell(nb, "import getpass\nsecret = getpass.getpass()\n", after="test_encode_hidden")


def full_marks_despite_warning_on_stderr(ctx):
    nb = right_notebook()
    for ex in ("build_vocab", "one_hot"):
        nb.cells[cell_index(nb, ex)].source = with_lines(ex, """
            import sys, warnings
            warnings.warn("this is deprecated", DeprecationWarning)
            warnings.warn("careful", UserWarning)
            print("warning: something to stderr", file=sys.stderr)
            """)
    return add_cell(nb, "import sys, warnings\nwarnings.warn('a warning in a free cell')\n"
                        "print('stderr!', file=sys.stderr)\n", after="test_build_vocab_hidden")


def only_build_vocab_lost_when_its_tests_are_edited(ctx):
    nb = solve(right_notebook(), "build_vocab", "def build_vocab(tokens, specials=('<unk>',)):\n    return {}\n")
    nb.cells[cell_index(nb, "test_build_vocab")].source = "pass"
    nb.cells[cell_index(nb, "test_build_vocab_hidden")].source = (
        "# Hidden tests run when your work is graded.\nprint('all hidden tests passed')")
    return nb


def only_encode_lost_when_its_tests_are_deleted(ctx):
    nb = solve(right_notebook(), "encode", "def encode(tokens, vocab, unk='<unk>'):\n    return [0 for t in tokens]\n")
    del nb.cells[cell_index(nb, "test_encode_hidden")]
    del nb.cells[cell_index(nb, "test_encode")]
    return nb


def full_marks_once_for_a_duplicated_test_cell(ctx):
    nb = right_notebook()
    nb.cells.insert(cell_index(nb, "test_decode") + 1, copy_cell(nb, "test_decode", id="student-copy"))
    nb.cells.insert(setup_index(nb) + 1, copy_cell(nb, "test_decode", id="student-copy-2", source="pass"))
    return nb


def full_marks_but_not_more_for_changed_points(ctx):
    nb = right_notebook()
    nb.cells[cell_index(nb, "test_build_vocab")].metadata.nbgrader["points"] = 100
    nb.cells[cell_index(nb, "test_encode_hidden")].metadata.nbgrader["points"] = 50
    return nb


def only_build_vocab_lost_despite_a_changed_grade_id(ctx):
    nb = solve(right_notebook(), "build_vocab", "def build_vocab(tokens, specials=('<unk>',)):\n    return {}\n")
    cell = nb.cells[cell_index(nb, "test_build_vocab_hidden")]
    cell.metadata.nbgrader["grade_id"] = "my_own_test"
    cell.source = "pass"
    return nb


def merge_pair_and_the_bpe_built_on_it_lost_when_its_metadata_makes_it_ungraded(ctx):
    nb = solve(right_notebook(), "merge_pair", "def merge_pair(ids, pair, new_id):\n    return list(ids)\n")
    for gid in ("test_merge_pair", "test_merge_pair_hidden"):
        cell = nb.cells[cell_index(nb, gid)]
        cell.metadata.nbgrader.update(grade=False, locked=False, solution=True)
        cell.source = "pass"
    return nb


def full_marks_for_reordered_cells(ctx):
    nb = right_notebook()
    cell = nb.cells.pop(cell_index(nb, "test_one_hot"))
    nb.cells.insert(setup_index(nb) + 1, cell)
    cell = nb.cells.pop(cell_index(nb, "test_merge_pair_hidden"))
    nb.cells.insert(cell_index(nb, "test_build_vocab"), cell)
    return nb


def zero_for_invalid_json(ctx):
    return '{"cells": [ {"cell_type": "code", oops'


def full_marks_for_a_misnamed_notebook(ctx):
    return right_notebook(), "Homework 1 (final).ipynb"


def full_marks_for_an_nbformat_3_notebook(ctx):
    return nbformat.writes(nbformat.convert(right_notebook(), 3))


QUESTIONS = [ex for ex in POINTS if ex.startswith("predict_")]  # graded predictions
FORGEABLE = ("one_hot", "embedding_lookup")  # hidden checks that compare with NumPy one-liners, not the reference
# visible checks that compare with the reference solution's run (the bug hunt's: the fix is the course's), or
# judge by a rule without carrying a due value (skipgram_pairs: any order of the right multiset of pairs, its
# cases' due value a placeholder None), so evidence forged from what the visible check holds earns nothing there
UNFORGEABLE_VISIBLE = ("train_val_pairs", "skipgram_pairs")
FORGEABLE_ONLY = {gid: "failed" for gid in TEST_POINTS
                  if (gid.endswith("_hidden") and exercise_of(gid) not in FORGEABLE)
                  or exercise_of(gid) in UNFORGEABLE_VISIBLE}
EXPECT: dict[str, Expect] = {
    "full_marks_for_honest_submission": Expect(FULL, no_problems=True),
    "zero_for_blank_submission": Expect(0.0),
    "zero_for_input_transformer_that_skips_tests": Expect(0.0),
    "zero_for_always_true_allclose_and_np_testing": Expect(0.0),
    "zero_for_replaced_check_functions": Expect(0.0),
    "zero_for_replaced_judge_and_emit": Expect(0.0),
    "zero_for_answers_equal_to_everything": Expect(0.0),
    "zero_for_fake_evidence_displayed_by_student": Expect(0.0),
    # visible checks carry their expected values, and the hidden checks of one_hot and
    # embedding_lookup compare with NumPy one-liners (np.eye(V)[ids], E[ids]) that a learner may write
    # just as well; every hidden check that compares with the reference solution stays at zero
    # (a question's visible check has no expected value to forge, and its answer lives in the solution only)
    "only_visible_points_for_evidence_forged_from_the_checks": Expect(
        VISIBLE - sum(TEST_POINTS[f"test_{q}"] for q in (*QUESTIONS, *UNFORGEABLE_VISIBLE))
        + sum(TEST_POINTS[f"test_{ex}_hidden"] for ex in FORGEABLE), FORGEABLE_ONLY),
    "full_marks_after_the_environment_is_cleared": Expect(FULL, no_problems=True),
    "zero_for_sys_modules_tampering": Expect(0.0),
    "zero_for_patched_builtins": Expect(0.0),
    "zero_for_forged_frames_on_the_grader_channel": Expect(0.0, problems=("crashed",)),
    "zero_for_reading_the_solutions": Expect(0.0, needs_isolation=True),
    "zero_for_reading_another_students_submission": Expect(0.0, needs_isolation=True),
    "zero_for_reading_and_writing_the_gradebook_and_out_folder": Expect(0.0, needs_isolation=True),
    "full_marks_but_nothing_written_outside_the_scratch_folder": Expect(FULL, no_problems=True, needs_isolation=True),
    "full_marks_but_no_network": Expect(FULL, no_problems=True, needs_isolation=True),
    "timeout_costs_only_the_looping_exercise": Expect(
        FULL - POINTS["one_hot"], {"test_one_hot": "timeout", "test_one_hot_hidden": "timeout"}, ("timeout",), lost=("one_hot",)),
    "full_marks_after_a_loop_that_ignores_sigint": Expect(FULL, problems=("timeout",)),
    "full_marks_after_a_loop_that_swallows_keyboardinterrupt": Expect(FULL, problems=("timeout",)),
    "only_decode_lost_when_it_calls_os_exit": Expect(
        FULL - POINTS["decode"], {"test_decode": "error", "test_decode_hidden": "error"}, ("crashed",), lost=("decode",)),
    "full_marks_despite_sys_exit_and_exit": Expect(FULL, no_problems=True),
    # train_bpe calls the learner's most_frequent_pair (the course builds on earlier pieces): it crashes too
    "most_frequent_pair_and_train_bpe_built_on_it_lost_to_a_segfault": Expect(
        FULL - POINTS["most_frequent_pair"] - POINTS["train_bpe"],
        {"test_most_frequent_pair": "error", "test_most_frequent_pair_hidden": "error", "test_train_bpe": "error"},
        ("crashed",), lost=("most_frequent_pair", "train_bpe")),
    "full_marks_despite_a_memory_bomb": Expect(FULL, problems=("out of memory|timeout",)),
    "full_marks_despite_a_fork_bomb": Expect(FULL, problems=("timeout",)),
    "full_marks_despite_an_output_flood": Expect(FULL, problems=("output cut",)),
    "full_marks_for_correct_answer_that_floods_output": Expect(FULL, problems=("output cut",)),
    "full_marks_despite_input": Expect(FULL, no_problems=True),
    "full_marks_despite_warning_on_stderr": Expect(FULL, no_problems=True),
    "only_build_vocab_lost_when_its_tests_are_edited": Expect(
        FULL - POINTS["build_vocab"], {"test_build_vocab": "tampered", "test_build_vocab_hidden": "tampered"}, ("tampered",),
        lost=("build_vocab",)),
    "only_encode_lost_when_its_tests_are_deleted": Expect(
        FULL - POINTS["encode"], {"test_encode": "tampered", "test_encode_hidden": "tampered"}, ("tampered",), lost=("encode",)),
    "full_marks_once_for_a_duplicated_test_cell": Expect(FULL, {"test_decode": "tampered"}, ("tampered",)),
    "full_marks_but_not_more_for_changed_points": Expect(
        FULL, {"test_build_vocab": "tampered", "test_encode_hidden": "tampered"}, ("tampered",)),
    "only_build_vocab_lost_despite_a_changed_grade_id": Expect(
        FULL - POINTS["build_vocab"], {"test_build_vocab_hidden": "tampered"}, ("tampered",), lost=("build_vocab",)),
    # the wrong merge_pair also breaks train_bpe and bpe_encode, which call it
    "merge_pair_and_the_bpe_built_on_it_lost_when_its_metadata_makes_it_ungraded": Expect(
        FULL - POINTS["merge_pair"] - POINTS["train_bpe"] - POINTS["bpe_encode"],
        {"test_merge_pair": "tampered", "test_merge_pair_hidden": "tampered"}, ("tampered",),
        lost=("merge_pair", "train_bpe", "bpe_encode")),
    "full_marks_for_reordered_cells": Expect(
        FULL, {"test_one_hot": "tampered", "test_merge_pair_hidden": "tampered"}, ("tampered",)),
    "zero_for_invalid_json": Expect(0.0, problems=("not valid JSON",)),
    "full_marks_for_a_misnamed_notebook": Expect(FULL, problems=("wrong file name",)),
    "full_marks_for_an_nbformat_3_notebook": Expect(FULL, problems=("older nbformat",)),
}
BUILDERS = {name: globals()[name] for name in EXPECT}


def build_class(ctx: Context, *, isolated: bool = True) -> list[str]:
    """Write every case's submission under ctx.submissions (honest ones first: others may read them) and
    return their names. Without isolation (``isolated=False``) the cases that attack the machine are left
    out: their code would run as the instructor and could rewrite anyone's results, as the summary warns."""
    names = [name for name in BUILDERS if isolated or not EXPECT[name].needs_isolation]
    for name in names:
        build = BUILDERS[name]
        made = build(ctx)
        nb, file_name = made if isinstance(made, tuple) else (made, None)
        write_submission(ctx.submissions, name, copy.deepcopy(nb) if not isinstance(nb, str) else nb, A, file_name)
    return names
