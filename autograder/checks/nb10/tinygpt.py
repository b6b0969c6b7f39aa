"""TinyGPT and its options: positions (learned, sinusoidal, rope), embed's start, the parameter count,
tie_weights, gelu and dropout, against PyTorch's layers with the same weights."""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, const, equal, fmt, raises
from ..hints import known_mistakes
from ..models.numpy_gpt import embed_np, gpt_np
from ..models.torch_gpt import torch_gpt
from ..models.weights import gpt_shapes, load, make_params
from ..toolkit import TOL, diagnose, import_torch, tensor
from .common import ModelCase, _uses, check
from .dropout import GPT_SITES, _block_modules, _block_sites, _dropout_hint, _dropout_kind, _eval_mode_hint, _watch


# ------------------------------------------------------------------------------ TinyGPT

GPT_MESSAGES = {
    "no_positions": "The logits ignore the positions: embed adds pos_emb(positions) (learned) or the rows of "
                    "pos_table (sinusoidal) to the token embeddings.",
    "no_final_norm": "The final LayerNorm is missing: apply ln_f before head.",
    "sin_cos_swapped": "The sinusoidal table has cos and sin swapped: build it with sinusoidal_positions "
                       "(sin at even features, cos at odd ones).",
    "rope_ignored": "The rope model's scores ignore the positions: build every block with rope=True "
                    "(DecoderBlock(..., rope=pos == 'rope')), so each attention layer rotates q and k.",
    "embed_no_start": "embed ignores start: the tokens sit at positions start .. start + T - 1, "
                      "torch.arange(start, start + T).",
}
POSITIONS = ("learned", "sinusoidal", "rope")


def _gpt_case(label, cfg, ids, rng, pos="learned"):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(cls):
        torch = import_torch()
        module = load(cls(*cfg) if pos == "learned" else cls(*cfg, pos=pos), p)
        with torch.no_grad():
            return module(torch.tensor(ids))

    variants = {n: (lambda n=n: gpt_np(p, cfg, ids, n, pos)) for n in GPT_MESSAGES if n != "embed_no_start"}
    return Case(label, call, lambda: torch_gpt(p, cfg, ids, pos), close(**TOL),
                hints=[diagnose(variants, GPT_MESSAGES), _uses("LayerNorm and DecoderBlock")])


def _embed_case(label, cfg, ids, start, rng, pos):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(cls):
        torch = import_torch()
        module = load(cls(*cfg, pos=pos), p)
        with torch.no_grad():
            return module.embed(torch.tensor(ids), start)

    variants = {n: (lambda n=n: embed_np(p, cfg, ids, pos, start, n))
                for n in ("embed_no_start", "no_positions", "sin_cos_swapped")}
    return Case(label, call, lambda: tensor(embed_np(p, cfg, ids, pos, start)), close(**TOL),
                hints=[diagnose(variants, GPT_MESSAGES)])


def _param_count_case(cfg, pos):
    V, ctx, d, H, d_ff, L = cfg
    want = sum(int(np.prod(shape)) for shape in gpt_shapes(V, ctx, d, d_ff, L, pos).values())

    def call(cls):
        torch = import_torch()
        torch.manual_seed(0)
        return int(sum(p.numel() for p in cls(*cfg, pos=pos).parameters()))

    def hint(got, want):
        if not isinstance(got, int):
            return None
        extra = got - want
        if extra == ctx * d and pos == "sinusoidal":
            return ("The sinusoidal table is a parameter here, so the optimiser would train it: it is fixed, store "
                    "it with self.register_buffer('pos_table', table, persistent=False).")
        if extra == ctx * d and pos == "rope":
            return "The rope model has a position table too: with pos='rope' the positions enter inside attention only."
        if extra == -ctx * d and pos == "learned":
            return "The learned model has no position table: pos_emb = nn.Embedding(context_len, d_model)."
        return None

    return Case(f"TinyGPT{cfg[:6]} with pos={pos!r} has {want:,d} parameters"
                + (" (no position table: its positions are fixed or inside attention)" if pos != "learned" else ""),
                call, lambda: want, equal(), hints=[hint])


def _gpt_too_long(cfg, T):
    def call(cls):
        torch = import_torch()
        torch.manual_seed(0)
        with torch.no_grad():
            return cls(*cfg)(torch.zeros(1, T, dtype=torch.long))
    return Case(f"TinyGPT(vocab_size={cfg[0]}, context_len={cfg[1]}, ...) on ids of shape (1, {T}): longer than "
                "context_len", call, raises(f"sequence length {T} exceeds context_len={cfg[1]}"), close(**TOL))


def _bad_pos_case(cfg, pos):
    def call(cls):
        torch = import_torch()
        torch.manual_seed(0)
        return cls(*cfg, pos=pos).pos

    return Case(f"TinyGPT(..., pos={pos!r}): a ValueError naming the choices 'learned', 'sinusoidal', 'rope'",
                call, raises(f"pos must be 'learned', 'sinusoidal' or 'rope', got {pos!r}"), _NamesChoices())


class _NamesChoices(close):
    """An expected ValueError whose message names the three choices of pos."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" in got.raised and not all(c in got.message for c in POSITIONS):
            self.fail(case, f"raised ValueError({got.message!r}): name the choices in the message, so the reader "
                            "learns what is allowed: 'learned', 'sinusoidal' or 'rope'.")
        if not got.raised:
            self.fail(case, f"should raise ValueError for an unknown pos, but the model was built (pos = "
                            f"{fmt(got.decoded)}): check pos against the three choices first.")
        super().__call__(got, want, case)


# ------------------------------------------------------------ TinyGPT's options: tie_weights, gelu, dropout

TIED_COPY = ("head.weight is not tok_emb.weight itself but a second table (a copy, at best): the two part at the "
             "first training step, and the model holds V x d_model numbers more. Share the Parameter: "
             "self.head.weight = self.tok_emb.weight.")
TIED_BIAS = ("A tied head has no bias, like GPT-2's: build it with nn.Linear(d_model, vocab_size, "
             "bias=not tie_weights).")
GPT_GELU_IGNORED = ("The logits are those of the exact GELU although gelu='tanh' was asked for: pass gelu on to every "
                    "DecoderBlock (and from there to every FeedForward).")
OPTIONS_TOL = dict(atol=1e-5, rtol=1e-5)  # float32 sums in another order; the two GELUs differ by far more here


def _tied_case(cfg):
    V, ctx, d, H, d_ff, L = cfg
    untied = sum(int(np.prod(shape)) for shape in gpt_shapes(V, ctx, d, d_ff, L).values())
    want = {"head.weight is tok_emb.weight": True, "head.bias": None, "parameters": untied - V * d - V}

    def call(cls):
        torch = import_torch()
        torch.manual_seed(0)
        m = cls(*cfg, tie_weights=True)
        bias = getattr(m.head, "bias", None)
        return {"head.weight is tok_emb.weight": m.head.weight is m.tok_emb.weight,
                "head.bias": None if bias is None else tuple(bias.shape),
                "parameters": int(sum(q.numel() for q in m.parameters()))}

    def hint(got, want):
        if not isinstance(got, dict):
            return None
        if got.get("head.weight is tok_emb.weight") is False:
            return TIED_COPY
        if got.get("head.bias") is not None:
            return TIED_BIAS
        return None

    return Case(f"TinyGPT{cfg}, tie_weights=True: one (V, d) table, head.weight is tok_emb.weight, no head bias, "
                f"{want['parameters']:,d} parameters (V x d + V fewer)", call, const(want), equal(), hints=[hint])


def _gpt2_options_case(label, cfg, ids, rng, pos="learned"):
    """GPT-2's options together: a tied head and the tanh GELU, against PyTorch's layers with the same weights."""
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L, pos, tied=True))
    for name in p:
        if name.endswith("ff.fc1.weight"):
            p[name] = p[name] * np.float32(2.0)  # GELU's inputs of order 2, where the two forms differ most

    def call(cls):
        torch = import_torch()
        kwargs = dict(tie_weights=True, gelu="tanh", **({} if pos == "learned" else {"pos": pos}))
        module = load(cls(*cfg, **kwargs), p)
        with torch.no_grad():
            return module.eval()(torch.tensor(ids))

    hint = known_mistakes((lambda: gpt_np(p, cfg, ids, pos=pos), GPT_GELU_IGNORED), **OPTIONS_TOL)
    return ModelCase(label, call, lambda: torch_gpt(p, cfg, ids, pos, gelu="tanh"), close(**OPTIONS_TOL, kind="tensor"),
                     hints=[hint, _uses("FeedForward (with gelu='tanh') and DecoderBlock")],
                     right=lambda: gpt_np(p, cfg, ids, pos=pos, gelu="tanh"),
                     variants={"gelu ignored": lambda: gpt_np(p, cfg, ids, pos=pos)})


def _gpt_dropout_case(cfg, ids, rng, rate):
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L))

    def call(cls):
        torch = import_torch()
        model = load(cls(*cfg, dropout=rate), p)
        x = torch.tensor(ids)
        with torch.no_grad():
            clean = model.eval().embed(x)  # the embeddings as they are, dropout asleep
            model.train()
            torch.manual_seed(0)
            modules = {**_block_modules(model.blocks), "ln_f": model.ln_f, "head": model.head}
            seen = _watch(modules, lambda: model(x))
        sites = {"the embeddings": _dropout_kind(seen.get("0.block", (None,))[0], clean, rate)}
        sites.update(_block_sites(model.blocks, seen, rate))
        last = seen.get(f"{len(model.blocks) - 1}.block", (None, None))[1]
        sites["the stream into ln_f"] = _dropout_kind(seen.get("ln_f", (None,))[0], last, rate)
        sites["ln_f's output into the head"] = _dropout_kind(seen.get("head", (None,))[0],
                                                             seen.get("ln_f", (None, None))[1], rate)
        return sites

    return Case(f"TinyGPT{cfg}, dropout={rate}, in training mode on ids {tuple(np.shape(ids))}: dropout on the "
                "embeddings and on each sub-layer's output, nowhere else", call, const(dict(GPT_SITES)), equal(),
                hints=[_dropout_hint])


def _gpt_eval_case(cfg, ids, rng, rate):
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L))

    def call(cls):
        torch = import_torch()
        x = torch.tensor(ids)
        with torch.no_grad():
            a = load(cls(*cfg, dropout=rate), p).eval()(x)
            b = load(cls(*cfg), p).eval()(x)
        return float((a - b).abs().max())

    return Case(f"TinyGPT{cfg}, dropout={rate}, in eval mode: the logits of dropout=0.0 (largest difference 0)", call,
                const(0.0), close(atol=1e-6, rtol=0), hints=[_eval_mode_hint])


@check
def TinyGPT(hidden, rng):
    cfg = (11, 6, 8, 2, 16, 2)  # vocab_size, context_len, d_model, n_heads, d_ff, n_layers
    if not hidden:
        # The stub must meet a value case first: a stub's NotImplementedError where an error is expected
        # would read as a wrong error, not as "not attempted".
        return [
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2) on ids (2, 6), against PyTorch's layers with the same weights",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng),
            _gpt_too_long(cfg, 7),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2) on ids (1, 3), shorter than context_len", cfg,
                      rng.integers(0, 11, size=(1, 3)), rng),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2, pos='sinusoidal') on ids (2, 6): notebook 06's table added",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng, "sinusoidal"),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2, pos='rope') on ids (2, 6): q and k rotated in every layer",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng, "rope"),
            _param_count_case(cfg, "sinusoidal"),
            _param_count_case(cfg, "rope"),
            _embed_case("TinyGPT(11, 6, 8, 2, 16, 2).embed(ids (2, 3), start=2): tokens at positions 2, 3, 4",
                        cfg, rng.integers(0, 11, size=(2, 3)), 2, rng, "learned"),
            _bad_pos_case(cfg, "absolute"),
            _tied_case(cfg),
            _gpt2_options_case("TinyGPT(11, 6, 8, 2, 16, 2, tie_weights=True, gelu='tanh') on ids (2, 6): GPT-2's "
                               "head and GELU, against PyTorch's layers", cfg, rng.integers(0, 11, size=(2, 6)), rng),
            _gpt_dropout_case(cfg, rng.integers(0, 11, size=(2, 6)), rng, 0.5),
            _gpt_eval_case(cfg, rng.integers(0, 11, size=(2, 6)), rng, 0.5),
        ]
    other = (13, 8, 12, 3, 24, 3)
    return [
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 3) on ids (3, 8)", other, rng.integers(0, 13, size=(3, 8)), rng),
        _gpt_too_long(other, 12),
        _gpt_case("TinyGPT(5, 4, 4, 1, 8, 1) on ids (2, 2)", (5, 4, 4, 1, 8, 1), rng.integers(0, 5, size=(2, 2)), rng),
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='sinusoidal') on ids (2, 5)", (13, 8, 12, 3, 24, 2),
                  rng.integers(0, 13, size=(2, 5)), rng, "sinusoidal"),
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='rope') on ids (2, 8)", (13, 8, 12, 3, 24, 2),
                  rng.integers(0, 13, size=(2, 8)), rng, "rope"),
        _param_count_case(other, "learned"),
        _param_count_case(other, "sinusoidal"),
        _embed_case("TinyGPT(13, 8, 12, 3, 24, 3, pos='sinusoidal').embed(ids (1, 2), start=5)", other,
                    rng.integers(0, 13, size=(1, 2)), 5, rng, "sinusoidal"),
        _bad_pos_case(other, "rotary"),
        _tied_case(other),
        _gpt2_options_case("TinyGPT(13, 8, 12, 3, 24, 3, tie_weights=True, gelu='tanh') on ids (2, 8)", other,
                           rng.integers(0, 13, size=(2, 8)), rng),
        _gpt2_options_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='rope', tie_weights=True, gelu='tanh') on ids (1, 6)",
                           (13, 8, 12, 3, 24, 2), rng.integers(0, 13, size=(1, 6)), rng, "rope"),
        _gpt_dropout_case(other, rng.integers(0, 13, size=(2, 8)), rng, 0.25),
        _gpt_eval_case(other, rng.integers(0, 13, size=(1, 8)), rng, 0.25),
    ]
