"""Checks for 04_softmax_and_probability.

Trusted references are PyTorch's own functions in float64 (``torch.softmax``,
``F.cross_entropy``, ``torch.special.entr``, ``torch.distributions``), imported
only when a local verdict needs them. Hints recompute the usual wrong answers
with NumPy from the case's own inputs and name the one the learner's result
matches.

One module per job (importing them registers their checks):

- :mod:`.logits`: softmax, softmax_temperature, cross_entropy, next_token_loss (a bug hunt), greedy_token,
  sample_token
- :mod:`.probability`: sequence_probability, expectation, variance, perplexity, entropy, kl_divergence,
  bayes_posterior, and the three predictions
- :mod:`.measure`: score_variance_by_width, the learner's measurement of the scores' spread against the width
- :mod:`.labs`: the predictions asked before the demonstrations run (predict_naive_sum, predict_top_weight,
  predict_greedy_words, predict_mat_share, predict_colder_loss, predict_lab_limits, predict_hot_loss)
- :mod:`.common`: the assignment, ``check`` and ``ask``, float64 tensors, and the NumPy models of mistakes
  several hints share

A notebook reads ``check.softmax(softmax)`` with ``from autograder.checks import nb04 as check``, so every
check is re-exported here under its own name (its exercise's grade_id).
"""
from __future__ import annotations

from .common import A, ask, check
from .logits import (cross_entropy, greedy_token, next_token_loss, sample_token, softmax,
                     softmax_temperature)
from .labs import (predict_colder_loss, predict_greedy_words, predict_hot_loss, predict_lab_limits,
                   predict_mat_share, predict_naive_sum, predict_top_weight)
from .measure import score_variance_by_width
from .probability import (bayes_posterior, entropy, expectation, kl_divergence, perplexity,
                          predict_better_model, predict_score_variance, predict_shift_and_scale,
                          sequence_probability, variance)

__all__ = [  # the checks a notebook calls, then what the tests read
    "sequence_probability", "expectation", "variance", "predict_shift_and_scale", "softmax", "predict_naive_sum",
    "softmax_temperature",
    "predict_score_variance", "score_variance_by_width", "predict_top_weight", "greedy_token", "sample_token",
    "predict_greedy_words", "predict_mat_share", "cross_entropy", "next_token_loss", "perplexity",
    "predict_better_model", "entropy",
    "kl_divergence", "predict_colder_loss", "predict_lab_limits", "predict_hot_loss", "bayes_posterior",
    "A", "ask", "check",
]
