"""The grading tests' helpers: tests/builders.py (classes of submissions, the real ``grade`` command, its record
:class:`~tests.builders.Graded`, stock nbgrader), as the fixture ``g``."""
from __future__ import annotations

import pytest

from tests import builders


@pytest.fixture(scope="session")
def g():
    """tests/builders.py, for the test modules: ``g.right_notebook()``, ``g.run_grade(...)``, ``g.FULL``."""
    return builders
