"""Notebook 05's checks of training: adamw_step (against ``torch.optim.AdamW``), embedding_backward,
softmax_jacobian, bigram_counts (a bug hunt), bigram_train_step, and the prediction questions between them."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, close, raises
from ..hints import known_mistakes
from ..models.adamw import adamw_numpy, bigram_numpy
from ..questions import a_number, numbers_tuple, one_of
from ..toolkit import import_torch, stable_softmax
from .common import _leaf, _np, ask, check


# ------------------------------------------------------------------------------ adamw_step

ADAMW_HINTS = {
    "no_bias": "Bias correction is missing: your first step moves each parameter by about 3.2 lr, not about lr, "
               "because m and v still hold most of their starting 0; the gap to PyTorch closes only as t grows.",
    "l2": "Weight decay was added to the gradient (that is Adam with L2), so the division by the root of v rescales "
          "it differently for every parameter. AdamW shrinks the parameter itself and leaves the gradient raw.",
    "decay_wrong_factor": "Your parameters shrink about 1/lr times too fast (1000 times at lr = 1e-3): the share "
                          "decayed per step scales with the learning rate too.",
    "decay_after": "Your parameters drift from PyTorch's by a little more each step when weight_decay is not 0: "
                   "PyTorch shrinks the parameter before the Adam update, not after it.",
    "eps_inside": "Your steps are smaller than PyTorch's where the gradients are small: an eps of 1e-8 under a "
                  "square root weighs like 1e-4. PyTorch adds eps after taking the root.",
}


def _adamw_case(label, p0, grads, **hyper):
    p0 = np.asarray(p0, dtype=float)
    grads = [np.asarray(g, dtype=float) for g in grads]
    lr, betas = hyper.get("lr", 1e-3), hyper.get("betas", (0.9, 0.999))
    eps, wd = hyper.get("eps", 1e-8), hyper.get("weight_decay", 0.01)

    def run(fn):
        param, m, v = p0.copy(), np.zeros_like(p0), np.zeros_like(p0)
        trajectory = []
        for t, g in enumerate(grads, start=1):
            result = fn(param, g.copy(), m, v, t, **hyper)
            if not (isinstance(result, tuple) and len(result) == 3):
                raise TypeError(f"adamw_step must return a tuple (param, m, v), got {type(result).__name__}"
                                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
            param, m, v = (np.array(r, dtype=float) for r in result)
            trajectory.append(param.copy())
        return np.stack(trajectory), m, v

    def want():
        torch = import_torch()
        p = _leaf(p0)
        opt = torch.optim.AdamW([p], lr=lr, betas=betas, eps=eps, weight_decay=wd)
        trajectory = []
        for g in grads:
            p.grad = torch.as_tensor(g)
            opt.step()
            trajectory.append(_np(p))
        state = opt.state[p]
        return np.stack(trajectory), _np(state["exp_avg"]), _np(state["exp_avg_sq"])

    hint = known_mistakes(*((lambda v=variant: adamw_numpy(p0, grads, lr, betas, eps, wd, v), message)
                            for variant, message in ADAMW_HINTS.items()))

    steps = len(grads)
    label = f"{label} (item 0: the parameter after each of the {steps} steps, then m and v)" if steps > 1 else label
    return Case(label, run, want, close(atol=1e-10, rtol=1e-7, dtype="f"), hints=[hint])


@check
def adamw_step(hidden, rng):
    if not hidden:
        grads = [[0.01, -0.03, 0.02], [0.02, -0.01, 0.0], [-0.01, 0.02, 0.03], [0.0, 0.01, -0.02], [0.03, 0.0, 0.01]]
        return [
            _adamw_case("one adamw_step from m = v = 0 with the default hyperparameters, against torch.optim.AdamW",
                        [1.0, -2.0, 0.5], [[0.1, -0.3, 0.2]]),
            _adamw_case("5 adamw_steps with lr=0.1, betas=(0.8, 0.99), eps=1e-4, weight_decay=0.1, "
                        "against torch.optim.AdamW", [1.0, -2.0, 0.5], grads,
                        lr=0.1, betas=(0.8, 0.99), eps=1e-4, weight_decay=0.1),
        ]
    return [
        _adamw_case("8 adamw_steps on a (2, 3) parameter, lr=0.05, weight_decay=0.5, eps=1e-6",
                    rng.normal(size=(2, 3)), list(rng.normal(size=(8, 2, 3)) * 0.01),
                    lr=0.05, weight_decay=0.5, eps=1e-6),
        _adamw_case("4 adamw_steps with the default hyperparameters", rng.normal(size=4), list(rng.normal(size=(4, 4)))),
    ]


# ------------------------------------------------------------------------ embedding_backward

def _embedding_backward_case(label, ids, grad, vocab_size):
    ids, grad = np.asarray(ids), np.asarray(grad, dtype=float)
    d = grad.shape[-1]
    flat_ids, flat_grad = ids.reshape(-1), grad.reshape(-1, d)

    def want():
        torch = import_torch()
        F = torch.nn.functional
        E = _leaf(np.zeros((vocab_size, d)))
        F.embedding(torch.as_tensor(ids), E).backward(torch.as_tensor(grad))
        return _np(E.grad)

    def assigned():  # G[ids] = grad_out: the last of the repeated rows wins
        G = np.zeros((vocab_size, d))
        G[flat_ids] = flat_grad
        return G

    def per_row_loop():  # for each sequence, G[ids[b]] += grad[b]: repeats within a sequence are lost
        G = np.zeros((vocab_size, d))
        for b in range(len(ids)):
            G[ids[b]] += grad[b]
        return G

    def averaged():
        G = np.zeros((vocab_size, d))
        np.add.at(G, flat_ids, flat_grad)
        n = np.bincount(flat_ids, minlength=vocab_size)[:, None]
        return G / np.maximum(n, 1)

    def exact():
        G = np.zeros((vocab_size, d))
        np.add.at(G, flat_ids, flat_grad)
        return G

    repeats = ("Rows of repeated ids must add up, and yours come out too small: a row whose id was looked up "
               "k times holds only one of its k gradient rows. On the prediction's ids [2, 0, 2] with rows of "
               "ones, row 2 must hold 2: print what your code puts there.")
    hint = known_mistakes(
        (assigned, repeats),
        (per_row_loop, repeats),
        (averaged, "Do not average the repeated rows: every use of a row adds its own gradient (the loss's "
                   "mean is already inside grad_out)."),
        (lambda: exact()[: flat_ids.max() + 1], f"Return one row per vocabulary entry, shape (vocab_size, d) = "
                                                f"({vocab_size}, {d}): rows never looked up are there too, as 0."),
        (lambda: exact().T, f"The gradient has the table's shape (vocab_size, d) = ({vocab_size}, {d}): one row per "
                            "token id, not one column."),
        (lambda: grad, f"That is grad_out itself, one row per position; sum it into the table's rows, shape "
                       f"({vocab_size}, {d})."),
    )
    return Case(label, call_with(ids, grad, vocab_size), want, close(dtype="f"), hints=[hint])


@check
def embedding_backward(hidden, rng):
    if not hidden:
        return [
            _embedding_backward_case("embedding_backward([1, 3, 1], [[1, 2], [3, 4], [5, 6]], 5): row 1 is "
                                     "[1, 2] + [5, 6] = [6, 8], row 3 is [3, 4], rows 0, 2, 4 are 0",
                                     [1, 3, 1], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], 5),
            _embedding_backward_case("embedding_backward(ids of shape (2, 3), grad_out of shape (2, 3, 4), 6)",
                                     [[0, 2, 2], [5, 0, 2]], np.arange(24.0).reshape(2, 3, 4) - 10, 6),
            _embedding_backward_case("embedding_backward([4, 4, 4, 4], ones (4, 2), 7): one row used four times",
                                     [4, 4, 4, 4], np.ones((4, 2)), 7),
            _bad_embedding_backward_case("embedding_backward([0, -1], ones (2, 2), 3): -1 is not a row (NumPy "
                                         "would wrap it to the last row)", [0, -1], np.ones((2, 2)), 3,
                                         "id -1 is outside [0, 3)"),
            _bad_embedding_backward_case("embedding_backward(ids of shape (2, 3), grad_out of shape (3, 2, 4), 6): "
                                         "grad_out needs one row per id, shape (2, 3, 4)",
                                         np.zeros((2, 3), dtype=int), np.ones((3, 2, 4)), 6,
                                         "grad_out's leading shape (3, 2) is not ids' shape (2, 3)"),
        ]
    return [
        _embedding_backward_case("embedding_backward of a batch (3, 8) of ids in [0, 6) against nn.Embedding",
                                 rng.integers(0, 6, size=(3, 8)), rng.normal(size=(3, 8, 5)), 6),
        _embedding_backward_case("embedding_backward with vocab_size 40 and 10 ids (most rows never used)",
                                 rng.integers(0, 40, size=10), rng.normal(size=(10, 3)), 40),
        _embedding_backward_case("embedding_backward of one sequence with many repeats",
                                 rng.integers(0, 3, size=12), rng.normal(size=(12, 4)), 3),
        # fixed, whatever the seed: random ids are never negative and random shapes always match
        _bad_embedding_backward_case("embedding_backward([2, -3, 1], grad_out (3, 2), 4)", [2, -3, 1],
                                     np.ones((3, 2)), 4, "id -3 is outside [0, 4)"),
        _bad_embedding_backward_case("embedding_backward(ids (3,), grad_out (1, 2), 5): one row for three ids",
                                     [0, 1, 2], np.ones((1, 2)), 5, "grad_out's leading shape (1,) is not ids' shape (3,)"),
        _bad_embedding_backward_case("embedding_backward(ids (2, 4), grad_out (4, 2, 3), 5)",
                                     np.ones((2, 4), dtype=int), np.ones((4, 2, 3)), 5,
                                     "grad_out's leading shape (4, 2) is not ids' shape (2, 4)"),
    ]


def _bad_embedding_backward_case(label, ids, grad, vocab_size, message):
    """Input that has no gradient to give: the contract is a ValueError saying what is wrong."""
    return Case(label, call_with(np.asarray(ids), np.asarray(grad, dtype=float), vocab_size), raises(message),
                close(dtype="f"))


predict_embedding_grad = ask(
    "predict_embedding_grad", form=numbers_tuple(2), compare=close(atol=1e-8, rtol=0.0), mistakes=[
        ((2, 1.0), "Row 2 was looked up twice, and each use adds its gradient: 1 + 1 = 2 in every entry "
                   "(one row for two uses would lose a use, the G[ids] = grad bug)."),
        ((3, 2.0), "There are three positions but only two distinct ids, 0 and 2: the two uses of id 2 "
                   "land in the same row."),
        ((3, 1.0), "The gradient has one row per vocabulary entry, not per position: the two uses of id 2 "
                   "land in the same row and add up, 1 + 1 = 2."),
        ((5, 2.0), "Rows that were never looked up (1, 3 and 4) get no gradient at all: they stay 0."),
        ((2, 6.0), "Each entry of row 2 receives 1 from each of the two uses: 2, not the sum over the row.")],
    otherwise="Ids 0 and 2 are looked up, so 2 rows are nonzero; row 2 is used twice and collects 1 + 1 = 2 in each "
              "entry.")


# -------------------------------------------------------------------------- softmax_jacobian

def _jacobian_case(label, p):
    p = np.asarray(p, dtype=float)

    def want():
        torch = import_torch()
        z = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), -1000.0)  # softmax(z) = p
        return torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), torch.as_tensor(z)).numpy()

    hint = known_mistakes(
        (lambda: np.diag(p) + np.outer(p, p), "Your off-diagonal entries are positive and your rows sum to 2 p_i, "
                                              "not 0: raising z_j cannot raise another probability, since all of "
                                              "them share a total of 1."),
        (lambda: -np.outer(p, p), "Your diagonal entries are negative and your rows sum to -p_i, not 0: raising z_i "
                                  "must raise p_i itself."),
        (lambda: np.diag(p), "Your off-diagonal entries are all 0 and your rows sum to p_i, not 0: raising one "
                             "logit must lower every other probability."),
        (lambda: np.diag(p * (1 - p)), "Your off-diagonal entries are all 0 (the diagonal is right): raising one "
                                       "logit must lower every other probability, so that each row sums to 0."),
        (lambda: np.diag(p) - np.outer(p, p) - np.diag(p * p), "Your diagonal is too small by p_i^2 and your rows "
                                                               "sum to -p_i^2, not 0: count how many times the "
                                                               "diagonal loses p_i^2."),
        (lambda: np.eye(len(p)) - np.outer(p, p), "Your diagonal entries are near 1 even where p_i is 0, and your rows "
                                                  "sum to 1 - p_i: a probability of 0 cannot move at all, so its row "
                                                  "must be 0."),
    )
    return Case(label, call_with(p), want, close(dtype="f"), hints=[hint])


@check
def softmax_jacobian(hidden, rng):
    if not hidden:
        return [
            _jacobian_case("softmax_jacobian([1/3, 2/3]) is [[2/9, -2/9], [-2/9, 2/9]]", [1 / 3, 2 / 3]),
            _jacobian_case("softmax_jacobian(softmax([2, 1, 0]))", stable_softmax([2.0, 1.0, 0.0])),
            _jacobian_case("softmax_jacobian([0.25, 0.25, 0.25, 0.25])", [0.25] * 4),
        ]
    return [
        _jacobian_case("softmax_jacobian of a random distribution over 6 tokens", rng.dirichlet(np.ones(6))),
        _jacobian_case("softmax_jacobian of a one-hot distribution (saturated: J = 0)", np.eye(4)[1]),
        _jacobian_case("softmax_jacobian of a distribution over 2 tokens", rng.dirichlet(np.ones(2))),
    ]


predict_jacobian_row_sum = ask(
    "predict_jacobian_row_sum", form=a_number, compare=close(atol=1e-9, rtol=0.0), mistakes=[
        (1.0, "The probabilities sum to 1, so their changes sum to 0: raising a logit moves probability "
              "between tokens, it cannot create any. (Adding the same amount to every logit changes "
              "nothing: the row sum.)"),
        (-1.0, "The probabilities always sum to 1, so whatever a logit does, their changes cancel: the sum "
               "is 0, neither gained nor lost.")],
    otherwise="Every row and column of the softmax Jacobian sums to 0: the probabilities always sum to 1, so their "
              "changes cancel.")


# ------------------------------------------------------------------------ bigram_train_step

BIGRAM_HINTS = {
    "swapped": "x and y are swapped: look up the rows of the current characters x, and score them against the "
               "next characters y (cross_entropy(embedding_lookup(W, x), y)).",
    "loss_after": "Return the loss at W before the step (the one whose gradient you followed), not the loss "
                  "recomputed after the update.",
    "assigned": "The gradient of the table loses repeated ids: rows of repeated ids must add up (np.add.at, or "
                "your embedding_backward), not G[x] = grad_logits.",
    "t_is_one": "Pass the step number t on to adamw_step: its bias correction depends on t, and with t = 1 at "
                "every step the steps stay too large.",
    "defaults": "Pass lr and weight_decay on to adamw_step; without them it uses its own defaults (lr=1e-3, "
                "weight_decay=0.01).",
}


# ----------------------------------------------------------------- bigram_counts (a bug hunt)
# The learner is given `counts[x, y] += 1`, whose buffered indexed addition counts a repeated pair once.

def _buffered(x, y, v):
    c = np.zeros((v, v))
    c[x, y] += 1
    return c


def _counts_case(label, x, y, v):
    x, y = np.asarray(x), np.asarray(y)
    want = np.zeros((v, v))
    for a, b in zip(x, y):  # the plainest count there is, independent of the reference
        want[a, b] += 1
    distinct = int((want > 0).sum())
    hint = known_mistakes(
        (lambda: _buffered(x, y, v),
         f"Your table adds up to {distinct}, not {len(x)}: it holds fewer counts than there are pairs. Compare "
         "each entry with how often its pair occurs in x and y."),
        (lambda: want.T, "The table is transposed: row a is the current id x, column b the next id y."),
        (lambda: (want > 0) * 1.0, f"Every seen pair counts 1: a pair that occurs k times must count k (the table "
                                   f"sums to {len(x)})."),
    )
    return Case(label, call_with(x, y, v), lambda: want, close(dtype="f"), hints=[hint])


@check
def bigram_counts(hidden, rng):
    if not hidden:
        return [
            _counts_case("bigram_counts([0, 0], [1, 1], 3)", [0, 0], [1, 1], 3),
            _counts_case("bigram_counts([0, 1, 0, 2, 0], [1, 2, 1, 0, 2], 3)", [0, 1, 0, 2, 0], [1, 2, 1, 0, 2], 3),
            _counts_case("bigram_counts([2, 1], [0, 2], 4): id 3 never occurs", [2, 1], [0, 2], 4),
        ]
    v = 5
    x = rng.integers(0, v, size=60)
    return [_counts_case(f"bigram_counts of 60 random pairs over {v} ids", x, rng.integers(0, v, size=60), v),
            _counts_case("bigram_counts of one pair repeated 7 times", np.full(7, 3), np.full(7, 1), v)]


def _bigram_case(label, W0, x, y, steps, lr=0.1, weight_decay=0.0):
    W0, x, y = np.asarray(W0, dtype=float), np.asarray(x), np.asarray(y)

    def run(fn):
        W, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
        losses, trajectory = [], []
        for t in range(1, steps + 1):
            result = fn(W, x.copy(), y.copy(), m, v, t, lr=lr, weight_decay=weight_decay)
            if not (isinstance(result, tuple) and len(result) == 4):
                raise TypeError(f"bigram_train_step must return a tuple (loss, W, m, v), got "
                                f"{type(result).__name__}"
                                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
            loss, W, m, v = result
            W, m, v = (np.array(a, dtype=float) for a in (W, m, v))
            losses.append(float(loss))
            trajectory.append(W.copy())
        return np.array(losses), np.stack(trajectory), m, v

    def want():
        torch = import_torch()
        F = torch.nn.functional
        E = _leaf(W0)
        opt = torch.optim.AdamW([E], lr=lr, weight_decay=weight_decay)
        xt, yt = torch.as_tensor(x), torch.as_tensor(y)
        losses, trajectory = [], []
        for _ in range(steps):
            loss = F.cross_entropy(F.embedding(xt, E), yt)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            trajectory.append(_np(E))
        state = opt.state[E]
        return np.array(losses), np.stack(trajectory), _np(state["exp_avg"]), _np(state["exp_avg_sq"])

    hint = known_mistakes(*((lambda v=variant: bigram_numpy(W0, x, y, steps, lr, weight_decay, v), message)
                            for variant, message in BIGRAM_HINTS.items()), atol=1e-9, rtol=1e-7)
    label = f"{label} (item 0: the loss at each of the {steps} steps, item 1: W after each step, then m and v)"
    return Case(label, run, want, close(atol=1e-9, rtol=1e-7, dtype="f"), hints=[hint])


@check
def bigram_train_step(hidden, rng):
    if not hidden:
        # V = 4 characters; x repeats ids so that rows collect several gradients
        x = np.array([0, 1, 1, 2, 0, 1, 3, 1])
        y = np.array([1, 2, 3, 0, 1, 1, 0, 2])
        return [
            _bigram_case("10 bigram_train_steps from a zero table (V = 4, 8 pairs), lr=0.1, against nn.Embedding "
                         "and torch.optim.AdamW", np.zeros((4, 4)), x, y, 10),
            _bigram_case("5 bigram_train_steps from a random table with lr=0.05, weight_decay=0.1",
                         np.arange(16.0).reshape(4, 4) % 5 - 2, x, y, 5, lr=0.05, weight_decay=0.1),
        ]
    V = 6
    return [
        _bigram_case("8 bigram_train_steps on 20 random pairs, V = 6", rng.normal(size=(V, V)),
                     rng.integers(0, V, size=20), rng.integers(0, V, size=20), 8, lr=0.2),
        _bigram_case("6 bigram_train_steps with weight_decay=0.5 on pairs with one repeated character",
                     rng.normal(size=(V, V)), np.full(7, 2), rng.integers(0, V, size=7), 6, lr=0.1, weight_decay=0.5),
    ]



predict_overfit_floor = ask(
    "predict_overfit_floor", form=a_number, compare=close(atol=0.01, rtol=0.0), atol=0.01,
    rtol=0.0, mistakes=[
        (0.0, "The loss cannot reach 0: after 'a' the batch continues with 'n' twice and 't' once, and "
              "one row of logits serves all three. The best is P(n|a) = 2/3, P(t|a) = 1/3: "
              "-(2 ln 2/3 + ln 1/3) / 4 = 0.477."),
        (-(2 * np.log(2 / 3) + np.log(1 / 3)) / 3,
         "Average over all four pairs: b -> e is predicted perfectly and adds a loss of 0, so divide by 4."),
        (-(2 * np.log2(2 / 3) + np.log2(1 / 3)) / 4, "That is the right floor in bits (log2); losses here are "
                                                     "in nats, with the natural log: 0.477."),
        (-(2 * np.log(2 / 3) + np.log(1 / 3) + 2 * np.log(0.5)) / 4,
         "'b' is always followed by 'e' in this batch, so P(e|b) = 1 costs nothing.")],
    otherwise="The best table predicts the batch's own frequencies: P(n|a) = 2/3, P(t|a) = 1/3, P(e|b) = 1, a mean "
              "loss of -(2 ln 2/3 + ln 1/3) / 4 = 0.477.")


# ---------------------------------------------------------------------- predict_validation_turn
# The full training run (300 steps of AdamW, no weight decay, full batch): the validation loss is lowest before
# step 117 (2.174) and then rises a little, to 2.178 at step 300, while the training loss keeps falling.

VALIDATION_ENDS = ("still falling", "lowest earlier, then rising")

predict_validation_turn = ask(
    "predict_validation_turn", form=one_of(VALIDATION_ENDS), mistakes=[
        ("still falling", "The training loss keeps falling, but validation is lowest before step 117 and then rises a "
                          "little: with no weight decay and no smoothing, every step pushes the pairs the training "
                          "text never holds further towards probability 0, and the validation text holds some of "
                          "them. More steps fit the training text's quirks, not the language.")],
    otherwise="Validation is lowest before step 117 and then rises a little, while the training loss keeps falling.")


# ---------------------------------------------------------------------- predict_generated_text
# 200 characters sampled from the trained table (seed 0): none of its 200 letter pairs is missing from the
# training text, and 1 of its 20 words of four or more letters is a word of that text (seeds 0 to 4: 0 unseen
# pairs, at most 1 such word).

GENERATED = ("real words", "real pairs, not words", "unseen pairs")

predict_generated_text = ask(
    "predict_generated_text", form=one_of(GENERATED), mistakes=[
        ("real words", "The table sees one character of context: it knows which letter tends to follow which, and "
                       "nothing of the letters before that. Pairs come out right, and short words such as 'the' "
                       "happen, but a word of four or more letters needs more than its last letter."),
        ("unseen pairs", "After training, the pairs the training text never has get logits far below the others: "
                         "they share about 0.2 % of a row's probability, so 200 draws hardly ever pick one.")],
    otherwise="Real letter pairs, and next to no real words: the model sees one character of context.")


# ---------------------------------------------------------------------- predict_neural_vs_counting
# After the full run, the neural table's validation loss (2.1779) against the smoothed counting model's (2.1715),
# above after 30 steps too (2.2124). Of the 551 validation pairs, 4 never occur in training: they add 0.0664 to the
# neural table's mean and 0.0493 to the counting model's; on the other 547 the neural table is lower (2.1115 against
# 2.1222), because smoothing spends about 3 % of a row on pairs it never saw, the neural table about 0.2 %.

AGAINST_COUNTING = ("below", "the same to 4 decimals", "above")

predict_neural_vs_counting = ask(
    "predict_neural_vs_counting", form=one_of(AGAINST_COUNTING), mistakes=[
        ("below", "On the validation pairs that training also holds, the neural table does a little better, since "
                  "smoothing spends about 3 % of each row on pairs it never saw. But the few validation pairs the "
                  "training text lacks cost it more: with no weight decay every step pushes them towards probability "
                  "0, and about 0.2 % of a row is left for all of them. Those few pairs cost more than the rest gain."),
        ("the same to 4 decimals", "The two tables differ where unseen text needs them to: smoothing keeps a "
                                   "pseudo-count of 0.1 for every pair the training text lacks, while the neural "
                                   "table keeps pushing those pairs towards 0 with nothing to hold it back. The "
                                   "validation text holds some such pairs, so the losses part, by about 0.006.")],
    otherwise="Above, by about 0.006: with no weight decay the neural table leaves almost no probability on pairs the "
              "training text never has, and smoothing keeps some for them.")
