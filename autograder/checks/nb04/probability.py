"""Notebook 04's checks of probability: perplexity, entropy, kl_divergence, sequence_probability,
expectation, variance, bayes_posterior, and the three predictions."""
from __future__ import annotations

import math

import numpy as np

from ..compare import Case, call_with, close, const, raises
from ..hints import known_mistakes, numbers, same_numbers
from ..questions import a_number, numbers_tuple, one_of
from ..toolkit import import_torch, nonfinite_hint, stable_softmax
from .common import LN2, _t, ask, check, sign_hint


# ------------------------------------------------------------------------------ perplexity

def _perplexity_hint(x):
    """Symptoms in the learner's words (what a uniform chooser would say), never the expression that fixes it."""
    return known_mistakes(
        (lambda: 2.0 ** x, "That count belongs to a loss measured in bits (log base 2); mean_nll is in nats, "
                           "natural logs, as your cross_entropy measures it."),
        (lambda: math.exp(-x), "That number falls as the loss grows: a worse model got a smaller count. It is "
                               "a typical probability of the true token, and the count of equally likely tokens "
                               "is its inverse."),
        (lambda: 1.0 / x, "A sure, right model (mean NLL 0) must count as 1 token, and here the count falls as "
                          "the loss grows: a uniform chooser among k tokens has mean NLL ln k, not 1 / k."),
    )


def _negative_nll_case(label, x):
    return Case(label, call_with(x), raises(f"mean_nll must be >= 0, got {x}"))


@check
def perplexity(hidden, rng):
    values = [math.log(4.0), 0.0, LN2] if not hidden else [float(v) for v in rng.uniform(0.1, 6.0, size=3)]
    labels = ["perplexity(ln 4) is 4: as unsure as a fair choice among 4 tokens", "perplexity(0.0) is 1",
              "perplexity(ln 2) is 2"] if not hidden else [f"perplexity({v:.4f})" for v in values]
    cases = [Case(label, call_with(v), lambda v=v: math.exp(v), close(), hints=[_perplexity_hint(v)])
             for label, v in zip(labels, values)]
    below = -0.5 if not hidden else -float(rng.uniform(0.01, 3.0))
    return cases + [_negative_nll_case(f"perplexity({below:.4g}): a mean NLL below 0 is no loss any model can "
                                       "have (a count below 1 token), so it must raise ValueError", below)]


# ------------------------------------------------------------------------- entropy and KL

def _entropy_case(label, p):
    p = np.asarray(p, dtype=float)

    def want():
        return import_torch().special.entr(_t(p)).sum().item()

    hints = [
        known_mistakes(
            (lambda: -np.sum(p[p > 0] * np.log2(p[p > 0])), "Nats use the natural log (np.log), not log2."),
            (lambda: -np.mean(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)),
             "Entropy is a sum over the outcomes, not a mean."),
        ),
        nonfinite_hint("Not finite: an outcome with probability 0 reached the log, and 0 * log 0 is nan in "
                       "floating point. Here 0 log 0 counts as 0: an outcome that never happens adds no surprise.",
                       (p == 0).any()),
        sign_hint("The sign is flipped: an average surprise is never negative, and no outcome's surprise is."),
    ]
    return Case(label, call_with(p), want, close(), hints=hints)


def _kl_case(label, q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)

    def want():
        D = import_torch().distributions
        return D.kl_divergence(D.Categorical(probs=_t(q)), D.Categorical(probs=_t(p))).item()

    hints = [
        known_mistakes(
            (lambda: np.sum(p * np.log(p / q)), "That is KL(p || q): the two distributions have swapped roles. "
                                                "The outcomes come from q, the first argument, and p scores them."),
            (lambda: np.sum(q[q > 0] * np.log2(q[q > 0] / p[q > 0])), "Nats use the natural log (np.log), not log2."),
        ),
        nonfinite_hint("Not finite: an outcome with q = 0 reached the log. Here 0 log 0 counts as 0: an outcome "
                       "the data never produces adds nothing, whatever p gives it.", (q == 0).any()),
        _ruled_out_hint,
    ]
    return Case(label, call_with(q, p), want, close(), hints=hints)


def _ruled_out_hint(got, want):
    """p = 0 where q > 0: the answer is inf, and a finite one came from clipping p or an epsilon."""
    g, w = numbers(got), numbers(want)
    if w is not None and g is not None and np.isposinf(w).all() and np.isfinite(g).all():
        return ("p gives 0 to an outcome that q produces, so the KL divergence is infinite (np.inf): an epsilon "
                "or a clip of p turns that into a large finite number and hides it.")
    return None


@check
def entropy(hidden, rng):
    if not hidden:
        return [
            _entropy_case("entropy([0.5, 0.5]) is ln 2 = 0.693 nats", [0.5, 0.5]),
            _entropy_case("entropy([0.25, 0.25, 0.25, 0.25]) is ln 4", [0.25] * 4),
            _entropy_case("entropy([1, 0]) is 0: a sure outcome, with 0 log 0 = 0", [1.0, 0.0]),
        ]
    p = rng.dirichlet(np.ones(6))
    p0 = rng.dirichlet(np.ones(4))
    return [
        _entropy_case("entropy of a random distribution over 6 outcomes", p),
        _entropy_case("entropy with zeros among 7 outcomes", np.insert(p0, [0, 2, 4], 0.0)),
        _entropy_case("entropy of a one-hot distribution", np.eye(5)[3]),
    ]


@check
def kl_divergence(hidden, rng):
    if not hidden:
        return [
            _kl_case("kl_divergence([0.5, 0.5], [0.5, 0.5]) is 0", [0.5, 0.5], [0.5, 0.5]),
            _kl_case("kl_divergence([0.5, 0.5], [0.8, 0.2]) is 0.223 (not 0.193, which is KL(p || q))",
                     [0.5, 0.5], [0.8, 0.2]),
            _kl_case("kl_divergence([1, 0], [0.5, 0.5]) is ln 2, with 0 log 0 = 0", [1.0, 0.0], [0.5, 0.5]),
            _kl_case("kl_divergence([0.5, 0.5], [1, 0]) is inf: p rules out an outcome that q produces",
                     [0.5, 0.5], [1.0, 0.0]),
        ]
    q, p = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    q0 = np.insert(rng.dirichlet(np.ones(3)), [1, 3], 0.0)
    return [
        _kl_case("kl_divergence of two random distributions over 5 outcomes", q, p),
        _kl_case("kl_divergence(q, q) is 0", q, q),
        _kl_case("kl_divergence where q has zeros", q0, rng.dirichlet(np.ones(5))),
        # fixed, whatever the seed: random distributions never hold a 0 where the other does not
        _kl_case("kl_divergence([0.2, 0.3, 0.5], [0.4, 0.6, 0]) is inf", [0.2, 0.3, 0.5], [0.4, 0.6, 0.0]),
    ]


# ------------------------------------------------------------------- sequence_probability

def _sequence_case(label, cond):
    c = np.asarray(cond, dtype=float)
    if c.size == 0:
        hint = lambda got, want: "A sequence of no tokens is certain: with no step to fail, its probability is 1."
    else:
        hint = known_mistakes(
            (lambda: c.sum(), "That is the sum of the steps' probabilities, which can exceed 1: the sequence needs "
                              "the first step AND then the second, and so on."),
            (lambda: np.log(c).sum(), "That is the log-probability (a sum of logs), a number below 0; the "
                                      "contract asks for the probability itself, a number in [0, 1]."),
            (lambda: c.mean(), "That is the average of the steps' probabilities: one impossible step would not make "
                               "the whole sequence impossible, and it must."),
        )
    return Case(label, call_with(list(cond)), lambda: math.prod(cond), close(), hints=[hint])


@check
def sequence_probability(hidden, rng):
    if not hidden:
        return [
            _sequence_case("sequence_probability([0.2, 0.4]): 'cat sleeps' comes out 8 times in 100",
                           [0.2, 0.4]),
            _sequence_case("sequence_probability([0.5])", [0.5]),
            _sequence_case("sequence_probability([0.9, 0.5, 0.1, 1.0])", [0.9, 0.5, 0.1, 1.0]),
        ]
    cond = [float(c) for c in rng.uniform(0.05, 1.0, size=10)]
    return [
        _sequence_case("sequence_probability of 10 random conditional probabilities", cond),
        _sequence_case("sequence_probability([]): the empty sequence has probability 1", []),
    ]


# --------------------------------------------------------------------- expectation, variance

def _moment_case(label, name, values, probs):
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    mean = float(np.sum(values * probs))
    want = mean if name == "expectation" else float(np.sum(probs * (values - mean) ** 2))

    hint = known_mistakes(
        (lambda: float(np.sum(probs * values ** 2)), "That is the average of the squared values, E[X^2]: a spread "
                                                      "is measured from the mean, not from 0."),
        (lambda: float(np.mean(values)), "That is the plain average of the values: weight each value by its "
                                         "probability."),
        (lambda: float(np.var(values)), "That is the unweighted variance of the values: weight each squared "
                                        "deviation by its probability."),
    )
    return Case(label, call_with(values, probs), const(want), close(),
                hints=[hint, sign_hint("The sign is flipped: an average of squares is never negative.")])


def _far_variance_case(shift):
    """The worked example moved by ``shift``: the spread, 0.61, is unchanged, but E[X^2] is about shift**2, so
    E[X^2] - E[X]^2 subtracts two numbers that agree in every digit float64 keeps (catastrophic cancellation)."""
    values = np.array([1.0, 2.0, 3.0]) + shift

    def cancelled(got, want):
        return (f"At values near {shift:.0e}, E[X^2] is near {shift * shift:.0e} and float64 keeps about 16 digits, "
                "so a route that squares these values and then subtracts loses every digit of the answer: keep "
                "the numbers small before anything is squared.")

    return Case(f"variance([1, 2, 3] + {shift:.0e}, [0.5, 0.3, 0.2]) is still 0.61: moving every value moves the "
                "mean, not the spread", call_with(values, [0.5, 0.3, 0.2]), const(0.61), close(atol=1e-6, rtol=1e-6),
                hints=[cancelled])


def _moment_checks(name, hidden, rng):
    v, p = [1.0, 2.0, 3.0], [0.5, 0.3, 0.2]
    worked = "1.7" if name == "expectation" else "0.61"
    bad_sum = Case(f"{name}([1, 2, 3], [0.5, 0.3, 0.1]): probs sum to 0.9, not 1",
                   call_with(v, [0.5, 0.3, 0.1]), raises("probs must sum to 1, got 0.9"))
    bad_neg = Case(f"{name}([0, 1], [1.2, -0.2]): a negative probability (although they sum to 1)",
                   call_with([0.0, 1.0], [1.2, -0.2]), raises("probs must be >= 0"))
    if not hidden:
        cases = [_moment_case(f"{name}([1, 2, 3], [0.5, 0.3, 0.2]) is {worked}", name, v, p),
                 _moment_case(f"{name}([4, 4], [0.3, 0.7])", name, [4.0, 4.0], [0.3, 0.7]),
                 bad_sum, bad_neg]
        return cases + ([_far_variance_case(1e8)] if name == "variance" else [])
    values = rng.normal(size=6) * 3
    probs = rng.dirichlet(np.ones(6))
    far = [_far_variance_case(float(rng.choice([1e9, -1e9, 3e8])))] if name == "variance" else []
    return far + [_moment_case(f"{name} of 6 random values", name, values, probs),
            _moment_case(f"{name} of a sure outcome", name, [2.0, -5.0, 3.0], [0.0, 1.0, 0.0]),
            Case(f"{name}(values, probs summing to 1.5)", call_with(values, probs * 1.5),
                 raises("probs must sum to 1")),
            Case(f"{name}([1, 2, 3], [0.7, -0.1, 0.4])", call_with(v, [0.7, -0.1, 0.4]),
                 raises("probs must be >= 0"))]


@check
def expectation(hidden, rng):
    return _moment_checks("expectation", hidden, rng)


@check
def variance(hidden, rng):
    return _moment_checks("variance", hidden, rng)


# ------------------------------------------------------------------------------- bayes

def _bayes_case(label, prior, pa, pna):
    weighed_by_prior = pa * prior / (pa * prior + pna * prior)

    def both(got, want):  # when P(flag | A) + P(flag | not A) = 1, two mistakes give the same number
        if same_numbers(got, pa) and same_numbers(got, weighed_by_prior):
            return ("That equals P(flag | A) itself, the filter's hit rate: it is the same whatever share of "
                    "the texts is machine-written, and the answer must not be.")
        return None

    hint = known_mistakes(
        (lambda: pa * prior, "That is the share of ALL texts that are machine-written and flagged. The question "
                             "is asked about the flagged texts only: what share of those is machine-written?"),
        (lambda: pa, "That is the filter's hit rate, P(flag | A): it is the same however rare machine-written "
                     "texts are, and the answer is not. Count the flagged texts of each kind among 10,000."),
        (lambda: weighed_by_prior, "Your count of wrongly flagged texts is too small: it treats the texts that "
                                   "are not machine-written as if they were as rare as the machine-written ones."),
        (lambda: pa * prior / (pa + pna), "Your count of all flagged texts adds the two flag rates as if each "
                                          "kind of text made up the whole population: each rate applies only to "
                                          "its own kind's share."),
    )
    return Case(label, call_with(prior, pa, pna), const(pa * prior / (pa * prior + pna * (1 - prior))), close(),
                hints=[both, hint])


@check
def bayes_posterior(hidden, rng):
    if not hidden:
        return [_bayes_case("bayes_posterior(0.01, 0.9, 0.1) is about 0.083", 0.01, 0.9, 0.1),
                _bayes_case("bayes_posterior(0.5, 0.8, 0.2) is 0.8", 0.5, 0.8, 0.2)]
    return [_bayes_case(f"bayes_posterior({a:.3f}, {b:.3f}, {c:.3f})", float(a), float(b), float(c))
            for a, b, c in rng.uniform(0.02, 0.98, size=(3, 3))]


# ------------------------------------------------------------------------------ questions


_PLAIN, _SHARP = float(stable_softmax([2.0, 1.0, 0.0])[0]), float(stable_softmax([4.0, 2.0, 0.0])[0])
_SHIFT = ("Adding the same number to every logit changes nothing: e^3 multiplies the numerator and the "
          "denominator alike, so (a) stays 0.665.")
_DOUBLE = ("Doubling the logits doubles every difference between them, which sharpens the distribution: "
           "(b) is softmax([4, 2, 0])[0] = 0.867 (a temperature of 1/2).")

predict_shift_and_scale = ask(
    "predict_shift_and_scale", form=numbers_tuple(2), compare=close(atol=0.01, rtol=0.0),
    atol=0.01, rtol=0.0, mistakes=[
        ((_PLAIN, _PLAIN), _DOUBLE),
        ((_SHARP, _SHARP), _SHIFT),
        ((5 / 12, 4 / 6), "Softmax exponentiates before it normalises: e^5 / (e^5 + e^4 + e^3), not "
                          "5 / (5 + 4 + 3). Only differences between logits matter."),
        ((_PLAIN, 0.5 * _PLAIN), _DOUBLE),
        ((_PLAIN, _PLAIN ** 2), _DOUBLE)],
    otherwise="(a) is 0.665, unchanged: only differences between logits matter. (b) is 0.867: doubling is a "
              "temperature of 1/2.")

predict_better_model = ask(
    "predict_better_model", form=one_of(("A", "B", "same")), mistakes=[
        ("B", "Perplexity is per token, and a word token covers 5 characters here. Compare the total "
              "NLL of the same text: A spends 300 ln 20 = 898.7 nats, B 1500 ln 2 = 1039.7; per "
              "character 0.599 against 0.693. A gives the text the higher probability."),
        ("same", "The totals differ: A spends 300 ln 20 = 898.7 nats on the text, B 1500 ln 2 = 1039.7 "
                 "nats, so A gives it the higher probability (e^-898.7 against e^-1039.7).")])

predict_score_variance = ask(
    "predict_score_variance", form=a_number, compare=close(atol=0.5, rtol=0.0), atol=0.5, rtol=0.0,
    mistakes=[
        (1.0, "Each product q_i k_i has variance 1, but the score adds 64 of them, and variances of "
              "independent terms add: 64."),
        (8.0, "8 = sqrt(64) is the standard deviation of q . k; its variance is 64."),
        (0.0, "The mean of q . k is 0, but the scores spread around it: variance 64 (64 independent "
              "terms of variance 1)."),
        (4096.0, "Variances of independent terms add: 64 terms of variance 1 give 64, not 64^2."),
        (0.125, "The variance grows with the width: 64 terms of variance 1 give 64.")],
    otherwise="64: each product q_i k_i has variance 1 and the 64 independent products add their variances.")
