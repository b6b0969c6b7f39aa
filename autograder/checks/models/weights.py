"""Weights by parameter name: the shapes of TinyGPT and its block, random weights, loading them into a module."""
from __future__ import annotations

import numpy as np

from ..toolkit import import_torch, normal, tensor


def block_shapes(d, d_ff, prefix=""):
    shapes = {}
    for n in "qkvo":
        shapes[f"attn.w_{n}.weight"], shapes[f"attn.w_{n}.bias"] = (d, d), (d,)
    shapes.update({"ff.fc1.weight": (d_ff, d), "ff.fc1.bias": (d_ff,), "ff.fc2.weight": (d, d_ff),
                   "ff.fc2.bias": (d,), "ln1.weight": (d,), "ln1.bias": (d,), "ln2.weight": (d,), "ln2.bias": (d,)})
    return {prefix + k: v for k, v in shapes.items()}


def gpt_shapes(V, ctx, d, d_ff, L, pos="learned", tied=False):
    """The parameters of TinyGPT(V, ctx, d, H, d_ff, L, pos): a tied model's head is tok_emb, with no bias."""
    shapes = {"tok_emb.weight": (V, d)}
    if pos == "learned":
        shapes["pos_emb.weight"] = (ctx, d)
    for i in range(L):
        shapes.update(block_shapes(d, d_ff, f"blocks.{i}."))
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    if not tied:
        shapes.update({"head.weight": (V, d), "head.bias": (V,)})
    return shapes


def make_params(rng, shapes):
    """Random weights at sensible scales: LayerNorm gains near 1, matrices ~ 1/sqrt(fan_in)."""
    params = {}
    for name, shape in shapes.items():
        owner = name.split(".")[-2]
        if name.endswith("emb.weight"):
            params[name] = normal(rng, *shape)
        elif len(shape) == 2:
            params[name] = normal(rng, *shape, scale=1 / np.sqrt(shape[1]))
        elif owner.startswith("ln") and name.endswith("weight"):
            params[name] = (1 + normal(rng, *shape, scale=0.3)).astype(np.float32)
        else:
            params[name] = normal(rng, *shape, scale=0.2)
    return params


def load(module, params):
    """Copy the NumPy weights into the module's parameters of the same names."""
    torch = import_torch()
    with torch.no_grad():
        for name, value in params.items():
            module.get_parameter(name).copy_(tensor(value))
    return module
