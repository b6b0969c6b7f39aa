"""Checks that teach: one module per notebook (``nb01`` ... ``nb10``; ``nb05`` and ``nb10`` are packages, one
module per group of their exercises) on a shared core.

A test cell reads ``check.softmax(softmax)``. The core, by concern: :mod:`.evidence` (what a call
returned, as data for the grader), :mod:`.compare` (cases, comparators and their messages),
:mod:`.hints` (known mistakes), :mod:`.registry` (the checks by name) and :mod:`.verdict` (the
grader's decision); :mod:`.core` re-exports them all. :mod:`.questions` holds the prediction
questions and :mod:`.models` the reference models (and their known-wrong variants) of notebooks 05,
09 and 10. :mod:`.toolkit` holds what the notebooks' modules share, and states the rules each of them
follows (no ``nbNN`` module imports another; a check's name is its exercise's grade_id; the grader
never runs a case's ``want``).
"""
from .compare import CheckFailure, NotAttempted  # noqa: F401
