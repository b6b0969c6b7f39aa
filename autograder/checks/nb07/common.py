"""What notebook 07's check modules share: the assignment, its decorators, the lazy reference and R(theta)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...reference import lazy
from ..questions import NB06, question
from ..registry import exercise

A = "07_complex_rotations_and_rope"
check = exercise(A)
ask = partial(question, A, wording=NB06)
R = lazy(A)


def rotation_matrix_of(theta):
    """R(theta), one (2, 2) matrix per angle in the last two axes: (*theta.shape, 2, 2)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.moveaxis(np.array([[c, -s], [s, c]]), (0, 1), (-2, -1))
