"""The KV cache (kv_cache_bytes, generate_cached) and what attention looks at (attention_maps,
agreement_scores)."""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, equal, predicate, raises
from ..evidence import Array
from ..hints import known_mistakes, numbers
from ..models.numpy_gpt import maps_np
from ..models.torch_gpt import cached_variant, check_model, gpt_class, plain_generate
from ..models.weights import gpt_shapes, load, make_params
from ..toolkit import TOL, causal, diagnose, import_torch, stable_softmax, tensor
from .common import check
from .tinygpt import POSITIONS


# ------------------------------------------------------------------------ kv_cache_bytes

def _kv_case(label, args, kwargs=None):
    kwargs = kwargs or {}
    L, T, d = args
    b, n = kwargs.get("bytes_per_value", 2), kwargs.get("batch", 1)
    right = 2 * L * T * d * b * n
    wrong = [
        (right // 2, "That counts one of the two: the cache holds a key AND a value vector per position and layer."),
        (right // L, "That is one layer's cache: every layer keeps its own keys and values."),
        (right * 8, "That is bits, not bytes: bytes_per_value already counts bytes."),
        (right // b, "bytes_per_value is missing: each number takes bytes_per_value bytes (2 in fp16)."),
        (right // n, "batch is missing: every sequence of the batch has its own cache."),
    ]

    def hint(got, want):
        g = got.data.item() if isinstance(got, Array) and got.data.shape == () else got
        if isinstance(g, float):
            return "Return an int (a number of bytes): no division is needed."
        found = [message for value, message in wrong if isinstance(g, int) and g == value != right]
        return " Or: ".join(found) or None

    return Case(label, lambda fn: fn(*args, **kwargs), lambda: right, equal(), hints=[hint])


@check
def kv_cache_bytes(hidden, rng):
    if not hidden:
        return [_kv_case("kv_cache_bytes(12, 1024, 768): GPT-2 small at 1024 tokens in fp16, 37,748,736 bytes",
                         (12, 1024, 768)),
                _kv_case("kv_cache_bytes(2, 32, 64, bytes_per_value=4, batch=3)", (2, 32, 64),
                         dict(bytes_per_value=4, batch=3))]
    return [_kv_case("kv_cache_bytes(32, 4096, 4096, batch=8)", (32, 4096, 4096), dict(batch=8)),
            _kv_case("kv_cache_bytes(3, 10, 16, bytes_per_value=1)", (3, 10, 16), dict(bytes_per_value=1)),
            _kv_case("kv_cache_bytes(5, 7, 6, 4, 2)", (5, 7, 6), dict(bytes_per_value=4, batch=2))]


# ---------------------------------------------------------------------------- generate_cached

CACHE_MESSAGES = {
    "embed_offset": "The new token was embedded at position 0: embed it at its own position, "
                    "model.embed(new, start) with start = the number of tokens already cached.",
    "rope_offset": "The rotary model's new query and key were rotated as if at position 0: pass start to "
                   "project_heads, so they turn by their real position.",
    "mask_offset": "The mask forgets the offset: query i sits at position start + i and may read every cached key "
                   "up to it, torch.ones(n, start + n, dtype=torch.bool).tril(diagonal=start).",
    "no_cache": "The new token attends only to itself: append its key and value to the block's cache "
                "(torch.cat along the positions axis, dim=2) and attend over all of them.",
}


def _cached_case(label, cfg, pos, prompt, n, temperature, seed):
    def run(fn):
        torch = import_torch()
        try:
            return fn(check_model(cfg, pos, seed), torch.tensor(prompt), n, temperature,
                      torch.Generator().manual_seed(seed))
        except RuntimeError as exc:
            if "size" not in str(exc):
                raise
            raise RuntimeError(f"{exc}. The keys and the mask disagree in length: the cache must hold every key so "
                               "far, so append the new key and value to the block's cache (torch.cat along the "
                               "positions axis, dim=2) and build the mask (n, start + n).") from None

    def want():
        torch = import_torch()
        return plain_generate(check_model(cfg, pos, seed), torch.tensor(prompt), n, temperature,
                              torch.Generator().manual_seed(seed))

    def hint(got, want):
        g = numbers(got)
        if g is None:
            return None
        if g.shape == (len(prompt), n):
            return "Return the whole sequence: the prompt ids followed by the new tokens, (B, T + max_new_tokens)."
        for name, message in CACHE_MESSAGES.items():
            try:
                wrong = run(lambda *a: cached_variant(*a, variant=name))
            except Exception:
                continue
            w = wrong.numpy()
            if w.shape == g.shape and np.array_equal(w, g) and not np.array_equal(w, want.data):
                return message
        if len(prompt[0]) + n > cfg[1]:
            return ("The sequence runs past context_len: when it would, crop to the last context_len tokens, empty "
                    "the caches and prefill again (positions all shift, so every cached key is stale).")
        return None

    return Case(label, run, want, equal(), hints=[hint])


def _cache_work_case(cfg, prompt, n):
    T = len(prompt[0])

    def run(fn):
        torch = import_torch()
        model = check_model(cfg, "learned", 5)
        fn(model, torch.tensor(prompt), n, 0.0)
        return model.embedded // len(prompt)

    def test(got, want):
        if isinstance(got, int) and got <= T + n:
            return None
        return (f"{got} positions per sequence went through the model, where a cache needs at most {T + n} "
                f"(the {T} prompt tokens once, then one per new token): reuse the cached keys and values instead "
                "of running the whole window again.")

    return Case(f"generate_cached(model, ids (2, {T}), {n}): each position is embedded once (prefill {T}, then "
                "one per step)", run, lambda: T + n, predicate(test))


@check
def generate_cached(hidden, rng):
    small = (11, 12, 8, 2, 16, 2)  # vocab_size, context_len, d_model, n_heads, d_ff, n_layers
    if not hidden:
        return [
            _cached_case("generate_cached(model, ids (2, 3), 6, temperature=0), pos='learned': the tokens of generate",
                         small, "learned", [[1, 2, 3], [4, 4, 0]], 6, 0.0, 1),
            _cached_case("the same sampled at temperature 1 with generator seed 2, pos='sinusoidal'",
                         small, "sinusoidal", [[5, 1, 3], [0, 9, 9]], 8, 1.0, 2),
            _cached_case("pos='rope', temperature 1: queries and keys rotated at their positions",
                         small, "rope", [[7, 2], [3, 3]], 9, 1.0, 3),
            _cache_work_case(small, [[1, 2, 3], [4, 5, 6]], 8),
            _cached_case("pos='learned', ids (1, 4) and 20 new tokens: past context_len 12, crop and prefill again",
                         small, "learned", [[1, 5, 2, 7]], 20, 1.0, 4),
        ]
    return [
        _cached_case("generate_cached, pos='rope', ids (3, 4), 7 tokens, greedy", small, "rope",
                     rng.integers(0, 11, size=(3, 4)).tolist(), 7, 0.0, 11),
        _cached_case("generate_cached, pos='sinusoidal', ids (1, 1), 11 tokens, temperature 0.7", small, "sinusoidal",
                     [[3]], 11, 0.7, 12),
        _cached_case("generate_cached, pos='rope', ids (2, 10), 9 tokens, temperature 1: past context_len",
                     small, "rope", rng.integers(0, 11, size=(2, 10)).tolist(), 9, 1.0, 13),
        _cached_case("generate_cached, pos='learned', ids (2, 14): the prompt is longer than context_len",
                     small, "learned", rng.integers(0, 11, size=(2, 14)).tolist(), 3, 1.0, 14),
    ]


# ------------------------------------------------------------------------- attention_maps

MAPS_MESSAGES = {
    "no_mask": "The weights are not causal: apply the causal mask (torch.tril, True = allowed) before the softmax.",
    "no_ln1": "The queries and keys were computed from x itself: the block's attention reads block.ln1(x).",
    "no_advance": "Every layer's weights were computed from the embeddings: move on with x = block(x) after each "
                  "block, since the next layer reads what this one wrote.",
    "rope_ignored": "The rope model's queries and keys were not rotated: project_heads(block.attn, h) rotates them "
                    "when block.attn.rope is set.",
    "no_scale": "The scores were not divided by sqrt(D), D = d_model // n_heads.",
    "query_axis": "Each column sums to 1 instead of each row: the softmax runs over the keys, the last axis.",
}


def _maps_case(label, cfg, pos, ids, rng):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(fn):
        torch = import_torch()
        model = load(gpt_class()(*cfg, pos=pos), p).eval()
        return fn(model, torch.tensor(ids))

    variants = {n: (lambda n=n: maps_np(p, cfg, ids, pos, n)) for n in MAPS_MESSAGES}
    return Case(label, call, lambda: tensor(maps_np(p, cfg, ids, pos)), close(**TOL),
                hints=[diagnose(variants, MAPS_MESSAGES)])


class _RefusesTooLong(close):
    """An expected ValueError for a sequence longer than context_len; anything else is told what to do."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" not in got.raised and "NotImplementedError" not in got.raised:
            did = f"raised {got.raised[0]}: {got.message}" if got.raised else "returned maps"
            self.fail(case, f"{did}. Check T against model.context_len first and raise the ValueError TinyGPT raises "
                            "('sequence length T exceeds context_len=...'), whatever pos is: a rotary model would "
                            "otherwise run silently past the length it was built for.")
        super().__call__(got, want, case)


def _maps_too_long(cfg, pos, T):
    def call(fn):
        torch = import_torch()
        return fn(check_model(cfg, pos, 0), torch.zeros(T, dtype=torch.long))

    return Case(f"attention_maps of a TinyGPT with context_len={cfg[1]} and pos={pos!r} on ids ({T},), longer than "
                "context_len: TinyGPT's ValueError", call, raises(f"sequence length {T} exceeds context_len={cfg[1]}"),
                _RefusesTooLong())


@check
def attention_maps(hidden, rng):
    if not hidden:
        return [_maps_case("attention_maps(model, ids (6,)) of TinyGPT(11, 8, 8, 2, 16, 2): shape (2, 2, 6, 6)",
                           (11, 8, 8, 2, 16, 2), "learned", rng.integers(0, 11, size=6), rng),
                _maps_case("attention_maps of a rope TinyGPT(11, 8, 8, 2, 16, 3) on ids (5,)",
                           (11, 8, 8, 2, 16, 3), "rope", rng.integers(0, 11, size=5), rng),
                *(_maps_too_long((11, 6, 8, 2, 16, 1), pos, 7) for pos in POSITIONS)]
    return [*(_maps_too_long((13, 4, 8, 2, 16, 2), pos, 9) for pos in POSITIONS),
            _maps_case("attention_maps, TinyGPT(13, 10, 12, 3, 24, 2, pos='sinusoidal'), ids (9,)",
                       (13, 10, 12, 3, 24, 2), "sinusoidal", rng.integers(0, 13, size=9), rng),
            _maps_case("attention_maps, TinyGPT(7, 4, 4, 1, 8, 1), ids (1,)", (7, 4, 4, 1, 8, 1), "learned",
                       rng.integers(0, 7, size=1), rng),
            _maps_case("attention_maps, rope TinyGPT(9, 12, 16, 4, 32, 2), ids (12,)", (9, 12, 16, 4, 32, 2), "rope",
                       rng.integers(0, 9, size=12), rng)]


# ------------------------------------------------------------------------ agreement_scores

def _agreement_case(label, maps, pairs):
    q = np.array([a for a, _ in pairs])
    k = np.array([b for _, b in pairs])
    wrong = known_mistakes(
        (lambda: maps[:, :, k, q].mean(-1), "The pairs were read as (key, query): maps[l, h, query, key] is how much "
                                           "the query reads the key, and a later key gets weight 0 under the mask."),
        (lambda: maps[:, :, q, k].sum(-1), "That is the sum over the pairs: take the mean, so the score does not "
                                          "grow with the number of sentences."),
        (lambda: maps[:, :, q, k].mean(-1).mean(0), "The layers were averaged together: return one score per head "
                                                    "of every layer, shape (n_layers, n_heads)."),
        (lambda: maps[:, :, q, :].mean(-2)[..., k].mean(-1), "Every query was paired with every key: pair each "
                                                              "query only with its own key."),
        atol=1e-6, rtol=1e-5)
    return Case(label, lambda fn: fn(tensor(maps), list(pairs)), lambda: tensor(maps[:, :, q, k].mean(-1)),
                close(**TOL), hints=[wrong])


def _random_maps(rng, L, H, T):
    s = np.where(causal(T), rng.normal(size=(L, H, T, T)) * 2, -np.inf)
    return stable_softmax(s).astype(np.float32)


@check
def agreement_scores(hidden, rng):
    if not hidden:
        return [_agreement_case("agreement_scores(maps (2, 2, 6, 6), pairs [(4, 1), (5, 2)])",
                                _random_maps(rng, 2, 2, 6), [(4, 1), (5, 2)]),
                _agreement_case("agreement_scores(maps (3, 4, 9, 9), pairs [(3, 1), (8, 5), (7, 2)])",
                                _random_maps(rng, 3, 4, 9), [(3, 1), (8, 5), (7, 2)])]
    return [_agreement_case("agreement_scores(maps (1, 2, 5, 5), pairs [(4, 0)])", _random_maps(rng, 1, 2, 5), [(4, 0)]),
            _agreement_case("agreement_scores(maps (2, 3, 12, 12), four pairs)", _random_maps(rng, 2, 3, 12),
                            [(3, 1), (6, 2), (11, 7), (9, 8)])]
