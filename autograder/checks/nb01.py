"""Checks for 01_tokens_and_ids."""
from __future__ import annotations

import numpy as np

from ..reference import lazy
from .core import Case, call_with, close, const, equal, exercise, raises


A = "01_tokens_and_ids"
check = exercise(A)
R = lazy(A)


CAT = "the cat sat on the mat".split()
CAT_VOCAB = {"<unk>": 0, "the": 1, "cat": 2, "mat": 3, "on": 4, "sat": 5}
WORDS = ["a", "b", "c", "d", "e", "f"]


def _vocab_hint(got, want):
    if not isinstance(got, dict) or not isinstance(want, dict):
        return None
    g, w = list(got), list(want)
    if sorted(g) == sorted(w):
        if g[-1:] == w[:1]:
            return "The special tokens must come first, from id 0."
        return "Right tokens, wrong ids: sort by descending count, break ties alphabetically."
    if len(set(got.values())) != len(got):
        return "Two tokens share an id: give each distinct token its own id."
    return None


@check
def build_vocab(hidden, rng):
    """specials first, then by count (descending), ties alphabetical."""
    if not hidden:
        return [
            Case('build_vocab("the cat sat on the mat".split())', call_with(CAT), const(CAT_VOCAB),
                 equal(), hints=[_vocab_hint]),
            Case('build_vocab(["b", "a", "b", "c"], specials=("<pad>", "<unk>"))',
                 call_with(["b", "a", "b", "c"], specials=("<pad>", "<unk>")),
                 const({"<pad>": 0, "<unk>": 1, "b": 2, "a": 3, "c": 4}), equal(), hints=[_vocab_hint]),
        ]
    cases = []
    for n in (0, 1, 25, 200):
        tokens = list(rng.choice(WORDS, size=n))
        cases.append(Case(f"build_vocab of {n} random tokens", call_with(tokens),
                          lambda t=tokens: R("build_vocab")(t), equal(), hints=[_vocab_hint]))
    tokens = ["x", "<unk>", "y", "x"]
    cases.append(Case('build_vocab(["x", "<unk>", "y", "x"]) (a special that also occurs as text)',
                      call_with(tokens), lambda: R("build_vocab")(tokens), equal(), hints=[_vocab_hint]))
    return cases


@check
def encode(hidden, rng):
    if not hidden:
        return [
            Case('encode(["the", "dog", "sat"], vocab)', call_with(["the", "dog", "sat"], CAT_VOCAB),
                 const([1, 0, 5]), equal()),
            Case("encode([], vocab)", call_with([], CAT_VOCAB), const([]), equal()),
        ]
    vocab = {"<pad>": 0, "<UNK>": 1, "a": 2, "b": 3}
    tokens = list(rng.choice(WORDS, size=30))
    return [
        Case("encode of 30 random tokens", call_with(tokens, vocab, unk="<UNK>"),
             lambda: R("encode")(tokens, vocab, unk="<UNK>"), equal()),
        Case("encode with the default unk", call_with(tokens, CAT_VOCAB),
             lambda: R("encode")(tokens, CAT_VOCAB), equal()),
    ]


@check
def decode(hidden, rng):
    if not hidden:
        return [Case("decode([1, 2, 5], vocab)", call_with([1, 2, 5], CAT_VOCAB),
                     const(["the", "cat", "sat"]), equal())]
    ids = [int(i) for i in rng.integers(0, len(CAT_VOCAB), size=20)]
    return [Case("decode of 20 random ids", call_with(ids, CAT_VOCAB), lambda: R("decode")(ids, CAT_VOCAB), equal()),
            Case("decode([], vocab)", call_with([], CAT_VOCAB), const([]), equal())]


def _one_hot_hint(got, want):
    g = getattr(got, "data", None)
    if g is not None and g.shape == want.data.shape and np.allclose(g.sum(-1), 1) and not np.allclose(g, want.data):
        return "Each row is one-hot, but the 1 is in the wrong column: column = the id."
    return None


@check
def one_hot(hidden, rng):
    f = close(dtype="f")
    if not hidden:
        return [
            Case("one_hot(np.array([0, 2]), 3)", call_with(np.array([0, 2]), 3),
                 const(np.array([[1.0, 0, 0], [0, 0, 1]])), f, hints=[_one_hot_hint]),
            Case("one_hot(np.array([[1, 0], [3, 3]]), 4) keeps the shape of ids", call_with(np.array([[1, 0], [3, 3]]), 4),
                 const(np.eye(4)[[[1, 0], [3, 3]]]), f, hints=[_one_hot_hint]),
            Case("one_hot(np.array([3]), 3): id 3 is outside [0, 3)", call_with(np.array([3]), 3),
                 raises("id 3 is outside [0, 3)"), f),
            Case("one_hot(np.array([-1]), 3): a negative id is not an address (NumPy would wrap it)",
                 call_with(np.array([-1]), 3), raises("id -1 is outside [0, 3)"), f),
        ]
    ids = rng.integers(0, 7, size=(2, 3, 4))
    return [Case("one_hot of ids with shape (2, 3, 4), V=7", call_with(ids, 7), lambda: np.eye(7)[ids], f,
                 hints=[_one_hot_hint]),
            Case("one_hot(np.array([0, 0]), 1)", call_with(np.array([0, 0]), 1), const(np.ones((2, 1))), f),
            Case("one_hot(np.array([5]), 5)", call_with(np.array([5]), 5), raises("id 5 is outside [0, 5)"), f)]


@check
def embedding_lookup(hidden, rng):
    E = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    hint = lambda got, want: ("Those are columns of E: an embedding is a row, E[id]."
                              if getattr(got, "data", None) is not None and got.data.shape[-1:] != want.data.shape[-1:] else None)
    if not hidden:
        return [
            Case("embedding_lookup(E, np.array([2, 0])) with E of shape (4, 2)", call_with(E, np.array([2, 0])),
                 const(np.array([[4.0, 5.0], [0.0, 1.0]])), hints=[hint]),
            Case("embedding_lookup equals one_hot(ids, V) @ E for ids of shape (2, 3)",
                 call_with(E, np.array([[0, 1, 2], [3, 3, 1]])), lambda: np.eye(4)[[[0, 1, 2], [3, 3, 1]]] @ E,
                 hints=[hint]),
        ]
    W = rng.normal(size=(11, 5))
    ids = rng.integers(0, 11, size=(3, 4))
    return [Case("embedding_lookup with E (11, 5) and ids (3, 4)", call_with(W, ids), lambda: np.eye(11)[ids] @ W, hints=[hint]),
            Case("embedding_lookup with one id", call_with(W, np.array([10])), lambda: W[[10]], hints=[hint])]


@check
def make_lm_pairs(hidden, rng):
    ints = close(dtype="iu")
    if not hidden:
        ids = [10, 11, 12, 13, 14]
        return [
            Case("make_lm_pairs([10, 11, 12, 13, 14], context_len=2)", call_with(ids, 2),
                 const((np.array([[10, 11], [11, 12], [12, 13]]), np.array([[11, 12], [12, 13], [13, 14]]))), ints),
            Case("make_lm_pairs([1, 2, 3], context_len=3): no window fits", call_with([1, 2, 3], 3),
                 raises("need more than context_len ids"), ints),
        ]
    ids = [int(i) for i in rng.integers(0, 50, size=40)]
    return [Case("make_lm_pairs of 40 ids, context_len=8", call_with(ids, 8), lambda: R("make_lm_pairs")(ids, 8), ints),
            Case("make_lm_pairs with exactly one window", call_with(ids[:6], 5), lambda: R("make_lm_pairs")(ids[:6], 5), ints)]


@check
def most_frequent_pair(hidden, rng):
    if not hidden:
        return [
            Case("most_frequent_pair([1, 2, 3, 1, 2])", call_with([1, 2, 3, 1, 2]), const((1, 2)), equal()),
            Case("most_frequent_pair([5, 6, 7, 8]): a tie goes to the first pair seen",
                 call_with([5, 6, 7, 8]), const((5, 6)), equal()),
            Case("most_frequent_pair([1, 2, 3, 3, 3]): overlapping pairs count, (3, 3) occurs twice",
                 call_with([1, 2, 3, 3, 3]), const((3, 3)), equal()),
        ]
    cases = []
    for n in (2, 12, 60):
        ids = [int(i) for i in rng.integers(0, 4, size=n)]
        cases.append(Case(f"most_frequent_pair of {n} random ids", call_with(ids),
                          lambda ids=ids: R("most_frequent_pair")(ids), equal()))
    return cases


@check
def merge_pair(hidden, rng):
    if not hidden:
        return [
            Case("merge_pair([1, 2, 3, 1, 2], (1, 2), 9)", call_with([1, 2, 3, 1, 2], (1, 2), 9), const([9, 3, 9]), equal()),
            Case("merge_pair([7, 7, 7], (7, 7), 99): occurrences do not overlap, left to right",
                 call_with([7, 7, 7], (7, 7), 99), const([99, 7]), equal()),
            Case("merge_pair([1, 3, 2], (1, 2), 9): nothing to merge", call_with([1, 3, 2], (1, 2), 9),
                 const([1, 3, 2]), equal()),
        ]
    cases = []
    for n in (1, 15, 80):
        ids = [int(i) for i in rng.integers(0, 3, size=n)]
        cases.append(Case(f"merge_pair of {n} random ids, pair (1, 1)", call_with(ids, (1, 1), 7),
                          lambda ids=ids: R("merge_pair")(ids, (1, 1), 7), equal()))
        cases.append(Case(f"merge_pair of {n} random ids, pair (0, 2)", call_with(ids, (0, 2), 7),
                          lambda ids=ids: R("merge_pair")(ids, (0, 2), 7), equal()))
    return cases
