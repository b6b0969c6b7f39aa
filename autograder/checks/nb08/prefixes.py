"""Notebook 08's headline measurement: ``prefix_logits(model, ids)``, what a model says at each position when it
is given only the ids up to that position, as when it generates.

The check runs the learner's function on made-up models whose logits are a known NumPy function of the ids they
are given: one reads the next token and the whole input (a cheat, as the unmasked model of the notebook), one
reads only the past. The models are torch modules built inside ``call`` (the notebook's models are), so learner
code written for tensors runs; the expected values and the known wrong readings are NumPy, recomputed here.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close
from ..hints import known_mistakes, numbers
from ..toolkit import import_torch, stable_softmax
from .common import check


class Toy:
    """A made-up language model over V tokens: logits (N, t, V) of ids (N, t), a fixed NumPy function.

    Position s scores A[ids[s]] + C[s] + the mean of D over the ids it reads; a cheat also adds B[ids[s + 1]] (the
    next token, when the input has one) and reads every id of its input for that mean, a causal one only ids[: s + 1].
    """

    def __init__(self, rng: np.random.Generator, V: int, T: int, cheats: bool):
        self.A, self.B, self.D = (rng.normal(size=(V, V)) for _ in range(3))
        self.C = rng.normal(size=(T, V))
        self.cheats = cheats

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        N, t = ids.shape
        if t == 0:
            raise ValueError(f"the model was given no token at all, ids of shape {ids.shape}: the position whose "
                             "guess you want has read at least its own token.")
        if t > len(self.C):
            raise ValueError(f"the model was given {t} positions, more than the windows' {len(self.C)}.")
        out = self.A[ids] + self.C[:t]  # (N, t, V)
        if self.cheats:
            out[:, :-1] += self.B[ids[:, 1:]]  # position s reads the token after it
            out += self.D[ids].mean(axis=1, keepdims=True)  # and every token of its input
        else:
            out += np.cumsum(self.D[ids], axis=1) / np.arange(1, t + 1)[:, None]  # only the tokens up to it
        return out


def as_module(toy: Toy):
    """The toy as a torch module: long ids (N, t) in, float32 logits (N, t, V) out, as the notebook's models."""
    torch = import_torch()

    class ToyLM(torch.nn.Module):
        def forward(self, ids):
            return torch.tensor(toy(ids.detach().cpu().numpy() if hasattr(ids, "detach") else ids),
                                dtype=torch.float32)

    return ToyLM().eval()


def prefix_np(model, ids: np.ndarray, how: str = "right") -> np.ndarray:
    """(N, T, V): the right prefix logits of ``model`` on ``ids``, or a known wrong reading of them."""
    T = ids.shape[1]
    if how == "whole":
        return model(ids)
    if how == "probabilities":
        return stable_softmax(prefix_np(model, ids))
    if how == "transposed":
        return np.swapaxes(prefix_np(model, ids), 0, 1)
    rows = {"right": lambda t: model(ids[:, : t + 1])[:, -1],
            "first_row": lambda t: model(ids[:, : t + 1])[:, 0],
            "one_more": lambda t: model(ids[:, : t + 2])[:, t]}[how]
    return np.stack([rows(t) for t in range(T)], axis=1)


MESSAGES = {  # the symptom each wrong reading shows
    "whole": "Your row t moves when the ids after position t change: at position t the model could still read the "
             "tokens that follow it, as on a whole window. As it generates, those tokens do not exist yet.",
    "one_more": "Your row t (all but the last) still moves when the id at position t + 1 changes: one token of the "
                "future is still in view.",
    "first_row": "Your rows do not follow their own position: every row t is the model's guess at position 0 of its "
                 "input, not the one it makes at position t, when the text ends there.",
    "probabilities": "Each of your rows sums to 1: those are probabilities. The loss cell wants the model's logits, "
                     "what the model returns.",
}


def _transposed_hint(T: int, N: int):
    def hint(got, want):
        g = numbers(got)
        if g is not None and g.ndim == 3 and g.shape[:2] == (T, N) and (T, N) != (N, T):
            return (f"Your answer has shape {g.shape}: the positions came out on the first axis. The windows stay on "
                    "the first axis and the positions go on the second, as in model(ids).")
        return None
    return hint


def _case(label: str, rng: np.random.Generator, N: int, T: int, V: int, cheats: bool) -> Case:
    toy = Toy(rng, V, T, cheats)
    ids = rng.integers(0, V, size=(N, T))

    def call(fn):
        torch = import_torch()
        with torch.no_grad():
            return fn(as_module(toy), torch.tensor(ids))

    mistakes = known_mistakes(*((lambda how=how: prefix_np(toy, ids, how), MESSAGES[how]) for how in MESSAGES),
                              atol=1e-4, rtol=1e-4)
    def want():
        return import_torch().tensor(prefix_np(toy, ids), dtype=import_torch().float32)

    return Case(label, call, want, close(atol=1e-4, rtol=1e-4, kind="tensor", dtype="f"),
                hints=[_transposed_hint(T, N), mistakes])


@check
def prefix_logits(hidden, rng):
    if not hidden:
        return [_case("prefix_logits(model, ids) with a model that reads its whole input, future included, "
                      "ids of shape (3, 5), V = 4", rng, 3, 5, 4, cheats=True),
                _case("prefix_logits(model, ids) with a model that reads only the past, ids (2, 4), V = 6",
                      rng, 2, 4, 6, cheats=False)]
    return [_case("prefix_logits with a model that reads its future, ids (4, 7), V = 5", rng, 4, 7, 5, cheats=True),
            _case("prefix_logits with a window of one position, ids (2, 1), V = 3", rng, 2, 1, 3, cheats=True),
            _case("prefix_logits with a causal model, ids (3, 6), V = 5", rng, 3, 6, 5, cheats=False)]
