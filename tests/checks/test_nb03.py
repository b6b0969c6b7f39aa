"""Does every check of 03_dot_and_outer_products reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns

pytestmark = pytest.mark.nb03
A = "03_dot_and_outer_products"

MISTAKES = [
    Mistake("outer", "b_times_a_transposed", '''
def outer(a, b):
    return np.outer(b, a)
''', "b a^T"),
    Mistake("outer", "elementwise_product", '''
def outer(a, b):
    return a * b
''', "elementwise product"),
    Mistake("outer", "column_times_column", '''
def outer(a, b):
    return a[:, None] * b[:, None]
'''),
    Mistake("outer", "dot_product", '''
def outer(a, b):
    return a @ b
''', "that is the dot product"),
    Mistake("score_table", "Q_transposed_times_K", '''
def score_table(Q, K):
    return Q.T @ K
''', "one row and one column per feature"),
    Mistake("score_table", "keys_by_queries", '''
def score_table(Q, K):
    return K @ Q.T
''', "keys by queries, the transpose"),
    Mistake("score_table", "scaled_too_early", '''
def score_table(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])
''', "sqrt(d)"),
    Mistake("score_table", "no_transpose", '''
def score_table(Q, K):
    return Q @ K
''', "raised ValueError"),
    Mistake("score_table", "dot_T_reverses_the_batch_axes", '''
def score_table(Q, K):
    return Q @ K.T
''', "a batch of 2 tables"),
    Mistake("score_table", "transposes_three_axes_only", '''
def score_table(Q, K):
    return Q @ (K.T if K.ndim == 2 else K.transpose(0, 2, 1))
''', "(B, H, T, D)"),
    Mistake("score_table", "loops_over_the_first_axis_only", '''
def score_table(Q, K):
    if Q.ndim == 2:
        return Q @ K.T
    return np.stack([q @ k.T for q, k in zip(Q, K)])
''', "(B, H, T, D)"),
    Mistake("score_table", "keys_by_queries_in_a_batch", '''
def score_table(Q, K):
    return K @ np.swapaxes(Q, -1, -2)
''', "keys by queries"),
    Mistake("score_table", "ignores_the_shared_key_heads", '''
def score_table(Q, K):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("the feature sizes differ")
    return Q @ np.swapaxes(K, -1, -2)
''', "4 query heads share 2 key heads"),
    Mistake("score_table", "tiles_the_key_heads", '''
def score_table(Q, K):
    if Q.ndim >= 3 and K.ndim >= 3 and K.shape[-3] != Q.shape[-3]:
        K = np.tile(K, (1,) * (K.ndim - 3) + (Q.shape[-3] // K.shape[-3], 1, 1))
    return Q @ np.swapaxes(K, -1, -2)
''', "your groups interleave"),
    Mistake("score_table", "shares_only_with_the_first_key_head", '''
def score_table(Q, K):
    if Q.ndim >= 3 and K.ndim >= 3 and K.shape[-3] != Q.shape[-3]:
        if Q.shape[-3] % K.shape[-3]:
            raise ValueError("the heads cannot be shared")
        K = K[..., :1, :, :]
    return Q @ np.swapaxes(K, -1, -2)
''', "wrong values"),
    Mistake("score_table_from_outer", "sums_over_rows", '''
def score_table_from_outer(Q, K):
    total = 0
    for i in range(len(Q)):
        total = total + outer(Q[i], K[i])
    return total
''', "outer products of rows"),
    Mistake("score_table_from_outer", "keys_outer_queries", '''
def score_table_from_outer(Q, K):
    S = np.zeros((len(K), len(Q)))
    for r in range(Q.shape[1]):
        S += outer(K[:, r], Q[:, r])
    return S
''', "keys by queries, the transpose"),
    Mistake("score_table_from_outer", "overwrites_instead_of_adding", '''
def score_table_from_outer(Q, K):
    for r in range(Q.shape[1]):
        S = outer(Q[:, r], K[:, r])
    return S
''', "only the last feature"),
    Mistake("score_table_from_outer", "loops_over_rows_count", '''
def score_table_from_outer(Q, K):
    S = np.zeros((len(Q), len(K)))
    for r in range(len(Q)):
        S += outer(Q[:, r], K[:, r])
    return S
'''),
    Mistake("cosine_similarity", "normalises_u_only", '''
def cosine_similarity(u, v):
    return float(u @ v / np.linalg.norm(u))
''', "only u was normalised"),
    Mistake("cosine_similarity", "notebook_01s_naive_cosine", '''
def cosine_similarity(u, v):
    return float(np.sum(u * v) / (np.sqrt(np.sum(u * u)) * np.sqrt(np.sum(v * v))))
''', "rounding pushed the cosine past +1"),
    Mistake("cosine_similarity", "squared_lengths", '''
def cosine_similarity(u, v):
    return (u @ v) / ((u @ u) * (v @ v))
''', "squared lengths"),
    Mistake("cosine_similarity", "returns_the_angle", '''
def cosine_similarity(u, v):
    return float(np.arccos(u @ v / (np.linalg.norm(u) * np.linalg.norm(v))))
''', "that is the angle"),
    Mistake("cosine_similarity", "plain_dot_product", '''
def cosine_similarity(u, v):
    return float(np.dot(u, v))
''', "plain dot product"),
    Mistake("cosine_similarity", "unclipped_rounding", '''
def cosine_similarity(u, v):
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    return float(u @ v / (nu * nv))
''', "outside [-1, 1]"),
    Mistake("cosine_similarity", "divides_by_zero_silently", '''
def cosine_similarity(u, v):
    return float(np.clip(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)), -1, 1))
''', "defined as 0"),
    Mistake("cosine_similarity", "refuses_the_zero_vector", '''
def cosine_similarity(u, v):
    nu, nv = np.linalg.norm(u, axis=-1), np.linalg.norm(v, axis=-1)
    if np.any(nu == 0) or np.any(nv == 0):
        raise ValueError("the zero vector has no direction")
    cos = np.clip(np.sum(u * v, axis=-1) / (nu * nv), -1, 1)
    return float(cos) if cos.ndim == 0 else cos
''', "defined as 0"),
    Mistake("cosine_similarity", "plain_vectors_only", '''
def cosine_similarity(u, v):
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return float(np.clip(u @ v / (nu * nv), -1, 1))
''', "3 pairs, row i of u against row i of v"),
    Mistake("cosine_similarity", "all_pairs_table", '''
def cosine_similarity(u, v):
    nu, nv = np.linalg.norm(u, axis=-1, keepdims=True), np.linalg.norm(v, axis=-1, keepdims=True)
    table = np.clip((u / np.where(nu == 0, 1, nu)) @ (v / np.where(nv == 0, 1, nv)).T, -1, 1)
    return float(table) if table.ndim == 0 else table
''', "3 pairs"),
    Mistake("cosine_similarity", "one_norm_for_the_whole_batch", '''
def cosine_similarity(u, v):
    lengths = np.linalg.norm(u) * np.linalg.norm(v)
    cos = np.clip(np.sum(u * v, axis=-1) / (lengths if lengths else 1.0), -1, 1)
    return float(cos) if cos.ndim == 0 else cos
''', "its own two lengths"),
    Mistake("cosine_similarity", "unclipped_in_a_batch", '''
def cosine_similarity(u, v):
    lengths = np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1)
    cos = np.sum(u * v, axis=-1) / np.where(lengths == 0, 1.0, lengths)
    return float(np.clip(cos, -1, 1)) if cos.ndim == 0 else cos
''', "outside [-1, 1]"),
    Mistake("project", "returns_scalar_length", '''
def project(u, v):
    return (u @ v) / np.linalg.norm(v)
''', "length of the shadow"),
    Mistake("project", "divides_by_norm_not_squared", '''
def project(u, v):
    return (u @ v) / np.linalg.norm(v) * v
''', "your answer doubles"),
    Mistake("project", "projects_v_onto_u", '''
def project(u, v):
    return (u @ v) / (u @ u) * u
''', "points along u"),
    Mistake("project", "returns_perpendicular_part", '''
def project(u, v):
    return u - (u @ v) / (v @ v) * v
''', "right angle to v"),
    Mistake("project", "nan_for_the_zero_vector", '''
def project(u, v):
    return (u @ v) / (v @ v) * v
''', "should raise ValueError"),
    Mistake("linear_weight_grad", "outer_x_g_transposed", '''
def linear_weight_grad(g, x):
    return np.outer(x, g)
''', "This is the transpose: dL/dW has the shape of W"),
    Mistake("linear_weight_grad", "elementwise_product", '''
def linear_weight_grad(g, x):
    return g * x
'''),
    Mistake("linear_weight_grad", "dot_product", '''
def linear_weight_grad(g, x):
    return g @ x
'''),
    Mistake("linear_weight_grad", "sign_flipped", '''
def linear_weight_grad(g, x):
    return -np.outer(g, x)
''', "sign flipped"),
    # bug hunt: the released code is the bug itself (the suite checks it is rejected); then half-fixes
    Mistake("batch_weight_grad", "the_bug_outer_of_the_sums", '''
def batch_weight_grad(G, X):
    return np.outer(G.sum(axis=0), X.sum(axis=0))  # one table for the whole batch, no loop
''', "only for a batch of more than one example"),
    Mistake("batch_weight_grad", "half_fix_outer_of_the_means", '''
def batch_weight_grad(G, X):
    return np.outer(G.mean(axis=0), X.mean(axis=0))
''', "not by one common factor"),
    Mistake("batch_weight_grad", "half_fix_row_layout", '''
def batch_weight_grad(G, X):
    return X.T @ G
''', "but W, and so dL/dW, has shape (d_out, d_in) = (2, 3)"),
    Mistake("batch_weight_grad", "half_fix_reshape", '''
def batch_weight_grad(G, X):
    return (X.T @ G).reshape(G.shape[1], X.shape[1])
''', "A reshape reads the same numbers in another order"),
    Mistake("batch_weight_grad", "half_fix_mean_not_sum", '''
def batch_weight_grad(G, X):
    return (X.T @ G).T / len(X)
''', "divided by N"),
    Mistake("batch_weight_grad", "half_fix_first_example", '''
def batch_weight_grad(G, X):
    return linear_weight_grad(G[0], X[0])
''', "first example's loss alone"),
    returns("predict_outer_sum", "adds_a_and_b", "11", "adds the entries of a and of b"),
    returns("predict_outer_sum", "dot_of_the_first_two", "9", "a dot product of the first two entries"),
    returns("predict_outer_sum", "counts_entries", "6", "the number of entries"),
    returns("predict_outer_sum", "largest_entry", "12", "the largest entry, 3 * 4"),
    returns("predict_outer_sum", "the_shape", "(3, 2)", "answer with a number"),
    returns("predict_scaled_scores", "dot_ignores_length", "(-4.0, -0.444), 'lengths do not matter'",
            "grows with the lengths"),
    returns("predict_scaled_scores", "cosine_scales_too", "(-20.0, -2.222)",
            "divides by both lengths"),
    returns("predict_scaled_scores", "cosine_is_the_dot", "(-20, -20)",
            "between -1 and 1"),
    returns("predict_scaled_scores", "stretching_only", "(20.0, 0.444), 'stretching only'",
            "Both numbers lost the sign"),
    returns("predict_scaled_scores", "cosine_ignores_the_sign", "(-20.0, 0.444), 'the cosine ignores scaling'",
            "are never negative"),
    returns("predict_scaled_scores", "dot_ignores_the_sign", "(20.0, -0.444)", "The dot product lost the sign"),
    returns("predict_scaled_scores", "the_pair_above", "(-55.0, -0.984), 'scaled a and b'", "the pair above"),
    Mistake("score_rank_by_width", "no_cap_from_the_size", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    return [int(np.linalg.matrix_rank(rng.normal(size=(d, d)))) for d in widths]  # a d x d table, not n_q x n_k
''', "past the table's size"),
    Mistake("score_rank_by_width", "counts_nonzero_rows", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    ranks = []
    for d in widths:
        S = score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)))
        ranks.append(int(np.count_nonzero(np.any(S != 0, axis=1))))
    return ranks
''', "the same rank at every width"),
    Mistake("score_rank_by_width", "only_the_queries_cap", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    return [int(np.linalg.matrix_rank(rng.normal(size=(n_q, d)))) for d in widths]
''', "only 4 columns"),
    Mistake("score_rank_by_width", "one_width_for_all", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    d = widths[0]
    Q, K = rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d))
    return [int(np.linalg.matrix_rank(score_table(Q, K)))] * len(widths)
''', "the same rank at every width"),
    Mistake("score_rank_by_width", "sorted_widths", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    ranks = []
    for d in sorted(widths):
        ranks.append(int(np.linalg.matrix_rank(score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d))))))
    return ranks
''', "not in the order of the widths given"),
    Mistake("score_rank_by_width", "counts_widths_not_the_widths_given", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    ranks = []
    for d in range(1, len(widths) + 1):  # widths 1, 2, 3, ... instead of the ones handed in
        ranks.append(int(np.linalg.matrix_rank(score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d))))))
    return ranks
''', "first differing at width"),
    Mistake("score_rank_by_width", "one_number", '''
def score_rank_by_width(widths, n_q, n_k, rng):
    d = widths[-1]
    return int(np.linalg.matrix_rank(score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)))))
''', "one rank per width"),
    Mistake("score_rank_by_width", "weights_flag_ignored", '''
def score_rank_by_width(widths, n_q, n_k, rng, weights=False):
    return [int(np.linalg.matrix_rank(score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)))))
            for d in widths]  # weights=True measures the scores all the same
''', "the scores' own ranks"),
    Mistake("score_rank_by_width", "weights_by_log_softmax", '''
def score_rank_by_width(widths, n_q, n_k, rng, weights=False):
    import torch
    ranks = []
    for d in widths:
        S = score_table(rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)))
        if weights:  # log_softmax, the loss's favourite, is not the weights: each row only shifted
            S = torch.log_softmax(torch.from_numpy(S), dim=1).numpy()
        ranks.append(int(np.linalg.matrix_rank(S)))
    return ranks
''', "one more than the width"),
    Mistake("score_rank_by_width", "softmax_of_the_features", '''
def score_rank_by_width(widths, n_q, n_k, rng, weights=False):
    ranks = []
    for d in widths:
        Q, K = rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d))
        if weights:  # the softmax put on the queries and keys, not on the table of their scores
            Q, K = np.exp(Q) / np.exp(Q).sum(1, keepdims=True), np.exp(K) / np.exp(K).sum(1, keepdims=True)
        ranks.append(int(np.linalg.matrix_rank(score_table(Q, K))))
    return ranks
''', "the scores' own ranks"),
    returns("predict_score_rank", "full_rank", "(6, 6), 'every entry is its own dot product'", "at most 3"),
    returns("predict_score_rank", "bias_forgotten", "(2, 6), 'd features cap the rank at d'", "another rank-1 table"),
    returns("predict_score_rank", "features_cap_only", "(2, 8)", "only 6 rows"),
    returns("predict_score_rank", "rank_one", "(1, 1)", "pointing different ways"),
    returns("predict_score_rank", "the_old_single_answer", "2", "a tuple of two ints"),
    returns("predict_score_rank", "floats", "((2.0, 6.0), 'ranks')", "a tuple of two ints"),
    returns("predict_softmax_rank", "keeps_the_rank", "2, 'the softmax keeps the rank'", "does not keep the rank"),
    returns("predict_softmax_rank", "rows_sum_to_one", "1", "need not be multiples"),
    returns("predict_softmax_rank", "above_the_size", "8", "at most 6"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("project", "eps_in_denominator", '''
def project(u, v):
    return (u @ v) / (v @ v + 1e-3) * v  # an eps "for safety" that shifts every answer
''', "wrong values"),
    Mistake("project", "forgets_to_divide", '''
def project(u, v):
    return (u @ v) * v
''', "grows fourfold when v doubles"),
]

ALTERNATIVES = {
    "outer": '''
def outer(a, b):
    return np.array([[x * y for y in b] for x in a]).reshape(len(a), len(b))
''',
    "score_table": '''
def score_table(Q, K):
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"{Q.shape[-1]} features against {K.shape[-1]}")
    if Q.ndim < 3 or K.ndim < 3 or Q.shape[-3] == K.shape[-3]:
        return np.einsum("...id,...jd->...ij", Q, K)
    H, G = Q.shape[-3], K.shape[-3]
    if H % G:
        raise ValueError(f"{H} query heads, {G} key heads")
    grouped = Q.reshape(Q.shape[:-3] + (G, H // G) + Q.shape[-2:])  # the query heads of one key head together
    S = np.einsum("...grid,...gjd->...grij", grouped, K)
    return S.reshape(Q.shape[:-1] + (K.shape[-2],))
''',
    "score_table_from_outer": '''
def score_table_from_outer(Q, K):
    return sum(np.outer(q_col, k_col) for q_col, k_col in zip(Q.T, K.T))
''',
    "cosine_similarity": '''
def cosine_similarity(u, v):
    if u.shape[-1] != v.shape[-1]:
        raise ValueError(f"{u.shape[-1]} numbers against {v.shape[-1]}")
    dots = np.einsum("...i,...i->...", u, v)
    lengths = np.sqrt(np.einsum("...i,...i->...", u, u) * np.einsum("...i,...i->...", v, v))
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.nan_to_num(dots / lengths)  # 0 / 0 for a zero vector: nan, read as 0
    cos = np.minimum(1.0, np.maximum(-1.0, cos))
    return cos.item() if cos.ndim == 0 else cos
''',
    "project": '''
def project(u, v):
    if np.linalg.norm(v) == 0:
        raise ValueError("v = 0")
    unit = v / np.linalg.norm(v)
    return np.dot(u, unit) * unit
''',
    "linear_weight_grad": '''
def linear_weight_grad(g, x):
    return g.reshape(-1, 1) @ x.reshape(1, -1)
''',
    "predict_outer_sum": answer("predict_outer_sum", "float(sum([1, 2, 3]) * sum([1, 4]))"),  # no reason: same point
    "predict_scaled_scores": answer("predict_scaled_scores", "[-5 * 4, -4 / (3 * 3)], 'scaled, then divided out'"),
    "score_rank_by_width": '''
def score_rank_by_width(widths, n_q, n_k, rng, weights=False):
    import torch
    out = []
    for d in widths:  # a differently written measurement: count the singular values clear of rounding
        S = rng.standard_normal((n_q, d)) @ rng.standard_normal((n_k, d)).T
        if weights:
            S = torch.softmax(torch.tensor(S), dim=-1).numpy()
        sv = np.linalg.svd(S, compute_uv=False)
        out.append(int((sv > sv.max() * 1e-10).sum()))
    return np.array(out)
''',
    "predict_score_rank": answer("predict_score_rank", "[3, 6], 'min(d + 1, 6)'"),
    "predict_softmax_rank": answer("predict_softmax_rank", "6.0, 'exp acts entry by entry'"),
    "batch_weight_grad": '''
def batch_weight_grad(G, X):
    # the fix: only each example's own g and x meet (the outer product of the sums paired every g with every x)
    return np.einsum("ni,nj->ij", G, X)
''',
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def test_the_bug_hunt_names_a_symptom_of_its_own_for_the_bug_and_each_half_fix():
    """The released bug and every half-fix each get their own first message, none of them states the fixed line,
    and the fix passes (the learner sees progress as the messages change)."""
    import numpy as np

    from autograder.checks import nb03
    from autograder.checks.compare import CheckFailure

    attempts = {
        "the bug as released": lambda G, X: np.outer(G.sum(axis=0), X.sum(axis=0)),
        "the outer product of the means": lambda G, X: np.outer(G.mean(axis=0), X.mean(axis=0)),
        "the row layout's product": lambda G, X: X.T @ G,
        "reshaped to W's shape": lambda G, X: (X.T @ G).reshape(G.shape[1], X.shape[1]),
        "the mean, not the sum": lambda G, X: G.T @ X / len(G),
        "the first example only": lambda G, X: np.outer(G[0], X[0]),
    }
    first_lines = {}
    for name, attempt in attempts.items():
        with pytest.raises(CheckFailure) as failure:
            nb03.batch_weight_grad(attempt)
        first_lines[name] = str(failure.value).splitlines()[0]
        assert "G.T @ X" not in str(failure.value) and "G.T@X" not in str(failure.value), name
        assert "G[n]" not in str(failure.value) and "tables" not in str(failure.value), name  # no per-example recipe
    assert len(set(first_lines.values())) == len(attempts), first_lines
    bug = str(first_lines["the bug as released"])
    assert "Right shape, wrong numbers" in bug and "more than one example" in bug, bug  # a symptom...
    assert "sum" not in bug.split("(")[0] and "outer" not in bug, bug  # ...not the cause
    nb03.batch_weight_grad(lambda G, X: G.T @ X)  # the fix passes
