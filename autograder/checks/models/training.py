"""One reference training step on a small model (zero_grad, backward, clip, step), and its known mistakes."""
from __future__ import annotations

from ..hints import known_variant
from ..toolkit import import_torch


class SGD:
    """Plain SGD with an optimizer's two methods. Not torch.optim: importing it reaches torch's compiler, which
    wants a writable cache folder that a grading sandbox may not give (the reference would then fail too)."""

    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self):
        torch = import_torch()
        with torch.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p -= self.lr * p.grad


def step_setup(seed, V=7, T=5, B=3):
    """A small model (an embedding and a linear layer), stale gradients on it, an SGD optimiser and a batch."""
    torch = import_torch()
    g = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Embedding(V, 6), torch.nn.Linear(6, V))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 2.0)
            p.grad = torch.full_like(p, 0.5)  # left over from an earlier step
    opt = SGD(model.parameters(), lr=0.1)
    xb = torch.randint(0, V, (B, T), generator=g)
    yb = torch.randint(0, V, (B, T), generator=g)
    return model, opt, xb, yb


def flat_params(model):
    torch = import_torch()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


STEP_VARIANTS = ("no_zero_grad", "clip_value", "clip_after_step", "no_clip")


def reference_step(seed, max_norm, variant=None):
    known_variant(variant, STEP_VARIANTS, "reference_step")
    torch = import_torch()
    model, opt, xb, yb = step_setup(seed)
    if variant != "no_zero_grad":
        opt.zero_grad()
    logits = model(xb)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
    loss.backward()
    if variant == "clip_value":
        torch.nn.utils.clip_grad_value_(model.parameters(), max_norm)
    elif variant == "clip_after_step":
        opt.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        return loss.item(), flat_params(model)
    elif variant != "no_clip":
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    opt.step()
    return loss.item(), flat_params(model)
