"""TinyGPT in PyTorch: from PyTorch's own layers, and a TinyGPT of our own (on notebook 09's attention) that
cached generation runs on, with cached generation's known mistakes."""
from __future__ import annotations

from functools import lru_cache, partial
from types import SimpleNamespace

import numpy as np

from ...reference import available, import_notebook
from ..hints import known_variant
from ..toolkit import import_torch, learner_pieces, tensor
from .numpy_gpt import gpt_np, sinusoids_np
from .weights import gpt_shapes, load, make_params


def torch_block(p, d, H, d_ff, prefix="", gelu="exact"):
    """nn.TransformerEncoderLayer(norm_first=True, GELU, no dropout) holding the weights p; gelu="tanh" is GPT-2's."""
    torch = import_torch()
    activation = "gelu" if gelu == "exact" else partial(torch.nn.functional.gelu, approximate="tanh")
    layer = torch.nn.TransformerEncoderLayer(d, H, d_ff, dropout=0.0, activation=activation, batch_first=True,
                                             norm_first=True)
    g = lambda n: tensor(p[prefix + n])
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([g(f"attn.w_{n}.weight") for n in "qkv"]))  # (3 d, d)
        layer.self_attn.in_proj_bias.copy_(torch.cat([g(f"attn.w_{n}.bias") for n in "qkv"]))
        for theirs, ours in [("self_attn.out_proj", "attn.w_o"), ("linear1", "ff.fc1"), ("linear2", "ff.fc2"),
                             ("norm1", "ln1"), ("norm2", "ln2")]:
            layer.get_parameter(theirs + ".weight").copy_(g(ours + ".weight"))
            layer.get_parameter(theirs + ".bias").copy_(g(ours + ".bias"))
    return layer.eval()


def run_torch_block(layer, x):
    torch = import_torch()
    T = x.shape[1]
    not_allowed = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # PyTorch: True = NOT allowed
    with torch.no_grad():
        return layer(x, src_mask=not_allowed)


def torch_gpt(p, cfg, ids, pos="learned", gelu="exact"):
    """Logits from PyTorch's own layers (learned or sinusoidal positions); RoPE has no PyTorch layer: NumPy.
    A p without head weights is a tied model: its head is the token table."""
    torch = import_torch()
    F = torch.nn.functional
    V, ctx, d, H, d_ff, L = cfg
    if pos == "rope":
        return tensor(gpt_np(p, cfg, np.asarray(ids), pos="rope", gelu=gelu))
    ids = torch.tensor(ids)
    T = ids.shape[1]
    table = tensor(p["pos_emb.weight"])[:T] if pos == "learned" else tensor(sinusoids_np(T, d))
    x = F.embedding(ids, tensor(p["tok_emb.weight"])) + table
    for i in range(L):
        x = run_torch_block(torch_block(p, d, H, d_ff, f"blocks.{i}.", gelu), x)
    x = F.layer_norm(x, (d,), tensor(p["ln_f.weight"]), tensor(p["ln_f.bias"]), 1e-5)
    if "head.weight" not in p:  # tied
        return F.linear(x, tensor(p["tok_emb.weight"]))
    return F.linear(x, tensor(p["head.weight"]), tensor(p["head.bias"]))


@lru_cache(maxsize=None)
def attention09():
    """Notebook 09's attention (MultiHeadAttention, scaled_dot_product_attention, apply_rope_torch) for the
    checks' own models: the course's where its solutions are installed (the grader's sandbox, this repository),
    else the learner's own from their saved 09, which its checks have passed (autograder.pieces finds it, through
    :func:`..toolkit.learner_pieces`). A student's machine holds no solutions, and 10's checks must still run
    there."""
    if available("09_attention"):
        return import_notebook("09_attention")
    found = learner_pieces("10_decoder_block")  # a piece not ready says why when called
    return SimpleNamespace(**{name: found[name] for name in
                              ("MultiHeadAttention", "scaled_dot_product_attention", "apply_rope_torch")})


@lru_cache(maxsize=None)
def gpt_class():
    """A TinyGPT like the notebook's (same attribute names, notebook 09's attention), built when torch is at
    hand: the grader's sandbox holds the reference of 09 but not of 10, so the checks bring their own model."""
    torch = import_torch()
    nn, F = torch.nn, torch.nn.functional
    MHA = attention09().MultiHeadAttention

    class FeedForward(nn.Module):
        def __init__(self, d, d_ff):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x)))

    class Block(nn.Module):
        def __init__(self, d, H, d_ff, rope):
            super().__init__()
            self.ln1, self.attn = nn.LayerNorm(d), MHA(d, H, rope=rope)
            self.ln2, self.ff = nn.LayerNorm(d), FeedForward(d, d_ff)

        def forward(self, x):
            T = x.shape[1]
            x = x + self.attn(self.ln1(x), mask=torch.ones(T, T, dtype=torch.bool).tril())
            return x + self.ff(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, V, ctx, d, H, d_ff, L, pos="learned"):
            super().__init__()
            self.context_len, self.pos = ctx, pos
            if pos == "learned":
                self.pos_emb = nn.Embedding(ctx, d)
            elif pos == "sinusoidal":
                self.register_buffer("pos_table", tensor(sinusoids_np(ctx, d)), persistent=False)
            self.tok_emb = nn.Embedding(V, d)
            self.blocks = nn.ModuleList([Block(d, H, d_ff, pos == "rope") for _ in range(L)])
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, V)
            self.embedded = 0  # positions that went through embed: the work a cache saves

        def embed(self, ids, start=0):
            self.embedded += ids.numel()
            x = self.tok_emb(ids)
            positions = torch.arange(start, start + ids.shape[1])
            if self.pos == "learned":
                x = x + self.pos_emb(positions)
            elif self.pos == "sinusoidal":
                x = x + self.pos_table[positions]
            return x

        def forward(self, ids):
            if ids.shape[1] > self.context_len:
                raise ValueError(f"sequence length {ids.shape[1]} exceeds context_len={self.context_len}")
            x = self.embed(ids)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return GPT


def check_model(cfg, pos, seed):
    """A GPT of gpt_class made the same way every time from seed, its queries and keys scaled up so that
    attention is sharp and depends on positions: a wrong offset then changes the tokens."""
    V, ctx, d, H, d_ff, L = cfg
    params = make_params(np.random.default_rng(seed), gpt_shapes(V, ctx, d, d_ff, L, pos))
    for name in params:
        if ".attn.w_q." in name or ".attn.w_k." in name:
            params[name] = params[name] * np.float32(3.0)
        if name.startswith("head."):
            params[name] = params[name] * np.float32(0.5)  # softer logits: sampling sees every change
    return load(gpt_class()(*cfg, pos=pos), params).eval()


def plain_generate(model, ids, n, temperature, generator):
    """generate, the reference loop: rerun the last context_len tokens at every step."""
    torch = import_torch()
    with torch.no_grad():
        for _ in range(n):
            logits = model(ids[:, -model.context_len:])[:, -1]
            if temperature == 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)
            ids = torch.cat([ids, nxt], 1)
    return ids


CACHE_VARIANTS = ("embed_offset", "rope_offset", "mask_offset", "no_cache")


def cached_variant(model, ids, n, temperature, generator, variant):
    """Known wrong caches: the offset forgotten in the positions, the mask or the rotation; the cache not kept."""
    known_variant(variant, CACHE_VARIANTS, "cached_variant")
    torch = import_torch()
    nb09 = attention09()
    caches = []

    def step(new, start):
        B, m = new.shape
        x = model.embed(new, 0 if variant == "embed_offset" else start)
        allowed = torch.ones(m, start + m, dtype=torch.bool).tril(diagonal=0 if variant == "mask_offset" else start)
        for i, block in enumerate(model.blocks):
            a, h = block.attn, block.ln1(x)
            H = a.n_heads
            q, k, v = (w(h).view(B, m, H, -1).transpose(1, 2) for w in (a.w_q, a.w_k, a.w_v))
            if a.rope:
                positions = np.arange(m) + (0 if variant == "rope_offset" else start)
                q, k = nb09.apply_rope_torch(q, positions, a.rope_base), nb09.apply_rope_torch(k, positions, a.rope_base)
            if start > 0 and variant != "no_cache":
                k, v = torch.cat([caches[i][0], k], 2), torch.cat([caches[i][1], v], 2)
            caches[i:i + 1] = [(k, v)]
            mask = allowed if variant != "no_cache" or start == 0 else None
            out, _ = nb09.scaled_dot_product_attention(q, k, v, mask)
            x = x + a.w_o(out.transpose(1, 2).reshape(B, m, -1))
            x = x + block.ff(block.ln2(x))
        return model.head(model.ln_f(x[:, -1]))

    with torch.no_grad():
        logits, cached = step(ids, 0), ids.shape[1]
        for _ in range(n):
            nxt = (logits.argmax(-1, keepdim=True) if temperature == 0 else
                   torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator))
            ids = torch.cat([ids, nxt], 1)
            if cached < model.context_len:
                logits, cached = step(nxt, cached), cached + 1
            else:
                logits = step(ids[:, -model.context_len:], 0)
    return ids
