"""Does the learner's own code run the course? 05, 09 and 10 build on earlier pieces (autograder.pieces).

A learner's ten notebooks are laid out here with correct code written differently from the course's, and
a probe in each of the learner's pieces writes down who called it: a check (a frame of the autograder.checks
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
import time
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from autograder import paths, pieces, reference
from autograder.engine.kernel_client import SlicedWaits  # a wait that misses a message finds it within a second
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
        if f"{os.sep}autograder{os.sep}checks{os.sep}" in frame.f_code.co_filename:  # not pieces.py's joints
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
ids = np.asarray(ids)
if np.any((ids < 0) | (ids >= E.shape[0])):  # 01's contract: one_hot's refusals, so no -1 wraps round
    raise ValueError(f"id {ids[(ids < 0) | (ids >= E.shape[0])].flat[0]} is outside [0, {E.shape[0]})")
return np.take(E, ids, axis=0)''',
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
if Q.ndim >= 3 and K.ndim >= 3 and Q.shape[-3] % K.shape[-3]:
    raise ValueError(f"{Q.shape[-3]} query heads cannot share {K.shape[-3]} key heads")
if Q.ndim >= 3 and K.ndim >= 3:  # each key head serves its group of consecutive query heads
    K = np.stack([K[..., h * K.shape[-3] // Q.shape[-3], :, :] for h in range(Q.shape[-3])], axis=-3)
return np.einsum("...id,...jd->...ij", Q, K)''',
    # 05's backward pieces, which 09's manual backward pass through one head runs on
    "linear_backward": '''
lead = list(range(x.ndim - 1))  # every axis but the features: summed over
grad_W = np.tensordot(x, grad_out, axes=(lead, lead))
grad_x = np.einsum("...o,io->...i", grad_out, W)
return grad_x, grad_W''',
    "softmax_jacobian": '''
p = np.asarray(p, dtype=float)
J = -p[:, None] * p[None, :]
J[np.arange(len(p)), np.arange(len(p))] += p
return J''',
    "embedding_backward": '''
ids = np.asarray(ids)
grad_out = np.asarray(grad_out, dtype=float)
if grad_out.shape[:-1] != ids.shape:
    raise ValueError(f"grad_out has leading shape {grad_out.shape[:-1]}, ids {ids.shape}: one row per id")
flat = ids.ravel()
if flat.size and (flat.min() < 0 or flat.max() >= vocab_size):
    raise ValueError(f"an id is outside [0, {vocab_size})")
grad = np.zeros((vocab_size, grad_out.shape[-1]))
for i, row in zip(flat, grad_out.reshape(len(flat), -1)):
    grad[i] += row
return grad''',
    # 05's tanh RNN, the encoder of 09's translation model
    "rnn_forward": '''
steps, state = [], h0
for x_t in x.unbind(dim=-2):
    state = torch.tanh(state @ W_h.T + x_t @ W_x.T + b)
    steps.append(state)
return torch.stack(steps, dim=-2)''',
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

# The "minimal" learner: each piece does exactly what its own exercise states and nothing more (NumPy
# only where the exercise says NumPy, no dtype or batch-axis generosity). Every later notebook must run on
# these: a piece that passes its own check works wherever it is used (08's is_causal on torch layers in 09
# and 10 goes through the joint, autograder.pieces.causal_on_tensors).
MINIMAL = {
    "build_vocab": '''
counts = {}
for tok in tokens:
    counts[tok] = counts.get(tok, 0) + 1
rest = sorted((t for t in counts if t not in specials), key=lambda t: (-counts[t], t))
return {tok: i for i, tok in enumerate(list(specials) + rest)}''',
    "encode": '''
return [vocab.get(tok, vocab[unk]) for tok in tokens]''',
    "decode": '''
inverse = {i: tok for tok, i in vocab.items()}
return [inverse[i] for i in ids]''',
    "embedding_lookup": '''
if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
    raise ValueError("id outside [0, V)")
return E[ids]''',
    "cross_entropy": '''
m = logits.max(axis=1, keepdims=True)
log_p = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
return float(-log_p[np.arange(len(targets)), targets].mean())''',
    "sample_token": LEARNER["sample_token"],
    "split_heads": '''
B, T, d = x.shape
if d % n_heads != 0:
    raise ValueError("n_heads must divide d")
return x.reshape(B, T, n_heads, d // n_heads).transpose(0, 2, 1, 3)''',
    "merge_heads": '''
B, H, T, D = x.shape
return x.transpose(0, 2, 1, 3).reshape(B, T, H * D)''',
    "score_table": '''
if Q.ndim >= 3 and K.ndim >= 3 and K.shape[-3] != Q.shape[-3]:
    if Q.shape[-3] % K.shape[-3]:
        raise ValueError("the key heads cannot be shared evenly")
    K = np.repeat(K, Q.shape[-3] // K.shape[-3], axis=-3)
return Q @ np.swapaxes(K, -1, -2)''',  # 03 asks for any batch axes and shared key heads, so K.T no longer passes
    # 05's backward pieces as their exercises state them: 2-D x and grad_out, a 1-D p
    "linear_backward": '''
return grad_out @ W.T, x.T @ grad_out''',
    "softmax_jacobian": '''
return np.diag(p) - np.outer(p, p)''',
    "embedding_backward": '''
if np.shape(grad_out)[:-1] != np.shape(ids):
    raise ValueError("grad_out needs one row per id")
if np.size(ids) and (np.min(ids) < 0 or np.max(ids) >= vocab_size):
    raise ValueError("an id is outside the table")
grad = np.zeros((vocab_size, np.shape(grad_out)[-1]))
np.add.at(grad, np.ravel(ids), np.reshape(grad_out, (-1, np.shape(grad_out)[-1])))
return grad''',
    "rnn_forward": '''
H = torch.empty(*x.shape[:-1], W_h.shape[0], dtype=x.dtype)
h = h0
for t in range(x.shape[-2]):
    h = torch.tanh(torch.einsum("...j,ij->...i", h, W_h) + torch.einsum("...j,ij->...i", x[..., t, :], W_x) + b)
    H[..., t, :] = h
return H''',
    "softmax": '''
e = np.exp(z - np.max(z, axis=axis, keepdims=True))
return e / np.sum(e, axis=axis, keepdims=True)''',
    "apply_rope": '''
T, D = x.shape[-2], x.shape[-1]
if D % 2 != 0:
    raise ValueError("D must be even")
p = np.arange(T) if positions is None else positions
angle = np.outer(p, base ** (-np.arange(0, D, 2) / D))
a, b = x[..., 0::2], x[..., 1::2]
out = np.empty(x.shape)
out[..., 0::2] = a * np.cos(angle) - b * np.sin(angle)
out[..., 1::2] = a * np.sin(angle) + b * np.cos(angle)
return out''',
    "masked_softmax": '''
allowed = np.broadcast_to(allowed, scores.shape)
empty = np.argwhere(~allowed.any(axis=-1))
if len(empty):
    raise ValueError(f"row {tuple(empty[0].tolist())} keeps no key: allow at least one key in it")
s = np.where(allowed, scores, -np.inf)
e = np.exp(s - s.max(axis=-1, keepdims=True))
return e / e.sum(axis=-1, keepdims=True)''',
    "is_causal": '''
rng = np.random.default_rng(0)
before = fn(x)
for t in range(len(x) - 1):
    x2 = x.copy()
    x2[t + 1:] = x2[t + 1:] + rng.normal(size=x2[t + 1:].shape)
    if not np.allclose(fn(x2)[: t + 1], before[: t + 1]):
        return False
return True''',
    "sinusoidal_positions": '''
if d % 2 != 0:
    raise ValueError("d must be even")
PE = np.zeros((T, d))
for p in range(T):
    for k in range(d // 2):
        w = base ** (-2 * k / d)
        PE[p, 2 * k] = np.sin(p * w)
        PE[p, 2 * k + 1] = np.cos(p * w)
return PE''',
    "scaled_dot_product_attention": '''
scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
if mask is not None:
    empty = (~mask).all(dim=-1)
    if empty.any():
        raise ValueError(f"row {torch.nonzero(empty)[0].tolist()} of the mask keeps no key")
    scores = scores.masked_fill(~mask, float("-inf"))
weights = torch.softmax(scores, dim=-1)
return weights @ v, weights''',
    "MultiHeadAttention": '''
if mask is not None and mask.dim() == 3:
    raise ValueError("a 3-D mask is ambiguous")
if context is None:
    context = x
B, Tq, _ = x.shape
Tk = context.shape[1]
H, D = self.n_heads, self.d_head
q = self.w_q(x).view(B, Tq, H, D).transpose(1, 2)
k = self.w_k(context).view(B, Tk, H, D).transpose(1, 2)
v = self.w_v(context).view(B, Tk, H, D).transpose(1, 2)
if self.rope:
    q = apply_rope_torch(q, np.arange(Tq) + q_start, self.rope_base)
    k = apply_rope_torch(k, np.arange(Tk), self.rope_base)
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.transpose(1, 2).reshape(B, Tq, H * D))''',
}

SOLUTION = re.compile(r"^( *)### BEGIN SOLUTION\n.*?^ *### END SOLUTION\n?", re.S | re.M)


def log_of_softmax(path: Path) -> None:
    """Write the learner's 04 at ``path`` with a cross_entropy taken as log(softmax): right on small logits,
    not finite on extreme ones, so it fails its check (the issue's learner)."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "cross_entropy")
    cell.source = ("def cross_entropy(logits, targets):\n"
                   "    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)\n"
                   "    return float(-np.log(p[np.arange(len(targets)), targets]).mean())\n")
    nbformat.write(nb, path)


def learner_cell(source: str, name: str, bodies: dict[str, str] = LEARNER) -> str:
    """The course's solution cell with the learner's body for ``name`` (or the course's, markers dropped)."""
    if name not in bodies:
        return SOLUTION.sub(lambda m: _strip_markers(m.group(0)), source)
    body = f'_seen("{name}")' + bodies[name]
    return PROBE + "\n\n" + SOLUTION.sub(lambda m: textwrap.indent(body, m.group(1)) + "\n", source)


def _strip_markers(region: str) -> str:
    return "".join(line for line in region.splitlines(keepends=True) if "### " not in line)


def learner_notebook(assignment: str, bodies: dict[str, str] = LEARNER) -> nbformat.NotebookNode:
    """The learner's saved notebook: the released one, each exercise answered (the pieces our own way)."""
    answers = {grade_id(c): c.source for c in nbformat.read(paths.solutions_dir() / f"{assignment}.ipynb",
                                                             as_version=4).cells if is_solution_cell(c)}
    nb = nbformat.read(paths.notebooks_dir() / f"{assignment}.ipynb", as_version=4)
    for cell in nb.cells:
        if is_solution_cell(cell):
            cell.source = learner_cell(answers[grade_id(cell)], grade_id(cell), bodies)
    return nb


def lay_out(course: Path, *, fetched: bool, bodies: dict[str, str] = LEARNER) -> Path:
    """The learner's ten notebooks as nbgrader fetches them (``course/NN_slug/NN_slug.ipynb``), or side by side
    in one folder as in this repository's notebooks/. Returns ``course``."""
    for assignment in ASSIGNMENTS:
        folder = course / assignment if fetched else course
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(learner_notebook(assignment, bodies), folder / f"{assignment}.ipynb")
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




def slowest_cells(nb: nbformat.NotebookNode, most: int = 3) -> list[tuple[float, str]]:
    """(seconds, first line) of the notebook's slowest executed cells, from nbclient's timing metadata."""
    from datetime import datetime
    found = []
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if cell.cell_type == "code" and start and end:
            seconds = (datetime.fromisoformat(end.replace("Z", "+00:00"))
                       - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
            found.append((seconds, (cell.source.strip().splitlines() or [""])[0][:60]))
    return sorted(found, reverse=True)[:most]


def execute(path: Path, kernel: str, env: dict[str, str], *, allow: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in its own folder (as JupyterLab's Run All does); stops at an error
    unless its name is in ``allow``.

    Once, on a loaded machine, a fresh kernel never saw the first cell's request (it sat idle, 2 s of CPU,
    while the client waited for its reply): a cell that outlives the timeout is run again once in a new
    kernel, with a warning; a notebook that hangs twice fails. The slowest honest cell takes about 30 s (10's
    training, in the test command's busiest minute), so a hang costs 120 s, not the 240 s one once cost in CI."""
    old = dict(os.environ)
    for var in ("NBGRADER_EXECUTION", core.MODE_ENV, core.SEED_ENV, "AUTOGRADER_ROOT", "MPLBACKEND"):
        os.environ.pop(var, None)
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        for attempt in (1, 2):
            nb = nbformat.read(path, as_version=4)
            client = SlicedWaits(nb, kernel_name=kernel, timeout=120, allow_error_names=list(allow),
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
            slow = slowest_cells(nb)
            if sum(seconds for seconds, _ in slow) > 60:  # these runs take 5-40 s; twice in CI one took 150-240 s
                warnings.warn(f"{path.name} ran slowly; its slowest cells: " +
                              "; ".join(f"{seconds:.0f} s: {start!r}" for seconds, start in slow))
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
    cell.source = cell.source.replace('np.einsum("...id,...jd->...ij", Q, K)', 'np.einsum("...id,...jd->...ji", Q, K)')
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


def test_a_wrong_my_notebooks_is_one_sentence_naming_it_and_the_set_up_goes_on(course_here, capsys):
    earlier = pieces.use_pieces("05_gradients_and_chain_rule", folder="~/no-such-course-folder")
    first, *rest = capsys.readouterr().out.splitlines()
    assert first.startswith("MY_NOTEBOOKS = '~/no-such-course-folder' is not a folder here")
    assert first.count(". ") == 0 and "folder=" not in first and "Traceback" not in first, first
    assert len(rest) == len(pieces.NEEDS["05_gradients_and_chain_rule"])  # and it looked beside the notebook
    assert all(earlier.whose(p.name) == pieces.YOURS for p in pieces.NEEDS["05_gradients_and_chain_rule"])


@pytest.fixture
def no_course(tmp_path, monkeypatch):
    """A students' machine, in this process: no solutions/ to stand in, outside any grading; the minimal
    learner's ten notebooks in ``course/``, an empty folder in ``empty/``."""
    lay_out(tmp_path / "course", fetched=False, bodies=MINIMAL)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("AUTOGRADER_ROOT", str(tmp_path / "no-course"))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(core.SETTINGS, "mode", "local")
    reference.import_notebook.cache_clear()
    yield tmp_path
    reference.import_notebook.cache_clear()


def test_without_the_learners_notebook_nor_the_course_the_set_up_goes_on_with_stand_ins(no_course, monkeypatch,
                                                                                         capsys):
    monkeypatch.chdir(no_course / "empty")
    earlier = pieces.use_pieces("05_gradients_and_chain_rule")  # never raises: Run All goes on
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(pieces.NEEDS["05_gradients_and_chain_rule"])
    assert all(" not ready: no saved " in line and "a cell that calls it will say what to do" in line
               for line in lines), lines
    with pytest.raises(pieces.PieceNotReady) as stop:
        earlier["cross_entropy"](np.zeros((1, 2)), np.array([0]))
    message = str(stop.value)
    assert message.splitlines()[0] == ("cross_entropy (04_softmax_and_probability.ipynb) is not ready: fix it there "
                                       "first, then rerun this notebook's set-up cell.")
    assert "What to do: open 04_softmax_and_probability.ipynb" in message and "ReferenceUnavailable" not in message
    assert stop.value._render_traceback_() == [f"\x1b[0;31mPieceNotReady\x1b[0m: {message}"]
    with pytest.raises(pieces.PieceNotReady):
        earlier["embedding_lookup"].anything  # an attribute, as attn.w_q would be read
    assert "not ready" in repr(earlier["decode"])


def test_a_piece_failing_its_check_stands_in_with_the_whole_check_message(no_course, monkeypatch, capsys):
    course = no_course / "course"
    log_of_softmax(course / "04_softmax_and_probability.ipynb")
    monkeypatch.chdir(course)
    earlier = pieces.use_pieces("05_gradients_and_chain_rule")
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("cross_entropy"))
    assert "(04) not ready: your cross_entropy does not pass its check yet" in line, line
    assert earlier.whose("cross_entropy") == pieces.NOT_READY and earlier.whose("sample_token") == pieces.YOURS
    with pytest.raises(pieces.PieceNotReady) as stop:
        earlier["cross_entropy"](np.zeros((1, 2)), np.array([0]))
    said = str(stop.value)
    check_message = said.split("Its check says:\n", 1)[1].split("\nWhat to do:", 1)[0]
    assert len(check_message) > 200, check_message  # whole, never cut at 200 characters
    assert check_message.rstrip().endswith((".", ")", "?")), check_message  # ends where the check's own ends


def test_use_my_pieces_false_without_the_courses_says_so_and_runs_on_yours(no_course, monkeypatch, capsys):
    monkeypatch.chdir(no_course / "course")
    earlier = pieces.use_pieces("09_attention", mine=False)
    first, *rest = capsys.readouterr().out.splitlines()
    assert first == ("USE_MY_PIECES = False asks for the course's versions, which are not installed here, so this "
                     "notebook runs on your own pieces.")
    assert all(earlier.whose(p.name) == pieces.YOURS for p in pieces.NEEDS["09_attention"]), rest
    assert not any("missing" in line or "Finish each one" in line for line in rest)


def test_a_numpy_only_is_causal_works_on_torch_layers_at_the_joint(course_here):
    import torch
    earlier = pieces.use_pieces("10_decoder_block", quiet=True)
    minimal = lay_out(course_here / "minimal", fetched=False, bodies=MINIMAL)
    mine = reference.load_cells(minimal / "08_causality_and_masking.ipynb", "probe_minimal_08", None).is_causal
    x = torch.randn(5, 4, requires_grad=True)
    causal, leaky = (lambda s: s.cumsum(0)), (lambda s: s.flip(0).cumsum(0).flip(0))
    with pytest.raises(AttributeError):  # what 09 met: the exercise asked for NumPy arrays only
        mine(causal, x)
    joined = pieces.causal_on_tensors(mine)
    assert joined(causal, x) is True and joined(leaky, x) is False
    assert joined(causal, x.detach().numpy()) is True  # NumPy passes straight through
    assert earlier["is_causal"](causal, x) is True and earlier["is_causal"](leaky, x) is False


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
    """05, 09 and 10 run top to bottom in the students' image on the minimal learner's notebooks (each piece
    does only what its exercise states) in nbgrader's layout; the learner who writes more generously runs 09
    in the repository's layout below."""
    course = lay_out(students["root"] / "course", fetched=True, bodies=MINIMAL)
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
        start = time.perf_counter()
        nb = execute(course / assignment / f"{assignment}.ipynb", "students", env)
        runs[assignment] = (nb, calls(log), time.perf_counter() - start)
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
def test_the_capstones_run_top_to_bottom_on_the_learners_pieces(fetched_runs, assignment, record_property):
    nb, called, seconds = fetched_runs[assignment]
    record_property("run_all_seconds", round(seconds, 1))  # 10's Run All is meant to stay under 2 minutes
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
    nb, _, _ = fetched_runs["10_decoder_block"]
    said = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
    assert "The tiny GPT below trains on the MultiHeadAttention of 09 that is yours." in said


def first_error(nb: nbformat.NotebookNode) -> tuple[int, Any]:
    """(index among the code cells, the error output) of the first cell that failed."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code):
        for out in cell.outputs:
            if out.output_type == "error":
                return i, out
    raise AssertionError("no cell failed")


def assert_stops_lazily(nb: nbformat.NotebookNode, piece: str, notebook: str) -> str:
    """The set-up cell ran and said the piece is not ready; every cell before the first that failed ran
    without an error; that cell (a demo that calls the piece, or the check of an exercise whose code calls it)
    stops with the piece's whole message, in a sentence, without our frames. Returns what it showed."""
    setup = next(c for c in nb.cells if "setup" in c.metadata.get("tags", []))
    assert not [o for o in setup.outputs if o.output_type == "error"], setup.outputs
    line = next(l for l in setup_lines(nb) if l.startswith(piece + " "))
    assert "not ready" in line, line
    index, error = first_error(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    shown = "\n".join(error.traceback)
    assert error.ename in ("PieceNotReady", "CheckFailure"), (error.ename, shown)
    assert f"{piece} ({notebook}.ipynb) is not ready: fix it there first" in shown, shown
    assert "Traceback" not in shown and "pieces.py" not in shown and "What to do:" in shown, shown
    assert all(c.execution_count is not None for c in code[:index])  # every cell before it ran
    assert index > code.index(setup) + 1, "the first cell after the set-up should not need it"
    return shown


@pytest.mark.slow
def test_without_08_notebook_09_runs_until_a_cell_calls_an_08_piece(students):
    course = lay_out(students["root"] / "course-without-08", fetched=True, bodies=MINIMAL)
    shutil.rmtree(course / "08_causality_and_masking")
    nb = execute(course / "09_attention" / "09_attention.ipynb", "students", students["env"])
    assert_stops_lazily(nb, "masked_softmax", "08_causality_and_masking")
    lines = setup_lines(nb)
    # 08's two pieces are not ready; every other piece 09 needs is the learner's
    assert sum("not ready" in l for l in lines) == 2, lines
    assert sum(" yours: " in l for l in lines) == len(pieces.NEEDS["09_attention"]) - 2, lines


@pytest.mark.slow
def test_a_cross_entropy_failing_its_check_stops_05_only_at_the_capstone(students):
    course = lay_out(students["root"] / "course-log-softmax", fetched=True, bodies=MINIMAL)
    log_of_softmax(course / "04_softmax_and_probability" / "04_softmax_and_probability.ipynb")
    ran = execute(course / "05_gradients_and_chain_rule" / "05_gradients_and_chain_rule.ipynb", "students",
                  students["env"])
    shown = assert_stops_lazily(ran, "cross_entropy", "04_softmax_and_probability")
    assert "Its check says:" in shown and "inf" in shown, shown  # the check's own words, whole


@pytest.mark.slow
def test_without_09_notebook_10_runs_until_a_cell_builds_attention(students):
    course = lay_out(students["root"] / "course-without-09", fetched=True, bodies=MINIMAL)
    shutil.rmtree(course / "09_attention")
    nb = execute(course / "10_decoder_block" / "10_decoder_block.ipynb", "students",
                 {**students["env"], "NBGRADER_EXECUTION": "validate"})
    index, error = first_error(nb)
    assert error.ename == "PieceNotReady", (error.ename, error.evalue)
    shown = "\n".join(error.traceback)
    assert "(09_attention.ipynb) is not ready: fix it there first" in shown and "Traceback" not in shown, shown
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code[:index]) and index > 2


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


@pytest.mark.slow
def test_validate_in_the_students_image_says_first_which_piece_stopped_a_cell(students):
    """validate on a 05 whose 04 cross_entropy fails its check: a plain first line, the stopped cell and its
    piece first (the hint within 100 characters), exercises not attempted on one line, exit 1; and exit 0
    for a notebook with nothing failed but exercises still to do."""
    course = lay_out(students["root"] / "course-validate", fetched=True, bodies=MINIMAL)
    log_of_softmax(course / "04_softmax_and_probability" / "04_softmax_and_probability.ipynb")
    five = course / "05_gradients_and_chain_rule" / "05_gradients_and_chain_rule.ipynb"
    nb = nbformat.read(five, as_version=4)
    released = {grade_id(c): c.source for c in nbformat.read(paths.notebooks_dir() / five.name, as_version=4).cells
                if is_solution_cell(c)}
    for cell in nb.cells:  # two exercises not done yet
        if is_solution_cell(cell) and grade_id(cell) in ("linear_backward", "adamw_step"):
            cell.source = released[grade_id(cell)]
    nbformat.write(nb, five)
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_ROOT", "NBGRADER_EXECUTION")}
    env.update(students["env"])

    def validate(notebook: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(students["python"]), "-m", "autograder", "validate", str(notebook)],
                              capture_output=True, text=True, env=env, cwd=notebook.parent, timeout=600)

    r = validate(five)
    lines = r.stdout.splitlines()
    assert lines[0] == f"{five.name}: running your notebook to check it (hidden tests run when your work is graded)"
    first = [l for l in lines if l.strip().startswith("first:")]
    assert first and "cross_entropy (04_softmax_and_probability.ipynb) is not ready: fix it there first" in first[0]
    assert "(it stopped the cell starting" in first[0], first[0]
    assert "fix it there first" in first[0].strip()[:100], first[0]
    assert r.stdout.index("first:") < r.stdout.index("visible checks:")
    waiting = [l for l in lines if l.strip().startswith("not attempted yet")]
    assert len(waiting) == 1 and "linear_backward" in waiting[0] and "adamw_step" in waiting[0], r.stdout
    assert "NotAttempted" not in r.stdout and "grader's sandbox" not in r.stdout, r.stdout
    assert r.returncode == 1, r.stdout + r.stderr
    r = validate(course / "04_softmax_and_probability" / "04_softmax_and_probability.ipynb")
    assert r.returncode == 1 and "failed        cross_entropy" in r.stdout, r.stdout
    r = validate(course / "06_sinusoids_and_positions" / "06_sinusoids_and_positions.ipynb")
    assert r.returncode == 0, r.stdout + r.stderr  # nothing failed
