"""Does every check of 10_decoder_block reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, exercise_suite

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
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return {body}
'''

BLOCK = '''
class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)

    def forward(self, x):
        T = x.shape[1]
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
{body}
'''

GPT = '''
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, context_len, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.context_len = context_len
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_len, d_model)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, ids):
        B, T = ids.shape
{body}
'''

GEN = '''
def generate(model, ids, max_new_tokens, temperature=1.0, generator=None):
    with torch.no_grad():
        for _ in range(max_new_tokens):
{body}
    return ids
'''


def indent(text, n):
    return "\n".join(" " * n + line if line else line for line in text.strip("\n").splitlines())


def ln(body):
    return LN.format(body=indent(body, 8))


def block(body):
    return BLOCK.format(body=indent(body, 8))


def gpt(body):
    return GPT.format(body=indent(body, 8))


def gen(body):
    return GEN.format(body=indent(body, 12))


GPT_OK = '''
if T > self.context_len:
    raise ValueError("too long")
x = self.tok_emb(ids) + self.pos_emb(torch.arange(T))
for b in self.blocks:
    x = b(x)
return self.head(self.ln_f(x))
'''

MISTAKES = [
    Mistake("LayerNorm", "eps_outside_sqrt", ln('''
mu = x.mean(-1, keepdim=True)
var = x.var(-1, keepdim=True, unbiased=False)
return (x - mu) / (torch.sqrt(var) + self.eps) * self.weight + self.bias
'''), "outside the square root"),
    Mistake("LayerNorm", "unbiased_variance", ln('''
mu = x.mean(-1, keepdim=True)
return (x - mu) / torch.sqrt(x.var(-1, keepdim=True) + self.eps) * self.weight + self.bias
'''), "unbiased=False"),
    Mistake("LayerNorm", "torch_std", ln('''
return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + self.eps) * self.weight + self.bias
'''), "the default of x.var() and x.std()"),
    Mistake("LayerNorm", "normalises_over_batch", ln('''
mu = x.mean(0, keepdim=True)
var = x.var(0, keepdim=True, unbiased=False)
return (x - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias
'''), "wrong axis"),
    Mistake("LayerNorm", "no_weight_and_bias", ln('''
mu = x.mean(-1, keepdim=True)
return (x - mu) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + self.eps)
'''), "scale and shift"),
    Mistake("FeedForward", "tanh_gelu", FF.format(body="self.fc2(F.gelu(self.fc1(x), approximate='tanh'))"),
            "tanh approximation"),
    Mistake("FeedForward", "relu", FF.format(body="self.fc2(torch.relu(self.fc1(x)))"), "this is relu"),
    Mistake("FeedForward", "no_activation", FF.format(body="self.fc2(self.fc1(x))"), "no activation"),
    Mistake("FeedForward", "gelu_after_fc2", FF.format(body="F.gelu(self.fc2(self.fc1(x)))"), "after fc2"),
    Mistake("DecoderBlock", "post_norm", block('''
x = self.ln1(x + self.attn(x, mask=allowed))
return self.ln2(x + self.ff(x))
'''), "post-norm"),
    Mistake("DecoderBlock", "no_causal_mask", block('''
x = x + self.attn(self.ln1(x))
return x + self.ff(self.ln2(x))
'''), "causal mask"),
    Mistake("DecoderBlock", "pytorch_mask_convention", block('''
x = x + self.attn(self.ln1(x), mask=torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1))
return x + self.ff(self.ln2(x))
'''), "True = allowed"),
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
    Mistake("TinyGPT", "no_position_embeddings", gpt('''
if T > self.context_len:
    raise ValueError("too long")
x = self.tok_emb(ids)
for b in self.blocks:
    x = b(x)
return self.head(self.ln_f(x))
'''), "position embeddings"),
    Mistake("TinyGPT", "does_not_raise", gpt('''
x = self.tok_emb(ids) + self.pos_emb(torch.arange(T))
for b in self.blocks:
    x = b(x)
return self.head(self.ln_f(x))
'''), "should raise ValueError"),
    Mistake("TinyGPT", "no_final_norm", gpt('''
if T > self.context_len:
    raise ValueError("too long")
x = self.tok_emb(ids) + self.pos_emb(torch.arange(T))
for b in self.blocks:
    x = b(x)
return self.head(x)
'''), "final LayerNorm"),
    Mistake("TinyGPT", "raises_at_context_len", gpt(GPT_OK.replace("T > self.context_len", "T >= self.context_len")),
            "raised ValueError"),
    Mistake("lm_loss", "summed", '''
def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum")
''', "summed over positions"),
    Mistake("lm_loss", "per_sequence_mean_summed", '''
def lm_loss(logits, targets):
    return sum(F.cross_entropy(logits[b], targets[b]) for b in range(logits.shape[0]))
''', "then summed over the batch"),
    Mistake("lm_loss", "shifts_again", '''
def lm_loss(logits, targets):
    V = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), targets[:, 1:].reshape(-1))
''', "shifted again"),
    Mistake("lm_loss", "softmax_first", '''
def lm_loss(logits, targets):
    V = logits.shape[-1]
    return F.cross_entropy(torch.softmax(logits, -1).reshape(-1, V), targets.reshape(-1))
''', "do not apply softmax first"),
    Mistake("lm_loss", "flattens_targets_transposed", '''
def lm_loss(logits, targets):
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.T.reshape(-1))
''', "different order"),
    Mistake("lm_loss", "returns_a_float", '''
def lm_loss(logits, targets):
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1)).item()
''', "expected a torch tensor"),
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
    "FeedForward": FF.format(body="self.fc2((lambda h: 0.5 * h * (1 + torch.erf(h / math.sqrt(2))))(self.fc1(x)))"),
    "DecoderBlock": block('''
T = x.size(-2)
keep = torch.ones(T, T).tril().bool()
attended = x + self.attn(self.ln1(x), mask=keep)
return attended + self.ff(self.ln2(attended))
'''),
    "count_block_params": '''
def count_block_params(d_model, d_ff):
    return sum(p.numel() for p in DecoderBlock(d_model, 1, d_ff).parameters())
''',
    "TinyGPT": gpt('''
if ids.size(1) > self.context_len:
    raise ValueError(f"{ids.size(1)} tokens do not fit in a context of {self.context_len}")
h = self.tok_emb(ids) + self.pos_emb.weight[:T]
for layer in self.blocks:
    h = layer(h)
return self.head(self.ln_f(h))
'''),
    "lm_loss": '''
def lm_loss(logits, targets):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()
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

(test_mistake_is_rejected_with_a_message_naming_it, test_differently_written_correct_answer_is_accepted,
 test_reference_passes_and_stub_is_not_attempted, test_every_exercise_has_three_mistakes_and_an_alternative,
 ) = exercise_suite(A, MISTAKES, ALTERNATIVES)
