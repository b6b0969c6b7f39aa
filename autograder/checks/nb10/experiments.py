"""The induction finale done by the learner: observe, detect, ablate.

observe_heads records what the learner sees in the maps before any detector. previous_token_score and
induction_score run on made-up attention maps (NumPy, turned into tensors only when called) whose right
scores and known wrong readings are recomputed here. find_heads runs on fresh repeated sequences with heads
of six kinds (previous token, induction, same token, self, first position, uniform) mixed with noise: a
threshold read off one sequence, or one that lets every head through, is caught on another. ablate_heads runs
on the checks' own TinyGPT (:func:`..models.torch_gpt.gpt_class`); its known wrong ablations are recomputed
through the same model.
"""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np

from ..compare import Case, close, equal
from ..hints import known_mistakes
from ..models.torch_gpt import gpt_class
from ..questions import is_, one_of
from ..toolkit import import_torch
from .common import ask, check
from .induction import pairs_of

KINDS = ("previous token", "induction", "same token", "self", "first position", "uniform")
FOUND = ("previous token", "induction")  # what find_heads reports

# --------------------------------------------------------------------------- observe_heads

PATTERNS = ("the diagonal", "a line just below the diagonal", "lines parallel to the diagonal, about a period back",
            "a column at position 0", "no pattern")

OBSERVE_WHY = {
    "a line just below the diagonal": "That line is a layer-0 head's: it reads the position just before its query. "
                                      "The layer-1 heads read further back, by a distance that grows with the period.",
    "the diagonal": "No trained head stays on the diagonal (its own position): that reads the token it already has.",
    "no pattern": "Below the first repeat's line the layer-1 maps are not noise: each row's weight sits at one "
                  "distance back, the same along the row, and that distance is the period's.",
}

observe_heads = ask(
    "observe_heads",
    label="observe_heads(): the pattern you see in a layer-1 head's map, and what you make of it",
    form=one_of(PATTERNS), compare=equal(), mistakes=[(is_(k), why) for k, why in OBSERVE_WHY.items()])


# --------------------------------------------------------------------------- made-up maps

def repeated_ids(rng: np.random.Generator, T: int = 32, V: int = 32, distinct: bool = True) -> np.ndarray:
    """A stretch of 5 to 16 random tokens written again and again, T tokens (the notebook's sequences); with
    distinct, no token twice within the stretch (the clean test of an induction head)."""
    period = int(rng.integers(5, 17))
    stretch = rng.permutation(V)[:period] if distinct else rng.integers(0, V, size=period)
    return stretch[np.arange(T) % period]


def head_map(kind: str, ids: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """(T, T) causal attention of one head of ``kind`` on ``ids``, mixed with ``noise`` of random causal rows."""
    T = len(ids)
    pattern = np.zeros((T, T))
    for q in range(T):
        earlier = [k for k in range(q) if ids[k] == ids[q]]
        if kind == "previous token":
            pattern[q, max(q - 1, 0)] = 1
        elif kind == "induction" and earlier:  # every earlier copy's successor, the most recent heaviest
            w = 0.5 ** np.arange(len(earlier))
            pattern[q, [k + 1 for k in earlier[::-1]]] += w / w.sum()
        elif kind == "same token" and earlier:
            pattern[q, earlier] = 1 / len(earlier)
        elif kind == "self":
            pattern[q, q] = 1
        elif kind == "uniform":
            pattern[q, :q + 1] = 1 / (q + 1)
        else:  # first position, and the induction and same-token heads where nothing occurred before
            pattern[q, 0] = 1
    random = rng.gamma(1.0, size=(T, T)) * np.tril(np.ones((T, T)))
    return (1 - noise) * pattern + noise * random / random.sum(1, keepdims=True)


def heads_of(kinds: "list[str]", ids: np.ndarray, rng: np.random.Generator, n_heads: int,
             noise: "tuple[float, float]" = (0.15, 0.35)) -> np.ndarray:
    """(L, n_heads, T, T) maps, head i of the flat list of kind kinds[i]."""
    maps = [head_map(k, ids, rng, float(rng.uniform(*noise))) for k in kinds]
    return np.stack(maps).reshape(len(kinds) // n_heads, n_heads, len(ids), len(ids))


# --------------------------------------------------------------------------- the two scores

def previous_score_np(maps: np.ndarray, offset: int = -1, over_all: bool = False) -> np.ndarray:
    """Mean weight on the key ``offset`` from the query (right: -1, over queries 1..T-1)."""
    diag = np.diagonal(maps, offset=offset, axis1=-2, axis2=-1)
    return diag.sum(-1) / maps.shape[-1] if over_all else diag.mean(-1)


def induction_score_np(maps: np.ndarray, ids, *, after: int = 1, most_recent: bool = True,
                       over_all: bool = False) -> np.ndarray:
    """Mean weight on the induction pairs of ids (right: after=1, the most recent, over the pairs)."""
    pairs = [(q, k) for q, k in pairs_of(list(ids), after=after, most_recent=most_recent) if k < maps.shape[-1]]
    q, k = np.array(pairs).T
    total = maps[..., q, k].sum(-1)
    return total / maps.shape[-1] if over_all else total / len(pairs)


SCORE_MESSAGES = {
    "diagonal": "Your score is each head's weight on the query's own position: a head that reads itself scores 1 "
                "and a previous-token head scores near 0. The key it should read lies one place earlier.",
    "after": "Your score reads one place too far back or forward: a previous-token head scores near 0 on it.",
    "over_all": "The score is diluted: query 0 has no previous position, yet it counts in your average, so even a "
                "perfect head scores below 1. Average over the queries that have a key to read.",
    "same_token": "Your induction score is the weight on the earlier occurrence of the query's own token: that is "
                  "what an induction head matches, not what it reads, so a head that only looks at copies of the "
                  "token scores high and the induction head low.",
    "first_copy": "Your induction score reads the first copy of the token, not the most recent: in a sequence "
                  "repeated three times or more, the induction head's heaviest weight is on the latest copy.",
    "two_after": "Your induction score reads two places after the earlier occurrence: the token that followed "
                 "it is one place after.",
    "ind_over_all": "The induction score is diluted: queries whose token never occurred before have nothing to "
                    "copy, yet they count in your average, so even a perfect induction head scores well below 1.",
}


def _as_tensor(a: np.ndarray):
    return import_torch().tensor(a, dtype=import_torch().float32)


def _score_case(label: str, maps: np.ndarray, ids: "np.ndarray | None") -> Case:
    if ids is None:
        variants = {"diagonal": lambda: previous_score_np(maps, 0), "after": lambda: previous_score_np(maps, -2),
                    "over_all": lambda: previous_score_np(maps, over_all=True)}
        right = lambda: previous_score_np(maps)  # noqa: E731

        def call(fn):
            return fn(_as_tensor(maps))
    else:
        variants = {"same_token": lambda: induction_score_np(maps, ids, after=0),
                    "first_copy": lambda: induction_score_np(maps, ids, most_recent=False),
                    "two_after": lambda: induction_score_np(maps, ids, after=2),
                    "ind_over_all": lambda: induction_score_np(maps, ids, over_all=True)}
        right = lambda: induction_score_np(maps, ids)  # noqa: E731

        def call(fn):
            return fn(_as_tensor(maps), import_torch().tensor(ids))
    hint = known_mistakes(*((v, SCORE_MESSAGES[n]) for n, v in variants.items()), atol=1e-5, rtol=1e-4)
    return Case(label, call, lambda: _as_tensor(np.asarray(right())), close(atol=1e-5, rtol=1e-4), hints=[hint])


@check
def previous_token_score(hidden, rng):
    ids = repeated_ids(rng, T=12)
    one = heads_of(["previous token"], ids, rng, 1)
    kinds = list(rng.permutation(KINDS))
    return [_score_case("previous_token_score of one previous-token head's (1, 1, 12, 12) map", one, None),
            _score_case(f"previous_token_score of (2, 3, 12, 12) maps, heads: {', '.join(kinds)}",
                        heads_of(kinds, ids, rng, 3), None)] if not hidden else [
            _score_case("previous_token_score of (3, 2, 20, 20) maps", heads_of(
                list(rng.permutation(KINDS)), repeated_ids(rng, T=20), rng, 2, noise=(0.3, 0.6)), None)]


@check
def induction_score(hidden, rng):
    if not hidden:
        ids = np.array([4, 7, 1, 9, 5, 4, 7, 1, 9, 5, 4, 7, 1, 9])  # period 5, nearly three times
        kinds = list(rng.permutation(KINDS))
        return [_score_case("induction_score of one induction head's (1, 1, 14, 14) map on [4, 7, 1, 9, 5] written "
                            "again and again", heads_of(["induction"], ids, rng, 1), ids),
                _score_case(f"induction_score of (2, 3, 14, 14) maps on the same sequence, heads: {', '.join(kinds)}",
                            heads_of(kinds, ids, rng, 3), ids)]
    ids = repeated_ids(rng, T=24, V=8, distinct=False)  # few tokens: repeats inside the stretch too
    return [_score_case("induction_score of (3, 2, 24, 24) maps on a sequence of 8 tokens",
                        heads_of(list(rng.permutation(KINDS)), ids, rng, 2, noise=(0.3, 0.6)), ids)]


# --------------------------------------------------------------------------- find_heads

def _found(got) -> "dict[str, list[tuple[int, int]]]":
    if not isinstance(got, dict) or set(got) != set(FOUND):
        raise ValueError(f"find_heads should return a dict with the keys {list(FOUND)}, got "
                         f"{sorted(got) if isinstance(got, dict) else type(got).__name__}.")
    return {name: sorted((int(layer), int(head)) for layer, head in got[name]) for name in FOUND}


def _heads_case(label: str, ids: np.ndarray, kinds: "list[str]", maps: np.ndarray, n_heads: int) -> Case:
    where = {k: divmod(i, n_heads) for i, k in enumerate(kinds)}
    want = {name: [where[name]] for name in FOUND}

    def symptom(got, _want):
        notes = []
        for name in FOUND:
            score = previous_score_np(maps) if name == "previous token" else induction_score_np(maps, ids)
            for layer, head in got[name]:
                if (layer, head) != where[name]:
                    kind = kinds[layer * n_heads + head]
                    notes.append(f"it calls the {kind} head (layer {layer}, head {head}; {name} score "
                                 f"{score[layer, head]:.2f}) {'an' if name[0] in 'aeiou' else 'a'} {name} head")
            if where[name] not in got[name]:
                layer, head = where[name]
                notes.append(f"it misses the {name} head (layer {layer}, head {head}), whose {name} score is "
                             f"{score[layer, head]:.2f} on this sequence")
        return ("On a fresh sequence " + "; ".join(notes) + ". A threshold must hold on sequences it was not "
                "read from: look at the scores of every kind of head, not only the trained model's.") if notes else None

    return Case(label, lambda fn: _found(fn(_as_tensor(maps), import_torch().tensor(ids))), lambda: want, equal(),
                hints=[symptom])


@check
def find_heads(hidden, rng):
    cases = []
    for i in range(3 if not hidden else 4):
        ids = repeated_ids(rng)
        kinds = list(rng.permutation(KINDS))
        n_heads = 3 if i % 2 == 0 else 2
        noise = (0.15, 0.3) if not hidden else (0.25, 0.4)
        maps = heads_of(kinds, ids, rng, n_heads, noise)
        cases.append(_heads_case(f"find_heads on a fresh repeated sequence of period {_period(ids)}, "
                                 f"({len(kinds) // n_heads}, {n_heads}, 32, 32) maps with six kinds of head",
                                 ids, kinds, maps, n_heads))
    return cases


def _period(ids: np.ndarray) -> int:
    return next(p for p in range(1, len(ids) + 1) if (ids[p:] == ids[:len(ids) - p]).all())


# --------------------------------------------------------------------------- ablate_heads

ABLATE_MESSAGES = {
    "rows": "The ablated model's output differs from a model whose chosen heads write nothing: you zeroed a slice "
            "of output features (what every head writes into those features), not the slice the chosen head's "
            "output is read from.",
    "layer": "More changed than the chosen heads: the other heads of the same layer were silenced too.",
    "all": "Every head of the model was silenced, not only the chosen ones.",
    "swapped": "A head was silenced, but not the chosen one: (layer, head) were read the other way round.",
    "nothing": "The returned model gives the same output as the original: the chosen heads still write into the "
               "stream.",
}


def ablate_np(model, heads, how: str = "right"):
    """A copy of ``model`` with ``heads`` silenced, rightly or by a known wrong reading."""
    torch = import_torch()
    m = copy.deepcopy(model)
    H = m.blocks[0].attn.n_heads
    if how == "all":
        heads = [(layer, h) for layer in range(len(m.blocks)) for h in range(H)]
    elif how == "layer":
        heads = [(layer, h) for layer in {lay for lay, _ in heads} for h in range(H)]
    elif how == "swapped":
        heads = [(h, layer) for layer, h in heads]
    with torch.no_grad():
        for layer, h in ([] if how == "nothing" else heads):
            attn = m.blocks[layer].attn
            cols = slice(h * attn.d_head, (h + 1) * attn.d_head)
            (attn.w_o.weight[cols] if how == "rows" else attn.w_o.weight[:, cols]).zero_()
    return m


def _ablate_case(label: str, cfg: tuple, seed: int, heads: "list[tuple[int, int]]", ids: np.ndarray) -> Case:
    state = {}

    def model():
        if "model" not in state:
            torch = import_torch()
            torch.manual_seed(seed)
            state["model"] = gpt_class()(*cfg).eval()
        return state["model"]

    def run(m):
        with import_torch().no_grad():
            return m(import_torch().tensor(ids)[None])[0]

    def call(fn):
        original = model()
        before = run(original)
        got = run(fn(original, list(heads)))
        if not import_torch().equal(run(original), before):
            raise ValueError("ablate_heads changed the model it was given: return a copy (copy.deepcopy) and silence "
                             "the heads there, so the original can still be measured beside it.")
        return got

    hint = known_mistakes(*((lambda how=how: run(ablate_np(model(), heads, how)), ABLATE_MESSAGES[how])
                            for how in ABLATE_MESSAGES), atol=1e-5, rtol=1e-4)
    return Case(label, call, lambda: run(ablate_np(model(), heads)), close(atol=1e-5, rtol=1e-4), hints=[hint])


@check
def ablate_heads(hidden, rng):
    seed = int(rng.integers(0, 10_000))
    ids = rng.integers(0, 11, size=8)
    cfg = (11, 8, 12, 3, 16, 2)  # V, context, d_model, n_heads, d_ff, n_layers
    if not hidden:
        return [_ablate_case("ablate_heads(model, [(1, 2)]): 2 layers of 3 heads, the logits of 8 tokens", cfg, seed,
                             [(1, 2)], ids),
                _ablate_case("ablate_heads(model, [(0, 1), (1, 0)])", cfg, seed, [(0, 1), (1, 0)], ids)]
    return [_ablate_case("ablate_heads(model, [(0, 2)]) of 3 layers", (11, 8, 12, 3, 16, 3), seed, [(0, 2)], ids),
            _ablate_case("ablate_heads(model, []): nothing silenced", cfg, seed, [], ids)]


# --------------------------------------------------------------------------- my_experiment

EXPERIMENT_FORM = "an experiment of your own design, and a change that alters the model"


def _altered(change) -> str:
    """What the change does to a fresh model of the experiments' shape (4 blocks of one head): ``EXPERIMENT_FORM``
    when it alters the parameter count or the logits, else a ValueError that says what is missing."""
    torch = import_torch()
    torch.manual_seed(0)
    fresh = gpt_class()(13, 16, 16, 1, 32, 4).eval()  # V, context, d_model, n_heads, d_ff, n_layers
    ids = torch.arange(12)[None] % 13
    with torch.no_grad():
        before, count = fresh(ids), sum(p.numel() for p in fresh.parameters())
    try:
        changed = change(copy.deepcopy(fresh))
    except Exception as exc:
        raise ValueError(f"your change raised {type(exc).__name__}: {exc}, on a freshly built TinyGPT of 4 "
                         "blocks (the experiments' shape, smaller): it must take a model and return the model "
                         "changed.") from None
    if not isinstance(changed, torch.nn.Module):
        raise ValueError(f"your change returned {type(changed).__name__}, not a model: return the model you changed.")
    with torch.no_grad():
        after = changed.eval()(ids)
    if sum(p.numel() for p in changed.parameters()) == count and after.shape == before.shape \
            and torch.allclose(after, before):
        raise ValueError("your change leaves the model as it was: the same number of parameters, and the same "
                         "logits on the same tokens, so measuring it can only repeat the baseline.")
    return EXPERIMENT_FORM


def _experiment_form(got) -> str:
    if not isinstance(got, dict) or not {"hypothesis", "change"} <= set(got):
        raise ValueError("my_experiment() should return a dict with 'hypothesis' (a sentence) and 'change' (a "
                         f"function from a model to the changed model); got {type(got).__name__}"
                         f"{' with the keys ' + str(sorted(got)) if isinstance(got, dict) else ''}.")
    words = got["hypothesis"].split() if isinstance(got["hypothesis"], str) else []
    if len(words) < 8:
        plural = "" if len(words) == 1 else "s"
        raise ValueError(f"the hypothesis has {len(words)} word{plural}: say in one sentence what you change, "
                         "what you expect the validation loss to do, and why.")
    if not callable(got["change"]):
        raise ValueError(f"'change' is {type(got['change']).__name__}: make it a function that takes a model and "
                         "returns it changed.")
    return _altered(got["change"])


@check
def my_experiment(hidden, rng):
    label = ("my_experiment(): a hypothesis of 8 words or more, and a change that alters a freshly built model"
             if not hidden else "my_experiment(), graded: the same, for completion")
    return [Case(label, lambda fn: _experiment_form(fn()), lambda: EXPERIMENT_FORM, equal())]


# --------------------------------------------------------------------------- switched_forward

FORWARD_MESSAGES = {
    "norm_ignored": "With norm='post' your block gives what the pre-norm block gives: the norm switch changes nothing.",
    "residual_ignored": "With residual=False the output still carries the input along: each sub-layer's result was "
                        "added to the stream it read, as if the switch were on.",
    "residual_kept_in_post": "Post-norm without residual gives the post-norm block with residual: with the switch "
                             "off, nothing of the input may pass around a sub-layer, post-norm or not.",
    "norm_on_the_branch": "Post-norm's output is not normalised: your block normalises each sub-layer's output and "
                          "then adds the input back, so the stream's scale still grows; the 2017 block normalises "
                          "the sum.",
    "one_norm": "Both sub-layers were normalised by the same LayerNorm: the feed-forward network has its own.",
    "no_mask": "Position 0's output depends on later positions: the attention saw the future (no causal mask).",
    "scaled_ignored": "With scaled=False your block gives what the scaled block gives: the scaling switch changes "
                      "nothing.",
    "scaled_twice": "With scaled=False your attention is flatter than the scaled block's, not sharper: its scores "
                    "were divided by sqrt(D) once more instead of left as raw dot products.",
    "scaled_by_d": "With scaled=False your scores are the raw dot products times sqrt(D): the scaling was undone "
                   "twice over (a factor D where sqrt(D) cancels it).",
}


def _raw_attention(a, h, allowed, factor: float):
    """Causal attention of ``a`` (09's MultiHeadAttention, no RoPE) on h whose scores q.k are multiplied by
    factor / sqrt(D): factor sqrt(D) is no scaling, 1 the scaled block."""
    torch = import_torch()
    B, T, _ = h.shape
    q, k, v = (w(h).view(B, T, a.n_heads, -1).transpose(1, 2) for w in (a.w_q, a.w_k, a.w_v))
    scores = (q @ k.transpose(-2, -1)) * factor / q.shape[-1] ** 0.5
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return a.w_o((weights @ v).transpose(1, 2).reshape(B, T, -1))


def _switched_np(block, x, norm: str, residual: bool, variant: "str | None" = None, scaled: bool = True):
    """The block under the switches (norm 'pre'/'post', residual on/off, scaled on/off), or a known wrong
    reading of them."""
    torch = import_torch()
    T = x.shape[1]
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    attend = (lambda h: block.attn(h)) if variant == "no_mask" else (lambda h: block.attn(h, mask=allowed))
    if not scaled and variant != "scaled_ignored":
        root_d = (x.shape[-1] // block.attn.n_heads) ** 0.5
        factor = {"scaled_twice": 1 / root_d, "scaled_by_d": root_d ** 2}.get(variant, root_d)
        attend = lambda h: _raw_attention(block.attn, h, allowed, factor)  # noqa: E731
    norm = "pre" if variant == "norm_ignored" else norm
    residual = True if variant == "residual_ignored" or (variant == "residual_kept_in_post" and norm == "post") \
        else residual
    second = block.ln1 if variant == "one_norm" else block.ln2
    with torch.no_grad():
        for sublayer, ln in ((attend, block.ln1), (block.ff, second)):
            if norm == "post" and variant == "norm_on_the_branch":
                x = x + ln(sublayer(x)) if residual else ln(sublayer(x))
            elif norm == "post":
                x = ln(x + sublayer(x)) if residual else ln(sublayer(x))
            else:
                x = x + sublayer(ln(x)) if residual else sublayer(ln(x))
    return x.numpy()


def _forward_case(norm: str, residual: bool, seed: int, shape: tuple, scaled: bool = True) -> Case:
    state = {}

    def made():
        if not state:
            torch = import_torch()
            torch.manual_seed(seed)
            block = gpt_class()(11, 8, shape[2], 2, 24, 1).blocks[0].eval()
            with torch.no_grad():  # LayerNorm's own scale and shift, so a norm left out or swapped shows
                for ln in (block.ln1, block.ln2):
                    ln.weight.uniform_(0.5, 1.5)
                    ln.bias.normal_(0.0, 0.3)
            state.update(block=block, x=torch.randn(*shape) * 2.0)
        return state["block"], state["x"]

    switches = SimpleNamespace(residual=residual, final_norm=True, scaled=scaled, norm=norm, warmup=True, pos="learned")

    def call(fn):
        block, x = made()
        with import_torch().no_grad():
            return fn(block, switches)(x.clone())

    variants = ("norm_ignored", "residual_kept_in_post", "norm_on_the_branch", "one_norm", "no_mask") if residual \
        else ("residual_kept_in_post", "residual_ignored", "norm_ignored", "one_norm", "no_mask")  # the first fits
    if not scaled:
        variants = ("scaled_ignored", "scaled_twice", "scaled_by_d") + variants
    hint = known_mistakes(*((lambda v=v: _switched_np(*made(), norm, residual, v, scaled), FORWARD_MESSAGES[v])
                            for v in variants), atol=1e-4, rtol=1e-4)
    label = (f"switched_forward(block, Switches(norm={norm!r}, residual={residual}"
             f"{'' if scaled else ', scaled=False'}))(x), x of shape {shape}")
    return Case(label, call, lambda: _switched_np(*made(), norm, residual, scaled=scaled),
                close(atol=1e-4, rtol=1e-4), hints=[hint])


@check
def switched_forward(hidden, rng):
    seed = int(rng.integers(0, 10_000))
    if not hidden:
        return [*(_forward_case(n, r, seed, (2, 5, 8)) for n, r in (("pre", True), ("post", True), ("pre", False),
                                                                    ("post", False))),
                _forward_case("pre", True, seed, (2, 5, 8), scaled=False)]
    return [_forward_case("post", True, seed, (1, 7, 12)), _forward_case("post", False, seed, (3, 4, 12)),
            _forward_case("pre", False, seed, (1, 7, 12)), _forward_case("pre", True, seed, (2, 6, 12), scaled=False),
            _forward_case("post", True, seed, (1, 5, 12), scaled=False)]
