"""Notebook 08's cheating experiment: a tiny one-layer attention language model and its training run.

The notebook imports these so that its page shows the experiment, not code that notebooks 09 and 10 ask the
learner to write themselves (scaled dot-product attention, the language-model loss, a training step). The one
piece that differs between the two runs is the mask, and it is the learner's: ``train(X, Y, mask=causal_mask)``;
the measurement that compares them, on whole windows and on prefixes, is the learner's too (``prefix_logits``).
Nothing here is imported by the checks (``autograder.checks.nb08`` does not import this module), so grading
never loads PyTorch for it.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch


def windows(ids: np.ndarray, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every window of T ids of the stream, and the ids the model is trained to predict there."""
    starts = np.arange(len(ids) - T)[:, None] + np.arange(T)  # (N, T)
    return torch.tensor(ids[starts]), torch.tensor(ids[starts + 1])


class TinyAttentionLM(torch.nn.Module):
    """Token and position embeddings, one attention layer, a linear read-out.

    mask: None (every position reads every position) or a function of t returning a (t, t) boolean table,
    True where the query (row) may read the key (column).
    """

    def __init__(self, V: int, T: int, d: int, mask: Callable[[int], np.ndarray] | None):
        super().__init__()
        self.mask, self.d = mask, d
        self.tok, self.pos = torch.nn.Embedding(V, d), torch.nn.Embedding(T, d)
        self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))
        self.out = torch.nn.Linear(d, V)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids (B, t) -> logits (B, t, V)
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t))  # (B, t, d)
        allowed = None if self.mask is None else torch.as_tensor(np.asarray(self.mask(t), dtype=bool))
        # PyTorch's attention with the identity as values returns the attention weights themselves
        self.weights = torch.nn.functional.scaled_dot_product_attention(  # kept for the notebook's picture
            self.q(h), self.k(h), torch.eye(t).expand(len(ids), t, t), attn_mask=allowed)  # (B, t, t)
        return self.out(h + self.weights @ self.v(h))


def train(X: torch.Tensor, Y: torch.Tensor, V: int, d: int, mask: Callable[[int], np.ndarray] | None,
          steps: int = 80) -> TinyAttentionLM:
    """The model trained for `steps` batches of 32 windows with AdamW, from a fixed seed."""
    torch.manual_seed(0)
    model = TinyAttentionLM(V, X.shape[1], d, mask)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-2)
    batches = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(len(X), (32,), generator=batches)
        logits = model(X[idx])  # (32, T, V)
        loss = torch.nn.functional.nll_loss(torch.log_softmax(logits, -1).flatten(0, 1), Y[idx].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model
