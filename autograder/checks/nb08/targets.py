"""Checks for the last section of 08_causality_and_masking, where the targets come from: the causal objective's
pairs with and without a start token (BOS), the masked objective's, and the prediction about BOS."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, const, describe, equal, predicate, raises
from ..hints import numbers
from ..questions import as_tuple, described, int_tuple, is_
from .common import R, ask, check

# ------------------------------------------------- where the targets come from: BOS, and masked tokens

IGNORE = -100  # the target of a position that gives no training signal (PyTorch's cross_entropy ignores it)


def _int_pair(got, n, what):
    """None if got is (inputs, targets), two 1-d integer arrays of length n; else what is wrong."""
    if not (isinstance(got, tuple) and len(got) == 2):
        return f"expected a tuple (inputs, targets), got {describe(got)}."
    arrays = [numbers(a) for a in got]
    for name, a in zip(("inputs", "targets"), arrays):
        if a is None or a.ndim != 1 or a.dtype.kind not in "iu":
            return f"{name} should be a 1-d array of integer ids, got {describe(got[0 if name == 'inputs' else 1])}."
    if len(arrays[0]) != len(arrays[1]):
        return (f"inputs has {len(arrays[0])} ids and targets {len(arrays[1])}: every input position needs exactly "
                "one target (or one 'ignore'), so the two must be the same length.")
    if len(arrays[0]) != n:
        return f"expected {what}, got {len(arrays[0])} positions."
    return None


def _causal_pairs_compare(ids, bos_id):
    ids = np.asarray(ids)
    n = len(ids) if bos_id is not None else max(len(ids) - 1, 0)

    def test(got, want):
        pair = [numbers(a) for a in got] if isinstance(got, tuple) and len(got) == 2 else [None, None]
        if all(a is not None and a.size for a in pair) and np.array_equal(*pair):
            return ("each target is the id at its own input position: the model would learn to copy what it reads, "
                    "not to predict what comes next.")
        shape = _int_pair(got, n, f"{n} positions for {len(ids)} ids "
                                  f"{'after a BOS' if bos_id is not None else 'without a BOS'}")
        if shape:
            if bos_id is None and isinstance(got, tuple) and len(got) == 2 and numbers(got[1]) is not None \
                    and len(numbers(got[1])) == len(ids):
                shape += " Without a BOS the first id has nothing before it to be predicted from."
            return shape
        x, y = (numbers(a) for a in got)
        wx, wy = (numbers(a) for a in want)
        if not np.array_equal(y, wy):
            return (f"the targets {y.tolist()} are not the ids each position should predict ({wy.tolist()}): "
                    "position t reads inputs 0 .. t and its target is the id that follows them.")
        if not np.array_equal(x, wx):
            return (f"the inputs {x.tolist()} are not what the positions read ({wx.tolist()}): with a BOS the "
                    "sequence starts with it, and the last id is only ever a target.")
        return None
    return predicate(test)


def _causal_pairs_case(label, ids, bos_id, want):
    kw = {} if bos_id is None else {"bos_id": bos_id}
    return Case(label, call_with(list(ids), **kw), want, _causal_pairs_compare(ids, bos_id))


def _causal_batch_compare(batch, bos_id):
    batch = np.asarray(batch)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2):
            return f"expected a tuple (inputs, targets), got {describe(got)}."
        x, y = (numbers(a) for a in got)
        wx, wy = (numbers(a) for a in want)
        if x is None or y is None or x.shape != wx.shape or y.shape != wy.shape:
            shapes = ", ".join(str(None if a is None else a.shape) for a in (x, y))
            return (f"a batch of {batch.shape[0]} texts of {batch.shape[1]} ids each should give inputs and targets of "
                    f"shape {wx.shape} {'with a BOS' if bos_id is not None else 'without one'}, one row per text; got "
                    f"{shapes}. Each row is a text of its own: do what you do to one text along each row's ids, "
                    "never across the rows.")
        if not (np.array_equal(x, wx) and np.array_equal(y, wy)):
            return ("the shapes are right but some row's pairs are not that text's own: each row should hold what "
                    "one text of that row alone gives.")
        return None
    return predicate(test)


def _causal_batch_case(label, batch, bos_id, want):
    kw = {} if bos_id is None else {"bos_id": bos_id}
    return Case(label, call_with(np.array(batch), **kw), want, _causal_batch_compare(batch, bos_id))


def _ragged_want(texts, bos_id, pad_id):
    """The padded (B, L) inputs and targets of texts of different lengths, written apart from the reference."""
    rows = [([] if bos_id is None else [bos_id]) + list(t) for t in texts]
    L = max(len(r) - 1 for r in rows)
    inputs = np.full((len(rows), L), pad_id, dtype=np.int64)
    targets = np.full((len(rows), L), IGNORE, dtype=np.int64)
    for b, r in enumerate(rows):
        inputs[b, :len(r) - 1], targets[b, :len(r) - 1] = r[:-1], r[1:]
    return inputs, targets


def _causal_ragged_compare(texts, bos_id, pad_id):
    lengths = [len(t) for t in texts]

    def test(got, want):
        wx, wy = (numbers(a) for a in want)
        x, y = (numbers(a) for a in got) if isinstance(got, tuple) and len(got) == 2 else (None, None)
        if x is None or y is None or x.shape != wx.shape or y.shape != wy.shape or x.dtype.kind not in "iu" \
                or y.dtype.kind not in "iu":
            return (f"texts of {lengths} ids {'after a BOS each' if bos_id is not None else 'without a BOS'} should "
                    f"give two integer arrays of shape {wx.shape}, one row per text and as many columns as the "
                    f"longest text has positions; got {describe(got)}.")
        for b in range(len(texts)):
            real = wy[b] != IGNORE
            if not (np.array_equal(x[b, real], wx[b, real]) and np.array_equal(y[b, real], wy[b, real])):
                return (f"row {b} does not begin with what the text {list(texts[b])} alone gives "
                        f"({wx[b, real].tolist()} -> {wy[b, real].tolist()}); yours holds {x[b].tolist()} -> "
                        f"{y[b].tolist()}. Position t of every row must read that text's first inputs, so the "
                        "filler goes after them.")
        for b in range(len(texts)):
            pad = wy[b] == IGNORE
            if np.any(y[b, pad] != IGNORE):
                said = " the filler itself: the model would be trained to say the pad after each short text" \
                    if np.all(y[b, pad] == pad_id) else ""
                return (f"row {b}'s padded positions have the targets {y[b, pad].tolist()},{said}. Padding is not "
                        "text: a padded position should give no training signal at all.")
            if np.any(x[b, pad] != pad_id):
                return (f"row {b}'s padded positions read {x[b, pad].tolist()}: the inputs there should be the "
                        f"filler, pad_id = {pad_id}.")
        return None
    return predicate(test)


def _causal_ragged_case(label, texts, bos_id, pad_id):
    kw = {"pad_id": pad_id} if bos_id is None else {"bos_id": bos_id, "pad_id": pad_id}
    return Case(label, call_with([list(t) for t in texts], **kw), const(_ragged_want(texts, bos_id, pad_id)),
                _causal_ragged_compare(texts, bos_id, pad_id))


@check
def causal_lm_pairs(hidden, rng):
    if not hidden:
        ids = [5, 7, 2, 9]
        batch = [[5, 7, 2, 9], [1, 3, 3, 8]]
        return [
            _causal_pairs_case("causal_lm_pairs([5, 7, 2, 9])", ids, None,
                               const((np.array([5, 7, 2]), np.array([7, 2, 9])))),
            _causal_pairs_case("causal_lm_pairs([5, 7, 2, 9], bos_id=0)", ids, 0,
                               const((np.array([0, 5, 7, 2]), np.array([5, 7, 2, 9])))),
            _causal_pairs_case("causal_lm_pairs([4]): one id, nothing to predict it from", [4], None,
                               const((np.array([], dtype=int), np.array([], dtype=int)))),
            _causal_batch_case("causal_lm_pairs(np.array([[5, 7, 2, 9], [1, 3, 3, 8]])): two texts in a batch", batch,
                               None, const((np.array([[5, 7, 2], [1, 3, 3]]), np.array([[7, 2, 9], [3, 3, 8]])))),
            _causal_batch_case("causal_lm_pairs(np.array([[5, 7, 2, 9], [1, 3, 3, 8]]), bos_id=0)", batch, 0,
                               const((np.array([[0, 5, 7, 2], [0, 1, 3, 3]]), np.array(batch)))),
            _causal_ragged_case("causal_lm_pairs([[5, 7, 2, 9], [1, 3]], pad_id=0): two texts of different lengths",
                                [[5, 7, 2, 9], [1, 3]], None, 0),
            _causal_ragged_case("causal_lm_pairs([[5, 7, 2, 9], [1, 3], [6]], bos_id=99, pad_id=0)",
                                [[5, 7, 2, 9], [1, 3], [6]], 99, 0),
            Case("causal_lm_pairs([[5, 7, 2, 9], [1, 3]]): texts of different lengths and no pad_id",
                 call_with([[5, 7, 2, 9], [1, 3]]), raises("texts of different lengths need a pad_id to fill the short rows"), equal()),
        ]
    ids = [int(i) for i in rng.integers(1, 50, size=11)]
    batch = rng.integers(1, 50, size=(3, 7)).tolist()
    ragged = [[int(i) for i in rng.integers(3, 50, size=n)] for n in (3, 8, 1, 5)]
    return [_causal_pairs_case("causal_lm_pairs of 11 random ids", ids, None, lambda: R("causal_lm_pairs")(ids)),
            _causal_pairs_case("causal_lm_pairs of 11 random ids, bos_id=0", ids, 0,
                               lambda: R("causal_lm_pairs")(ids, bos_id=0)),
            _causal_pairs_case("causal_lm_pairs([3], bos_id=1)", [3], 1, lambda: R("causal_lm_pairs")([3], bos_id=1)),
            _causal_batch_case("causal_lm_pairs of a (3, 7) batch of random ids, bos_id=0", batch, 0,
                               lambda: R("causal_lm_pairs")(np.array(batch), bos_id=0)),
            _causal_ragged_case("causal_lm_pairs of random texts of 3, 8, 1 and 5 ids, pad_id=2", ragged, None, 2),
            _causal_ragged_case("causal_lm_pairs of random texts of 3, 8, 1 and 5 ids, bos_id=0, pad_id=2", ragged, 0,
                                2),
            Case("causal_lm_pairs([[4, 4, 4], [9]], bos_id=2): texts of different lengths and no pad_id",
                 call_with([[4, 4, 4], [9]], bos_id=2),
                 raises("texts of different lengths need a pad_id to fill the short rows"), equal())]


def _masked_pairs_compare(ids, positions, mask_id):
    ids = np.asarray(ids)

    def test(got, want):
        shape = _int_pair(got, len(ids), f"one input and one target for each of the {len(ids)} ids")
        if shape:
            return shape
        x, y = (numbers(a) for a in got)
        wx, wy = (numbers(a) for a in want)
        hidden_pos = np.asarray(sorted(set(positions)), dtype=int)
        if hidden_pos.size and np.array_equal(x[hidden_pos], ids[hidden_pos]):
            return ("at a masked position the input still shows the id the model must predict there: it can copy "
                    "its answer, and the loss says nothing about understanding the context.")
        if not np.array_equal(x, wx):
            return (f"the inputs {x.tolist()} should be the ids with only the masked positions replaced by "
                    f"mask_id = {mask_id} ({wx.tolist()}).")
        if hidden_pos.size and hidden_pos.max() + 1 < len(ids) and np.array_equal(y[hidden_pos], ids[hidden_pos + 1]):
            return ("the target at a masked position is the id after it: this objective asks for the hidden id "
                    "itself, read from both sides.")
        keep = np.ones(len(ids), bool)
        keep[hidden_pos] = False
        if np.any(y[keep] != IGNORE):
            return (f"positions that were not masked carry a target ({y.tolist()}): only the masked positions give a "
                    f"training signal here; the others should hold {IGNORE}, the loss's 'ignore'.")
        if not np.array_equal(y, wy):
            return f"the targets {y.tolist()} should hold the hidden ids at the masked positions ({wy.tolist()})."
        return None
    return predicate(test)


def _masked_pairs_case(label, ids, positions, mask_id, want):
    return Case(label, call_with(list(ids), list(positions), mask_id), want,
                _masked_pairs_compare(ids, positions, mask_id))


@check
def masked_lm_pairs(hidden, rng):
    if not hidden:
        return [
            _masked_pairs_case("masked_lm_pairs([5, 7, 2, 9, 4], mask_positions=[1, 3], mask_id=1)",
                               [5, 7, 2, 9, 4], [1, 3], 1,
                               const((np.array([5, 1, 2, 1, 4]), np.array([IGNORE, 7, IGNORE, 9, IGNORE])))),
            _masked_pairs_case("masked_lm_pairs([5, 7, 2], mask_positions=[0], mask_id=1): the first id masked",
                               [5, 7, 2], [0], 1, const((np.array([1, 7, 2]), np.array([5, IGNORE, IGNORE])))),
            Case("masked_lm_pairs([5, 7, 2], mask_positions=[3], mask_id=1): a position past the end",
                 call_with([5, 7, 2], [3], 1), raises("mask position 3 is outside 0 .. 2"), equal()),
        ]
    ids = [int(i) for i in rng.integers(2, 50, size=12)]
    positions = sorted(int(p) for p in rng.choice(12, size=4, replace=False))
    return [_masked_pairs_case(f"masked_lm_pairs of 12 random ids, mask_positions={positions}, mask_id=1", ids,
                               positions, 1, lambda: R("masked_lm_pairs")(ids, positions, 1)),
            _masked_pairs_case("masked_lm_pairs([8, 9], mask_positions=[], mask_id=1): nothing masked", [8, 9], [], 1,
                               lambda: R("masked_lm_pairs")([8, 9], [], 1)),
            Case("masked_lm_pairs([8, 9, 6], mask_positions=[-1], mask_id=1): a position before the start",
                 call_with([8, 9, 6], [-1], 1), raises("mask position -1 is outside 0 .. 2"), equal())]


predict_bos_targets = ask(
    "predict_bos_targets", reason=True, normalize=as_tuple,
    label="predict_bos_targets(): (targets with a BOS, targets with a BOS and an EOS) for a text of 6 ids",
    form=described("a tuple of two ints", int_tuple(2)), compare=equal(),
    mistakes=[(is_((7, 8)), "A BOS is only ever read, never said: nothing comes before it, so no position is asked "
                            "for it. It adds one position, whose target is the first id."),
              (is_((5, 6)), "The BOS adds a position whose target is the first id: that id, which nothing came "
                            "before, now has a position that reads something and is asked for it."),
              (is_((6, 6)), "The EOS is an id to say: the position of the last id, which had nothing to be asked "
                            "for, is now asked for the EOS. It is never read, so it adds one target.")],
    otherwise="Each target needs a position before it to read: a BOS in front gives the first id one (6 targets), "
              "and an EOS at the end gives the last id something to be asked for (7).")
