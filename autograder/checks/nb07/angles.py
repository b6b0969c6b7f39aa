"""Checks for rotation_angle of 07_complex_rotations_and_rope: a turn's angle read back from its matrix, and the
matrices that are not turns (a mirror, a shear, a stretch) refused."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, close, const, equal, raises
from ..hints import known_mistakes
from ..toolkit import MATCH
from .common import R, check, rotation_matrix_of as _matrix


def _angle_hint(M):
    """The usual wrong readings of a turn's angle from its matrices M (..., 2, 2)."""
    M = np.asarray(M, dtype=float)
    c, s = M[..., 0, 0], M[..., 1, 0]
    return known_mistakes(
        (lambda: np.arccos(np.clip(c, -1, 1)), "Your angles lose their sign: a turn by -theta has the same cosine "
                                               "as a turn by theta. Where does the sign of the turn show in M?"),
        (lambda: np.arctan2(M[..., 0, 1], c), "Your angles have the wrong sign: they read the turn the other way "
                                              "round. Which entry of M is the sine of the angle, and which is minus it?"),
        (lambda: np.arctan(s / c), "Right for turns of less than a quarter, wrong beyond: a turn by theta and by "
                                   "theta + pi give the same ratio of sine to cosine. Which point does the first "
                                   "column hold, and in which quadrant?"),
        (lambda: np.degrees(np.arctan2(s, c)), "Those are degrees: the angles are wanted in radians."),
        (lambda: np.arctan2(c, s), "Sine and cosine are swapped: the identity matrix should give 0, and a quarter "
                                   "turn pi / 2."),
        **MATCH,
    )


def _angle_case(label, M, want=None):
    M = np.asarray(M, dtype=float)
    return Case(label, call_with(M), want or const(np.arctan2(M[..., 1, 0], M[..., 0, 0])), close(dtype="f"),
                hints=[_angle_hint(M)])


def _impostor(label, M, what):
    return Case(label, call_with(np.asarray(M, dtype=float)), raises(f"this matrix is not a turn: {what}"), equal())


@check
def rotation_angle(hidden, rng):
    if not hidden:
        angles = np.array([2.5, -2.5, 1.0, -1.0])
        return [
            _angle_case("rotation_angle(rotation_matrix(0.7)) = 0.7", _matrix(0.7)),
            _angle_case("rotation_angle([[0, -1], [1, 0]]): a quarter turn counter-clockwise, pi / 2",
                        np.array([[0.0, -1.0], [1.0, 0.0]])),
            _angle_case("rotation_angle(rotation_matrix(np.array([2.5, -2.5, 1.0, -1.0]))): four angles back, shape (4,)",
                        _matrix(angles), const(angles)),
            _angle_case("rotation_angle([[-1, 0], [0, -1]]): a half turn, pi", np.array([[-1.0, 0.0], [0.0, -1.0]])),
            _impostor("rotation_angle([[1, 0], [0, -1]]): a mirror keeps (1, 0) and every length, but is not a turn",
                      [[1.0, 0.0], [0.0, -1.0]], "it turns the plane over (it keeps (1, 0) and sends (0, 1) to (0, -1))"),
            _impostor("rotation_angle([[1, 1], [0, 1]]): a shear keeps (1, 0) where it was, but is not a turn",
                      [[1.0, 1.0], [0.0, 1.0]], "it slants (0, 1) to (1, 1), which is longer and not at a right angle"),
            _impostor("rotation_angle([[2, 0], [0, 2]]): a stretch is not a turn", [[2.0, 0.0], [0.0, 2.0]],
                      "it doubles every length"),
        ]
    thetas = rng.uniform(-np.pi, np.pi, size=(2, 3))
    mirror = _matrix(rng.uniform(-np.pi, np.pi)) @ np.diag([1.0, -1.0])
    stack = np.stack([_matrix(0.3), mirror])
    return [
        _angle_case("rotation_angle of a (2, 3) stack of turns: shape (2, 3)", _matrix(thetas),
                    lambda: R("rotation_angle")(_matrix(thetas))),
        _angle_case("rotation_angle(rotation_matrix(5.0)): 5 - 2 pi, in (-pi, pi]", _matrix(5.0),
                    lambda: R("rotation_angle")(_matrix(5.0))),
        _impostor("rotation_angle of a turn followed by a mirror", mirror, "its determinant is -1"),
        _impostor("rotation_angle of a stack whose second matrix is a mirror", stack, "the second matrix is a mirror"),
        _impostor("rotation_angle of a turn scaled by 1.001", 1.001 * _matrix(0.4),
                  "its columns are 1.001 long, not 1"),
    ]
