"""Your model is GPT-2: from_gpt2 loads a Hugging Face GPT-2 into a TinyGPT; and one rotation in two layouts,
interleaved_to_halves and to_llama_attention, make notebook 09's rotary attention Llama's.

Hugging Face's models are built only when a case runs (:class:`autograder.checks.models.gpt2.Gpt2Shape`), so
importing these checks does not import transformers.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, equal, raises
from ..hints import known_mistakes
from ..models.gpt2 import Gpt2Shape, gpt2_np, gpt2_params
from ..models.llama import halves_np, llama_attention, llama_np, llama_state_np
from ..models.torch_gpt import attention09
from ..toolkit import TOL, diagnose, import_torch, normal, tensor
from .common import ModelCase, _uses, check


# ------------------------------------------------------------------ your model is GPT-2 (and its attention Llama's)

GPT2_MESSAGES = {
    "not_transposed": "The attention weights were copied without a transpose: GPT-2's Conv1D stores a weight as "
                      "(in, out) and computes x @ W, nn.Linear stores (out, in) and computes x @ W.T, so copy "
                      "W.T (square matrices fit either way, which is why nothing complained).",
    "other_gelu": "The logits are off by about 1e-3, and that is not rounding (float32 agrees to about 1e-6): the "
                  "model uses the other GELU. GPT-2's activation_function 'gelu_new' is the tanh approximation, "
                  "gelu='tanh' (the exact GELU where GPT-2 uses tanh is the usual slip); 'gelu' is the exact one.",
    "positions_after_first_block": "The positions enter after the first block: GPT-2 adds wpe to wte before any "
                                   "block, as embed does; load wpe into pos_emb.",
    **{f"split_{''.join(order)}": "q, k and v were split from c_attn in the wrong order: its output columns hold q, "
                                  "then k, then v (c_attn.weight.split(n_embd, dim=1))."
       for order in ("qvk", "kqv", "kvq", "vqk", "vkq")},
}


def _conv1d_explained(exc):
    return RuntimeError(f"{exc}. GPT-2's Conv1D stores each weight as (in, out) (c_fc.weight is (n_embd, 4 n_embd)), "
                        "nn.Linear as (out, in): copy the transposed weight, W.T.")


def _learner_gpt2(fn, c, params):
    """The learner's from_gpt2 applied to a fresh Hugging Face model; shape errors get the Conv1D explanation."""
    hf = c.hf_model(params)
    try:
        model = fn(hf)
    except RuntimeError as exc:
        if "size" not in str(exc) and "shape" not in str(exc):
            raise
        raise _conv1d_explained(exc) from None
    if not callable(getattr(model, "eval", None)):
        raise TypeError(f"from_gpt2 returned {type(model).__name__}: return the TinyGPT it built")
    return model.eval(), hf


def _gpt2_case(label, c: Gpt2Shape, ids, rng):
    p = gpt2_params(rng, c)

    def call(fn):
        torch = import_torch()
        model, _ = _learner_gpt2(fn, c, p)
        with torch.no_grad():
            try:
                return model(torch.tensor(ids))
            except RuntimeError as exc:
                if "shape" not in str(exc) and "size" not in str(exc):
                    raise
                raise _conv1d_explained(exc) from None

    def want():
        torch = import_torch()
        with torch.no_grad():
            return c.hf_model(p)(torch.tensor(ids)).logits

    variants = {n: (lambda n=n: gpt2_np(p, c, ids, n)) for n in GPT2_MESSAGES}
    hint = known_mistakes(*((make, GPT2_MESSAGES[n]) for n, make in variants.items()), atol=3e-5, rtol=1e-5)
    return ModelCase(label, call, want, close(atol=1e-4, rtol=0, kind="tensor"),
                     hints=[hint, _uses("TinyGPT (with tie_weights and gelu), FeedForward and DecoderBlock")],
                     right=lambda: gpt2_np(p, c, ids), variants=variants)


def _greedy(forward, ids, n, context_len):
    torch = import_torch()
    ids = torch.tensor(ids)
    with torch.no_grad():
        for _ in range(n):
            nxt = forward(ids[:, -context_len:])[:, -1].argmax(-1, keepdim=True)  # (B, 1)
            ids = torch.cat([ids, nxt], dim=1)
    return ids


def _gpt2_greedy_case(label, c: Gpt2Shape, ids, n, rng):
    p = gpt2_params(rng, c)

    def call(fn):
        model, _ = _learner_gpt2(fn, c, p)
        return _greedy(model, ids, n, c.n_positions)

    def want():
        hf = c.hf_model(p)
        return _greedy(lambda x: hf(x).logits, ids, n, c.n_positions)

    return Case(label, call, want, equal(), hints=[lambda got, want: "Make the logits equal first (the case above "
                                                   "names the likely cause); equal logits give equal tokens."])


class _NamesField(close):
    """An expected ValueError whose message names the configuration field that cannot be represented."""

    def __init__(self, field):
        super().__init__()
        self.field = field

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" in got.raised and self.field not in got.message:
            self.fail(case, f"raised ValueError({got.message!r}): name the field, {self.field!r}, so the reader "
                            "knows which setting TinyGPT cannot follow.")
        super().__call__(got, want, case)


def _gpt2_refused_case(c: Gpt2Shape, rng):
    field, value = c.extra[0] if c.extra else ("activation_function", c.activation_function)
    p = gpt2_params(rng, c)

    def call(fn):
        model, _ = _learner_gpt2(fn, c, p)
        return type(model).__name__

    return Case(f"from_gpt2 of a GPT-2 with {field}={value!r}, which a TinyGPT cannot represent: a ValueError "
                f"naming {field!r}", call, raises(f"{field}={value!r} cannot be represented"), _NamesField(field))


@check
def from_gpt2(hidden, rng):
    if not hidden:
        small = Gpt2Shape(vocab_size=23, n_positions=12, n_embd=16, n_head=2, n_layer=2)
        return [
            _gpt2_case("from_gpt2(GPT2LMHeadModel(vocab 23, n_positions 12, n_embd 16, n_head 2, n_layer 2)): "
                       "logits on ids (2, 7) equal within 1e-4", small, rng.integers(0, 23, size=(2, 7)), rng),
            _gpt2_greedy_case("the same model, greedy: 6 new tokens after ids (1, 4), the Hugging Face model's",
                              small, rng.integers(0, 23, size=(1, 4)), 6, rng),
            _gpt2_case("from_gpt2 of a GPT-2 with n_inner=24 and layer_norm_epsilon=1e-3, logits on ids (1, 12)",
                       Gpt2Shape(17, 12, 8, 2, 1, n_inner=24, layer_norm_epsilon=1e-3),
                       rng.integers(0, 17, size=(1, 12)), rng),
            _gpt2_refused_case(Gpt2Shape(11, 8, 8, 2, 1, activation_function="relu"), rng),
        ]
    cases = []
    for i in range(3):  # configurations chosen by the run's seed; widths of 8 or more keep the GELU gap clear
        H = int(rng.choice([1, 2, 4]))
        c = Gpt2Shape(vocab_size=int(rng.integers(5, 40)), n_positions=int(rng.integers(4, 16)),
                      n_embd=H * int(rng.choice([8, 12, 16])) // (2 if H == 4 else 1), n_head=H,
                      n_layer=int(rng.integers(1, 4)), n_inner=None if i != 1 else int(rng.integers(24, 48)),
                      layer_norm_epsilon=float(rng.choice([1e-5, 1e-6, 1e-2])))
        T = int(rng.integers(3, c.n_positions + 1))  # one position would hide a q/k swap: its only weight is 1
        cases.append(_gpt2_case(f"from_gpt2 of a GPT-2 of your own ({c}), ids (2, {T})", c,
                                rng.integers(0, c.vocab_size, size=(2, T)), rng))
    c = Gpt2Shape(13, 10, 12, 3, 2)
    cases.append(_gpt2_greedy_case("from_gpt2, greedy continuation of ids (2, 3) for 7 tokens", c,
                                   rng.integers(0, 13, size=(2, 3)), 7, rng))
    cases.append(_gpt2_case("from_gpt2 of a GPT-2 with activation_function='gelu' (the exact GELU), ids (2, 6)",
                            Gpt2Shape(9, 6, 16, 2, 2, activation_function="gelu"), rng.integers(0, 9, size=(2, 6)), rng))
    cases.append(_gpt2_refused_case(Gpt2Shape(9, 6, 8, 2, 1, extra=(("scale_attn_by_inverse_layer_idx", True),)), rng))
    return cases


# ---------------------------------------------------------- one rotation, two layouts: Llama's attention

HALVES_MESSAGES = {
    "across_heads": "The rows were reordered across the whole matrix as if it were one head: each head's D rows "
                    "are reordered on their own (reshape to (n_heads, D // 2, 2, ...) first).",
    "inverse": "That is the inverse reordering (halves to interleaved): row i of the result is row 2i of w and row "
               "i + D/2 is row 2i + 1.",
    "columns": "The columns were reordered: the rows are the output features that rotate in pairs; the columns "
               "(the inputs) stay where they are.",
}


def _halves_case(label, w, n_heads):
    variants = {n: (lambda n=n: halves_np(w, n_heads, n)) for n in HALVES_MESSAGES}
    return Case(label, lambda fn: fn(tensor(w), n_heads), lambda: tensor(halves_np(w, n_heads)), close(**TOL),
                hints=[diagnose(variants, HALVES_MESSAGES)])


@check
def interleaved_to_halves(hidden, rng):
    if not hidden:
        by_hand = np.arange(8, dtype=np.float32)[:, None] * np.ones((1, 2), np.float32)
        return [_halves_case("interleaved_to_halves(w, 2), w (8, 2) whose row r holds r: rows [0, 2, 1, 3, 4, 6, 5, 7]",
                             by_hand, 2),
                _halves_case("interleaved_to_halves(w (12, 5), n_heads=2): D = 6", normal(rng, 12, 5), 2)]
    return [_halves_case("interleaved_to_halves(w (24, 24), n_heads=3)", normal(rng, 24, 24), 3),
            _halves_case("interleaved_to_halves(w (6, 4), n_heads=1)", normal(rng, 6, 4), 1),
            _halves_case("interleaved_to_halves(w (16, 3), n_heads=2)", normal(rng, 16, 3), 2)]


LLAMA_MESSAGES = {
    "no_permutation": "Llama's scores over the keys already differ from yours: its heads turn other pairs of query and "
                      "key features together than your attention does (a checkpoint converted like this loads "
                      "without an error and fails just as silently).",
    "v_permuted": "Llama's scores over the keys agree with yours, but its output does not: what the heads read out "
                  "of the values reaches o_proj with its features in another order than o_proj expects.",
    "across_heads": "Llama's scores differ, and not head by head: features of one head ended up in another head's "
                    "rows, though each head only ever turns its own D features.",
}


def _llama_case(label, d, H, base, x, rng):
    W = {n: normal(rng, d, d, scale=2 / np.sqrt(d)) for n in "qkvo"}

    def mha():
        torch = import_torch()
        module = attention09().MultiHeadAttention(d, H, bias=False, rope=True, rope_base=base)
        with torch.no_grad():
            for n in "qkvo":
                getattr(module, f"w_{n}").weight.copy_(tensor(W[n]))
        return module

    def call(fn):
        state = fn(mha())
        if not isinstance(state, dict):
            raise TypeError(f"to_llama_attention returned {type(state).__name__}: return a dict of the four weights")
        state = {k: (v.detach() if hasattr(v, "detach") else v) for k, v in state.items()}
        return llama_attention(state, tensor(x), H, base)

    def want():
        torch = import_torch()
        T = x.shape[1]
        with torch.no_grad():
            return mha()(tensor(x), mask=torch.ones(T, T, dtype=torch.bool).tril())

    variants = {n: (lambda n=n: llama_np(llama_state_np(W, H, n), x, H, base)) for n in LLAMA_MESSAGES}
    return ModelCase(label, call, want, close(**TOL), hints=[diagnose(variants, LLAMA_MESSAGES)],
                     right=lambda: llama_np(llama_state_np(W, H), x, H, base), variants=variants)


@check
def to_llama_attention(hidden, rng):
    if not hidden:
        return [_llama_case("LlamaAttention with to_llama_attention(MultiHeadAttention(8, 2, bias=False, rope=True)) "
                            "on x (1, 5, 8), causal: the same output", 8, 2, 10000.0, normal(rng, 1, 5, 8), rng),
                _llama_case("the same for MultiHeadAttention(24, 4, bias=False, rope=True, rope_base=100.0) on "
                            "x (2, 9, 24)", 24, 4, 100.0, normal(rng, 2, 9, 24), rng)]
    cases = []
    for _ in range(3):  # Llama attention configurations chosen by the run's seed
        H = int(rng.choice([2, 3, 4]))  # one head would hide a reordering across heads
        d = H * int(rng.choice([4, 6, 8]))  # a head of width 2 has nothing to reorder
        base = float(rng.choice([10.0, 500.0, 10000.0, 500000.0]))
        T = int(rng.integers(3, 10))
        cases.append(_llama_case(f"to_llama_attention, d_model {d}, {H} heads, rope_base {base:g}, x (2, {T}, {d})",
                                 d, H, base, normal(rng, 2, T, d), rng))
    return cases
