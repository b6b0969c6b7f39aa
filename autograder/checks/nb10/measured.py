"""What the learner does to the notebook's measurements: predictions before them, and two changes they write.

The predictions come before the measurement whose outcome they name (the two placements of the norms, the causal
test on three models, the n-gram baselines, the loss on one batch, the loss after the full run, the loss at
position 0). without_positions runs on the checks' own TinyGPT and takes one AdamW step: the logits before and
after it show a position signal that is still there and one that training would bring back. init_gpt2_ is judged
by the spread of each of its draws on a TinyGPT of the checks (a few hundred draws or more each), against the
spreads the convention gives exactly; a hint reads which known wrong reading the measured spreads show.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, equal
from ..hints import known_mistakes
from ..models.torch_gpt import gpt_class
from ..questions import described, int_in, int_tuple, is_, one_of
from ..toolkit import import_torch
from .common import ask, check


PLACEMENT_CHOICES = ("pre-norm", "post-norm", "both", "neither")

predict_norm_placement = ask(
    "predict_norm_placement",
    label="predict_norm_placement(): which placement hands [1, 2, 3, 4] back unchanged when both sub-layers add 0",
    form=one_of(PLACEMENT_CHOICES), compare=equal(),
    mistakes=[(is_("post-norm"), "Post-norm normalises the sum x + f(x) itself: with f(x) = 0 that is LayerNorm(x), "
                                 "a row of mean 0 and spread 1, not x. Pre-norm normalises only what a sub-layer "
                                 "reads, so x + f(LN(x)) = x + 0 = x."),
              (is_("both"), "Only pre-norm: its LayerNorms sit inside the branches, so x + 0 passes x on. Post-norm "
                            "normalises the stream after each addition, so even with f(x) = 0 its output is "
                            "LayerNorm(x)."),
              (is_("neither"), "Pre-norm hands it back: its LayerNorm normalises only the input of each sub-layer, "
                               "and a sub-layer that adds 0 leaves x + 0 = x. Post-norm does not: it normalises "
                               "the sum.")])


predict_mask_handover = ask(
    "predict_mask_handover",
    label="predict_mask_handover(): nn.MultiheadAttention handed our causal mask (True = allowed) as it is: "
          "(rows that come out NaN, rows computed from a key after the query), of 4",
    form=described("a tuple of two ints, (nan_rows, future_rows)", int_tuple(2)), compare=equal(),
    mistakes=[((0, 0), "nn.MultiheadAttention reads True as 'not allowed' (notebooks 08 and 09), so it acts on our "
                       "mask flipped: each query keeps only the keys after it. Row 3 has no later key and nothing "
                       "to read; rows 0 to 2 read only the future."),
              ((4, 0), "Only one row loses every key: flipped, row t keeps the keys after t, and only the last row "
                       "has none. Rows 0 to 2 give numbers, read from later keys."),
              ((1, 0), "The NaN row is right, but the other three are not safe: flipped, our mask keeps for row t "
                       "exactly the keys after t, so rows 0 to 2 are numbers computed from the future alone, and "
                       "nothing in them looks wrong."),
              ((0, 3), "Our mask's last row is all True, so flipped it keeps no key: a softmax over nothing, which "
                       "nn.MultiheadAttention returns as NaN (notebook 09 showed its empty row)."),
              ((0, 4), "Our mask's last row is all True, so flipped it keeps no key: NaN, not a number. And the "
                       "flipped mask drops the diagonal too, so row 3 has no key at all.")],
    otherwise="Flipped, our lower triangle becomes the keys strictly after each query: row 3 keeps none (NaN), and rows "
              "0 to 2 read only later keys. One row fails loudly; three give numbers that read the future.")


predict_stacked_swap = ask(
    "predict_stacked_swap",
    label="predict_stacked_swap(): tokens a b c d, no positions, the first two swapped (b a c d): how many tokens keep "
          "their output through two stacked DecoderBlocks (through one, c and d do)",
    form=int_in(0, 4), compare=equal(),
    mistakes=[(is_(2), "Two is the count through one block, where c and d read the same set of vectors in both "
                       "orders. The second block reads the first block's outputs, and a and b left the first block "
                       "changed (b, now first, has read only itself), so c and d read new vectors there."),
              (is_(4), "A second block cannot undo a change: it reads the first block's outputs, those of a and b "
                       "changed, and in the second block every token reads at least one of them (b, now first, "
                       "reads itself)."),
              (is_(3), "Not even c and d keep theirs: the second block reads the first block's outputs, those of a "
                       "and b changed, and under the causal mask c and d read both of them."),
              (is_(1), "Not even d keeps its output, though it reads the most: the second block reads the first "
                       "block's outputs, those of a and b changed, and d reads them.")])


predict_causal_models = ask(
    "predict_causal_models",
    label="predict_causal_models(): how many of three fresh masked models (learned, rotary, learned with dropout 0.1) "
          "is_causal calls causal",
    form=int_in(0, 3), compare=equal(),
    mistakes=[(is_(3), "The model with dropout fails, though its mask is the one the others have: a fresh module is in "
                       "training mode, and each call of it zeroes other entries at random, so is_causal sees earlier "
                       "outputs move between its two calls. Two of the three pass."),
              (is_(1), "The rotary model passes too: a rotation changes how a query scores the keys it may read, "
                       "never which keys those are; the mask decides that. Two of the three pass."),
              (is_(0), "Two pass: the learned and the rotary model, whose outputs are the same at every call. Only "
                       "the model whose dropout is on gives earlier outputs that move between two calls.")])


BIGRAM_SHARE_CHOICES = ("less than a third", "between a third and two thirds", "more than two thirds")

predict_bigram_share = ask(
    "predict_bigram_share",
    label="predict_bigram_share(): how much of the gap from ln V down to the entropy rate a bigram table closes",
    form=one_of(BIGRAM_SHARE_CHOICES), compare=equal(),
    mistakes=[(is_("less than a third"), "In this grammar the previous word already fixes most of what may come "
                                         "next: after 'the' an adjective, a noun or a place; after a noun a verb, "
                                         "'near' or '.'; after '.' always 'the'. Counting which word follows which "
                                         "closes most of the gap: more than two thirds of it."),
              (is_("between a third and two thirds"), "More: the previous word leaves few choices in this grammar "
                                                      "('.' is always followed by 'the', a noun by a verb, 'near' "
                                                      "or '.'). What a bigram table cannot know, the number of a "
                                                      "noun some words back, is a small part of the gap.")])


OVERFIT_CHOICES = ("near 0", "near the entropy rate", "near ln V")

predict_overfit = ask(
    "predict_overfit",
    label="predict_overfit(): where the loss on one batch of 4 windows ends after the steps on it alone",
    form=one_of(OVERFIT_CHOICES), compare=equal(),
    mistakes=[(is_("near the entropy rate"), "The entropy rate bounds the loss on text the model has not seen. "
                                             "These 128 tokens are seen again at every step, and a model of 100,000 "
                                             "parameters can store which token follows which in them: it memorises "
                                             "the batch, and the loss falls towards 0."),
              (is_("near ln V"), "The model and your step do learn: the loss on a batch seen again and again "
                                 "falls at once, below the entropy rate and towards 0, because 4 windows are few "
                                 "enough to memorise.")])


# the three reference losses of the main run; two predictions ask which one a measured loss lands near
BASELINE_CHOICES = ("near the entropy rate", "near the bigram baseline", "near the unigram baseline")

predict_final_loss = ask(
    "predict_final_loss",
    label="predict_final_loss(): where the validation loss lands after the full training run",
    form=one_of(BASELINE_CHOICES), compare=equal(),
    mistakes=[(is_("near the bigram baseline"), "The bigram table knows only the previous word. The model reads up "
                                                "to 31 tokens back, and attention finds what the previous word "
                                                "does not say: the noun a verb must agree with, and whether 'the' "
                                                "starts a subject, a place or an object. The full run ends within "
                                                "a few hundredths of the entropy rate."),
              (is_("near the unigram baseline"), "Much lower: word frequencies are learnt in the first few dozen "
                                                 "steps, which word follows which soon after, and attention then "
                                                 "reads the context the grammar needs. The full run ends within a "
                                                 "few hundredths of the entropy rate.")])


predict_loss_by_position = ask(
    "predict_loss_by_position",
    label="predict_loss_by_position(): where the mean loss at position 0 of a validation window lands",
    form=one_of(BASELINE_CHOICES), compare=equal(),
    mistakes=[(is_("near the entropy rate"), "Position 0 has read one token, the window's first: it cannot know "
                                             "whether it is in a subject or an object, nor the noun the verb must "
                                             "agree with. With one token read, the best any model can do is what "
                                             "the bigram table does."),
              (is_("near the unigram baseline"), "Position 0 reads one token, and one token already says a lot: "
                                                 "after 'the' comes an adjective, a noun or a place, after a noun "
                                                 "a verb, 'near' or '.'. The model uses it as a bigram table does, "
                                                 "and lands near the bigram baseline, far below the unigram one.")])


# --------------------------------------------------------------------------- without_positions

NO_POSITION_MESSAGES = {  # symptoms a learner can see, and their likely cause; never the line
    "nothing": "The model computes what it computed before: the same token still enters the blocks as another "
               "vector at every position.",
    "frozen_only": "Before any training the same token still enters the blocks as another vector at each position: "
                   "the table can no longer learn, but its random start is still there, and a fixed random vector "
                   "per position still tells the positions apart.",
    "zeroed_only": "Right before training, wrong after it: one optimiser step later the same token enters the blocks "
                   "as another vector at each position again, so a training run would learn the positions back.",
    "tokens_gone": "The logits no longer depend on which tokens the model reads: the token vectors were taken away, "
                   "not only the positions.",
}


def _probe(model, ids, targets) -> np.ndarray:
    """(2, T, V): the logits of ``model`` on ids, then after one AdamW step (the training loop's optimiser, over the
    parameters that require a gradient) on the targets."""
    torch = import_torch()
    model.eval()
    with torch.no_grad():
        before = model(ids)[0]
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=0.05, weight_decay=0.01)
    logits = model(ids)
    torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()
    opt.step()
    with torch.no_grad():
        after = model(ids)[0]
    return torch.stack([before, after]).numpy()


def blind_np(model, how: str = "right"):
    """``model`` with its positions taken away, rightly or by a known wrong reading (in place)."""
    torch = import_torch()
    table = model.tok_emb.weight if how == "tokens_gone" else model.pos_emb.weight
    with torch.no_grad():
        if how in ("right", "zeroed_only", "tokens_gone"):
            table.zero_()
    if how in ("right", "frozen_only", "tokens_gone"):
        table.requires_grad_(False)
    return model


def _blind_symptom(got, want) -> "str | None":
    g, w = np.asarray(getattr(got, "data", got)), np.asarray(getattr(want, "data", want))
    if g.shape != w.shape:
        return None
    if not np.allclose(g[0], w[0], atol=1e-4, rtol=1e-4):
        return ("Before any training the logits are not those of the same model without positions: something "
                "other than the position vectors changed, or they still reach the blocks.")
    return ("Right before training, wrong after one optimiser step: something in the model lets training bring "
            "position vectors back.")


def _blind_case(label: str, cfg: tuple, seed: int, ids: np.ndarray, targets: np.ndarray) -> Case:
    def made():
        torch = import_torch()
        torch.manual_seed(seed)
        return gpt_class()(*cfg)

    def tensors():
        torch = import_torch()
        return torch.tensor(ids)[None], torch.tensor(targets)[None]

    def call(fn):
        torch = import_torch()
        got = fn(made())
        if not isinstance(got, torch.nn.Module):
            raise ValueError(f"without_positions returned {type(got).__name__}, not a model: change the model it is "
                             "given and return it.")
        return _probe(got, *tensors())

    hint = known_mistakes(*((lambda how=how: _probe(made() if how == "nothing" else blind_np(made(), how), *tensors()),
                             NO_POSITION_MESSAGES[how]) for how in NO_POSITION_MESSAGES), atol=1e-4, rtol=1e-4)
    return Case(label, call, lambda: _probe(blind_np(made()), *tensors()), close(atol=1e-4, rtol=1e-4),
                hints=[hint, _blind_symptom])


@check
def without_positions(hidden, rng):
    seed = int(rng.integers(0, 10_000))
    cfg = (11, 8, 12, 3, 16, 2) if not hidden else (13, 10, 16, 2, 24, 3)  # V, context, d_model, n_heads, d_ff, L
    T = cfg[1]
    ids, targets = rng.integers(0, cfg[0], size=T), rng.integers(0, cfg[0], size=T)
    if not hidden:
        ids[:4] = ids[0]  # one token four times: only a position could tell those four apart
    return [_blind_case(f"without_positions(model), then one AdamW step: the logits of {T} tokens before and after "
                        f"(a learned-position TinyGPT of {cfg[5]} blocks)", cfg, seed, ids, targets)]


# --------------------------------------------------------------------------- init_gpt2_

INIT_MESSAGES = {
    "unscaled": "The two matrices of each block that write into the residual stream (attention's output projection, "
                "the feed-forward network's second layer) start with the spread of every other matrix: all the "
                "writes add their variances, so the stream grows with the depth.",
    "per_block": "The stream's writes are scaled as if there were one per block: each block writes twice "
                 "(attention, then the feed-forward network), so their spread is still sqrt(2) too large.",
    "variance_rule": "The stream's writes start far too small: their spread was divided by the number of writes, "
                     "which divides their variance by its square; it is the variances of independent writes that "
                     "add up.",
    "all_scaled": "Every weight matrix starts scaled down, not only the two per block that write into the stream: the "
                  "embeddings, queries, keys and the head keep std itself.",
    "norms_zeroed": "A LayerNorm's scale starts at 0: every LayerNorm then puts out only its shift, whatever it "
                    "reads, so at the start no sub-layer and no head sees the stream.",
    "norms_drawn": "A LayerNorm does not start as it should: its scale must start at 1 and its shift at 0, so that "
                   "at the start it only normalises.",
    "biases_drawn": "Some biases do not start at 0: a random bias adds the same random vector at every position.",
}


def init_stats(model) -> np.ndarray:
    """Per parameter, in named order: a matrix's spread (std); a vector's mean and spread."""
    stats = []
    for _, p in model.named_parameters():
        v = p.detach().double().flatten()
        stats += [float(v.std())] if p.dim() == 2 else [float(v.mean()), float(v.std(unbiased=False))]
    return np.array(stats)


def init_want(model, std: float, how: str = "right") -> np.ndarray:
    """What :func:`init_stats` gives after GPT-2's initialisation at ``std``, exactly (no draw), or after a known
    wrong reading of it."""
    L = len(model.blocks)
    residual = {"unscaled": std, "per_block": std / np.sqrt(L), "variance_rule": std / (2 * L)}.get(
        how, std / np.sqrt(2 * L))
    stats = []
    for name, p in model.named_parameters():
        if p.dim() == 2:
            writes = name.endswith(("attn.w_o.weight", "ff.fc2.weight"))
            stats.append(residual if writes else std / np.sqrt(2 * L) if how == "all_scaled" else std)
        elif name.split(".")[-2].startswith("ln") and name.endswith("weight"):
            stats += {"norms_drawn": [0.0, std], "norms_zeroed": [0.0, 0.0]}.get(how, [1.0, 0.0])  # 1 when right
        else:
            stats += [0.0, std if how == "biases_drawn" else 0.0]
    return np.array(stats)


def _init_case(label: str, cfg: tuple, seed: int, std: "float | None") -> Case:
    def made():
        torch = import_torch()
        torch.manual_seed(seed)
        return gpt_class()(*cfg)

    s = 0.02 if std is None else std

    def call(fn):
        torch = import_torch()
        model = made()
        got = fn(model) if std is None else fn(model, std)
        if not isinstance(got, torch.nn.Module):
            raise ValueError(f"init_gpt2_ returned {type(got).__name__}, not the model: change the model in place "
                             "and return it.")
        return init_stats(got)

    tol = dict(atol=1.5e-3, rtol=0.1)  # a spread measured on a few hundred draws is within a few percent
    return Case(label, call, lambda: init_want(made(), s), close(**tol), hints=[_init_symptom(made, s)])


def _init_symptom(made, std: float):
    """The hint: which known wrong reading the measured spreads show. Vectors are read by their spread and the
    distance of their mean from 1 (a few dozen draws each: too few for a mean near 0 to be told apart from 0);
    matrices by their spread against each reading's, within 15%."""
    def hint(got, want) -> "str | None":
        g = np.asarray(getattr(got, "data", got), dtype=float)
        model = made()
        L = len(model.blocks)
        if g.shape != init_want(model, std).shape:
            return None
        at, writes, others = 0, [], []
        for name, p in model.named_parameters():
            if p.dim() == 2:
                (writes if name.endswith(("attn.w_o.weight", "ff.fc2.weight")) else others).append(g[at])
                at += 1
                continue
            mean, spread = g[at], g[at + 1]
            at += 2
            if name.split(".")[-2].startswith("ln") and name.endswith("weight"):
                if abs(mean - 1) > 0.5:
                    return INIT_MESSAGES["norms_drawn" if spread > std / 2 else "norms_zeroed"]
            elif spread > std / 2:
                return INIT_MESSAGES["biases_drawn"]
        near = lambda values, target: abs(np.median(values) / target - 1) < 0.15  # noqa: E731
        if near(others, std / np.sqrt(2 * L)):
            return INIT_MESSAGES["all_scaled"]
        for how, target in (("unscaled", std), ("per_block", std / np.sqrt(L)), ("variance_rule", std / (2 * L))):
            if near(writes, target):
                return INIT_MESSAGES[how]
        return None
    return hint


@check
def init_gpt2_(hidden, rng):
    seed = int(rng.integers(0, 10_000))
    if not hidden:
        return [_init_case("init_gpt2_(model) on a TinyGPT of 3 blocks, d_model 32: the spread of each weight "
                           "matrix, the mean and spread of each vector", (40, 16, 32, 2, 128, 3), seed, None)]
    return [_init_case("init_gpt2_(model, 0.05) on a TinyGPT of 6 blocks, d_model 32", (40, 16, 32, 2, 128, 6),
                       seed, 0.05)]


GROWTH_CHOICES = ("about 1.3 times", "about 4 times", "about 6 times", "about 30 times")

predict_unscaled_growth = ask(
    "predict_unscaled_growth",
    label="predict_unscaled_growth(): how many times the stream's spread grows over 12 blocks without the 1/sqrt(2N)",
    form=one_of(GROWTH_CHOICES), compare=equal(),
    mistakes=[(is_("about 1.3 times"), "The writes are what the scaling shrinks, and the stream is their sum: each of "
                                       "the 24 writes gets sqrt(24), about 4.9, times the spread, so the sum grows "
                                       "far more than the scaled stack's 1.26 times."),
              (is_("about 6 times"), "That multiplies spreads, and independent writes add variances. The scaled "
                                     "stack grows 1.26 times: variance 1.59, of which 0.59 is the writes'. Unscaled, "
                                     "each write has 24 times the variance: 1 + 24 x 0.59 = 15, a spread about 4 "
                                     "times the embedding's."),
              (is_("about 30 times"), "Writes that are independent add variances, not spreads: 24 times the writes' "
                                      "variance (0.59 of the embedding's in the scaled stack) makes 1 + 14 = 15, a "
                                      "spread about 4 times the embedding's.")])


REPEAT_CHOICES = ("it does not fall: attention alone cannot use a repeat", "steadily: about the same drop every 50 steps",
                  "fast at first, then slower and slower",
                  "slowly at first, then most of the fall within one 50-step stretch")

predict_repeat_drop = ask(
    "predict_repeat_drop",
    label="predict_repeat_drop(): the shape of the fall of the loss on the repeats over 250 steps",
    form=one_of(REPEAT_CHOICES), compare=equal(),
    mistakes=[(is_(REPEAT_CHOICES[0]), "A head can read any earlier position: one that reads the token after the "
                                       "earlier copy of the current token predicts every repeat, so the loss on the "
                                       "repeats has room to fall far below ln 32 = 3.47."),
              (is_(REPEAT_CHOICES[1]), "Using a repeat takes two steps done by two heads in different layers: find "
                                       "the earlier copy, then read what followed it. Neither helps much until the "
                                       "other works: look at which 50-step stretch holds most of the fall."),
              (is_(REPEAT_CHOICES[2]), "That is the shape of the grammar run, where word frequencies come first. "
                                       "Here no single head can use the repeat on its own: compare the first 50 "
                                       "steps' drop with the biggest one.")])
