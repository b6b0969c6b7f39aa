"""Checks that teach: one module per notebook (``nb01`` ... ``nb10``), one shared core.

A test cell reads ``check.softmax(softmax)``; see :mod:`autograder.checks.core`.
"""
from .core import CheckFailure, NotAttempted  # noqa: F401
