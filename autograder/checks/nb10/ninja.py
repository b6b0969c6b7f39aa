"""LayerNorm's backward pass derived node by node (layernorm_backward_nodes), checked node by node.

The forward pass is broken into named nodes (mu, xc, var, rstd, xhat, y); the learner returns the gradient of
L = sum(y * dy) with respect to each node, in the order a backward pass meets them (:data:`NODES`). The right
values are computed here in NumPy, node by node (the tests prove they equal PyTorch's autograd to 1e-12); the
check walks the nodes in that order and names the FIRST one that is missing, misshapen or off, with what is
seen in it (a constant factor, a sign, a difference that is the same across each row), never the line to write.
A later node is not judged while an earlier one is wrong: its error may be the earlier one carried along.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, predicate
from ..hints import numbers
from ..toolkit import import_torch
from .common import check

NODES = ("dxhat", "drstd", "dvar", "dxc", "dmu", "dx", "dgamma", "dbeta")  # the order the check walks
ATOL, RTOL = 1e-10, 1e-8  # float64 arithmetic summed in other orders stays some 1e-15 apart


def reference(dy: np.ndarray, x: np.ndarray, gamma: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """The gradient of sum(y * dy) at each node of LayerNorm's forward pass over the last axis of x (R, N)."""
    N = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc ** 2).mean(-1, keepdims=True)
    rstd = (var + eps) ** -0.5
    xhat = xc * rstd
    g = {"dxhat": dy * gamma}
    g["drstd"] = (g["dxhat"] * xc).sum(-1, keepdims=True)
    g["dvar"] = g["drstd"] * -0.5 * (var + eps) ** -1.5
    g["dxc"] = g["dxhat"] * rstd + g["dvar"] * 2.0 * xc / N  # xc feeds both xhat and var
    g["dmu"] = -g["dxc"].sum(-1, keepdims=True)
    g["dx"] = g["dxc"] + g["dmu"] / N  # x feeds both xc and mu
    g["dgamma"] = (dy * xhat).sum(0)
    g["dbeta"] = dy.sum(0)
    return g


FORKS = {"dxc": "xc", "dx": "x"}  # the nodes that feed two others: their gradient has two shares


def _where_to_look(name: str) -> str:
    if name == NODES[0]:
        return f"{name} is the first node: it needs only dy and the forward pass."
    look = f"The nodes before it agree with autograd, so look at the step that makes {name} from them"
    return look + (f": {FORKS[name]} feeds two nodes; does each of them send its share back?" if name in FORKS
                   else ".")


def _symptom(name: str, got: np.ndarray, want: np.ndarray) -> str:
    """What is seen in a wrong node: a constant factor, a difference constant along each row, or the largest gap."""
    diff = got - want
    i = np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape)
    where = f"the largest difference is {abs(diff[i]):.3g} at {list(map(int, i))} (yours {got[i]:.6g}, autograd's " \
            f"{want[i]:.6g})"
    if np.all(np.abs(want) > 1e-9):
        ratio = got / want
        r = float(np.median(ratio))
        if np.allclose(ratio, r, rtol=1e-3, atol=0):
            exact = np.allclose(ratio, round(r, 6), rtol=1e-9, atol=0)
            return (f"{name} is off: its values are {'' if exact else 'about '}{r:.4g} times what autograd gets. "
                    + _where_to_look(name))
    if diff.ndim == 2 and diff.shape[-1] > 1 and np.allclose(diff, diff[..., :1], atol=ATOL, rtol=1e-6):
        return (f"{name} is off: in each row, yours differs from autograd's by the same amount in every column "
                f"({', '.join(f'{v:.4g}' for v in diff[:, 0])} for the rows in turn); {where}. "
                + _where_to_look(name))
    return f"{name} is off: {where}. " + _where_to_look(name)


def judge(got, want) -> "str | None":
    """None if every node matches; else a message naming the first node that is missing, misshapen or off."""
    if not isinstance(got, dict):
        return (f"returned {type(got).__name__}, not a dict: return {{'dxhat': ..., 'drstd': ..., ...}} with the "
                f"eight nodes {', '.join(NODES)}.")
    for name in NODES:
        if name not in got:
            return (f"the dict has no {name!r} (it has {sorted(map(str, got))}): return all eight nodes, "
                    f"{', '.join(NODES)}.")
        mine, theirs = numbers(got[name]), numbers(want[name])
        if mine is None:
            return f"{name} is {type(got[name]).__name__}, not a tensor: return each node as a tensor."
        if mine.shape != theirs.shape:
            return (f"{name} has shape {tuple(mine.shape)}, but the node it is the gradient of has shape "
                    f"{tuple(theirs.shape)}: a gradient has the shape of its node (which axis was summed, or kept?).")
        if not np.all(np.isfinite(mine)):
            return f"{name} has nan or inf in it: autograd's is finite everywhere."
        if not np.allclose(mine, theirs, atol=ATOL, rtol=RTOL):
            return _symptom(name, mine.astype(np.float64), theirs)
    return None


def _case(label: str, rows: int, n: int, eps: float, rng) -> Case:
    x = rng.normal(size=(rows, n)) * rng.uniform(0.5, 3.0, size=(rows, 1)) + rng.normal(size=(rows, 1))
    gamma = 1.0 + 0.5 * rng.normal(size=n)
    dy = rng.normal(size=(rows, n))

    def call(fn):
        torch = import_torch()
        with torch.no_grad():
            out = fn(torch.tensor(dy), torch.tensor(x), torch.tensor(gamma), eps)
        if isinstance(out, dict):
            return {str(k): (v.detach() if isinstance(v, torch.Tensor) else v) for k, v in out.items()}
        return out

    return Case(f"{label}: x ({rows}, {n}) float64, eps={eps:g}, each node against autograd", call,
                lambda: reference(dy, x, gamma, eps), predicate(judge))


@check
def layernorm_backward_nodes(hidden, rng):
    if not hidden:
        return [_case("the notebook's size", 4, 5, 1e-5, np.random.default_rng(10)),
                _case("rows of 2 features", 3, 2, 1e-5, np.random.default_rng(11))]
    return [_case("a wider row", 3, 8, 1e-5, rng), _case("a large eps", 2, 6, 0.5, rng)]
