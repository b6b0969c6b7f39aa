"""Does every check of 10_decoder_block reject the mistakes students make, and accept other correct code?"""
import numpy as np
import pytest

from autograder.checks import nb10
from autograder.checks.models import numpy_gpt, torch_gpt, training
from tests.checks import test_nb10_experiments as experiments
from tests.checks import test_nb10_gpt2 as gpt2
from tests.checks import test_nb10_ninja as ninja
from tests.checks import test_nb10_translation as translation
from tests.harness import Mistake, answer, exercise_suite, indent, returns, run_exercise, stub_of
from tests.variants import variant

pytestmark = pytest.mark.nb10
A = "10_decoder_block"

LN = '''
class LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
{body}
'''

FF = '''
class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, gelu="exact"):
        super().__init__()
        self.gelu = gelu
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return {body}
'''

BLOCK = '''
class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, rope=False, gelu="exact", dropout=0.0):
        super().__init__()
        self.ln1 = LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads, rope=rope)
        self.ln2 = LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff, gelu)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        T = x.shape[1]
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
{body}
'''

GPT = '''
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, context_len, d_model, n_heads, d_ff, n_layers, pos="learned", tie_weights=False,
                 gelu="exact", dropout=0.0):
        super().__init__()
{init}
        self.context_len, self.pos = context_len, pos
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, n_heads, d_ff, rope=pos == "rope", BLOCK_OPTIONS)
                                     for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model)
{head}

    def embed(self, ids, start=0):
{embed}

    def forward(self, ids):
        B, T = ids.shape
{body}
'''

INIT_OK = '''
if pos not in ("learned", "sinusoidal", "rope"):
    raise ValueError(f"unknown pos {pos!r}: use 'learned', 'sinusoidal' or 'rope'")
if pos == "learned":
    self.pos_emb = nn.Embedding(context_len, d_model)
elif pos == "sinusoidal":
    self.register_buffer("pos_table", torch.tensor(sinusoidal_positions(context_len, d_model)).float(),
                         persistent=False)
'''

EMBED_OK = '''
x = self.tok_emb(ids)
p = torch.arange(start, start + ids.shape[1])
if self.pos == "learned":
    x = x + self.pos_emb(p)
elif self.pos == "sinusoidal":
    x = x + self.pos_table[p]
return x
'''

GEN = '''
def generate(model, ids, max_new_tokens, temperature=1.0, generator=None):
    with torch.no_grad():
        for _ in range(max_new_tokens):
{body}
    return ids
'''


def ln(body):
    return LN.format(body=indent(body, 8))


def block(body):
    return BLOCK.format(body=indent(body, 8))


HEAD_OK = '''
self.head = nn.Linear(d_model, vocab_size, bias=not tie_weights)
if tie_weights:
    self.head.weight = self.tok_emb.weight
'''


def gpt(body=None, init=INIT_OK, embed=EMBED_OK, head=HEAD_OK, block_options="gelu=gelu, dropout=dropout"):
    """A TinyGPT with the given code of the notebook (the options' plumbing) and these pieces in place."""
    return GPT.format(body=indent(body or GPT_OK, 8), init=indent(init, 8), embed=indent(embed, 8),
                      head=indent(head, 8)).replace("BLOCK_OPTIONS", block_options)


def gen(body):
    return GEN.format(body=indent(body, 12))


GPT_OK = '''
if T > self.context_len:
    raise ValueError("too long")
x = self.drop(self.embed(ids))
for b in self.blocks:
    x = b(x)
return self.head(self.ln_f(x))
'''

NLL = '''
def nll(logits, targets):  # the log-probability of each target, negated: (B, T)
    return -torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
'''

MISTAKES = [
    Mistake("LayerNorm", "eps_outside_sqrt", ln('''
mu = x.mean(-1, keepdim=True)
var = x.var(-1, keepdim=True, unbiased=False)
return (x - mu) / (torch.sqrt(var) + self.eps) * self.weight + self.bias
'''), "what decides the output"),  # a half-fix of the bug hunt: the variance mended, eps still outside
    Mistake("LayerNorm", "unbiased_variance", ln('''
mu = x.mean(-1, keepdim=True)
return (x - mu) / torch.sqrt(x.var(-1, keepdim=True) + self.eps) * self.weight + self.bias
'''), "close to nn.LayerNorm's now"),  # the other half-fix: eps under the root, the variance unbiased
    Mistake("LayerNorm", "torch_std", ln('''
return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + self.eps) * self.weight + self.bias
'''), "in two ways"),  # the bug as released (test_nb10_bughunt reads the released cell)
    Mistake("LayerNorm", "normalises_over_batch", ln('''
mu = x.mean(0, keepdim=True)
var = x.var(0, keepdim=True, unbiased=False)
return (x - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias
'''), "other rows of the batch"),
    Mistake("LayerNorm", "no_weight_and_bias", ln('''
mu = x.mean(-1, keepdim=True)
return (x - mu) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + self.eps)
'''), "ignores weight and bias"),
    Mistake("FeedForward", "tanh_gelu", FF.format(body="self.fc2(F.gelu(self.fc1(x), approximate='tanh'))"),
            "tanh approximation"),
    Mistake("FeedForward", "relu", FF.format(body="self.fc2(torch.relu(self.fc1(x)))"), "relu's shape"),
    Mistake("FeedForward", "no_activation", FF.format(body="self.fc2(self.fc1(x))"), "nothing bends"),
    Mistake("FeedForward", "gelu_after_fc2", FF.format(body="F.gelu(self.fc2(self.fc1(x)))"), "gelu's curve"),
    Mistake("FeedForward", "ignores_the_gelu_choice", FF.format(body="self.fc2(F.gelu(self.fc1(x)))"),
            "gelu='tanh' was asked for"),
    Mistake("DecoderBlock", "post_norm", block('''
x = self.ln1(x + self.attn(x, mask=allowed))
return self.ln2(x + self.ff(x))
'''), "post-norm"),
    Mistake("DecoderBlock", "no_causal_mask", block('''
x = x + self.attn(self.ln1(x))
return x + self.ff(self.ln2(x))
'''), "reads the future"),
    Mistake("DecoderBlock", "pytorch_mask_convention", block('''
x = x + self.attn(self.ln1(x), mask=torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1))
return x + self.ff(self.ln2(x))
'''), "keeps no key"),
    Mistake("DecoderBlock", "residual_around_norm", block('''
h = self.ln1(x)
x = h + self.attn(h, mask=allowed)
h = self.ln2(x)
return h + self.ff(h)
'''), "residual adds the normalised x"),
    Mistake("DecoderBlock", "no_residual", block('''
x = self.attn(self.ln1(x), mask=allowed)
return self.ff(self.ln2(x))
'''), "residual connections are missing"),
    Mistake("DecoderBlock", "no_dropout", block('''
x = x + self.attn(self.ln1(x), mask=allowed)
return x + self.ff(self.ln2(x))
'''), "output is not dropped"),
    Mistake("DecoderBlock", "dropout_on_the_residual_stream", block('''
x = self.drop(x + self.attn(self.ln1(x), mask=allowed))
return self.drop(x + self.ff(self.ln2(x)))
'''), "drop only the sub-layer's output"),
    Mistake("DecoderBlock", "dropout_on_the_sublayer_input", block('''
x = x + self.attn(self.drop(self.ln1(x)), mask=allowed)
return x + self.ff(self.drop(self.ln2(x)))
'''), "never its input"),
    Mistake("DecoderBlock", "dropout_also_in_eval_mode", block('''
x = x + F.dropout(self.attn(self.ln1(x), mask=allowed), self.drop.p)
return x + F.dropout(self.ff(self.ln2(x)), self.drop.p)
'''), "training mode only"),
    Mistake("DecoderBlock", "dropout_without_rescaling", block('''
def drop(h):
    return h * (torch.rand_like(h) >= self.drop.p) if self.training else h
x = x + drop(self.attn(self.ln1(x), mask=allowed))
return x + drop(self.ff(self.ln2(x)))
'''), "1 / (1 - p)"),
    Mistake("count_block_params", "forgets_layernorm", '''
def count_block_params(d_model, d_ff):
    return 4 * (d_model * d_model + d_model) + 2 * d_model * d_ff + d_ff + d_model
''', "LayerNorm parameters are missing"),
    Mistake("count_block_params", "forgets_biases", '''
def count_block_params(d_model, d_ff):
    return 4 * d_model * d_model + 2 * d_model * d_ff + 4 * d_model
''', "biases of the linear layers are missing"),
    Mistake("count_block_params", "three_projections", '''
def count_block_params(d_model, d_ff):
    return 3 * (d_model * d_model + d_model) + 2 * d_model * d_ff + d_ff + d_model + 4 * d_model
''', "three attention projections"),
    Mistake("count_block_params", "returns_float", '''
def count_block_params(d_model, d_ff):
    return 4.0 * (d_model ** 2 + d_model) + 2 * d_model * d_ff + d_ff + 5 * d_model
''', "expected an int"),
    Mistake("TinyGPT", "no_position_embeddings", gpt(embed="return self.tok_emb(ids)"), "ignore the positions"),
    Mistake("TinyGPT", "does_not_raise", gpt('''
x = self.embed(ids)
for b in self.blocks:
    x = b(x)
return self.head(self.ln_f(x))
'''), "should raise ValueError"),
    Mistake("TinyGPT", "no_final_norm", gpt(GPT_OK.replace("self.head(self.ln_f(x))", "self.head(x)")),
            "final LayerNorm"),
    Mistake("TinyGPT", "raises_at_context_len", gpt(GPT_OK.replace("T > self.context_len", "T >= self.context_len")),
            "raised ValueError"),
    Mistake("TinyGPT", "sinusoidal_table_as_parameter", gpt(init=INIT_OK.replace(
        'self.register_buffer("pos_table", ', "self.pos_table = nn.Parameter(").replace(",\n                         persistent=False)", ")")),
        "register_buffer"),
    Mistake("TinyGPT", "rope_model_keeps_a_learned_table", gpt(init=INIT_OK.replace('if pos == "learned":', 'if pos in ("learned", "rope"):')),
            "inside attention only"),
    Mistake("TinyGPT", "unknown_pos_falls_back_to_learned", gpt(init='''
if pos == "sinusoidal":
    self.register_buffer("pos_table", torch.tensor(sinusoidal_positions(context_len, d_model)).float(),
                         persistent=False)
elif pos != "rope":
    self.pos_emb = nn.Embedding(context_len, d_model)
''', embed=EMBED_OK.replace('if self.pos == "learned":', 'if hasattr(self, "pos_emb"):')), "check pos against the three choices"),
    Mistake("TinyGPT", "error_does_not_name_the_choices", gpt(init=INIT_OK.replace(
        "f\"unknown pos {pos!r}: use 'learned', 'sinusoidal' or 'rope'\"", "\"unknown position scheme\"")),
        "name the choices"),
    Mistake("TinyGPT", "embed_ignores_start", gpt(embed=EMBED_OK.replace("torch.arange(start, start + ids.shape[1])",
                                                                         "torch.arange(ids.shape[1])")),
            "embed ignores start"),
    Mistake("TinyGPT", "tied_head_keeps_its_bias", gpt(head='''
self.head = nn.Linear(d_model, vocab_size)
if tie_weights:
    self.head.weight = self.tok_emb.weight
'''), "tied head has no bias"),
    Mistake("TinyGPT", "ties_by_copying_the_table", gpt(head='''
self.head = nn.Linear(d_model, vocab_size, bias=not tie_weights)
if tie_weights:
    self.head.weight = nn.Parameter(self.tok_emb.weight.detach().clone())
'''), "not tok_emb.weight itself"),
    Mistake("TinyGPT", "ties_by_copying_the_values", gpt(head='''
self.head = nn.Linear(d_model, vocab_size, bias=not tie_weights)
if tie_weights:
    with torch.no_grad():
        self.head.weight.copy_(self.tok_emb.weight)
'''), "share the parameter"),
    Mistake("TinyGPT", "gelu_not_passed_to_the_blocks", gpt(block_options="dropout=dropout"),
            "exact GELU although gelu='tanh'"),
    Mistake("TinyGPT", "no_dropout_on_the_embeddings", gpt(GPT_OK.replace("self.drop(self.embed(ids))", "self.embed(ids)")),
            "without dropout"),
    Mistake("TinyGPT", "dropout_also_in_eval_mode", gpt(GPT_OK.replace("self.drop(self.embed(ids))",
                                                                       "F.dropout(self.embed(ids), self.drop.p)")),
            "training mode only"),
    Mistake("TinyGPT", "dropout_before_the_head", gpt(GPT_OK.replace("self.head(self.ln_f(x))",
                                                                     "self.head(self.drop(self.ln_f(x)))")),
            "between ln_f and the head"),
    Mistake("TinyGPT", "blocks_built_without_dropout", gpt(block_options="gelu=gelu"), "output is not dropped"),
    Mistake("TinyGPT", "own_table_with_cos_first", gpt(init=INIT_OK.replace(
        "torch.tensor(sinusoidal_positions(context_len, d_model)).float()",
        "torch.tensor(sinusoidal_positions(context_len, d_model)).float().view(context_len, -1, 2).flip(-1)"
        ".reshape(context_len, d_model)")), "cos and sin swapped"),
    Mistake("lm_loss", "calls_the_library", '''
def lm_loss(logits, targets, ignore=None):
    B, T, V = logits.shape
    if targets.shape != (B, T):
        raise ValueError(f"targets {tuple(targets.shape)} do not fit logits {tuple(logits.shape)}")
    return F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=-100 if ignore is None else ignore)
''', "switched it off"),
    Mistake("lm_loss", "summed", NLL + '''
def lm_loss(logits, targets):
    return nll(logits, targets).sum()
''', "summed over the positions"),
    Mistake("lm_loss", "per_sequence_mean_summed", NLL + '''
def lm_loss(logits, targets):
    return nll(logits, targets).mean(1).sum()
''', "then summed over the batch"),
    Mistake("lm_loss", "shifts_again", NLL + '''
def lm_loss(logits, targets):
    return nll(logits[:, :-1], targets[:, 1:]).mean()
''', "shifted a second time"),
    Mistake("lm_loss", "softmax_first", NLL + '''
def lm_loss(logits, targets):
    return nll(torch.softmax(logits, -1), targets).mean()
''', "probabilities twice"),
    Mistake("lm_loss", "flattens_targets_transposed", '''
def lm_loss(logits, targets):
    V = logits.shape[-1]
    logp = torch.log_softmax(logits.reshape(-1, V), -1)
    return -logp.gather(1, targets.T.reshape(-1, 1)).mean()
''', "different orders"),
    Mistake("lm_loss", "log_of_softmax", '''
def lm_loss(logits, targets):
    p = torch.softmax(logits, -1).gather(-1, targets.unsqueeze(-1))
    return -torch.log(p).mean()
''', "infinite loss"),
    Mistake("lm_loss", "returns_a_float", NLL + '''
def lm_loss(logits, targets):
    return nll(logits, targets).mean().item()
''', "expected a torch tensor"),
    Mistake("lm_loss", "ignore_accepted_but_unused", NLL + '''
def lm_loss(logits, targets, ignore=None):
    B, T, V = logits.shape
    if targets.shape != (B, T):
        raise ValueError(f"targets {tuple(targets.shape)} do not fit logits {tuple(logits.shape)}")
    return nll(logits, targets).mean()
''', "ignored positions changed the loss"),
    Mistake("lm_loss", "mean_over_all_positions", NLL + '''
def lm_loss(logits, targets, ignore=None):
    B, T, V = logits.shape
    if targets.shape != (B, T):
        raise ValueError(f"targets {tuple(targets.shape)} do not fit logits {tuple(logits.shape)}")
    each = nll(logits, targets)
    if ignore is not None:
        each = each * (targets != ignore)
    return each.sum() / (B * T)
''', "still counted in the number you divided by"),
    Mistake("lm_loss", "sum_over_counted_positions", NLL + '''
def lm_loss(logits, targets, ignore=None):
    B, T, V = logits.shape
    if targets.shape != (B, T):
        raise ValueError(f"targets {tuple(targets.shape)} do not fit logits {tuple(logits.shape)}")
    if ignore is None:
        return nll(logits, targets).mean()
    return nll(logits, targets)[targets != ignore].sum()
''', "their sum, not their mean"),
    Mistake("lm_loss", "no_shape_check", NLL + '''
def lm_loss(logits, targets, ignore=None):
    each = nll(logits.reshape(targets.shape + logits.shape[-1:]), targets)
    return each.mean() if ignore is None else each[targets != ignore].mean()
''', "should raise ValueError"),
    Mistake("generate", "no_cropping", gen('''
logits = model(ids)[:, -1]
if temperature == 0:
    nxt = logits.argmax(-1, keepdim=True)
else:
    nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)
ids = torch.cat([ids, nxt], 1)
'''), "crop ids"),
    Mistake("generate", "crops_the_first_tokens", gen('''
logits = model(ids[:, :model.context_len])[:, -1]
if temperature == 0:
    nxt = logits.argmax(-1, keepdim=True)
else:
    nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)
ids = torch.cat([ids, nxt], 1)
'''), "keep the last ones"),
    Mistake("generate", "samples_at_temperature_0", gen('''
logits = model(ids[:, -model.context_len:])[:, -1]
probs = torch.softmax(logits / (temperature or 1.0), -1)
ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], 1)
'''), "do not sample"),
    Mistake("generate", "ignores_temperature", gen('''
logits = model(ids[:, -model.context_len:])[:, -1]
if temperature == 0:
    nxt = logits.argmax(-1, keepdim=True)
else:
    nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)
ids = torch.cat([ids, nxt], 1)
'''), "divide the logits by the temperature"),
    Mistake("generate", "ignores_generator", gen('''
logits = model(ids[:, -model.context_len:])[:, -1]
if temperature == 0:
    nxt = logits.argmax(-1, keepdim=True)
else:
    nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1)
ids = torch.cat([ids, nxt], 1)
'''), "pass generator=generator"),
    Mistake("generate", "returns_new_tokens_only", '''
def generate(model, ids, max_new_tokens, temperature=1.0, generator=None):
    new = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(ids[:, -model.context_len:])[:, -1]
            if temperature == 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)
            ids = torch.cat([ids, nxt], 1)
            new.append(nxt)
    return torch.cat(new, 1)
''', "return the whole sequence"),
]

ALTERNATIVES = {
    "LayerNorm": ln('''
centred = x - x.mean(dim=-1, keepdim=True)
inv_std = torch.rsqrt((centred ** 2).mean(dim=-1, keepdim=True) + self.eps)
return torch.addcmul(self.bias, centred * inv_std, self.weight)
'''),
    "FeedForward": FF.format(body="self.fc2((lambda h: 0.5 * h * (1 + (torch.erf(h / math.sqrt(2)) "
                                  "if self.gelu == 'exact' else torch.tanh(math.sqrt(2 / math.pi) "
                                  "* (h + 0.044715 * h ** 3)))))(self.fc1(x)))"),
    "DecoderBlock": block('''
T = x.size(-2)
keep = torch.ones(T, T).tril().bool()
attended = x + F.dropout(self.attn(self.ln1(x), mask=keep), self.drop.p, self.training)
return attended + self.drop(self.ff(self.ln2(attended)))
'''),
    "count_block_params": '''
def count_block_params(d_model, d_ff):
    return sum(p.numel() for p in DecoderBlock(d_model, 1, d_ff).parameters())
''',
    "TinyGPT": gpt('''
if ids.size(1) > self.context_len:
    raise ValueError(f"{ids.size(1)} tokens do not fit in a context of {self.context_len}")
h = F.dropout(self.embed(ids, start=0), p=self.drop.p, training=self.training)
for layer in self.blocks:
    h = layer(h)
return self.head(self.ln_f(h))
''', init='''
choices = {"learned", "sinusoidal", "rope"}
if pos not in choices:
    raise ValueError(f"pos={pos!r} is none of {sorted(choices)}")
if pos == "learned":
    self.pos_emb = nn.Embedding(context_len, d_model)
if pos == "sinusoidal":
    angles = torch.arange(context_len)[:, None] * 10000.0 ** (-torch.arange(0, d_model, 2) / d_model)
    self.register_buffer("pos_table", torch.stack([angles.sin(), angles.cos()], -1).flatten(1), persistent=False)
''', embed='''
T = ids.shape[-1]
out = self.tok_emb(ids)
if self.pos == "learned":
    out = out + self.pos_emb.weight[start:start + T]
if self.pos == "sinusoidal":
    out = out + self.pos_table[start:start + T]
return out
''', head='''
self.head = nn.Linear(d_model, vocab_size, bias=False) if tie_weights else nn.Linear(d_model, vocab_size)
if tie_weights:  # tied the other way round: the embedding takes the head's Parameter
    self.tok_emb.weight = self.head.weight
'''),
    "lm_loss": '''
def lm_loss(logits, targets, ignore=None):
    if logits.ndim != 3 or list(targets.shape) != list(logits.shape[:2]):
        raise ValueError("targets must be (B, T) for logits (B, T, V)")
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, targets.clamp(0, logits.shape[-1] - 1).unsqueeze(-1)).squeeze(-1)
    counted = torch.ones_like(nll) if ignore is None else (targets != ignore).to(nll.dtype)
    return (nll * counted).sum() / counted.sum()
''',
    "generate": '''
def generate(model, ids, max_new_tokens, temperature=1.0, generator=None):
    out = ids.clone()
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(out[:, max(0, out.shape[1] - model.context_len):])[:, -1, :]
        if temperature > 0:
            cdf = torch.softmax(logits / temperature, dim=-1).cumsum(-1)
            u = torch.rand(out.shape[0], 1, generator=generator)
            nxt = (cdf < u).sum(-1, keepdim=True).clamp(max=logits.shape[-1] - 1)
        else:
            nxt = torch.argmax(logits, dim=-1).unsqueeze(1)
        out = torch.cat((out, nxt), dim=1)
    return out
''',
}


CACHED = """
def generate_cached(model, ids, max_new_tokens, temperature=1.0, generator=None):
    caches = {}

    def step(new, start):
        B, n = new.shape
        x = model.embed(new, EMBED_START)
        allowed = torch.ones(n, start + n, dtype=torch.bool).tril(diagonal=MASK_DIAGONAL)
        for i, block in enumerate(model.blocks):
            q, k, v = project_heads(block.attn, block.ln1(x), ROPE_START)
            if start > 0:
                k, v = CONCAT
            caches[i] = (k, v)
            out, _ = scaled_dot_product_attention(q, k, v, allowed)
            x = x + block.attn.w_o(out.transpose(1, 2).reshape(B, n, -1))
            x = x + block.ff(block.ln2(x))
        return model.head(model.ln_f(x[:, -1]))

    with torch.no_grad():
        logits, cached = step(ids[:, -model.context_len:], 0), min(ids.shape[1], model.context_len)
        for _ in range(max_new_tokens):
            if temperature == 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=generator)
            ids = torch.cat([ids, nxt], 1)
            if cached < model.context_len:
                logits, cached = step(nxt, cached), cached + 1
            else:
                logits = step(ids[:, -model.context_len:], 0)
    return ids
"""


def cached(embed_start="start", mask_diagonal="start", rope_start="start",
           concat="torch.cat([caches[i][0], k], 2), torch.cat([caches[i][1], v], 2)"):
    return (CACHED.replace("EMBED_START", embed_start).replace("MASK_DIAGONAL", mask_diagonal)
            .replace("ROPE_START", rope_start).replace("CONCAT", concat))


MAPS = """
def attention_maps(model, ids):
    T = ids.shape[0]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    maps = []
    with torch.no_grad():
        x = model.embed(ids[None])
        for block in model.blocks:
{body}
    return torch.stack(maps)
"""


def maps(body):
    return MAPS.format(body=indent(body, 12))


def norm_answers(sums="softmax", standard="LayerNorm", shift="both", scale="LayerNorm") -> str:
    """predict_norm_vs_softmax's answer (right by default) with a reason, as the source of a returned value."""
    return (f"({{'sums to 1': {sums!r}, 'mean 0 and variance 1': {standard!r}, 'unchanged by x + c': {shift!r}, "
            f"'unchanged by 2 * x': {scale!r}}}, 'a total against a spread')")


MISTAKES += [
    returns("predict_ffn_share", "attention_share", "1 / 3",
            "attention's share"),
    returns("predict_ffn_share", "half_and_half", "0.5", "are not equal"),
    returns("predict_ffn_share", "attention_is_the_big_part", "0.1",
            "famous part"),
    returns("predict_ffn_share", "a_percentage", "67", "between 0 and 1"),
    returns("predict_changed_positions", "every_position", "8",
            "only backwards"),
    returns("predict_changed_positions", "only_itself", "1",
            "positions 6 and 7"),
    returns("predict_changed_positions", "the_earlier_ones", "5",
            "cannot read it"),
    returns("predict_no_positions", "a_bag_of_words", "'bigram'",
            "not a bag of words"),
    returns("predict_no_positions", "halfway", "'halfway'",
            "does better than that"),
    returns("predict_no_positions", "not_a_choice", "'entropy'",
            "answer with one of"),
    returns("predict_norm_placement", "post_norm_passes_it_on", "('post-norm', 'the norm comes after')",
            "normalises the sum x + f(x) itself"),
    returns("predict_norm_placement", "both_add_zero", "('both', 'each adds 0')", "Only pre-norm"),
    returns("predict_norm_placement", "a_norm_always_acts", "('neither', 'a LayerNorm is on the way')",
            "Pre-norm hands it back"),
    returns("predict_norm_placement", "not_a_choice", "'pre'", "answer with one of"),
    returns("predict_mask_handover", "same_convention", "((0, 0), 'a mask is a mask')", "only the keys after it"),
    returns("predict_mask_handover", "every_row_empty", "((4, 0), 'the mask is flipped')", "Only one row loses"),
    returns("predict_mask_handover", "nan_row_only", "((1, 0), 'row 3 keeps nothing')", "computed from the future alone"),
    returns("predict_mask_handover", "future_without_nan", "((0, 3), 'flipped, it reads ahead')", "returns as NaN"),
    returns("predict_mask_handover", "every_row_reads_ahead", "((0, 4), 'all rows read ahead')", "drops the diagonal"),
    returns("predict_mask_handover", "not_a_pair", "(1, 'one NaN row')", "a tuple of two ints"),
    returns("predict_stacked_swap", "as_in_notebook_09", "(2, 'c and d read the same set')", "c and d read new"),
    returns("predict_stacked_swap", "second_block_undoes", "(4, 'the second block restores it')", "cannot undo"),
    returns("predict_stacked_swap", "only_the_swapped_pair", "(3, 'only b reads less')", "Not even c and d"),
    returns("predict_stacked_swap", "only_the_last_keeps", "(1, 'd reads the most')", "Not even d"),
    returns("predict_stacked_swap", "both_counts", "((2, 0), 'one block, then two')", "one int between 0 and 4"),
    returns("predict_stacked_swap", "out_of_range", "(5, 'five')", "one int between 0 and 4"),
    returns("predict_causal_models", "every_model_passes", "(3, 'they share the same mask')", "zeroes other entries"),
    returns("predict_causal_models", "rotations_break_it", "(1, 'rope mixes positions')", "rotary model passes too"),
    returns("predict_causal_models", "none_passes", "(0, 'attention mixes everything')", "the same at every call"),
    returns("predict_causal_models", "not_a_count", "('two', 'the masked ones')", "one int between 0 and 3"),
    returns("predict_bigram_share", "one_word_says_little", "('less than a third', 'a word is not a sentence')",
            "most of the gap"),
    returns("predict_bigram_share", "half_way", "('between a third and two thirds', 'agreement needs more')",
            "is a small part of the gap"),
    returns("predict_bigram_share", "not_a_choice", "0.83", "answer with one of"),
    returns("predict_overfit", "the_bound_holds", "('near the entropy rate', 'no model beats the entropy rate')",
            "memorises the batch"),
    returns("predict_overfit", "nothing_learnt", "('near ln V', 'too few steps')", "4 windows are few enough"),
    returns("predict_overfit", "not_a_choice", "(0.0, 'memorised')", "answer with one of"),
    returns("predict_final_loss", "the_bigram_is_the_limit", "('near the bigram baseline', 'words follow words')",
            "attention finds what the previous word"),
    returns("predict_final_loss", "too_few_steps", "('near the unigram baseline', '200 steps are few')",
            "word frequencies are learnt in the first"),
    returns("predict_final_loss", "not_a_choice", "1.06", "answer with one of"),
    returns("predict_unscaled_growth", "the_scaling_is_cosmetic", "('about 1.3 times', 'LayerNorm keeps the scale')",
            "the writes are what the scaling shrinks"),
    returns("predict_unscaled_growth", "spreads_multiply", "('about 6 times', 'sqrt(24) x 1.26')",
            "independent writes add variances"),
    returns("predict_unscaled_growth", "every_write_in_full", "('about 30 times', '24 writes of 1.26')",
            "add variances, not spreads"),
    returns("predict_unscaled_growth", "not_a_choice", "4.04", "answer with one of"),
    returns("predict_repeat_drop", "attention_cannot_copy", "('it does not fall: attention alone cannot use a repeat', "
            "'no feed-forward')", "read any earlier position"),
    returns("predict_repeat_drop", "a_steady_slope", "('steadily: about the same drop every 50 steps', 'gradient "
            "descent')", "two heads in different layers"),
    returns("predict_repeat_drop", "like_the_grammar_run", "('fast at first, then slower and slower', 'as before')",
            "shape of the grammar run"),
    returns("predict_repeat_drop", "not_a_choice", "'all at once'", "answer with one of"),
    returns("predict_loss_by_position", "context_is_not_needed", "('near the entropy rate', 'the model is trained')",
            "best any model can do is what"),
    returns("predict_loss_by_position", "one_token_says_nothing", "('near the unigram baseline', 'one word is no context')",
            "one token already says a lot"),
    returns("predict_loss_by_position", "not_a_choice", "'position 0'", "answer with one of"),
    returns("predict_longer_windows", "the_formula_extends", "('sinusoidal', 'a formula has every row')",
            "other way round"),
    returns("predict_longer_windows", "both_without_a_table", "'both'", "Only the rotary model"),
    returns("predict_longer_windows", "neither_saw_them", "'neither'", "offsets that matter"),
    returns("predict_longer_windows", "not_a_choice", "'learned'", "answer with one of"),
    returns("predict_harmful_switches", "every_part_counts", "(5, 'each part has a reason')",
            "do not show their worth in 40 steps"),
    returns("predict_harmful_switches", "only_the_residual", "1", "post-norm without warm-up"),
    returns("predict_harmful_switches", "nothing_in_40_steps", "0", "two switches stall"),
    returns("predict_harmful_switches", "not_a_count", "'two'", "one int between 0 and 5"),
    *[returns("predict_norm_vs_softmax", label, norm_answers(**changed), expect) for label, changed, expect in [
        ("layernorm_sums_to_one_too", {"sums": "both"}, "sum to 0, not 1"),
        ("softmax_is_standardised", {"standard": "softmax"}, "mean is 1/d"),
        ("softmax_feels_a_shift", {"shift": "LayerNorm"}, "Softmax is unchanged by x + c too"),
        ("layernorm_feels_a_shift", {"shift": "softmax"}, "LayerNorm is unchanged by x + c too"),
        ("softmax_ignores_scale_too", {"scale": "both"}, "temperature of 1/2"),
        ("layernorm_feels_scale", {"scale": "neither"}, "LayerNorm is unchanged by 2 * x"),
        ("every_part_swapped", {"sums": "LayerNorm", "standard": "softmax", "shift": "neither", "scale": "softmax"},
         "Softmax is unchanged by x + c too: adding c")]],
    returns("predict_norm_vs_softmax", "four_words_not_a_dict",
            "(('softmax', 'LayerNorm', 'both', 'LayerNorm'), 'in the order asked')", "dict of exactly these four keys"),
    returns("predict_norm_vs_softmax", "a_choice_not_offered", norm_answers(shift="layer-norm"),
            "answer each property with one of"),
    # the reference solution with one named edit each (tests/variants.py)
    Mistake("train_step", "no_zero_grad", variant(
        A, "train_step", replace=("    optimizer.zero_grad()\n", ""),
        name="old gradients never cleared"), "before the call"),
    Mistake("train_step", "no_clipping", variant(
        A, "train_step", replace=("    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n", ""),
        name="gradients never clipped"), "never capped"),
    Mistake("train_step", "clips_after_the_step", variant(
        A, "train_step", replace=("    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
                                  "    optimizer.step()\n",
                                  "    optimizer.step()\n"
                                  "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"),
        name="clipping and the step swapped"), "capping them after the step is too late"),
    Mistake("train_step", "clips_each_value", variant(
        A, "train_step", replace=("clip_grad_norm_", "clip_grad_value_"),
        name="each gradient value clipped, not the global norm"), "capped on its own"),
    Mistake("train_step", "pieces_not_scaled", variant(
        A, "train_step", replace=("lm_loss(model(x_piece), y_piece) / pieces", "lm_loss(model(x_piece), y_piece)"),
        name="each piece's mean loss backpropagated whole"), "by the number of pieces"),
    Mistake("train_step", "steps_after_each_piece", variant(
        A, "train_step", replace=("        total += share.item()\n",
                                  "        total += share.item()\n"
                                  "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
                                  "        optimizer.step()\n        optimizer.zero_grad()\n"),
        name="a step after every piece"), "moved once per piece"),
    Mistake("train_step", "clears_before_each_piece", variant(
        A, "train_step", replace=("        share = lm_loss", "        optimizer.zero_grad()\n        share = lm_loss"),
        name="the gradients cleared before every piece"), "last piece alone"),
    Mistake("train_step", "returns_the_tensor", variant(
        A, "train_step", replace=("return total", "return torch.tensor(total)"),
        name="the loss tensor returned, not its float"), "as a tensor"),
    Mistake("kv_cache_bytes", "keys_only", """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    return n_layers * context_len * d_model * bytes_per_value * batch
""", "key and a value"),
    Mistake("kv_cache_bytes", "one_layer", """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    return 2 * context_len * d_model * bytes_per_value * batch
""", "every layer keeps"),
    Mistake("kv_cache_bytes", "bits", """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    return 2 * n_layers * context_len * d_model * bytes_per_value * 8 * batch
""", "bits, not bytes"),
    Mistake("kv_cache_bytes", "ignores_batch", """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    return 2 * n_layers * context_len * d_model * bytes_per_value
""", "batch is missing"),
    Mistake("kv_cache_bytes", "in_megabytes_float", """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    return 2 * n_layers * context_len * d_model * bytes_per_value * batch / 1.0
""", "return an int"),
    Mistake("generate_cached", "new_token_embedded_at_0", cached(embed_start="0"), "embedded at position 0"),
    Mistake("generate_cached", "rope_offset_forgotten", cached(rope_start="0"), "pass start to project_heads"),
    Mistake("generate_cached", "mask_offset_forgotten", cached(mask_diagonal="0"), "forgets the offset"),
    Mistake("generate_cached", "cache_not_kept", cached(concat="k, v"), "append the new key and value"),
    Mistake("generate_cached", "no_cache_at_all", """
def generate_cached(model, ids, max_new_tokens, temperature=1.0, generator=None):
    return generate(model, ids, max_new_tokens, temperature, generator)
""", "reuse the cached keys"),
    Mistake("attention_maps", "no_mask", maps("""
q, k, v = project_heads(block.attn, block.ln1(x))
maps.append(scaled_dot_product_attention(q, k, v)[1][0])
x = block(x)
"""), "not causal"),
    Mistake("attention_maps", "no_ln1", maps("""
q, k, v = project_heads(block.attn, x)
maps.append(scaled_dot_product_attention(q, k, v, allowed)[1][0])
x = block(x)
"""), "block.ln1(x)"),
    Mistake("attention_maps", "never_moves_on", maps("""
q, k, v = project_heads(block.attn, block.ln1(x))
maps.append(scaled_dot_product_attention(q, k, v, allowed)[1][0])
"""), "x = block(x)"),
    Mistake("attention_maps", "no_scale", maps("""
q, k, v = project_heads(block.attn, block.ln1(x))
scores = (q @ k.transpose(-2, -1)).masked_fill(~allowed, float("-inf"))
maps.append(torch.softmax(scores, -1)[0])
x = block(x)
"""), "sqrt(D)"),
    Mistake("agreement_scores", "query_and_key_swapped", """
def agreement_scores(maps, pairs):
    return torch.stack([maps[:, :, k, q] for q, k in pairs], -1).mean(-1)
""", "(key, query)"),
    Mistake("agreement_scores", "summed", """
def agreement_scores(maps, pairs):
    return sum(maps[:, :, q, k] for q, k in pairs)
""", "take the mean"),
    Mistake("agreement_scores", "layers_averaged", """
def agreement_scores(maps, pairs):
    return torch.stack([maps[:, :, q, k] for q, k in pairs], -1).mean(-1).mean(0)
""", "one score per head"),
]

ALTERNATIVES.update({
    "predict_norm_vs_softmax": answer(
        "predict_norm_vs_softmax", "(dict([('unchanged by 2 * x', ' layernorm'), ('unchanged by x + c', 'Both'), "
        "('mean 0 and variance 1', 'LN'), ('sums to 1', 'SOFTMAX ')]), 'a total of exponentials against a spread')"),
    "predict_ffn_share": answer("predict_ffn_share", "0.66"),
    "predict_changed_positions": answer("predict_changed_positions", "len(range(5, 8))"),
    "predict_no_positions": answer("predict_no_positions", "'entropy ' + 'rate'"),
    "predict_longer_windows": answer("predict_longer_windows", "('ro' + 'pe', 'only offsets count')"),
    "predict_norm_placement": answer("predict_norm_placement", "('pre-' + 'norm', 'x + 0 is x')"),
    "predict_mask_handover": answer("predict_mask_handover", "((len('a'), len('abc')), 'flipped: only later keys')"),
    "predict_stacked_swap": answer("predict_stacked_swap", "(4 - 4, 'block 2 reads what block 1 changed')"),
    "predict_causal_models": answer("predict_causal_models", "(len(['learned', 'rope']), 'dropout moves them')"),
    "predict_bigram_share": answer("predict_bigram_share", "('more than ' + 'two thirds', 'few next words')"),
    "predict_overfit": answer("predict_overfit", "('near ' + '0', 'four windows fit in memory')"),
    "predict_final_loss": answer("predict_final_loss", "('near the ' + 'entropy rate', 'attention reads the agreement')"),
    "predict_unscaled_growth": answer("predict_unscaled_growth", "('about ' + '4 times', 'variances add: 1 + 24 x 0.59')"),
    "predict_repeat_drop": answer("predict_repeat_drop", "('slowly at first, then most of the fall within one ' + "
                                                     "'50-step stretch', 'two heads must both work')"),
    "predict_loss_by_position": answer("predict_loss_by_position", "('near the ' + 'bigram baseline', 'one token read')"),
    "predict_harmful_switches": answer("predict_harmful_switches", "(4 - 2, 'the two that guard the start')"),
    "train_step": """
def train_step(model, optimizer, xb, yb, max_norm, pieces=1):
    for p in model.parameters():
        p.grad = None
    n = len(xb) // pieces
    loss = 0.0
    for start in range(0, len(xb), n):
        logits = model(xb[start:start + n])
        part = F.cross_entropy(logits.flatten(0, 1), yb[start:start + n].flatten(), reduction="sum")
        (part / yb.numel()).backward()
        loss += part.item() / yb.numel()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    if norm > max_norm:
        for g in grads:
            g.mul_(max_norm / (norm + 1e-6))
    optimizer.step()
    return loss
""",
    "kv_cache_bytes": """
def kv_cache_bytes(n_layers, context_len, d_model, bytes_per_value=2, batch=1):
    per_position = 2 * d_model * bytes_per_value  # a key and a value
    return per_position * context_len * n_layers * batch
""",
    "generate_cached": """
def generate_cached(model, ids, max_new_tokens, temperature=1.0, generator=None):
    out = ids
    keys = values = None
    ctx = model.context_len
    with torch.no_grad():
        for step in range(max_new_tokens + 1):
            fresh = keys is None or keys[0].shape[2] >= ctx
            new = out[:, -ctx:] if fresh else out[:, -1:]
            start = 0 if fresh else keys[0].shape[2]
            if fresh:
                keys, values = [None] * len(model.blocks), [None] * len(model.blocks)
            x = model.embed(new, start)
            n = new.shape[1]
            mask = torch.arange(start + n)[None, :] <= start + torch.arange(n)[:, None]
            for i, block in enumerate(model.blocks):
                q, k, v = project_heads(block.attn, block.ln1(x), start)
                keys[i] = k if keys[i] is None else torch.cat((keys[i], k), dim=-2)
                values[i] = v if values[i] is None else torch.cat((values[i], v), dim=-2)
                o, _ = scaled_dot_product_attention(q, keys[i], values[i], mask)
                x = x + block.attn.w_o(o.transpose(1, 2).flatten(2))
                x = x + block.ff(block.ln2(x))
            if step == max_new_tokens:
                break
            logits = model.head(model.ln_f(x[:, -1, :]))
            if temperature == 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                nxt = torch.multinomial(F.softmax(logits / temperature, dim=-1), 1, generator=generator)
            out = torch.cat((out, nxt), 1)
    return out
""",
    "attention_maps": """
def attention_maps(model, ids):
    T = len(ids)
    if T > model.context_len:
        raise ValueError(f"{T} tokens do not fit the model's context_len {model.context_len}")
    out = []
    with torch.no_grad():
        h = model.embed(ids.unsqueeze(0))
        for block in model.blocks:
            q, k, _ = project_heads(block.attn, block.ln1(h), 0)
            s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
            out.append(s.softmax(-1).squeeze(0))
            h = block(h)
    return torch.stack(out)
""",
    "agreement_scores": """
def agreement_scores(maps, pairs):
    total = torch.zeros(maps.shape[:2])
    for q, k in pairs:
        total += maps[:, :, q, k]
    return total / len(pairs)
""",
})

MISTAKES += [
    Mistake("attention_maps", "runs_past_context_len", maps("""
q, k, v = project_heads(block.attn, block.ln1(x))
maps.append(scaled_dot_product_attention(q, k, v, allowed)[1][0])
x = block(x)
"""), "Check T against model.context_len"),
    *gpt2.MISTAKES,
]
ALTERNATIVES.update(gpt2.ALTERNATIVES)

PAIRS = """
def induction_pairs(ids):
{body}
"""
MISTAKES += [
    Mistake("induction_pairs", "reads_the_same_token", PAIRS.format(body=indent("""
last, pairs = {}, []
for q, t in enumerate(ids.tolist()):
    if t in last:
        pairs.append((q, last[t]))
    last[t] = q
return pairs
""", 4)), "not what it reads"),
    Mistake("induction_pairs", "first_occurrence", PAIRS.format(body=indent("""
first, pairs = {}, []
for q, t in enumerate(ids.tolist()):
    if t in first:
        pairs.append((q, first[t] + 1))
    else:
        first[t] = q
return pairs
""", 4)), "most recent one"),
    Mistake("induction_pairs", "pairs_for_new_tokens", PAIRS.format(body=indent("""
last, pairs = {}, []
for q, t in enumerate(ids.tolist()):
    pairs.append((q, last.get(t, q) + 1))
    last[t] = q
return pairs
""", 4)), "nothing to copy"),
    Mistake("induction_pairs", "fixed_period", PAIRS.format(body=indent("""
period = next(q for q in range(1, len(ids)) if ids[q] == ids[0])  # assumes one period, from token 0
return [(q, q - period + 1) for q in range(period, len(ids))]
""", 4)), "one fixed period"),
]
ALTERNATIVES["induction_pairs"] = PAIRS.format(body=indent("""
ids = ids.tolist()
pairs = []
for q in range(len(ids)):
    earlier = [k for k in range(q) if ids[k] == ids[q]]
    if earlier:
        pairs.append((q, max(earlier) + 1))
return pairs
""", 4))

MISTAKES += translation.MISTAKES  # the encoder-decoder and the embeddings' geometry: data of their own module
ALTERNATIVES.update(translation.ALTERNATIVES)
MISTAKES += ninja.MISTAKES  # LayerNorm's backward pass, node by node: data of its own module
ALTERNATIVES.update(ninja.ALTERNATIVES)
MISTAKES += experiments.MISTAKES  # the switches in the learner's block, their own experiment, the induction finale
ALTERNATIVES.update(experiments.ALTERNATIVES)

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def _first_message(exercise: str, source: str) -> str:
    """What the visible check says first about ``source``: the message a learner reads."""
    local = run_exercise(A, exercise, source)[0].local
    assert local is not None, f"{exercise} passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_norm_vs_softmax_says_why_of_every_wrong_part_and_nothing_of_a_right_one():
    """One reason per wrong part, in the order asked; a right part adds no reason (and breaking a reason's test
    shows: the sentence of a part answered right must not appear)."""
    q = nb10.predict_norm_vs_softmax
    right = dict(zip(nb10.NORM_PROPERTIES, ("softmax", "LayerNorm", "both", "LayerNorm")))
    assert q.judged(right, right).right
    wrong = dict(zip(nb10.NORM_PROPERTIES, ("both", "softmax", "softmax", "both")))
    why = q.judged(wrong, right).why
    said = [why.find(s) for s in ("sum to 0, not 1", "mean is 1/d", "LayerNorm is unchanged by x + c too",
                                  "temperature of 1/2")]
    assert -1 not in said and said == sorted(said), why
    one_wrong = q.judged(dict(right, **{"unchanged by 2 * x": "neither"}), right).why
    assert one_wrong.startswith("LayerNorm is unchanged by 2 * x") and "sum to 0" not in one_wrong, one_wrong


def test_layernorm_bug_hunt_shows_progress_with_symptoms():
    """The bug hunt hunts: the code as released, each half-fix and the fix get different messages, each true of
    what it sees (the released code is not called nearly right on rows it gets wrong), and none says the fix."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "LayerNorm"}
    said = {"released": _first_message("LayerNorm", stub_of(A, "LayerNorm")),
            "variance_mended": _first_message("LayerNorm", mistakes["eps_outside_sqrt"]),
            "eps_mended": _first_message("LayerNorm", mistakes["unbiased_variance"])}
    assert len(set(said.values())) == 3, said
    assert "two ways" in said["released"] and "Progress" not in said["released"], said["released"]
    assert "clear spread match" in said["variance_mended"] and "nearly equal still" in said["variance_mended"]
    assert "nearly equal is close" in said["eps_mended"] and "clear spread still" in said["eps_mended"]
    for message in said.values():
        for fix in ("unbiased", "correction", "d - 1", "inside", "sqrt(var", "divisor"):
            assert fix not in message, (fix, message)


def test_block_messages_name_symptoms_not_the_line():
    """Do DecoderBlock's messages, and dropout's for the block's own sites, say what the output shows without
    dictating the line that mends it (the exercise asks the learner to name the steps)?"""
    from autograder.checks.nb10 import dropout
    block_sites = [m for (site, _), m in dropout.DROPOUT_MESSAGES.items() if site in dropout.BLOCK_SITES]
    assert len(block_sites) == 5, block_sites
    for message in [*nb10.BLOCK_MESSAGES.values(), *block_sites, dropout.CHANGED]:
        for line in ("x + attn(", "attn(ln1", "ff(ln2", "torch.tril", "torch.triu", "self.drop(", "ln1(x))", "is pre-norm"):
            assert line not in message, (line, message)

def test_known_wrong_variants_come_from_a_closed_set():
    """Is every named mistake a variant the NumPy models compute, and does a misspelled name raise?"""
    for messages, variants in [(nb10.LN_MESSAGES, numpy_gpt.LN_VARIANTS), (nb10.FF_MESSAGES, numpy_gpt.FF_VARIANTS),
                               (nb10.BLOCK_MESSAGES, numpy_gpt.BLOCK_VARIANTS),
                               (nb10.GPT_MESSAGES, numpy_gpt.GPT_VARIANTS),
                               (nb10.STEP_MESSAGES, training.STEP_VARIANTS),
                               (nb10.CACHE_MESSAGES, torch_gpt.CACHE_VARIANTS),
                               (nb10.MAPS_MESSAGES, numpy_gpt.MAPS_VARIANTS)]:
        assert set(messages) <= set(variants), set(messages) - set(variants)
    with pytest.raises(ValueError, match="block_np has no variant 'post_nrom'; the choices are .*post_norm"):
        numpy_gpt.block_np({}, np.zeros((1, 2, 4)), 2, "post_nrom")
    with pytest.raises(ValueError, match="ln_np has no variant"):
        numpy_gpt.ln_np(np.zeros((2, 4)), 1.0, 0.0, variant="eps_inside")


@pytest.mark.parametrize("seed", range(21))
def test_gpt2_gelu_cases_tell_tanh_from_exact_under_any_seed(seed):
    """Under seeds 0-20, does every case that asks for gelu='tanh' (FeedForward's and TinyGPT's, visible and
    hidden) put the exact GELU at least five times its tolerance away, so that no seed lets an ignored choice
    through? The two forms differ by at most 4.7e-4, so the cases' inputs must reach where they part."""
    cases = [(c, tol) for check, tol in ((nb10.FeedForward, nb10.FF_TOL), (nb10.TinyGPT, nb10.OPTIONS_TOL))
             for hidden in (False, True) for c in check.cases(hidden, seed) if isinstance(c, nb10.ModelCase)]
    assert len(cases) == 5, [c.label for c, _ in cases]
    for case, tol in cases:
        right, wrong = case.right(), case.variants["gelu ignored"]()
        ratio = (np.abs(wrong - right) / (tol["atol"] + tol["rtol"] * np.abs(right))).max()
        assert ratio > 5, f"seed {seed}, {case.label}: the exact GELU is only {ratio:.1f} tolerances away"


def test_dropout_sites_are_read_from_what_the_modules_saw():
    """Does the dropout check call a tensor dropped only when every entry is 0 or rescaled by 1 / (1 - p), and tell
    an untouched, an unscaled and an otherwise changed tensor apart?"""
    torch = pytest.importorskip("torch")
    clean = torch.randn(4, 50)
    torch.manual_seed(0)
    assert nb10._dropout_kind(torch.nn.functional.dropout(clean, 0.3), clean, 0.3) == nb10.DROPPED
    assert nb10._dropout_kind(clean.clone(), clean, 0.3) == nb10.UNTOUCHED
    assert nb10._dropout_kind(clean * (torch.rand_like(clean) > 0.3), clean, 0.3) == "dropped, not rescaled"
    assert nb10._dropout_kind(clean * 2, clean, 0.3) == "changed"
    assert nb10._dropout_kind(None, clean, 0.3) == "not seen"
    assert nb10._dropout_kind(clean[:2], clean, 0.3) == "another shape"


OPTION_MISTAKES = [m for m in MISTAKES if isinstance(m, Mistake) and m.label in {
    "ignores_the_gelu_choice", "no_dropout", "dropout_on_the_residual_stream", "dropout_on_the_sublayer_input",
    "dropout_also_in_eval_mode", "dropout_without_rescaling", "tied_head_keeps_its_bias", "ties_by_copying_the_table",
    "ties_by_copying_the_values", "gelu_not_passed_to_the_blocks", "no_dropout_on_the_embeddings",
    "dropout_before_the_head", "blocks_built_without_dropout"}]


@pytest.mark.slow
@pytest.mark.parametrize("mistake", OPTION_MISTAKES, ids=str)
def test_the_hidden_checks_reject_each_option_mistake_under_any_seed(mistake):
    """tests/checks/test_hidden_seeds.py covers 01-09; here the mistakes of TinyGPT's options (tie_weights, gelu,
    dropout) and of the pieces they reach (FeedForward, DecoderBlock) meet the hidden check of their exercise under
    seeds 0-7: each must fail under every one, so that no seed gives a hidden test's points back."""
    from tests.checks.test_hidden_seeds import Entry, _check, _implementation, _verdict

    entry = Entry(A, mistake.exercise, mistake.label, mistake.source, True)
    check, wrong = _check(A, mistake.exercise), _implementation(entry)
    passed = [seed for seed in range(8) if _verdict(check, wrong, seed) is None]
    assert not passed, f"{mistake} passes the hidden check of {mistake.exercise} under seeds {passed}"


def test_the_feed_forward_and_step_messages_name_symptoms_not_the_line():
    """FeedForward's and train_step's messages say what came out wrong and why; they never hand over the call."""
    from autograder.checks.nb10.layers import GELU_IGNORED
    messages = [*nb10.FF_MESSAGES.values(), GELU_IGNORED, *nb10.STEP_MESSAGES.values(), *nb10.PIECES_MESSAGES.values()]
    for message in messages:
        for code in ("F.gelu(", "approximate=", "fc2(", "zero_grad", "clip_grad_norm_", "clip_grad_value_", ".item()"):
            assert code not in message, f"{code!r} dictates the line: {message}"
