"""Evidence payloads made in this process, real or forged, for the tests that judge them without a notebook.

A check called in evidence mode records what the student's function returned (tests/harness.py's
``evidence_mode``); these helpers give that record, and the cell output that carries it, so the
judge's and the verdict's tests can build any shape of evidence by hand.
"""
from __future__ import annotations

import copy

from autograder.checks import core
from tests.harness import evidence_mode


def recorded(check: core.Check, fn, *, hidden: bool = False) -> list[dict]:
    """The payloads ``check`` emits for ``fn`` (one per call), as the grader would read them."""
    sink: list = []
    with evidence_mode(sink):
        check(fn, hidden=hidden)
    return sink


def payload(check: core.Check, fn, *, hidden: bool = False) -> dict:
    """The single payload of one check call."""
    (one,) = recorded(check, fn, hidden=hidden)
    return one


def display(data) -> dict:
    """A cell output that displays ``data`` as evidence (what ``core.emit`` shows in a kernel)."""
    return {"output_type": "display_data", "data": {core.EVIDENCE_MIME: copy.deepcopy(data)}, "metadata": {}}


def right_encode(tokens, vocab, unk="<unk>"):
    return [vocab[t] if t in vocab else vocab[unk] for t in tokens]


def wrong_encode(tokens, vocab, unk="<unk>"):  # the off-by-one of tests/builders.py's WRONG_ENCODE
    return [vocab.get(t, 0) + 1 for t in tokens]


def stub_encode(tokens, vocab, unk="<unk>"):
    raise NotImplementedError()


def right_decode(ids, vocab):
    inverse = {i: t for t, i in vocab.items()}
    return [inverse[i] for i in ids]
