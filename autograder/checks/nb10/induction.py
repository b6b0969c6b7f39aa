"""The closing extension: induction_pairs, the (query, key) pairs an induction head reads.

An induction head at position q looks for the most recent earlier occurrence of q's token and reads the
position just after it (the token that followed last time). The hints recompute the known wrong readings of
that rule on the case's own tokens and name the one an answer matches.
"""
from __future__ import annotations

from ..compare import Case, equal
from ..hints import known_mistakes, numbers
from ..toolkit import import_torch
from .common import check

Pairs = list[tuple[int, int]]


def pairs_of(ids: list[int], *, after: int = 1, most_recent: bool = True, first_too: bool = False) -> Pairs:
    """The pairs by the rule, or by a known wrong reading of it (the tests and hints share this one function).

    after: how far past the earlier occurrence the key lies (1 is right); most_recent: the latest earlier
    occurrence (True is right) or the first; first_too: also pair a token's first occurrence with itself + after.
    """
    seen: dict[int, int] = {}
    pairs = []
    for q, token in enumerate(ids):
        if token in seen:
            pairs.append((q, seen[token] + after))
        elif first_too:
            pairs.append((q, q + after))
        if most_recent or token not in seen:
            seen[token] = q
    return pairs


MESSAGES = {
    "same_token": "Each key is the earlier occurrence of the query's own token: that is what the head matches "
                  "on, not what it reads. The prediction needs the token that came next last time.",
    "first_occurrence": "A token that occurred several times is paired with its first occurrence: the head reads "
                        "after the most recent one.",
    "first_too": "Tokens seen for the first time got a pair too: with no earlier occurrence there is nothing to "
                 "copy, so they have none.",
    "two_after": "Each key is two places after the earlier occurrence: one place after it is the token that "
                 "followed.",
    "one_offset": "Every pair has the same offset, as if the sequence repeated with one fixed period: look up each "
                  "token's own most recent occurrence, whatever the sequence.",
}


def _one_offset(got, want) -> "str | None":
    """The answer of code that assumed one fixed period: every query - key the same, where the right pairs differ."""
    g, w = numbers(got), numbers(want)
    if g is None or g.ndim != 2 or len(g) < 2 or (w is not None and g.shape == w.shape and (g == w).all()):
        return None
    return MESSAGES["one_offset"] if len(set((g[:, 0] - g[:, 1]).tolist())) == 1 else None


def _variants(ids: list[int]) -> dict[str, Pairs]:
    return {"same_token": pairs_of(ids, after=0), "first_occurrence": pairs_of(ids, most_recent=False),
            "first_too": pairs_of(ids, first_too=True), "two_after": pairs_of(ids, after=2)}


def _case(label: str, ids: list[int]) -> Case:
    variants = _variants(ids)

    def call(fn):
        got = fn(import_torch().tensor(ids))
        return [tuple(int(v) for v in pair) for pair in got]  # tuples of ints, whatever the learner built them from

    hint = known_mistakes(*((lambda name=name: variants[name], MESSAGES[name]) for name in variants))
    return Case(label, call, lambda: pairs_of(ids), equal(), hints=[hint, _one_offset])


@check
def induction_pairs(hidden, rng):
    if not hidden:
        return [_case("induction_pairs(tensor([7, 3, 5, 7, 3, 5, 7])): [(3, 1), (4, 2), (5, 3), (6, 4)]",
                      [7, 3, 5, 7, 3, 5, 7]),
                _case("induction_pairs(tensor([2, 9, 2, 4, 2, 9])): token 2 three times, the most recent counts",
                      [2, 9, 2, 4, 2, 9]),
                _case("induction_pairs(tensor([1, 1, 1])): a token right after itself", [1, 1, 1]),
                _case("induction_pairs(tensor([0, 1, 2])): no token repeats, no pair", [0, 1, 2])]
    period = int(rng.integers(3, 7))
    block = rng.permutation(20)[:period].tolist()
    tokens = rng.integers(0, 5, size=15).tolist()
    return [_case(f"induction_pairs of a random sequence of period {period}", (block * 4)[:period * 3 + 1]),
            _case("induction_pairs of 15 tokens drawn from 5", tokens)]
