"""Do notebook 09's checks of the fixed-vector decoder against cross-attention (read_context, predict_copy_accuracy)
reject the mistakes students make, each with a message naming its symptom, and accept other correct code?

The known-wrong implementations and the differently written correct ones are data here (MISTAKES, ALTERNATIVES);
test_nb09.py runs them through the standard suite in the notebook, with the rest of its exercises. The tests below
call the checks directly (with a correct scaled_dot_product_attention beside them, as in the notebook), so they hold
whether or not the notebook has the section yet.
"""
import math
import textwrap

import numpy as np
import pytest

from autograder.checks import core, nb09
from tests.harness import Mistake, answer, returns

pytestmark = pytest.mark.nb09

torch = pytest.importorskip("torch")

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
    "predict_copy_accuracy": answer("predict_copy_accuracy", '[0.3, 0.97], "one state of 32 numbers for 10 tokens"'),
}


def scaled_dot_product_attention(q, k, v, mask=None):  # a correct one, as the notebook's own is by then
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w


def _define(source: str, name: str):
    ns = {"np": np, "torch": torch, "math": math, "scaled_dot_product_attention": scaled_dot_product_attention}
    exec(textwrap.dedent(source), ns)
    return ns[name]


def _failure(check, fn) -> str:
    messages = []
    for hidden in (False, True):
        try:
            check(fn, hidden=hidden)
        except core.CheckFailure as failure:
            messages.append(str(failure))
    return " | ".join(messages)


@pytest.mark.parametrize("mistake", [m for m in MISTAKES if m.exercise == "read_context"], ids=str)
def test_each_known_mistake_is_rejected_with_its_symptom(mistake):
    message = _failure(nb09.read_context, _define(mistake.source, mistake.exercise))
    assert message, f"{mistake} passed every check of read_context"
    assert mistake.expect.lower() in message.lower(), f"{mistake}: expected {mistake.expect!r} in: {message}"


def test_a_differently_written_correct_version_passes():
    assert _failure(nb09.read_context, _define(ALTERNATIVES["read_context"], "read_context")) == ""


def test_every_named_variant_differs_from_the_right_context_where_it_applies():
    rng = np.random.default_rng(1)
    H, q = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 4))
    for variant in nb09.READ_MESSAGES:
        differs = [not np.allclose(nb09.read_context_np(q, H, attend, variant), nb09.read_context_np(q, H, attend))
                   for attend in (False, True)]
        assert any(differs), variant


def test_the_prediction_earns_its_point_right_or_wrong_and_a_malformed_one_is_refused():
    right = _define(ALTERNATIVES["predict_copy_accuracy"], "predict_copy_accuracy")
    wrong = _define(answer("predict_copy_accuracy", '(1.0, 1.0), "same training"'), "predict_copy_accuracy")
    assert _failure(nb09.predict_copy_accuracy, right) == ""
    assert _failure(nb09.predict_copy_accuracy, wrong) == ""
    malformed = _define(answer("predict_copy_accuracy", '0.3, "falls"'), "predict_copy_accuracy")
    assert "tuple of 2 numbers" in _failure(nb09.predict_copy_accuracy, malformed)
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
