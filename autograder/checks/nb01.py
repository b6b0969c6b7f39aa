"""Checks for 01_tokens_and_ids."""
from __future__ import annotations

import copy
from functools import partial

import numpy as np

from ..reference import lazy
from .compare import Case, CheckFailure, call_with, close, const, equal, predicate, raises
from .evidence import Array
from .questions import NB01, as_tuple, described, int_tuple, is_int, question
from .registry import exercise


A = "01_tokens_and_ids"
check = exercise(A)
R = lazy(A)


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
        return [case(list(range(10, 30)), 3, 0.3, "the 20 ids 10 .. 29: training 10 .. 23, validation 24 .. 29"),
                case(list(range(100, 112)), 2, 0.25, "the 12 ids 100 .. 111: validation 109 .. 111"),
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
                            "(max(counts, key=counts.get) keeps the first of equal counts; sorting the pairs does not)."),
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


# ------------------------------------------------------------------ byte-level BPE

def _pairs(ids):
    counts: dict = {}
    for p in zip(ids, ids[1:]):
        counts[p] = counts.get(p, 0) + 1
    return counts


def _merge(ids, pair, new_id, overlap=False):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 1 if overlap else 2
            if overlap and i < len(ids) - 1 and (ids[i], ids[i + 1]) != pair:
                i += 1
            continue
        out.append(ids[i])
        i += 1
    return out


def _train(data, n_merges, *, first_id=256, min_count=2, tie="first", recount=True):
    """byte-level BPE and its usual variants, for naming a wrong answer (hints only, never the verdict)."""
    ids, merges = list(data), []
    for k in range(n_merges):
        counts = _pairs(ids if recount else list(data))
        if not counts:
            break
        best = max(counts.values())
        tied = [p for p, c in counts.items() if c == best]
        pair = {"first": tied[0], "last": tied[-1], "smallest": min(tied)}[tie]
        if best < min_count:
            break
        new_id = first_id + k
        ids = _merge(ids, pair, new_id)
        merges.append((pair, new_id))
    return merges


def _encode(data, merges, *, order=1, chained=True):
    ids = list(data)
    for pair, new_id in merges[::order]:
        ids = _merge(ids if chained else list(data), tuple(pair), new_id)
    return ids


def _loose(value):
    """A result as plain lists and numbers, so that a near-miss can be compared with a wrong variant."""
    if isinstance(value, Array):
        return value.data.tolist()
    if isinstance(value, (list, tuple)):
        return [_loose(v) for v in value]
    return value


def known_values(*candidates):
    """Like core.known_mistakes, for nested lists and tuples (a list of merges) rather than arrays."""
    def hint(got, want):
        for make, message in candidates:
            try:
                wrong = _loose(make())
            except Exception:
                continue
            if _same(_loose(got), wrong) and not _same(_loose(want), wrong):
                return message
        return None
    return hint


def _same(a, b, tol=1e-3):
    """Equal plain data; numbers of the same shape equal to within tol (a prediction worked out by hand)."""
    if a == b:
        return True
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return False
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=tol, atol=tol))


def _train_hints(data, n_merges):
    return [known_values(
        (lambda: _train(data, n_merges, first_id=max(data) + 1),
         "The new ids start right after the largest byte in the data: they must start at 256, because every "
         "id from 0 to 255 already stands for that byte, seen in this text or not."),
        (lambda: _train(data, n_merges, first_id=len(set(data))),
         "The new ids start at the number of distinct bytes: they must start at 256, because every id from "
         "0 to 255 already stands for that byte."),
        (lambda: _train(data, n_merges, first_id=255),
         "The first new id is 255, which is already the byte 0xff: new ids start at 256."),
        (lambda: _train(data, n_merges, min_count=1),
         "It goes on merging pairs that occur only once: stop as soon as the most frequent pair occurs "
         "fewer than 2 times."),
        (lambda: _train(data, n_merges, min_count=3),
         "It stops too early: a pair that occurs exactly twice is still worth a merge."),
        (lambda: _train(data, n_merges, recount=False),
         "The pairs are counted in the original bytes every time: after each merge, count the pairs of the "
         "merged sequence (the new token takes part in the next count)."),
        (lambda: _train(data, n_merges, tie="last"),
         "A tie went to the pair seen last: ties go to the pair that occurs first, as in most_frequent_pair."),
        (lambda: _train(data, n_merges, tie="smallest"),
         "A tie went to the smallest pair: ties go to the pair that occurs first, as in most_frequent_pair."),
    )]


@check
def train_bpe(hidden, rng):
    def case(data, n, note="", want=None):
        label = f"train_bpe({data[:24]!r}{'...' if len(data) > 24 else ''}, {n})" + (f": {note}" if note else "")
        want_fn = const(want) if want is not None else (lambda: R("train_bpe")(data, n))
        return Case(label, call_with(data, n), want_fn, equal(), hints=_train_hints(data, n))

    if not hidden:
        return [
            case(b"aaabdaaabac", 1, "(97, 97) occurs 4 times counted at every position; it becomes id 256",
                 [((97, 97), 256)]),
            case(b"aaabdaaabac", 10, "three merges, then no pair occurs twice: stop early",
                 [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]),
            case(b"abcd", 5, "no pair occurs twice: no merge at all", []),
            case(b"xyxzxz", 2, "(120, 122) occurs twice, every other pair once",
                 [((120, 122), 256)]),
        ]
    cases = []
    for n_bytes, alphabet, n in [(40, 3, 6), (120, 5, 20), (300, 8, 60)]:
        data = bytes(int(b) for b in rng.integers(97, 97 + alphabet, size=n_bytes))
        cases.append(case(data, n, f"{n_bytes} random bytes from {alphabet} letters"))
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    cases += [case(text, 12, "UTF-8 text with accents and an emoji"),
              case(bytes([255, 255, 0, 255, 255, 0]), 4, "the bytes 255 and 0"),
              case(b"", 3, "empty data"), case(b"zz", 0, "no merges asked for")]
    return cases


def _encode_hints(data, merges):
    text = None
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        pass
    return [known_values(
        (lambda: _encode(data, merges, chained=False),
         "Each merge was applied to the raw bytes: apply each merge to the result of the previous one."),
        (lambda: _encode(data, merges, order=-1),
         "The merges were applied in the wrong order: apply them in training order, first merge first, because "
         "a later merge is made of the tokens earlier merges created."),
        (lambda: _encode(data, merges[:1]),
         "Only the first merge was applied: apply every merge, in order."),
        (lambda: _encode([ord(c) for c in text], merges),
         "It starts from the characters' code points (ord(c)): byte-level BPE starts from the UTF-8 bytes, "
         "list(data), so 'é' is the two ids 195, 169 and no id is ever above 255 before merging."),
        (lambda: _overlapping_encode(data, merges),
         "Overlapping occurrences were merged: in each merge a token can be used once, so replace "
         "non-overlapping occurrences from left to right (that is what merge_pair does)."),
    )]


def _overlapping_encode(data, merges):
    ids = list(data)
    for pair, new_id in merges:
        out = []
        for i in range(len(ids)):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
                out.append(new_id)
            elif not (i > 0 and (ids[i - 1], ids[i]) == tuple(pair)):
                out.append(ids[i])
        ids = out
    return ids


AAA_MERGES = [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]


@check
def bpe_encode(hidden, rng):
    def case(data, merges, note="", want=None):
        label = f"bpe_encode({data[:24]!r}{'...' if len(data) > 24 else ''}, {len(merges)} merges)" + (
            f": {note}" if note else "")
        want_fn = const(want) if want is not None else (lambda: R("bpe_encode")(data, merges))
        return Case(label, call_with(data, merges), want_fn, equal(), hints=_encode_hints(data, merges))

    if not hidden:
        return [
            case(b"aaabdaaabac", AAA_MERGES, "the training text itself", [258, 100, 258, 97, 99]),
            case(b"aaab", AAA_MERGES, "merges in training order: (aa)ab, then ((aa)a)b, then (((aa)a)b)", [258]),
            case("bé".encode("utf-8"), AAA_MERGES, "'é' was never seen: it stays two bytes, 195 and 169",
                 [98, 195, 169]),
            case(b"aaaaa", AAA_MERGES, "(aa)(aa)a: then the second (aa) takes the last a", [256, 257]),
            case(b"", AAA_MERGES, "empty data", []),
        ]
    cases = []
    for n_bytes, alphabet, n in [(60, 3, 8), (200, 5, 30)]:
        train = bytes(int(b) for b in rng.integers(97, 97 + alphabet, size=n_bytes))
        merges = _train(train, n)  # inputs are built where the reference is absent too
        new = bytes(int(b) for b in rng.integers(96, 98 + alphabet, size=n_bytes // 2))
        cases.append(case(new, merges, f"new text, merges trained on {n_bytes} other random bytes"))
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    merges = _train(text, 15)
    cases += [case(text, merges, "the UTF-8 text the merges were trained on"),
              case("über naïve 👋 cafés".encode("utf-8"), merges, "new UTF-8 text"),
              case(b"xyz", [], "no merges: the bytes themselves"),
              # fixed, whatever the seed: a long run shows whether occurrences of a pair overlap
              case(b"baaaaaaab", AAA_MERGES, "a run of seven a's")]
    return cases


class same_bytes(equal):
    """bytes compared exactly; a decode that leaves merged ids behind is named, not just reported."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        try:
            super().__call__(got, want, case)
        except CheckFailure as failure:
            if got.raised and ("range(0, 256)" in got.message or "KeyError" in got.raised):
                raise CheckFailure(f"{failure} An id of 256 or more was left unexpanded: a merged id can stand "
                                   "for other merged ids, so expand recursively (or build each new id's bytes "
                                   "from its two parts' bytes, in training order, so the parts are already "
                                   "known).") from None
            raise

    def mismatch(self, got, want):
        if isinstance(got, tuple) and got and got[0] == "str":
            return (f"returned the str {got[1]!r}; return bytes. Turning bytes into text (.decode('utf-8')) "
                    "is a separate step, and not every byte string is valid UTF-8.")
        if isinstance(got, tuple) and got and got[0] not in ("bytes",):
            return f"expected bytes, got a {got[0]}: {got[1]}"
        if got == want:
            return None
        g, w = bytes(got[1]), bytes(want[1])
        return f"expected {w!r} ({len(w)} bytes), got {g!r} ({len(g)} bytes)."


def _as_bytes_result(value):
    """bytes are not evidence by themselves: send them as ('bytes', list of ints), anything else by its type."""
    if type(value) in (bytes, bytearray):
        return ("bytes", list(value))
    if type(value) is str:
        return ("str", value[:300])
    return (type(value).__name__, repr(value)[:200])


def _decode_hints(ids, merges):
    table = {i: bytes([i]) for i in range(256)}
    for (a, b), new in merges:
        table[new] = table[a] + table[b]

    def via_chars():
        return ("bytes", list("".join(chr(b) for i in ids for b in table[i]).encode("utf-8")))

    return [known_values(
        (via_chars, "Each id below 256 is one byte: build bytes from the byte values (bytes([i])), not chr(i) "
                    "encoded as UTF-8, which turns a byte like 195 into two bytes."),
    )]


@check
def bpe_decode(hidden, rng):
    def case(ids, merges, note="", want=None):
        shown = ids if len(ids) <= 8 else f"{len(ids)} ids"
        label = f"bpe_decode({shown}, {len(merges)} merges)" + (f": {note}" if note else "")
        call = lambda fn: _as_bytes_result(fn(*copy.deepcopy((ids, merges))))
        want_fn = ((lambda: ("bytes", list(want))) if want is not None
                   else (lambda: _as_bytes_result(R("bpe_decode")(ids, merges))))
        return Case(label, call, want_fn, same_bytes(), hints=_decode_hints(ids, merges))

    if not hidden:
        return [
            case([258, 100, 258, 97, 99], AAA_MERGES, "258 is (257, b), 257 is (256, a), 256 is (a, a)",
                 b"aaabdaaabac"),
            case([256, 257], AAA_MERGES, "aa then aaa", b"aaaaa"),
            case([98, 195, 169], AAA_MERGES, "bytes below 256 stand for themselves: b'b\\xc3\\xa9' is 'bé'",
                 "bé".encode("utf-8")),
            case([], AAA_MERGES, "no ids", b""),
        ]
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    merges = _train(text, 15)
    new = "über naïve 👋 cafés".encode("utf-8")
    ids = [int(i) for i in rng.integers(0, 256 + len(merges), size=25)]
    return [case(_encode(text, merges), merges, "the encoded training text"),
            case(_encode(new, merges), merges, "encoded new text"),
            case(ids, merges, "25 random ids, merged or not")]


# -------------------------------------------------------------------- predictions

# Notebooks 02 and 03 ask theirs the same way: answers worked out by hand count within 1e-3.
ask = partial(question, A, wording=NB01, atol=1e-3, rtol=1e-3, normalize=as_tuple, reason=True)


predict_utf8_length = ask(
    "predict_utf8_length", form=described("an int", is_int), mistakes=[
     (7, "7 is the number of characters. UTF-8 spends 1 byte on an ASCII character, 2 on 'ï' and 4 on the emoji."),
     (8, "8 counts every character as one byte and the emoji as two: the emoji takes 4 bytes in UTF-8 (2 is its "
         "length in UTF-16)."),
     (9, "9 is short by two: only ASCII characters (code points below 128) take one byte; 'ï' takes 2 and the "
         "emoji, above U+FFFF, takes 4."),
     (10, "10 is one byte short: 'ï' (U+00EF) takes 2 bytes in UTF-8 and the emoji (U+1F44B) takes 4.")])

predict_bpe_tokens = ask(
    "predict_bpe_tokens", form=described("a tuple of ints", int_tuple()), mistakes=[
     ((257, 97), "That is a longest-match tokenization. BPE replays the merges in training order: merge 1 turns "
                 "'aaaa' into (aa)(aa) = [256, 256], and then the pair (256, 97) that merge 2 looks for never occurs."),
     ((258,), "Token 258 is 'aaab': there is no 'b' in 'aaaa'."),
     ((97, 97, 97, 97), "The merges apply to any text, not only the training text: merge 1 pairs the a's."),
     ((256, 97, 97), "merge_pair replaces every non-overlapping occurrence, left to right, not only the first."),
     ((256, 256, 256), "Occurrences do not overlap: 'aaaa' holds (aa)(aa), two tokens, not three.")])

predict_param_counts = ask(
    "predict_param_counts", form=described("a tuple of two ints", int_tuple(2)), mistakes=[
     ((80, 80), "The table holds all V rows whether or not this prompt selects them: its parameters are V * d = "
                "16,000. The 5 selected rows, 5 * 16 = 80 numbers, are the activations."),
     ((16_000, 16_000), "The activations are only the selected rows, one d-vector per token of this prompt: "
                        "5 * 16 = 80. They change with the prompt; the 16,000 parameters do not."),
     ((80, 16_000), "Swapped: the parameters are the whole table (V * d = 16,000, learned, reused for every "
                    "prompt), the activations the 5 rows computed for this prompt (80)."),
     ((16_080, 80), "The lookup's output is not a parameter: parameters are only the table, V * d = 16,000."),
     ((1_016, 80), "A table of V rows of d numbers holds V * d = 16,000 numbers, not V + d.")])
