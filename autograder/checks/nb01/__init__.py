"""Checks for 01_tokens_and_ids.

One module per job, in the notebook's order (importing them registers their checks, and the registry keeps
that order):

- :mod:`.tokens`: build_vocab, encode, decode, one_hot, embedding_lookup, relabel (IDs are addresses),
  skipgram_pairs, cbow_examples, make_lm_pairs, train_val_pairs (a bug hunt), most_frequent_pair, merge_pair
- :mod:`.bpe`: train_bpe, bpe_encode, bpe_decode (byte-level BPE, and the plain-Python models of its usual
  variants that the hints use), and replay_merges, the reveal of predict_first_merges
- :mod:`.predictions`: predict_utf8_length, predict_bpe_tokens, predict_param_counts, predict_relabel,
  predict_lm_targets, predict_first_merges, predict_emoji_tokens, predict_merge_savings, predict_cat_neighbours,
  predict_cbow_counts, predict_cross_word_token
- :mod:`.common`: the assignment, ``check``, the reference ``R`` and ``ask``

A notebook reads ``check.encode(encode)`` with ``from autograder.checks import nb01 as check``, so every check
is re-exported here under its own name (its exercise's grade_id).
"""
from __future__ import annotations

from .common import A, R, ask, check
from .tokens import (build_vocab, cbow_examples, decode, embedding_lookup, encode, make_lm_pairs, merge_pair,
                     most_frequent_pair, one_hot, relabel, skipgram_pairs, train_val_pairs)
from .bpe import bpe_decode, bpe_encode, replay_merges, train_bpe
from .predictions import (predict_bpe_tokens, predict_cat_neighbours, predict_cbow_counts, predict_cross_word_token,
                          predict_emoji_tokens, predict_first_merges, predict_lm_targets, predict_merge_savings,
                          predict_param_counts, predict_relabel, predict_utf8_length)

__all__ = [  # the checks a notebook calls, in its order, then what the tests read
    "build_vocab", "encode", "decode", "one_hot", "embedding_lookup", "predict_relabel", "relabel",
    "predict_param_counts", "skipgram_pairs", "predict_cat_neighbours", "cbow_examples", "predict_cbow_counts",
    "make_lm_pairs", "predict_lm_targets",
    "train_val_pairs", "most_frequent_pair", "merge_pair", "predict_first_merges", "predict_utf8_length",
    "train_bpe", "bpe_encode", "bpe_decode", "predict_bpe_tokens", "predict_emoji_tokens",
    "predict_cross_word_token", "predict_merge_savings",
    "replay_merges", "A", "R", "ask", "check",
]
