"""Notebook 05's checks of gradients by the chain rule: squared_loss_grad, sgd_step, numerical_gradient,
linear_backward and softmax_cross_entropy_backward, each against ``torch.autograd`` in float64."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, close, const
from ..hints import known_mistakes, numbers, same_numbers
from ..questions import a_number
from ..toolkit import import_torch, nonfinite_hint, stable_softmax
from .common import _leaf, _np, ask, check


# ------------------------------------------------------------------------ squared_loss_grad

def _squared_case(label, w, x, y):
    def want():
        wt = _leaf(w)
        ((wt * x - y) ** 2).backward()
        return wt.grad.item()

    u = w * x - y

    def both(got, want_):  # at x = 2 the two missing factors give the same number
        if same_numbers(got, u * x) and same_numbers(got, 2 * u):
            return "A factor is missing: d(u^2)/du = 2u and du/dw = x, so dL/dw = 2 (w x - y) x."
        return None

    hint = known_mistakes(
        (lambda: u * x, "The factor 2 from d(u^2)/du = 2u is missing."),
        (lambda: 2 * u, "The inner derivative is missing: u = w x - y, so du/dw = x; multiply by x."),
        (lambda: 2 * u * w, "The inner derivative of w x - y with respect to w is x, not w."),
        (lambda: u ** 2, "That is the loss itself, not its derivative."),
        (lambda: -2 * u * x, "The sign is flipped: with u = y - w x, du/dw = -x."),
    )
    return Case(label, call_with(w, x, y), want, close(), hints=[both, hint])


@check
def squared_loss_grad(hidden, rng):
    if not hidden:
        return [_squared_case("squared_loss_grad(w=2, x=3, y=1) is 30", 2.0, 3.0, 1.0),
                _squared_case("squared_loss_grad(w=1, x=2, y=3) is -4", 1.0, 2.0, 3.0),
                _squared_case("squared_loss_grad(w=0.5, x=0, y=3): x = 0 means w has no effect", 0.5, 0.0, 3.0)]
    return [_squared_case(f"squared_loss_grad(w={w:.3f}, x={x:.3f}, y={y:.3f})", float(w), float(x), float(y))
            for w, x, y in rng.normal(size=(3, 3)) * 2]


# ------------------------------------------------------------------------------ sgd_step

def _sgd_case(label, param, grad, lr, value=None):
    def want():
        if value is not None:  # a worked number
            return value
        torch = import_torch()
        p = _leaf(param)
        p.grad = torch.as_tensor(np.asarray(grad, dtype=np.float64))
        torch.optim.SGD([p], lr=lr).step()
        return _np(p) if np.ndim(param) else _np(p).item()

    p, g = np.asarray(param, dtype=float), np.asarray(grad, dtype=float)

    hint = known_mistakes(
        (lambda: p + lr * g, "That step went uphill: after it the loss is larger, because the gradient points "
                             "towards higher loss."),
        (lambda: lr * g, "That is the size of the step itself, not where the parameter lands."),
        (lambda: -lr * g, "That is the size of the step itself, not where the parameter lands."),
        (lambda: p - g, "The learning rate has no effect on your step: with lr = 0.1 the move should be a tenth of "
                        "what it is."),
    )
    return Case(label, call_with(param, grad, lr), want, close(), hints=[hint])


@check
def sgd_step(hidden, rng):
    if not hidden:
        return [_sgd_case("sgd_step(1.0, -4.0, lr=0.1) is 1.4", 1.0, -4.0, 0.1, value=1.4),
                _sgd_case("sgd_step(np.array([1, 2]), np.array([0.5, -1]), lr=0.1) is [0.95, 2.1]",
                          np.array([1.0, 2.0]), np.array([0.5, -1.0]), 0.1, value=np.array([0.95, 2.1]))]
    return [_sgd_case("sgd_step on parameters of shape (3, 4), lr=0.05", rng.normal(size=(3, 4)),
                      rng.normal(size=(3, 4)), 0.05),
            _sgd_case("sgd_step with lr=1.5", rng.normal(size=5), rng.normal(size=5), 1.5)]


# ------------------------------------------------------------------------ predict_lr_limit

predict_lr_limit = ask(
    "predict_lr_limit", form=a_number, compare=close(atol=0.011, rtol=0.0), atol=0.011, rtol=0.0, mistakes=[
        (0.125, "0.125 is the learning rate whose one step lands exactly on the best weight, 1.5. A bigger one "
                "overshoots, but it still lands lower than it started until it lands on w = 2, as high as w = 1 "
                "on the other side of the valley: 0.25."),
        (0.5, "At 0.5 the step lands on w = 3, where the loss is 9, against 1 at w = 1. The loss is the same on "
              "both sides of 1.5 at equal distances, so the step stops helping where it lands on w = 2: 0.25."),
        (lambda v: v >= 0.3, "Too large: the loss is symmetric about w = 1.5, so a step that lands beyond w = 2 "
                             "is higher than where it started, and from w = 1 with gradient -4 that happens above "
                             "0.25."),
        (lambda v: v <= 0.1, "Too small: a step with this learning rate still lowers the loss; so do bigger ones, "
                             "up to the one that lands on w = 2, as high as w = 1 on the other side: 0.25.")],
    otherwise="The loss (2w - 3)^2 is symmetric about w = 1.5: the step stops helping when it lands on w = 2, "
              "and 1 - lr * (-4) = 2 at lr = 0.25.")


# ----------------------------------------------------------------------- numerical_gradient

W_FIXED = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]])  # (3, 2)


def course_loss(w):
    """L(w) = sum (2 w - 3)^2: the course's loss at x = 2, y = 3."""
    return float(np.sum((2.0 * w - 3.0) ** 2))


def cube_sum(x):
    return float(np.sum(x ** 3))


def tanh_layer(x):
    """sum tanh(x @ W) for x of shape (N, 3)."""
    return float(np.sum(np.tanh(x @ W_FIXED)))


def sin_times_x(x):
    return float(np.sum(np.sin(x) * x))


def log_sum_exp(x):
    return float(np.log(np.sum(np.exp(x))))


def _torch_f(name):
    torch = import_torch()
    return {"course_loss": lambda t: ((2.0 * t - 3.0) ** 2).sum(),
            "cube_sum": lambda t: (t ** 3).sum(),
            "tanh_layer": lambda t: torch.tanh(t @ torch.as_tensor(W_FIXED)).sum(),
            "sin_times_x": lambda t: (torch.sin(t) * t).sum(),
            "log_sum_exp": lambda t: torch.logsumexp(t, dim=0)}[name]


def _differences(f, x, eps, kind):
    """Two usual wrong difference quotients, entry by entry (for hints only)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (f(x + step) - f(x)) / eps if kind == "one-sided" else (f(x + step) - f(x - step)) / eps
    return g


def _numgrad_case(label, f, x, eps=None):
    x = np.asarray(x, dtype=float)

    def want():
        t = _leaf(x)
        _torch_f(f.__name__)(t).backward()
        return _np(t.grad)

    e = 1e-6 if eps is None else eps
    hint = known_mistakes(
        (lambda: _differences(f, x, e, "one-sided"),
         "Your estimate is off by about eps times the curvature: it is the one-sided slope between x and x + eps, "
         "which belongs to a point half a step to the right of x. An estimate that leans neither way errs only "
         "by about eps^2."),
        (lambda: _differences(f, x, e, "central without the 2"),
         "Your estimates are twice the true slope everywhere: check the distance your difference is taken over."),
    )
    call = call_with(f, x) if eps is None else call_with(f, x, eps=eps)
    # eps = 1e-3 cases: central differences err by about eps^2, one-sided ones by about eps
    return Case(label, call, want, close(atol=1e-5, rtol=1e-5, dtype="f"), hints=[hint])


def _unchanged_case(label, f, x):
    x = np.asarray(x, dtype=float)

    def run(fn):
        mine = x.copy()
        fn(f, mine)
        return mine

    def hint(got, want_):
        return ("numerical_gradient changed x: put each entry back after perturbing it (x[i] = old), or "
                "perturb a copy.")

    return Case(label, run, const(x.copy()), close(atol=1e-12, rtol=0.0), hints=[hint])


@check
def numerical_gradient(hidden, rng):
    if not hidden:
        return [
            _numgrad_case("numerical_gradient(L, np.array([1.0])) with L(w) = (2w - 3)^2 is [-4]", course_loss,
                          [1.0]),
            _numgrad_case("numerical_gradient(f, x) for f(x) = sum tanh(x @ W), x of shape (2, 3)", tanh_layer,
                          [[0.1, -0.2, 0.3], [1.0, 0.5, -1.5]]),
            _numgrad_case("numerical_gradient(f, [1, 2], eps=1e-3) for f(x) = sum x^3 is about [3, 12]", cube_sum,
                          [1.0, 2.0], eps=1e-3),
            _unchanged_case("numerical_gradient(f, x) leaves x unchanged", sin_times_x, [0.5, -1.0, 2.0]),
        ]
    return [
        _numgrad_case("numerical_gradient for f(x) = sum sin(x) x, x of shape (2, 2, 3)", sin_times_x,
                      rng.normal(size=(2, 2, 3))),
        _numgrad_case("numerical_gradient of log-sum-exp at 4 random logits", log_sum_exp, rng.normal(size=4)),
        _numgrad_case("numerical_gradient for f(x) = sum x^3 with eps=1e-3, x of shape (3, 2)", cube_sum,
                      rng.normal(size=(3, 2)), eps=1e-3),
        _unchanged_case("numerical_gradient(f, x) leaves x of shape (2, 3) unchanged", tanh_layer,
                        rng.normal(size=(2, 3))),
    ]


# -------------------------------------------------------------------------- linear_backward

def _linear_case(label, x, W, g):
    x, W, g = (np.asarray(a, dtype=float) for a in (x, W, g))

    def want():
        xt, Wt = _leaf(x), _leaf(W)
        (xt @ Wt).backward(_leaf(g).detach())
        return _np(xt.grad), _np(Wt.grad)

    n = len(x)

    def order(got, want_):
        if isinstance(got, (tuple, list)) and len(got) == 2 and numbers(got[0]).shape == W.shape != x.shape:
            return "Return (grad_x, grad_W) in that order."
        return None

    hint = known_mistakes(
        (lambda: (g @ W.T, g.T @ x), "grad_W comes out transposed, (d_out, d_in): a gradient has its tensor's "
                                     "shape, W's shape (d_in, d_out)."),
        (lambda: (g @ W, x.T @ g), "grad_x multiplies by W as the forward pass does, which maps d_in to d_out; the "
                                   "gradient must travel the other way, from d_out back to d_in."),
        (lambda: (g @ W.T / n, x.T @ g / n), "Do not divide by N: y = x @ W has no mean in it, and grad_out already "
                                             "holds dL/dy."),
        (lambda: (g @ W.T, x.T @ g / n), "Do not divide by N: y = x @ W has no mean in it, and grad_out already "
                                         "holds dL/dy."),
    )
    return Case(label, call_with(x, W, g), want, close(dtype="f"), hints=[order, hint])


@check
def linear_backward(hidden, rng):
    if not hidden:
        x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 2.0]])  # (N, d_in) = (2, 3)
        return [
            _linear_case("linear_backward(x (2, 3), W (3, 3), grad_out (2, 3))", x,
                         [[1.0, 0.0, 2.0], [-1.0, 1.0, 0.0], [0.0, 3.0, 1.0]], [[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]]),
            _linear_case("linear_backward(x (2, 3), W (3, 4), grad_out (2, 4))", x,
                         [[1.0, 0.0, 2.0, -1.0], [0.0, 1.0, 0.0, 2.0], [1.0, 1.0, -1.0, 0.0]],
                         [[1.0, 0.0, 0.0, 1.0], [0.0, 2.0, -1.0, 0.0]]),
        ]
    return [
        _linear_case("linear_backward(x (5, 4), W (4, 6), grad_out (5, 6))", rng.normal(size=(5, 4)),
                     rng.normal(size=(4, 6)), rng.normal(size=(5, 6))),
        _linear_case("linear_backward(x (1, 7), W (7, 2), grad_out (1, 2))", rng.normal(size=(1, 7)),
                     rng.normal(size=(7, 2)), rng.normal(size=(1, 2))),
    ]


# ------------------------------------------------------------ softmax_cross_entropy_backward

def _ce_backward_case(label, logits, targets):
    logits, targets = np.asarray(logits, dtype=float), np.asarray(targets)
    n = len(targets)

    def want():
        torch = import_torch()
        F = torch.nn.functional
        z = _leaf(logits)
        F.cross_entropy(z, torch.as_tensor(targets)).backward()
        return _np(z.grad)

    p, onehot = stable_softmax(logits), np.eye(logits.shape[1])[targets]
    hints = [
        known_mistakes(
            (lambda: p - onehot, f"Your gradient is N = {n} times too large: the loss is the mean over the rows, "
                                 "so each row holds only a 1/N share of it."),
            (lambda: p / n, "Every entry of your gradient is positive and each row sums to 1/N, not 0: raising the "
                            "target's logit must lower the loss, so the target's entry must be negative."),
            (lambda: p, "Every entry of your gradient is positive and each row sums to 1, not 0: raising the target's "
                        f"logit must lower the loss; and the loss is a mean over N = {n} rows."),
            (lambda: (onehot - p) / n, "Your gradient has the wrong sign everywhere: its target entries are positive, "
                                       "yet the loss falls when z_y rises."),
            (lambda: (p - np.eye(logits.shape[1])[targets].sum(axis=0)) / n,
             "Each row of your gradient sums to less than 0: every row lost 1 at every target that occurs in the "
             "batch. A row's one-hot sits at each row's own target alone, so every row sums to 0."),
        ),
        nonfinite_hint("Use a stable softmax (subtract each row's max) inside the gradient."),
    ]
    return Case(label, call_with(logits, targets), want, close(dtype="f"), hints=hints)


@check
def softmax_cross_entropy_backward(hidden, rng):
    if not hidden:
        return [
            _ce_backward_case("softmax_cross_entropy_backward of one row of logits [[2, 1, 0]], target [0]",
                              [[2.0, 1.0, 0.0]], [0]),
            _ce_backward_case("softmax_cross_entropy_backward of logits [[2, 1, 0], [0, 3, 1]], targets [1, 2]",
                              [[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]], [1, 2]),
            _ce_backward_case("softmax_cross_entropy_backward([[1000, 0, -1000]], [2]) must be finite",
                              [[1000.0, 0.0, -1000.0]], [2]),
        ]
    return [
        _ce_backward_case("softmax_cross_entropy_backward of random logits (6, 5)", rng.normal(size=(6, 5)) * 2,
                          rng.integers(0, 5, size=6)),
        _ce_backward_case("softmax_cross_entropy_backward of logits around +-500, shape (3, 4)",
                          rng.normal(size=(3, 4)) * 500, [3, 0, 1]),
        # fixed, whatever the seed: a logit above 710 overflows exp() unless the row's max is subtracted
        # (random logits around +-500 reach it only now and then)
        _ce_backward_case("softmax_cross_entropy_backward([[800, 0, -5], [3, 750, 1]], [1, 1])",
                          [[800.0, 0.0, -5.0], [3.0, 750.0, 1.0]], [1, 1]),
    ]
