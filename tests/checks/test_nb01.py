"""Does every check of 01_tokens_and_ids reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns, run_exercise, stub_of

pytestmark = pytest.mark.nb01
A = "01_tokens_and_ids"

MISTAKES = [
    Mistake("build_vocab", "specials_last", '''
def build_vocab(tokens, specials=("<unk>",)):
    vocab = {}
    for tok in sorted(set(tokens), key=lambda t: (-tokens.count(t), t)):
        vocab[tok] = len(vocab)
    for s in specials:
        vocab[s] = len(vocab)
    return vocab
''', "special tokens must come first"),
    Mistake("build_vocab", "first_seen_order", '''
def build_vocab(tokens, specials=("<unk>",)):
    vocab = {s: i for i, s in enumerate(specials)}
    for tok in tokens:
        vocab.setdefault(tok, len(vocab))
    return vocab
''', "descending count"),
    Mistake("build_vocab", "alphabetical_only", '''
def build_vocab(tokens, specials=("<unk>",)):
    vocab = {s: i for i, s in enumerate(specials)}
    for tok in sorted(set(tokens)):
        vocab[tok] = len(vocab)
    return vocab
''', "descending count"),
    Mistake("build_vocab", "special_counted_twice", '''
def build_vocab(tokens, specials=("<unk>",)):
    from collections import Counter
    counts = Counter(tokens)
    ordered = sorted(counts, key=lambda t: (-counts[t], t))
    return {tok: i for i, tok in enumerate(list(specials) + ordered)}
''', "numbered a second time"),
    Mistake("build_vocab", "special_renumbered_by_count", '''
def build_vocab(tokens, specials=("<unk>",)):
    counts = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    vocab = {s: i for i, s in enumerate(specials)}
    for t in sorted(counts, key=lambda t: (-counts[t], t)):
        vocab[t] = len(vocab)
    return vocab
''', "numbered a second time"),
    Mistake("encode", "unknown_dropped", '''
def encode(tokens, vocab, unk="<unk>"):
    return [vocab[t] for t in tokens if t in vocab]
''', "expected 3 items, got 2"),
    Mistake("encode", "unknown_hardcoded_zero", '''
def encode(tokens, vocab, unk="<unk>"):
    return [vocab.get(t, 0) for t in tokens]
'''),
    Mistake("encode", "crashes_on_unknown", '''
def encode(tokens, vocab, unk="<unk>"):
    return [vocab[t] for t in tokens]
''', "raised KeyError"),
    Mistake("decode", "looks_up_ids_as_keys", '''
def decode(ids, vocab):
    return [vocab.get(i, "<unk>") for i in ids]
'''),
    Mistake("decode", "off_by_one", '''
def decode(ids, vocab):
    tokens = sorted(vocab, key=vocab.get)
    return [tokens[i - 1] for i in ids]
''', "item 0 differs"),
    Mistake("decode", "returns_a_string", '''
def decode(ids, vocab):
    inverse = {i: t for t, i in vocab.items()}
    return " ".join(inverse[i] for i in ids)
''', "expected a list"),
    Mistake("one_hot", "eye_wraps_negative_ids", '''
def one_hot(ids, vocab_size):
    return np.eye(vocab_size)[ids]
''', "should raise ValueError"),
    Mistake("one_hot", "integer_dtype", '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError("id out of range")
    return (ids[..., None] == np.arange(vocab_size)).astype(int)
''', "expected floats"),
    Mistake("one_hot", "flattens_ids", '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids).ravel()
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError("id out of range")
    out = np.zeros((len(ids), vocab_size))
    out[np.arange(len(ids)), ids] = 1
    return out
''', "wrong shape"),
    Mistake("one_hot", "upper_bound_off_by_one", '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.min() < 0 or ids.max() > vocab_size:
        raise ValueError("id out of range")
    return np.eye(vocab_size + 1)[ids][..., :vocab_size]
''', "should raise ValueError"),
    Mistake("one_hot", "fractional_ids_give_a_row_of_zeros", '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    return (ids[..., None] == np.arange(vocab_size)).astype(float)
''', "should raise ValueError"),
    Mistake("one_hot", "fractional_ids_truncated", '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids).astype(int)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    return np.eye(vocab_size)[ids]
''', "should raise ValueError"),
    Mistake("embedding_lookup", "columns_not_rows", '''
def embedding_lookup(E, ids):
    return E[:, ids]
'''),
    Mistake("embedding_lookup", "transposed_table", '''
def embedding_lookup(E, ids):
    return E.T[ids]
'''),
    Mistake("embedding_lookup", "flat_ids", '''
def embedding_lookup(E, ids):
    return E[np.ravel(ids)]
''', "wrong shape"),
    Mistake("embedding_lookup", "negative_id_wraps_to_the_last_row", '''
def embedding_lookup(E, ids):
    return E[ids]
''', "should raise ValueError"),
    Mistake("embedding_lookup", "refuses_only_ids_too_large", '''
def embedding_lookup(E, ids):
    ids = np.asarray(ids)
    if ids.size and ids.max() >= len(E):
        raise ValueError(f"id {ids.max()} is outside [0, {len(E)})")
    return E[ids]
''', "id -1 is outside [0, 4)"),
    Mistake("relabel", "rows_moved_the_other_way", '''
def relabel(E, ids, perm):
    perm = np.asarray(perm)
    if sorted(perm.tolist()) != list(range(len(E))):
        raise ValueError(f"perm must hold every ID from 0 to {len(E) - 1} once")
    return E[perm], perm[ids]
''', "the rows moved the other way round"),
    Mistake("relabel", "ids_relabelled_by_the_inverse", '''
def relabel(E, ids, perm):
    perm = np.asarray(perm)
    if sorted(perm.tolist()) != list(range(len(E))):
        raise ValueError(f"perm must hold every ID from 0 to {len(E) - 1} once")
    E_new = np.empty_like(E)
    E_new[perm] = E
    return E_new, np.argsort(perm)[ids]
''', "relabelled the other way round: where the old text holds ID 0, the new text must hold 2"),
    Mistake("relabel", "table_left_where_it_was", '''
def relabel(E, ids, perm):
    perm = np.asarray(perm)
    if sorted(perm.tolist()) != list(range(len(E))):
        raise ValueError(f"perm must hold every ID from 0 to {len(E) - 1} once")
    return E.copy(), perm[np.asarray(ids)]
''', "The table's rows are where they were"),
    Mistake("relabel", "perm_not_checked", '''
def relabel(E, ids, perm):
    perm = np.asarray(perm)
    E_new = np.zeros_like(E)
    E_new[perm] = E[: len(perm)]
    return E_new, perm[np.asarray(ids)]
''', "should raise ValueError"),
    returns("predict_relabel", "both_change", "('changes', 'changes'), 'new ids, new outputs'",
            "The lookup's output stays the same"),
    returns("predict_relabel", "both_same", "('same', 'same'), 'same text'", "The linear map's output changes"),
    returns("predict_relabel", "swapped", "('changes', 'same'), 'hm'", "Swapped"),
    returns("predict_relabel", "not_the_two_words", "(True, False), 'yes and no'", "each 'same' or 'changes'"),
    Mistake("skipgram_pairs", "centre_is_its_own_context", '''
def skipgram_pairs(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(ids[i], ids[j]) for i in range(len(ids))
            for j in range(max(0, i - window), min(len(ids), i + window + 1))]
''', "paired with itself"),
    Mistake("skipgram_pairs", "window_one_too_narrow", '''
def skipgram_pairs(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(ids[i], ids[j]) for i in range(len(ids))
            for j in range(max(0, i - window + 1), min(len(ids), i + window)) if j != i]
''', "a window of 0, one narrower than 1"),
    Mistake("skipgram_pairs", "window_one_too_wide", '''
def skipgram_pairs(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(ids[i], ids[j]) for i in range(len(ids))
            for j in range(max(0, i - window - 1), min(len(ids), i + window + 2)) if j != i]
''', "one wider than"),
    Mistake("skipgram_pairs", "negative_index_wraps_round", '''
def skipgram_pairs(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    pairs = []
    for i in range(len(ids)):
        for k in range(-window, window + 1):
            if k != 0 and i + k < len(ids):  # forgot i + k >= 0: ids[-1] is the last token
                pairs.append((ids[i], ids[i + k]))
    return pairs
''', "wrapped round to the end"),
    Mistake("skipgram_pairs", "right_context_only", '''
def skipgram_pairs(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, min(len(ids), i + window + 1))]
''', "only with the tokens after it"),
    Mistake("cbow_examples", "one_example_per_pair", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [([ids[j]], ids[i]) for i in range(len(ids))
            for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]
''', "CBOW makes one example per position"),
    Mistake("cbow_examples", "centre_first", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(ids[i], [ids[j] for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i])
            for i in range(len(ids))]
''', "the context list comes first"),
    Mistake("cbow_examples", "centre_in_its_own_context", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(list(ids[max(0, i - window):i + window + 1]), ids[i]) for i in range(len(ids))]
''', "flattened into (centre, context) pairs"),
    Mistake("cbow_examples", "negative_start_wraps_round", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(list(ids[i - window:i]) + list(ids[i + 1:i + 1 + window]), ids[i]) for i in range(len(ids))]
''', "flattened into (centre, context) pairs"),
    Mistake("cbow_examples", "window_one_too_wide", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(list(ids[max(0, i - window - 1):i]) + list(ids[i + 1:i + 2 + window]), ids[i]) for i in range(len(ids))]
''', "one wider than"),
    Mistake("cbow_examples", "only_full_windows", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(list(ids[i - window:i]) + list(ids[i + 1:i + 1 + window]), ids[i])
            for i in range(window, len(ids) - window)]
''', "examples for"),
    Mistake("cbow_examples", "context_sorted", '''
def cbow_examples(ids, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return [(sorted(ids[max(0, i - window):i] + ids[i + 1:i + 1 + window]), ids[i]) for i in range(len(ids))]
''', "not in the order the tokens stand"),
    Mistake("skipgram_pairs", "no_window_check", '''
def skipgram_pairs(ids, window):
    return [(ids[i], ids[j]) for i in range(len(ids))
            for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]
''', "should raise ValueError"),
    Mistake("make_lm_pairs", "one_window_short", '''
def make_lm_pairs(ids, context_len):
    ids = np.asarray(ids)
    if len(ids) <= context_len:
        raise ValueError("too short")
    n = len(ids) - context_len - 1
    X = np.stack([ids[i:i + context_len] for i in range(n)])
    return X, np.stack([ids[i + 1:i + 1 + context_len] for i in range(n)])
''', "wrong shape"),
    Mistake("make_lm_pairs", "target_not_shifted", '''
def make_lm_pairs(ids, context_len):
    ids = np.asarray(ids)
    if len(ids) <= context_len:
        raise ValueError("too short")
    X = np.stack([ids[i:i + context_len] for i in range(len(ids) - context_len)])
    return X, X.copy()
''', "item 1 of the result"),
    Mistake("make_lm_pairs", "non_overlapping_windows", '''
def make_lm_pairs(ids, context_len):
    ids = np.asarray(ids)
    if len(ids) <= context_len:
        raise ValueError("too short")
    starts = range(0, len(ids) - context_len, context_len)
    return (np.stack([ids[s:s + context_len] for s in starts]),
            np.stack([ids[s + 1:s + 1 + context_len] for s in starts]))
''', "wrong shape"),
    Mistake("make_lm_pairs", "no_length_check", '''
def make_lm_pairs(ids, context_len):
    ids = np.asarray(ids)
    n = max(len(ids) - context_len, 0)
    X = np.array([ids[i:i + context_len] for i in range(n)], dtype=int).reshape(n, context_len)
    Y = np.array([ids[i + 1:i + 1 + context_len] for i in range(n)], dtype=int).reshape(n, context_len)
    return X, Y
''', "should raise ValueError"),
    Mistake("make_lm_pairs", "window_of_zero_accepted", '''
def make_lm_pairs(ids, context_len):
    ids = np.asarray(ids)
    n = len(ids) - context_len
    if n < 1:
        raise ValueError("need more than context_len ids")
    starts = np.arange(n)[:, None] + np.arange(context_len)
    return ids[starts], ids[starts + 1]
''', "context_len must be at least 1"),
    Mistake("most_frequent_pair", "last_of_ties", '''
def most_frequent_pair(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts.values())
    return [p for p, c in counts.items() if c == best][-1]
''', "first pair seen"),
    Mistake("most_frequent_pair", "smallest_of_ties", '''
def most_frequent_pair(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return min(counts, key=lambda p: (-counts[p], p))
''', "smallest pair"),
    Mistake("most_frequent_pair", "largest_of_ties", '''
def most_frequent_pair(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return max(counts, key=lambda p: (counts[p], p))
''', "largest pair"),
    Mistake("most_frequent_pair", "non_overlapping_count", '''
def most_frequent_pair(ids):
    counts, i = {}, 0
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        i += 2 if ids[i] == ids[i + 1] else 1
    return max(counts, key=counts.get)
''', "overlapping pairs count"),
    Mistake("most_frequent_pair", "returns_a_list", '''
def most_frequent_pair(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return list(max(counts, key=counts.get))
''', "expected a tuple"),
    Mistake("merge_pair", "overlapping_merge", '''
def merge_pair(ids, pair, new_id):
    out = []
    for i in range(len(ids)):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
        elif i > 0 and (ids[i - 1], ids[i]) == tuple(pair):
            continue
        else:
            out.append(ids[i])
    return out
''', "do not overlap"),
    Mistake("merge_pair", "drops_last_token", '''
def merge_pair(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids) - 1:
        if (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
'''),
    Mistake("merge_pair", "first_occurrence_only", '''
def merge_pair(ids, pair, new_id):
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == tuple(pair):
            return ids[:i] + [new_id] + ids[i + 2:]
    return list(ids)
''', "merge_pair([1, 2, 3, 1, 2], (1, 2), 9)"),
    Mistake("train_bpe", "ids_after_largest_byte", '''
def train_bpe(data, n_merges):
    ids, merges = list(data), []
    for _ in range(n_merges):
        if len(ids) < 2:
            break
        pair = most_frequent_pair(ids)
        if sum(p == pair for p in zip(ids, ids[1:])) < 2:
            break
        new_id = max(ids) + 1
        ids = merge_pair(ids, pair, new_id)
        merges.append((pair, new_id))
    return merges
''', "must start at 256"),
    Mistake("train_bpe", "never_stops_early", '''
def train_bpe(data, n_merges):
    ids, merges = list(data), []
    for k in range(n_merges):
        if len(ids) < 2:
            break
        pair = most_frequent_pair(ids)
        ids = merge_pair(ids, pair, 256 + k)
        merges.append((pair, 256 + k))
    return merges
''', "occurs only once in what the earlier merges left"),
    Mistake("train_bpe", "counts_the_original_bytes", '''
def train_bpe(data, n_merges):
    ids, merges = list(data), []
    for k in range(n_merges):
        counts = {}
        for p in zip(data, data[1:]):
            counts[p] = counts.get(p, 0) + 1
        if not counts or max(counts.values()) < 2:
            break
        pair = max(counts, key=counts.get)
        ids = merge_pair(ids, pair, 256 + k)
        merges.append((pair, 256 + k))
    return merges
''', "as if every round counted the pairs of the original bytes"),
    Mistake("train_bpe", "ties_to_the_smallest_pair", '''
def train_bpe(data, n_merges):
    ids, merges = list(data), []
    for k in range(n_merges):
        counts = {}
        for p in zip(ids, ids[1:]):
            counts[p] = counts.get(p, 0) + 1
        if not counts or max(counts.values()) < 2:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        ids = merge_pair(ids, pair, 256 + k)
        merges.append((pair, 256 + k))
    return merges
''', "ties go to the pair that occurs first"),
    Mistake("train_bpe", "merges_as_a_dict", '''
def train_bpe(data, n_merges):
    ids, merges = list(data), {}
    for k in range(n_merges):
        if len(ids) < 2:
            break
        pair = most_frequent_pair(ids)
        if sum(p == pair for p in zip(ids, ids[1:])) < 2:
            break
        ids = merge_pair(ids, pair, 256 + k)
        merges[pair] = 256 + k
    return merges
''', "expected a list"),
    Mistake("bpe_encode", "merges_in_reverse", '''
def bpe_encode(data, merges):
    ids = list(data)
    for pair, new_id in reversed(merges):
        ids = merge_pair(ids, pair, new_id)
    return ids
''', "wrong order"),
    Mistake("bpe_encode", "each_merge_on_raw_bytes", '''
def bpe_encode(data, merges):
    ids = list(data)
    for pair, new_id in merges:
        ids = merge_pair(list(data), pair, new_id)
    return ids
''', "raw bytes"),
    Mistake("bpe_encode", "code_points_not_bytes", '''
def bpe_encode(data, merges):
    ids = [ord(c) for c in data.decode("utf-8")]
    for pair, new_id in merges:
        ids = merge_pair(ids, pair, new_id)
    return ids
''', "UTF-8 bytes"),
    Mistake("bpe_encode", "overlapping_occurrences", '''
def bpe_encode(data, merges):
    ids = list(data)
    for pair, new_id in merges:
        out = []
        for i in range(len(ids)):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
                out.append(new_id)
            elif not (i > 0 and (ids[i - 1], ids[i]) == tuple(pair)):
                out.append(ids[i])
        ids = out
    return ids
''', "overlapping"),
    Mistake("bpe_decode", "not_recursive", '''
def bpe_decode(ids, merges):
    pairs = {new_id: pair for pair, new_id in merges}
    out = []
    for i in ids:
        out.extend(pairs.get(i, (i,)))
    return bytes(out)
''', "expand recursively"),
    Mistake("bpe_decode", "undoes_merges_first_to_last", '''
def bpe_decode(ids, merges):
    ids = list(ids)
    for pair, new_id in merges:
        out = []
        for i in ids:
            out.extend(pair if i == new_id else (i,))
        ids = out
    return bytes(ids)
''', "expand recursively"),
    Mistake("bpe_decode", "returns_text", '''
def bpe_decode(ids, merges):
    table = {i: bytes([i]) for i in range(256)}
    for (a, b), new_id in merges:
        table[new_id] = table[a] + table[b]
    return b"".join(table[i] for i in ids).decode("utf-8", errors="replace")
''', "return bytes"),
    Mistake("bpe_decode", "chr_then_utf8", '''
def bpe_decode(ids, merges):
    table = {i: chr(i) for i in range(256)}
    for (a, b), new_id in merges:
        table[new_id] = table[a] + table[b]
    return "".join(table[i] for i in ids).encode("utf-8")
''', "not chr(i)"),
    # bug hunt: the code as released (the suite checks the released cell too); then half-fixes
    Mistake("train_val_pairs", "the_bug_windows_first", '''
def train_val_pairs(ids, context_len, val_frac=0.3):
    X, Y = make_lm_pairs(ids, context_len)
    n_val = int(len(X) * val_frac)
    return X[:-n_val], Y[:-n_val], X[-n_val:], Y[-n_val:]
''', "overlap both ways"),
    Mistake("train_val_pairs", "half_fix_validation_borrows_context", '''
def train_val_pairs(ids, context_len, val_frac=0.3):
    cut = len(ids) - int(len(ids) * val_frac)
    X_train, Y_train = make_lm_pairs(ids[:cut], context_len)
    X_val, Y_val = make_lm_pairs(ids[cut - context_len:], context_len)  # "so the first target has context"
    return X_train, Y_train, X_val, Y_val
''', "the validation arrays hold ids of the training part"),
    Mistake("train_val_pairs", "half_fix_only_validation", '''
def train_val_pairs(ids, context_len, val_frac=0.3):
    cut = len(ids) - int(len(ids) * val_frac)
    X, Y = make_lm_pairs(ids, context_len)
    X_val, Y_val = make_lm_pairs(ids[cut:], context_len)
    return X[:cut], Y[:cut], X_val, Y_val
''', "the training arrays still hold"),
    Mistake("train_val_pairs", "cut_rounded_the_other_way", '''
def train_val_pairs(ids, context_len, val_frac=0.3):
    cut = int(len(ids) * (1 - val_frac)) - 1
    return (*make_lm_pairs(ids[:cut], context_len), *make_lm_pairs(ids[cut:], context_len))
''', "ids of the training part, [23]"),
    returns("predict_param_counts", "only_selected_rows", "(80, 80), 'only the rows we use'",
            "whether or not this prompt selects them"),
    returns("predict_param_counts", "swapped", "(80, 16000)", "Swapped"),
    returns("predict_param_counts", "activations_are_the_table", "(16000, 16000)",
            "only the selected rows"),
    returns("predict_param_counts", "not_a_pair", "16080",
            "a tuple of two ints"),
    returns("predict_lm_targets", "every_token", "(1000, 8), 'each token is a target'", "The first token follows nothing"),
    returns("predict_lm_targets", "the_windows", "(992, 8), 'one per window'", "number of windows"),
    returns("predict_lm_targets", "every_entry_of_Y", "(7936, 8), '992 windows of 8'", "counts a position once for every window"),
    returns("predict_lm_targets", "one_window_each", "(999, 1), 'each position has its window'", "8 windows, not 1"),
    returns("predict_lm_targets", "one_too_many", "(999, 9), 'windows 492 to 500'", "not 9"),
    returns("predict_lm_targets", "not_a_pair", "999", "a tuple of two ints"),
    returns("predict_emoji_tokens", "one_per_character", "1, 'one character'", "never held any of them"),
    returns("predict_emoji_tokens", "unknown_dropped", "0, 'never seen'", "Nothing is dropped"),
    returns("predict_emoji_tokens", "utf16", "2, 'a surrogate pair'", "UTF-16"),
    returns("predict_emoji_tokens", "a_string", "'4', 'bytes'", "an int"),
    returns("predict_first_merges", "characters_only", "('th', 'he', 'e '), 'the commonest letter pairs'",
            "what the merges before it left"),
    returns("predict_first_merges", "tie_to_at", "('at', 'th', 'he'), 'cat hat bat'", "a tie goes to the pair seen first"),
    returns("predict_first_merges", "third_is_at", "('th', 'the', 'at'), 'then at'", "'the ' at position 0"),
    returns("predict_first_merges", "a_list_of_two", "('th', 'the'), 'two'", "a tuple of three strings"),
    returns("predict_utf8_length", "characters", "7, 'one byte per character'", "number of characters"),
    returns("predict_utf8_length", "utf16_emoji", "8", "UTF-16"),
    returns("predict_utf8_length", "emoji_three_bytes", "10", "one byte short"),
    returns("predict_utf8_length", "a_string", "'11'", "an int"),
    returns("predict_bpe_tokens", "longest_match", "(257, 97)",
            "longest-match"),
    returns("predict_bpe_tokens", "merges_only_for_training_text", "(97, 97, 97, 97)",
            "not only the training text"),
    returns("predict_bpe_tokens", "overlapping", "(256, 256, 256)",
            "do not overlap"),
    returns("predict_merge_savings", "later_merges_longer_tokens", "'last 29', 'later tokens are longer'",
            "commonest pair first"),
    returns("predict_merge_savings", "every_merge_one_token", "'the same', 'each merge saves a token'",
            "not worth the same"),
    returns("predict_merge_savings", "a_number", "131, 'the first ten'", "one of 'first 10'"),
    returns("predict_cat_neighbours", "dog_not_first", "('king', 'dog', 'fish'), 'royal animals'",
            "the same as cat's"),
    returns("predict_cat_neighbours", "fish_before_king", "('dog', 'fish', 'king'), 'cats eat fish'",
            "more of both rows lies on shared words"),
    returns("predict_cat_neighbours", "a_word_left_out", "('dog', 'king', 'queen'), 'by meaning'",
            "the three words 'dog', 'king' and 'fish'"),
    returns("predict_cbow_counts", "no_ends", "(36, 144), 'four each'", "Near the ends there are fewer"),
    returns("predict_cbow_counts", "every_example_full", "(36, 138), 'one per position'", "not every context is full"),
    returns("predict_cbow_counts", "only_the_end_tokens", "(34, 140), 'the ends miss two'", "32 full contexts, 144 - 6"),
    returns("predict_cbow_counts", "only_the_end_tokens_all_full", "(36, 140), 'the ends miss two'",
            "those four contexts are not full"),
    returns("predict_cbow_counts", "one_example_per_pair", "(138, 138), 'as many as pairs'", "one example per position"),
    returns("predict_cbow_counts", "window_counts_both_sides", "(34, 70), 'two each'", "4 in all, not 2"),
    returns("predict_cbow_counts", "one_number", "138, 'the pairs'", "a tuple of two ints"),
    returns("predict_cross_word_token", "tokens_stop_at_spaces", "'no', 'a token is a piece of a word'",
            "knows what a word is"),
    returns("predict_cross_word_token", "a_bool", "True, 'phrases repeat'", "'yes' or 'no'"),
    returns("predict_cross_word_token", "reason_left_blank", "'yes', '  '", "Your reason is empty"),
]

ALTERNATIVES = {
    "skipgram_pairs": '''
def skipgram_pairs(ids, window):
    # differently written: for each offset, zip the sequence with itself shifted, both ways, as arrays
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    ids = list(ids)
    pairs = []
    for k in range(1, window + 1):
        pairs += [[a, b] for a, b in zip(ids, ids[k:])] + [[b, a] for a, b in zip(ids, ids[k:])]
    return pairs
''',
    "train_val_pairs": '''
def train_val_pairs(ids, context_len, val_frac=0.3):
    # fixed: split the stream first; windowing first let windows straddle the cut
    n_val = int(len(ids) * val_frac)
    X, Y = make_lm_pairs(ids, context_len)
    cut = len(ids) - n_val
    train = slice(0, cut - context_len)
    X_val, Y_val = make_lm_pairs(ids[cut:], context_len)
    return X[train], Y[train], X_val, Y_val
''',
    "build_vocab": '''
from collections import Counter
def build_vocab(tokens, specials=("<unk>",)):
    counts = Counter(t for t in tokens if t not in specials)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(zip([*specials, *(t for t, _ in ordered)], range(len(specials) + len(ordered))))
''',
    "encode": '''
def encode(tokens, vocab, unk="<unk>"):
    out = []
    for t in tokens:
        out.append(vocab[t] if t in vocab else vocab[unk])
    return out
''',
    "decode": '''
def decode(ids, vocab):
    by_id = sorted(vocab, key=vocab.get)
    return [by_id[i] for i in ids]
''',
    "one_hot": '''
def one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.all(np.mod(ids, 1) == 0):
        raise ValueError("ids must be whole numbers")
    ids = ids.astype(np.int64)
    if np.any((ids < 0) | (ids >= vocab_size)):
        raise ValueError(f"ids must lie in [0, {vocab_size})")
    out = np.zeros(ids.shape + (vocab_size,))
    np.put_along_axis(out, ids[..., None], 1.0, axis=-1)
    return out
''',
    "embedding_lookup": '''
def embedding_lookup(E, ids):
    ids = np.asarray(ids, dtype=np.int64)
    if np.any((ids < 0) | (ids >= E.shape[0])):
        raise ValueError(f"id {ids[(ids < 0) | (ids >= E.shape[0])][0]} is outside [0, {E.shape[0]})")
    return np.take(E, ids, axis=0)
''',
    "relabel": '''
def relabel(E, ids, perm):
    # differently written: gather by the inverse permutation, with a loop for it
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(E))):
        raise ValueError(f"perm must hold every ID from 0 to {len(E) - 1} once")
    inverse = [0] * len(perm)
    for old, new in enumerate(perm):
        inverse[new] = old
    return E[inverse], np.vectorize(lambda i: perm[i])(np.asarray(ids))
''',
    "cbow_examples": '''
def cbow_examples(ids, window):
    # differently written: from the skip-gram pairs, grouped by position, as tuples
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    n = len(ids)
    return [(tuple(ids[j] for j in range(n) if 0 < abs(j - i) <= window), ids[i]) for i in range(n)]
''',
    "predict_relabel": answer("predict_relabel", "[['same', 'changes'], 'address against quantity']"),
    "predict_first_merges": answer("predict_first_merges", "[['t' + 'h', 'the', 'the '], 'first seen wins ties']"),
    "predict_emoji_tokens": answer("predict_emoji_tokens", "len('👋'.encode()), 'its bytes, no merge'"),
    "predict_merge_savings": answer("predict_merge_savings", "'first ' + str(10), 'commonest pairs go first'"),
    "predict_cat_neighbours": answer("predict_cat_neighbours", "[['dog', 'king', 'fish'], 'shared contexts'][::1]"),
    "predict_cbow_counts": answer("predict_cbow_counts", "[[36 - 4, 4 * 36 - 6], 'the ends miss six']"),
    "predict_cross_word_token": answer("predict_cross_word_token", "'ye' + 's', 'spaces are bytes too'"),
    "predict_lm_targets": answer("predict_lm_targets", "[1000 - 1, 2 ** 3], 'eight windows overlap on each middle position'"),
    "make_lm_pairs": '''
def make_lm_pairs(ids, context_len):
    if context_len < 1 or len(ids) <= context_len:
        raise ValueError("context_len must be at least 1, and less than len(ids)")
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(ids), context_len + 1)
    return windows[:, :-1], windows[:, 1:]
''',
    "most_frequent_pair": '''
from collections import Counter
def most_frequent_pair(ids):
    return Counter(zip(ids, ids[1:])).most_common(1)[0][0]
''',
    "merge_pair": '''
def merge_pair(ids, pair, new_id):
    out = []
    skip = False
    for a, b in zip(ids, list(ids[1:]) + [None]):
        if skip:
            skip = False
        elif (a, b) == tuple(pair):
            out.append(new_id)
            skip = True
        else:
            out.append(a)
    return out
''',
    "train_bpe": '''
from collections import Counter
def train_bpe(data, n_merges):
    ids, merges = list(data), []
    for new_id in range(256, 256 + n_merges):
        counts = Counter(zip(ids, ids[1:]))
        if not counts:
            break
        pair, n = counts.most_common(1)[0]
        if n < 2:
            break
        ids = merge_pair(ids, pair, new_id)
        merges.append((pair, new_id))
    return merges
''',
    "bpe_encode": '''
def bpe_encode(data, merges):
    rank = {tuple(pair): new_id for pair, new_id in merges}
    ids = list(data)
    while len(ids) > 1:  # merge the earliest-learned pair present, as minbpe does
        pair = min(zip(ids, ids[1:]), key=lambda p: rank.get(p, float("inf")))
        if pair not in rank:
            break
        ids = merge_pair(ids, pair, rank[pair])
    return ids
''',
    "bpe_decode": '''
def bpe_decode(ids, merges):
    parts = {new_id: pair for pair, new_id in merges}
    def expand(i):
        return bytes([i]) if i < 256 else expand(parts[i][0]) + expand(parts[i][1])
    return bytearray(b"".join(expand(i) for i in ids))
''',
    "predict_param_counts": answer("predict_param_counts", "[1000 * 16, 5 * 16], 'V * d and T * d'"),
    "predict_utf8_length": answer("predict_utf8_length", "len('Ωmega 🎲'.encode())"),
    "predict_bpe_tokens": answer("predict_bpe_tokens", "[[256, 256], 'merge 2 never fires']"),
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def _first_message(exercise, source):
    """What the visible check says first about ``source``: the message a learner reads."""
    local = run_exercise(A, exercise, source)[0].local
    assert local is not None, f"{exercise} passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_bug_hunt_shows_progress_with_symptoms():
    """The bug hunt hunts: the code as released and each half-fix get different messages, each naming the ids
    that leak and which way, and none says which line to write (split first, window each part)."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "train_val_pairs"}
    said = {"released": _first_message("train_val_pairs", stub_of(A, "train_val_pairs")),
            **{label: _first_message("train_val_pairs", mistakes[label])
               for label in ("half_fix_validation_borrows_context", "half_fix_only_validation")}}
    assert len(set(said.values())) == len(said), said
    assert "both ways" in said["released"] and "[24]" in said["released"] and "[22, 23]" in said["released"], said
    for message in said.values():
        for fix in ("split the stream", "split first", "before you window", "cross the cut", "make_lm_pairs("):
            assert fix not in message, (fix, message)


def test_the_first_merges_reveal_replays_the_learners_own_two_functions(capsys):
    """predict_first_merges' reveal keeps train_bpe's loop off screen by calling check.replay_merges: it runs the
    two functions it is given (a learner's tie to the last pair shows in what it returns) and prints each merge."""
    from autograder.checks import nb01

    text = "the cat and the hat and the bat"
    pieces = nb01.replay_merges(text, 3, nb01.R("most_frequent_pair"), nb01.R("merge_pair"))
    assert pieces == ("th", "the", "the ")
    assert capsys.readouterr().out.splitlines() == ["merge 1: 'th'     -> 28 tokens", "merge 2: 'the'    -> 25 tokens",
                                                    "merge 3: 'the '   -> 22 tokens"]

    def tie_to_the_last(ids):
        counts = {}
        for pair in zip(ids, ids[1:]):
            counts[pair] = counts.get(pair, 0) + 1
        return max(reversed(list(counts)), key=counts.get)

    assert nb01.replay_merges(text, 3, tie_to_the_last, nb01.R("merge_pair")) != pieces
