"""What notebook 02's checks share: the assignment, its decorator ``check`` and the reference ``R``."""
from __future__ import annotations

from ...reference import lazy
from ..registry import exercise

A = "02_shapes_and_matmul"
check = exercise(A)
R = lazy(A)
