"""The checks' one face: every name a checks module, a notebook, the grader or a test takes from
``autograder.checks.core``, re-exported from the module that holds it.

- :mod:`.evidence`: recording outcomes as plain data, the evidence mode, handing evidence to the grader;
- :mod:`.compare`: cases, comparators and the messages a learner reads;
- :mod:`.hints`: recognising a known mistake;
- :mod:`.registry`: the checks by name, and how a test cell runs one;
- :mod:`.verdict`: the grader's verdict on a student's evidence against the reference's.

These are the same objects, not copies: ``core.REGISTRY``, ``core.SETTINGS`` and ``core.SINKS`` are the
registry, the settings and the sinks the checks use.
"""
from __future__ import annotations

from .compare import (Case, CheckFailure, CheckUnavailable, Comparator, Hint, NotAttempted, ShownAsMessage,
                      call_with, close, const, describe, equal, fmt, predicate, raises)
from .evidence import (EVIDENCE_MIME, MAX_ELEMENTS, MODE_ENV, SEED_ENV, SETTINGS, SINKS, Array, Outcome, Settings,
                       Unencodable, capture, configure_from_environment, decode, emit, encode, mode, seed_for)
from .hints import known_mistakes, known_variant, numbers, same_numbers
from .registry import REGISTRY, Check, Prediction, checks_module, exercise
from .verdict import Verdict, judge, verdict

__all__ = [
    "Array", "Case", "Check", "CheckFailure", "CheckUnavailable", "Comparator", "EVIDENCE_MIME", "Hint",
    "MAX_ELEMENTS", "MODE_ENV", "NotAttempted", "Outcome", "Prediction", "REGISTRY", "SEED_ENV", "SETTINGS",
    "SINKS", "Settings", "ShownAsMessage", "Unencodable", "Verdict", "call_with", "capture", "checks_module",
    "close", "configure_from_environment", "const", "decode", "describe", "emit", "encode", "equal", "exercise",
    "fmt", "judge", "known_mistakes", "known_variant", "mode", "numbers", "predicate", "raises", "same_numbers",
    "seed_for", "verdict",
]
