"""Notebook 05's checks of recurrence: rnn_forward (against ``torch.nn.RNN`` and its gradients), gradient_by_distance
(against autograd on layers whose answer is known), and the prediction between them, predict_gradient_fates.

Hints recompute the usual wrong answers in NumPy (rule 3 of :mod:`..toolkit`: building a case imports no torch).
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, fmt
from ..hints import known_mistakes, numbers
from ..questions import a_number, int_in, one_of, plain
from ..toolkit import import_torch
from .common import ask, check

# ------------------------------------------------------------------------------ rnn_forward

RNN_MESSAGES = {
    "no_tanh": "Your states grow without bound and can leave [-1, 1]: every state of a tanh RNN lies strictly "
               "between -1 and 1. Is the squashing applied at each step?",
    "h0_ignored": "Your states do not change when h0 changes: the first step must start from the state it is "
                  "given, not from zeros.",
    "W_h_transposed": "Your states match only while W_h is symmetric: the previous state goes through W_h the way "
                      "nn.Linear uses its weight (rows are outputs), and here it went through W_h's transpose.",
    "W_x_transposed": "The input goes through W_x's transpose: W_x has shape (d_h, d_in), rows are outputs.",
    "not_carried": "Each of your states depends only on its own token: the state is not carried from one step "
                   "to the next.",
    "h0_every_step": "Every step starts again from h0: the state each step reads must be the previous step's.",
    "bias_outside": "Your states are off by b: the bias belongs inside the squashing, with the two products.",
    "includes_h0": "You returned T + 1 states: the first row is h0 itself. Return one state per token, the state "
                   "after reading it.",
    "last_only": "You returned only the last state: the contract asks for every state, one per token.",
}


def rnn_np(x, W_h, W_x, b, h0, variant=None):
    """The tanh RNN in NumPy, or one of its known-wrong variants (``RNN_MESSAGES``' keys); row-vector form, so a
    leading batch axis of x and h0 is carried along."""
    x, W_h, W_x, b, h0 = (np.asarray(a, dtype=float) for a in (x, W_h, W_x, b, h0))
    if variant == "h0_ignored":
        h0 = np.zeros_like(h0)
    A = W_h if variant == "W_h_transposed" else W_h.T
    B = W_x if variant == "W_x_transposed" else W_x.T
    h, states = np.broadcast_to(h0, x.shape[:-2] + h0.shape[-1:]), []
    for t in range(x.shape[-2]):
        prev = {"not_carried": np.zeros_like(h), "h0_every_step": np.broadcast_to(h0, h.shape)}.get(variant, h)
        pre = prev @ A + x[..., t, :] @ B
        if variant == "no_tanh":
            h = pre + b
        elif variant == "bias_outside":
            h = np.tanh(pre) + b
        else:
            h = np.tanh(pre + b)
        states.append(h)
    H = np.stack(states, axis=-2)
    if variant == "includes_h0":
        return np.concatenate([np.broadcast_to(h0, H.shape[:-2] + (1,) + H.shape[-1:]), H], axis=-2)
    if variant == "last_only":
        return H[..., -1, :]
    return H


def _tensors(*arrays, grad=False):
    torch = import_torch()
    return [torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad) for a in arrays]


def _torch_rnn(x, W_h, W_x, b, h0):
    """``torch.nn.RNN`` (tanh, one layer, batch_first, no second bias) with these weights: the referee."""
    torch = import_torch()
    x = np.asarray(x, dtype=float)
    d_h, d_in = np.shape(W_x)
    rnn = torch.nn.RNN(d_in, d_h, nonlinearity="tanh", batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_hh_l0.copy_(torch.as_tensor(np.asarray(W_h, dtype=float)))
        rnn.weight_ih_l0.copy_(torch.as_tensor(np.asarray(W_x, dtype=float)))
        rnn.bias_ih_l0.copy_(torch.as_tensor(np.asarray(b, dtype=float)))
        rnn.bias_hh_l0.zero_()
    h0 = np.broadcast_to(np.asarray(h0, dtype=float), x.shape[:-2] + (d_h,))
    H, _ = rnn(torch.as_tensor(x), torch.as_tensor(np.ascontiguousarray(h0))[None])  # h0 as (layers, [B,] d_h)
    return H


def _as_tensor_result(H, name="rnn_forward"):
    torch = import_torch()
    if not isinstance(H, torch.Tensor):
        raise TypeError(f"{name} returned {type(H).__name__}, not a torch tensor: autograd can follow only torch "
                        "operations (a NumPy step cuts the gradient's path).")
    return H


def _rnn_case(label, x, W_h, W_x, b, h0):
    def call(fn):
        return _as_tensor_result(fn(*_tensors(x, W_h, W_x, b, h0))).detach()

    def want():
        return _torch_rnn(x, W_h, W_x, b, h0).detach()

    hint = known_mistakes(*((lambda v=v: rnn_np(x, W_h, W_x, b, h0, v), m) for v, m in RNN_MESSAGES.items()))
    return Case(label, call, want, close(atol=1e-9, rtol=1e-7, kind="tensor"), hints=[hint])


def _rnn_grad_case(label, x, W_h, W_x, b, h0, g):
    """The gradients autograd finds through the learner's unrolled loop, against nn.RNN's."""
    def grads(forward):
        torch = import_torch()
        leaves = _tensors(x, W_h, W_x, b, h0, grad=True)
        H = forward(*leaves)
        (H * torch.as_tensor(np.asarray(g, dtype=float))).sum().backward()
        return tuple(t.grad.detach().clone() if t.grad is not None else torch.zeros_like(t) for t in leaves)

    def call(fn):
        def checked(*args):
            H = _as_tensor_result(fn(*args))
            if not H.requires_grad:
                raise TypeError("rnn_forward's result does not record a gradient: something in it left autograd's "
                                "graph (.detach(), .item(), .numpy(), torch.tensor(...) of a value, or "
                                "torch.no_grad()).")
            return H
        return grads(checked)

    def want():
        torch = import_torch()

        def forward(x_, W_h_, W_x_, b_, h0_):  # the same loop nn.RNN runs, on leaves autograd can follow
            h, states = h0_, []
            for t in range(x_.shape[-2]):
                h = torch.tanh(h @ W_h_.T + x_[..., t, :] @ W_x_.T + b_)
                states.append(h)
            return torch.stack(states, dim=-2)
        # nn.RNN's own forward agrees with this loop (the value cases compare with it); its gradients are these
        return grads(forward)

    return Case(label + " (the gradients of sum(G * H) with respect to x, W_h, W_x, b and h0)", call, want,
                close(atol=1e-9, rtol=1e-7, kind="tensor"))


@check
def rnn_forward(hidden, rng):
    if not hidden:
        x1 = [[1.0], [0.0], [0.0]]  # (T, d_in) = (3, 1)
        W_h = np.array([[0.5, -1.0, 0.2], [0.3, 0.1, -0.4], [0.8, 0.0, 0.6]])  # (3, 3), not symmetric
        W_x = np.array([[1.0, 0.0], [-0.5, 2.0], [0.25, 1.0]])  # (d_h, d_in) = (3, 2)
        x = np.array([[0.5, -1.0], [1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]])  # (T, d_in) = (4, 2)
        b, h0 = np.array([0.1, 0.0, -0.2]), np.array([0.5, -0.5, 1.0])
        xb = np.stack([x, x[::-1] * 2.0])  # (B, T, d_in) = (2, 4, 2)
        return [
            _rnn_case("rnn_forward of one number per token, x = [1, 0, 0], W_h = [[0.5]], W_x = [[1]], b = [0], "
                      "h0 = [0] is [[0.7616], [0.3634], [0.1797]]", x1, [[0.5]], [[1.0]], [0.0], [0.0]),
            _rnn_case("rnn_forward(x (4, 2), W_h (3, 3), W_x (3, 2), b (3,), h0 (3,)), against torch.nn.RNN",
                      x, W_h, W_x, b, h0),
            _rnn_case("rnn_forward of a batch of 2 sequences, x (2, 4, 2), h0 (3,), against torch.nn.RNN",
                      xb, W_h, W_x, b, h0),
            _rnn_grad_case("rnn_forward(x (4, 2), ...) under autograd", x, W_h, W_x, b, h0,
                           np.arange(12.0).reshape(4, 3) / 10 - 0.5),
        ]
    T, d_in, d_h, B = 6, 3, 5, 3
    W_h, W_x = rng.normal(size=(d_h, d_h)) * 0.6, rng.normal(size=(d_h, d_in))
    return [
        _rnn_case("rnn_forward(x (6, 3), W_h (5, 5), W_x (5, 3), b (5,), h0 (5,))", rng.normal(size=(T, d_in)),
                  W_h, W_x, rng.normal(size=d_h), rng.normal(size=d_h) * 0.5),
        _rnn_case("rnn_forward of a batch: x (3, 6, 3), h0 (3, 5), one start per sequence",
                  rng.normal(size=(B, T, d_in)), W_h, W_x, rng.normal(size=d_h), rng.normal(size=(B, d_h)) * 0.5),
        _rnn_grad_case("rnn_forward of a batch x (3, 6, 3) under autograd", rng.normal(size=(B, T, d_in)), W_h, W_x,
                       rng.normal(size=d_h), rng.normal(size=(B, d_h)) * 0.5, rng.normal(size=(B, T, d_h))),
    ]


# ----------------------------------------------------------------------- gradient_by_distance
#
# The layers the check hands to the learner's measurement, each built from NumPy arrays when it runs (in the
# learner's kernel), and the NumPy answers of the usual wrong measurements for the ones whose answer is known.

def _leaky_layer(a, W):
    """out_t = sum_{i <= t} a^(t - i) W x_i: a linear recurrence, so the gradient at distance k is a^k W^T u."""
    def layer(x):
        torch = import_torch()
        Wt = torch.as_tensor(np.asarray(W, dtype=float))
        h, outs = torch.zeros(Wt.shape[0], dtype=x.dtype), []
        for t in range(x.shape[0]):
            h = a * h + Wt @ x[t]
            outs.append(h)
        return torch.stack(outs)
    return layer


def _tanh_rnn_layer(W_h, W_x):
    def layer(x):
        torch = import_torch()
        A, B = torch.as_tensor(np.asarray(W_h, dtype=float)), torch.as_tensor(np.asarray(W_x, dtype=float))
        h, outs = torch.zeros(A.shape[0], dtype=x.dtype), []
        for t in range(x.shape[0]):
            h = torch.tanh(A @ h + B @ x[t])
            outs.append(h)
        return torch.stack(outs)
    return layer


def _attention_layer(W_q, W_k, W_v):
    def layer(x):
        torch = import_torch()
        q, k, v = (x @ torch.as_tensor(np.asarray(W, dtype=float)).T for W in (W_q, W_k, W_v))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)  # notebook 09's exercise: not spelt out here
    return layer


def _leaky_variants(a, W, u, T):
    """The answer of the leaky layer (its exact gradients by distance) and the usual wrong measurements."""
    W, u = np.asarray(W, dtype=float), np.asarray(u, dtype=float)
    g = W.T @ u  # (d_in,): the gradient of u . out_t with respect to x_t
    k = np.arange(T)
    right = np.abs(a) ** k * np.linalg.norm(g)
    every_output = np.array([np.linalg.norm(sum(a ** (j - i) * g for j in range(i, T))) for i in range(T)])[::-1]
    return right, {
        "not_flipped": (right[::-1], "Your numbers grow with distance where they should shrink: entry 0 must be the "
                                     "last input (distance 0), entry T - 1 the first. Read the gradients' rows from "
                                     "the end."),
        "every_output": (every_output, "Your numbers decay too slowly: they measure how the sum of all the outputs "
                                       "depends on each input. Only the last output's dependence is asked for."),
        "squared": (right ** 2, "Your numbers are the squares of the right ones: measure the gradient's length "
                                "(its norm), not its squared length."),
        "sum_not_norm": (np.abs(a) ** k * g.sum(), "Your numbers can be negative or too small: a gradient's size is "
                                                   "its length (a norm), not the sum of its entries."),
        "shifted": (np.abs(a) ** (k + 1) * np.linalg.norm(g), "Your numbers are all one step too far: the last "
                                                               "input is at distance 0, not 1."),
    }


def _distance_case(label, layer_of, x, u, known=None, tol=1e-9):
    """``layer_of()`` builds the layer when the case runs; ``known`` is (right answer, variants) when NumPy knows it."""
    def call(fn):
        torch = import_torch()
        xt = torch.tensor(np.asarray(x, dtype=float), dtype=torch.float64)
        got = fn(layer_of(), xt, torch.tensor(np.asarray(u, dtype=float), dtype=torch.float64))
        return got.detach().numpy() if isinstance(got, torch.Tensor) else got

    def want():
        if known is not None:
            return known[0]
        torch = import_torch()
        xt = torch.tensor(np.asarray(x, dtype=float), dtype=torch.float64, requires_grad=True)
        (layer_of()(xt)[-1] @ torch.tensor(np.asarray(u, dtype=float), dtype=torch.float64)).backward()
        return xt.grad.norm(dim=1).flip(0).numpy()

    hints = []
    if known is not None:
        hints.append(known_mistakes(*((lambda w=w: w, m) for w, m in known[1].values()), atol=tol, rtol=1e-6))

    def shape_hint(got, want_):
        g, w = numbers(got), numbers(want_)
        if g is not None and w is not None and g.shape != w.shape:
            return (f"Expected one number per input position, shape {w.shape}; got shape {g.shape}. A gradient's size "
                    "at each position is one number.")
        return None
    hints.append(shape_hint)
    return Case(label, call, want, close(atol=tol, rtol=1e-6, dtype="f"), hints=hints)


@check
def gradient_by_distance(hidden, rng):
    if not hidden:
        W1 = np.array([[1.0]])
        W2 = np.array([[1.0, 2.0], [0.0, -1.0]])  # (d_out, d_in) = (2, 2)
        u2 = np.array([0.6, 0.8])
        x4 = np.array([[1.0], [-2.0], [0.5], [3.0]])
        x5 = np.array([[0.5, 1.0], [-1.0, 0.0], [2.0, 1.0], [0.0, -0.5], [1.0, 1.0]])
        Wh = np.array([[0.5, -0.3, 0.1], [0.2, 0.4, -0.6], [0.0, 0.7, 0.3]])
        Wx = np.array([[1.0, 0.0], [0.5, -1.0], [-0.5, 0.5]])
        return [
            _distance_case("gradient_by_distance of out_t = 0.5 out_(t-1) + x_t over 4 inputs, direction [1], is "
                           "[1, 0.5, 0.25, 0.125]", lambda: _leaky_layer(0.5, W1), x4, [1.0],
                           _leaky_variants(0.5, W1, [1.0], 4)),
            _distance_case("gradient_by_distance of out_t = 0.8 out_(t-1) + W x_t, W (2, 2), over 5 inputs, "
                           "direction [0.6, 0.8]", lambda: _leaky_layer(0.8, W2), x5, u2,
                           _leaky_variants(0.8, W2, u2, 5)),
            _distance_case("gradient_by_distance of a tanh RNN (3 states, 2 inputs per token) over 5 inputs, "
                           "against autograd", lambda: _tanh_rnn_layer(Wh, Wx), x5, [1.0, 0.0, 0.0]),
        ]
    T, d = 7, 3
    a = float(rng.uniform(0.3, 0.9))
    W = rng.normal(size=(d, d))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    Wq, Wk, Wv = (rng.normal(size=(d, d)) for _ in range(3))
    return [
        _distance_case(f"gradient_by_distance of out_t = {a:.3f} out_(t-1) + W x_t over {T} inputs",
                       lambda: _leaky_layer(a, W), rng.normal(size=(T, d)), u, _leaky_variants(a, W, u, T)),
        _distance_case("gradient_by_distance of a tanh RNN over 7 inputs, against autograd",
                       lambda: _tanh_rnn_layer(rng_matrix(Wq, 0.5), Wk), rng.normal(size=(T, d)), u),
        _distance_case("gradient_by_distance of one attention layer over 7 inputs, against autograd",
                       lambda: _attention_layer(Wq, Wk, Wv), rng.normal(size=(T, d)), u),
    ]


def rng_matrix(W, scale):
    """``W`` rescaled so that its largest singular value is ``scale`` (a tanh RNN that neither dies nor saturates)."""
    W = np.asarray(W, dtype=float)
    return W * (scale / np.linalg.norm(W, 2))


# ---------------------------------------------------------------------- predict_gradient_fates

FATES = ("vanishes", "holds", "explodes")


def _fates_form(got):
    value = tuple(got) if isinstance(got, list) else got
    if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, str) and v in FATES for v in value):
        return None
    return (f"answer with a tuple of three words, each 'vanishes', 'holds' or 'explodes', one per scale "
            f"(0.5, 1.0, 1.5); got {fmt(plain(got))}.")


predict_gradient_fates = ask(
    "predict_gradient_fates", form=_fates_form, normalize=lambda v: tuple(v) if isinstance(v, list) else v,
    mistakes=[
        (("vanishes", "holds", "explodes"),
         "That is what the multiplication alone says (1.5^30 is about 190,000). But every step also multiplies by "
         "tanh's slope, 1 - h^2, which is below 1 and near 0 for a state near +-1; at scale 1.5 the states grow "
         "until tanh flattens them, and the slope eats most of the growth."),
        (lambda v: isinstance(v, tuple) and len(v) == 3 and v[0] != "vanishes",
         "At scale 0.5 every step multiplies the gradient by at most 0.5 (tanh's slope is at most 1): after 30 "
         "steps at most 0.5^30, about 1e-9."),
        (lambda v: isinstance(v, tuple) and len(v) == 3 and v[1] != "holds",
         "At scale 1.0 W_h changes no lengths, and tanh's slope near small states is close to 1: the gradient "
         "shrinks slowly, far from 1e-3 after 30 steps."),
    ],
    otherwise="Scale 0.5 vanishes (at most 0.5 per step); scale 1.0 shrinks slowly; scale 1.5 grows, but tanh's slope "
              "below 1 keeps it far below 1.5^30.")


# ---------------------------------------------------------------------- predict_residual_slope
# One residual layer h + f(h) with f(h) = 0.1 tanh(h), at h = 0.5: its slope 1 + f'(h) = 1.0786.

RESIDUAL_SLOPE = 1.0 + 0.1 * (1.0 - np.tanh(0.5) ** 2)

predict_residual_slope = ask(
    "predict_residual_slope", form=a_number, compare=close(atol=0.005, rtol=0.0), atol=0.005, rtol=0.0, mistakes=[
        (RESIDUAL_SLOPE - 1.0, "That is the slope of the branch f alone, 0.1 (1 - tanh(0.5)^2) = 0.0786. The layer "
                               "outputs h + f(h): the h added back has a slope of its own."),
        (1.0, "That is the slope of the h added back alone. The branch f(h) = 0.1 tanh(h) moves with h too, and its "
              "slope adds to it."),
        (1.0 + 0.1 * np.tanh(0.5), "1 + f(h) adds the branch's value, 0.046; the slope needs the branch's slope, "
                                   "0.1 (1 - tanh(0.5)^2) = 0.0786."),
        (1.1, "tanh's slope is 1 only at 0: at h = 0.5 it is 1 - tanh(0.5)^2 = 0.79, so the branch adds 0.0786.")],
    otherwise="The slope of h + 0.1 tanh(h) is 1 + 0.1 (1 - tanh(0.5)^2) = 1.0786: the 1 from the h added back.")


# ---------------------------------------------------------------------- predict_residual_sum
# y = x + softmax(x) at x = (2, 1, 0), with dL/dy = g = (1, -2, 0.5): how does the sum of the squares of dL/dx =
# g + J^T g (9.0505) compare with that of g (5.25)? Larger unless all of g's entries are equal:
# g . J g = sum p_i g_i^2 - (sum p_i g_i)^2 is a variance under p (1.6179 here), never negative. The sum of the
# entries stays -0.5 (rows and columns of J sum to 0), which makes "the same" the tempting wrong answer.

SUM_COMPARISONS = ("larger", "the same", "smaller")

predict_residual_sum = ask(
    "predict_residual_sum", form=one_of(SUM_COMPARISONS), mistakes=[
        ("the same", "The sum of the entries stays -0.5, since softmax's Jacobian has rows and columns summing to 0, "
                     "but the sum of their squares does not: it grows from 5.25 to 9.05. In |g + J g|^2 = |g|^2 + "
                     "2 g.Jg + |Jg|^2 the middle term is sum p_i g_i^2 - (sum p_i g_i)^2, a variance under p."),
        ("smaller", "In |g + J g|^2 = |g|^2 + 2 g.Jg + |Jg|^2 the last term is a square, and the middle one, "
                    "sum p_i g_i^2 - (sum p_i g_i)^2, is the variance of g's entries under p: neither can be "
                    "negative, so the branch cannot shorten g. Here 5.25 grows to 9.05.")],
    otherwise="Larger, 9.05 against 5.25: g . J g = sum p_i g_i^2 - (sum p_i g_i)^2 is a variance under p, never "
              "negative.")


# ---------------------------------------------------------------------- predict_residual_depth

predict_residual_depth = ask(
    "predict_residual_depth", form=one_of(FATES), mistakes=[
        ("explodes", "1.1^50 = 117 is what you get if every layer stretched the gradient by 1.1. I + 0.1 Q with Q a "
                     "random orthogonal matrix stretches some directions by up to 1.1 and shrinks others down to 0.9, and "
                     "over 50 different such matrices the two balance: the norm stays of order 1."),
        ("vanishes", "The identity path carries the gradient through every layer unchanged; the branch adds 0.1 Q "
                     "of it, which can shrink some directions a little, but nothing multiplies the whole gradient by "
                     "a factor below 1 fifty times over.")],
    otherwise="The residual stack holds: the identity path carries the gradient, and the 0.1 Q branches stretch and "
              "shrink directions by turns.")


# ---------------------------------------------------------------------- predict_saturated_slope

SLOPES = ("above 1e-2", "between 1e-6 and 1e-2", "below 1e-6")


predict_saturated_slope = ask(
    "predict_saturated_slope", form=one_of(SLOPES), mistakes=[
        ("above 1e-2", "That is the scaled case. Unscaled, the largest score in this draw beats the next by 24 (the "
                       "scores are printed above the question), so the others share about e^-24 of the weight, and "
                       "every entry of the Jacobian, p_i (delta_ij - p_j), is at most about that: 3.6e-11."),
        ("between 1e-6 and 1e-2", "Smaller still in this draw: its largest score beats the next by 24 (the scores are "
                                  "printed above the question), and the Jacobian's entries are about e^-24 = 4e-11. "
                                  "Your bin fits a gap between about 5 and 14, as many other draws have.")],
    otherwise="Below 1e-6: in this draw the largest score beats the next by 24, so the others share about e^-24 = "
              "4e-11 of the weight.")


# ------------------------------------------------------------------------------ gated_forward
#
# The memory path of an LSTM-like cell: c_t = f_t * c_(t-1) + i_t * g_t, the gates given. The messages name what
# came out on the case (a symptom), each variant a mistake people make when they infer the update from examples.

GATED_MESSAGES = {
    "one_minus_f": "Your memory does not change when the input gate i changes: i is how much of the candidate g "
                   "is written at each step, whatever share of the old memory f keeps.",
    "no_input_gate": "Your memory does not change when the input gate i changes: i is how much of the candidate g "
                     "is written at each step.",
    "i_plus_g": "Your memory moves even where the candidate g is 0: what is written at a step must vanish when g "
                "does, and shrink with i.",
    "c0_ignored": "Your memory does not change when c0 changes: the first step must start from the memory it is "
                  "given, not from zeros.",
    "not_carried": "Each step starts again from c0: what the first tokens wrote is gone two steps later. Each step "
                   "reads the memory the step before it left.",
    "squashed": "Your memory never leaves (-1, 1), but the memory the examples want reaches 1.9: nothing squashes "
                "the memory itself in this cell.",
    "forget_after_write": "Your memory is too small by the share f of what is written: the forget gate acts on "
                          "the old memory only, and the new candidate is added after it.",
    "includes_c0": "You returned T + 1 memories: the first row is c0 itself. Return one memory per token, the "
                   "memory after reading it.",
    "last_only": "You returned only the last memory: the contract asks for every memory, one per token.",
}


def gated_np(f, i, g, c0, variant=None):
    """The memory path in NumPy, or one of its known-wrong variants (``GATED_MESSAGES``' keys); a leading batch axis
    of the gates and of c0 is carried along."""
    f, i, g, c0 = (np.asarray(a, dtype=float) for a in (f, i, g, c0))
    if variant == "c0_ignored":
        c0 = np.zeros_like(c0)
    c, out = np.broadcast_to(c0, f.shape[:-2] + f.shape[-1:]), []
    for t in range(f.shape[-2]):
        ft, it, gt = f[..., t, :], i[..., t, :], g[..., t, :]
        prev = np.broadcast_to(c0, c.shape) if variant == "not_carried" else c
        if variant == "one_minus_f":
            c = ft * prev + (1 - ft) * gt
        elif variant == "no_input_gate":
            c = ft * prev + gt
        elif variant == "i_plus_g":
            c = ft * prev + it + gt
        elif variant == "squashed":
            c = np.tanh(ft * prev + it * gt)
        elif variant == "forget_after_write":
            c = ft * (prev + it * gt)
        else:
            c = ft * prev + it * gt
        out.append(c)
    C = np.stack(out, axis=-2)
    if variant == "includes_c0":
        return np.concatenate([np.broadcast_to(c0, C.shape[:-2] + (1,) + C.shape[-1:]), C], axis=-2)
    if variant == "last_only":
        return C[..., -1, :]
    return C


def _gated_case(label, f, i, g, c0):
    def call(fn):
        return _as_tensor_result(fn(*_tensors(f, i, g, c0)), "gated_forward").detach()

    def want():
        torch = import_torch()
        return torch.as_tensor(gated_np(f, i, g, c0))

    hint = known_mistakes(*((lambda v=v: gated_np(f, i, g, c0, v), m) for v, m in GATED_MESSAGES.items()))
    return Case(label, call, want, close(atol=1e-9, rtol=1e-7, kind="tensor"), hints=[hint])


def _gated_grad_case(label, f, i, g, c0, G):
    """The gradients autograd finds through the learner's loop, against those through the reference loop."""
    def grads(forward):
        torch = import_torch()
        leaves = _tensors(f, i, g, c0, grad=True)
        C = forward(*leaves)
        (C * torch.as_tensor(np.asarray(G, dtype=float))).sum().backward()
        return tuple(t.grad.detach().clone() if t.grad is not None else torch.zeros_like(t) for t in leaves)

    def call(fn):
        def checked(*args):
            C = _as_tensor_result(fn(*args), "gated_forward")
            if not C.requires_grad:
                raise TypeError("gated_forward's result does not record a gradient: something in it left autograd's "
                                "graph (.detach(), .item(), .numpy(), torch.tensor(...) of a value, or "
                                "torch.no_grad()).")
            return C
        return grads(checked)

    def want():
        torch = import_torch()

        def forward(f_, i_, g_, c0_):
            c, out = c0_, []
            for t in range(f_.shape[-2]):
                c = f_[..., t, :] * c + i_[..., t, :] * g_[..., t, :]
                out.append(c)
            return torch.stack(out, dim=-2)
        return grads(forward)

    return Case(label + " (the gradients of sum(G * C) with respect to f, i, g and c0)", call, want,
                close(atol=1e-9, rtol=1e-7, kind="tensor"))


def _gates(rng, shape):
    """Gates in (0, 1) and a candidate in (-1, 1), as a sigmoid and a tanh would give them."""
    return (1 / (1 + np.exp(-rng.normal(size=shape))), 1 / (1 + np.exp(-rng.normal(size=shape))),
            np.tanh(rng.normal(size=shape)))


@check
def gated_forward(hidden, rng):
    if not hidden:
        one = np.array([[0.9], [0.9], [0.9]]), np.ones((3, 1)), np.array([[1.0], [1.0], [0.0]])
        f, i, g = _gates(np.random.default_rng(54), (4, 3))
        fb, ib, gb = _gates(np.random.default_rng(55), (2, 4, 3))
        c0 = np.array([0.5, -1.0, 2.0])
        return [
            _gated_case("gated_forward of one number per token, f = [0.9, 0.9, 0.9], i = [1, 1, 1], g = [1, 1, 0], "
                        "c0 = [0] is [[1], [1.9], [1.71]]", *one, [0.0]),
            _gated_case("gated_forward(f, i, g (4, 3), c0 (3,))", f, i, g, c0),
            _gated_case("gated_forward of a batch of 2 sequences, f, i, g (2, 4, 3), c0 (3,)", fb, ib, gb, c0),
            _gated_grad_case("gated_forward(f, i, g (4, 3), c0 (3,)) under autograd", f, i, g, c0,
                             np.arange(12.0).reshape(4, 3) / 10 - 0.5),
        ]
    T, d, B = 6, 4, 3
    f, i, g = _gates(rng, (T, d))
    fb, ib, gb = _gates(rng, (B, T, d))
    return [
        _gated_case("gated_forward(f, i, g (6, 4), c0 (4,))", f, i, g, rng.normal(size=d)),
        _gated_case("gated_forward of a batch: f, i, g (3, 6, 4), c0 (3, 4), one start per sequence", fb, ib, gb,
                    rng.normal(size=(B, d))),
        _gated_grad_case("gated_forward of a batch (3, 6, 4) under autograd", fb, ib, gb, rng.normal(size=(B, d)),
                         rng.normal(size=(B, T, d))),
    ]


# ---------------------------------------------------------------------- predict_gated_fates


def _gated_fates_form(got):
    value = tuple(got) if isinstance(got, list) else got
    if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, str) and v in FATES for v in value):
        return None
    return (f"answer with a tuple of three words, each 'vanishes', 'holds' or 'explodes', one per forget bias "
            f"(0, 2, 4); got {fmt(plain(got))}.")


def _three(v):
    return isinstance(v, tuple) and len(v) == 3


predict_gated_fates = ask(
    "predict_gated_fates", form=_gated_fates_form, normalize=lambda v: tuple(v) if isinstance(v, list) else v,
    mistakes=[
        (lambda v: _three(v) and v[0] != "vanishes",
         "With forget bias 0 the forget gate is about sigmoid(0) = 0.5: each step back keeps half of the gradient, "
         "and 30 steps leave about 0.5^30, 1e-9. An additive memory holds only when what it keeps is near 1."),
        (lambda v: _three(v) and "explodes" in v,
         "A gate lies between 0 and 1, and the memory path multiplies by the gate alone: nothing on it can make "
         "the gradient grow."),
        (lambda v: _three(v) and v[2] != "holds",
         "With forget bias 4 the forget gate is about sigmoid(4) = 0.98: each step back multiplies the gradient by "
         "0.98 and by nothing else (no W_h, no tanh slope on the memory path), and 0.98^30 is about 0.58."),
        (lambda v: _three(v) and v[1] != "holds",
         "With forget bias 2 the forget gate is about sigmoid(2) = 0.88, and 0.88^30 is about 0.02: small, but "
         "twenty times a thousandth."),
    ],
    otherwise="Forget bias 0 vanishes (about 0.5 per step, 0.5^30 = 1e-9); bias 2 holds (0.88^30 = 0.02); bias 4 "
              "holds (0.98^30 = 0.58).")


# ---------------------------------------------------------------------- predict_gated_steps

predict_gated_steps = ask(
    "predict_gated_steps", form=int_in(0, 10_000), mistakes=[
        (1, "One step is attention's answer: its last output reads every position at once. The gated memory reaches "
            "the first token only through the memory of every step in between, one after another."),
        (40, "Token 0 is read by the first of the 40 steps, and its memory is the first row: the 39 steps after it "
             "each wait for the one before."),
        (30, "30 was the distance at which the gradient was compared; the last memory of 40 tokens is 39 steps after "
             "the first token's."),
    ],
    otherwise="39: the memory after token 0 passes through the 39 later steps, each waiting for the one before.")
