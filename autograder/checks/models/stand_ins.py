"""Stand-ins for a TinyGPT whose next token is known, for the checks of ``generate``."""
from __future__ import annotations

from functools import lru_cache

from ..toolkit import import_torch


@lru_cache(maxsize=None)
def fake_models():
    """Two stand-ins for a TinyGPT whose next token is known, built when torch is at hand."""
    torch = import_torch()

    class Window(torch.nn.Module):
        def __init__(self, vocab_size, context_len):
            super().__init__()
            self.vocab_size, self.context_len = vocab_size, context_len

        def check(self, ids):
            if ids.shape[1] > self.context_len:
                raise ValueError(f"the model got {ids.shape[1]} positions, more than its context_len="
                                 f"{self.context_len}: crop ids to their last context_len tokens")

    class SumModel(Window):
        """At every position, one sure logit (20) on (sum of the tokens so far) mod vocab_size."""

        def forward(self, ids):
            self.check(ids)
            return torch.nn.functional.one_hot(ids.cumsum(1) % self.vocab_size, self.vocab_size).float() * 20.0

    class FixedModel(Window):
        """The same logits at every position, whatever the tokens."""

        def __init__(self, logits, context_len=8):
            super().__init__(len(logits), context_len)
            self.logits = torch.tensor(logits, dtype=torch.float32)

        def forward(self, ids):
            self.check(ids)
            return self.logits.expand(*ids.shape, self.vocab_size).clone()

    return SumModel, FixedModel


def sum_rule(prompt, n, V, ctx):
    rows = [list(map(int, r)) for r in prompt]
    for row in rows:
        for _ in range(n):
            row.append(sum(row[-ctx:]) % V)
    return rows
