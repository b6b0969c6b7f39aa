"""The encoder-decoder that translates (translator_loss, greedy_decode, predict_rouge_reads) and the embeddings'
geometry (token_vectors, predict_contextual).

translator_loss's cases record what the decoder was fed, so a wrong shift is named by its symptom. greedy_decode runs
on a made-up translator (:class:`_RuleTranslator`) whose next word depends on the source, on the word the
decoder was fed last and on BOS being first: a loop that feeds back the wrong word, reads the wrong
position or the wrong axis, or does not stop, writes other words. token_vectors runs on the checks' own
TinyGPT (:func:`..models.torch_gpt.gpt_class`), whose right answer and known wrong readings are recomputed
through the model's own ``embed`` and ``blocks``.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, equal
from ..hints import known_mistakes, numbers
from ..models.torch_gpt import gpt_class
from ..models.weights import gpt_shapes, load, make_params
from ..questions import int_in, is_, one_of
from ..toolkit import TOL, import_torch
from .common import ask, check

# ----------------------------------------------------------------------------- greedy_decode

DECODE_MESSAGES = {
    "no_stop": "The translation goes on after EOS: the model said the sentence was over, and the words after it "
               "are noise.",
    "with_bos": "The result starts with BOS: BOS is what the decoder reads first, not a word it wrote.",
    "without_eos": "The result ends just before EOS: keep EOS as the last id, so a finished translation can be told "
                   "from one cut at max_len.",
    "first_position": "Every step wrote what the model predicts after BOS alone: the words fed back were ignored, "
                      "as if the prediction were read at the first position instead of after the last word fed in.",
    "small_ids": "The ids written are positions, not words: the largest score was looked for along the wrong "
                 "axis of the logits (B, T, V).",
    "too_long": "More ids than max_len: the loop must stop after max_len words when the model never writes EOS.",
}


class _RuleTranslator:
    """A made-up translator: logits (B, T, V) from (src (B, S), tgt_in (B, T)). Position t's choice is a word
    (ids 3 .. V - 1) that depends on src[t] and on tgt_in[t], the word it was fed last; from t = S on it is EOS.
    A decoder input that does not start with BOS shifts every choice by one word."""

    V, BOS, EOS = 13, 1, 2

    def __init__(self, never_stops: bool = False):
        self.never_stops = never_stops

    def __call__(self, src, tgt_in):
        torch = import_torch()
        for name, x in (("src", src), ("tgt_in", tgt_in)):
            if not hasattr(x, "dim") or x.dim() != 2:
                raise ValueError(f"the model takes {name} as a (B, length) tensor of ids, got "
                                 f"{tuple(getattr(x, 'shape', ())) or type(x).__name__}: a sentence needs a batch "
                                 "axis of 1 in front")
        if tgt_in.shape[1] == 0:
            raise ValueError("the decoder was given no input at all: it needs at least one id to predict the next")
        B, T = tgt_in.shape
        S = src.shape[1]
        logits = torch.zeros(B, T, self.V)
        logits += torch.linspace(0.0, 1.0, self.V)  # a gentle slope: a wrong axis still gets an answer
        for b in range(B):
            for t in range(T):
                if t >= S and not self.never_stops:
                    word = self.EOS
                else:
                    word = 3 + (int(src[b, t % S]) + int(tgt_in[b, t]) + (tgt_in[b, 0] != self.BOS)) % (self.V - 3)
                logits[b, t, word] += 5.0
        return logits


def _decode_rule(src: list[int], max_len: int, never_stops: bool = False, *, read: str = "last",
                 stop: bool = True) -> list[int]:
    """What a greedy loop writes on :class:`_RuleTranslator`; read="first" (the first position's logits) and
    read="axis" (the largest score along the positions) are known wrong loops, as is stop=False."""
    torch = import_torch()
    model = _RuleTranslator(never_stops)
    fed = [model.BOS]
    for _ in range(max_len):
        logits = model(torch.tensor([src]), torch.tensor([fed]))
        word = int({"last": lambda: logits[0, -1].argmax(), "first": lambda: logits[0, 0].argmax(),
                    "axis": lambda: logits[0].argmax(0)[-1]}[read]())
        fed.append(word)
        if stop and word == model.EOS:
            break
    return fed[1:]


def _decode_case(label: str, src: list[int], max_len: int, never_stops: bool = False) -> Case:
    # The right answer runs the made-up translator, which needs torch: it is worked out when first asked for, so
    # building the cases imports no torch (a grader builds every notebook's cases; test_judge holds it to that).
    memo: list[list[int]] = []

    def right_answer() -> list[int]:
        if not memo:
            memo.append(_decode_rule(src, max_len, never_stops))
        return memo[0]

    def call(fn):
        torch = import_torch()
        got = fn(_RuleTranslator(never_stops), torch.tensor(src), 1, 2, max_len)
        return [int(v) for v in got]  # a list or a 1-D tensor, whichever the learner built

    def shape_hint(got, want):
        g = numbers(got)
        if g is None or g.ndim != 1:
            return None
        g = g.tolist()
        right = right_answer()
        if len(g) == len(right) + 1 and g[0] == 1 and g[1:] == right:
            return DECODE_MESSAGES["with_bos"]
        if right and right[-1] == 2 and g == right[:-1]:
            return DECODE_MESSAGES["without_eos"]
        if len(g) > max_len:
            return DECODE_MESSAGES["too_long"]
        return None

    wrong = known_mistakes(
        (lambda: _decode_rule(src, max_len, never_stops, stop=False), DECODE_MESSAGES["no_stop"]),
        (lambda: _decode_rule(src, max_len, never_stops, read="first"), DECODE_MESSAGES["first_position"]),
        (lambda: _decode_rule(src, max_len, never_stops, read="axis"), DECODE_MESSAGES["small_ids"]),
        atol=0, rtol=0)
    return Case(label, call, right_answer, equal(), hints=[shape_hint, wrong])


# ----------------------------------------------------------------------------- translator_loss

FORCING_MESSAGES = {
    "fed_targets": "The decoder was fed the very words it is asked to predict: position t read its own target, so "
                   "the loss rewards copying, and at translation time that word is not there yet.",
    "no_bos": "The decoder's first input is not BOS: when it translates, it starts from BOS alone, so in training "
              "it must start there too.",
    "pad_counted": "The loss counts the padding after EOS: the positions whose target is PAD were scored, so the "
                   "translator would be trained on 'PAD follows EOS', which is no French, and short sentences weigh "
                   "less than long ones.",
    "too_long": "The decoder got an input one longer than the targets: input position t must line up with "
                "target position t.",
    "wrong_way": "BOS ends up behind the words and position t reads the word that comes after its target: the "
                 "words moved towards the start instead of one step later.",
    "bos_over_first": "Position 0 reads BOS as it should, but from position 1 on each position reads its own "
                      "target word: BOS took the place of the first word instead of pushing the words one step later.",
    "across_rows": "From the second sentence on, a row of the decoder's input starts with the last id of the row "
                   "above it: the batch was shifted as one long sequence, and the sentences leak into each other.",
}


class _Recorder:
    """Wraps :class:`_RuleTranslator` and keeps the decoder input it was fed, so a check can name the symptom."""

    def __init__(self):
        self.inner, self.fed = _RuleTranslator(), []

    def __call__(self, src, tgt_in):
        self.fed.append(tgt_in.detach().clone() if hasattr(tgt_in, "detach") else tgt_in)
        return self.inner(src, tgt_in)


def _forcing_targets(rng, B: int, T: int) -> np.ndarray:
    """(B, T) French ids of a made-up vocabulary: words 3 .. 12, then EOS (2), then PAD (0); lengths differ."""
    out = np.zeros((B, T), np.int64)
    for b in range(B):
        n = int(rng.integers(1, T - 1)) if b else T - 1  # the first sentence fills the row, the others are shorter
        out[b, :n] = rng.integers(3, 13, size=n)
        out[b, n] = 2
    return out


def _forcing_case(label: str, rng, B: int, S: int, T: int) -> Case:
    src_np = rng.integers(3, 13, size=(B, S))
    tgt_np = _forcing_targets(rng, B, T)
    bos, pad = _RuleTranslator.BOS, 0
    recorder: list[_Recorder] = []

    def loss_of(tgt_in: np.ndarray, *, ignore_pad: bool = True) -> float:
        torch = import_torch()
        logits = _RuleTranslator()(torch.tensor(src_np), torch.tensor(tgt_in))
        return float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                       torch.tensor(tgt_np).reshape(-1),
                                                       ignore_index=pad if ignore_pad else -100))

    shifted = np.concatenate([np.full((B, 1), bos), tgt_np[:, :-1]], 1)

    def call(fn):
        torch = import_torch()
        model = _Recorder()
        recorder[:] = [model]
        given = torch.tensor(tgt_np)
        out = fn(model, torch.tensor(src_np), given, bos, pad)
        if not torch.equal(given, torch.tensor(tgt_np)):
            raise ValueError("translator_loss changed the targets it was given: build the decoder's input as a new "
                             "tensor.")
        return out

    def want():
        return import_torch().tensor(loss_of(shifted))

    def fed_hint(got, want):
        if not recorder or not recorder[0].fed:
            return None
        fed = numbers(recorder[0].fed[-1])
        if fed is None or fed.ndim != 2:
            return None
        if fed.shape[1] == T + 1:
            return FORCING_MESSAGES["too_long"]
        if fed.shape != tgt_np.shape:  # every shift below keeps the targets' shape
            return None
        if np.array_equal(fed, tgt_np):
            return FORCING_MESSAGES["fed_targets"]
        if np.array_equal(fed[:, :-1], tgt_np[:, 1:]):
            return FORCING_MESSAGES["wrong_way"]
        if (fed[:, 0] == bos).all() and np.array_equal(fed[:, 1:], tgt_np[:, 1:]):
            return FORCING_MESSAGES["bos_over_first"]
        if np.array_equal(fed.ravel(), np.concatenate([[bos], tgt_np.ravel()[:-1]])):
            return FORCING_MESSAGES["across_rows"]
        if not (fed[:, 0] == bos).all():
            return FORCING_MESSAGES["no_bos"]
        return None

    wrong = known_mistakes((lambda: loss_of(shifted, ignore_pad=False), FORCING_MESSAGES["pad_counted"]),
                           atol=0.0, rtol=1e-4)
    return Case(label, call, want, close(**TOL), hints=[fed_hint, wrong])


@check
def translator_loss(hidden, rng):
    if not hidden:
        return [_forcing_case("translator_loss on a made-up translator, 3 pairs, source 5 ids, French 6 ids with "
                              "padding (bos_id=1, pad_id=0)", rng, 3, 5, 6)]
    return [_forcing_case("translator_loss, 4 pairs, source 7 ids, French 8 ids with padding", rng, 4, 7, 8),
            _forcing_case("translator_loss, 2 pairs, source 3 ids, French 4 ids with padding", rng, 2, 3, 4)]


@check
def greedy_decode(hidden, rng):
    if not hidden:
        return [_decode_case("greedy_decode on a made-up translator, src tensor([4, 9, 6, 2]), max_len=10: "
                             "4 ids, the last EOS", [4, 9, 6, 2], 10),
                _decode_case("greedy_decode, src of 7 ids, max_len=12", rng.integers(3, 13, size=7).tolist(), 12),
                _decode_case("greedy_decode with a model that never writes EOS, max_len=5: 5 ids",
                             [5, 7, 2], 5, never_stops=True)]
    return [_decode_case("greedy_decode, src of 9 ids, max_len=15", rng.integers(3, 13, size=9).tolist(), 15),
            _decode_case("greedy_decode, src of 1 id, max_len=4", [int(rng.integers(3, 13))], 4),
            _decode_case("greedy_decode, src of 6 ids, max_len=3: cut before EOS", rng.integers(3, 13, size=6).tolist(),
                         3)]


predict_rouge_reads = ask(
    "predict_rouge_reads",
    label="predict_rouge_reads(): the source position (0-6, of 'the red cat sees a big dog') that the decoder reads "
          "most while it writes 'rouge', the third French word",
    form=int_in(0, 7), compare=equal(),
    mistakes=[(is_(2), "Position 2 is where 'rouge' sits in French, but in English that place holds 'cat'. "
                       "Cross-attention matches by content, not by place: 'rouge' reads 'red', position 1."),
              (is_(0), "The first word is where a decoder with nothing to find would look; 'rouge' translates "
                       "'red', at position 1, and that is where it reads.")],
    otherwise="'rouge' translates 'red', which is at position 1 of the English sentence: the queries of the French "
              "word find the key of the English word it translates, wherever it stands.")


# ----------------------------------------------------------------------------- reads_its_translation

READS_MESSAGES = {
    "by_place": "Your share counts the French words that read the English word at their own position: that is "
                "the diagonal of the map, which the crossings leave; a word reads well when the word it reads is "
                "the one it translates, wherever that stands.",
    "input_row": "Each French word was judged by the row one place earlier: row t of the map is the decoder "
                 "position that writes tgt[:, t] (it reads tgt[:, t - 1] at its input).",
    "all_rows": "The share is too small by the rows that hold no word: EOS and PAD rows translate nothing, and "
                "they count in your denominator.",
    "count": "That is a number of words, not a share of them: divide by how many French words the batch holds.",
    "columns": "The most-read position was looked for down the columns of the map (over French positions), not "
               "along each French word's row (over English positions).",
}


def _reads_np(cross, src, tgt, translation, variant=None):
    B, T, S = cross.shape
    hits = total = 0
    for b in range(B):
        for t in range(T):
            french = int(tgt[b, t])
            if variant != "all_rows" and french not in translation.values():
                continue
            total += 1
            row = max(t - 1, 0) if variant == "input_row" else t
            read = int(cross[b, :, min(row, S - 1)].argmax()) if variant == "columns" else int(cross[b, row].argmax())
            if variant == "by_place":
                hits += read == t
            elif variant == "columns":  # a French position, read as if it were an English one
                hits += read < S and translation.get(int(src[b, read])) == french
            else:
                hits += translation.get(int(src[b, read])) == french
    return float(hits) if variant == "count" else hits / total


def _reads_case(label, rng, B, S, T, translation, aligned=0.7):
    """Made-up maps over made-up sentence pairs: most French words peak on their translation, some on their
    own position, some elsewhere; EOS (2) and PAD (0) rows peak anywhere."""
    english = sorted(translation)
    src = np.zeros((B, S), np.int64)
    tgt = np.zeros((B, T), np.int64)
    scores = rng.normal(size=(B, T, S))
    for b in range(B):
        n = int(rng.integers(2, min(S, T)))
        words = rng.choice(english, size=n, replace=False)
        src[b, :n], src[b, n] = words, 2
        order = rng.permutation(n)  # the French order: a shuffle of the English one
        tgt[b, :n], tgt[b, n] = [translation[int(words[i])] for i in order], 2
        for t in range(n):
            u = rng.random()
            peak = int(order[t]) if u < aligned else t if u < aligned + 0.15 else int(rng.integers(0, n + 1))
            scores[b, t, peak] += 4.0
    cross = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    hint = known_mistakes(*((lambda v=v: _reads_np(cross, src, tgt, translation, v), READS_MESSAGES[v])
                            for v in READS_MESSAGES), atol=1e-9, rtol=0)

    def call(fn):
        torch = import_torch()
        return fn(torch.tensor(cross, dtype=torch.float32), torch.tensor(src), torch.tensor(tgt), dict(translation))

    return Case(label, call, lambda: _reads_np(cross, src, tgt, translation), close(atol=1e-6, rtol=0),
                hints=[hint])


def _made_up_lexicon(rng, n):
    english = rng.choice(np.arange(3, 3 + 3 * n), size=n, replace=False)
    french = rng.choice(np.arange(3 + 3 * n, 3 + 6 * n), size=n, replace=False)
    return {int(e): int(f) for e, f in zip(english, french)}


def cross_attention_weights(model, src, tgt_in):
    """The translator's cross-attention weights (B, n_heads, T, S): how much French position t reads English position
    s, heads apart. Notebook 10 calls it to draw and score the translator's alignment. It is given here, not on screen,
    because its lines would be the answer to the attention_maps extension; ``model`` is the notebook's Translator
    (``encode``, ``read_french``, ``cross.ln1`` and ``cross.attn.attn``, notebook 09's layer with w_q, w_k, n_heads)."""
    torch = import_torch()
    memory, keep = model.encode(src)  # (B, S, d), (B, 1, 1, S)
    layer, reading = model.cross.attn.attn, model.cross.ln1(model.read_french(tgt_in))  # (B, T, d)
    heads = lambda w, x: w(x).unflatten(-1, (layer.n_heads, -1)).movedim(-2, 1)  # (B, H, n, D)
    q, k = heads(layer.w_q, reading), heads(layer.w_k, memory)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / q.shape[-1] ** 0.5
    return scores.masked_fill(~keep, float("-inf")).softmax(-1)


@check
def reads_its_translation(hidden, rng):
    if not hidden:
        return [_reads_case("reads_its_translation on made-up maps (3, 6, 6) of 3 sentence pairs", rng, 3, 6, 6,
                            _made_up_lexicon(rng, 6)),
                _reads_case("reads_its_translation on made-up maps (5, 8, 8)", rng, 5, 8, 8, _made_up_lexicon(rng, 9))]
    return [_reads_case("reads_its_translation on made-up maps (8, 7, 9), sentences of other lengths", rng, 8, 7, 9,
                        _made_up_lexicon(rng, 10), aligned=0.5),
            _reads_case("reads_its_translation on made-up maps (2, 5, 5)", rng, 2, 5, 5, _made_up_lexicon(rng, 5))]


# ----------------------------------------------------------------------------- token_vectors

VECTOR_MESSAGES = {
    "no_embedding": "One row short: the first row is the vector as it leaves the embedding, before any block, "
                    "then one row after each block.",
    "with_ln_f": "One row too many, or a last row rescaled: the final LayerNorm belongs to the head, not to a block; "
                 "stop at the output of the last block.",
    "last_position": "These are the vectors of the last position, not of the position asked for.",
    "no_positions": "The rows differ from the start: the sequence entered the blocks without its positions; "
                    "the model's embed adds them.",
    "no_advance": "The first row is right, the later ones are not: each block was given the embeddings instead "
                  "of what the block before it wrote.",
    "off_by_one": "These are the vectors of a neighbouring position: position p is index p of the sequence.",
}


def _vectors(model, ids, p, *, start="embed", advance=True, ln_f=False, first=True):
    torch = import_torch()
    with torch.no_grad():
        x0 = model.embed(ids[None]) if start == "embed" else model.tok_emb(ids[None])
        rows, x = ([x0[0, p]] if first else []), x0
        for block in model.blocks:
            x = block(x if advance else x0)
            rows.append(x[0, p])
        if ln_f:
            rows.append(model.ln_f(x)[0, p])
        return torch.stack(rows)


def _vectors_case(label: str, cfg: tuple, pos: str, ids: list[int], p: int, rng) -> Case:
    params = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def model():
        return load(gpt_class()(*cfg, pos=pos), params).eval()

    def call(fn):
        torch = import_torch()
        return fn(model(), torch.tensor(ids), p)

    def on(p_=p, **kw):
        return lambda: _vectors(model(), import_torch().tensor(ids), p_, **kw)

    hint = known_mistakes((on(first=False), VECTOR_MESSAGES["no_embedding"]),
                          (on(ln_f=True), VECTOR_MESSAGES["with_ln_f"]),
                          (on(ln_f=True, first=False), VECTOR_MESSAGES["with_ln_f"]),
                          (on(len(ids) - 1), VECTOR_MESSAGES["last_position"]),
                          (on(start="tok_emb"), VECTOR_MESSAGES["no_positions"]),
                          (on(advance=False), VECTOR_MESSAGES["no_advance"]),
                          (on(p + 1 if p + 1 < len(ids) else p - 1), VECTOR_MESSAGES["off_by_one"]),
                          atol=1e-5, rtol=1e-4)
    return Case(label, call, on(), close(**TOL), hints=[hint])


@check
def token_vectors(hidden, rng):
    if not hidden:
        return [_vectors_case("token_vectors(TinyGPT(11, 8, 8, 2, 16, 2), ids (6,), position=2): shape (3, 8)",
                              (11, 8, 8, 2, 16, 2), "learned", rng.integers(0, 11, size=6).tolist(), 2, rng),
                _vectors_case("token_vectors of a TinyGPT with 3 blocks, ids (5,), position=0: shape (4, 8)",
                              (11, 8, 8, 2, 16, 3), "learned", rng.integers(0, 11, size=5).tolist(), 0, rng)]
    return [_vectors_case("token_vectors, rope TinyGPT(13, 10, 12, 3, 24, 2), ids (9,), position=5",
                          (13, 10, 12, 3, 24, 2), "rope", rng.integers(0, 13, size=9).tolist(), 5, rng),
            _vectors_case("token_vectors, TinyGPT(7, 6, 4, 1, 8, 1), ids (6,), position=4", (7, 6, 4, 1, 8, 1),
                          "sinusoidal", rng.integers(0, 7, size=6).tolist(), 4, rng)]


CONTEXTUAL_CHOICES = ("smaller", "about the same", "larger")

predict_contextual = ask(
    "predict_contextual",
    label="predict_contextual(): the distance between one word's vectors in two sentences, after block 2 against "
          "after block 1",
    form=one_of(CONTEXTUAL_CHOICES), compare=equal(),
    mistakes=[(is_("smaller"), "Block 2 has no reason to undo what block 1 wrote: it adds to each vector, and "
                               "what it adds is read from earlier words that differ and from vectors that already "
                               "differ. The gap grows, to almost twice its size."),
              (is_("about the same"), "Block 2 does not pass the gap on unchanged: it adds what its attention reads, "
                                      "and it reads the earlier words, which differ, again. The gap grows, to "
                                      "almost twice its size.")])


NOUN_CHOICES = ("two singular nouns", "a singular and a plural noun", "about the same")

predict_noun_geometry = ask(
    "predict_noun_geometry",
    label="predict_noun_geometry(): in what training wrote into the embedding rows, which pair of nouns is closer",
    form=one_of(NOUN_CHOICES), compare=equal(),
    mistakes=[(is_("a singular and a plural noun"), "Next-door words barely tell 'cat' from 'cats' (both have 'the' "
                                                    "before them, 'near' or a full stop after), which is all a count "
                                                    "vector sees; but the loss also scores the verb, up to four words "
                                                    "later, and it agrees in number, so training pulls a singular and "
                                                    "a plural noun's rows apart."),
              (is_("about the same"), "The two pairs share their neighbours alike, but not what comes later: the verb "
                                      "agrees in number, and training, scored on it, writes the number into the "
                                      "rows.")],
    otherwise="Two singular nouns are closer: the verb after them agrees in number, so the task sets singular and "
              "plural apart, which the counts of next-door words barely show.")


COORDINATE_CHOICES = ("a single coordinate", "the direction", "as well as each other")

predict_coordinate = ask(
    "predict_coordinate",
    label="predict_coordinate(): does one coordinate of what training wrote separate two word groups as well as "
          "a direction",
    form=one_of(COORDINATE_CHOICES), compare=equal(),
    mistakes=[(is_("a single coordinate"), "Nothing in the model prefers the table's axes: every layer reads a row "
                                           "through a matrix that mixes its coordinates, so training writes a "
                                           "difference along whatever direction its gradients take, spread over "
                                           "many coordinates, and the best single one misses words."),
              (is_("as well as each other"), "A coordinate is one direction among all of them, and training had no "
                                             "reason to line its features up with the axes: the direction between "
                                             "the groups' means places more words right.")])
