"""Does the learner's own code run the course? 05, 09 and 10 build on earlier pieces (autograder.pieces).

A learner's ten notebooks are laid out here with correct code written differently from the course's, and
a probe in each of the learner's pieces writes down who called it: a check (a frame of the autograder
package on the stack) or the notebook's own cells. The slow tests build the students' image (a wheel of
the course in a fresh virtual environment, no solutions/ anywhere) and run 05, 09 and 10 top to bottom.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import warnings
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from autograder import paths, pieces, reference
from autograder.hub import build_wheel  # the wheel the Hub's students' image is made from
from autograder.checks import core
from autograder.nbio import grade_id, is_solution_cell

# One worker builds the students' image and runs the notebooks once, for every test of this module.
pytestmark = pytest.mark.xdist_group("learner_pieces")

ASSIGNMENTS = [
    "01_tokens_and_ids", "02_shapes_and_matmul", "03_dot_and_outer_products", "04_softmax_and_probability",
    "05_gradients_and_chain_rule", "06_sinusoids_and_positions", "07_complex_rotations_and_rope",
    "08_causality_and_masking", "09_attention", "10_decoder_block",
]

# The probe: it records whether a check or the notebook's own cells called the learner's function.
PROBE = '''
def _seen(name):
    import os, sys
    log = os.environ.get("LEARNER_CALLS")
    if not log:
        return
    frame, caller = sys._getframe(2), "notebook"
    while frame is not None:
        if f"{os.sep}autograder{os.sep}" in frame.f_code.co_filename:
            caller = "check"
            break
        frame = frame.f_back
    pairs = globals().setdefault("_SEEN_PAIRS", set())
    if (name, caller) not in pairs:
        pairs.add((name, caller))
        with open(log, "a") as f:
            f.write(f"{name} {caller}\\n")
'''

# The learner's bodies for the solution regions of the pieces: right, and written unlike the course's.
LEARNER = {
    "build_vocab": '''
from collections import Counter
ranked = sorted(Counter(tokens).items(), key=lambda item: (-item[1], item[0]))
ordered = list(specials) + [tok for tok, _ in ranked if tok not in specials]
return {tok: i for i, tok in enumerate(ordered)}''',
    "encode": '''
unk_id = vocab[unk]
return [vocab[tok] if tok in vocab else unk_id for tok in tokens]''',
    "decode": '''
lookup = dict(zip(vocab.values(), vocab.keys()))
return [lookup[i] for i in ids]''',
    "embedding_lookup": '''
return np.take(E, np.asarray(ids), axis=0)''',
    "cross_entropy": '''
z = np.array(logits, dtype=np.float64)
z = z - z.max(axis=1, keepdims=True)
log_norm = np.log(np.exp(z).sum(axis=1))
picked = z[np.arange(z.shape[0]), np.asarray(targets)]
return float(np.mean(log_norm - picked))''',
    "sample_token": '''
p = softmax_temperature(logits, temperature)
cdf = np.cumsum(p)
cdf /= cdf[-1]
return int(np.searchsorted(cdf, rng.random(), side="right"))''',
    "split_heads": '''
if x.shape[-1] % n_heads:
    raise ValueError(f"{n_heads} heads cannot split {x.shape[-1]} features evenly")
return np.stack(np.split(x, n_heads, axis=-1), axis=1)''',
    "merge_heads": '''
return np.concatenate(list(np.moveaxis(x, 1, 0)), axis=-1)''',
    "score_table": '''
return np.einsum("id,jd->ij", Q, K)''',
    "softmax": '''
z = np.moveaxis(np.asarray(z, dtype=float), axis, -1)
e = np.exp(z - z.max(axis=-1, keepdims=True))
return np.moveaxis(e / e.sum(axis=-1, keepdims=True), -1, axis)''',
    "apply_rope": '''
x = np.asarray(x, dtype=float)
T, D = x.shape[-2:]
if D % 2:
    raise ValueError(f"odd width D={D} has no pairs")
pos = np.arange(T, dtype=float) if positions is None else np.asarray(positions, dtype=float)
turn = np.exp(1j * np.outer(pos, base ** (-np.arange(0, D, 2) / D)))  # (T, D/2)
z = (x[..., 0::2] + 1j * x[..., 1::2]) * turn
return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)''',
    "masked_softmax": '''
s = np.asarray(scores, dtype=float)
keep = np.broadcast_to(np.asarray(allowed, dtype=bool), s.shape)
none_left = ~keep.any(axis=-1)
if none_left.any():
    where = tuple(int(i) for i in np.argwhere(none_left)[0])
    raise ValueError(f"row {where[0] if len(where) == 1 else where} keeps no key: allow at least one per row")
top = np.where(keep, s, -np.inf).max(axis=-1, keepdims=True)
e = np.where(keep, np.exp(np.where(keep, s - top, 0.0)), 0.0)
return e / e.sum(axis=-1, keepdims=True)''',
    "is_causal": '''
def plain(y):
    return y.detach().cpu().numpy() if hasattr(y, "detach") else np.asarray(y)

base_out = plain(fn(x))
gen = np.random.default_rng(7)
for j in range(1, len(x)):
    y = x.clone() if hasattr(x, "clone") else np.array(x, dtype=float)
    bump = gen.standard_normal(tuple(y[j].shape))
    y[j] = y[j] + (y.new_tensor(bump) if hasattr(y, "new_tensor") else bump)
    if not np.allclose(plain(fn(y))[:j], base_out[:j], rtol=1e-6, atol=1e-7):
        return False
return True''',
    "sinusoidal_positions": '''
if d % 2:
    raise ValueError(f"d={d} is odd: sines and cosines come in pairs")
angle = np.arange(T, dtype=float)[:, None] / base ** (np.arange(0, d, 2, dtype=float)[None, :] / d)
return np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(T, d)''',
    "scaled_dot_product_attention": '''
scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
if mask is not None:
    keep = torch.broadcast_to(mask, scores.shape)
    if (~keep).all(dim=-1).any():
        where = tuple(int(i) for i in torch.nonzero((~keep).all(dim=-1))[0])
        raise ValueError(f"row {where} keeps no key")
    scores = torch.where(keep, scores, torch.full_like(scores, float("-inf")))
w = scores.softmax(dim=-1)
return torch.matmul(w, v), w''',
    "MultiHeadAttention": '''
if mask is not None and mask.ndim == 3:  # (B, T_q, T_k) would be read as (heads, T_q, T_k)
    raise ValueError("a 3-D mask is ambiguous here: pass (T_q, T_k) or (B, 1, T_q, T_k)")
src = x if context is None else context
B, Tq, Tk = x.shape[0], x.shape[1], src.shape[1]

def heads(t, n):
    return t.reshape(B, n, self.n_heads, self.d_head).permute(0, 2, 1, 3)

q, k, v = heads(self.w_q(x), Tq), heads(self.w_k(src), Tk), heads(self.w_v(src), Tk)
if self.rope:
    q = apply_rope_torch(q, np.arange(q_start, q_start + Tq), self.rope_base)
    k = apply_rope_torch(k, np.arange(Tk), self.rope_base)
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.permute(0, 2, 1, 3).reshape(B, Tq, self.d_model))''',
}

SOLUTION = re.compile(r"^( *)### BEGIN SOLUTION\n.*?^ *### END SOLUTION\n?", re.S | re.M)


def learner_cell(source: str, name: str) -> str:
    """The course's solution cell with the learner's body for ``name`` (or the course's, markers dropped)."""
    if name not in LEARNER:
        return SOLUTION.sub(lambda m: _strip_markers(m.group(0)), source)
    body = f'_seen("{name}")' + LEARNER[name]
    return PROBE + "\n\n" + SOLUTION.sub(lambda m: textwrap.indent(body, m.group(1)) + "\n", source)


def _strip_markers(region: str) -> str:
    return "".join(line for line in region.splitlines(keepends=True) if "### " not in line)


def learner_notebook(assignment: str) -> nbformat.NotebookNode:
    """The learner's saved notebook: the released one, each exercise answered (the pieces our own way)."""
    answers = {grade_id(c): c.source for c in nbformat.read(paths.solutions_dir() / f"{assignment}.ipynb",
                                                             as_version=4).cells if is_solution_cell(c)}
    nb = nbformat.read(paths.notebooks_dir() / f"{assignment}.ipynb", as_version=4)
    for cell in nb.cells:
        if is_solution_cell(cell):
            cell.source = learner_cell(answers[grade_id(cell)], grade_id(cell))
    return nb


def lay_out(course: Path, *, fetched: bool) -> Path:
    """The learner's ten notebooks as nbgrader fetches them (``course/NN_slug/NN_slug.ipynb``), or side by side
    in one folder as in this repository's notebooks/. Returns ``course``."""
    for assignment in ASSIGNMENTS:
        folder = course / assignment if fetched else course
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(learner_notebook(assignment), folder / f"{assignment}.ipynb")
    return course


def calls(log: Path) -> dict[str, set[str]]:
    """Who called each of the learner's pieces: {"split_heads": {"check", "notebook"}, ...}."""
    found: dict[str, set[str]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        name, caller = line.split()
        found.setdefault(name, set()).add(caller)
    return found


def setup_lines(nb: nbformat.NotebookNode) -> list[str]:
    cell = next(c for c in nb.cells if "setup" in c.metadata.get("tags", []))
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream").splitlines()


def errors(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    return [(grade_id(c) or c.source[:40], o.ename, o.evalue) for c in nb.cells if c.cell_type == "code"
            for o in c.outputs if o.output_type == "error"]




def execute(path: Path, kernel: str, env: dict[str, str], *, allow: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in its own folder (as JupyterLab's Run All does); stops at an error
    unless its name is in ``allow``.

    Once, on a loaded machine, a fresh kernel never saw the first cell's request (it sat idle, 2 s of CPU,
    while the client waited for its reply): a cell that outlives the timeout is run again once in a new
    kernel, with a warning; a notebook that hangs twice fails. The slowest honest cell takes about 30 s."""
    old = dict(os.environ)
    for var in ("NBGRADER_EXECUTION", core.MODE_ENV, core.SEED_ENV, "AUTOGRADER_ROOT", "MPLBACKEND"):
        os.environ.pop(var, None)
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        for attempt in (1, 2):
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(nb, kernel_name=kernel, timeout=240, allow_error_names=list(allow),
                                    resources={"metadata": {"path": str(path.parent)}})
            try:
                client.execute()
            except CellExecutionError:
                pass  # the notebook keeps the error; the tests read it there
            except (CellTimeoutError, DeadKernelError) as exc:
                if attempt == 2:
                    raise
                warnings.warn(f"{path.name}: {type(exc).__name__} ({str(exc)[:200]}); running it again in a new kernel")
                continue
            return nb
    finally:
        os.environ.clear()
        os.environ.update(old)
    raise AssertionError("unreachable")


# ------------------------------------------------------------------ fast: the choice itself, in this process

@pytest.fixture
def course_here(tmp_path, monkeypatch):
    """The learner's notebooks beside a running notebook (this process's folder), outside any grading."""
    lay_out(tmp_path, fetched=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(core.SETTINGS, "mode", "local")
    return tmp_path


def test_the_learners_pieces_are_taken_when_they_pass_and_each_line_says_so(course_here, capsys):
    earlier = pieces.use_pieces("09_attention")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(pieces.NEEDS["09_attention"])
    for piece, line in zip(pieces.NEEDS["09_attention"], lines):
        assert line.split()[0] == piece.name
        assert f"({piece.assignment[:2]}) yours: from {piece.assignment}.ipynb, its check passes" in line, line
        assert earlier.whose(piece.name) == pieces.YOURS
    assert earlier["split_heads"].__module__ == "autograder.pieces.learner.nb02"
    assert "np.stack(np.split" in Path(course_here / "02_shapes_and_matmul.ipynb").read_text()


def test_a_piece_that_fails_its_check_gives_way_to_the_courses_and_says_why(course_here, capsys):
    path = course_here / "03_dot_and_outer_products.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "score_table")
    cell.source = cell.source.replace('np.einsum("id,jd->ij", Q, K)', 'np.einsum("id,jd->ji", Q, K)')
    nbformat.write(nb, path)
    earlier = pieces.use_pieces("09_attention")
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("score_table"))
    assert "the course's: your score_table does not pass its check yet" in line, line
    assert earlier.whose("score_table") == pieces.COURSE
    assert earlier["score_table"] is reference.ref("03_dot_and_outer_products", "score_table")
    assert earlier.whose("split_heads") == pieces.YOURS  # one failing piece costs only itself


def test_under_grading_or_with_the_flag_off_every_piece_is_the_courses(course_here, monkeypatch, capsys):
    for flip in ("nbgrader", "evidence", "flag"):
        with monkeypatch.context() as m:
            if flip == "nbgrader":
                m.setenv("NBGRADER_EXECUTION", "autograde")
            elif flip == "evidence":
                m.setattr(core.SETTINGS, "mode", "evidence")
            earlier = pieces.use_pieces("10_decoder_block", mine=flip != "flag")
        out = capsys.readouterr().out
        assert all(earlier.whose(p.name) == pieces.COURSE for p in pieces.NEEDS["10_decoder_block"]), flip
        assert ("USE_MY_PIECES = False" if flip == "flag" else "under grading") in out, (flip, out)


def test_nbgraders_validate_button_is_the_learner_not_grading(monkeypatch):
    """nbgrader validate sets NBGRADER_EXECUTION=validate: a student validating 09 in an image without the
    course's solutions must run on their own pieces, not stop for want of the course's."""
    monkeypatch.setattr(core.SETTINGS, "mode", "local")
    assert not pieces.under_grading({"NBGRADER_EXECUTION": "validate"})
    assert not pieces.under_grading({})
    assert pieces.under_grading({"NBGRADER_EXECUTION": "autograde"})
    monkeypatch.setattr(core.SETTINGS, "mode", "evidence")
    assert pieces.under_grading({"NBGRADER_EXECUTION": "validate"})  # our grader's run, whatever the variable


def test_a_folder_the_learner_names_is_searched_first(tmp_path, monkeypatch, capsys):
    mine = lay_out(tmp_path / "elsewhere", fetched=False)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(core.SETTINGS, "mode", "local")
    earlier = pieces.use_pieces("05_gradients_and_chain_rule", folder=mine)
    assert all(earlier.whose(p.name) == pieces.YOURS for p in pieces.NEEDS["05_gradients_and_chain_rule"])
    assert "from ../elsewhere/01_tokens_and_ids.ipynb" in capsys.readouterr().out
    with pytest.raises(ValueError, match="is not a folder here"):
        pieces.use_pieces("05_gradients_and_chain_rule", folder=tmp_path / "missing")


def test_without_the_learners_notebook_nor_the_course_it_stops_with_one_message(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path / "no-course"))  # no solutions/ here
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(core.SETTINGS, "mode", "local")
    with pytest.raises(pieces.PiecesMissing) as stop:
        pieces.use_pieces("05_gradients_and_chain_rule")
    message = str(stop.value)
    assert "build_vocab in 01_tokens_and_ids.ipynb" in message and "sample_token in 04_softmax_and_probability" in message
    assert "ReferenceUnavailable" not in message
    assert stop.value._render_traceback_() == [f"\x1b[0;31mPiecesMissing\x1b[0m: {message}"]


def test_the_courses_notebook_imported_as_a_module_never_reads_the_learners(course_here, capsys):
    module = reference.load_cells(paths.solutions_dir() / "09_attention.ipynb", "probe_reference_09",
                                  reference.REFERENCE)
    assert capsys.readouterr().out == ""  # quiet, and on the course's pieces
    assert module.split_heads is reference.ref("02_shapes_and_matmul", "split_heads")
    assert module.earlier.whose("masked_softmax") == pieces.COURSE


def test_a_notebook_with_no_earlier_pieces_is_refused_by_name():
    with pytest.raises(ValueError, match="05_gradients_and_chain_rule, 09_attention, 10_decoder_block"):
        pieces.use_pieces("04_softmax_and_probability")


# ------------------------------------------------- a failing check in a real kernel shows only its message

def test_a_failing_check_in_a_kernel_shows_its_message_not_our_frames_and_stops_run_all(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy as np\nfrom autograder.checks import nb03 as check"),
        nbformat.v4.new_code_cell("check.score_table(lambda Q, K: Q @ K)  # no transpose: a shape error"),
        nbformat.v4.new_code_cell("print('after the failure')"),
    ])
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    ran = execute(path, "python3", {})
    error = ran.cells[1].outputs[-1]
    assert error.output_type == "error" and error.ename == "CheckFailure"
    shown = "\n".join(error.traceback)
    assert "score_table" in shown and shown.startswith("\x1b[0;31mCheckFailure")
    assert not any(f"{m}.py" in shown for m in ("core", "compare", "registry")), shown  # the message, not our frames
    assert "def fail" not in shown and "Traceback" not in shown, shown
    assert ran.cells[2].outputs == []  # Run All stopped at the failure


# ----------------------------------------------- slow: the students' image, nbgrader's layout, whole notebooks

@pytest.fixture(scope="module")
def students(tmp_path_factory):
    """The students' image: the course's wheel in a fresh venv whose other packages are this venv's (as
    --system-site-packages would give), a kernel of it, and no solutions/ anywhere it can see."""
    root = tmp_path_factory.mktemp("students")
    wheel = build_wheel(root / "wheel")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)], check=True, capture_output=True, timeout=300)
    # A plain path line: the folder is appended to sys.path, its own .pth files (our editable install) are not read.
    (site / "zz_shared_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    kernels = root / "jupyter" / "kernels" / "students"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "students' image", "language": "python"}))
    env = {"JUPYTER_PATH": str(root / "jupyter"), "PYTHONHASHSEED": "0"}
    return {"root": root, "wheel": wheel, "python": python, "env": env}


@pytest.fixture(scope="module")
def fetched_runs(students):
    """05, 09 and 10 run top to bottom in the students' image on the learner's notebooks in nbgrader's layout."""
    course = lay_out(students["root"] / "course", fetched=True)
    runs = {}
    for assignment in ("05_gradients_and_chain_rule", "09_attention", "10_decoder_block"):
        log = students["root"] / f"calls-{assignment[:2]}.txt"
        env = {**students["env"], "LEARNER_CALLS": str(log)}
        if assignment == "10_decoder_block":
            # 10 as the Validate button runs it (nbgrader sets NBGRADER_EXECUTION=validate, which takes the
            # learner's pieces, not the course's): its demos train 20 steps instead of 200, the same code on
            # the same pieces; nbval runs the full training of the solution (30 core-s saved here)
            env["NBGRADER_EXECUTION"] = "validate"
        # Every check of 10 runs here too: the checks' own models use the learner's 09 (models.torch_gpt.attention09)
        nb = execute(course / assignment / f"{assignment}.ipynb", "students", env)
        runs[assignment] = (nb, calls(log))
    return runs


@pytest.mark.slow
def test_the_wheel_holds_no_earlier_answer(students):
    with zipfile.ZipFile(students["wheel"]) as wheel:
        names = wheel.namelist()
        text = "\n".join(wheel.read(n).decode("utf-8", "replace") for n in names)
    assert not [n for n in names if n.endswith(".ipynb") or "solutions/" in n], names
    assert "### BEGIN SOLUTION" not in text
    for piece in {p for ps in pieces.NEEDS.values() for p in ps}:
        nb = nbformat.read(paths.solutions_dir() / f"{piece.assignment}.ipynb", as_version=4)
        for cell in nb.cells:
            if is_solution_cell(cell) and grade_id(cell) == piece.name:
                answer = SOLUTION.search(cell.source).group(0)
                body = [l.strip() for l in answer.splitlines() if l.strip() and "###" not in l]
                assert not all(line in text for line in body), f"the wheel holds {piece.name}'s answer"


@pytest.mark.slow
def test_the_students_image_has_no_solutions(students):
    probe = ("import autograder, json; from autograder import paths, reference; "
             "print(json.dumps([autograder.__file__, paths.solutions_dir().exists(), "
             "reference.available('09_attention')]))")
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_ROOT"}
    where, has_solutions, available = json.loads(subprocess.run(
        [str(students["python"]), "-c", probe], check=True, capture_output=True, text=True, env=env,
        cwd=students["root"]).stdout)  # python -c puts its folder first on sys.path: not this checkout
    assert where.startswith(str(students["root"])) and not has_solutions and not available


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ["05_gradients_and_chain_rule", "09_attention", "10_decoder_block"])
def test_the_capstones_run_top_to_bottom_on_the_learners_pieces(fetched_runs, assignment):
    nb, called = fetched_runs[assignment]
    assert not errors(nb), errors(nb)
    lines = setup_lines(nb)
    assert len(lines) == len(pieces.NEEDS[assignment]), lines
    for piece, line in zip(pieces.NEEDS[assignment], lines):
        assert f"({piece.assignment[:2]}) yours: from ../{piece.assignment}/{piece.assignment}.ipynb" in line, line
        if piece.exercise:  # called by this notebook's own cells, not only by the checks
            assert "notebook" in called.get(piece.name, set()), (piece.name, called)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert last.execution_count is not None  # Run All reached the last cell


@pytest.mark.slow
def test_the_tiny_gpt_says_it_trains_on_the_learners_attention(fetched_runs):
    nb, _ = fetched_runs["10_decoder_block"]
    said = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
    assert "The tiny GPT below trains on the MultiHeadAttention of 09 that is yours." in said


@pytest.mark.slow
def test_without_08_notebook_09_stops_with_one_message_naming_what_to_finish(students):
    course = lay_out(students["root"] / "course-without-08", fetched=True)
    shutil.rmtree(course / "08_causality_and_masking")
    nb = execute(course / "09_attention" / "09_attention.ipynb", "students", students["env"])
    setup = next(c for c in nb.cells if "setup" in c.metadata.get("tags", []))
    error = [o for o in setup.outputs if o.output_type == "error"]
    assert [o.ename for o in error] == ["PiecesMissing"]
    shown = "\n".join(error[0].traceback)
    for name in ("masked_softmax", "is_causal"):
        assert f"{name} in 08_causality_and_masking.ipynb" in shown, shown
    assert "ReferenceUnavailable" not in shown and "Traceback" not in shown and "pieces.py" not in shown
    later = nb.cells[nb.cells.index(setup) + 1:]
    assert not any(c.get("outputs") for c in later)  # Run All stopped at the set-up cell


@pytest.mark.slow
def test_in_the_repository_layout_09_runs_on_the_learners_pieces(tmp_path):
    course = lay_out(tmp_path / "notebooks", fetched=False)
    log = tmp_path / "calls.txt"
    nb = execute(course / "09_attention.ipynb", "python3", {"LEARNER_CALLS": str(log), "PYTHONHASHSEED": "0"})
    assert not errors(nb), errors(nb)  # the course's solutions are installed here: every check runs
    for piece, line in zip(pieces.NEEDS["09_attention"], setup_lines(nb)):
        assert f"yours: from {piece.assignment}.ipynb, its check passes" in line, line
    called = calls(log)
    assert all("notebook" in called.get(p.name, set()) for p in pieces.NEEDS["09_attention"]), called
