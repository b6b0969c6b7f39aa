"""Does every check of 04_softmax_and_probability reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.checks.bug_hunts import stub_test
from tests.harness import Mistake, assert_accepted, exercise_suite, returns, run_exercise, stub_of

pytestmark = pytest.mark.nb04
A = "04_softmax_and_probability"

MISTAKES = [
    # ------------------------------------------------------------------ softmax
    Mistake("softmax", "no_max_subtraction", '''
def softmax(z, axis=-1):
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)
''', "did you subtract the max?"),
    Mistake("softmax", "wrong_axis", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
''', "softmax over axis 0"),
    Mistake("softmax", "global_max", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())
    return e / e.sum(axis=axis, keepdims=True)
''', "max of the whole array"),
    Mistake("softmax", "normalizes_whole_array", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max())
    return e / e.sum()
''', "normalized over the whole array"),
    Mistake("softmax", "no_keepdims_on_rows", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)
'''),
    # ------------------------------------------------------- softmax_temperature
    Mistake("softmax_temperature", "multiplies_by_tau", '''
def softmax_temperature(z, tau):
    if tau <= 0:
        raise ValueError("tau must be positive")
    return softmax(np.asarray(z) * tau)
''', "wrong way round"),
    Mistake("softmax_temperature", "no_validation", '''
def softmax_temperature(z, tau):
    return softmax(np.asarray(z) / tau)
''', "should raise ValueError"),
    Mistake("softmax_temperature", "ignores_tau", '''
def softmax_temperature(z, tau):
    if tau <= 0:
        raise ValueError("tau must be positive")
    return softmax(z)
''', "temperature was ignored"),
    Mistake("softmax_temperature", "subtracts_tau", '''
def softmax_temperature(z, tau):
    if tau <= 0:
        raise ValueError("tau must be positive")
    return softmax(np.asarray(z) - tau)
'''),
    # ------------------------------------------------------------- cross_entropy
    Mistake("cross_entropy", "log_of_softmax", '''
def cross_entropy(logits, targets):
    p = softmax(logits)
    return float(-np.mean(np.log(p[np.arange(len(targets)), targets])))
''', "log-sum-exp"),
    Mistake("cross_entropy", "sum_not_mean", '''
def cross_entropy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return float(-log_p[np.arange(len(targets)), targets].sum())
''', "the mean"),
    Mistake("cross_entropy", "row_mixed_targets", '''
def cross_entropy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return float(-log_p[:, targets].mean())
''', "its own target"),
    Mistake("cross_entropy", "per_row_losses", '''
def cross_entropy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return -log_p[np.arange(len(targets)), targets]
''', "one number"),
    Mistake("cross_entropy", "positive_log_prob", '''
def cross_entropy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return float(log_p[np.arange(len(targets)), targets].mean())
''', "sign is flipped"),
    # ---------------------------------------------------------------- perplexity
    Mistake("perplexity", "base_two", '''
def perplexity(mean_nll):
    return 2.0 ** mean_nll
''', "in nats"),
    Mistake("perplexity", "trusts_a_negative_loss", '''
def perplexity(mean_nll):
    return float(np.exp(mean_nll))
''', "a mean NLL below 0"),
    Mistake("perplexity", "negative_exponent", '''
def perplexity(mean_nll):
    return float(np.exp(-mean_nll))
''', "is its inverse"),
    Mistake("perplexity", "inverse_nll", '''
def perplexity(mean_nll):
    return 1.0 / mean_nll
'''),
    # ------------------------------------------------------------------ entropy
    Mistake("entropy", "no_zero_log_zero", '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    return float(-np.sum(p * np.log(p)))
''', "0 log 0"),
    Mistake("entropy", "log_base_two", '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    return float(-np.sum(p * np.log2(p)))
''', "natural log"),
    Mistake("entropy", "missing_minus", '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    return float(np.sum(p * np.log(p)))
''', "sign is flipped"),
    Mistake("entropy", "mean_not_sum", '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(-np.mean(terms))
''', "not a mean"),
    # ------------------------------------------------------------ kl_divergence
    Mistake("kl_divergence", "arguments_swapped", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)
    keep = p > 0
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))
''', "swapped roles"),
    Mistake("kl_divergence", "no_zero_log_zero", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)
    return float(np.sum(q * np.log(q / p)))
''', "0 log 0"),
    Mistake("kl_divergence", "cross_entropy_instead", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)
    return float(-np.sum(q * np.log(p)))
'''),
    Mistake("kl_divergence", "clipped_p_hides_infinity", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.clip(np.asarray(p, dtype=float), 1e-12, 1.0)
    k = q > 0
    return float(np.sum(q[k] * np.log(q[k] / p[k])))
''', "infinite (np.inf)"),
    Mistake("kl_divergence", "log_base_two", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)
    k = q > 0
    return float(np.sum(q[k] * np.log2(q[k] / p[k])))
''', "natural log"),
    # ----------------------------------------------------- sequence_probability
    Mistake("sequence_probability", "sum_not_product", '''
def sequence_probability(cond_probs):
    return float(np.sum(cond_probs))
''', "can exceed 1"),
    Mistake("sequence_probability", "returns_log_probability", '''
def sequence_probability(cond_probs):
    return float(np.sum(np.log(cond_probs)))
''', "log-probability"),
    Mistake("sequence_probability", "starts_from_zero", '''
def sequence_probability(cond_probs):
    total = 0.0
    for i, c in enumerate(cond_probs):
        total = c if i == 0 else total * c
    return total
''', "no tokens is certain"),
    # -------------------------------------------------------------- expectation
    Mistake("expectation", "no_validation", '''
def expectation(values, probs):
    return float(np.dot(values, probs))
''', "should raise ValueError"),
    Mistake("expectation", "only_checks_the_sum", '''
def expectation(values, probs):
    if not np.isclose(np.sum(probs), 1.0):
        raise ValueError("probs must sum to 1")
    return float(np.dot(values, probs))
''', "negative probability"),
    Mistake("expectation", "unweighted_mean", '''
def expectation(values, probs):
    probs = np.asarray(probs)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError("not a distribution")
    return float(np.mean(values))
''', "plain average"),
    # ------------------------------------------------------------------ variance
    Mistake("variance", "second_moment_only", '''
def variance(values, probs):
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError("not a distribution")
    return float(np.sum(probs * values ** 2))
''', "average of the squared values"),
    Mistake("variance", "no_validation", '''
def variance(values, probs):
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    mean = np.sum(probs * values)
    return float(np.sum(probs * (values - mean) ** 2))
''', "should raise ValueError"),
    Mistake("variance", "unweighted_var", '''
def variance(values, probs):
    probs = np.asarray(probs, dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError("not a distribution")
    return float(np.var(values))
''', "unweighted variance"),
    Mistake("variance", "moments_reversed", '''
def variance(values, probs):
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError("not a distribution")
    return float(np.sum(probs * values) ** 2 - np.sum(probs * values ** 2))
''', "sign is flipped"),
    Mistake("variance", "cancels_at_large_values", '''
def variance(values, probs):
    values = np.asarray(values, dtype=float)
    return expectation(values ** 2, probs) - expectation(values, probs) ** 2
''', "loses every digit"),
    # ------------------------------------------- next_token_loss (a bug hunt: the bug, and two half-fixes)
    Mistake("next_token_loss", "the_bug_probabilities_in", '''
def next_token_loss(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return F.cross_entropy(probs.transpose(1, 2), targets)
''', "not charged less than that floor"),
    Mistake("next_token_loss", "half_fix_log_of_probabilities", '''
def next_token_loss(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return F.cross_entropy(torch.log(probs).transpose(1, 2), targets)
''', "infinite for a target far below"),
    Mistake("next_token_loss", "half_fix_nll_of_probabilities", '''
def next_token_loss(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return F.nll_loss(probs.transpose(1, 2), targets)
''', "The loss is negative"),
    Mistake("next_token_loss", "graph_cut_with_item", '''
def next_token_loss(logits, targets):
    B, T, V = logits.shape
    return torch.tensor(F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T)).item())
''', "not connected to the logits"),
    # ---------------------------------------------------------- bayes_posterior
    Mistake("bayes_posterior", "no_evidence_term", '''
def bayes_posterior(prior, p_flag_given_a, p_flag_given_not_a):
    return p_flag_given_a * prior
''', "flagged texts only"),
    Mistake("bayes_posterior", "likelihood_as_posterior", '''
def bayes_posterior(prior, p_flag_given_a, p_flag_given_not_a):
    return p_flag_given_a
''', "the filter's hit rate"),
    Mistake("bayes_posterior", "prior_for_both", '''
def bayes_posterior(prior, p_flag_given_a, p_flag_given_not_a):
    joint = p_flag_given_a * prior
    return joint / (joint + p_flag_given_not_a * prior)
''', "as if they were as rare"),
    Mistake("bayes_posterior", "unweighted_evidence", '''
def bayes_posterior(prior, p_flag_given_a, p_flag_given_not_a):
    return p_flag_given_a * prior / (p_flag_given_a + p_flag_given_not_a)
''', "its own kind's share"),
    # -------------------------------------------------------------- greedy_token
    Mistake("greedy_token", "returns_max_value", '''
def greedy_token(logits):
    return float(np.max(logits))
''', "largest logit itself"),
    Mistake("greedy_token", "argmin", '''
def greedy_token(logits):
    return int(np.argmin(logits))
''', "smallest logit"),
    Mistake("greedy_token", "last_of_ties", '''
def greedy_token(logits):
    logits = np.asarray(logits)
    return int(len(logits) - 1 - np.argmax(logits[::-1]))
''', "a tie goes to the first position"),
    Mistake("greedy_token", "one_based", '''
def greedy_token(logits):
    return int(np.argmax(logits)) + 1
'''),
    Mistake("greedy_token", "argmax_names_the_nan", '''
def greedy_token(logits):
    return int(np.argmax(logits))
''', "must stop decoding with a ValueError"),
    Mistake("greedy_token", "nanargmax_decodes_on", '''
def greedy_token(logits):
    return int(np.nanargmax(logits))
''', "should raise ValueError"),
    # -------------------------------------------------------------- sample_token
    Mistake("sample_token", "always_greedy", '''
def sample_token(logits, rng, temperature=1.0):
    return int(np.argmax(logits))
''', "greedy decoding"),
    Mistake("sample_token", "ignores_temperature", '''
def sample_token(logits, rng, temperature=1.0):
    p = softmax(logits)
    return int(rng.choice(len(p), p=p))
''', "temperature was ignored"),
    Mistake("sample_token", "multiplies_temperature", '''
def sample_token(logits, rng, temperature=1.0):
    p = softmax(np.asarray(logits) * temperature)
    return int(rng.choice(len(p), p=p))
''', "wrong way round"),
    Mistake("sample_token", "global_random_state", '''
def sample_token(logits, rng, temperature=1.0):
    p = softmax(np.asarray(logits) / temperature)
    return int(np.random.choice(len(p), p=p))
''', "draw from the rng argument"),
    Mistake("sample_token", "uniform_over_vocabulary", '''
def sample_token(logits, rng, temperature=1.0):
    return int(rng.integers(len(logits)))
''', "do not follow the softmax"),
    Mistake("sample_token", "returns_an_array", '''
def sample_token(logits, rng, temperature=1.0):
    p = softmax(np.asarray(logits) / temperature)
    return rng.choice(len(p), size=1, p=p)
''', "return one token id"),
    # -------------------------------------------------- predict_shift_and_scale
    returns("predict_shift_and_scale", "doubling_changes_nothing", "0.665, 0.665",
            "doubling the logits doubles every difference"),
    returns("predict_shift_and_scale", "adding_sharpens", "0.867, 0.867",
            "adding the same number to every logit changes nothing"),
    returns("predict_shift_and_scale", "logits_as_weights", "5 / 12, 4 / 6", "exponentiates before it normalises"),
    returns("predict_shift_and_scale", "doubling_halves", "0.665, 0.33", "doubles every difference"),
    returns("predict_shift_and_scale", "one_number", "0.665", "tuple of 2 numbers"),
    # ----------------------------------------------------- predict_better_model
    returns("predict_better_model", "lower_perplexity_wins", '"B"', "perplexity is per token"),
    returns("predict_better_model", "same", '"same"', "the totals differ"),
    returns("predict_better_model", "not_a_choice", '"model A"', "answer with one of"),
    # --------------------------------------------------- predict_score_variance
    returns("predict_score_variance", "variance_of_one_product", "1", "variances of independent terms add"),
    returns("predict_score_variance", "standard_deviation", "8.0", "standard deviation"),
    returns("predict_score_variance", "mean_zero_so_zero", "0.0", "scores spread"),
    returns("predict_score_variance", "d_squared", "64 ** 2", "not 64^2"),
    # ------------------------------------------- the predictions before the demonstrations (issue 53)
    returns("predict_top_weight", "uniform", "0.125", "weighed alike"),
    returns("predict_top_weight", "the_scaled_one", "0.3", "divided by sqrt(256)"),
    returns("predict_top_weight", "not_a_number", '"almost all"', "answer with a number"),
    returns("predict_greedy_words", "every_word", "6", "never takes a second choice"),
    returns("predict_greedy_words", "takes_mat_too", "5", "never goes to 'mat'"),
    returns("predict_greedy_words", "no_repeats", "13", "loop of four words"),
    returns("predict_mat_share", "as_greedy", "0", "what greedy gives"),
    returns("predict_mat_share", "close_second_is_half", "0.5", "half a logit"),
    returns("predict_mat_share", "logits_as_weights", "1.5 / 3.5", "logits themselves"),
    returns("predict_mat_share", "ratio_to_the_top", "0.61", "not its share"),
    returns("predict_mat_share", "uniform", "1 / 6", "six words drawn alike"),
    returns("predict_mat_share", "not_a_number", '"about a third"', "answer with a number"),
    returns("predict_colder_loss", "only_the_top", '"cat"', "Not only 'cat'"),
    returns("predict_colder_loss", "all_fall", '"all"', "still sum to 1"),
    returns("predict_colder_loss", "none_fall", '"none"', "both losses fall"),
    returns("predict_colder_loss", "backwards", '"dog and sun"', "'sun' is the one that loses"),
    returns("predict_colder_loss", "not_a_choice", '"cat only"', "answer with one of"),
    returns("predict_lab_limits", "the_losses_at_one", "(1.408, 2.408)", "losses at temperature 1"),
    returns("predict_lab_limits", "the_gaps_unscaled", "(1.0, 2.0)", "the gaps below 'cat' at temperature 1"),
    returns("predict_lab_limits", "multiplies_by_tau", "(0.1, 0.2)", "divides the logits"),
    returns("predict_lab_limits", "same_for_both", "(10.0, 10.0)", "twice as far"),
    returns("predict_lab_limits", "cooling_flattens", "(1.099, 1.099)", "sharpens the bars"),
    returns("predict_lab_limits", "bits_not_nats", "(14.427, 28.854)", "in bits"),
    returns("predict_lab_limits", "one_number", "1.099", "tuple of 2 numbers"),
    returns("predict_naive_sum", "equal_logits_share", '"[0.5, 0.5]"', "Written as is"),
    returns("predict_naive_sum", "inf_over_inf", '"[nan, nan]"', "no numerator overflows"),
    returns("predict_naive_sum", "numerators_overflow", '"[inf, inf]"', "The numerators stay finite"),
    returns("predict_naive_sum", "not_a_choice", '"0"', "answer with one of"),
    returns("predict_hot_loss", "the_flat_bar", "1 / 3", "a probability"),
    returns("predict_hot_loss", "cold_not_hot", "0.0", "LOW temperature"),
    returns("predict_hot_loss", "without_the_minus", "-1.099", "never negative"),
    returns("predict_hot_loss", "bits_not_nats", "1.585", "in bits"),
    returns("predict_hot_loss", "the_losses_at_one", "1.408", "keep moving"),
    returns("predict_hot_loss", "not_a_number", '"ln 3"', "answer with a number"),
    # -------------------------------------------------- score_variance_by_width
    Mistake("score_variance_by_width", "standard_deviation", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.std(np.sum(q * k, axis=-1)))
    return np.array(out)
''', "square root of the width"),
    Mistake("score_variance_by_width", "one_product_per_pair", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.var(q * k))  # the variance of the products, never summed into scores
    return np.array(out)
''', "does not see the width"),
    Mistake("score_variance_by_width", "scaled_scores", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.var(np.sum(q * k, axis=-1) / np.sqrt(d)))
    return np.array(out)
''', "does not see the width"),
    Mistake("score_variance_by_width", "mean_not_spread", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.mean(np.sum(q * k, axis=-1)))
    return np.array(out)
''', "close to 0"),
    Mistake("score_variance_by_width", "q_with_itself", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q = rng.normal(size=(n_pairs, d))
        out.append(np.var(np.sum(q * q, axis=-1)))
    return np.array(out)
''', "twice what independent"),
    Mistake("score_variance_by_width", "product_of_sums", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.var(q.sum(axis=-1) * k.sum(axis=-1)))
    return np.array(out)
''', "square of the width"),
    Mistake("score_variance_by_width", "uniform_not_normal", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = rng.random(size=(n_pairs, d)), rng.random(size=(n_pairs, d))
        out.append(np.var(np.sum(q * k, axis=-1)))
    return np.array(out)
''', "sampling noise"),
    Mistake("score_variance_by_width", "global_random_state", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in widths:
        q, k = np.random.normal(size=(n_pairs, d)), np.random.normal(size=(n_pairs, d))
        out.append(np.var(np.sum(q * k, axis=-1)))
    return np.array(out)
''', "identically seeded"),
    Mistake("score_variance_by_width", "writes_down_the_law", '''
def score_variance_by_width(widths, n_pairs, rng):
    return np.array(widths, dtype=float)
''', "two different seeds"),
    Mistake("score_variance_by_width", "sorted_widths", '''
def score_variance_by_width(widths, n_pairs, rng):
    out = []
    for d in sorted(widths):
        q, k = rng.normal(size=(n_pairs, d)), rng.normal(size=(n_pairs, d))
        out.append(np.var(np.sum(q * k, axis=-1)))
    return np.array(out)
''', "at width"),
    Mistake("score_variance_by_width", "one_number", '''
def score_variance_by_width(widths, n_pairs, rng):
    q, k = rng.normal(size=(n_pairs, widths[-1])), rng.normal(size=(n_pairs, widths[-1]))
    return float(np.var(np.sum(q * k, axis=-1)))
''', "one variance per width"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("softmax", "eps_in_denominator", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / (e.sum(axis=axis, keepdims=True) + 1e-3)
''', "wrong values"),
    Mistake("softmax", "float32", '''
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''', "wrong values"),
    Mistake("entropy", "eps_in_log", '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    return float(-np.sum(p * np.log(p + 1e-4)))
''', "expected 0.693147"),
    Mistake("kl_divergence", "eps_in_ratio", '''
def kl_divergence(q, p):
    q, p = np.asarray(q, dtype=float), np.asarray(p, dtype=float)
    keep = q > 0
    return float(np.sum(q[keep] * np.log(q[keep] / (p[keep] + 1e-4))))
''', "expected 0"),
    Mistake("perplexity", "e_typed_as_2_718", '''
def perplexity(mean_nll):
    return float(2.718 ** mean_nll)
''', "expected 4"),
]

ALTERNATIVES = {
    "softmax": '''
def softmax(z, axis=-1):
    z = np.moveaxis(np.asarray(z, dtype=float), axis, -1)
    lse = z.max(-1, keepdims=True) + np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True))
    return np.moveaxis(np.exp(z - lse), -1, axis)
''',
    "softmax_temperature": '''
def softmax_temperature(z, tau):
    if not tau > 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    p = softmax(z) ** (1.0 / tau)  # the same distribution, renormalized
    return p / p.sum(axis=-1, keepdims=True)
''',
    "cross_entropy": '''
def cross_entropy(logits, targets):
    import torch
    import torch.nn.functional as F
    return F.cross_entropy(torch.tensor(logits), torch.tensor(targets)).item()
''',
    "perplexity": '''
import math
def perplexity(mean_nll):
    if not mean_nll >= 0:
        raise ValueError("a negative mean NLL: the loss upstream is broken")
    return math.e ** mean_nll
''',
    "entropy": '''
def entropy(p):
    p = np.asarray(p, dtype=float)
    safe = np.where(p > 0, p, 1.0)
    return float(-(p * np.log(safe)).sum())
''',
    "kl_divergence": '''
def kl_divergence(q, p):
    total = 0.0
    for qi, pi in zip(q, p):
        if qi > 0:
            total += qi * (np.log(qi) - np.log(pi))
    return total
''',
    "sequence_probability": '''
import math
def sequence_probability(cond_probs):
    return math.exp(sum(math.log(c) for c in cond_probs)) if len(cond_probs) else 1.0
''',
    "expectation": '''
def expectation(values, probs):
    probs = np.asarray(probs, dtype=float)
    if (probs < 0).any():
        raise ValueError("negative probability")
    if abs(probs.sum() - 1) > 1e-9:
        raise ValueError(f"probabilities sum to {probs.sum()}")
    return float(probs @ np.asarray(values, dtype=float))
''',
    "variance": '''
def variance(values, probs):
    values = np.asarray(values, dtype=float)
    shifted = values - values[0]  # moving every value changes no spread, and keeps E[X^2] small
    return expectation(shifted ** 2, probs) - expectation(shifted, probs) ** 2
''',
    "next_token_loss": '''
def next_token_loss(logits, targets):
    import torch
    log_p = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    return -log_p.gather(-1, targets.unsqueeze(-1)).mean()
''',
    "bayes_posterior": '''
def bayes_posterior(prior, p_flag_given_a, p_flag_given_not_a):
    odds = prior / (1 - prior) * p_flag_given_a / p_flag_given_not_a
    return odds / (1 + odds)
''',
    "greedy_token": '''
def greedy_token(logits):
    best = 0
    for i, z in enumerate(logits):
        if z != z:  # NaN is the one number unequal to itself
            raise ValueError(f"logit {i} is NaN")
        if z > logits[best]:
            best = i
    return best
''',
    "sample_token": '''
def sample_token(logits, rng, temperature=1.0):
    p = softmax_temperature(logits, temperature)
    return int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
''',
    "predict_shift_and_scale": '''
import math
def predict_shift_and_scale():
    a = math.exp(5) / (math.exp(5) + math.exp(4) + math.exp(3))
    b = 1 / (1 + math.exp(-2) + math.exp(-4))
    return (round(a, 3), round(b, 3))
''',
    "predict_better_model": '''
def predict_better_model():
    import math
    return "A" if 300 * math.log(20) < 1500 * math.log(2) else "B"
''',
    "score_variance_by_width": '''
def score_variance_by_width(widths, n_pairs, rng):
    import torch  # a differently written measurement: unbiased variance, einsum, a generator's own draws
    result = []
    for d in widths:
        pairs = rng.standard_normal((2, n_pairs, d))
        scores = np.einsum("nd,nd->n", pairs[0], pairs[1])
        result.append(torch.tensor(scores).var().item())
    return result
''',
    "predict_score_variance": '''
def predict_score_variance():
    d = 64
    return d * 1 * 1
''',
    "predict_top_weight": '''
def predict_top_weight():
    return 0.97  # within 0.1 of the revealed weight
''',
    "predict_greedy_words": '''
def predict_greedy_words():
    return len({"the", "cat", "sat", "on"})
''',
    "predict_mat_share": '''
import math
def predict_mat_share():
    row = [-2, 2, -2, -2, 1.5, -2]
    return math.exp(row[4]) / sum(math.exp(v) for v in row), "the draws follow the softmax"
''',
    "predict_colder_loss": '''
def predict_colder_loss():
    return " and ".join(["cat", "dog"])
''',
    "predict_naive_sum": '''
def predict_naive_sum():
    return "[" + ", ".join(["0"] * 2) + "]", "the two exponentials fit, their sum is inf, and finite / inf = 0"
''',
    "predict_hot_loss": '''
import math
def predict_hot_loss():
    return -math.log(1 / len(["cat", "dog", "sun"])), "flat bars: each target pays -ln(1/3)"
''',
    "predict_lab_limits": '''
import math
def predict_lab_limits():
    rest = math.log(1 + math.exp(-10) + math.exp(-20))  # cat's term e^20 over the target's, then the others
    return (1 / 0.1 + rest, 2 / 0.1 + rest), "a lower token pays its gap below cat over tau"
''',
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here
globals().update(stub_test(A))  # next_token_loss is a bug hunt: its released cell is the bug, proven rejected


def _first_message(exercise, source):
    """What the visible check says first about ``source``: the line a learner reads."""
    local = run_exercise(A, exercise, source)[0].local
    assert local is not None, f"{exercise} passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_the_bug_hunt_shows_progress_with_symptoms_not_the_fix():
    """next_token_loss hunts: the code as released and each half-fix (log of the probabilities, nll_loss of the
    probabilities) get different first messages, each naming what the loss measured (a floor far above 0, an
    infinite loss, a negative loss), none saying what to write; the fix passes."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "next_token_loss"}
    said = {"released": _first_message("next_token_loss", stub_of(A, "next_token_loss")),
            **{label: _first_message("next_token_loss", mistakes[label])
               for label in ("half_fix_log_of_probabilities", "half_fix_nll_of_probabilities")}}
    assert len(set(said.values())) == len(said), said
    assert "0.551" in said["released"] and "not charged less than that floor" in said["released"], said
    assert "infinite" in said["half_fix_log_of_probabilities"], said
    assert "negative" in said["half_fix_nll_of_probabilities"], said
    for message in said.values():
        for fix in ("pass the logits", "softmax of a softmax", "log_softmax", "takes logits", "remove the softmax",
                    "F.cross_entropy(logits", "on the logits"):
            assert fix.lower() not in message.lower(), (fix, message)
    assert_accepted(A, "next_token_loss")


HEADER = r"^> \*\*Difficulty\*\* [🔴⚪]{5} · \*\*Importance\*\* [🔵⚪]{5} · about \d+ minutes?$"


def _texts():
    from autograder import paths
    from autograder.nbio import read_notebook
    from tests.test_exercise_texts import exercise_texts

    return {e.name: e.markdown for e in exercise_texts(read_notebook(paths.solutions_dir() / f"{A}.ipynb"), A)}


def test_every_exercise_has_a_header_and_a_hint_ladder():
    """Round 6: one ARENA header line above each exercise's task, and a ladder whose first rung asks a question
    and whose second is a smaller case or a check (a last hint, where there is one, is labelled as such); a
    prediction may have the question alone."""
    import re

    texts = _texts()
    assert len(texts) == 24, sorted(texts)
    for name, text in texts.items():
        assert len(re.findall(HEADER, text, re.M)) == 1, (name, re.findall(r"^> .*$", text, re.M))
        summaries = re.findall(r"<summary>(.*?)</summary>", text)
        hints = [s for s in summaries if s.startswith(("Hint", "Last hint"))]
        if name.startswith("predict_") and hints == ["Hint 1: a question"]:
            continue  # a prediction may stop at its question: a second hint would compute its answer
        assert hints[:2] == ["Hint 1: a question", hints[1]] and hints[1].startswith(
            ("Hint 2: a smaller case", "Hint 2: a check")), (name, hints)
        assert all(h == "Last hint: the answer's shape" for h in hints[2:]), (name, hints)


def test_no_formula_stands_above_the_exercises_that_derive_it():
    """The formulas the learner derives (issue 53) come after the check, not above the stub: the chain rule's
    product, the weighted average, the temperature's division, the stable shift, entropy's and KL's sums; and
    the bug hunt's text does not name its bug."""
    texts = _texts()
    forbidden = {
        "sequence_probability": ["P(x_1)\\, P(x_2 \\mid x_1)", "np.prod"],
        "expectation": ["\\sum_i p_i x_i", "np.sum(probs"],
        "variance": ["\\mathbb{E}[X^2] - \\mathbb{E}[X]^2", "(X - \\mathbb{E}[X])^2"],
        "softmax": ["big - big.max()", "subtract the **maximum**", "z.max(axis"],
        "softmax_temperature": ["z / \\tau", "z / tau", "temperature of $1/2$"],
        "greedy_token": ["argmax"],
        "entropy": ["\\ln q_i", "\\ln p_i$", "p_i \\ln p_i"],
        "kl_divergence": ["\\ln (q_i / p_i)", "H(q, p) - H(q)", "q log(q / p)"],
        "next_token_loss": ["classic bug", "Feeding it probabilities", "takes **logits**", "log-softmax itself",
                            "bug you just"],
    }
    for name, phrases in forbidden.items():
        for phrase in phrases:
            if name == "entropy" and phrase == "p_i \\ln p_i":
                continue  # the last hint may show the operation
            visible = texts[name].split("<summary>Last hint")[0]
            assert phrase not in visible, (name, phrase)
