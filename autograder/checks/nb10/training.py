"""Learning and sampling: lm_loss, generate, the three prediction questions, and train_step."""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from ..compare import Case, close, describe, equal, predicate, raises
from ..evidence import Array
from ..hints import known_mistakes, numbers
from ..models.stand_ins import fake_models, sum_rule
from ..models.training import flat_params, reference_step, step_setup
from ..toolkit import TOL, import_torch, normal, tensor
from ..questions import int_in, is_, near, number_in, one_of
from .common import ask, check


# ------------------------------------------------------------------------------ lm_loss

LIBRARY_LOSS = ("lm_loss called PyTorch's own cross-entropy (F.cross_entropy, F.nll_loss or a loss module built "
                "on them), which does this exercise's whole job in one call, so the check switched it off: the "
                "loss here is yours, from the log-probabilities, as in notebook 04.")


@contextmanager
def _own_loss():
    """While the learner's lm_loss runs: PyTorch's ready-made losses refuse to work (the exercise is to build one)."""
    functional = import_torch().nn.functional
    saved = functional.cross_entropy, functional.nll_loss

    def refuse(*args, **kwargs):
        raise RuntimeError(LIBRARY_LOSS)

    functional.cross_entropy = functional.nll_loss = refuse
    try:
        yield
    finally:
        functional.cross_entropy, functional.nll_loss = saved


def _ce_np(logits, targets):
    z = logits.astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, targets[..., None], -1).mean())


def _loss_hint(logits, targets, grad=False):
    B, T, V = logits.shape

    def softmax_first():
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        return _ce_np(probs / probs.sum(-1, keepdims=True), targets)

    wrong = known_mistakes(
        (lambda: _ce_np(logits[:, :-1], targets[:, 1:]) if T > 1 else math.nan,
         "Your loss pairs the scores at position t with the target at t + 1: the targets were shifted a "
         "second time, though they already are the next tokens."),
        (softmax_first,
         "Your loss stays near ln V even where the logits are confident: the scores were turned into "
         "probabilities twice (a softmax before the log-softmax)."),
        (lambda: _ce_np(logits.reshape(-1, V), targets.T.reshape(-1)),
         "Each score met another position's target: the logits and the targets were laid out in different "
         "orders (one of them transposed before it was flattened)."),
        atol=0.0, rtol=1e-4)

    def hint(got, want):
        g, w = getattr(got, "data", None), want.data
        if g is None or g.shape != w.shape:
            return None
        for factor, message in [(B * T, _SUMMED), (B, _PER_BATCH), (T, _PER_POSITION)]:
            if factor != 1 and np.allclose(g, w * factor, rtol=1e-3, atol=1e-6):
                return message
        if grad:
            return None
        if not np.isfinite(g).all():
            return ("An infinite loss: a probability rounded to 0 before its logarithm was taken, which large "
                    "logits make softmax do (the log-probabilities need a stable log-softmax).")
        return wrong(got, want)
    return hint


_SUMMED = "The loss is B * T times too large: it is summed over the positions, where each should weigh 1 / (B * T)."
_PER_BATCH = ("The loss is B times too large: it is averaged over the positions of each sequence, then summed over "
              "the batch.")
_PER_POSITION = ("The loss is T times too large: it is averaged over the batch at each position, then summed over "
                 "the positions.")


def _loss_case(label, logits, targets):
    def call(fn):
        torch = import_torch()
        with _own_loss():
            return fn(tensor(logits), torch.tensor(targets))

    def want():
        torch = import_torch()
        V = logits.shape[-1]
        return torch.nn.functional.cross_entropy(tensor(logits).reshape(-1, V), torch.tensor(targets).reshape(-1))

    return Case(label, call, want, close(**TOL), hints=[_loss_hint(logits, targets)])


def _loss_grad_case(label, logits, targets):
    def grad_of(fn):
        torch = import_torch()
        z = tensor(logits).requires_grad_(True)
        fn(z, torch.tensor(targets)).backward()
        return z.grad

    def yours(fn):
        with _own_loss():
            return grad_of(fn)

    def want():
        torch = import_torch()
        V = logits.shape[-1]
        return grad_of(lambda z, t: torch.nn.functional.cross_entropy(z.reshape(-1, V), t.reshape(-1)))

    return Case(label, yours, want, close(atol=1e-6, rtol=1e-4, kind="tensor"),
                hints=[_loss_hint(logits, targets, grad=True)])


LOSS_MESSAGES = {
    "ignore_unused": "The ignored positions changed the loss: a target equal to `ignore` (padding) still earned or "
                     "cost something, so the model would be trained to predict filler.",
    "all_positions": "The loss is smaller than it should be by the share of ignored positions: the ignored ones "
                     "were left out of the sum but still counted in the number you divided by.",
    "summed_counted": "The loss grows with the number of counted positions: it is their sum, not their mean.",
}


def _ce_kept(logits, targets, ignore):
    keep = targets != ignore
    return _ce_np(logits[keep][None], targets[keep][None])


def _ignore_case(label, logits, targets, ignore):
    B, T, V = logits.shape
    keep = targets != ignore

    def call(fn):
        torch = import_torch()
        with _own_loss():
            return fn(tensor(logits), torch.tensor(targets), ignore=ignore)

    def want():
        torch = import_torch()
        return torch.nn.functional.cross_entropy(tensor(logits).reshape(-1, V), torch.tensor(targets).reshape(-1),
                                                 ignore_index=ignore)

    n = int(keep.sum())
    wrong = known_mistakes(
        (lambda: _ce_np(logits, targets), LOSS_MESSAGES["ignore_unused"]),
        (lambda: _ce_kept(logits, targets, ignore) * n / (B * T), LOSS_MESSAGES["all_positions"]),
        (lambda: _ce_kept(logits, targets, ignore) * n, LOSS_MESSAGES["summed_counted"]),
        atol=0.0, rtol=1e-4)
    return Case(label, call, want, close(**TOL), hints=[wrong])


def _swapped_targets_case(label, B, T, V):
    def call(fn):
        torch = import_torch()
        with _own_loss():
            return fn(torch.zeros(B, T, V), torch.zeros(T, B, dtype=torch.long))

    return Case(label, call, raises(f"lm_loss takes targets (B, T) = ({B}, {T}), got ({T}, {B}): the B * T ids line "
                                    "up, so a loss would come out, pairing scores with other positions' targets"),
                close(**TOL))


def _pad_targets(rng, B, T, V, ignore, n_pad):
    targets = rng.integers(0, V, size=(B, T))
    targets[targets == ignore] = (ignore + 1) % V
    targets[-1, T - n_pad:] = ignore  # the last sentence is the shortest: padding at its end
    targets[0, T - 1] = ignore
    return targets


@check
def lm_loss(hidden, rng):
    if not hidden:
        return [
            _loss_case("lm_loss of uniform logits (2, 4, 27): ln 27 = 3.2958", np.zeros((2, 4, 27), np.float32),
                       rng.integers(0, 27, size=(2, 4))),
            _loss_case("lm_loss(logits (2, 3, 5), targets (2, 3))", normal(rng, 2, 3, 5, scale=2.0),
                       rng.integers(0, 5, size=(2, 3))),
            _loss_grad_case("the gradient of lm_loss with respect to logits (3, 4, 6) (torch.autograd): the loss "
                            "must be a tensor built from the logits", normal(rng, 3, 4, 6), rng.integers(0, 6, size=(3, 4))),
            _ignore_case("lm_loss(logits (2, 5, 7), targets (2, 5) with 4 of them padding, ignore=0): the mean over "
                         "the 6 counted positions", normal(rng, 2, 5, 7, scale=2.0), _pad_targets(rng, 2, 5, 7, 0, 3), 0),
            _swapped_targets_case("lm_loss(logits (2, 3, 5), targets (3, 2)): a ValueError", 2, 3, 5),
        ]
    return [
        _loss_case("lm_loss(logits (4, 6, 11) with entries up to 100, targets (4, 6))", normal(rng, 4, 6, 11, scale=40.0),
                   rng.integers(0, 11, size=(4, 6))),
        _loss_case("lm_loss(logits (1, 1, 3), targets (1, 1))", normal(rng, 1, 1, 3), rng.integers(0, 3, size=(1, 1))),
        _loss_grad_case("the gradient of lm_loss for logits (2, 5, 7)", normal(rng, 2, 5, 7), rng.integers(0, 7, size=(2, 5))),
        _ignore_case("lm_loss(logits (3, 6, 9), targets (3, 6) with padding, ignore=4)", normal(rng, 3, 6, 9, scale=3.0),
                     _pad_targets(rng, 3, 6, 9, 4, 4), 4),
        _swapped_targets_case("lm_loss(logits (4, 2, 3), targets (2, 4)): a ValueError", 4, 2, 3),
    ]


# ------------------------------------------------------------------------------ generate

def _greedy_case(label, prompt, n, V, ctx):
    def call(fn):
        torch = import_torch()
        return fn(fake_models()[0](V, ctx), torch.tensor(prompt), n, temperature=0.0)

    def want():
        return import_torch().tensor(sum_rule(prompt, n, V, ctx))

    first = [list(map(int, r)) for r in prompt]
    for row in first:
        for _ in range(n):
            row.append(sum(row[:ctx]) % V)

    def hint(got, want):
        g = getattr(got, "data", None)
        if g is None:
            return None
        if g.shape == (len(prompt), n):
            return "Return the whole sequence: the prompt ids followed by the new tokens, (B, T + max_new_tokens)."
        if g.tolist() == first:
            return ("The context keeps the first context_len tokens: keep the last ones, ids[:, -context_len:], "
                    "and predict from the logits of the last position.")
        if g.shape == want.data.shape and g[:, : len(prompt[0])].tolist() == want.data[:, : len(prompt[0])].tolist():
            return ("The new tokens differ: predict from the logits of the last position, logits[:, -1, :], "
                    "and take their argmax when temperature is 0.")
        return None

    return Case(label, call, want, equal(), hints=[hint])


def _argmax_case(label, logits, batch, n):
    def call(fn):
        torch = import_torch()
        return fn(fake_models()[1](logits), torch.zeros(batch, 1, dtype=torch.long), n, temperature=0.0,
                  generator=torch.Generator().manual_seed(0))

    def want():
        torch = import_torch()
        out = torch.full((batch, n + 1), int(np.argmax(logits)), dtype=torch.long)
        out[:, 0] = 0
        return out

    def hint(got, want):
        g = getattr(got, "data", None)
        if g is not None and g.shape == want.data.shape and len(np.unique(g[:, 1:])) > 1:
            return "At temperature 0 generation is greedy: take the argmax of the logits, do not sample."
        return None

    return Case(label, call, want, equal(), hints=[hint])


def _sampling_case(label, logits, temperature, batch, n, seed):
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z / temperature - (z / temperature).max())
    p = p / p.sum()

    def call(fn):
        torch = import_torch()
        return fn(fake_models()[1](list(logits)), torch.full((batch, 1), 1, dtype=torch.long), n,
                  temperature=temperature, generator=torch.Generator().manual_seed(seed))

    def test(got, want):
        g = getattr(got, "data", None)
        if g is None or g.shape != (batch, n + 1):
            return f"expected a tensor of shape {(batch, n + 1)}, got {getattr(g, 'shape', type(got).__name__)}."
        if not (g[:, 0] == 1).all():
            return "the prompt ids must stay at the start of the result."
        new = g[:, 1:].ravel().astype(int)
        if new.min() < 0 or new.max() >= len(p):
            return f"generated ids outside [0, {len(p)})."
        freq = np.bincount(new, minlength=len(p)) / new.size
        sigma = np.sqrt(p * (1 - p) / new.size)
        if np.all(np.abs(freq - p) <= 5 * sigma + 1e-9):
            return None
        msg = (f"the sampled frequencies {np.round(freq, 3).tolist()} do not follow softmax(logits / temperature) = "
               f"{np.round(p, 3).tolist()}.")
        if freq.max() == 1.0:
            return msg + " Every sample is the same token: at temperature > 0 sample with torch.multinomial, not argmax."
        raw = np.exp(z - z.max())
        if np.all(np.abs(freq - raw / raw.sum()) <= 5 * sigma + 1e-9):
            return msg + " They follow softmax(logits): divide the logits by the temperature first."
        return msg

    return Case(label, call, lambda: p, predicate(test))


def _reproducible_case(label):
    def call(fn):
        torch = import_torch()
        outs = []
        with torch.random.fork_rng(devices=[]):
            for global_seed in (11, 12):
                torch.manual_seed(global_seed)  # a different global state each time
                outs.append(fn(fake_models()[1]([0.0, 0.5, 1.0, 1.5]), torch.zeros(4, 1, dtype=torch.long), 8,
                               temperature=1.0, generator=torch.Generator().manual_seed(5)))
        return tuple(outs)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2 and all(hasattr(g, "data") for g in got)):
            return "expected a tensor from each call."
        a, b = got[0].data, got[1].data
        if a.shape == b.shape == (4, 9) and np.array_equal(a, b):
            return None
        return ("two calls with generators seeded alike gave different samples: pass generator=generator to "
                "torch.multinomial, so the global random state does not matter.")

    return Case(label, call, lambda: None, predicate(test))


@check
def generate(hidden, rng):
    if not hidden:
        return [
            _greedy_case("generate(model, [[1, 2, 3]], 5, temperature=0) where the model's next token is the sum of "
                         "its context mod 10 and context_len = 4: expected [[1, 2, 3, 6, 2, 3, 4, 5]]",
                         [[1, 2, 3]], 5, 10, 4),
            _greedy_case("generate(model, ids (2, 2), 3, temperature=0), the same model", [[4, 5], [0, 9]], 3, 10, 4),
            _argmax_case("generate at temperature 0 with logits [0, ln 2, ln 0.5] at every step: always token 1",
                         [0.0, math.log(2), math.log(0.5)], 20, 2),
            _sampling_case("generate(model, ids (3000, 1), 2, temperature=1.0, generator=...) with logits "
                           "[0, ln 2, ln 0.5]: frequencies about [0.286, 0.571, 0.143]",
                           (0.0, math.log(2), math.log(0.5)), 1.0, 3000, 2, 0),
            _sampling_case("the same at temperature=0.5: softmax(logits / 0.5), about [0.19, 0.762, 0.048]",
                           (0.0, math.log(2), math.log(0.5)), 0.5, 3000, 2, 1),
            _reproducible_case("two calls with torch.Generator().manual_seed(5) give the same tokens"),
        ]
    return [
        _greedy_case("generate(model, ids (3, 4), 7, temperature=0), vocab 13, context_len 5",
                     rng.integers(0, 13, size=(3, 4)).tolist(), 7, 13, 5),
        _greedy_case("generate(model, ids (1, 6), 2, temperature=0): a prompt longer than context_len 3",
                     rng.integers(0, 7, size=(1, 6)).tolist(), 2, 7, 3),
        _argmax_case("generate at temperature 0, logits [1, 0.2, 1.1, -1]", [1.0, 0.2, 1.1, -1.0], 40, 3),
        _sampling_case("generate(..., temperature=2.0) with logits [1, 0, -1, 0.5]", (1.0, 0.0, -1.0, 0.5), 2.0, 2000, 3,
                       int(rng.integers(1000))),
        _reproducible_case("two calls with equally seeded generators give the same tokens"),
    ]


# ---------------------------------------------------------------------------- questions

predict_ffn_share = ask(
    "predict_ffn_share", label="predict_ffn_share(): the share of ff in the parameters of DecoderBlock(768, 12, 3072)",
    form=number_in(0, 1), compare=close(atol=0.02, rtol=0),
    mistakes=[(near(1 / 3, 0.04), "That is attention's share, not the feed-forward network's: attention has four d x d "
                                  "matrices (4 d^2), the network two d x 4d ones (8 d^2), twice as many: about 2/3."),
              (near(0.5, 0.04), "The two are not equal: attention's four matrices are d x d (4 d^2 in all), the "
                                "feed-forward network's two are d x 4d (8 d^2): it holds about 2/3."),
              (lambda got: numbers(got) is not None and float(numbers(got)) < 0.3,
               "Attention is the famous part, not the large one: its four d x d matrices hold 4 d^2 weights, the "
               "feed-forward network's two d x 4d matrices 8 d^2: the network has about 2/3 of the block.")],
    otherwise="Count in units of d^2: attention 4 (four d x d projections), feed-forward 8 (two d x 4d matrices); "
              "biases and norms are O(d). So the feed-forward share is about 8 / 12 = 2/3.")


predict_changed_positions = ask(
    "predict_changed_positions",
    label="predict_changed_positions(): positions (of 8) whose logits change when only the token at "
          "position 5 is replaced",
    form=int_in(0, 8), compare=equal(),
    mistakes=[(is_(8), "Attention mixes positions, but only backwards: under the causal mask positions 0 .. 4 never "
                       "read position 5, so their logits cannot move. Only 5, 6 and 7 change."),
              (is_(1), "Position 5's own logits change, but so do those of positions 6 and 7, which read position 5 "
                       "through attention: 3 positions."),
              (is_(2), "Positions 6 and 7 read position 5, and position 5's own logits change too (its input did): "
                       "3 positions."),
              (is_(5), "Positions 0 .. 4 come before position 5 and cannot read it (causal mask); the ones that change "
                       "are 5, 6 and 7."),
              (is_(6), "Positions 0 .. 5 would be 'up to and including 5', but the mask works the other way: a position "
                       "reads the past, so the change reaches 5 and the positions after it, 6 and 7.")],
    otherwise="Under the causal mask a change at position 5 reaches position 5 and every later position, 6 and 7: 3.")


NO_POSITION_CHOICES = ("bigram", "halfway", "entropy rate")


predict_no_positions = ask(
    "predict_no_positions", label="predict_no_positions(): where the model without positions lands",
    form=one_of(NO_POSITION_CHOICES), compare=equal(),
    mistakes=[(is_("bigram"), "Without positions attention is not a bag of words here: the causal mask breaks its "
                              "symmetry (a position reads exactly the tokens before it, so the size of its context "
                              "leaks into the output), and each word of this grammar shows its role. The model still "
                              "finds the subject for the verb: it lands near the entropy rate."),
              (is_("halfway"), "It does better than that: the causal mask gives a sense of order (each position reads "
                               "only the tokens before it), and in this grammar each word shows its role, so positions "
                               "add little: the model lands near the entropy rate.")])



LONGER_CHOICES = ("sinusoidal", "rope", "both", "neither")
_SINUSOIDAL_UNSEEN = ("the sinusoidal model has a vector for positions 32 to 63 (its table is a formula) but no "
                      "training window ever showed those vectors to it: its layers misread them, and its loss there "
                      "jumps far above the bigram baseline.")

predict_longer_windows = ask(
    "predict_longer_windows",
    label="predict_longer_windows(): which model keeps its loss on positions 32 to 63 of a 64-token window",
    form=one_of(LONGER_CHOICES), compare=equal(),
    mistakes=[(is_("sinusoidal"), "It is the other way round: " + _SINUSOIDAL_UNSEEN + " The rotary model's scores "
                                  "depend only on offsets, and the short ones that matter here were all trained."),
              (is_("both"), "Only the rotary model keeps it: " + _SINUSOIDAL_UNSEEN),
              (is_("neither"), "The rotary model keeps it (within a few hundredths): a score depends only on the "
                               "offset between query and key, and the offsets that matter in this grammar, a few "
                               "tokens back, were all seen in training, wherever they occur.")])

SWITCH_COUNT_WHY = {  # why a count is off, from the measurement the notebook shows beside the reveal
    "high": "Most parts do not show their worth in 40 steps: without the final LayerNorm, the scaling or the "
            "positions the loss stays within 0.1 (or drops). Only the two that guard the start of training in "
            "a deep stack fail at once: the residual connections, and the warm-up that post-norm needs: 2.",
    "low": "Two switches stall the stack near the unigram baseline within 40 steps: no residual connections "
           "(the gradient has no path around the sub-layers) and post-norm without warm-up (every path crosses "
           "a LayerNorm, and the first full-rate steps derail it): 2.",
}


predict_harmful_switches = ask(
    "predict_harmful_switches",
    label="predict_harmful_switches(): how many of the five switches raise the loss after 40 steps by more than 0.1",
    form=int_in(0, 5), compare=equal(),
    mistakes=[(lambda got: numbers(got) is not None and float(numbers(got)) > 2, SWITCH_COUNT_WHY["high"]),
              (lambda got: numbers(got) is not None and float(numbers(got)) < 2, SWITCH_COUNT_WHY["low"])])


# --------------------------------------------------------------------------- train_step

STEP_MESSAGES = {  # symptoms and their likely cause, never the line to write
    "no_zero_grad": "The step did not follow this batch's gradient alone: whatever .grad held "
                    "before the call (a previous step's gradients) took part in the update.",
    "no_clip": "The parameters moved further than a gradient of norm max_norm allows: the gradients the step used "
               "were never capped (capping them after the step is too late: the step has already used them).",
    "clip_value": "The step's direction is not this batch's gradient direction: each entry was capped on its own, "
                  "which bends the direction; the cap belongs on the norm of all the gradients together.",
}


def _step_case(label, seed, max_norm):
    def call(fn):
        model, opt, xb, yb = step_setup(seed)
        loss = fn(model, opt, xb, yb, max_norm)
        return loss, flat_params(model)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2):
            return f"expected the loss, got {describe_short(got)}."
        loss, params = got
        if isinstance(loss, Array) and loss.kind == "tensor":
            return ("returned the loss as a tensor: return it as a Python float (a tensor would keep the whole "
                    "computation graph alive and cannot be averaged with NumPy).")
        if not isinstance(loss, float):
            return f"expected the loss as a float, got {describe_short(loss)}."
        w_loss, w_params = want
        if not math.isclose(loss, w_loss, rel_tol=1e-5, abs_tol=1e-6):
            return f"returned loss {loss:.6f}, expected {w_loss:.6f} (the mean lm_loss of the batch before the step)."
        g, w = numbers(params), numbers(w_params)
        if g is not None and w is not None and g.shape == w.shape and np.allclose(g, w, atol=1e-5, rtol=1e-4):
            return None
        return "the parameters after the step differ from one clipped step."

    hint = known_mistakes(*((lambda n=n: reference_step(seed, max_norm, n)[1], STEP_MESSAGES[n])
                            for n in STEP_MESSAGES), atol=1e-5, rtol=1e-4)
    return Case(label, call, lambda: reference_step(seed, max_norm), predicate(test),
                hints=[lambda got, want: hint(got[1], want[1]) if isinstance(got, tuple) and len(got) == 2 else None])


def describe_short(value):
    return describe(value)


PIECES_MESSAGES = {  # the batch run in pieces: symptoms and their likely cause, never the line to write
    "unscaled": "Run in pieces, the step is larger than the whole batch's, by the number of pieces: each piece's "
                "loss is a mean over its own part, so adding their gradients counts the batch that many times.",
    "step_each_piece": "Run in pieces, the parameters moved once per piece: the whole batch makes one update, taken "
                       "after every piece has added its gradient.",
    "zero_each_piece": "Run in pieces, the update follows the last piece alone: the earlier pieces' gradients were "
                       "thrown away before the step.",
}


def _pieces_reference(seed, B, max_norm, pieces, variant=None):
    """One clipped step of the whole batch (variant None), or the batch run in pieces with one known mistake."""
    torch = import_torch()
    model, opt, xb, yb = step_setup(seed, B=B)
    ce = lambda x, y: torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())  # noqa: E731
    if variant is None:
        opt.zero_grad()
        loss = ce(xb, yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
        return loss.item(), flat_params(model)
    opt.zero_grad()
    losses = []
    for x, y in zip(xb.chunk(pieces), yb.chunk(pieces)):
        if variant == "zero_each_piece":
            opt.zero_grad()
        loss = ce(x, y) if variant == "unscaled" else ce(x, y) / pieces
        loss.backward()
        losses.append(loss.item())
        if variant == "step_each_piece":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
            opt.zero_grad()
    if variant != "step_each_piece":
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
    return float(np.mean(losses) if variant == "unscaled" else np.sum(losses)), flat_params(model)


def _pieces_case(label, seed, B, max_norm, pieces):
    def call(fn):
        model, opt, xb, yb = step_setup(seed, B=B)
        loss = fn(model, opt, xb, yb, max_norm, pieces=pieces)
        return loss, flat_params(model)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2):
            return f"expected the loss, got {describe_short(got)}."
        loss, params = got
        if not isinstance(loss, float):
            return f"expected the loss as a float, got {describe_short(loss)}."
        w_loss, w_params = want
        if not math.isclose(loss, w_loss, rel_tol=1e-5, abs_tol=1e-6):
            return (f"returned loss {loss:.6f}, expected {w_loss:.6f} (the whole batch's mean lm_loss before the "
                    f"step, whatever the number of pieces).")
        g, w = numbers(params), numbers(w_params)
        if g is not None and w is not None and g.shape == w.shape and np.allclose(g, w, atol=1e-5, rtol=1e-4):
            return None
        return (f"the parameters after the step differ from those of one clipped step of the whole batch "
                f"(pieces=1): with pieces={pieces} the update must be the same.")

    hint = known_mistakes(*((lambda n=n: _pieces_reference(seed, B, max_norm, pieces, n)[1], PIECES_MESSAGES[n])
                            for n in PIECES_MESSAGES), atol=1e-5, rtol=1e-4)
    return Case(label, call, lambda: _pieces_reference(seed, B, max_norm, pieces), predicate(test),
                hints=[lambda got, want: hint(got[1], want[1]) if isinstance(got, tuple) and len(got) == 2 else None])


@check
def train_step(hidden, rng):
    if not hidden:
        return [_step_case("train_step on a small model with leftover gradients, SGD lr 0.1, max_norm=0.5 "
                           "(the gradient norm is larger: clipping acts)", 1, 0.5),
                _step_case("train_step with max_norm=1000 (clipping does nothing)", 2, 1000.0),
                _pieces_case("train_step, a batch of 4 in pieces=2, max_norm=1000 (clipping does nothing)",
                             3, 4, 1000.0, 2),
                _pieces_case("train_step, a batch of 4 in pieces=4, max_norm=0.5", 4, 4, 0.5, 4)]
    return [_step_case("train_step, max_norm=0.1", int(rng.integers(100, 1000)), 0.1),
            _step_case("train_step, max_norm=2.0", int(rng.integers(1000, 2000)), 2.0),
            _pieces_case("train_step, a batch of 6 in pieces=3, max_norm=1000", int(rng.integers(2000, 3000)), 6,
                         1000.0, 3),
            _pieces_case("train_step, a batch of 6 in pieces=2, max_norm=0.3", int(rng.integers(3000, 4000)), 6,
                         0.3, 2)]
