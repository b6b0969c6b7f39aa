"""Do notebook 05's recurrence checks (rnn_forward, gradient_by_distance, predict_gradient_fates, gated_forward and its
two questions) reject the mistakes
students make, each with a message naming its symptom, and accept other correct code?

The known-wrong implementations and the differently written correct ones are data here (MISTAKES, ALTERNATIVES);
test_nb05.py runs them through the standard suite in the notebook (tests/harness.py), with the rest of its
exercises; the tests below add what that suite does not ask, through the same harness.
"""
import numpy as np
import pytest

from autograder.checks import nb05
from tests.harness import Mistake, answer, assert_accepted, assert_rejected, defined, returns

pytestmark = pytest.mark.nb05
A = "05_gradients_and_chain_rule"

torch = pytest.importorskip("torch")

MISTAKES = [
    # ----------------------------------------------------------------------------- rnn_forward
    Mistake("rnn_forward", "no_tanh", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h, states = h0, []
    for t in range(x.shape[-2]):
        h = h @ W_h.T + x[..., t, :] @ W_x.T + b
        states.append(h)
    return torch.stack(states, dim=-2)
''', "leave [-1, 1]"),
    Mistake("rnn_forward", "h0_ignored", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h, states = torch.zeros_like(h0), []
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h.T + x[..., t, :] @ W_x.T + b)
        states.append(h)
    return torch.stack(states, dim=-2)
''', "do not change when h0 changes"),
    Mistake("rnn_forward", "W_h_transposed", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h, states = h0, []
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h + x[..., t, :] @ W_x.T + b)
        states.append(h)
    return torch.stack(states, dim=-2)
''', "symmetric"),
    Mistake("rnn_forward", "state_not_carried", '''
def rnn_forward(x, W_h, W_x, b, h0):
    states = []
    for t in range(x.shape[-2]):
        h = torch.tanh(h0 @ W_h.T + x[..., t, :] @ W_x.T + b)
        states.append(h)
    return torch.stack(states, dim=-2)
''', "starts again from h0"),
    Mistake("rnn_forward", "includes_h0", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h = h0.expand(*x.shape[:-2], h0.shape[-1])
    states = [h]
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h.T + x[..., t, :] @ W_x.T + b)
        states.append(h)
    return torch.stack(states, dim=-2)
''', "T + 1 states"),
    Mistake("rnn_forward", "last_only", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h = h0
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h.T + x[..., t, :] @ W_x.T + b)
    return h
''', "only the last state"),
    Mistake("rnn_forward", "bias_outside", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h, states = h0, []
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h.T + x[..., t, :] @ W_x.T) + b
        states.append(h)
    return torch.stack(states, dim=-2)
''', "off by b"),
    Mistake("rnn_forward", "numpy_inside", '''
def rnn_forward(x, W_h, W_x, b, h0):
    x, W_h, W_x, b, h = (t.detach().numpy() for t in (x, W_h, W_x, b, h0))
    states = []
    for t in range(x.shape[-2]):
        h = np.tanh(h @ W_h.T + x[..., t, :] @ W_x.T + b)
        states.append(h)
    return np.stack(states, axis=-2)
''', "not a torch tensor"),
    Mistake("rnn_forward", "detached_states", '''
def rnn_forward(x, W_h, W_x, b, h0):
    h, states = h0, []
    for t in range(x.shape[-2]):
        h = torch.tanh(h @ W_h.T + x[..., t, :] @ W_x.T + b)
        states.append(h.detach())
    return torch.stack(states, dim=-2)
''', "does not record a gradient"),
    # ------------------------------------------------------------------- predict_saturated_slope
    returns("predict_saturated_slope", "the_scaled_case", '"above 1e-2", "softmax slopes are about 0.1"',
            "that is the scaled case"),
    returns("predict_saturated_slope", "small_but_not_that_small", '"between 1e-6 and 1e-2", "saturated"',
            "smaller still in this draw"),
    returns("predict_saturated_slope", "a_number", '1e-11, "e^-24"', "answer with one of"),
    # -------------------------------------------------------------------- predict_residual_depth
    returns("predict_residual_depth", "one_point_one_to_the_fifty", '"explodes", "1.1^50 = 117"', "1.1^50 = 117"),
    returns("predict_residual_depth", "like_the_0_9_stack", '"vanishes", "50 layers"', "identity path"),
    returns("predict_residual_depth", "a_number", '0.6, "order 1"', "answer with one of"),
    # -------------------------------------------------------------------- predict_gradient_fates
    returns("predict_gradient_fates", "the_linear_picture", '("vanishes", "holds", "explodes"), "1.5^30 is huge"',
            "multiplication alone"),
    returns("predict_gradient_fates", "not_three_words", '("small", "same", "big"), "guess"',
            "three words"),
    returns("predict_gradient_fates", "a_number", '1e-9, "0.5^30"', "three words"),
    # ----------------------------------------------------------------------- gradient_by_distance
    Mistake("gradient_by_distance", "not_flipped", '''
def gradient_by_distance(layer, x, direction):
    x = x.detach().clone().requires_grad_(True)
    (layer(x)[-1] @ direction).backward()
    return x.grad.norm(dim=1).numpy()
''', "grow with distance"),
    Mistake("gradient_by_distance", "every_output", '''
def gradient_by_distance(layer, x, direction):
    x = x.detach().clone().requires_grad_(True)
    (layer(x) @ direction).sum().backward()
    return x.grad.norm(dim=1).flip(0).numpy()
''', "sum of all the outputs"),
    Mistake("gradient_by_distance", "squared_norm", '''
def gradient_by_distance(layer, x, direction):
    x = x.detach().clone().requires_grad_(True)
    (layer(x)[-1] @ direction).backward()
    return (x.grad ** 2).sum(dim=1).flip(0).numpy()
''', "squares of the right ones"),
    Mistake("gradient_by_distance", "sum_not_norm", '''
def gradient_by_distance(layer, x, direction):
    x = x.detach().clone().requires_grad_(True)
    (layer(x)[-1] @ direction).backward()
    return x.grad.sum(dim=1).flip(0).numpy()
''', "not the sum of its entries"),
    Mistake("gradient_by_distance", "norm_of_the_outputs", '''
def gradient_by_distance(layer, x, direction):
    return layer(x).detach().norm(dim=1).flip(0).numpy()
''', "wrong values"),
    Mistake("gradient_by_distance", "first_output", '''
def gradient_by_distance(layer, x, direction):
    x = x.detach().clone().requires_grad_(True)
    (layer(x)[0] @ direction).backward()
    return x.grad.norm(dim=1).flip(0).numpy()
''', "wrong values"),
    # ----------------------------------------------------------------------------- gated_forward
    Mistake("gated_forward", "one_minus_f", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + (1 - f[..., t, :]) * g[..., t, :]
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "input gate i changes"),
    Mistake("gated_forward", "no_input_gate", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + g[..., t, :]
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "input gate i changes"),
    Mistake("gated_forward", "i_plus_g", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + i[..., t, :] + g[..., t, :]
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "where the candidate g is 0"),
    Mistake("gated_forward", "c0_ignored", '''
def gated_forward(f, i, g, c0):
    c, memories = torch.zeros_like(c0), []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + i[..., t, :] * g[..., t, :]
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "when c0 changes"),
    Mistake("gated_forward", "not_carried", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c0 + i[..., t, :] * g[..., t, :]
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "starts again from c0"),
    Mistake("gated_forward", "squashed", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = torch.tanh(f[..., t, :] * c + i[..., t, :] * g[..., t, :])
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "never leaves (-1, 1)"),
    Mistake("gated_forward", "forget_after_write", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * (c + i[..., t, :] * g[..., t, :])
        memories.append(c)
    return torch.stack(memories, dim=-2)
''', "too small by the share f"),
    Mistake("gated_forward", "last_only", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + i[..., t, :] * g[..., t, :]
        memories.append(c)
    return c
''', "only the last memory"),
    Mistake("gated_forward", "detached", '''
def gated_forward(f, i, g, c0):
    c, memories = c0, []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + i[..., t, :] * g[..., t, :]
        memories.append(c.detach())
    return torch.stack(memories, dim=-2)
''', "does not record a gradient"),
    Mistake("gated_forward", "numpy_inside", '''
def gated_forward(f, i, g, c0):
    f, i, g, c = (t.detach().numpy() for t in (f, i, g, c0))
    memories = []
    for t in range(f.shape[-2]):
        c = f[..., t, :] * c + i[..., t, :] * g[..., t, :]
        memories.append(c)
    return np.stack(memories, axis=-2)
''', "not a torch tensor"),
    # ---------------------------------------------------------------------- predict_gated_fates
    returns("predict_gated_fates", "every_bias_holds", '("holds", "holds", "holds"), "the memory is additive"',
            "sigmoid(0) = 0.5"),
    returns("predict_gated_fates", "only_four_holds", '("vanishes", "vanishes", "holds"), "0.88^30"',
            "twenty times a thousandth"),
    returns("predict_gated_fates", "four_grows", '("vanishes", "holds", "explodes"), "f near 1"',
            "nothing on it can make"),
    returns("predict_gated_fates", "two_words", '("vanishes", "holds"), "bias 0 and bias 4"', "three words"),
    # ---------------------------------------------------------------------- predict_residual_slope
    returns("predict_residual_slope", "branch_only", '0.0786, "the slope of 0.1 tanh"', "slope of its own"),
    returns("predict_residual_slope", "identity_only", '1.0, "the identity passes it"', "its slope adds"),
    returns("predict_residual_slope", "value_not_slope", '1.046, "1 + f(h)"', "branch's value"),
    returns("predict_residual_slope", "tanh_slope_one", '1.1, "1 + 0.1"', "only at 0"),
    returns("predict_residual_slope", "a_word", '"above 1", "identity"', "answer with a number"),
    # ---------------------------------------------------------------------- predict_residual_sum
    returns("predict_residual_sum", "sum_kept_so_length_kept", '"the same", "J^T g sums to 0"', "sum of their squares does not"),
    returns("predict_residual_sum", "takes", '"smaller", "softmax shrinks"', "cannot shorten g"),
    returns("predict_residual_sum", "a_number", '-0.5, "unchanged"', "answer with one of"),
    # ---------------------------------------------------------------------- predict_gated_steps
    returns("predict_gated_steps", "like_attention", '1, "the memory is additive"', "attention's answer"),
    returns("predict_gated_steps", "one_per_token", '40, "40 tokens"', "39 steps after it"),
    returns("predict_gated_steps", "a_word", '"many", "each waits"', "answer with one int"),
]

ALTERNATIVES = {
    "rnn_forward": '''
def rnn_forward(x, W_h, W_x, b, h0):
    """A preallocated result filled step by step; the input products for every step at once."""
    inputs = torch.einsum("...ti,hi->...th", x, W_x) + b  # (..., T, d_h)
    H = torch.empty(inputs.shape, dtype=inputs.dtype)
    h = h0
    for t in range(inputs.shape[-2]):
        h = torch.tanh(torch.einsum("...j,hj->...h", h, W_h) + inputs[..., t, :])
        H[..., t, :] = h
    return H
''',
    "predict_saturated_slope": answer("predict_saturated_slope", '"below 1e-6", "a gap of about 24 in the scores"'),
    "predict_residual_slope": answer("predict_residual_slope", 'float(1 + 0.1 / np.cosh(0.5) ** 2), "1 + f prime"'),
    "predict_residual_sum": answer("predict_residual_sum", '"lar" + "ger", "g.Jg is a variance under p"'),
    "predict_residual_depth": answer("predict_residual_depth", '"holds", "no direction is stretched every time"'),
    "predict_gradient_fates": answer("predict_gradient_fates",
                                     '["vanishes", "holds", "holds"], "tanh\'s slope is below 1 where it saturates"'),
    "gated_forward": '''
def gated_forward(f, i, g, c0):
    """Preallocated, filled in place; the write computed for every step at once."""
    writes = torch.mul(i, g)
    out = torch.empty_like(writes)
    memory = c0.expand(writes[..., 0, :].shape)
    for t in range(writes.shape[-2]):
        memory = torch.addcmul(writes[..., t, :], f[..., t, :], memory)
        out[..., t, :] = memory
    return out
''',
    "predict_gated_fates": answer("predict_gated_fates", '["vanishes", "holds", "holds"], "the forget gate alone"'),
    "predict_gated_steps": answer("predict_gated_steps", 'np.int64(39), "row 39 waits for rows 0 to 38"'),
    "gradient_by_distance": '''
def gradient_by_distance(layer, x, direction):
    x = x.clone().requires_grad_()
    out = layer(x)
    (grad,) = torch.autograd.grad((out[out.shape[0] - 1] * direction).sum(), x)
    sizes = [float(torch.linalg.vector_norm(row)) for row in grad]
    return np.array(sizes[::-1])
''',
}


# ------------------------------------------------- beyond the standard suite (test_nb05.py runs MISTAKES)

def _defined(exercise: str, source: str):
    return defined(A, exercise, source)


def test_every_rnn_hint_is_a_different_wrong_answer_and_none_is_the_right_one():
    """Each named variant of the NumPy model differs from the right states on the visible inputs (a hint that
    equals the right answer would never fire, or fire on right code)."""
    from autograder.checks.nb05.recurrence import rnn_np

    rng = np.random.default_rng(0)  # d_in = d_h, so that W_x's transpose fits too
    x, W_h, W_x, b, h0 = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), \
        rng.normal(size=3), rng.normal(size=3)
    right = rnn_np(x, W_h, W_x, b, h0)
    seen = []
    for variant in nb05.RNN_MESSAGES:
        wrong = rnn_np(x, W_h, W_x, b, h0, variant)
        assert wrong.shape != right.shape or not np.allclose(wrong, right), variant
        assert all(w.shape != wrong.shape or not np.allclose(w, wrong) for w in seen), variant
        seen.append(wrong)
    # and the right model is nn.RNN's
    from autograder.checks.nb05.recurrence import _torch_rnn
    np.testing.assert_allclose(_torch_rnn(x, W_h, W_x, b, h0).detach().numpy(), right, atol=1e-12)


def test_the_worked_example_in_the_label_is_what_comes_out():
    from autograder.checks.nb05.recurrence import rnn_np

    states = rnn_np([[1.0], [0.0], [0.0]], [[0.5]], [[1.0]], [0.0], [0.0])
    np.testing.assert_allclose(states.ravel(), [0.7616, 0.3634, 0.1797], atol=5e-5)


def test_the_prediction_earns_its_point_right_or_wrong_and_a_malformed_one_is_refused():
    """Right, wrong-but-well-formed and malformed answers, in the notebook, and the record's why."""
    assert_accepted(A, "predict_gradient_fates", ALTERNATIVES["predict_gradient_fates"])
    assert_accepted(A, "predict_gradient_fates", answer("predict_gradient_fates", '("vanishes", "holds", "explodes"), "1.5^30"'))
    assert_rejected(A, returns("predict_gradient_fates", "malformed", '("small", "same", "big"), "?"', "three words"))
    truth = ("vanishes", "holds", "holds")
    assert nb05.predict_gradient_fates.judged(truth, truth).right
    record = nb05.predict_gradient_fates.judged(("vanishes", "holds", "explodes"), truth)
    assert not record.right and "multiplication alone" in record.why


def test_the_cases_are_built_without_torch():
    """Rule 3 of the checks' toolkit: the grader builds the cases (and runs their hints) without torch."""
    import subprocess
    import sys

    code = ("import sys; from autograder.checks import nb05\n"
            "for name in ('rnn_forward', 'gradient_by_distance', 'predict_gradient_fates', 'gated_forward',"
            " 'predict_gated_fates', 'predict_gated_steps'):\n"
            "    for hidden in (False, True):\n"
            "        getattr(nb05, name).cases(hidden)\n"
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0, "building a recurrence case imported torch"


def test_the_measurement_on_the_notebooks_rnn_vanishes_holds_and_grows_as_the_prediction_says():
    """The notebook's experiment, in miniature: the reference measurement on the notebook's set-up gives the
    fates predict_gradient_fates' answer names (the seed is the notebook's; a change of set-up shows here)."""
    from autograder.checks.nb05.recurrence import _tanh_rnn_layer  # noqa: F401  (the layers the check builds)

    fn = _defined("gradient_by_distance", ALTERNATIVES["gradient_by_distance"])
    rnn = _defined("rnn_forward", ALTERNATIVES["rnn_forward"])
    gen = torch.Generator().manual_seed(0)
    d_h, d_in, T = 32, 4, 40
    Q = torch.linalg.qr(torch.randn(d_h, d_h, generator=gen, dtype=torch.float64))[0]
    W_x = torch.randn(d_h, d_in, generator=gen, dtype=torch.float64) / d_in ** 0.5
    x = 0.1 * torch.randn(T, d_in, generator=gen, dtype=torch.float64)
    u = torch.randn(d_h, generator=gen, dtype=torch.float64)
    u = u / u.norm()
    b, h0 = torch.zeros(d_h, dtype=torch.float64), torch.zeros(d_h, dtype=torch.float64)
    ratios = [fn(lambda s_x, s=s: rnn(s_x, s * Q, W_x, b, h0), x, u) for s in (0.5, 1.0, 1.5)]
    ratios = [g[30] / g[0] for g in ratios]
    assert ratios[0] < 1e-3 and 1e-3 < ratios[1] < 1 and 1 < ratios[2] < 1e3, ratios
