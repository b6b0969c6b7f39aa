"""Do notebook 09's checks of the fixed-vector decoder against cross-attention (read_context, predict_copy_accuracy)
reject the mistakes students make, each with a message naming its symptom, and accept other correct code?

The known-wrong implementations and the differently written correct ones are data here (MISTAKES, ALTERNATIVES);
test_nb09.py runs them through the standard suite (tests/harness.py: each mistake rejected by the learner's check and
by the grader with its symptom, each alternative accepted), with the rest of its exercises. The tests below hold
only what that suite does not: the named variants, what the prediction counts as right, and cases built without
torch.
"""
import numpy as np
import pytest

from autograder.checks import nb09
from tests.harness import Mistake, answer, returns

pytestmark = pytest.mark.nb09

LENGTHS = """
def accuracy_by_length(model, max_len, n_symbols, seed=123):
    gen = torch.Generator().manual_seed(seed)
    shares = []
    with torch.no_grad():
        for n in range(1, max_len + 1):
            src = torch.randint(0, n_symbols, (128, n), generator=gen)
            shares.append(({right}).float().mean().item())
    return np.array(shares)
"""

MISTAKES = [
    Mistake("read_context", "first_state", '''
def read_context(query, H, attend):
    if not attend:
        return H[:, 0]
    return scaled_dot_product_attention(query[:, None, :], H, H)[0][:, 0]
''', "first state"),
    Mistake("read_context", "mean_of_the_states", '''
def read_context(query, H, attend):
    if not attend:
        return H[:, -1]
    return H.mean(dim=1)
''', "plain average"),
    Mistake("read_context", "unscaled_scores", '''
def read_context(query, H, attend):
    if not attend:
        return H[:, -1]
    w = torch.softmax(torch.einsum("bnd,bd->bn", H, query), dim=-1)
    return torch.einsum("bn,bnd->bd", w, H)
''', "too sharp"),
    Mistake("read_context", "softmax_over_the_batch", '''
def read_context(query, H, attend):
    if not attend:
        return H[:, -1]
    w = torch.softmax(torch.einsum("bnd,bd->bn", H, query) / H.shape[-1] ** 0.5, dim=0)
    return torch.einsum("bn,bnd->bd", w, H)
''', "another axis"),
    Mistake("read_context", "never_attends", '''
def read_context(query, H, attend):
    return H[:, -1]
''', "last state anyway"),
    Mistake("read_context", "always_attends", '''
def read_context(query, H, attend):
    return scaled_dot_product_attention(query[:, None, :], H, H)[0][:, 0]
''', "depends on every state"),
    Mistake("read_context", "keeps_the_query_axis", '''
def read_context(query, H, attend):
    if not attend:
        return H[:, -1]
    return scaled_dot_product_attention(query[:, None, :], H, H)[0]
''', "wrong shape"),
    Mistake("accuracy_by_length", "whole_source", LENGTHS.format(right="(model(src).argmax(-1) == src).all(dim=1)"),
            "every one of its tokens"),
    Mistake("accuracy_by_length", "last_token", LENGTHS.format(right="model(src).argmax(-1)[:, -1] == src[:, -1]"),
            "only one output position"),
    Mistake("accuracy_by_length", "first_token", LENGTHS.format(right="model(src).argmax(-1)[:, 0] == src[:, 0]"),
            "only the first output token"),
    Mistake("accuracy_by_length", "lengths_from_zero", LENGTHS.format(right="model(src).argmax(-1) == src")
            .replace("range(1, max_len + 1)", "range(max_len)"), "lengths start at 0"),
    returns("predict_copy_accuracy", "both_perfect", '(1.0, 1.0), "same training"', "rebuild 10 tokens"),
    returns("predict_copy_accuracy", "not_a_pair", '0.3, "falls"', "tuple of 2 numbers"),
    returns("predict_copy_accuracy", "the_fixed_vector_holds", '(0.9, 1.0), "32 numbers hold 30 bits"',
            "9 further updates"),
]

ALTERNATIVES = {
    "read_context": '''
def read_context(query, H, attend):
    last = H[:, H.shape[1] - 1, :]
    if attend is False:
        return last
    scores = (H * query.unsqueeze(1)).sum(-1) / math.sqrt(query.shape[-1])  # (B, n)
    weights = torch.exp(scores - scores.max(dim=1, keepdim=True).values)
    weights = weights / weights.sum(dim=1, keepdim=True)
    return (weights.unsqueeze(-1) * H).sum(dim=1)
''',
    "accuracy_by_length": '''
def accuracy_by_length(model, max_len, n_symbols, seed=123):
    torch.manual_seed(seed)  # another way to draw the sources: the shares are the model's, whatever sources it meets
    right, total = np.zeros(max_len), np.zeros(max_len)
    for length in range(max_len, 0, -1):
        for _ in range(4):
            src = torch.randint(n_symbols, (32, length))
            written = model(src).detach().max(dim=2).indices
            right[length - 1] += int((written == src).sum())
            total[length - 1] += src.numel()
    return right / total
''',
    "predict_copy_accuracy": answer("predict_copy_accuracy", '[0.3, 0.97], "one state of 32 numbers for 10 tokens"'),
}


def test_every_named_variant_differs_from_the_right_context_where_it_applies():
    rng = np.random.default_rng(1)
    H, q = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 4))
    for variant in nb09.READ_MESSAGES:
        differs = [not np.allclose(nb09.read_context_np(q, H, attend, variant), nb09.read_context_np(q, H, attend))
                   for attend in (False, True)]
        assert any(differs), variant


def test_the_prediction_is_judged_against_the_measured_shares_with_its_own_why():
    """The suite in test_nb09 proves the point is earned right or wrong; here: what counts as right, and why."""
    truth = (0.27, 1.0)
    assert nb09.predict_copy_accuracy.judged((0.3, 0.97), truth).right
    record = nb09.predict_copy_accuracy.judged((1.0, 1.0), truth)
    assert not record.right and "rebuild 10 tokens" in record.why


def test_the_cases_are_built_without_torch():
    import subprocess
    import sys

    code = ("import sys; from autograder.checks import nb09\n"
            "for name in ('read_context', 'predict_copy_accuracy'):\n"
            "    for hidden in (False, True):\n"
            "        getattr(nb09, name).cases(hidden)\n"
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0, "building a read_context case imported torch"
