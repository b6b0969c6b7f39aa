"""Checks for 05_gradients_and_chain_rule.

The referee for every gradient is ``torch.autograd`` on float64 tensors built from
the case's NumPy inputs; ``adamw_step`` is compared with ``torch.optim.AdamW`` over
several steps. Hints recompute the usual wrong answers with NumPy (AdamW's and the bigram
training's in :mod:`autograder.checks.models.adamw`).

One module per half of the notebook, in its order (importing them registers their checks):

- :mod:`.gradients`: squared_loss_grad, sgd_step, predict_lr_limit, numerical_gradient, linear_backward,
  softmax_cross_entropy_backward
- :mod:`.training`: adamw_step, embedding_backward, softmax_jacobian, bigram_counts (a bug hunt),
  bigram_train_step, and the prediction questions between them (predict_validation_turn on the full training
  run's validation curve and predict_neural_vs_counting on its final validation loss, both asked before the run,
  then predict_generated_text on its table)
- :mod:`.minibatch`: predict_batch_spread and gradient_spread (the spread of a minibatch gradient against the
  batch size, measured by the learner)
- :mod:`.recurrence`: predict_residual_slope and predict_residual_sum (the identity path of one residual
  layer), predict_saturated_slope (a saturated softmax's Jacobian), predict_residual_depth (a
  residual stack 50 layers deep), rnn_forward,
  predict_gradient_fates and gradient_by_distance (a tanh RNN, and the
  gradient's size against distance beside one attention layer's), gated_forward and its two questions,
  predict_gated_fates and predict_gated_steps (an LSTM-like memory path: what the forget gate does to that
  gradient, and how many steps still run one after another)
- :mod:`.common`: the assignment, ``check`` and ``ask``, and float64 tensors in and out of torch

A notebook reads ``check.adamw_step(adamw_step)`` with ``from autograder.checks import nb05 as check``, so
every check is re-exported here under its own name (its exercise's grade_id), with what the tests read.
"""
from __future__ import annotations

# in the notebook's order, which the registry keeps
from .gradients import (linear_backward, numerical_gradient, predict_lr_limit, sgd_step,
                        softmax_cross_entropy_backward, squared_loss_grad)
from .training import (ADAMW_HINTS, BIGRAM_HINTS, adamw_step, bigram_counts, bigram_train_step,
                       embedding_backward, predict_embedding_grad, predict_jacobian_row_sum, predict_generated_text,
                       predict_neural_vs_counting, predict_overfit_floor, predict_validation_turn, softmax_jacobian)
from .minibatch import gradient_spread, predict_batch_spread
from .recurrence import (GATED_MESSAGES, RNN_MESSAGES, gated_forward, gradient_by_distance, predict_gated_fates,
                         predict_gated_steps, predict_gradient_fates, predict_residual_depth, predict_residual_slope,
                         predict_residual_sum, predict_saturated_slope, rnn_forward)

from .common import A, ask, check

__all__ = [  # the checks a notebook calls, then what the tests read
    "squared_loss_grad", "sgd_step", "predict_lr_limit", "numerical_gradient", "linear_backward", "softmax_cross_entropy_backward",
    "adamw_step", "embedding_backward", "predict_embedding_grad", "softmax_jacobian", "predict_jacobian_row_sum",
    "bigram_counts", "bigram_train_step", "predict_overfit_floor", "predict_validation_turn",
    "predict_neural_vs_counting", "predict_generated_text",
    "predict_batch_spread", "gradient_spread",
    "predict_residual_slope", "predict_residual_sum", "predict_saturated_slope", "predict_residual_depth", "rnn_forward", "predict_gradient_fates", "gradient_by_distance",
    "gated_forward", "predict_gated_fates", "predict_gated_steps",
    "A", "ask", "check", "ADAMW_HINTS", "BIGRAM_HINTS", "RNN_MESSAGES", "GATED_MESSAGES",
]
