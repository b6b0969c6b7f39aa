"""Notebook 01's predictions: a string's length in UTF-8, what BPE's merges make of 'aaaa', an embedding
table's parameters against its activations, what relabelling the vocabulary does to a lookup and to a linear map
of the raw ID, how many targets a text gives a language model (and how many a person wrote), and which of a
tokenizer's merges shorten its training text most."""
from __future__ import annotations

from ..questions import NB04, described, int_tuple, is_int
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

_SAME_OR_CHANGES = ("same", "changes")

predict_relabel = ask(  # its reveal follows the exercise that builds the measurement: "a cell below"
    "predict_relabel", wording=NB04,
    form=described("a tuple of two words, each 'same' or 'changes' (the lookup's, then the linear map's)",
                   lambda v: isinstance(v, tuple) and len(v) == 2 and all(x in _SAME_OR_CHANGES for x in v)),
    mistakes=[
     (("changes", "changes"), "The lookup's output stays the same: each token's new ID points at the row its old "
                              "vector was moved to, so every position gets the vector it had. Only a map that reads "
                              "the ID as a number changes."),
     (("same", "same"), "The linear map's output changes: it multiplies the ID itself, and a token whose ID went "
                        "from 1 to 3 now gives three times the contribution. No row moves with it, and no new "
                        "weight and bias can undo a general shuffle of the IDs."),
     (("changes", "same"), "Swapped: the lookup moves with its rows and gives every token the same vector; the "
                           "linear map reads the ID's size, which the relabelling changed.")])

predict_lm_targets = ask(  # counts, told apart exactly: 1000 is not 999 "within 1e-3"
    "predict_lm_targets", rtol=0, form=described("a tuple of two ints", int_tuple(2)), mistakes=[
     ((1000, 8), "The first token follows nothing: no window has it as a target. Every later position is the "
                 "target of some window, so 999."),
     ((992, 8), "992 = 1000 - 8 is the number of windows. Each window has 8 targets and the windows overlap: "
                "together their targets cover every position after the first, 999."),
     ((7936, 8), "7936 = 992 * 8 counts a position once for every window it is a target in. Counted once each, "
                 "the positions that are targets are all but the first: 999."),
     ((999, 1), "The windows overlap: window i's targets are positions i + 1 to i + 8, so position 500 is a "
                "target of every window that starts 1 to 8 positions before it, 8 windows, not 1."),
     ((999, 9), "Count the starts: window i's targets are positions i + 1 to i + 8, so position 500 is a target "
                "for i = 492 to 499, 8 windows (a context of 1, 2, ..., 8 tokens before it), not 9."),
     ((999, 7), "Count the starts: window i's targets are positions i + 1 to i + 8, so position 500 is a target "
                "for i = 492 to 499, 8 windows (a context of 1, 2, ..., 8 tokens before it), not 7.")])

predict_emoji_tokens = ask(  # its reveal follows a line of prose: "a cell below"
    "predict_emoji_tokens", wording=NB04, form=described("an int", is_int), rtol=0, mistakes=[
     (1, "One token for the character would need a merge that builds its bytes, and the paragraph, all ASCII, "
         "never held any of them: no merge touches them, so each of the 4 bytes stays a token."),
     (0, "Nothing is dropped and nothing is unknown: every byte has an ID, 0 to 255, so the emoji comes out as "
         "its 4 bytes."),
     (2, "2 is its length in UTF-16. In UTF-8 the emoji (above U+FFFF) takes 4 bytes, and no merge joins them."),
     (3, "The emoji, above U+FFFF, takes 4 bytes in UTF-8, not 3; no merge joins any of them.")])

predict_first_merges = ask(
    "predict_first_merges", form=described("a tuple of three strings",
                                           lambda v: isinstance(v, tuple) and len(v) == 3
                                           and all(isinstance(x, str) for x in v)), mistakes=[
     (("th", "he", "e "), "Each merge works on what the merges before it left: once 'th' is one unit, 'h' no longer "
                          "stands before 'e', and the pair ('th', 'e'), 3 times, builds 'the'."),
     (lambda got: got[0] in ("he", "e ", "at"), "Four pairs occur 3 times each ('th', 'he', 'e ', 'at'); a tie goes "
                                                "to the pair seen first, and 'th' stands at position 0."),
     (lambda got: got[:2] == ("th", "the") and got[2] == "at",
      "After merge 2, ('the', ' ') and ('a', 't') both occur 3 times; the first seen wins, 'the ' at position 0.")])

_MERGE_CHOICES = ("first 10", "last 29", "the same")

predict_merge_savings = ask(  # a choice of three words: the reveal measures both savings on the paragraph
    "predict_merge_savings", rtol=0,
    form=described("one of 'first 10', 'last 29' and 'the same'", lambda v: v in _MERGE_CHOICES), mistakes=[
     ("last 29", "Each merge takes out one token for every time its pair occurs in the text it was learned on. "
                 "Training picks the commonest pair first, so the first merges join pairs seen many times; by the "
                 "end the pairs it joins occur just twice each."),
     ("the same", "Merges are not worth the same: each takes out as many tokens as its pair occurs in the text "
                  "it was learned on, and training takes the commonest pairs first.")])

_NEIGHBOURS = ("dog", "fish", "king")

predict_cat_neighbours = ask(  # an order of three words: the reveal reads it off the cosine map's row of "cat"
    "predict_cat_neighbours", rtol=0,
    form=described("a tuple of the three words 'dog', 'king' and 'fish', in your order",
                   lambda v: isinstance(v, tuple) and len(v) == 3 and tuple(sorted(v)) == _NEIGHBOURS),
    mistakes=[
     (lambda got: got[0] != "dog", "'dog' stands in exactly the contexts of 'cat' ('the' before it, 'sleeps' and "
                                   "'eats' after it): its row of counts is the same as cat's, and the cosine of a "
                                   "row with itself is 1, the largest a cosine can be."),
     (("dog", "fish", "king"), "'fish' shares one context word with 'cat', 'eats', and half of its row is '.'. "
                               "'king' shares 'eats' and 'the', the word that stands before 'cat' in half of its "
                               "counts: more of both rows lies on shared words, so the cosine is larger.")])

predict_cross_word_token = ask(  # a yes or no: the reveal lists the paragraph's tokens with a space inside
    "predict_cross_word_token", rtol=0,
    form=described("'yes' or 'no'", lambda v: v in ("yes", "no")), mistakes=[
     ("no", "Nothing in train_bpe knows what a word is: it counts every adjacent pair of the byte stream, and a "
            "space is a byte like any other. A phrase that occurs twice, such as 'every token', becomes a pair "
            "worth merging. (GPT-2's tokenizer cuts the text into words before it counts, to stop exactly this.)")])

predict_cbow_counts = ask(  # counts, told apart exactly: the reveal counts the full-context examples and the pairs
    "predict_cbow_counts", rtol=0, form=described("a tuple of two ints", int_tuple(2)), mistakes=[
     ((36, 144), "144 = 36 * 4 gives every position 2 context tokens on each side. Near the ends there are fewer: "
                 "positions 0 and 35 have 2, positions 1 and 34 have 3, so 32 full contexts and 6 pairs fewer, 138."),
     ((36, 138), "36 counts every example, but not every context is full: positions 0 and 35 have 2 context tokens, "
                 "positions 1 and 34 have 3."),
     ((34, 140), "The first and the last token each miss 2 context tokens, but the second and the one before last "
                 "miss 1 each too (one side holds only 1 token): 32 full contexts, 144 - 6 = 138 pairs."),
     ((36, 140), "The first and the last token each miss 2 context tokens, but the second and the one before last "
                 "miss 1 each too (one side holds only 1 token): 144 - 6 = 138 pairs, and those four contexts are "
                 "not full."),
     ((138, 138), "CBOW makes one example per position, the whole context at once, not one per pair: count the "
                  "positions whose context holds all 4 tokens. One per (centre, context) pair is skip-gram's data, "
                  "which the flattened examples give back, 138."),
     ((34, 70), "At window 2 a position has up to 2 context tokens on each side, 4 in all, not 2."),
     ((36, 72), "At window 2 a position has up to 2 context tokens on each side, 4 in all, not 2.")])
