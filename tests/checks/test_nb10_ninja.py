"""Does the check of notebook 10's LayerNorm backward, derived node by node (layernorm_backward_nodes), name the
FIRST node that is wrong, for the mistakes a derivation by hand really makes, and accept other correct code?

MISTAKES and ALTERNATIVES are data in the harness's form, so test_nb10's standard suite runs them through the
notebook's test cells too. The tests below call the check directly and need no notebook.
"""
import numpy as np
import pytest
import torch

from autograder.checks import core, nb10
from autograder.checks.nb10 import ninja
from tests.harness import Mistake, indent

pytestmark = pytest.mark.nb10

FORWARD = """
N = x.shape[-1]
mu = x.mean(-1, keepdim=True)
xc = x - mu
var = (xc ** 2).mean(-1, keepdim=True)
rstd = (var + eps) ** -0.5
xhat = xc * rstd
"""
LINES = {
    "dxhat": "dxhat = dy * gamma",
    "drstd": "drstd = (dxhat * xc).sum(-1, keepdim=True)",
    "dvar": "dvar = drstd * -0.5 * (var + eps) ** -1.5",
    "dxc": "dxc = dxhat * rstd + dvar * 2 * xc / N",
    "dmu": "dmu = -dxc.sum(-1, keepdim=True)",
    "dx": "dx = dxc + dmu / N",
    "dgamma": "dgamma = (dy * xhat).sum(0)",
    "dbeta": "dbeta = dy.sum(0)",
}


def nodes(forward: str = FORWARD, **lines: str) -> str:
    """layernorm_backward_nodes with the reference's lines, some replaced by ``lines``."""
    body = forward + "\n".join({**LINES, **lines}.values()) + "\nreturn dict(" + \
        ", ".join(f"{n}={n}" for n in LINES) + ")\n"
    return "def layernorm_backward_nodes(dy, x, gamma, eps):\n" + indent(body, 4) + "\n"


MISTAKES = [
    # xc feeds var as well as xhat: only the path through xhat was followed
    Mistake("layernorm_backward_nodes", "xc_var_path_forgotten", nodes(dxc="dxc = dxhat * rstd"), "dxc is off"),
    # x feeds mu, and mu is a MEAN: its share is dmu / N
    Mistake("layernorm_backward_nodes", "mean_without_1_over_N", nodes(dx="dx = dxc + dmu"),
            "dx is off: in each row, yours differs from autograd's by the same amount"),
    # d/dv (v + eps)^(-1/2) = -1/2 (v + eps)^(-3/2): the minus lost
    Mistake("layernorm_backward_nodes", "power_derivative_sign", nodes(dvar="dvar = drstd * 0.5 * (var + eps) ** -1.5"),
            "dvar is off: its values are -1 times what autograd gets"),
    # the power rule without the chain: -1/2 (v + eps)^(-1/2)
    Mistake("layernorm_backward_nodes", "power_lowered_by_nothing",
            nodes(dvar="dvar = drstd * -0.5 * (var + eps) ** -0.5"), "dvar is off"),
    # dgamma summed over the features (each row's) instead of over the rows (each feature's)
    Mistake("layernorm_backward_nodes", "dgamma_wrong_axis", nodes(dgamma="dgamma = (dy * xhat).sum(-1)"),
            "dgamma has shape"),
    Mistake("layernorm_backward_nodes", "dbeta_not_summed", nodes(dbeta="dbeta = dy"), "dbeta has shape"),
    # the forward pass with the unbiased variance (N - 1), as x.var() does by default: dvar is the first to differ
    Mistake("layernorm_backward_nodes", "unbiased_variance",
            nodes(FORWARD.replace("var = (xc ** 2).mean(-1, keepdim=True)", "var = x.var(-1, keepdim=True)"),
                  dxc="dxc = dxhat * rstd + dvar * 2 * xc / (N - 1)"), "dvar is off"),
    Mistake("layernorm_backward_nodes", "gamma_forgotten", nodes(dxhat="dxhat = dy"), "dxhat is off"),
    Mistake("layernorm_backward_nodes", "a_node_missing", nodes().replace("dmu=dmu, ", ""), "no 'dmu'"),
]

# The compact closed form: one line for dx once xhat and rstd are known.
ALTERNATIVES = {"layernorm_backward_nodes": """
def layernorm_backward_nodes(dy, x, gamma, eps):
    n = x.size(-1)
    xc = x - x.mean(dim=-1, keepdim=True)
    v = xc.pow(2).sum(dim=-1, keepdim=True) / n
    rstd = torch.rsqrt(v + eps)
    xhat = xc * rstd
    g = dy * gamma
    dvar = -0.5 * rstd ** 3 * (g * xc).sum(dim=-1, keepdim=True)
    dxc = g * rstd + 2.0 / n * dvar * xc
    dx = rstd / n * (n * g - g.sum(-1, keepdim=True) - xhat * (g * xhat).sum(-1, keepdim=True))
    return {"dxhat": g, "drstd": (g * xc).sum(-1, keepdim=True), "dvar": dvar, "dxc": dxc,
            "dmu": -dxc.sum(-1, keepdim=True), "dx": dx, "dgamma": torch.einsum("rn,rn->n", dy, xhat),
            "dbeta": dy.sum(dim=0)}
"""}


def _compile(source: str):
    ns = {"torch": torch}
    exec(source, ns)
    return ns["layernorm_backward_nodes"]


def _message(source: str, hidden: bool = False) -> str:
    with pytest.raises(core.CheckFailure) as info:
        nb10.layernorm_backward_nodes(_compile(source), hidden=hidden)
    return str(info.value)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_reference_equals_autograd_node_by_node(seed):
    rng = np.random.default_rng(seed)
    x, gamma, dy = rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(4, 5))
    t = {k: torch.tensor(v, requires_grad=True) for k, v in (("x", x), ("gamma", gamma), ("beta", np.zeros(5)))}
    mu = t["x"].mean(-1, keepdim=True)
    xc = t["x"] - mu
    var = (xc ** 2).mean(-1, keepdim=True)
    rstd = (var + 1e-5) ** -0.5
    xhat = xc * rstd
    y = t["gamma"] * xhat + t["beta"]
    for node in (mu, xc, var, rstd, xhat):
        node.retain_grad()
    (y * torch.tensor(dy)).sum().backward()
    autograd = {"dxhat": xhat.grad, "drstd": rstd.grad, "dvar": var.grad, "dxc": xc.grad, "dmu": mu.grad,
                "dx": t["x"].grad, "dgamma": t["gamma"].grad, "dbeta": t["beta"].grad}
    ref = ninja.reference(dy, x, gamma, 1e-5)
    assert list(ref) == list(ninja.NODES)
    for name in ninja.NODES:
        np.testing.assert_allclose(ref[name], autograd[name].numpy(), atol=1e-12, rtol=1e-10, err_msg=name)


@pytest.mark.parametrize("hidden", [False, True])
def test_the_reference_and_the_alternative_pass(hidden):
    nb10.layernorm_backward_nodes(_compile(nodes()), hidden=hidden)
    nb10.layernorm_backward_nodes(_compile(ALTERNATIVES["layernorm_backward_nodes"]), hidden=hidden)


@pytest.mark.parametrize("mistake", MISTAKES, ids=str)
@pytest.mark.parametrize("hidden", [False, True])
def test_each_mistake_names_its_first_wrong_node(mistake, hidden):
    message = _message(mistake.source, hidden)
    assert mistake.expect in message, message
    first = message.split(" is off")[0].split(" has shape")[0].split()[-1]
    later = ninja.NODES[ninja.NODES.index(first) + 1:] if first in ninja.NODES else ()
    assert not any(f"{n} is off" in message for n in later), f"a later node was named too: {message}"


def test_the_forgotten_var_path_of_dmu_is_invisible_and_accepted():
    """dmu's path through var is sum over the row of dvar * 2 * xc / N, and a row of xc sums to 0: in exact
    arithmetic that path contributes nothing, in float64 some 1e-16. No check can see it, so a dmu that leaves
    it out is right, and the check accepts it (it is not a mistake, and it is not in MISTAKES)."""
    nb10.layernorm_backward_nodes(_compile(nodes(dmu="dmu = -(dxhat * rstd).sum(-1, keepdim=True)")))
    nb10.layernorm_backward_nodes(_compile(nodes(dmu="dmu = -(dxhat * rstd).sum(-1, keepdim=True)")), hidden=True)


def test_bad_returns_get_clear_messages():
    assert "not a dict" in _message("def layernorm_backward_nodes(dy, x, gamma, eps):\n    return [dy]\n")
    assert "not a tensor" in _message(nodes().replace("dbeta=dbeta", "dbeta='zero'"))
    assert "nan or inf" in _message(nodes(dxhat="dxhat = dy * gamma / 0"))


def test_a_stub_is_not_attempted():
    stub = "def layernorm_backward_nodes(dy, x, gamma, eps):\n    raise NotImplementedError()\n"
    with pytest.raises(core.NotAttempted):
        nb10.layernorm_backward_nodes(_compile(stub))


def test_breaking_the_judge_on_purpose_lets_a_mistake_through(monkeypatch):
    """The verdict comes from judge(): with a judge that always agrees, the sign mistake passes, so the tests
    above that see it rejected are testing judge() and not something else."""
    wrong = _compile(next(m.source for m in MISTAKES if m.label == "power_derivative_sign"))
    with pytest.raises(core.CheckFailure):
        nb10.layernorm_backward_nodes(wrong)
    monkeypatch.setattr(ninja, "judge", lambda got, want: None)
    nb10.layernorm_backward_nodes(wrong)
