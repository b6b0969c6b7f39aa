"""Notebook 01's checks on words: the vocabulary, encode and decode, one-hot and the embedding lookup, relabelling
a vocabulary (IDs are addresses), the skip-gram pairs and CBOW examples of word2vec's proxy tasks, the
language model's pairs, the bug hunt (split, then window), and BPE's two steps (the most frequent pair, a merge)."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..compare import Case, call_with, close, const, equal, predicate, raises
from ..evidence import Array
from .common import R, _pairs, check, known_values


CAT = "the cat sat on the mat".split()
CAT_VOCAB = {"<unk>": 0, "the": 1, "cat": 2, "mat": 3, "on": 4, "sat": 5}
WORDS = ["a", "b", "c", "d", "e", "f"]


def _vocab_hints(specials=("<unk>",)):
    def hint(got, want):
        if not isinstance(got, dict) or not isinstance(want, dict) or sorted(got) != sorted(want):
            return None
        numbered = sorted(got.values()) == list(range(len(got)))
        if numbered and all(got[s] >= len(want) - len(specials) for s in specials if s in got):
            return "The special tokens must come first, from id 0."
        if any(got[s] != want[s] for s in specials if s in got):
            return ("A special token that also occurs in the text was numbered a second time: it keeps its id "
                    "from the specials, and the text's tokens get the ids after the specials, without a gap "
                    "(skip tokens that are already in the vocabulary).")
        if len(set(got.values())) != len(got):
            return "Two tokens share an id: give each distinct token its own id."
        if not numbered:
            return f"The ids must be 0 .. {len(want) - 1} without gaps."
        return "Right tokens, wrong ids: sort by descending count, and break ties by code point (Python's string order)."
    return [hint]


@check
def build_vocab(hidden, rng):
    """specials first, then by count (descending), ties by code point."""
    if not hidden:
        return [
            Case('build_vocab("the cat sat on the mat".split())', call_with(CAT), const(CAT_VOCAB),
                 equal(), hints=_vocab_hints()),
            Case('build_vocab(["b", "a", "b", "c"], specials=("<pad>", "<unk>"))',
                 call_with(["b", "a", "b", "c"], specials=("<pad>", "<unk>")),
                 const({"<pad>": 0, "<unk>": 1, "b": 2, "a": 3, "c": 4}), equal(),
                 hints=_vocab_hints(("<pad>", "<unk>"))),
            Case('build_vocab(["x", "<unk>", "y", "x"]): "<unk>" also occurs in the text; it keeps id 0',
                 call_with(["x", "<unk>", "y", "x"]), const({"<unk>": 0, "x": 1, "y": 2}), equal(),
                 hints=_vocab_hints()),
        ]
    cases = []
    for n in (0, 1, 25, 200):
        tokens = list(rng.choice(WORDS, size=n))
        cases.append(Case(f"build_vocab of {n} random tokens", call_with(tokens),
                          lambda t=tokens: R("build_vocab")(t), equal(), hints=_vocab_hints()))
    tokens = [str(t) for t in rng.choice(["<pad>", "<bos>", "u", "v", "w"], size=30)]
    cases.append(Case("build_vocab of 30 tokens, specials ('<bos>', '<pad>') among them",
                      call_with(tokens, specials=("<bos>", "<pad>")),
                      lambda: R("build_vocab")(tokens, specials=("<bos>", "<pad>")), equal(),
                      hints=_vocab_hints(("<bos>", "<pad>"))))
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
            Case("one_hot(np.array([0.0, 1.5]), 3): 1.5 is not an id (a comparison would give a row of zeros)",
                 call_with(np.array([0.0, 1.5]), 3), raises("ids must be whole numbers"), f),
        ]
    ids = rng.integers(0, 7, size=(2, 3, 4))
    return [Case("one_hot of ids with shape (2, 3, 4), V=7", call_with(ids, 7), lambda: np.eye(7)[ids], f,
                 hints=[_one_hot_hint]),
            Case("one_hot(np.array([0, 0]), 1)", call_with(np.array([0, 0]), 1), const(np.ones((2, 1))), f),
            Case("one_hot(np.array([5]), 5)", call_with(np.array([5]), 5), raises("id 5 is outside [0, 5)"), f),
            # fixed, whatever the seed: the mistakes these catch never show on random valid ids
            Case("one_hot(np.array([1, -2]), 4)", call_with(np.array([1, -2]), 4), raises("id -2 is outside [0, 4)"), f),
            Case("one_hot(np.array([[2.0, 0.5]]), 3): 0.5 is not an id", call_with(np.array([[2.0, 0.5]]), 3),
                 raises("ids must be whole numbers"), f),
            Case("one_hot(np.array([3, 0]), 3): id 3 is one past the last row", call_with(np.array([3, 0]), 3),
                 raises("id 3 is outside [0, 3)"), f)]


def _lookup_hint(got, want):
    g = getattr(got, "data", None)
    if g is not None and g.shape[-1:] != want.data.shape[-1:]:
        return "Those are columns of E: the numbers an ID stands for sit along the other axis of the table."
    return None


@check
def embedding_lookup(hidden, rng):
    E = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]])
    if not hidden:
        return [
            Case("embedding_lookup(E, np.array([2, 0])) with E of shape (4, 2)", call_with(E, np.array([2, 0])),
                 const(np.array([[4.0, 5.0], [0.0, 1.0]])), hints=[_lookup_hint]),
            Case("embedding_lookup equals one_hot(ids, V) @ E for ids of shape (2, 3)",
                 call_with(E, np.array([[0, 1, 2], [3, 3, 1]])), lambda: np.eye(4)[[[0, 1, 2], [3, 3, 1]]] @ E,
                 hints=[_lookup_hint]),
            Case("embedding_lookup(E, np.array([1, -1])) with E of shape (4, 2): one_hot refuses the id -1, and "
                 "so must the lookup (it is no row of a 4-row table)", call_with(E, np.array([1, -1])),
                 raises("id -1 is outside [0, 4)")),
            Case("embedding_lookup(E, np.array([4])) with E of shape (4, 2): there is no row 4",
                 call_with(E, np.array([4])), raises("id 4 is outside [0, 4)")),
        ]
    W = rng.normal(size=(11, 5))
    ids = rng.integers(0, 11, size=(3, 4))
    return [Case("embedding_lookup with E (11, 5) and ids (3, 4)", call_with(W, ids), lambda: np.eye(11)[ids] @ W,
                 hints=[_lookup_hint]),
            Case("embedding_lookup with one id", call_with(W, np.array([10])), lambda: W[[10]], hints=[_lookup_hint]),
            # fixed, whatever the seed: random valid ids never hold a negative one
            Case("embedding_lookup with E (11, 5) and ids [[3, -2]]", call_with(W, np.array([[3, -2]])),
                 raises("id -2 is outside [0, 11)")),
            Case("embedding_lookup with E (11, 5) and ids [11, 0]", call_with(W, np.array([11, 0])),
                 raises("id 11 is outside [0, 11)"))]


# ------------------------------------------------------------- IDs are addresses: relabelling the vocabulary

def _relabelled(E, ids, perm):
    """The same text under new labels: old ID i is new ID perm[i], and its row moves with it."""
    E, ids, perm = np.asarray(E), np.asarray(ids), np.asarray(perm)
    E_new = np.empty_like(E)
    E_new[perm] = E
    return E_new, perm[ids]


def _relabel_hints(E, ids, perm):
    E, ids, perm = np.asarray(E), np.asarray(ids), np.asarray(perm)
    inverse = np.argsort(perm)

    def hint(got, want):
        if not (isinstance(got, tuple) and len(got) == 2 and all(isinstance(a, Array) for a in got)):
            return None
        E_got, ids_got = got[0].data, got[1].data
        E_want, ids_want = want[0].data, want[1].data
        ids_ok = ids_got.shape == ids_want.shape and np.array_equal(ids_got, ids_want)
        E_ok = E_got.shape == E_want.shape and np.allclose(E_got, E_want)
        parts = []
        if not ids_ok:
            if ids_got.shape == ids.shape and np.array_equal(ids_got, ids):
                parts.append("the text's IDs are still the old ones")
            elif ids_got.shape == ids.shape and np.array_equal(ids_got, inverse[ids]):
                i = int(ids.ravel()[0])
                parts.append(f"the text was relabelled the other way round: where the old text holds ID {i}, the "
                             f"new text must hold {int(perm[i])}, and yours holds {int(inverse[i])}")
        if not E_ok:
            if E_got.shape == E.shape and np.allclose(E_got, E):
                parts.append("the table's rows are where they were")
            elif E_got.shape == E.shape and np.allclose(E_got, E[perm]):
                i = 0
                parts.append(f"the rows moved the other way round: the token of old ID {i} has the new ID "
                             f"{int(perm[i])}, but row {int(perm[i])} of your new table holds the vector of old ID "
                             f"{int(perm[int(perm[i])])}, so looking the relabelled text up gives other tokens' vectors")
        if not parts:
            return None
        return "; ".join(parts).capitalize() + "."
    return [hint]


def _relabel_case(label, E, ids, perm, want=None):
    want_fn = const(want) if want is not None else (lambda: R("relabel")(E, ids, perm))
    return Case(label, call_with(E, ids, perm), want_fn, close(), hints=_relabel_hints(E, ids, perm))


@check
def relabel(hidden, rng):
    """perm maps old IDs to new: row perm[i] of the new table is row i of the old one, and the text reads perm[ids]."""
    E = np.arange(8.0).reshape(4, 2)
    ids = np.array([[0, 3], [1, 1]])
    perm = np.array([2, 0, 3, 1])  # not its own inverse: a row moved the wrong way shows
    if not hidden:
        return [
            _relabel_case("relabel(np.arange(8.0).reshape(4, 2), np.array([[0, 3], [1, 1]]), perm=np.array([2, 0, 3, 1]))",
                          E, ids, perm, _relabelled(E, ids, perm)),
            Case("relabel(E, ids, perm=np.array([0, 0, 1, 2])): two tokens cannot share the new ID 0",
                 call_with(E, ids, np.array([0, 0, 1, 2])), raises("perm must hold every ID from 0 to 3 once")),
            Case("relabel(E, ids, perm=np.array([1, 0])): a table of 4 rows needs a new ID for each of its 4 tokens",
                 call_with(E, ids, np.array([1, 0])), raises("perm must hold every ID from 0 to 3 once")),
        ]
    W = rng.normal(size=(9, 3))
    text = rng.integers(0, 9, size=(2, 5))
    shuffle = rng.permutation(9)
    while np.array_equal(shuffle[shuffle], np.arange(9)):  # its own inverse would hide a row moved the wrong way
        shuffle = rng.permutation(9)
    return [_relabel_case("relabel with E (9, 3), ids (2, 5) and a shuffle of the 9 IDs", W, text, shuffle),
            _relabel_case("relabel with the identity permutation: nothing moves", W, text, np.arange(9)),
            # fixed, whatever the seed: a perm with a value out of range is never drawn
            Case("relabel with E (9, 3) and perm 1 .. 9: there is no ID 9", call_with(W, text, np.arange(1, 10)),
                 raises("perm must hold every ID from 0 to 8 once"))]


# ------------------------------------------------------------- word2vec's proxy task: skip-gram pairs

def _skipgram(ids, window):
    """The (centre, context) pairs: every other position within `window` of each centre, inside the sequence."""
    return [(ids[i], ids[j]) for i in range(len(ids))
            for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]


def _as_pairs(got):
    """The learner's pairs as a list of 2-tuples of plain values, or None when it is not a list of pairs."""
    if isinstance(got, Array):
        got = got.data.tolist()
    if not isinstance(got, (list, tuple)):
        return None
    out = []
    for p in got:
        if isinstance(p, Array):
            p = p.data.tolist()
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            return None
        out.append(tuple(v.item() if hasattr(v, "item") else v for v in p))
    return out


def _skipgram_test(ids, window):
    """Symptoms first (a word paired with itself, one side only, a window one too wide or too narrow, the ends
    wrapping round); the pairs' order is free (and so is their direction: the multiset of pairs is symmetric)."""
    want = _skipgram(ids, window)

    def test(got, _want):
        g = _as_pairs(got)
        if g is None:
            return f"expected a list of (centre, context) pairs, got {type(got).__name__}: {repr(got)[:80]}"
        if Counter(g) == Counter(want):
            return None
        said = f"{len(g)} pairs where {len(want)} are due"
        n = len(ids)
        if Counter(g) == Counter(want + [(t, t) for t in ids]):
            return (f"{said}: every token is also paired with itself, (centre, centre). A word is not its own "
                    "context: the window around a centre holds the positions on either side of it.")
        right = [(ids[i], ids[j]) for i in range(n) for j in range(i + 1, min(n, i + window + 1))]
        left = [(ids[i], ids[j]) for i in range(n) for j in range(max(0, i - window), i)]
        if Counter(g) in (Counter(right), Counter(left)):
            side = "after" if Counter(g) == Counter(right) else "before"
            return (f"{said}: each centre is paired only with the tokens {side} it. The window reaches "
                    f"{window} position{'s' if window > 1 else ''} to both sides.")
        for w in (window - 1, window + 1):
            if w >= 0 and Counter(g) == Counter(_skipgram(ids, w)):
                return (f"{said}: these are the pairs of a window of {w}, one {'narrower' if w < window else 'wider'} "
                        f"than {window}: a centre in the middle of a long sequence has {2 * window} contexts.")
        before = [(ids[i], ids[(i + k) % n]) for i in range(n) for k in range(-window, 0) if i + k < 0]
        after = [(ids[i], ids[(i + k) % n]) for i in range(n) for k in range(1, window + 1) if i + k >= n]
        if before and Counter(g) in (Counter(want + before), Counter(want + before + after)):
            return (f"{said}: the first token has the last tokens among its contexts, for example {before[0]}: a "
                    "context position before 0 wrapped round to the end of the sequence instead of being left out.")
        missing = list((Counter(want) - Counter(g)).elements())
        extra = list((Counter(g) - Counter(want)).elements())
        return (f"{said}" + (f"; missing, for example, {missing[0]}" if missing else "")
                + (f"; not due, for example, {extra[0]}" if extra else "") + ".")

    return test


@check
def skipgram_pairs(hidden, rng):
    def case(ids, window, note=""):
        return Case(f"skipgram_pairs({ids}, window={window})" + (f": {note}" if note else ""),
                    call_with(ids, window), const(None), predicate(_skipgram_test(ids, window)))

    if not hidden:
        return [
            case([1, 2, 5], 1, "'the cat sleeps' at window 1: (1, 2), (2, 1), (2, 5), (5, 2)"),
            case([5, 6, 7, 8], 2, "10 pairs: 2 contexts for each end, 3 for each middle token"),
            case([3, 9, 4, 9, 3], 1, "a token that repeats is paired once per position"),
            Case("skipgram_pairs([1, 2, 3], window=0): a window of 0 has no context", call_with([1, 2, 3], 0),
                 raises("window must be at least 1")),
        ]
    cases = [case([int(v) for v in rng.integers(0, 20, size=int(rng.integers(6, 12)))], w) for w in (1, 2, 3)]
    # fixed, whatever the seed: a window wider than the sequence, and one token alone
    cases += [case([4, 8, 15], 5, "a window wider than the sequence"), case([7], 2, "one token has no context"),
              Case("skipgram_pairs([1, 2], window=-1)", call_with([1, 2], -1), raises("window must be at least 1"))]
    return cases


# ------------------------------------------------------------- word2vec's other proxy task: CBOW

def _cbow(ids, window):
    """One (context, centre) example per position: the tokens of every other position within `window`, in order."""
    return [([ids[j] for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i], ids[i])
            for i in range(len(ids))]


def _as_examples(got):
    """The learner's examples as a list of (list of context tokens, centre), or None when that is not their form."""
    if isinstance(got, Array):
        return None
    if not isinstance(got, (list, tuple)):
        return None
    out = []
    for ex in got:
        if isinstance(ex, Array) or not isinstance(ex, (list, tuple)) or len(ex) != 2:
            return None
        context, centre = ex
        if isinstance(context, Array):
            context = context.data.tolist()
        if not isinstance(context, (list, tuple)):
            return None
        if isinstance(centre, Array):
            centre = centre.data.item() if centre.data.shape == () else None
        out.append(([v.item() if hasattr(v, "item") else v for v in context], centre))
    return out


def _cbow_test(ids, window):
    """Symptoms first, then the property that ties CBOW to skip-gram: flattened, the examples are the pairs."""
    skipgram_says = _skipgram_test(ids, window)

    def test(got, _want):
        g = _as_examples(got)
        if g is None and isinstance(got, (list, tuple)) and all(isinstance(ex, (list, tuple)) and len(ex) == 2
                                                                for ex in got):
            swapped = _as_examples([(ex[1], ex[0]) for ex in got])
            if swapped is not None and swapped == _cbow(ids, window):
                return "each example is (centre, context): the context list comes first, the centre second."
        if g is None:
            if (isinstance(got, (list, tuple)) and got and isinstance(got[0], (list, tuple)) and len(got[0]) == 2
                    and not isinstance(got[0][0], (list, tuple, Array))):
                return ("expected one (context, centre) example per position, the context a list of tokens; these "
                        "look like single (centre, context) pairs, one token each, which is skip-gram's data.")
            return (f"expected a list of (context, centre) examples, the context a list of tokens, got "
                    f"{type(got).__name__}: {repr(got)[:80]}")
        want = _cbow(ids, window)
        if g == want:
            return None
        n = len(ids)
        if len(g) != n:
            return (f"{len(g)} examples for {n} positions: CBOW makes one example per position, the centre with its "
                    "whole context at once.")
        flat = [(centre, x) for context, centre in g for x in context]
        said = skipgram_says(flat, None)
        if said:
            return ("flattened into (centre, context) pairs, one per context token, your examples should give "
                    f"skipgram_pairs({ids}, {window}); they give {said[0].lower()}{said[1:]}")
        if [c for _, c in g] != [c for _, c in want]:
            return ("the examples hold the right tokens, but not one per position in order: example i must be the "
                    "one whose centre is at position i.")
        return ("the examples hold the right tokens, but a context is not in the order the tokens stand in the "
                f"text: for example position {next(i for i, (a, b) in enumerate(zip(g, want)) if a != b)} should "
                f"be {want[next(i for i, (a, b) in enumerate(zip(g, want)) if a != b)]}.")

    return test


@check
def cbow_examples(hidden, rng):
    def case(ids, window, note=""):
        want = const(_cbow(ids, window)) if not hidden else (lambda: R("cbow_examples")(ids, window))
        return Case(f"cbow_examples({ids}, window={window})" + (f": {note}" if note else ""),
                    call_with(ids, window), want, predicate(_cbow_test(ids, window)))

    if not hidden:
        return [
            case([1, 2, 5], 1, "'the cat sleeps': ([2], 1), ([1, 5], 2), ([2], 5)"),
            case([5, 6, 7, 8], 2, "the ends have 2 context tokens, the middle ones 3"),
            case([3, 9, 4, 9, 3], 1, "a token that repeats is a centre once per position"),
            Case("cbow_examples([1, 2, 3], window=0): a window of 0 has no context", call_with([1, 2, 3], 0),
                 raises("window must be at least 1")),
        ]
    cases = [case([int(v) for v in rng.integers(0, 20, size=int(rng.integers(6, 12)))], w) for w in (1, 2, 3)]
    # fixed, whatever the seed: a window wider than the sequence, and one token alone
    cases += [case([4, 8, 15], 5, "a window wider than the sequence"), case([7], 2, "one token has no context"),
              Case("cbow_examples([1, 2], window=-1)", call_with([1, 2], -1), raises("window must be at least 1"))]
    return cases


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
            Case("make_lm_pairs([1, 2, 3], context_len=0): a window of no ids predicts from nothing",
                 call_with([1, 2, 3], 0), raises("context_len must be at least 1"), ints),
        ]
    ids = [int(i) for i in rng.integers(0, 50, size=40)]
    return [Case("make_lm_pairs of 40 ids, context_len=8", call_with(ids, 8), lambda: R("make_lm_pairs")(ids, 8), ints),
            Case("make_lm_pairs with exactly one window", call_with(ids[:6], 5), lambda: R("make_lm_pairs")(ids[:6], 5), ints),
            # fixed, whatever the seed: a short stream and a window of 0 are never drawn at random
            Case("make_lm_pairs of 4 ids, context_len=4", call_with(ids[:4], 4),
                 raises("need more than context_len ids"), ints),
            Case("make_lm_pairs of 40 ids, context_len=0", call_with(ids, 0),
                 raises("context_len must be at least 1"), ints),
            Case("make_lm_pairs([5, 6, 7, 8], context_len=1)", call_with([5, 6, 7, 8], 1),
                 const((np.array([[5], [6], [7]]), np.array([[6], [7], [8]]))), ints)]


# ---------------------------------------------------------- bug hunt: split, then window

def _ids(arrays):
    return {int(v) for a in arrays for v in np.asarray(getattr(a, "data", a)).ravel()}


def _no_leak(got, want):
    """The symptom first: which arrays hold ids of the other part (the stream's ids are distinct, so the right
    answer's two parts name each part's ids), then the exact arrays. Never the line to write: a bug hunt."""
    if not (isinstance(got, tuple) and len(got) == 4 and all(isinstance(a, Array) for a in got)):
        return f"expected a tuple of four arrays (X_train, Y_train, X_val, Y_val), got {type(got).__name__}."
    train_part, val_part = _ids(want[:2]), _ids(want[2:])
    into_val = sorted(_ids(got[:2]) & val_part)  # validation ids inside the training arrays
    into_train = sorted(_ids(got[2:]) & train_part)  # training ids inside the validation arrays

    def some(ids):
        return f"{ids[:6]}{' ...' if len(ids) > 6 else ''}"

    if into_val and into_train:
        return (f"the training arrays hold ids of the validation part, {some(into_val)}, and the validation arrays "
                f"hold ids of the training part, {some(into_train)}: the two sides overlap both ways, so a "
                "validation loss would measure memory, not generalisation.")
    if into_val:
        return (f"progress: the validation arrays hold validation ids alone now, but the training arrays still hold "
                f"ids of the validation part, {some(into_val)}: the model would train on text it is then "
                "validated on.")
    if into_train:
        return (f"progress: the training arrays hold training ids alone now, but the validation arrays hold ids of "
                f"the training part, {some(into_train)}: some validation windows read, or predict, training text.")
    return close(dtype="iu").mismatch(got, want)


@check
def train_val_pairs(hidden, rng):
    def case(ids, context_len, val_frac, note):
        cut = len(ids) - int(len(ids) * val_frac)  # split the ids first, then window each part
        want = lambda: (*R("make_lm_pairs")(ids[:cut], context_len), *R("make_lm_pairs")(ids[cut:], context_len))
        return Case(f"train_val_pairs({note}, context_len={context_len}, val_frac={val_frac})",
                    call_with(ids, context_len, val_frac), want, predicate(_no_leak))

    if not hidden:
        return [case(list(range(10, 30)), 3, 0.3, "the 20 distinct ids 10 .. 29"),
                case(list(range(100, 112)), 2, 0.25, "the 12 distinct ids 100 .. 111"),
                Case("train_val_pairs(list(range(10)), context_len=3, val_frac=0.3): the validation part, 3 ids, "
                     "has no window with a target", call_with(list(range(10)), 3, 0.3),
                     raises("need more than context_len ids"), close())]
    return [case([int(i) for i in rng.permutation(1000)[:n]], context_len, val_frac, f"{n} distinct ids")
            for n, context_len, val_frac in [(40, 8, 0.25), (30, 4, 0.5), (25, 1, 0.2)]]  # distinct: shared = leaked


def _tie_hint(ids):
    """Name the tie-break a wrong answer used: the smallest, largest or last of the tied pairs."""
    counts = _pairs(ids)
    best = max(counts.values(), default=0)
    tied = [p for p, c in counts.items() if c == best]
    if len(tied) < 2:
        return []
    return [known_values(
        (lambda: min(tied), "A tie went to the smallest pair: ties go to the pair that occurs first in ids "
                            "(it looks as if the pairs were sorted, or compared, before the tie was settled)."),
        (lambda: max(tied), "A tie went to the largest pair: ties go to the pair that occurs first in ids."),
        (lambda: tied[-1], "A tie went to the pair seen last: ties go to the pair that occurs first in ids."),
    )]


def _pair_case(label, ids, want=None):
    want_fn = const(want) if want is not None else (lambda: R("most_frequent_pair")(ids))
    return Case(label, call_with(ids), want_fn, equal(), hints=_tie_hint(ids))


@check
def most_frequent_pair(hidden, rng):
    if not hidden:
        return [
            _pair_case("most_frequent_pair([1, 2, 3, 1, 2])", [1, 2, 3, 1, 2], (1, 2)),
            _pair_case("most_frequent_pair([5, 6, 7, 8]): a tie goes to the first pair seen", [5, 6, 7, 8], (5, 6)),
            _pair_case("most_frequent_pair([2, 3, 0, 1, 2, 3, 0, 1]): (2, 3), (3, 0) and (0, 1) each occur twice; "
                       "the tie goes to (2, 3), the first pair seen, not to the smallest pair (0, 1)",
                       [2, 3, 0, 1, 2, 3, 0, 1], (2, 3)),
            _pair_case("most_frequent_pair([1, 2, 3, 3, 3]): overlapping pairs count, (3, 3) occurs twice",
                       [1, 2, 3, 3, 3], (3, 3)),
        ]
    cases = []
    for n in (2, 12, 60):
        ids = [int(i) for i in rng.integers(0, 4, size=n)]
        cases.append(_pair_case(f"most_frequent_pair of {n} random ids", ids))
    # fixed, whatever the seed: random ids need not hold a tie or an overlapping run
    cases += [_pair_case("most_frequent_pair of 12 ids where (4, 5), (9, 9) and (1, 2) tie",
                         [4, 5, 9, 9, 1, 2, 4, 5, 1, 2, 9, 9], (4, 5)),
              _pair_case("most_frequent_pair([0, 0, 0, 1, 2, 1, 2]): (0, 0) overlaps itself and occurs twice",
                         [0, 0, 0, 1, 2, 1, 2], (0, 0))]
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
    # fixed, whatever the seed: random ids need not hold a run of five, two occurrences or an unmerged last token
    cases += [Case("merge_pair([7, 7, 7, 7, 7], (7, 7), 9)", call_with([7, 7, 7, 7, 7], (7, 7), 9),
                   const([9, 9, 7]), equal()),
              Case("merge_pair([1, 2, 0, 1, 2, 3], (1, 2), 9)", call_with([1, 2, 0, 1, 2, 3], (1, 2), 9),
                   const([9, 0, 9, 3]), equal())]
    return cases
