"""Notebook 04's predictions about its demonstrations (issue 53: no experiment only watched): how one softmax at
width 256 spreads its weight, where greedy decoding of the tiny language model goes, how often sampling says the
word greedy never says, what a lower temperature does to each target's loss on logits with two tokens near the
top, and what the probability lab's loss reads at the two ends of its temperature dial (predict_lab_limits the
cold end, predict_hot_loss the hot one). Each is asked before its cell runs and revealed from the learner's own
functions. predict_naive_sum asks what the softmax written as is makes of logits whose exponentials fit but
whose sum does not."""
from __future__ import annotations

from ..compare import close
from ..questions import a_number, numbers_tuple, one_of
from .common import ask

_SUM = ("each e^709.5 = 1.35e308 fits below float64's largest, 1.8e308, but their sum 2.7e308 does not: the sum is "
        "inf, and a finite number over inf is 0")
predict_naive_sum = ask(
    "predict_naive_sum", form=one_of(("[0.5, 0.5]", "[nan, nan]", "[0, 0]", "[inf, inf]")), mistakes=[
        ("[0.5, 0.5]", "Two equal logits should give 0.5 each, and the shifted softmax does. Written as is, though, "
                       + _SUM + "."),
        ("[nan, nan]", "nan comes from inf / inf or 0 / 0. Here no numerator overflows, only the denominator: "
                       + _SUM + ", not nan."),
        ("[inf, inf]", "The numerators stay finite: " + _SUM + ", not inf.")],
    otherwise="[0, 0]: " + _SUM + ". Two zeros that do not sum to 1, and not a word of warning from the division.")

predict_top_weight = ask(
    "predict_top_weight", form=a_number, compare=close(atol=0.1, rtol=0.0), atol=0.05, rtol=0.0, mistakes=[
        (0.125, "1/8 would be eight keys weighed alike. Unscaled scores at d = 256 spread about 16 either way, so "
                "the best key's score typically stands several units above the next and tens above most, and "
                "e^7 is already about 1000: almost nothing is left to the rest."),
        (0.3, "About 0.3 is what the scores divided by sqrt(256) = 16 give, spread about 1. Unscaled they spread "
              "about 16, a softmax at temperature 1/16: nearly all the weight lands on one key."),
        (0.5, "Unscaled scores at d = 256 spread about 16, not about 1: the top two typically lie several units "
              "apart, and a gap of 7 already gives the top key about 1000 times the weight of the next: it takes "
              "nearly all the weight, not half.")],
    otherwise="Unscaled scores at d = 256 spread about 16 either way (a standard deviation of sqrt(256)); the "
              "best key's score typically stands several units above the next, so its weight is close to 1.")

predict_greedy_words = ask(
    "predict_greedy_words", form=a_number, compare=close(atol=0.0, rtol=0.0), mistakes=[
        (6, "Not every word is reached: from 'the' the top logit is 'cat' (2.0, above 'mat' at 1.5), and greedy "
            "never takes a second choice, so 'mat' and '.' never come."),
        (5, "'mat' scores 1.5 after 'the', below 'cat' at 2.0: greedy takes only the top logit, so it never "
            "goes to 'mat'."),
        (13, "13 tokens are printed, but greedy decoding repeats itself: the -> cat -> sat -> on -> the, a loop "
             "of four words."),
        (1, "Greedy does not stay on 'the': the top logit after 'the' is 'cat'; the text loops through four "
            "words.")],
    otherwise="Follow the top logit of each row: the -> cat -> sat -> on -> the: a loop of four different words.")

predict_colder_loss = ask(
    "predict_colder_loss", form=one_of(("all", "cat", "cat and dog", "dog and sun", "none")), mistakes=[
        ("cat", "Not only 'cat': 'dog' stands just 0.1 below it and 2.9 above 'sun'. Cooling doubles every gap, "
                "so 'sun' falls from 0.103 to 0.025 and both others share what it gave up: 'dog' goes from 0.437 "
                "to 0.463 (its loss 0.83 -> 0.77 nats)."),
        ("all", "The probabilities still sum to 1: what 'cat' and 'dog' gain, 'sun' loses (0.103 -> 0.025), and "
                "its loss rises from 2.28 to 3.67 nats."),
        ("none", "'cat' goes from 0.460 to 0.512 and 'dog' from 0.437 to 0.463: both losses fall. Only 'sun' "
                 "pays more."),
        ("dog and sun", "'sun' is the one that loses: cooling doubles its gap of 2.9 below the others and it "
                        "falls from 0.103 to 0.025, while 'cat' and 'dog' share what it gave up.")],
    otherwise="'cat' and 'dog': cooling doubles every gap, and the big gap lies below both of them, so they share "
              "what 'sun' loses (0.103 -> 0.025).")

_GAPS = "the gaps below 'cat' become 1 / 0.1 = 10 for 'dog' and 2 / 0.1 = 20 for 'sun'"
predict_lab_limits = ask(
    "predict_lab_limits", form=numbers_tuple(2), compare=close(atol=0.02, rtol=0.0), atol=0.02, rtol=0.0,
    mistakes=[
        ((1.408, 2.408), "Those are the two losses at temperature 1. At 0.1 every gap between the logits is ten "
                         "times wider: " + _GAPS + "."),
        ((1.0, 2.0), "1 and 2 are the gaps below 'cat' at temperature 1. Dividing the logits by 0.1 widens them "
                     "tenfold, and the loss of a lower token is about its gap: " + _GAPS + "."),
        ((0.1, 0.2), "That multiplies the gaps by the temperature. The softmax divides the logits by it: "
                     + _GAPS + "."),
        ((10.0, 10.0), "'sun' stands twice as far below 'cat' as 'dog' does, and at 0.1 its gap is 20, not 10: "
                       "its loss is twice 'dog''s."),
        ((1.099, 1.099), "A low temperature sharpens the bars, it does not flatten them: 'cat' takes nearly all "
                         "the probability, and " + _GAPS + "."),
        ((14.427, 28.854), "Those are in bits (log base 2); the course's losses are in nats: 10 and 20.")],
    otherwise="(10.00, 20.00): at temperature 0.1 " + _GAPS + ". 'cat''s term e^20 is nearly the whole sum, so the "
              "loss of a lower token is its gap over the temperature, plus about 0.00005.")

_FLAT = "every gap between the logits shrinks to 0, so the three bars go flat at 1/3 each"
predict_hot_loss = ask(
    "predict_hot_loss", form=a_number, compare=close(atol=0.02, rtol=0.0), atol=0.02, rtol=0.0, mistakes=[
        (1 / 3, "1/3 is where each bar heads, a probability; the loss is -ln of the target's bar: " + _FLAT
                + ", and -ln(1/3) = ln 3 = 1.10 nats."),
        (0.0, "A loss near 0 needs the target's bar near 1, which is what a LOW temperature gives the top token. "
              "Far above 1, " + _FLAT + ": the loss is -ln(1/3) = 1.10 for any target."),
        (-1.0986, "A loss -ln p is never negative, since p <= 1: that is ln(1/3), the log of the flat bar, "
                  "without the minus sign."),
        (1.585, "That is log2(3), in bits; the course's losses are in nats: ln 3 = 1.10."),
        (1.408, "1.408 is 'dog''s loss at temperature 1 (and the mean of the three there). The losses keep "
                "moving as the temperature rises: " + _FLAT + ", and each loss ends at ln 3 = 1.10."),
        (1.0, "The logits do not stay 2, 1 and 0 apart: dividing them by a huge temperature brings them together, "
              + _FLAT + ", and the loss ends at ln 3 = 1.10.")],
    otherwise="ln 3 = 1.10: " + _FLAT + ", and -ln(1/3) is the same for any target. Over V tokens it is ln V.")

_MAT = ("sampling draws each word as often as the softmax weighs it: e^1.5 / (e^2 + e^1.5 + 4 e^-2) = 4.48 / 12.41 "
        "= 0.36")
predict_mat_share = ask(
    "predict_mat_share", form=a_number, compare=close(atol=0.03, rtol=0.0), atol=0.01, rtol=0.0, mistakes=[
        (0.0, "0 is what greedy gives 'mat'. " + _MAT[0].upper() + _MAT[1:] + "."),
        (0.5, "'mat' is a close second, but half a logit is a factor e^0.5 = 1.65 between the two weights, so "
              "'cat' comes out more often; and " + _MAT + "."),
        (0.4286, "1.5 / (2 + 1.5) shares out the logits themselves; the softmax shares out their exponentials: "
                 + _MAT + "."),
        (0.6065, "e^1.5 / e^2 = 0.61 is how 'mat' compares with 'cat', not its share of all six words: " + _MAT
                 + "."),
        (1 / 6, "1/6 would be six words drawn alike; " + _MAT + ".")],
    otherwise="About 0.36: " + _MAT + ".")
