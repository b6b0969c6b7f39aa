"""GPT-2 as transformers builds it (from a small config, nothing downloaded), and in NumPy from its own weights
(Conv1D layout), with the known wrong readings of them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hints import known_variant
from ..toolkit import causal, normal
from .numpy_attention import mha_np
from .numpy_gpt import gelu_np, ln_np
from .weights import load


def transformers_module():
    """Hugging Face transformers, imported by the checks that need it and never at module level (importing this
    checks module stays cheap for every caller). The models are built from configs; autograder.offline_models
    sets the offline switches first, so any attempt to download fails at once."""
    from ...offline_models import transformers  # lazy, see above

    return transformers


@dataclass(frozen=True)
class Gpt2Shape:
    """A small GPT-2 configuration, the fields from_gpt2 reads (with transformers' names in the comments)."""

    vocab_size: int
    n_positions: int
    n_embd: int
    n_head: int
    n_layer: int
    n_inner: "int | None" = None  # None: 4 * n_embd, as in GPT-2
    layer_norm_epsilon: float = 1e-5
    activation_function: str = "gelu_new"  # GPT-2's tanh approximation of GELU
    extra: tuple = ()  # (field, value) pairs a TinyGPT cannot represent

    @property
    def d_ff(self) -> int:
        return self.n_inner or 4 * self.n_embd

    def hf_model(self, params: dict):
        """transformers' GPT2LMHeadModel of this configuration holding params (NumPy, by parameter name)."""
        tf = transformers_module()
        config = tf.GPT2Config(vocab_size=self.vocab_size, n_positions=self.n_positions, n_embd=self.n_embd,
                               n_head=self.n_head, n_layer=self.n_layer, n_inner=self.n_inner,
                               layer_norm_epsilon=self.layer_norm_epsilon,
                               activation_function=self.activation_function, bos_token_id=0, eos_token_id=0,
                               attn_implementation="eager", **dict(self.extra))
        model = tf.GPT2LMHeadModel(config)
        load(model, params)
        return model.eval()


def gpt2_shapes(c: Gpt2Shape) -> dict:
    """transformers' parameter names and shapes; Conv1D weights are stored (in, out); the head is tied to wte."""
    d, f, t = c.n_embd, c.d_ff, "transformer."
    shapes = {t + "wte.weight": (c.vocab_size, d), t + "wpe.weight": (c.n_positions, d)}
    for i in range(c.n_layer):
        p = f"{t}h.{i}."
        shapes.update({p + "ln_1.weight": (d,), p + "ln_1.bias": (d,), p + "attn.c_attn.weight": (d, 3 * d),
                       p + "attn.c_attn.bias": (3 * d,), p + "attn.c_proj.weight": (d, d), p + "attn.c_proj.bias": (d,),
                       p + "ln_2.weight": (d,), p + "ln_2.bias": (d,), p + "mlp.c_fc.weight": (d, f),
                       p + "mlp.c_fc.bias": (f,), p + "mlp.c_proj.weight": (f, d), p + "mlp.c_proj.bias": (d,)})
    shapes.update({t + "ln_f.weight": (d,), t + "ln_f.bias": (d,)})
    return shapes


def gpt2_params(rng, c: Gpt2Shape) -> dict:
    """Random weights far from GPT-2's small initialisation: pre-activations of order 1 make exact and tanh
    GELU differ by about 1e-3 in the logits, and sharp attention makes a wrong q/k/v order show."""
    params = {}
    for name, shape in gpt2_shapes(c).items():
        if name.endswith(("wte.weight", "wpe.weight")):
            params[name] = normal(rng, *shape)
        elif len(shape) == 2:  # Conv1D: (in, out)
            params[name] = normal(rng, *shape, scale=1.5 / np.sqrt(shape[0]))
        elif ".ln_" in name and name.endswith("weight"):
            params[name] = (1 + normal(rng, *shape, scale=0.3)).astype(np.float32)
        else:
            params[name] = normal(rng, *shape, scale=0.3)
    return params


GPT2_VARIANTS = ("not_transposed", "other_gelu", "positions_after_first_block",
                 *(f"split_{''.join(order)}" for order in ("qvk", "kqv", "kvq", "vqk", "vkq")))


def gpt2_np(p, c: Gpt2Shape, ids, variant=None):
    """GPT-2's logits in float64 from its own weights (Conv1D layout), or a known wrong reading of them."""
    known_variant(variant, GPT2_VARIANTS, "gpt2_np")
    d, H, t = c.n_embd, c.n_head, "transformer."
    g = lambda n: p[n].astype(np.float64)
    conv = lambda x, n, square=False: x @ (g(n + ".weight").T if square and variant == "not_transposed"
                                           else g(n + ".weight")) + g(n + ".bias")
    ln = lambda x, n: ln_np(x, g(n + ".weight"), g(n + ".bias"), c.layer_norm_epsilon)
    ids = np.asarray(ids)
    T = ids.shape[1]
    x = g(t + "wte.weight")[ids]
    if variant != "positions_after_first_block":
        x = x + g(t + "wpe.weight")[:T]
    for i in range(c.n_layer):
        b = f"{t}h.{i}."
        w, bias = g(b + "attn.c_attn.weight"), g(b + "attn.c_attn.bias")
        parts = dict(zip("qkv", np.split(w, 3, axis=1)))
        biases = dict(zip("qkv", np.split(bias, 3)))
        order = variant[len("split_"):] if variant and variant.startswith("split_") else "qkv"
        weights = {"H": H}
        for name, source in zip("qkv", order):  # a wrong order reads the columns of another projection
            m = parts[source]
            weights["W" + name] = m if variant == "not_transposed" else m.T  # nn.Linear layout: (out, in)
            weights["b" + name] = biases[source]
        o = g(b + "attn.c_proj.weight")
        weights["Wo"], weights["bo"] = (o if variant == "not_transposed" else o.T), g(b + "attn.c_proj.bias")
        x = x + mha_np(weights, ln(x, b + "ln_1"), None, causal(T))
        h = conv(ln(x, b + "ln_2"), b + "mlp.c_fc")
        exact = (c.activation_function == "gelu") != (variant == "other_gelu")  # the other form is the mistake
        h = gelu_np(h, None if exact else "tanh_gelu")
        x = x + conv(h, b + "mlp.c_proj")
        if i == 0 and variant == "positions_after_first_block":
            x = x + g(t + "wpe.weight")[:T]
    return ln(x, t + "ln_f") @ g(t + "wte.weight").T  # the head is the token table
