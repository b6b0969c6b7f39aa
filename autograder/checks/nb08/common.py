"""What notebook 08's check modules share: the assignment, its decorators and the lazy reference."""
from __future__ import annotations

from functools import partial

from ...reference import lazy
from ..questions import NB06, question
from ..registry import exercise

A = "08_causality_and_masking"
check = exercise(A)
ask = partial(question, A, wording=NB06)
R = lazy(A)
