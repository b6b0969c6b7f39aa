"""Does every check of 05_gradients_and_chain_rule reject the mistakes students make, and accept other correct code?"""
import pytest

from autograder.checks import nb05
from autograder.checks.models import adamw
from tests.checks import test_nb05_recurrence as recurrence
from tests.checks.bug_hunts import stub_test
from tests.harness import Mistake, answer, exercise_suite, returns
from tests.variants import variant

pytestmark = pytest.mark.nb05
A = "05_gradients_and_chain_rule"

MISTAKES = [
    # --------------------------------------------------------- squared_loss_grad
    Mistake("squared_loss_grad", "missing_factor_two", '''
def squared_loss_grad(w, x, y):
    return (w * x - y) * x
''', "factor 2"),
    Mistake("squared_loss_grad", "missing_inner_derivative", '''
def squared_loss_grad(w, x, y):
    return 2 * (w * x - y)
''', "multiply by x"),
    Mistake("squared_loss_grad", "w_instead_of_x", '''
def squared_loss_grad(w, x, y):
    return 2 * (w * x - y) * w
''', "not w"),
    Mistake("squared_loss_grad", "outer_sign_flipped", '''
def squared_loss_grad(w, x, y):
    return 2 * (y - w * x) * x
''', "sign is flipped"),
    Mistake("squared_loss_grad", "returns_the_loss", '''
def squared_loss_grad(w, x, y):
    return (w * x - y) ** 2
''', "loss itself"),
    # ------------------------------------------------------------------ sgd_step
    Mistake("sgd_step", "adds_the_gradient", '''
def sgd_step(param, grad, lr):
    return param + lr * grad
''', "uphill"),
    Mistake("sgd_step", "returns_the_step", '''
def sgd_step(param, grad, lr):
    return -lr * grad
''', "size of the step itself"),
    Mistake("sgd_step", "ignores_the_learning_rate", '''
def sgd_step(param, grad, lr):
    return param - grad
''', "learning rate has no effect"),
    Mistake("sgd_step", "divides_by_the_learning_rate", '''
def sgd_step(param, grad, lr):
    return param - grad / lr
'''),
    # -------------------------------------------------------- numerical_gradient
    Mistake("numerical_gradient", "one_sided", '''
def numerical_gradient(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    grad = np.zeros_like(x)
    base = f(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        grad[i] = (f(x) - base) / eps
        x[i] = old
    return grad
''', "half a step to the right"),
    Mistake("numerical_gradient", "in_place_without_restoring", '''
def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += eps
        f_plus = f(x)
        x[i] -= 2 * eps
        f_minus = f(x)
        grad[i] = (f_plus - f_minus) / (2 * eps)
    return grad
''', "changed x"),
    Mistake("numerical_gradient", "forgets_the_two", '''
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / eps
    return grad
''', "twice the true slope"),
    Mistake("numerical_gradient", "only_one_dimensional", '''
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=float)
    grad = np.zeros(len(x))
    for i in range(len(x)):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = np.sum(f(x + step) - f(x - step)) / (2 * eps)
    return grad
''', "wrong shape"),
    # ----------------------------------------------------------- linear_backward
    Mistake("linear_backward", "grad_W_transposed", '''
def linear_backward(x, W, grad_out):
    return grad_out @ W.T, grad_out.T @ x
''', "W's shape (d_in, d_out)"),
    Mistake("linear_backward", "W_not_transposed", '''
def linear_backward(x, W, grad_out):
    return grad_out @ W, x.T @ grad_out
''', "travel the other way"),
    Mistake("linear_backward", "divides_by_N", '''
def linear_backward(x, W, grad_out):
    n = x.shape[0]
    return grad_out @ W.T / n, x.T @ grad_out / n
''', "do not divide by n"),
    Mistake("linear_backward", "swapped_return_order", '''
def linear_backward(x, W, grad_out):
    return x.T @ grad_out, grad_out @ W.T
''', "in that order"),
    # -------------------------------------------- softmax_cross_entropy_backward
    Mistake("softmax_cross_entropy_backward", "not_divided_by_N", '''
def softmax_cross_entropy_backward(logits, targets):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    p[np.arange(len(targets)), targets] -= 1
    return p
''', "times too large"),
    Mistake("softmax_cross_entropy_backward", "no_one_hot", '''
def softmax_cross_entropy_backward(logits, targets):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) / len(targets)
''', "the target's entry must be negative"),
    Mistake("softmax_cross_entropy_backward", "one_hot_minus_p", '''
def softmax_cross_entropy_backward(logits, targets):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return (np.eye(logits.shape[1])[targets] - p) / len(targets)
''', "wrong sign everywhere"),
    Mistake("softmax_cross_entropy_backward", "unstable_softmax", '''
def softmax_cross_entropy_backward(logits, targets):
    e = np.exp(logits)
    p = e / e.sum(axis=-1, keepdims=True)
    p[np.arange(len(targets)), targets] -= 1
    return p / len(targets)
''', "stable softmax"),
    Mistake("softmax_cross_entropy_backward", "one_hot_in_the_wrong_rows", '''
def softmax_cross_entropy_backward(logits, targets):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    p[:, targets] -= 1
    return p / len(targets)
''', "each row's own target"),
    # ---------------------------------------------------------------- adamw_step
    # the reference solution with one named edit each (tests/variants.py)
    Mistake("adamw_step", "no_bias_correction", variant(
        A, "adamw_step", replace=("m_hat / (np.sqrt(v_hat) + eps)", "m / (np.sqrt(v) + eps)"),
        name="the update uses m and v, not m_hat and v_hat"), "bias correction is missing"),
    Mistake("adamw_step", "l2_in_the_gradient", variant(
        A, "adamw_step", replace=("param = param * (1 - lr * weight_decay)", "grad = grad + weight_decay * param"),
        name="weight decay added to the gradient (Adam with L2) instead of to the weights"), "adam with l2"),
    Mistake("adamw_step", "decay_without_the_learning_rate", variant(
        A, "adamw_step", replace=("(1 - lr * weight_decay)", "(1 - weight_decay)"),
        name="weight decay not scaled by lr"), "shrink about 1/lr times too fast"),
    # moves a line of the solution (two edits), so written out in full
    Mistake("adamw_step", "decays_after_the_update", '''
def adamw_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad ** 2
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    param = param - lr * m_hat / (np.sqrt(v_hat) + eps)
    return param * (1 - lr * weight_decay), m, v
''', "before the adam update"),
    Mistake("adamw_step", "eps_inside_the_root", variant(
        A, "adamw_step", replace=("(np.sqrt(v_hat) + eps)", "np.sqrt(v_hat + eps)"),
        name="eps added under the square root"), "smaller than pytorch's where the gradients are small"),
    Mistake("adamw_step", "returns_only_the_parameter", variant(
        A, "adamw_step", replace=("return param, m, v", "return param"),
        name="m and v not returned"), "must return a tuple (param, m, v)"),
    # ------------------------------------------------------- embedding_backward
    Mistake("embedding_backward", "fancy_index_assignment_loses_repeats", '''
def embedding_backward(ids, grad_out, vocab_size):
    grad_out = np.asarray(grad_out, dtype=float)
    G = np.zeros((vocab_size, grad_out.shape[-1]))
    G[np.asarray(ids).reshape(-1)] = grad_out.reshape(-1, grad_out.shape[-1])
    return G
''', "repeated ids must add up"),
    Mistake("embedding_backward", "buffered_plus_equals", '''
def embedding_backward(ids, grad_out, vocab_size):
    grad_out = np.asarray(grad_out, dtype=float)
    G = np.zeros((vocab_size, grad_out.shape[-1]))
    G[np.asarray(ids)] += grad_out
    return G
''', "repeated ids must add up"),
    Mistake("embedding_backward", "averages_repeated_rows", '''
def embedding_backward(ids, grad_out, vocab_size):
    ids = np.asarray(ids).reshape(-1)
    grad_out = np.asarray(grad_out, dtype=float).reshape(len(ids), -1)
    G = np.zeros((vocab_size, grad_out.shape[-1]))
    np.add.at(G, ids, grad_out)
    counts = np.bincount(ids, minlength=vocab_size)
    return G / np.maximum(counts, 1)[:, None]
''', "do not average"),
    Mistake("embedding_backward", "only_rows_up_to_the_largest_id", '''
def embedding_backward(ids, grad_out, vocab_size):
    ids = np.asarray(ids).reshape(-1)
    grad_out = np.asarray(grad_out, dtype=float).reshape(len(ids), -1)
    G = np.zeros((ids.max() + 1, grad_out.shape[-1]))
    np.add.at(G, ids, grad_out)
    return G
''', "one row per vocabulary entry"),
    Mistake("embedding_backward", "transposed_one_hot_product", '''
def embedding_backward(ids, grad_out, vocab_size):
    ids = np.asarray(ids).reshape(-1)
    X = np.eye(vocab_size)[ids]  # (N, V)
    return np.asarray(grad_out, dtype=float).reshape(len(ids), -1).T @ X
''', "table's shape"),
    Mistake("embedding_backward", "returns_grad_out", '''
def embedding_backward(ids, grad_out, vocab_size):
    return np.asarray(grad_out, dtype=float)
''', "grad_out itself"),
    Mistake("embedding_backward", "negative_ids_wrap_to_the_last_rows", '''
def embedding_backward(ids, grad_out, vocab_size):
    ids = np.asarray(ids)
    grad_out = np.asarray(grad_out, dtype=float)
    if grad_out.shape[:-1] != ids.shape:
        raise ValueError("grad_out must have one row per id")
    grad = np.zeros((vocab_size, grad_out.shape[-1]))
    np.add.at(grad, ids.reshape(-1), grad_out.reshape(-1, grad_out.shape[-1]))
    return grad
''', "id -1 is outside [0, 3)"),
    Mistake("embedding_backward", "grad_out_shape_not_checked", '''
def embedding_backward(ids, grad_out, vocab_size):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    grad_out = np.asarray(grad_out, dtype=float)
    grad = np.zeros((vocab_size, grad_out.shape[-1]))
    np.add.at(grad, ids.reshape(-1), grad_out.reshape(-1, grad_out.shape[-1]))
    return grad
''', "leading shape"),
    # ------------------------------------------------- predict_embedding_grad
    returns("predict_embedding_grad", "overwrites_repeats", "2, 1.0", "each use adds its gradient"),
    returns("predict_embedding_grad", "one_row_per_position", "3, 2.0", "only two distinct ids"),
    returns("predict_embedding_grad", "every_row_gets_gradient", "5, 2.0", "never looked up"),
    returns("predict_embedding_grad", "not_a_tuple", '"2 rows, 2.0"', "tuple of 2 numbers"),
    # --------------------------------------------------------- softmax_jacobian
    Mistake("softmax_jacobian", "outer_sign_flipped", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    return np.diag(p) + np.outer(p, p)
''', "off-diagonal entries are positive"),
    Mistake("softmax_jacobian", "missing_diagonal", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    return -np.outer(p, p)
''', "diagonal entries are negative"),
    Mistake("softmax_jacobian", "only_the_diagonal", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    return np.diag(p * (1 - p))
''', "off-diagonal entries are all 0"),
    Mistake("softmax_jacobian", "identity_instead_of_diag_p", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    return np.eye(len(p)) - np.outer(p, p)
''', "a probability of 0 cannot move"),
    Mistake("softmax_jacobian", "vector_not_matrix", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=float)
    return p * (1 - p)
''', "wrong shape"),
    # ------------------------------------------------ predict_jacobian_row_sum
    returns("predict_jacobian_row_sum", "probabilities_sum_to_one", "1.0", "their changes sum to 0"),
    returns("predict_jacobian_row_sum", "minus_one", "-1", "changes cancel"),
    returns("predict_jacobian_row_sum", "some_other_number", "0.25", "probabilities always sum to 1"),
    returns("predict_jacobian_row_sum", "a_word_not_a_number", '"zero"', "answer with a number"),
    # -------------------------------------------------------- bigram_train_step
    Mistake("bigram_train_step", "inputs_and_targets_swapped", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = embedding_lookup(W, y)
    loss = cross_entropy(logits, x)
    grad_W = embedding_backward(y, softmax_cross_entropy_backward(logits, x), W.shape[0])
    W, m, v = adamw_step(W, grad_W, m, v, t, lr=lr, weight_decay=weight_decay)
    return loss, W, m, v
''', "x and y are swapped"),
    Mistake("bigram_train_step", "loss_after_the_update", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = embedding_lookup(W, x)
    grad_W = embedding_backward(x, softmax_cross_entropy_backward(logits, y), W.shape[0])
    W, m, v = adamw_step(W, grad_W, m, v, t, lr=lr, weight_decay=weight_decay)
    return cross_entropy(embedding_lookup(W, x), y), W, m, v
''', "loss at w before the step"),
    Mistake("bigram_train_step", "fancy_index_assignment_in_the_backward", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = W[x]
    loss = cross_entropy(logits, y)
    grad_W = np.zeros_like(W)
    grad_W[x] = softmax_cross_entropy_backward(logits, y)
    W, m, v = adamw_step(W, grad_W, m, v, t, lr=lr, weight_decay=weight_decay)
    return loss, W, m, v
''', "rows of repeated ids must add up"),
    Mistake("bigram_train_step", "step_number_always_one", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = embedding_lookup(W, x)
    loss = cross_entropy(logits, y)
    grad_W = embedding_backward(x, softmax_cross_entropy_backward(logits, y), W.shape[0])
    W, m, v = adamw_step(W, grad_W, m, v, 1, lr=lr, weight_decay=weight_decay)
    return loss, W, m, v
''', "pass the step number t"),
    Mistake("bigram_train_step", "optimizer_defaults", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = embedding_lookup(W, x)
    loss = cross_entropy(logits, y)
    grad_W = embedding_backward(x, softmax_cross_entropy_backward(logits, y), W.shape[0])
    W, m, v = adamw_step(W, grad_W, m, v, t)
    return loss, W, m, v
''', "pass lr and weight_decay"),
    Mistake("bigram_train_step", "returns_three_values", '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    logits = embedding_lookup(W, x)
    grad_W = embedding_backward(x, softmax_cross_entropy_backward(logits, y), W.shape[0])
    return adamw_step(W, grad_W, m, v, t, lr=lr, weight_decay=weight_decay)
''', "must return a tuple (loss, w, m, v)"),
    # --------------------------------------------------- predict_overfit_floor
    returns("predict_overfit_floor", "thinks_memorising_reaches_zero", "0.0", "cannot reach 0"),
    Mistake("predict_overfit_floor", "averages_over_the_a_pairs_only", '''
import math
def predict_overfit_floor():
    return -(2 * math.log(2 / 3) + math.log(1 / 3)) / 3
''', "divide by 4"),
    Mistake("predict_overfit_floor", "in_bits", '''
import math
def predict_overfit_floor():
    return -(2 * math.log2(2 / 3) + math.log2(1 / 3)) / 4
''', "in bits"),
    Mistake("predict_overfit_floor", "b_row_uncertain", '''
import math
def predict_overfit_floor():
    return -(2 * math.log(2 / 3) + math.log(1 / 3) + 2 * math.log(0.5)) / 4
''', "costs nothing"),
    Mistake("predict_overfit_floor", "uniform_guess", '''
import math
def predict_overfit_floor():
    return math.log(34)
''', "batch's own frequencies"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("sgd_step", "lr_off_by_a_thousandth", '''
def sgd_step(param, grad, lr):
    return param - lr * (1 - 1e-3) * grad
''', "expected 1.4"),
    Mistake("softmax_jacobian", "float16", '''
def softmax_jacobian(p):
    p = np.asarray(p, dtype=np.float16)  # half precision where float64 is due
    return np.diag(p) - np.outer(p, p)
''', "wrong values"),
]

MISTAKES += [
    # ------------------------------------------- bigram_counts (a bug hunt: the bug, a half-fix, two misreadings)
    Mistake("bigram_counts", "the_bug_buffered_add", '''
def bigram_counts(x, y, vocab_size):
    counts = np.zeros((vocab_size, vocab_size))
    counts[x, y] += 1
    return counts
''', "fewer counts than there are pairs"),
    Mistake("bigram_counts", "half_fix_spelled_out", '''
def bigram_counts(x, y, vocab_size):
    counts = np.zeros((vocab_size, vocab_size))
    counts[x, y] = counts[x, y] + 1
    return counts
''', "fewer counts than there are pairs"),
    Mistake("bigram_counts", "transposed", '''
def bigram_counts(x, y, vocab_size):
    counts = np.zeros((vocab_size, vocab_size))
    np.add.at(counts, (y, x), 1)
    return counts
''', "transposed"),
    Mistake("bigram_counts", "seen_or_not", '''
def bigram_counts(x, y, vocab_size):
    counts = np.zeros((vocab_size, vocab_size))
    counts[x, y] = 1
    return counts
''', "fewer counts than there are pairs"),
]

ALTERNATIVES = {
    "bigram_counts": '''
def bigram_counts(x, y, vocab_size):
    flat = np.bincount(np.asarray(x) * vocab_size + np.asarray(y), minlength=vocab_size * vocab_size)
    return flat.reshape(vocab_size, vocab_size).astype(float)
''',
    "squared_loss_grad": '''
def squared_loss_grad(w, x, y):
    residual = w * x - y
    dL_dresidual = 2 * residual
    return dL_dresidual * x
''',
    "sgd_step": '''
def sgd_step(param, grad, lr):
    new = np.array(param, dtype=float, copy=True)
    new -= lr * np.asarray(grad)
    return new if np.ndim(param) else float(new)
''',
    "numerical_gradient": '''
def numerical_gradient(f, x, eps=1e-6):
    x = np.array(x, dtype=float)  # a private copy: no restoring needed
    flat = x.reshape(-1)  # a view of x: (x.size,)
    grad = np.empty(x.size)
    for i in range(x.size):
        flat[i] += eps
        up = f(x)
        flat[i] -= 2 * eps
        down = f(x)
        flat[i] += eps
        grad[i] = (up - down) / (2 * eps)
    return grad.reshape(x.shape)
''',
    "linear_backward": '''
def linear_backward(x, W, grad_out):
    grad_W = np.einsum("ni,nj->ij", x, grad_out)  # sum over rows of outer products
    grad_x = np.einsum("nj,ij->ni", grad_out, W)
    return grad_x, grad_W
''',
    "softmax_cross_entropy_backward": '''
def softmax_cross_entropy_backward(logits, targets):
    import torch
    import torch.nn.functional as F
    z = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(z, torch.as_tensor(targets)).backward()
    return z.grad.numpy()
''',
    "adamw_step": '''
def adamw_step(param, grad, m, v, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    b1, b2 = betas
    m = m + (1 - b1) * (grad - m)
    v = v + (1 - b2) * (grad * grad - v)
    step_size = lr / (1 - b1 ** t)
    denom = np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps
    param = param - lr * weight_decay * param
    return param - step_size * m / denom, m, v
''',
    "embedding_backward": '''
def embedding_backward(ids, grad_out, vocab_size):
    ids, grad_out = np.asarray(ids), np.asarray(grad_out, dtype=float)
    if np.shape(grad_out)[:-1] != ids.shape or np.any((ids < 0) | (ids >= vocab_size)):
        raise ValueError("ids must lie in [0, vocab_size), with one row of grad_out per id")
    X = np.eye(vocab_size)[ids.reshape(-1)]  # one-hot rows, (N, V)
    return X.T @ grad_out.reshape(len(X), -1)  # (V, N) @ (N, d)
''',
    "predict_embedding_grad": '''
def predict_embedding_grad():
    ids = [2, 0, 2]
    return len(set(ids)), float(ids.count(2))
''',
    "softmax_jacobian": '''
def softmax_jacobian(p):
    n = len(p)
    J = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            J[i, j] = p[i] * ((1.0 if i == j else 0.0) - p[j])
    return J
''',
    "predict_jacobian_row_sum": answer("predict_jacobian_row_sum", "0"),
    "bigram_train_step": '''
def bigram_train_step(W, x, y, m, v, t, lr=0.1, weight_decay=0.0):
    import torch
    import torch.nn.functional as F
    E = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    loss = F.cross_entropy(E[torch.as_tensor(x)], torch.as_tensor(y))
    loss.backward()
    W, m, v = adamw_step(W, E.grad.numpy(), m, v, t, lr=lr, weight_decay=weight_decay)
    return loss.item(), W, m, v
''',
    "predict_overfit_floor": '''
def predict_overfit_floor():
    p = {"an": 2 / 3, "at": 1 / 3, "be": 1.0}
    pairs = ["an", "an", "at", "be"]
    return float(-np.mean([np.log(p[pair]) for pair in pairs]))
''',
    "predict_lr_limit": answer("predict_lr_limit", '(0.25, "w = 1 and w = 2 are equally high")'),
    "predict_batch_spread": answer("predict_batch_spread", '(4, "sqrt of 16")'),
    "predict_validation_turn": answer("predict_validation_turn",
                                      '"lowest earlier, then rising", "unseen pairs keep being pushed to 0"'),
    "predict_generated_text": answer("predict_generated_text", '"real pairs, " + "not words", "one letter back"'),
    "predict_neural_vs_counting": answer("predict_neural_vs_counting", 'str("above"), "unseen pairs are pushed to 0, smoothing keeps some"'),
    "gradient_spread": '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    """Shuffle, keep the first B; the spread with n - 1 in the denominator; a list of floats."""
    per_pair = np.asarray(per_pair, dtype=float)
    out = []
    for B in batch_sizes:
        estimates = np.empty(n_draws)
        for i in range(n_draws):
            estimates[i] = per_pair[rng.permutation(per_pair.size)[:B]].sum() / B
        out.append(float(np.sqrt(np.sum((estimates - estimates.mean()) ** 2) / (n_draws - 1))))
    return out
''',
}

MISTAKES += [
    # ---------------------------------------------------- predict_lr_limit (recorded wrong, or malformed)
    returns("predict_lr_limit", "lands_on_the_minimum", '0.125, "one step to 1.5"', "lands exactly on the best weight"),
    returns("predict_lr_limit", "twice_the_limit", '0.5, "a step of 2"', "lands on w = 3"),
    returns("predict_lr_limit", "too_small", '0.05, "small is safe"', "still lowers the loss"),
    returns("predict_lr_limit", "not_a_number", '"a quarter", "symmetry"', "answer with a number"),
    # ---------------------------------------------- predict_validation_turn (recorded wrong, or malformed)
    returns("predict_validation_turn", "more_steps_always_help", '"still falling", "it keeps learning"',
            "validation is lowest before step 117"),
    returns("predict_validation_turn", "a_step_number", '117, "it turns there"', "answer with one of"),
    returns("predict_validation_turn", "no_reason_a_word", '"rising"', "answer with one of"),
    # ------------------------------------------------ predict_generated_text (recorded wrong, or malformed)
    returns("predict_generated_text", "thinks_it_spells", '"real words", "it learned the text"', "needs more than its last letter"),
    returns("predict_generated_text", "thinks_it_babbles", '"unseen pairs", "sampling is random"', "0.2 %"),
    returns("predict_generated_text", "not_a_choice", '"gibberish", "one letter of context"', "answer with one of"),
    # -------------------------------------------- predict_neural_vs_counting (recorded wrong, or malformed)
    returns("predict_neural_vs_counting", "learning_beats_counting", '"below", "AdamW keeps improving"',
            "cost more than the rest gain"),
    returns("predict_neural_vs_counting", "exactly_equal", '"the same to 4 decimals", "same model"', "pseudo-count of 0.1"),
    returns("predict_neural_vs_counting", "a_number", '0.002, "a hair above"', "answer with one of"),
    # ------------------------------------------------- predict_batch_spread (recorded wrong, or malformed)
    returns("predict_batch_spread", "like_the_variance", '16.0, "16 times the pairs"', "how much the variance shrinks"),
    returns("predict_batch_spread", "no_change", '1.0, "same data"', "partly cancel"),
    returns("predict_batch_spread", "grows", '0.25, "more pairs, more noise"', "steadier gradient"),
    returns("predict_batch_spread", "a_word", '"four", "sqrt"', "answer with a number"),
    # ----------------------------------------------------------------------------- gradient_spread
    Mistake("gradient_spread", "the_same_batch_every_draw", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    spreads = []
    for B in batch_sizes:
        batch = rng.choice(len(per_pair), size=B, replace=False)  # drawn once, outside the draws
        spreads.append(np.std([per_pair[batch].mean() for _ in range(n_draws)]))
    return np.array(spreads)
''', "every draw read the same batch"),
    Mistake("gradient_spread", "sums_instead_of_means", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    return np.array([np.std([per_pair[rng.choice(len(per_pair), size=B, replace=False)].sum()
                             for _ in range(n_draws)]) for B in batch_sizes])
''', "grows with the batch size"),
    Mistake("gradient_spread", "variance_not_std", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    return np.array([np.var([per_pair[rng.choice(len(per_pair), size=B, replace=False)].mean()
                             for _ in range(n_draws)]) for B in batch_sizes])
''', "squares of the right spreads"),
    Mistake("gradient_spread", "spread_within_one_batch", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    return np.array([np.std(per_pair[rng.choice(len(per_pair), size=B, replace=False)]) for B in batch_sizes])
''', "at batch size 1 the spread is 0"),
    Mistake("gradient_spread", "pairs_drawn_twice", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    return np.array([np.std([per_pair[rng.integers(0, len(per_pair), size=B)].mean()
                             for _ in range(n_draws)]) for B in batch_sizes])
''', "hold the same pair twice"),
    Mistake("gradient_spread", "mean_absolute_distance", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    spreads = []
    for B in batch_sizes:
        means = np.array([per_pair[rng.choice(len(per_pair), size=B, replace=False)].mean() for _ in range(n_draws)])
        spreads.append(np.abs(means - means.mean()).mean())
    return np.array(spreads)
''', "about 0.8 of the right one"),
    Mistake("gradient_spread", "one_number", '''
def gradient_spread(per_pair, batch_sizes, n_draws, rng):
    B = batch_sizes[-1]
    return float(np.std([per_pair[rng.choice(len(per_pair), size=B, replace=False)].mean() for _ in range(n_draws)]))
''', "one spread per batch size"),
]

MISTAKES += recurrence.MISTAKES  # rnn_forward, gradient_by_distance and their prediction: see that module
ALTERNATIVES.update(recurrence.ALTERNATIVES)

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here
globals().update(stub_test(A))  # bigram_counts is a bug hunt: its released cell is the bug, proven rejected


def test_known_wrong_variants_come_from_a_closed_set():
    """Is every named mistake a variant the NumPy models compute, and does a misspelled name raise?"""
    assert set(nb05.ADAMW_HINTS) <= set(adamw.ADAMW_VARIANTS)
    assert set(nb05.BIGRAM_HINTS) <= set(adamw.BIGRAM_VARIANTS)
    with pytest.raises(ValueError, match="adamw_numpy has no variant 'L2'; the choices are .*l2"):
        adamw.adamw_numpy([0.0], [[1.0]], 0.1, (0.9, 0.999), 1e-8, 0.01, "L2")


def test_the_bug_hunt_names_a_symptom_of_its_own_for_the_bug_and_each_half_fix():
    """The released bug and each half-fix get their own first message, none names the unbuffered addition, and the
    fix passes (the learner sees progress as the messages change)."""
    import numpy as np

    from autograder.checks import nb05

    def buffered(x, y, v):
        counts = np.zeros((v, v))
        counts[x, y] += 1
        return counts

    def transposed(x, y, v):
        counts = np.zeros((v, v))
        np.add.at(counts, (y, x), 1)
        return counts

    def bincount_unshaped(x, y, v):
        return np.bincount(np.asarray(x) * v + np.asarray(y)).astype(float)

    first_lines = {}
    for attempt in (buffered, transposed, bincount_unshaped):
        with pytest.raises(AssertionError) as failure:
            nb05.bigram_counts(attempt)
        first_lines[attempt.__name__] = str(failure.value).splitlines()[0]
        assert "add.at" not in str(failure.value) and "unbuffered" not in str(failure.value), attempt.__name__
    assert len(set(first_lines.values())) == 3, first_lines

    def fixed(x, y, v):
        counts = np.zeros((v, v))
        np.add.at(counts, (x, y), 1)
        return counts

    nb05.bigram_counts(fixed)


def test_embedding_backward_shows_the_lost_repeats_as_a_symptom_without_the_fix():
    """G[ids] += grad_out (buffered) and G[ids] = grad_out are caught by a message that names what came out (a repeated
    id's row too small, row 2 of the prediction's case must hold 2), never the unbuffered addition that fixes it; a
    one-hot product, written differently from the reference, passes."""
    import numpy as np

    from autograder.checks import nb05

    def buffered(ids, grad_out, vocab_size):
        grad_out = np.asarray(grad_out, dtype=float)
        G = np.zeros((vocab_size, grad_out.shape[-1]))
        G[np.asarray(ids)] += grad_out
        return G

    def assigned(ids, grad_out, vocab_size):
        grad_out = np.asarray(grad_out, dtype=float)
        G = np.zeros((vocab_size, grad_out.shape[-1]))
        G[np.asarray(ids)] = grad_out
        return G

    for attempt in (buffered, assigned):
        with pytest.raises(AssertionError) as failure:
            nb05.embedding_backward(attempt)
        message = str(failure.value)
        assert "come out too small" in message and "row 2 must hold 2" in message, message
        assert "add.at" not in message and "buffer" not in message and "one_hot" not in message, message

    def one_hot_product(ids, grad_out, vocab_size):
        ids = np.asarray(ids)
        if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"id outside [0, {vocab_size})")
        grad_out = np.asarray(grad_out, dtype=float)
        if grad_out.shape[:-1] != ids.shape:
            raise ValueError("grad_out's leading shape must be ids' shape")
        X = (ids.reshape(-1, 1) == np.arange(vocab_size)).astype(float)  # (N, V) one-hot
        return X.T @ grad_out.reshape(-1, grad_out.shape[-1])

    nb05.embedding_backward(one_hot_product)
