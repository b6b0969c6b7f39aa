"""Notebook 01's predictions: a string's length in UTF-8, what BPE's merges make of 'aaaa', and an embedding
table's parameters against its activations."""
from __future__ import annotations

from ..questions import described, int_tuple, is_int
from .common import ask


predict_utf8_length = ask(
    "predict_utf8_length", form=described("an int", is_int), mistakes=[
     (7, "7 is the number of characters. UTF-8 spends 1 byte on an ASCII character, 2 on a Greek letter such as "
         "'Ω' and 4 on the emoji."),
     (8, "8 counts every character as one byte and the emoji as two: the emoji takes 4 bytes in UTF-8 (2 is its "
         "length in UTF-16)."),
     (9, "9 is short by two: only ASCII characters (code points below 128) take one byte; 'Ω' takes 2 and the "
         "emoji, above U+FFFF, takes 4."),
     (10, "10 is one byte short: 'Ω' (U+03A9) takes 2 bytes in UTF-8 and the emoji (U+1F3B2) takes 4.")])

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
