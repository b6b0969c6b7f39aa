"""Notebook 08's predictions asked before its given experiments: the source's floor against an even guess, the
cheat's losses on whole windows and on prefixes, a row that keeps no key in the stable softmax, which of four
functions are causal, and the ids each objective reads."""
from __future__ import annotations

from ..compare import equal, fmt
from ..questions import as_tuple, described, int_tuple, is_, one_of, plain
from .common import ask

FLOOR_CHOICES = ("below 2.08", "equal", "above 2.08")


predict_floor = ask(
    "predict_floor", reason=True,
    label="predict_floor(): the source's entropy rate against ln 8 = 2.08, the cost of an even guess over 8 tokens",
    form=one_of(FLOOR_CHOICES), compare=equal(),
    mistakes=[(is_("above 2.08"), "No distribution over 8 tokens has more entropy than the even one, ln 8 = 2.08 "
                                  "(notebook 04): each row's entropy is at most that, and so is their average."),
              (is_("equal"), "Only the even distribution reaches ln 8, and the rows of P are far from even: most of "
                             "each row's probability sits on a few tokens, so the average entropy is lower.")],
    otherwise="Each row's entropy is at most ln 8, reached only by the even row; the rows of P are uneven, so the "
              "floor is below 2.08.")


EMPTY_ROW_CHOICES = ("nan", "equal weights", "all zeros", "an error")


def _two_choices(got):
    g = plain(got)
    if isinstance(g, (tuple, list)) and len(g) == 2 and all(isinstance(x, str) and x in EMPTY_ROW_CHOICES for x in g):
        return None
    return f"answer with a pair (with -inf, with -1e9), each one of {', '.join(map(repr, EMPTY_ROW_CHOICES))}; got {fmt(g)}."


predict_empty_row = ask(
    "predict_empty_row", reason=True, normalize=as_tuple,
    label="predict_empty_row(): the stable softmax of a row whose every key is blocked, with -inf and with -1e9",
    form=_two_choices, compare=equal(),
    mistakes=[(is_(("equal weights", "nan")), "The other way round: -inf minus -inf is not a number, so -inf gives "
                                              "NaN; -1e9 minus -1e9 is 0 at every key, e^0 = 1 each: equal weights."),
              (lambda g: plain(g)[1] == "all zeros", "e^(-1e9) would be 0, but the largest score is subtracted "
                                                   "first: -1e9 - (-1e9) = 0, e^0 = 1 at every key, equal weights."),
              (lambda g: plain(g)[0] != "nan", "The largest of three -inf is -inf, and -inf - (-inf) is NaN, not a "
                                               "number: NumPy returns NaN quietly (with a warning), no error."),
              (lambda g: plain(g)[1] != "equal weights", "With -1e9 every score minus the largest is exactly 0: "
                                                         "e^0 = 1 at every key, so the row comes out 1/3, 1/3, 1/3.")],
    otherwise="-inf - (-inf) is NaN; -1e9 - (-1e9) = 0 at every key, so equal weights over keys that were blocked.")


WHICH_CAUSAL = ("trailing_mean", "centred_mean", "minus_first", "minus_last")


def _four_booleans(got):
    g = plain(got)
    if isinstance(g, (tuple, list)) and len(g) == 4 and all(isinstance(x, bool) for x in g):
        return None
    return f"answer with a tuple of four booleans, one for each of {', '.join(WHICH_CAUSAL)}; got {fmt(g)}."


def _wrong_about(i, why):
    return lambda g: plain(g)[i] != (True, False, True, False)[i], why


predict_which_causal = ask(
    "predict_which_causal", reason=True, normalize=as_tuple,
    label="predict_which_causal(): which of trailing_mean, centred_mean, minus_first, minus_last are causal",
    form=_four_booleans, compare=equal(),
    mistakes=[_wrong_about(0, "trailing_mean's row t reads rows t - 2 .. t, none after t: causal."),
              _wrong_about(1, "centred_mean's row t reads row t + 1, its future: not causal."),
              _wrong_about(2, "minus_first's row t reads x[t] and x[0], and row 0 is never after t: causal."),
              _wrong_about(3, "minus_last's row t reads x[-1], the last row, after every t but the last: not causal.")])


IDS_READ_MISTAKES = [
    (is_((4, 5)), "The masked model reads every input, but one of them is the second [MASK]: position 1's id is "
                  "hidden too, so 4 of the 5 other ids, not 5."),
    (is_((5, 4)), "The causal model reads the BOS and the 4 ids before position 4; the BOS is not an id of the text."),
    (is_((5, 5)), "Neither model reads the BOS or a [MASK] as an id of the text: causal 4 (the ids before), masked 4 "
                  "(the 5 others but the hidden one)."),
    (lambda g: plain(g)[0] != 4, "The causal model, asked for the id at position 4, has read the ids before it: "
                                 "5, 7, 2, 9, four of them."),
    (lambda g: plain(g)[1] != 4, "The masked model reads both sides, 5 other ids, but position 1 is hidden too: "
                                 "5, 2, 9 and 8, four of them."),
]


predict_ids_read = ask(
    "predict_ids_read", reason=True, normalize=as_tuple,
    label="predict_ids_read(): the text's ids each model reads when asked for the id at position 4, (causal, masked)",
    form=described("a pair of ints (causal, masked)", int_tuple(2)), compare=equal(), mistakes=IDS_READ_MISTAKES)


CHEAT_PREFIX_CHOICES = ("below 1.42", "between", "above 2.08")


def _cheat_pair(got):
    g = plain(got)
    if isinstance(g, (tuple, list)) and len(g) == 2 and all(isinstance(x, str) and x in CHEAT_PREFIX_CHOICES for x in g):
        return None
    return (f"answer with a pair (on whole windows, on prefixes only), each one of "
            f"{', '.join(map(repr, CHEAT_PREFIX_CHOICES))}; got {fmt(g)}.")


predict_cheat_prefix_loss = ask(
    "predict_cheat_prefix_loss", reason=True, normalize=as_tuple,
    label="predict_cheat_prefix_loss(): the losses of the model trained without a mask, on whole windows and on "
          "prefixes only, against the floor of 1.42 nats and uniform guessing's ln 8 = 2.08",
    form=_cheat_pair, compare=equal(),
    mistakes=[(lambda g: plain(g)[0] != "below 1.42",
               "On whole windows, as it trained, every position but the last can read the very token it must "
               "predict among the later inputs of its own window. The floor of 1.42 holds for a model that cannot "
               "see the answer; one that reads the answer and copies it goes far below it."),
              (lambda g: plain(g)[1] == "below 1.42",
               "On a prefix no model can read what comes next, so none beats the source's 1.42 nats on average: "
               "the honest floor holds for the cheat too."),
              (lambda g: plain(g)[1] == "between",
               "A model that knew nothing and said so would pay ln 8 = 2.08. This one was trained to find the answer "
               "among its inputs and copy it, sure of itself; on a prefix that input is gone, and it stays sure of a "
               "token that is usually wrong, which costs more than a uniform guess.")],
    otherwise="Trained with the answer in view, the model learnt to copy it, confidently: far below the floor on "
              "whole windows. On a prefix it is as confident and usually wrong, and a confident wrong guess costs "
              "more than ln 8 = 2.08.")
