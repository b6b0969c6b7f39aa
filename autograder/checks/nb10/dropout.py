"""Dropout where GPT-2 puts it: what a block or a TinyGPT drops in training mode, and nothing in eval mode.

Shared by DecoderBlock's checks (:mod:`.layers`) and TinyGPT's (:mod:`.tinygpt`).
"""
from __future__ import annotations

from ..compare import Case, close, const, equal
from ..models.weights import load
from ..toolkit import import_torch, tensor
from .common import _empty_rows_explained


# ------------------------------------------------------------------ dropout, where GPT-2 puts it

# GPT-2 drops the embeddings once (embd_pdrop) and each sub-layer's output before the residual addition
# (resid_pdrop); it also drops attention weights (attn_pdrop), which notebook 09's attention has no option
# for, so this course's model leaves that one out. Nothing else: not a sub-layer's input, not the stream.
# The checks watch what each module of the contract (blocks, ln1, attn, ln2, ff, ln_f, head) receives and
# returns in training mode, through forward hooks, so nn.Dropout and F.dropout are judged alike.
DROPPED, UNTOUCHED = "dropped", "untouched"
BLOCK_SITES = {  # site: (what it compares, its rightful kind)
    "the block's input to ln1": UNTOUCHED,
    "the attention's input": UNTOUCHED,
    "the attention's output": DROPPED,
    "the feed-forward's input": UNTOUCHED,
    "the feed-forward's output": DROPPED,
}
GPT_SITES = {"the embeddings": DROPPED, **BLOCK_SITES, "the stream into ln_f": UNTOUCHED,
             "ln_f's output into the head": UNTOUCHED}
DROPOUT_MESSAGES = {  # (site, what was seen) -> the likely mistake
    ("the embeddings", UNTOUCHED): "The embeddings reach the first block without dropout: GPT-2 drops them once, "
                                   "x = self.drop(self.embed(ids)), before the blocks.",
    ("the attention's output", UNTOUCHED): "The attention sub-layer's output is not dropped: in training mode, what "
                                           "attention writes reaches the stream whole, where GPT-2 drops some of it.",
    ("the feed-forward's output", UNTOUCHED): "The feed-forward sub-layer's output is not dropped: in training mode, "
                                              "what it writes reaches the stream whole, where GPT-2 drops some of it.",
    ("the attention's input", DROPPED): "Dropout acts on the attention's input, the normalised x: GPT-2 drops what a "
                                        "sub-layer writes, never its input.",
    ("the feed-forward's input", DROPPED): "Dropout acts on the feed-forward's input, the normalised x: GPT-2 drops what "
                                           "a sub-layer writes, never its input.",
    ("the block's input to ln1", DROPPED): "Dropout acts on the residual stream itself before ln1: drop only each "
                                           "sub-layer's output, then add it to x.",
    ("the stream into ln_f", DROPPED): "Dropout acts on the residual stream after the last block: GPT-2 has none "
                                       "between the blocks and ln_f.",
    ("ln_f's output into the head", DROPPED): "Dropout acts between ln_f and the head: GPT-2 has none after the "
                                              "final LayerNorm.",
}
CHANGED = ("is changed, but not as dropout would change it: {site} should be {want}. If the whole residual stream goes "
           "through dropout, the block's input is dropped too, where GPT-2 would drop only the sub-layer's output.")
NOT_RESCALED = ("Dropout zeroes entries at {site} but leaves the others as they were: kept entries are scaled by "
                "1 / (1 - p), so the expected value does not change. nn.Dropout (self.drop) does both.")
IN_EVAL = ("In eval mode the output changed with dropout=0.5: dropout must act in training mode only. nn.Dropout "
           "(self.drop) follows model.train() and model.eval(); F.dropout needs training=self.training.")


def _dropout_kind(seen, clean, p) -> str:
    """What happened between two tensors that should be equal or a dropout of each other (rate p)."""
    torch = import_torch()
    if seen is None or clean is None:
        return "not seen"
    if seen.shape != clean.shape:
        return "another shape"
    tol = dict(atol=1e-5, rtol=1e-4)
    if torch.allclose(seen, clean, **tol):
        return UNTOUCHED
    zero = seen.abs() <= 1e-7
    if zero.any() and torch.isclose(seen, clean / (1 - p), **tol)[~zero].all():
        return DROPPED
    if zero.any() and torch.isclose(seen, clean, **tol)[~zero].all():
        return "dropped, not rescaled"
    return "changed"


def _watch(modules: dict, run) -> dict:
    """Run ``run()`` and return {name: (first input, output)} of each module in ``modules`` (its last call)."""
    seen, handles = {}, []

    def keep(name):
        def hook(module, args, kwargs, output):
            first = args[0] if args else next(iter(kwargs.values()), None)
            out = output[0] if isinstance(output, tuple) else output
            seen[name] = (first.detach().clone() if hasattr(first, "detach") else None,
                          out.detach().clone() if hasattr(out, "detach") else None)
        return hook

    for name, module in modules.items():
        handles.append(module.register_forward_hook(keep(name), with_kwargs=True))
    try:
        run()
    finally:
        for handle in handles:
            handle.remove()
    return seen


def _block_sites(blocks, seen, p) -> dict:
    """The kind of each block site, the same in every block or listed per block."""
    kinds: dict = {site: [] for site in BLOCK_SITES}
    get = lambda name, i: seen.get(f"{i}.{name}", (None, None))
    for i in range(len(blocks)):
        block_in, block_out = get("block", i)
        ln1_in, ln1_out = get("ln1", i)
        attn_in, attn_out = get("attn", i)
        ln2_in, ln2_out = get("ln2", i)
        ff_in, ff_out = get("ff", i)
        diff = lambda a, b: None if a is None or b is None else a - b
        kinds["the block's input to ln1"].append(_dropout_kind(ln1_in, block_in, p))
        kinds["the attention's input"].append(_dropout_kind(attn_in, ln1_out, p))
        kinds["the attention's output"].append(_dropout_kind(diff(ln2_in, block_in), attn_out, p))
        kinds["the feed-forward's input"].append(_dropout_kind(ff_in, ln2_out, p))
        kinds["the feed-forward's output"].append(_dropout_kind(diff(block_out, ln2_in), ff_out, p))
    return {site: k[0] if len(set(k)) == 1 else "; ".join(f"block {i}: {x}" for i, x in enumerate(k))
            for site, k in kinds.items()}


def _block_modules(blocks) -> dict:
    modules = {}
    for i, block in enumerate(blocks):
        modules[f"{i}.block"] = block
        for part in ("ln1", "attn", "ln2", "ff"):
            if hasattr(block, part):
                modules[f"{i}.{part}"] = getattr(block, part)
    return modules


def _dropout_hint(got, want):
    if not isinstance(got, dict):
        return None
    for site, should in want.items():
        seen = got.get(site)
        if seen == should:
            continue
        if (site, seen) in DROPOUT_MESSAGES:
            return DROPOUT_MESSAGES[site, seen]
        if seen == "dropped, not rescaled":
            return NOT_RESCALED.format(site=site)
        if seen == "not seen":
            return (f"The check could not see {site}: the block must call its modules ln1, attn, ln2 and ff "
                    "(and the model tok_emb, blocks, ln_f and head), as the exercise's code does.")
        return f"{site[0].upper()}{site[1:]} " + CHANGED.format(site=site, want=should)
    return None


def _eval_mode_hint(got, want):
    return IN_EVAL if isinstance(got, float) and not got <= 1e-6 else None


def _block_dropout_case(p, H, x, rate):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = import_torch()
        block = load(cls(d, H, d_ff, dropout=rate), p).train()
        torch.manual_seed(0)
        with torch.no_grad(), _empty_rows_explained():
            seen = _watch(_block_modules([block]), lambda: block(tensor(x)))
        return _block_sites([block], seen, rate)

    return Case(f"DecoderBlock({d}, {H}, {d_ff}, dropout={rate}) in training mode: dropout on each sub-layer's "
                "output, before the residual addition, and nowhere else", call, const(dict(BLOCK_SITES)), equal(),
                hints=[_dropout_hint])


def _block_eval_case(p, H, x, rate):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = import_torch()
        with torch.no_grad(), _empty_rows_explained():
            a = load(cls(d, H, d_ff, dropout=rate), p).eval()(tensor(x))
            b = load(cls(d, H, d_ff), p).eval()(tensor(x))
        return float((a - b).abs().max())

    return Case(f"DecoderBlock({d}, {H}, {d_ff}, dropout={rate}) in eval mode: the output of dropout=0.0 (largest "
                "difference 0)", call, const(0.0), close(atol=1e-6, rtol=0), hints=[_eval_mode_hint])
