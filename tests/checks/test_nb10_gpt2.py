"""Do the checks of notebook 10's last section (GPT-2's weights in the learner's model, its attention as
Llama's, the refused long sequence of attention_maps) name each known mistake, under any seed?

The known-wrong implementations and the differently written correct ones are data here; test_nb10.py runs
them through the standard suite with the rest of the notebook's exercises.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from autograder.checks import nb10
from tests.harness import Mistake, indent

pytestmark = pytest.mark.nb10

FROM_GPT2 = '''
def from_gpt2(hf_model):
    cfg = hf_model.config
    d = cfg.n_embd
    model = TinyGPT(cfg.vocab_size, cfg.n_positions, d, cfg.n_head, cfg.n_inner or 4 * d, cfg.n_layer,
                    tie_weights=True, gelu=GELU)
    sd = hf_model.state_dict()
    with torch.no_grad():
        model.tok_emb.weight.copy_(sd["transformer.wte.weight"])
        model.pos_emb.weight.copy_(sd["transformer.wpe.weight"])
        for i, block in enumerate(model.blocks):
            p = f"transformer.h.{i}."
            Q, K, V = sd[p + "attn.c_attn.weight"].split(d, dim=1)
            BQ, BK, BV = sd[p + "attn.c_attn.bias"].split(d)
            pairs = [(block.attn.w_q, q, bq), (block.attn.w_k, k, bk), (block.attn.w_v, v, bv),
                     (block.attn.w_o, sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"])]
            for lin, w, b in pairs:
                lin.weight.copy_(SQUARE)
                lin.bias.copy_(b)
            for lin, w, b in [(block.ff.fc1, sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"]),
                              (block.ff.fc2, sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"])]:
                lin.weight.copy_(MLP)
                lin.bias.copy_(b)
            block.ln1.load_state_dict({"weight": sd[p + "ln_1.weight"], "bias": sd[p + "ln_1.bias"]})
            block.ln2.load_state_dict({"weight": sd[p + "ln_2.weight"], "bias": sd[p + "ln_2.bias"]})
        model.ln_f.load_state_dict({"weight": sd["transformer.ln_f.weight"], "bias": sd["transformer.ln_f.bias"]})
    for m in model.modules():
        if isinstance(m, LayerNorm):
            m.eps = cfg.layer_norm_epsilon
    if cfg.activation_function != "gelu_new":
        raise ValueError(f"activation_function={cfg.activation_function!r} cannot be represented")
    if cfg.scale_attn_by_inverse_layer_idx:
        raise ValueError("scale_attn_by_inverse_layer_idx=True cannot be represented")
    return POSITIONS
'''


def from_gpt2(gelu='"tanh"', square="w.T", mlp="w.T", order="q, k, v, bq, bk, bv", positions="model.eval()"):
    """A from_gpt2 written like a learner's, with one piece swapped for a known mistake."""
    q, k, v, bq, bk, bv = order.split(", ")
    return (FROM_GPT2.replace("GELU", gelu).replace("SQUARE", square).replace("MLP", mlp)
            .replace("Q, K, V", f"{q}, {k}, {v}").replace("BQ, BK, BV", f"{bq}, {bk}, {bv}")
            .replace("POSITIONS", positions))


AFTER_FIRST_BLOCK = '''_PositionsLate(model)


class _PositionsLate(torch.nn.Module):
    """wte in, the first block, then wpe added: the positions one block too late."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, ids):
        m = self.inner
        x = m.tok_emb(ids)
        for i, block in enumerate(m.blocks):
            x = block(x)
            if i == 0:
                x = x + m.pos_emb(torch.arange(ids.shape[1]))
        return m.head(m.ln_f(x))'''

LLAMA = '''
def to_llama_attention(mha):
    H = mha.n_heads
    turn = lambda w: BODY
    return {"q_proj.weight": turn(mha.w_q.weight.detach()), "k_proj.weight": turn(mha.w_k.weight.detach()),
            "v_proj.weight": V, "o_proj.weight": mha.w_o.weight.detach()}
'''


def llama(body, v="mha.w_v.weight.detach()"):
    return LLAMA.replace("BODY", body).replace('"v_proj.weight": V', f'"v_proj.weight": {v}')


HALVES = '''
def interleaved_to_halves(w, n_heads):
{body}
'''


def halves(body):
    return HALVES.format(body=indent(body, 4))


MISTAKES = [
    Mistake("from_gpt2", "conv1d_never_transposed", from_gpt2(square="w", mlp="w"), "Conv1D stores"),
    Mistake("from_gpt2", "conv1d_square_not_transposed", from_gpt2(square="w"), "without a transpose"),
    Mistake("from_gpt2", "q_and_k_swapped", from_gpt2(order="k, q, v, bk, bq, bv"), "wrong order"),
    Mistake("from_gpt2", "v_first", from_gpt2(order="v, q, k, bv, bq, bk"), "wrong order"),
    Mistake("from_gpt2", "exact_gelu", from_gpt2(gelu='"exact"'), "not rounding"),
    Mistake("from_gpt2", "positions_after_first_block", from_gpt2(positions=AFTER_FIRST_BLOCK), "after the first block"),
    Mistake("interleaved_to_halves", "across_heads", halves('''
rows = w.shape[0]
return w.reshape(rows // 2, 2, -1).transpose(0, 1).reshape(w.shape)
'''), "across the whole matrix"),
    Mistake("interleaved_to_halves", "the_inverse", halves('''
H, D = n_heads, w.shape[0] // n_heads
return w.reshape(H, 2, D // 2, -1).transpose(1, 2).reshape(w.shape)
'''), "inverse reordering"),
    Mistake("interleaved_to_halves", "columns", halves('''
H, D = n_heads, w.shape[0] // n_heads
order = torch.cat([torch.arange(0, D, 2), torch.arange(1, D, 2)])
return w[:, (torch.arange(H)[:, None] * D + order).flatten()]
'''), "columns were reordered"),
    Mistake("to_llama_attention", "no_permutation", llama("w"), "other pairs of query and key features"),
    Mistake("to_llama_attention", "v_permuted_too", llama("interleaved_to_halves(w, H)",
                                                         v="interleaved_to_halves(mha.w_v.weight.detach(), H)"),
            "reaches o_proj with its features in another order"),
    Mistake("to_llama_attention", "across_heads", llama("interleaved_to_halves(w, 1)"), "another head's rows"),
]

ALTERNATIVES = {
    "from_gpt2": '''
def from_gpt2(hf_model):
    c = hf_model.config
    if c.activation_function not in ("gelu_new", "gelu_pytorch_tanh", "gelu"):
        raise ValueError(f"unsupported activation_function {c.activation_function}")
    if c.scale_attn_by_inverse_layer_idx or not c.scale_attn_weights or c.add_cross_attention:
        bad = [f for f in ("scale_attn_by_inverse_layer_idx", "scale_attn_weights", "add_cross_attention")
               if getattr(c, f) != (f == "scale_attn_weights")]
        raise ValueError(f"cannot represent {bad[0]}")
    gelu = "exact" if c.activation_function == "gelu" else "tanh"
    model = TinyGPT(c.vocab_size, c.n_positions, c.n_embd, c.n_head, c.n_inner or 4 * c.n_embd, c.n_layer,
                    tie_weights=True, gelu=gelu)
    t = hf_model.transformer
    ours = {"tok_emb.weight": t.wte.weight, "pos_emb.weight": t.wpe.weight,
            "ln_f.weight": t.ln_f.weight, "ln_f.bias": t.ln_f.bias}
    for i, h in enumerate(t.h):
        b = f"blocks.{i}."
        for n, w, bias in zip("qkv", h.attn.c_attn.weight.T.chunk(3, dim=0), h.attn.c_attn.bias.chunk(3)):
            ours[b + f"attn.w_{n}.weight"], ours[b + f"attn.w_{n}.bias"] = w, bias
        for ours_name, conv in [("attn.w_o", h.attn.c_proj), ("ff.fc1", h.mlp.c_fc), ("ff.fc2", h.mlp.c_proj)]:
            ours[b + ours_name + ".weight"], ours[b + ours_name + ".bias"] = conv.weight.T, conv.bias
        for ours_name, ln in [("ln1", h.ln_1), ("ln2", h.ln_2)]:
            ours[b + ours_name + ".weight"], ours[b + ours_name + ".bias"] = ln.weight, ln.bias
    ours["head.weight"] = t.wte.weight
    model.load_state_dict({k: v.detach().clone() for k, v in ours.items()})
    for m in model.modules():
        if hasattr(m, "eps"):
            m.eps = c.layer_norm_epsilon
    model.eval()
    return model
''',
    "interleaved_to_halves": '''
def interleaved_to_halves(w, n_heads):
    D = w.shape[0] // n_heads
    heads = w.split(D, dim=0)
    return torch.cat([torch.cat([h[0::2], h[1::2]], dim=0) for h in heads], dim=0)
''',
    "to_llama_attention": '''
def to_llama_attention(mha):
    d = mha.w_q.weight.shape[0]
    D = d // mha.n_heads
    rows = [h * D + j for h in range(mha.n_heads) for j in [*range(0, D, 2), *range(1, D, 2)]]
    with torch.no_grad():
        return {"q_proj.weight": mha.w_q.weight[rows].clone(), "k_proj.weight": mha.w_k.weight[rows].clone(),
                "v_proj.weight": mha.w_v.weight.clone(), "o_proj.weight": mha.w_o.weight.clone()}
''',
}


@pytest.mark.parametrize("seed", range(21))
def test_gpt2_and_llama_cases_tell_each_numeric_mistake_apart_under_any_seed(seed):
    """Under seeds 0-20, does every logits case (visible ones too: their inputs follow the run's seed) of from_gpt2 and to_llama_attention separate the right
    answer from each known-wrong one by three times the checks' tolerance (1e-4), so that no seed lets one
    through (one position hides a q/k swap, one head a reordering across heads, a narrow model the GELU)?"""
    cases = [c for check in (nb10.from_gpt2, nb10.to_llama_attention) for hidden in (False, True)
             for c in check.cases(hidden, seed) if isinstance(c, nb10.ModelCase)]
    assert len(cases) == 11, [c.label for c in cases]
    for case in cases:
        right = case.right()
        for name, make in case.variants.items():
            gap = np.abs(make() - right).max()
            assert gap > 3e-4, f"seed {seed}, {case.label}: {name} is only {gap:.1e} away from the right answer"


def test_the_numpy_models_agree_with_transformers():
    """Are the NumPy GPT-2 and Llama attention the hints compare with right, against transformers itself?"""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    c = nb10.Gpt2Shape(13, 8, 12, 3, 2, n_inner=20, layer_norm_epsilon=1e-3)
    p = nb10.gpt2_params(rng, c)
    ids = rng.integers(0, 13, size=(2, 8))
    with torch.no_grad():
        theirs = c.hf_model(p)(torch.tensor(ids)).logits.numpy()
    assert np.abs(nb10.gpt2_np(p, c, ids) - theirs).max() < 1e-4
    W = {n: nb10.normal(rng, 12, 12) for n in "qkvo"}
    x = nb10.normal(rng, 1, 5, 12)
    state = {f"{n}_proj.weight": nb10.tensor(w) for n, w in nb10.llama_state_np(W, 3).items()}
    out = nb10.llama_attention(state, nb10.tensor(x), 3, 500.0).numpy()
    assert np.abs(nb10.llama_np(nb10.llama_state_np(W, 3), x, 3, 500.0) - out).max() < 1e-4


def test_importing_the_checks_does_not_import_transformers():
    """The grader's warm parent imports every check module: does notebook 10's leave transformers (several
    seconds) to the checks that use it, so the other notebooks' warm-up does not pay for it?"""
    code = "import sys, autograder.checks.nb10; sys.exit('transformers' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ}).returncode == 0


def test_a_misspelled_variant_raises():
    with pytest.raises(ValueError, match="gpt2_np has no variant 'exact_gleu'"):
        nb10.gpt2_np({}, nb10.Gpt2Shape(5, 4, 4, 1, 1), np.zeros((1, 2), int), "exact_gleu")
    with pytest.raises(ValueError, match="llama_state_np has no variant"):
        nb10.llama_state_np({}, 2, "none")


def test_tinygpt_options_tie_the_head_drop_in_training_only_and_count_gpt2_small():
    """Does the reference TinyGPT share one table when tied (no head bias), count GPT-2 small's 124,439,808
    parameters without allocating them, drop only in training mode, and refuse an unknown GELU by name?"""
    torch = pytest.importorskip("torch")
    from autograder.reference import import_notebook

    nb = import_notebook("10_decoder_block")
    with torch.device("meta"):
        small = nb.TinyGPT(50257, 1024, 768, 12, 3072, 12, tie_weights=True)
        untied = nb.TinyGPT(50257, 1024, 768, 12, 3072, 12)
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(small) == 124_439_808
    assert count(untied) - count(small) == 50257 * 768 + 50257  # the second table and the head's bias
    assert small.head.weight is small.tok_emb.weight and small.head.bias is None
    torch.manual_seed(0)
    model = nb.TinyGPT(11, 6, 8, 2, 16, 2, dropout=0.5)
    ids = torch.randint(0, 11, (2, 6))
    with torch.no_grad():
        model.eval()
        assert torch.equal(model(ids), model(ids))
        model.train()
        assert not torch.equal(model(ids), model(ids))
    with pytest.raises(ValueError, match="gelu must be 'exact' or 'tanh'"):
        nb.TinyGPT(11, 6, 8, 2, 16, 2, gelu="gelu_new")
