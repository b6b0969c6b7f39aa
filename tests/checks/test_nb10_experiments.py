"""Do the checks of notebook 10's induction finale (observe_heads, previous_token_score, induction_score,
find_heads, ablate_heads) reject the mistakes students make, each with its own symptom, and accept other
correct code?

MISTAKES and ALTERNATIVES are data in the harness's form, so the notebook's standard suite runs them through
its test cells (tests/checks/test_nb10.py); the tests below add what that suite does not ask.
"""
import numpy as np
import pytest

from autograder.checks import nb10
from tests.harness import (Mistake, answer, assert_accepted, assert_rejected_everywhere_each_in_its_own_words, defined,
                           indent, returns)

pytestmark = pytest.mark.nb10
A = "10_decoder_block"

EXERCISES = ("switched_forward", "my_experiment", "previous_token_score", "induction_score", "find_heads",
             "ablate_heads", "without_positions", "init_gpt2_")
SIGNATURES = {"previous_token_score": "def previous_token_score(attn):",
              "induction_score": "def induction_score(attn, seq):",
              "find_heads": "def find_heads(maps, ids):",
              "ablate_heads": "def ablate_heads(model, heads):",
              "my_experiment": "def my_experiment():",
              "switched_forward": "def switched_forward(block, switches):",
              "without_positions": "def without_positions(model):",
              "init_gpt2_": "def init_gpt2_(model, std=0.02):"}

FORWARD = """
def forward(x):
    T = x.shape[1]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    a = block.attn

    def attend(h):
        if {scaled}:
            return a(h, {mask})
        B = h.shape[0]
        q, k, v = (w(h).view(B, T, a.n_heads, -1).transpose(1, 2) for w in (a.w_q, a.w_k, a.w_v))
        s = (q @ k.transpose(-2, -1)){raw}
        s = s.masked_fill(~allowed, float("-inf"))
        return a.w_o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, -1))
    for sublayer, norm in ((attend, block.ln1), (block.ff, {second})):
        if {post}:
            x = {post_line}
        else:
            x = {pre_line}
    return x
return forward
"""


def forward(mask="mask=allowed", second="block.ln2", post='switches.norm == "post"',
            post_line="norm(x + sublayer(x)) if switches.residual else norm(sublayer(x))",
            pre_line="x + sublayer(norm(x)) if switches.residual else sublayer(norm(x))",
            scaled="switches.scaled", raw="") -> str:
    return define("switched_forward", FORWARD.format(mask=mask, second=second, post=post, post_line=post_line,
                                                     pre_line=pre_line, scaled=scaled, raw=raw))

HYPOTHESIS = "'with half the blocks the loss after 40 steps is higher, since a shallower stack learns less'"


def experiment(change: str, hypothesis: str = HYPOTHESIS) -> str:
    return define("my_experiment", f"""
def change(model):
{indent(change, 4)}
return {{"hypothesis": {hypothesis}, "change": change}}
""")


def define(exercise: str, body: str, before: str = "") -> str:
    return f"{before}\n{SIGNATURES[exercise]}\n{indent(body, 4)}\n"


# the learner's own pieces find_heads may call: the right scores, written one way
SCORES = """
def _previous(attn):
    return attn.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)


def _induction(attn, seq):
    last, qs, ks = {}, [], []
    for q, t in enumerate(seq.tolist()):
        if t in last:
            qs.append(q)
            ks.append(last[t] + 1)
        last[t] = q
    return attn[..., qs, ks].mean(-1)
"""


def finder(prev_at: float, ind_at: float) -> str:
    return define("find_heads", f"""
prev, ind = _previous(maps), _induction(maps, ids)
return {{"previous token": [tuple(i) for i in (prev > {prev_at}).nonzero().tolist()],
        "induction": [tuple(i) for i in (ind > {ind_at}).nonzero().tolist()]}}
""", SCORES)


def ablation(body: str) -> str:
    return define("ablate_heads", body, "import copy")


COLUMNS = """
new = copy.deepcopy(model)
with torch.no_grad():
    for layer, head in heads:
        attn = new.blocks[layer].attn
        D = attn.d_head
        {zero}
return new
"""

MISTAKES = [
    Mistake("previous_token_score", "reads_the_diagonal",
            define("previous_token_score", "return attn.diagonal(dim1=-2, dim2=-1).mean(-1)"), "one place earlier"),
    Mistake("previous_token_score", "two_back",
            define("previous_token_score", "return attn.diagonal(offset=-2, dim1=-2, dim2=-1).mean(-1)"),
            "one place too far"),
    Mistake("previous_token_score", "averaged_over_every_query",
            define("previous_token_score", "return attn.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / "
                                           "attn.shape[-1]"), "diluted"),
    Mistake("induction_score", "reads_the_earlier_occurrence", define("induction_score", """
last, pairs = {}, []
for q, t in enumerate(seq.tolist()):
    if t in last:
        pairs.append((q, last[t]))
    last[t] = q
return torch.stack([attn[..., q, k] for q, k in pairs], -1).mean(-1)
"""), "not what it reads"),
    Mistake("induction_score", "reads_the_first_copy", define("induction_score", """
first, pairs = {}, []
for q, t in enumerate(seq.tolist()):
    if t in first:
        pairs.append((q, first[t] + 1))
    else:
        first[t] = q
return torch.stack([attn[..., q, k] for q, k in pairs], -1).mean(-1)
"""), "first copy"),
    Mistake("induction_score", "averaged_over_every_query", define("induction_score", """
last, total = {}, 0
for q, t in enumerate(seq.tolist()):
    if t in last:
        total = total + attn[..., q, last[t] + 1]
    last[t] = q
return total / len(seq)
"""), "nothing to copy"),
    Mistake("find_heads", "threshold_read_off_one_sharp_head", finder(0.9, 0.9), "misses the"),
    Mistake("find_heads", "threshold_that_lets_everything_through", finder(0.05, 0.05), "calls the uniform head"),
    Mistake("find_heads", "the_top_head_of_each_layer", define("find_heads", """
prev, ind = _previous(maps), _induction(maps, ids)
return {"previous token": [(layer, int(prev[layer].argmax())) for layer in range(len(prev))],
        "induction": [(layer, int(ind[layer].argmax())) for layer in range(len(ind))]}
""", SCORES), "calls the"),
    Mistake("ablate_heads", "zeroes_the_wrong_axis",
            ablation(COLUMNS.format(zero="attn.w_o.weight[head * D:(head + 1) * D] = 0")), "output features"),
    Mistake("ablate_heads", "silences_the_whole_layer",
            ablation(COLUMNS.format(zero="attn.w_o.weight[:] = 0")), "same layer"),
    Mistake("ablate_heads", "silences_every_head", ablation("""
new = copy.deepcopy(model)
with torch.no_grad():
    for block in new.blocks:
        block.attn.w_o.weight.zero_()
return new
"""), "every head"),
    Mistake("ablate_heads", "changes_nothing", ablation("return copy.deepcopy(model)"), "still write"),
    Mistake("ablate_heads", "in_place", ablation("""
with torch.no_grad():
    for layer, head in heads:
        attn = model.blocks[layer].attn
        attn.w_o.weight[:, head * attn.d_head:(head + 1) * attn.d_head] = 0
return model
"""), "changed the model it was given"),
]

MISTAKES += [  # the switches in the learner's own block: each flag read wrong shows its own symptom
    Mistake("switched_forward", "norm_switch_ignored", forward(post="False"), "changes nothing"),
    Mistake("switched_forward", "residual_switch_ignored",
            forward(pre_line="x + sublayer(norm(x))", post_line="norm(x + sublayer(x))"), "carries the input along"),
    Mistake("switched_forward", "post_norm_keeps_its_residual", forward(post_line="norm(x + sublayer(x))"),
            "post-norm or not"),
    Mistake("switched_forward", "post_norm_on_the_branch",
            forward(post_line="x + norm(sublayer(x)) if switches.residual else norm(sublayer(x))"), "normalises the sum"),
    Mistake("switched_forward", "one_layernorm_for_both", forward(second="block.ln1"), "has its own"),
    Mistake("switched_forward", "no_causal_mask", forward(mask=""), "saw the future"),
    Mistake("switched_forward", "scaling_switch_ignored", forward(scaled="True"), "scaling switch changes nothing"),
    Mistake("switched_forward", "scaled_once_more", forward(raw=" / q.shape[-1]"), "flatter than the scaled"),
    Mistake("switched_forward", "times_root_d", forward(raw=" * q.shape[-1] ** 0.5"), "undone twice over"),
]

MISTAKES += [  # an experiment of the learner's own: its form is checked, and that the change changes something
    Mistake("my_experiment", "a_change_that_changes_nothing", experiment("return model"), "leaves the model as it was"),
    Mistake("my_experiment", "no_hypothesis", experiment("model.ln_f = torch.nn.Identity()\nreturn model", "'fewer'"),
            "the hypothesis has 1 word:"),
    Mistake("my_experiment", "a_change_that_is_not_a_function", define("my_experiment", f"""
return {{"hypothesis": {HYPOTHESIS}, "change": "half the blocks"}}
"""), "make it a function"),
    Mistake("my_experiment", "a_change_that_returns_nothing", experiment("model.blocks = model.blocks[:2]"),
            "not a model"),
]

MISTAKES += [  # the ablation of positions: what is left of them shows before training, or after one step
    Mistake("without_positions", "table_zeroed_but_trainable", define("without_positions", """
with torch.no_grad():
    model.pos_emb.weight.zero_()
return model
"""), "learn the positions back"),
    Mistake("without_positions", "table_frozen_at_its_random_start", define("without_positions", """
model.pos_emb.weight.requires_grad_(False)
return model
"""), "random start is still there"),
    Mistake("without_positions", "token_table_cleared", define("without_positions", """
with torch.no_grad():
    model.tok_emb.weight.zero_()
model.tok_emb.weight.requires_grad_(False)
return model
"""), "which tokens the model reads"),
    Mistake("without_positions", "nothing_changed", define("without_positions", "return model"),
            "computes what it computed before"),
    Mistake("without_positions", "returns_nothing", define("without_positions", """
with torch.no_grad():
    model.pos_emb.weight.zero_()
model.pos_emb.weight.requires_grad_(False)
"""), "not a model"),
]

INIT = """
L = len(model.blocks)
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith(("attn.w_o.weight", "ff.fc2.weight")):
            p.normal_(0.0, {residual})
        elif p.dim() == 2:
            p.normal_(0.0, {other})
        elif {is_norm}:
            {norm}
        else:
            {bias}
return model
"""


def init(residual="std / (2 * L) ** 0.5", other="std",
         is_norm='name.split(".")[-2].startswith("ln") and name.endswith("weight")', norm="p.fill_(1.0)",
         bias="p.zero_()") -> str:
    return define("init_gpt2_", INIT.format(residual=residual, other=other, is_norm=is_norm, norm=norm, bias=bias))


MISTAKES += [  # GPT-2's initialisation: each wrong reading of the rule shows in the spread of its own draws
    Mistake("init_gpt2_", "residual_writes_not_scaled", init(residual="std"), "grows with the depth"),
    Mistake("init_gpt2_", "one_write_per_block", init(residual="std / L ** 0.5"), "one per block"),
    Mistake("init_gpt2_", "std_divided_by_the_writes", init(residual="std / (2 * L)"), "divides their variance"),
    Mistake("init_gpt2_", "every_matrix_scaled", init(other="std / (2 * L) ** 0.5"), "not only the two"),
    Mistake("init_gpt2_", "every_vector_zeroed", init(is_norm="False"), "only its shift"),
    Mistake("init_gpt2_", "biases_drawn", init(bias="p.normal_(0.0, std)"), "do not start at 0"),
]

MISTAKES += [  # the observation: any pattern of the list is recorded, a made-up one is refused
    returns("observe_heads", "not_a_pattern", "('stripes', 'I see stripes')", "answer with one of"),
    returns("observe_heads", "the_layer_0_line", "('a line just below the diagonal', 'the previous token')",
            "layer-0 head's"),
    returns("observe_heads", "nothing_seen", "('no pattern', 'looks like noise')", "not noise"),
]

ALTERNATIVES = {
    # the embedding bypassed: the table stays, unused, and a parameter without a gradient is never stepped
    "without_positions": define("without_positions", """
model.embed = lambda ids, start=0: model.tok_emb(ids)
return model
"""),
    # module by module rather than by parameter name
    "init_gpt2_": define("init_gpt2_", """
import math
with torch.no_grad():
    for name, m in model.named_modules():
        if name.split(".")[-1].startswith("ln"):
            m.weight.fill_(1.0)
            m.bias.zero_()
        elif isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
            m.weight.normal_(0.0, std)
            if getattr(m, "bias", None) is not None:
                m.bias.zero_()
    for block in model.blocks:
        block.attn.w_o.weight.normal_(0.0, std / math.sqrt(2 * len(model.blocks)))
        block.ff.fc2.weight.normal_(0.0, std / math.sqrt(2 * len(model.blocks)))
return model
"""),
    "observe_heads": answer("observe_heads", "('a line just below the diagonal', 'looks like the previous token')"),
    "switched_forward": define("switched_forward", """
def raw_attention(h, mask):  # scores not divided by sqrt(D): torch's own attention with scale 1
    a, (B, T, d) = block.attn, h.shape
    q, k, v = [w(h).reshape(B, T, a.n_heads, d // a.n_heads).permute(0, 2, 1, 3) for w in (a.w_q, a.w_k, a.w_v)]
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
    return a.w_o(out.permute(0, 2, 1, 3).reshape(B, T, d))


def run(x):
    mask = torch.ones(x.shape[1], x.shape[1]).tril().bool()
    post = switches.norm == "post"
    attend = (lambda h: block.attn(h, mask=mask)) if switches.scaled else (lambda h: raw_attention(h, mask))
    h = attend(x if post else block.ln1(x))
    x = h + x if switches.residual else h
    x = block.ln1(x) if post else x
    h = block.ff(x if post else block.ln2(x))
    x = h + x if switches.residual else h
    return block.ln2(x) if post else x
return run
"""),
    "my_experiment": experiment("model.blocks = model.blocks[:2]\nreturn model"),
    "previous_token_score": define("previous_token_score", """
T = attn.shape[-1]
q = torch.arange(1, T)
return attn[..., q, q - 1].sum(-1) / (T - 1)
"""),
    "induction_score": define("induction_score", """
ids = seq.tolist()
weights = []
for q in range(len(ids)):
    earlier = [k for k in range(q) if ids[k] == ids[q]]
    if earlier:
        weights.append(attn[..., q, max(earlier) + 1])
return sum(weights) / len(weights)
"""),
    "find_heads": finder(0.3, 0.2),
    # silencing a head's values (weights and bias) is another way to make it write nothing
    "ablate_heads": ablation("""
new = copy.deepcopy(model)
for layer, head in heads:
    attn = new.blocks[layer].attn
    rows = slice(head * attn.d_head, (head + 1) * attn.d_head)
    with torch.no_grad():
        attn.w_v.weight[rows] = 0.0
        attn.w_v.bias[rows] = 0.0
return new
"""),
}




@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_mistake_fails_the_visible_and_the_hidden_cell_each_with_its_own_message(exercise):
    """The suite of test_nb10 proves each mistake rejected and each alternative accepted; here every cell must
    reject it, and no two mistakes of an exercise may read alike."""
    mine = [m for m in MISTAKES if m.exercise == exercise]
    assert len(mine) >= 3, f"{exercise} has {len(mine)} known mistakes"
    assert_rejected_everywhere_each_in_its_own_words(A, mine)

def test_the_messages_name_symptoms_not_the_line():
    for message in [*nb10.SCORE_MESSAGES.values(), *nb10.ABLATE_MESSAGES.values()]:
        for code in ("diagonal(", "offset=", "[:, ", "w_o.weight", "zero_"):
            assert code not in message, f"{code!r} dictates the line: {message}"
    for message in [*nb10.NO_POSITION_MESSAGES.values(), *nb10.INIT_MESSAGES.values()]:
        for code in ("zero_", "requires_grad", "normal_", "fill_", "math.sqrt", "pos_emb", "no_grad"):
            assert code not in message, f"{code!r} dictates the line: {message}"


def test_the_made_up_heads_leave_room_for_a_threshold_on_every_fresh_sequence():
    """What makes find_heads fair: on many fresh sequences, each detector's own kind of head scores above every
    other kind, with a gap a threshold fits in, even with the hidden cases' noise."""
    from autograder.checks.nb10 import experiments as ex

    rng = np.random.default_rng(1)
    for _ in range(200):
        ids = ex.repeated_ids(rng)
        maps = ex.heads_of(list(ex.KINDS), ids, rng, 3, (0.15, 0.4))
        for name, score in (("previous token", ex.previous_score_np(maps)),
                            ("induction", ex.induction_score_np(maps, ids))):
            flat = score.ravel()
            mine = flat[ex.KINDS.index(name)]
            assert mine > 0.35 and np.delete(flat, ex.KINDS.index(name)).max() < 0.15, (name, flat)


def test_a_broken_check_is_caught_by_these_tests(monkeypatch):
    """Break the check on purpose (its right score reads the diagonal): the right answer is then rejected."""
    from autograder.checks.nb10 import experiments

    monkeypatch.setattr(experiments, "previous_score_np",
                        lambda maps, offset=-1, over_all=False: np.diagonal(maps, 0, -2, -1).mean(-1))
    with pytest.raises(AssertionError, match="rejected"):
        assert_accepted(A, "previous_token_score", ALTERNATIVES["previous_token_score"])


def test_a_broken_ablation_check_is_caught_by_these_tests(monkeypatch):
    """Break without_positions' reference on purpose (it forgets to keep the table from training): the right
    answer is then rejected, since after one step it no longer matches."""
    from autograder.checks.nb10 import measured

    right = measured.blind_np
    monkeypatch.setattr(measured, "blind_np",
                        lambda model, how="right": right(model, "zeroed_only" if how == "right" else how))
    with pytest.raises(AssertionError, match="rejected"):
        assert_accepted(A, "without_positions", ALTERNATIVES["without_positions"])


def test_a_broken_initialisation_check_is_caught_by_these_tests(monkeypatch):
    """Break init_gpt2_'s expected spreads on purpose (the writes into the stream unscaled): the right answer is
    then rejected."""
    from autograder.checks.nb10 import measured

    right = measured.init_want
    monkeypatch.setattr(measured, "init_want",
                        lambda model, std, how="right": right(model, std, "unscaled" if how == "right" else how))
    with pytest.raises(AssertionError, match="rejected"):
        assert_accepted(A, "init_gpt2_", ALTERNATIVES["init_gpt2_"])


def test_the_initialisation_check_holds_for_many_draws():
    """The spreads are measured on random draws: the right initialisation passes, and each known wrong one is
    named, for many seeds of torch's generator, not only the one the suite happens to use."""
    import torch

    from autograder.checks.nb10 import measured as ex

    right = defined(A, "init_gpt2_", None)
    wrong = defined(A, "init_gpt2_", next(m for m in MISTAKES if m.label == "one_write_per_block").source)
    for seed in range(30):
        for cfg, std in (((40, 16, 32, 2, 128, 3), 0.02), ((40, 16, 32, 2, 128, 6), 0.05)):
            torch.manual_seed(seed)
            model = ex.gpt_class()(*cfg)
            want = ex.init_want(model, std)
            got = ex.init_stats(right(model, std))
            assert np.allclose(got, want, atol=1.5e-3, rtol=0.1), (seed, cfg)
            torch.manual_seed(seed)
            model = ex.gpt_class()(*cfg)
            got = ex.init_stats(wrong(model, std))
            assert not np.allclose(got, want, atol=1.5e-3, rtol=0.1)
            assert ex._init_symptom(lambda: ex.gpt_class()(*cfg), std)(got, want) == ex.INIT_MESSAGES["per_block"]
