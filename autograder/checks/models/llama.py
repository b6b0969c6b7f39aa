"""Llama's attention: 07's interleaved rotary layout turned into Llama's halves, transformers' LlamaAttention,
and the same in NumPy, with the known mistakes of the conversion."""
from __future__ import annotations

import numpy as np

from ..hints import known_variant
from ..toolkit import causal, import_torch
from .gpt2 import transformers_module
from .numpy_attention import mha_np


def interleaved_rows(D: int) -> np.ndarray:
    """The rows, within one head of width D, that Llama's layout takes from 07's: 0, 2, 4, ..., then 1, 3, 5, ..."""
    return np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])


HALVES_VARIANTS = ("across_heads", "inverse", "columns")


def halves_np(w, n_heads, variant=None):
    """interleaved_to_halves in NumPy, or a known wrong version of it."""
    known_variant(variant, HALVES_VARIANTS, "halves_np")
    w = np.asarray(w)
    rows = w.shape[0]
    D = rows // (1 if variant == "across_heads" else n_heads)
    per_head = interleaved_rows(D)
    if variant == "inverse":
        per_head = np.argsort(per_head)
    order = (np.arange(rows // D)[:, None] * D + per_head).ravel()
    return w[:, order] if variant == "columns" else w[order]


LLAMA_VARIANTS = ("no_permutation", "v_permuted", "across_heads")


def llama_state_np(W, H, variant=None):
    """The Llama state dict (NumPy) from 07-layout weights W = {"q", "k", "v", "o"} (nn.Linear layout)."""
    known_variant(variant, LLAMA_VARIANTS, "llama_state_np")
    turn = {None: lambda w: halves_np(w, H), "no_permutation": lambda w: w, "v_permuted": lambda w: halves_np(w, H),
            "across_heads": lambda w: halves_np(w, H, "across_heads")}[variant]
    return {"q": turn(W["q"]), "k": turn(W["k"]), "v": turn(W["v"]) if variant == "v_permuted" else W["v"],
            "o": W["o"]}


def llama_np(S, x, H, base):
    """transformers' LlamaAttention in float64 (rotate-half RoPE, causal) with the weights S."""
    weights = {"H": H, **{"W" + n: S[n] for n in "qkvo"}}
    return mha_np(weights, x, None, causal(x.shape[1]), "rope_half", rope=True, base=base)


def _llama_module(d, H, base):
    tf = transformers_module()
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding  # lazy, as above

    config = tf.LlamaConfig(hidden_size=d, num_attention_heads=H, num_key_value_heads=H, attention_bias=False,
                            intermediate_size=4 * d, vocab_size=8, num_hidden_layers=1,
                            rope_parameters={"rope_type": "default", "rope_theta": base}, attn_implementation="eager")
    return LlamaAttention(config, layer_idx=0).eval(), LlamaRotaryEmbedding(config)


def llama_attention(state, x, n_heads, base):
    """transformers' LlamaAttention (n_heads, rope_theta=base) holding state, a dict of its four weights, run
    causally on x (B, T, d)."""
    torch = import_torch()
    B, T, d = x.shape
    attn, rotary = _llama_module(d, n_heads, base)
    try:
        attn.load_state_dict(state)
    except RuntimeError as exc:
        raise RuntimeError(f"LlamaAttention could not load the dict: {exc}. Return exactly q_proj.weight, "
                           "k_proj.weight, v_proj.weight and o_proj.weight, each (d_model, d_model).") from None
    cos, sin = rotary(x, torch.arange(T)[None].expand(B, T))
    not_allowed = torch.ones(T, T, dtype=torch.bool).triu(1)
    additive = torch.zeros(T, T).masked_fill(not_allowed, float("-inf"))[None, None]  # (1, 1, T, T)
    with torch.no_grad():
        return attn(x, position_embeddings=(cos, sin), attention_mask=additive)[0]
