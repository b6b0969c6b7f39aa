"""Right answers written slowly: what the course's time limits must never cut.

Grading gives each cell a limit from the course's own time for it (autograder/grade/submission/timelimits.py),
so a loop is stopped in seconds. A learner's correct code may still be much slower than the course's, and
must never be cut for it. Two kinds of slow, for every exercise:

* :func:`slowed`: any exercise, the course's own code made ``factor`` times slower, by spinning the CPU after
  each call for ``factor - 1`` times what the call took (recomputation without its side effects: a training
  step run twice would train twice). A class is slowed through its ``forward``.
* :data:`WRITTEN_SLOWLY`: a learner's own slow way, where one is typical: Python loops instead of vectorised
  NumPy, sums element by element, float64 everywhere, a LayerNorm that loops over the features.

:func:`slow_notebook` answers every exercise of a notebook one way or the other; the term benchmark hands
some in, and tests/grade/test_time_limits.py grades them.
"""
from __future__ import annotations

from autograder.checks.questions import is_question

# How much slower than the course's own code a slowed answer is: the course's whole cell (its checks
# included) may take 100 times its own time (TimePolicy.factor), so an answer 10 times slower than the
# course's keeps a margin of 10 for a machine busier than when the course's cells were timed (measured: on
# 2 cores shared with 8 busy processes, a cell took up to twice as long as when the reference ran). Loop-written
# functions on the checks' small inputs are slower still, but the checks' own work dominates those cells:
# the written-slowly answers below stand for them.
FACTOR = 10

SLOWLY = '''
import builtins as _builtins
import functools as _functools
import time as _time

# One count for every slowed answer of the notebook: a slowed DecoderBlock calls a slowed LayerNorm, and only
# the outer call spins, so every answer is FACTOR times slower, not FACTOR times per level of nesting.
_builtins.__dict__.setdefault("_slow_depth", [0])


def _slowly(fn, factor):
    """fn, giving the same results but taking ``factor`` times as long (CPU-bound: it spins)."""
    @_functools.wraps(fn)
    def slow(*args, **kwargs):
        depth = _builtins._slow_depth
        depth[0] += 1
        start = _time.perf_counter()
        try:
            result = fn(*args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            end = _time.perf_counter() + (factor - 1) * (_time.perf_counter() - start)
            while _time.perf_counter() < end:
                pass
        return result
    return slow
'''


def slowed(source: str, name: str, factor: int = FACTOR) -> str:
    """``source`` (an answer defining ``name``) with ``name`` made ``factor`` times slower."""
    wrap = (f"if isinstance({name}, type):\n    {name}.forward = _slowly({name}.forward, {factor})\n"
            f"else:\n    {name} = _slowly({name}, {factor})\n")
    return source.rstrip("\n") + "\n\n" + SLOWLY.strip("\n") + "\n\n\n" + wrap


# (assignment, exercise) -> a right answer a learner writes slowly
WRITTEN_SLOWLY: dict[tuple[str, str], str] = {
    ("03_dot_and_outer_products", "outer"): '''
def outer(a, b):
    table = np.zeros((len(a), len(b)), dtype=np.float64)
    for i in range(len(a)):
        for j in range(len(b)):
            table[i, j] = a[i] * b[j]
    return table.astype(np.result_type(a, b))
''',
    ("03_dot_and_outer_products", "score_table"): '''
def score_table(Q, K):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"the feature sizes differ: {Q.shape[-1]} and {K.shape[-1]}")
    if Q.ndim >= 3 and K.ndim >= 3 and K.shape[-3] != Q.shape[-3]:  # shared key heads, in consecutive groups
        if Q.shape[-3] % K.shape[-3]:
            raise ValueError("the key heads cannot be shared evenly")
        K = np.repeat(K, Q.shape[-3] // K.shape[-3], axis=-3)
    S = np.zeros(Q.shape[:-1] + (K.shape[-2],), dtype=np.float64)
    for batch in np.ndindex(*Q.shape[:-2]):  # every table of the batch, one entry at a time
        for i in range(Q.shape[-2]):
            for j in range(K.shape[-2]):
                for k in range(Q.shape[-1]):
                    S[batch + (i, j)] += Q[batch + (i, k)] * K[batch + (j, k)]
    return S.astype(np.result_type(Q, K))
''',
    ("04_softmax_and_probability", "softmax"): '''
def softmax(z, axis=-1):
    import math
    z = np.asarray(z, dtype=np.float64)
    moved = np.moveaxis(z, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, moved.shape[-1])
    out = np.zeros_like(rows)
    for r in range(rows.shape[0]):
        top = max(rows[r])
        exps = [math.exp(v - top) for v in rows[r]]
        total = sum(exps)
        for c in range(rows.shape[1]):
            out[r, c] = exps[c] / total
    return np.moveaxis(out.reshape(moved.shape), -1, axis)
''',
    ("10_decoder_block", "LayerNorm"): '''
class LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        d = x.shape[-1]
        mean = sum(x[..., i] for i in range(d)) / d  # one feature at a time
        var = sum((x[..., i] - mean) ** 2 for i in range(d)) / d
        out = torch.stack([(x[..., i] - mean) / torch.sqrt(var + self.eps) for i in range(d)], dim=-1)
        return out * self.weight + self.bias
''',
}


KINDS = ("slowed", "written")  # every answer slowed FACTOR times; or the written-slowly ones, the rest as given


def slow_answers(assignment: str, answers: dict[str, str], kind: str = "slowed",
                 factor: int = FACTOR) -> dict[str, str]:
    """exercise -> its right answer, slow: ``kind`` "slowed", the course's own code ``answers[exercise]`` made
    ``factor`` times slower; "written", the :data:`WRITTEN_SLOWLY` answers of ``assignment`` in place of the
    course's (which keep their speed: a slowed answer that calls a written-slowly one would be slow twice over,
    slower than any one learner's code). A prediction (a constant) stays as it is."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: name one of {', '.join(KINDS)}")
    slow = dict(answers)
    for exercise, source in answers.items():
        if kind == "written" and (assignment, exercise) in WRITTEN_SLOWLY:
            slow[exercise] = WRITTEN_SLOWLY[assignment, exercise].strip("\n") + "\n"
        elif kind == "slowed" and not is_question(assignment, exercise):
            slow[exercise] = slowed(source, exercise, factor)
    return slow


def written_slowly(assignment: str) -> list[str]:
    """The exercises of ``assignment`` that :data:`WRITTEN_SLOWLY` answers."""
    return [e for a, e in WRITTEN_SLOWLY if a == assignment]


def slow_notebook(assignment: str, kind: str = "slowed", factor: int = FACTOR):
    """The released notebook of ``assignment`` with every exercise answered right, and slowly (``kind``:
    :func:`slow_answers`)."""
    from tests.builders import blank_notebook, solutions, solve

    nb = blank_notebook(assignment)
    for exercise, source in slow_answers(assignment, solutions(assignment), kind, factor).items():
        solve(nb, exercise, source)
    return nb
