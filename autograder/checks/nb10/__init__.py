"""Checks for 10_decoder_block: compared with PyTorch's own layers, given the same weights.

Weights and inputs are NumPy arrays made when the cases are built (the grader judges
evidence without importing torch); they are copied by parameter name into the learner's
module and into PyTorch's. Hints rerun known wrong variants in NumPy and name the one
an answer matches. The reference models and their variants are in :mod:`autograder.checks.models`
(the attention in :mod:`~autograder.checks.models.numpy_attention`, which notebook 09's checks use too).

One module per group of exercises, in the notebook's order (importing them registers their checks):

- :mod:`.layers`: LayerNorm, predict_norm_vs_softmax, FeedForward, DecoderBlock, count_block_params
- :mod:`.ninja`: layernorm_backward_nodes, LayerNorm's backward pass derived node by node
- :mod:`.dropout`: where a block and a TinyGPT drop in training mode (no check of its own)
- :mod:`.tinygpt`: TinyGPT and its options (positions, tie_weights, gelu, dropout)
- :mod:`.training`: lm_loss, generate, the prediction questions (the experiments' among them), train_step
- :mod:`.cache_and_maps`: kv_cache_bytes, generate_cached, attention_maps, agreement_scores
- :mod:`.gpt2`: from_gpt2, interleaved_to_halves, to_llama_attention
- :mod:`.induction`: induction_pairs, for the closing extension (an induction head)
- :mod:`.measured`: predictions before eight of the notebook's measurements (predict_norm_placement,
  predict_mask_handover, predict_stacked_swap, predict_causal_models, predict_bigram_share, predict_overfit, predict_final_loss, predict_loss_by_position), without_positions (the ablation of
  positions, written by the learner), init_gpt2_ (GPT-2's initialisation, the extension's exercise) and
  predict_unscaled_growth (the stream's spread without GPT-2's scaled writes), predict_repeat_drop (the shape
  of the induction run's fall)
- :mod:`.experiments`: switched_forward (the switches in the learner's own block), my_experiment (an experiment
  of the learner's design), observe_heads, previous_token_score, induction_score, find_heads, ablate_heads (the
  induction finale done by the learner: observe, detect, ablate)
- :mod:`.translation`: translator_loss, greedy_decode, predict_rouge_reads, reads_its_translation
  (the encoder-decoder that translates), predict_noun_geometry, token_vectors, predict_contextual and
  predict_coordinate (the embeddings' geometry), and cross_attention_weights, the given helper that reads the
  translator's alignment (kept off screen: its lines would answer attention_maps)
- :mod:`.common`: the assignment, ``check`` and ``ask``, ModelCase, and the hints the composites share

A notebook reads ``check.LayerNorm(LayerNorm)`` with ``from autograder.checks import nb10 as check``, so
every check is re-exported here, with what the tests read (messages, tolerances, the models' entry points).
"""
from __future__ import annotations

# in the notebook's order, which the registry keeps
from .layers import (BLOCK_MESSAGES, FF_MESSAGES, FF_TOL, LN_MESSAGES, NORM_CHOICES, NORM_PROPERTIES, DecoderBlock,
                     FeedForward, LayerNorm, count_block_params, predict_norm_vs_softmax)
from .ninja import NODES as NINJA_NODES, layernorm_backward_nodes
from .tinygpt import GPT_MESSAGES, OPTIONS_TOL, POSITIONS, TinyGPT
from .training import (LOSS_MESSAGES, PIECES_MESSAGES, STEP_MESSAGES, generate, lm_loss, predict_changed_positions, predict_ffn_share,
                       predict_harmful_switches, predict_longer_windows, predict_no_positions, train_step)
from .measured import (INIT_MESSAGES, NO_POSITION_MESSAGES, init_gpt2_, predict_causal_models, predict_loss_by_position,
                       predict_mask_handover, predict_stacked_swap,
                       predict_bigram_share, predict_final_loss, predict_norm_placement, predict_overfit,
                       predict_repeat_drop, predict_unscaled_growth, without_positions)
from .cache_and_maps import (CACHE_MESSAGES, MAPS_MESSAGES, agreement_scores, attention_maps, generate_cached,
                             kv_cache_bytes)
from .gpt2 import GPT2_MESSAGES, HALVES_MESSAGES, LLAMA_MESSAGES, from_gpt2, interleaved_to_halves, to_llama_attention
from .induction import MESSAGES as INDUCTION_MESSAGES, induction_pairs, pairs_of
from .experiments import (ABLATE_MESSAGES, SCORE_MESSAGES, ablate_heads, find_heads, induction_score,
                          my_experiment, observe_heads, previous_token_score, switched_forward)
from .translation import (DECODE_MESSAGES, VECTOR_MESSAGES, cross_attention_weights, greedy_decode, predict_contextual,
                          predict_coordinate, predict_rouge_reads, token_vectors, translator_loss,
                          FORCING_MESSAGES, READS_MESSAGES, predict_noun_geometry, reads_its_translation)

from ..models.gpt2 import Gpt2Shape, gpt2_np, gpt2_params
from ..models.llama import llama_attention, llama_np, llama_state_np
from ..toolkit import normal, tensor
from .common import A, ModelCase, ask, check
from .dropout import DROPPED, UNTOUCHED, _dropout_kind

__all__ = [  # the checks a notebook calls, then what the tests read
    "LayerNorm", "predict_norm_vs_softmax", "layernorm_backward_nodes", "FeedForward", "DecoderBlock", "count_block_params", "TinyGPT",
    "lm_loss", "generate", "predict_ffn_share", "predict_changed_positions", "predict_no_positions", "predict_longer_windows",
    "predict_harmful_switches", "predict_norm_placement", "predict_causal_models", "predict_overfit",
    "predict_loss_by_position", "predict_bigram_share", "predict_final_loss",
    "train_step", "kv_cache_bytes",
    "generate_cached", "attention_maps", "agreement_scores", "from_gpt2", "interleaved_to_halves",
    "to_llama_attention", "induction_pairs", "observe_heads", "previous_token_score", "induction_score",
    "find_heads", "ablate_heads", "switched_forward", "my_experiment", "without_positions", "init_gpt2_",
    "predict_unscaled_growth", "predict_repeat_drop", "predict_mask_handover", "predict_stacked_swap",
    "translator_loss", "greedy_decode", "predict_rouge_reads", "reads_its_translation",
    "predict_noun_geometry", "token_vectors", "predict_contextual", "predict_coordinate",
    "A", "ModelCase", "ask", "check", "POSITIONS", "LN_MESSAGES", "NORM_PROPERTIES", "NORM_CHOICES", "NINJA_NODES", "FF_MESSAGES", "FF_TOL",
    "BLOCK_MESSAGES",
    "GPT_MESSAGES", "OPTIONS_TOL", "LOSS_MESSAGES", "STEP_MESSAGES", "PIECES_MESSAGES", "CACHE_MESSAGES", "MAPS_MESSAGES", "GPT2_MESSAGES",
    "HALVES_MESSAGES", "LLAMA_MESSAGES", "INDUCTION_MESSAGES", "pairs_of", "SCORE_MESSAGES", "ABLATE_MESSAGES",
    "NO_POSITION_MESSAGES", "INIT_MESSAGES",
    "FORCING_MESSAGES", "READS_MESSAGES",
    "DECODE_MESSAGES", "VECTOR_MESSAGES", "cross_attention_weights", "DROPPED", "UNTOUCHED", "_dropout_kind",
    "Gpt2Shape", "gpt2_np", "gpt2_params", "llama_attention", "llama_np", "llama_state_np", "normal", "tensor",
]
