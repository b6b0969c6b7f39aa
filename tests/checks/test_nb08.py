"""Does every check of 08_causality_and_masking reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns, run_exercise, stub_of
from tests.variants import variant

# causal_lm_pairs for texts of different lengths, its loop body (the %s) left to each known mistake below
_RAGGED_CAUSAL = """
def causal_lm_pairs(ids, bos_id=None, pad_id=None):
    if isinstance(ids, list) and ids and isinstance(ids[0], list) and len({len(t) for t in ids}) > 1:
        if pad_id is None:
            raise ValueError("texts of different lengths need a pad_id")
        rows = [([] if bos_id is None else [bos_id]) + t for t in ids]
        L = max(len(r) for r in rows) - 1
        x = np.full((len(rows), L), pad_id)
        y = np.full((len(rows), L), -100)
        for b, r in enumerate(rows):
%s
        return x, y
    ids = np.asarray(ids)
    if bos_id is not None:
        ids = np.concatenate([np.full(ids.shape[:-1] + (1,), bos_id), ids], axis=-1)
    return ids[..., :-1], ids[..., 1:]
"""

pytestmark = pytest.mark.nb08
A = "08_causality_and_masking"

MISTAKES = [
    Mistake("causal_mask", "diagonal_excluded", '''
def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
''', "diagonal is missing"),
    Mistake("causal_mask", "upper_triangle", '''
def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool))
''', "upper triangle"),
    Mistake("causal_mask", "floats", '''
def causal_mask(T):
    return np.tril(np.ones((T, T)))
''', "expected booleans"),
    Mistake("causal_mask", "blocked_marked_true", '''
def causal_mask(T):
    k, q = np.meshgrid(np.arange(T), np.arange(T))
    return k > q
''', "allowed keys"),
    # the kept tokens of generation (n_past): the rows are the new tokens, later in the text
    Mistake("causal_mask", "kept_tokens_ignored", '''
def causal_mask(T, n_past=0):
    return np.tril(np.ones((T, T), dtype=bool))
''', "wrong shape"),
    Mistake("causal_mask", "new_tokens_read_as_if_at_the_start", '''
def causal_mask(T, n_past=0):
    return np.tril(np.ones((T, n_past + T), dtype=bool))
''', "as if it stood at the start"),
    Mistake("causal_mask", "own_key_missed_after_kept_ones", '''
def causal_mask(T, n_past=0):
    if n_past == 0:
        return np.tril(np.ones((T, T), dtype=bool))
    return np.tril(np.ones((T, n_past + T), dtype=bool), k=n_past - 1)
''', "misses its own key"),
    Mistake("causal_mask", "slid_the_wrong_way", '''
def causal_mask(T, n_past=0):
    return np.tril(np.ones((T, n_past + T), dtype=bool), k=-n_past)
''', "slid the wrong way"),
    Mistake("padding_mask", "off_by_one", '''
def padding_mask(lengths, T):
    return np.arange(T)[None, :] <= np.asarray(lengths)[:, None]
''', "off by one"),
    Mistake("padding_mask", "true_at_padding", '''
def padding_mask(lengths, T):
    return np.arange(T)[None, :] >= np.asarray(lengths)[:, None]
''', "not the padding"),
    Mistake("padding_mask", "integers", '''
def padding_mask(lengths, T):
    return (np.arange(T)[None, :] < np.asarray(lengths)[:, None]).astype(int)
''', "expected booleans"),
    Mistake("padding_mask", "transposed", '''
def padding_mask(lengths, T):
    return np.arange(T)[:, None] < np.asarray(lengths)[None, :]
''', "axes are swapped"),
    Mistake("padding_mask", "left_padding", '''
def padding_mask(lengths, T):
    return np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]
''', "padding at the end"),
    Mistake("causal_padding_mask", "padding_on_the_query_axis", '''
def causal_padding_mask(lengths, T):
    return causal_mask(T)[None, :, :] & padding_mask(lengths, T)[:, :, None]
''', "keep no key"),
    Mistake("causal_padding_mask", "padding_on_both_axes", '''
def causal_padding_mask(lengths, T):
    real = padding_mask(lengths, T)
    return causal_mask(T)[None] & real[:, :, None] & real[:, None, :]
''', "keep no key"),
    Mistake("causal_padding_mask", "either_table", '''
def causal_padding_mask(lengths, T):
    return causal_mask(T)[None, :, :] | padding_mask(lengths, T)[:, None, :]
''', "either table"),
    Mistake("causal_padding_mask", "no_causal_table", '''
def causal_padding_mask(lengths, T):
    return np.broadcast_to(padding_mask(lengths, T)[:, None, :], (len(lengths), T, T))
''', "causal table is missing"),
    Mistake("causal_padding_mask", "one_table_for_the_batch", '''
def causal_padding_mask(lengths, T):
    return causal_mask(T) & padding_mask(lengths, T)
'''),
    Mistake("masked_softmax", "masked_after_softmax", '''
def masked_softmax(scores, allowed):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * allowed
''', "without renormalising"),
    Mistake("masked_softmax", "multiplies_scores_by_mask", '''
def masked_softmax(scores, allowed):
    z = scores * allowed
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''', "multiplied by the mask"),
    Mistake("masked_softmax", "no_error_for_an_empty_row", '''
def masked_softmax(scores, allowed):
    z = np.where(allowed, scores, -1e9)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''', "should raise ValueError"),
    # the reference solution with one named edit each (tests/variants.py)
    Mistake("masked_softmax", "max_over_blocked_keys", variant(
        A, "masked_softmax", replace=("z - z.max(axis=-1, keepdims=True)", "z - scores.max(axis=-1, keepdims=True)"),
        name="the max taken over every key, blocked ones too"), "max over the allowed keys"),
    Mistake("masked_softmax", "no_max_subtraction", variant(
        A, "masked_softmax", replace=("z = z - z.max(axis=-1, keepdims=True)", ""),
        name="no max subtracted before exp"), "exp overflowed"),
    Mistake("masked_softmax", "small_negative_fill", variant(
        A, "masked_softmax", replace=("np.where(allowed, scores, -np.inf)", "np.where(allowed, scores, -30.0)"),
        name="blocked scores set to -30, not -inf"), "exactly 0"),
    Mistake("masked_softmax", "inverted_mask", variant(
        A, "masked_softmax", replace=("np.where(allowed, scores, -np.inf)", "np.where(allowed, -np.inf, scores)"),
        name="the allowed keys blocked and the blocked ones kept")),
    Mistake("is_causal", "only_perturbs_last_position", '''
def is_causal(fn, x):
    changed = np.array(x, dtype=float)
    changed[-1] += 1.0
    return bool(np.allclose(fn(x)[:-1], fn(changed)[:-1]))
''', "from x[1] into row 0"),
    Mistake("is_causal", "compares_the_whole_output", '''
def is_causal(fn, x):
    for t in range(len(x) - 1):
        changed = np.array(x, dtype=float)
        changed[t + 1:] += 1.0
        if not np.allclose(fn(x), fn(changed)):
            return False
    return True
''', "compare only the rows up to t"),
    Mistake("is_causal", "perturbs_position_t_too", '''
def is_causal(fn, x):
    for t in range(len(x)):
        changed = np.array(x, dtype=float)
        changed[t:] += 1.0
        if not np.allclose(fn(x)[:t + 1], fn(changed)[:t + 1]):
            return False
    return True
''', "never x[t] itself"),
    Mistake("is_causal", "compares_the_next_row", '''
def is_causal(fn, x):
    for t in range(len(x) - 1):
        changed = np.array(x, dtype=float)
        changed[t + 1:] += 1.0
        if not np.allclose(fn(x)[t + 1], fn(changed)[t + 1]):
            return False
    return True
''', "compare only the rows up to t"),
    Mistake("is_causal", "reverses_the_future", '''
def is_causal(fn, x):
    for t in range(len(x) - 1):
        changed = np.array(x, dtype=float)
        changed[t + 1:] = changed[t + 1:][::-1]
        if not np.allclose(fn(x)[:t + 1], fn(changed)[:t + 1]):
            return False
    return True
''', "really changes it"),
    Mistake("is_causal", "loose_tolerance", '''
def is_causal(fn, x):
    for t in range(len(x) - 1):
        changed = np.array(x, dtype=float)
        changed[t + 1:] += 0.5
        if not np.allclose(fn(x)[:t + 1], fn(changed)[:t + 1], atol=0.05):
            return False
    return True
''', "tolerance far below"),
    Mistake("is_causal", "skips_the_last_step", '''
def is_causal(fn, x):
    for t in range(len(x) - 2):
        changed = np.array(x, dtype=float)
        changed[t + 1:] += 1.0
        if not np.allclose(fn(x)[:t + 1], fn(changed)[:t + 1]):
            return False
    return True
''', "range(T - 1)"),
    Mistake("masked_softmax", "error_does_not_name_the_row", '''
def masked_softmax(scores, allowed):
    scores = np.asarray(scores, dtype=float)
    allowed = np.broadcast_to(allowed, scores.shape)
    if not allowed.any(axis=-1).all():
        raise ValueError("a row keeps no key")
    z = np.where(allowed, scores, -np.inf)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''', "name the row"),
    returns("predict_allowed_pairs", "diagonal_excluded", "15", "leaves out the diagonal"),
    returns("predict_allowed_pairs", "everything", "36", "blocks each key after its query"),
    returns("predict_allowed_pairs", "half_of_the_table", "18", "the diagonal belongs"),
    returns("predict_allowed_pairs", "row_2_again", "(0, 1, 2)", "one int"),
    returns("predict_multiplied_weight", "zero", "0.0", "exp(0) = 1"),
    returns("predict_multiplied_weight", "unmasked_weight", '0.09, "the middle key keeps its score"', "no mask at all"),
    returns("predict_multiplied_weight", "uniform", "1 / 3", "not all equal"),
    returns("predict_cheat_prefix_loss", "below_the_floor", '("below 1.42", "below 1.42"), "it has learnt the source"',
            "honest floor holds for the cheat too"),
    returns("predict_cheat_prefix_loss", "like_knowing_nothing",
            '("below 1.42", "between"), "it knows nothing without the future"', "costs more than a uniform guess"),
    returns("predict_cheat_prefix_loss", "honest_on_whole_windows", '("between", "above 2.08"), "a mask changes little"',
            "reads the answer and copies it"),
    returns("predict_cheat_prefix_loss", "one_word", '"above 2.08", "worse than uniform"', "answer with a pair"),
    returns("predict_cheat_prefix_loss", "a_number", '3.49, "worse than uniform"', "answer with a pair"),
    returns("predict_floor", "above_uniform", '"above 2.08", "the source is very random"', "more entropy than the even one"),
    returns("predict_floor", "equal_to_uniform", '"equal", "a random source is as bad as guessing"', "far from even"),
    returns("predict_floor", "a_number", '1.4, "a few likely tokens per row"', "answer with one of"),
    returns("predict_empty_row", "swapped", '("equal weights", "nan"), "the other way"', "The other way round"),
    returns("predict_empty_row", "zeros_with_a_big_negative", '("nan", "all zeros"), "e^-1e9 is 0"',
            "largest score is subtracted"),
    returns("predict_empty_row", "an_error_for_inf", '("an error", "equal weights"), "inf - inf fails"',
            "no error"),
    returns("predict_empty_row", "one_word", '"nan", "both blocked"', "answer with a pair"),
    returns("predict_which_causal", "all_causal", '(True, True, True, True), "all are made of means"',
            "centred_mean's row t reads row t + 1"),
    returns("predict_which_causal", "first_row_is_a_leak", '(True, False, False, False), "row 0 is read by all"',
            "row 0 is never after t"),
    returns("predict_which_causal", "last_row_is_fine", '(True, False, True, True), "a difference of rows"',
            "after every t but the last"),
    returns("predict_which_causal", "three_answers", '(True, False, True), "three"', "four booleans"),
    returns("predict_ids_read", "the_other_mask_forgotten", '(4, 5), "it reads everything"', "second [MASK]"),
    returns("predict_ids_read", "the_bos_counted", '(5, 4), "bos and four ids"', "BOS is not an id of the text"),
    returns("predict_ids_read", "everything_counted", '(5, 5), "all inputs"', "Neither model"),
    returns("predict_ids_read", "only_the_left_for_both", '(4, 2), "2, 9 before it"', "reads both sides"),
    returns("predict_ids_read", "not_a_pair", '4, "four each"', "a pair of ints"),
    # ---------------------------------------- the headline measurement: the model as it generates
    Mistake("prefix_logits", "whole_windows", """
def prefix_logits(model, ids):
    return model(ids)
""", "ids after position t change"),
    Mistake("prefix_logits", "one_token_of_the_future", """
def prefix_logits(model, ids):
    return torch.stack([model(ids[:, : t + 2])[:, t] for t in range(ids.shape[1])], dim=1)
""", "one token of the future"),
    Mistake("prefix_logits", "first_row_of_each_prefix", """
def prefix_logits(model, ids):
    return torch.stack([model(ids[:, : t + 1])[:, 0] for t in range(ids.shape[1])], dim=1)
""", "guess at position 0"),
    Mistake("prefix_logits", "probabilities", """
def prefix_logits(model, ids):
    rows = [torch.softmax(model(ids[:, : t + 1])[:, -1], dim=-1) for t in range(ids.shape[1])]
    return torch.stack(rows, dim=1)
""", "sums to 1"),
    Mistake("prefix_logits", "positions_first", """
def prefix_logits(model, ids):
    return torch.stack([model(ids[:, : t + 1])[:, -1] for t in range(ids.shape[1])])
""", "positions came out on the first axis"),
    Mistake("prefix_logits", "empty_first_prefix", """
def prefix_logits(model, ids):
    rows = [model(ids[:, :t])[:, -1] for t in range(ids.shape[1])]
    return torch.stack(rows, dim=1)
""", "given no token at all"),
    Mistake("prefix_logits", "rows_concatenated", """
def prefix_logits(model, ids):
    return torch.cat([model(ids[:, : t + 1])[:, -1] for t in range(ids.shape[1])], dim=1)
""", "wrong shape"),
    Mistake("prefix_logits", "numpy_not_a_tensor", """
def prefix_logits(model, ids):
    return np.stack([model(ids[:, : t + 1])[:, -1].numpy() for t in range(ids.shape[1])], axis=1)
""", "expected a torch tensor"),
    returns("predict_first_position_loss", "higher", '"higher"', "reads its own token"),
    returns("predict_first_position_loss", "lower", '"lower"', "no position can beat"),
    returns("predict_first_position_loss", "not_a_choice", '"same"', "answer with one of"),
    returns("predict_cheat_offset", "itself", '0, "it reads its own token"', "the query itself"),
    returns("predict_cheat_offset", "the_token_before", '-1, "the token before decides the next"',
            "which this source's next token does not depend on"),
    returns("predict_cheat_offset", "two_ahead", '2, "further ahead"', "offset +1"),
    returns("predict_cheat_offset", "not_an_int", '"next", "the next one"', "int"),
    # ---------------------------------------- where the targets come from: BOS, and masked tokens
    returns("predict_left_pad_empty_rows", "one_per_sequence", '2, "the first query of each padded sequence"',
            "only each first query"),
    returns("predict_left_pad_empty_rows", "none", '0, "every query reads itself"', "padding too"),
    returns("predict_left_pad_empty_rows", "first_query_only", '1, "the first query sees only padding"',
            "stands before its sequence's first real token"),
    returns("predict_left_pad_empty_rows", "every_row", '12, "all padded"', "only the queries in front"),
    returns("predict_left_pad_empty_rows", "not_an_int", '(0, 1), "rows"', "one int"),
    returns("predict_bos_targets", "bos_said_too", '(7, 8), "each token added adds a target"', "only ever read"),
    returns("predict_bos_targets", "bos_adds_nothing", '(5, 6), "bos carries nothing"', "which nothing came before"),
    returns("predict_bos_targets", "eos_adds_nothing", '(6, 6), "eos is never read"', "an id to say"),
    Mistake("causal_lm_pairs", "no_shift", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    if bos_id is not None:
        ids = np.concatenate([[bos_id], ids])
    return ids, ids
""", "copy what it reads"),
    Mistake("causal_lm_pairs", "bos_not_dropped_from_targets", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    if bos_id is None:
        return ids[:-1], ids[1:]
    return np.concatenate([[bos_id], ids[:-1]]), np.concatenate([[bos_id], ids[:-1]])[1:]
""", "same length"),
    Mistake("causal_lm_pairs", "bos_ignored", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    return ids[:-1], ids[1:]
""", "positions for"),
    Mistake("causal_lm_pairs", "one_text_only", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    if bos_id is not None:
        ids = np.concatenate([[bos_id], ids])
    return ids[:-1], ids[1:]
""", "one row per text"),
    Mistake("causal_lm_pairs", "batch_flattened", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    shape = ids.shape
    flat = ids.ravel() if bos_id is None else np.concatenate([[bos_id], ids.ravel()])
    if len(shape) == 1:
        return flat[:-1], flat[1:]
    return flat[:-1][: shape[0] * (shape[1] - 1)].reshape(shape[0], -1), flat[1:][: shape[0] * (shape[1] - 1)].reshape(shape[0], -1)
""", "not that text's own"),
    Mistake("causal_lm_pairs", "targets_shifted_the_wrong_way", """
def causal_lm_pairs(ids, bos_id=None):
    ids = np.asarray(ids)
    if bos_id is not None:
        ids = np.concatenate([[bos_id], ids])
    return ids[1:], ids[:-1]
""", "targets"),
    Mistake("causal_lm_pairs", "padding_targets_are_the_pad", _RAGGED_CAUSAL % """            y[b, :] = pad_id
            x[b, :len(r) - 1], y[b, :len(r) - 1] = r[:-1], r[1:]""", "the filler itself"),
    Mistake("causal_lm_pairs", "padding_at_the_front", _RAGGED_CAUSAL % """            x[b, L - len(r) + 1:], y[b, L - len(r) + 1:] = r[:-1], r[1:]""", "does not begin with what the text"),
    Mistake("causal_lm_pairs", "padded_before_the_shift", _RAGGED_CAUSAL % """            full = r + [pad_id] * (L + 1 - len(r))
            x[b], y[b] = full[:-1], full[1:]""", "the filler itself"),
    Mistake("causal_lm_pairs", "padding_inputs_not_the_pad", _RAGGED_CAUSAL % """            x[b, :] = -100
            x[b, :len(r) - 1], y[b, :len(r) - 1] = r[:-1], r[1:]""", "should be the"),
    Mistake("causal_lm_pairs", "ragged_pad_id_defaults_to_zero", """
def causal_lm_pairs(ids, bos_id=None, pad_id=None):
    if isinstance(ids, list) and ids and isinstance(ids[0], list) and len({len(t) for t in ids}) > 1:
        pad_id = 0 if pad_id is None else pad_id
        rows = [([] if bos_id is None else [bos_id]) + t for t in ids]
        L = max(len(r) for r in rows) - 1
        x = np.full((len(rows), L), pad_id)
        y = np.full((len(rows), L), -100)
        for b, r in enumerate(rows):
            x[b, :len(r) - 1], y[b, :len(r) - 1] = r[:-1], r[1:]
        return x, y
    ids = np.asarray(ids)
    if bos_id is not None:
        ids = np.concatenate([np.full(ids.shape[:-1] + (1,), bos_id), ids], axis=-1)
    return ids[..., :-1], ids[..., 1:]
""", "pad_id"),
    Mistake("masked_lm_pairs", "target_leaks_into_input", """
def masked_lm_pairs(ids, mask_positions, mask_id):
    ids = np.asarray(ids)
    targets = np.full(len(ids), -100)
    for p in mask_positions:
        if not 0 <= p < len(ids):
            raise ValueError(f"mask position {p} is outside 0 .. {len(ids) - 1}")
        targets[p] = ids[p]
    return ids.copy(), targets
""", "can copy its answer"),
    Mistake("masked_lm_pairs", "causal_next_id_targets", """
def masked_lm_pairs(ids, mask_positions, mask_id):
    ids = np.asarray(ids)
    inputs, targets = ids.copy(), np.full(len(ids), -100)
    for p in mask_positions:
        if not 0 <= p < len(ids):
            raise ValueError(f"mask position {p} is outside 0 .. {len(ids) - 1}")
        inputs[p] = mask_id
        if p + 1 < len(ids):
            targets[p] = ids[p + 1]
    return inputs, targets
""", "id after it"),
    Mistake("masked_lm_pairs", "every_position_a_target", """
def masked_lm_pairs(ids, mask_positions, mask_id):
    ids = np.asarray(ids)
    inputs = ids.copy()
    for p in mask_positions:
        if not 0 <= p < len(ids):
            raise ValueError(f"mask position {p} is outside 0 .. {len(ids) - 1}")
        inputs[p] = mask_id
    return inputs, ids.copy()
""", "were not masked carry a target"),
    Mistake("masked_lm_pairs", "shifted_like_the_causal_one", """
def masked_lm_pairs(ids, mask_positions, mask_id):
    ids = np.asarray(ids)
    inputs, targets = ids.copy(), np.full(len(ids), -100)
    for p in mask_positions:
        if not 0 <= p < len(ids):
            raise ValueError(f"mask position {p} is outside 0 .. {len(ids) - 1}")
        inputs[p], targets[p] = mask_id, ids[p]
    return inputs[:-1], targets[1:]
""", "one input and one target"),
    Mistake("masked_lm_pairs", "no_range_check", """
def masked_lm_pairs(ids, mask_positions, mask_id):
    ids = np.asarray(ids)
    inputs, targets = ids.copy(), np.full(len(ids), -100)
    inputs[mask_positions] = mask_id
    targets[mask_positions] = ids[mask_positions]
    return inputs, targets
""", "IndexError"),
    # ---------------------------------------- the bug hunt: the bug as given, a half-fix, and other slips
    Mistake("causal_self_attention", "the_bug_as_given", variant(
        A, "causal_self_attention", replace=("weights.sum(axis=-1, keepdims=True)", "weights.sum(axis=0, keepdims=True)"),
        name="normalised down the columns"), "code as given"),
    Mistake("causal_self_attention", "half_fix_whole_table", variant(
        A, "causal_self_attention", replace=("weights.sum(axis=-1, keepdims=True)", "weights.sum()"),
        name="normalised over the whole table"), "share of the whole table"),
    Mistake("causal_self_attention", "half_fix_not_normalised", variant(
        A, "causal_self_attention", replace=("weights = weights / weights.sum(axis=-1, keepdims=True)", "pass"),
        name="not normalised"), "causal now"),
    Mistake("causal_self_attention", "masked_by_multiplying", variant(
        A, "causal_self_attention", replace=("scores = np.where(causal_mask(T), scores, -np.inf)",
                                             "scores = scores * causal_mask(T)"), name="masked by multiplying"),
        "have a weight again"),
    Mistake("causal_self_attention", "mask_after_the_softmax", variant(
        A, "causal_self_attention", replace=(
            "    scores = np.where(causal_mask(T), scores, -np.inf)",
            "    pass"), name="the mask moved after the softmax").replace(
        "    return weights @ x", "    weights = weights * causal_mask(T)\n    return weights @ x"),
        "not a distribution"),
    Mistake("causal_self_attention", "small_negative_fill", variant(
        A, "causal_self_attention", replace=("-np.inf)", "-4.0)"), name="a small negative fill"), "small, but not 0"),
    Mistake("causal_self_attention", "mask_inverted", variant(
        A, "causal_self_attention", replace=("np.where(causal_mask(T), scores, -np.inf)",
                                             "np.where(causal_mask(T), -np.inf, scores)"), name="the mask inverted"),
        "the wrong keys"),
]

ALTERNATIVES = {
    "predict_allowed_pairs": answer("predict_allowed_pairs", "sum(range(1, 7))"),
    "predict_multiplied_weight": answer("predict_multiplied_weight",
                                        'float(1 / (np.exp(2) + 1 + np.exp(3))), "e^0 = 1 still counts"'),
    "causal_self_attention": '''
def causal_self_attention(x):
    T = len(x)
    sq = (x ** 2).sum(axis=1)
    distance2 = sq[:, None] + sq[None, :] - 2 * np.einsum("td,sd->ts", x, x)  # |x[t] - x[s]|^2, expanded
    return masked_softmax(-distance2, causal_mask(T)) @ x  # masked before the softmax
''',
    "predict_floor": answer("predict_floor", '"below " + f"{np.log(8):.2f}", "an even guess has the most entropy"'),
    "predict_empty_row": answer("predict_empty_row", '["nan", "equal weights"], "inf - inf; 0 everywhere"'),
    "predict_which_causal": answer("predict_which_causal",
                                   'tuple(k % 2 == 0 for k in range(4)), "only rows up to t may be read"'),
    "predict_ids_read": answer("predict_ids_read", '(len([5, 7, 2, 9]), 6 - 2), "before it; all but the hidden"'),
    "prefix_logits": """
def prefix_logits(model, ids):
    N, T = ids.shape
    out = None
    for length in range(1, T + 1):
        seen = model(ids[:, :length])  # (N, length, V)
        if out is None:
            out = torch.empty(N, T, seen.shape[-1])
        out[:, length - 1] = seen[:, length - 1]  # the newest position of this prefix
    return out
""",
    "predict_first_position_loss": answer("predict_first_position_loss", '"about the same"'),
    "predict_cheat_prefix_loss": answer("predict_cheat_prefix_loss",
                                        '["below " + f"{1.42}", "above " + f"{np.log(8):.2f}"], '
                                        '"copies what it reads, then is sure of a copy it can no longer see"'),
    "predict_cheat_offset": answer("predict_cheat_offset", '+1, "its target sits one place on, as an input"'),
    "predict_bos_targets": answer("predict_bos_targets", '(6, 6 + 1), "a BOS gives the first id a reader, an EOS is said"'),
    "predict_left_pad_empty_rows": answer("predict_left_pad_empty_rows",
                                          'sum(4 - n for n in (3, 1, 4)), "one empty row per padding token"'),
    "causal_lm_pairs": """
def causal_lm_pairs(ids, bos_id=None, pad_id=None):
    if isinstance(ids, list) and any(isinstance(t, (list, tuple)) for t in ids):
        lengths = [len(t) for t in ids]
        if len(set(lengths)) > 1:
            if pad_id is None:
                raise ValueError("a pad_id is needed when the texts differ in length")
            extra = 0 if bos_id is None else 1
            width = max(lengths) + extra - 1
            out_x, out_y = [], []
            for t in ids:
                x, y = causal_lm_pairs(list(t), bos_id)
                out_x.append(list(x) + [pad_id] * (width - len(x)))
                out_y.append(list(y) + [-100] * (width - len(y)))
            return np.array(out_x, dtype=int), np.array(out_y, dtype=int)
    ids = np.array(ids, dtype=int)
    if bos_id is not None:
        ids = np.insert(ids, 0, bos_id, axis=ids.ndim - 1)
    n = ids.shape[-1]
    return np.take(ids, np.arange(n - 1), axis=-1), np.take(ids, np.arange(1, n), axis=-1)
""",
    "masked_lm_pairs": """
def masked_lm_pairs(ids, mask_positions, mask_id):
    n = len(ids)
    bad = [p for p in mask_positions if p < 0 or p >= n]
    if bad:
        raise ValueError(f"mask position {bad[0]} is outside 0 .. {n - 1}")
    hidden = set(mask_positions)
    inputs = np.array([mask_id if i in hidden else t for i, t in enumerate(ids)], dtype=int)
    targets = np.array([t if i in hidden else -100 for i, t in enumerate(ids)], dtype=int)
    return inputs, targets
""",
    "causal_mask": '''
def causal_mask(T, n_past=0):
    return np.tril(np.ones((n_past + T, n_past + T), dtype=bool))[n_past:]  # the last T rows of the full table
''',
    "causal_padding_mask": '''
def causal_padding_mask(lengths, T):
    out = np.zeros((len(lengths), T, T), dtype=bool)
    for b, n in enumerate(lengths):
        for q in range(T):
            out[b, q, : min(q + 1, n)] = True  # the keys up to the query, and real
    return out
''',
    "padding_mask": '''
def padding_mask(lengths, T):
    out = np.zeros((len(lengths), T), dtype=bool)
    for b, n in enumerate(lengths):
        out[b, :n] = True
    return out
''',
    "masked_softmax": '''
def masked_softmax(scores, allowed):
    allowed = np.broadcast_to(allowed, np.shape(scores))
    if np.any(~allowed.any(axis=-1)):
        bad = np.argwhere(~allowed.any(axis=-1))[0]
        raise ValueError(f"query {bad.tolist()} has no allowed key; allow at least one")
    z = np.where(allowed, scores, -1e9)
    z = z - z.max(axis=-1, keepdims=True)
    w = np.exp(z)
    return w / w.sum(axis=-1, keepdims=True)
''',
    "is_causal": '''
def is_causal(fn, x):
    x = np.asarray(x, dtype=float)
    reference = np.asarray(fn(x))
    rng = np.random.default_rng(123)
    for t in range(x.shape[0] - 1):
        future = x.copy()
        future[t + 1:] = rng.normal(size=future[t + 1:].shape) * 10
        if not np.array_equal(np.asarray(fn(future))[t], reference[t]):
            return False
    return True
''',
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def _first_message(exercise, source):
    """What the visible check says first about ``source``: the message a learner reads."""
    local = run_exercise(A, exercise, source)[0].local
    assert local is not None, f"{exercise} passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_bug_hunt_shows_progress_with_symptoms():
    """The bug hunt hunts: the code as released and each half-fix get different messages, each true of what it
    sees (normalising over the whole table is not called causal: it is not), and none says which line to write."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "causal_self_attention"}
    said = {"released": _first_message("causal_self_attention", stub_of(A, "causal_self_attention")),
            **{label: _first_message("causal_self_attention", mistakes[label])
               for label in ("half_fix_whole_table", "half_fix_not_normalised", "masked_by_multiplying",
                             "mask_after_the_softmax", "small_negative_fill", "mask_inverted")}}
    assert len(set(said.values())) == len(said), said
    assert "code as given" in said["released"] and "Progress" not in said["released"], said["released"]
    assert "is_causal says False" in said["half_fix_whole_table"] and "causal now" not in said["half_fix_whole_table"]
    assert "Progress: causal now" in said["half_fix_not_normalised"]
    for message in said.values():
        for fix in ("axis=-1", "axis=0", "axis=1", "keepdims", "np.where", "masked_fill", "-inf", "Mask the scores"):
            assert fix not in message, (fix, message)
