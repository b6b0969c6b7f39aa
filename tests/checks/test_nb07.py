"""Does every check of 07_complex_rotations_and_rope reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns

pytestmark = pytest.mark.nb07
A = "07_complex_rotations_and_rope"

ROPE_HEAD = '''
def apply_rope(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    T, D = x.shape[-2:]
    if D % 2:
        raise ValueError("odd D")
    p = np.arange(T) if positions is None else np.asarray(positions)
'''

MISTAKES = [
    Mistake("rotate_complex", "clockwise", '''
def rotate_complex(z, theta):
    return z * np.exp(-1j * theta)
''', "clockwise"),
    Mistake("rotate_complex", "degrees", '''
def rotate_complex(z, theta):
    return z * np.exp(1j * np.deg2rad(theta))
''', "degrees"),
    Mistake("rotate_complex", "adds_instead_of_multiplying", '''
def rotate_complex(z, theta):
    return z + np.exp(1j * theta)
''', "a rotation multiplies"),
    Mistake("rotate_complex", "forgot_i", '''
def rotate_complex(z, theta):
    return z * np.exp(theta)
''', "exp(1j * theta)"),
    Mistake("rotate_complex", "sin_without_i", '''
def rotate_complex(z, theta):
    return z * (np.cos(theta) + np.sin(theta))
''', "missing the i"),
    Mistake("rotation_matrix", "transposed", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]])
''', "clockwise"),
    Mistake("rotation_matrix", "degrees", '''
def rotation_matrix(theta):
    t = np.radians(theta)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
''', "degrees"),
    Mistake("rotation_matrix", "no_minus_sign", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [s, c]])
''', "minus sign"),
    Mistake("rotation_matrix", "sin_on_diagonal", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[s, -c], [c, s]])
''', "swapped"),
    Mistake("apply_rope", "rotation_transposed", ROPE_HEAD + '''
    ang = p[:, None] * base ** (-2 * np.arange(D // 2) / D)
    out = x.copy()
    out[..., 0::2] = x[..., 0::2] * np.cos(ang) + x[..., 1::2] * np.sin(ang)
    out[..., 1::2] = -x[..., 0::2] * np.sin(ang) + x[..., 1::2] * np.cos(ang)
    return out
''', "clockwise"),
    Mistake("apply_rope", "rotate_half_layout", ROPE_HEAD + '''
    ang = p[:, None] * base ** (-2 * np.arange(D // 2) / D)
    cos = np.concatenate([np.cos(ang)] * 2, axis=-1)
    sin = np.concatenate([np.sin(ang)] * 2, axis=-1)
    x1, x2 = x[..., :D // 2], x[..., D // 2:]
    return x * cos + np.concatenate([-x2, x1], axis=-1) * sin
''', "rotate-half"),
    Mistake("apply_rope", "exponent_k_over_D", ROPE_HEAD + '''
    ang = p[:, None] * base ** (-np.arange(D // 2) / D)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * ang)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
''', "-2k / D"),
    Mistake("apply_rope", "positions_ignored", ROPE_HEAD + '''
    ang = np.arange(T)[:, None] * base ** (-2 * np.arange(D // 2) / D)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * ang)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
''', "ignores the positions argument"),
    Mistake("apply_rope", "positions_from_one", ROPE_HEAD + '''
    p = np.arange(1, T + 1) if positions is None else np.asarray(positions)
    ang = p[:, None] * base ** (-2 * np.arange(D // 2) / D)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * ang)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
''', "positions start at 0"),
    Mistake("apply_rope", "angle_in_degrees", ROPE_HEAD + '''
    ang = np.deg2rad(p[:, None] * base ** (-2 * np.arange(D // 2) / D))
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * ang)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
''', "degrees"),
    Mistake("apply_rope", "no_check_for_odd_D", '''
def apply_rope(x, positions=None, base=10000.0):
    x = np.asarray(x, dtype=float)
    T, D = x.shape[-2:]
    p = np.arange(T) if positions is None else np.asarray(positions)
    out = x.copy()
    for k in range(D // 2):
        a = p * base ** (-2 * k / D)
        out[..., 2 * k] = x[..., 2 * k] * np.cos(a) - x[..., 2 * k + 1] * np.sin(a)
        out[..., 2 * k + 1] = x[..., 2 * k] * np.sin(a) + x[..., 2 * k + 1] * np.cos(a)
    return out
''', "should raise ValueError"),
    Mistake("apply_rope", "scales_instead_of_rotating", ROPE_HEAD + '''
    ang = p[:, None] * base ** (-2 * np.arange(D // 2) / D)
    return x * np.repeat(np.cos(ang), 2, axis=-1)
''', "depend only on m - n"),
    Mistake("pair_score", "no_conjugate", '''
def pair_score(q, k, m, n, omega):
    return float(np.real(rotate_complex(q, m * omega) * rotate_complex(k, n * omega)))
''', "without the conjugate"),
    Mistake("pair_score", "imaginary_part", '''
def pair_score(q, k, m, n, omega):
    return float(np.imag(rotate_complex(q, m * omega) * np.conj(rotate_complex(k, n * omega))))
''', "imaginary part"),
    Mistake("pair_score", "length_not_dot", '''
def pair_score(q, k, m, n, omega):
    return float(abs(rotate_complex(q, m * omega) * np.conj(rotate_complex(k, n * omega))))
''', "angle between the two points is lost"),
    Mistake("pair_score", "both_at_m", '''
def pair_score(q, k, m, n, omega):
    return float(np.real(rotate_complex(q, m * omega) * np.conj(rotate_complex(k, m * omega))))
''', "the key at position n"),
    Mistake("pair_score", "no_rotation", '''
def pair_score(q, k, m, n, omega):
    return float(np.real(q * np.conj(k)))
''', "score with no rotation"),
    Mistake("pair_score", "positions_swapped", '''
def pair_score(q, k, m, n, omega):
    return float(np.real(rotate_complex(q, n * omega) * np.conj(rotate_complex(k, m * omega))))
''', "each other's angles"),
    returns("predict_shifted_score", "vanishes_far_away", "0.0", "do not make the score vanish"),
    returns("predict_shifted_score", "offset_zero", "-1.468", "score at offset 0"),
    returns("predict_shifted_score", "offset_reversed", "-1.6284", "offset reversed"),
    returns("predict_shifted_score", "a_string", '"the same"', "one number"),
    returns("predict_swapped_score", "same", '"same"', "before or after the query"),
    returns("predict_swapped_score", "capitalised", '"Different"', "answer with one of"),
    returns("predict_swapped_score", "a_bool", "False", "answer with one of"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("rotation_matrix", "float32_angle", '''
def rotation_matrix(theta):
    c, s = np.cos(np.float32(theta)), np.sin(np.float32(theta))
    return np.array([[c, -s], [s, c]])
''', "wrong values"),
]

ALTERNATIVES = {
    "pair_score": '''
def pair_score(q, k, m, n, omega):
    a, b = rotate_complex(q, m * omega), rotate_complex(k, n * omega)
    return float(np.real(np.conj(a) * b))
''',
    "predict_shifted_score": answer("predict_shifted_score", "-1.586475"),
    "predict_swapped_score": answer("predict_swapped_score", '"different"'),
    "rotate_complex": '''
def rotate_complex(z, theta):
    return z * (np.cos(theta) + 1j * np.sin(theta))
''',
    "rotation_matrix": '''
import math
def rotation_matrix(theta):
    z = complex(math.cos(theta), math.sin(theta))
    return np.array([[z.real, -z.imag], [z.imag, z.real]])
''',
    "apply_rope": '''
def apply_rope(x, positions=None, base=10000.0):
    *lead, T, D = np.shape(x)
    if D % 2 != 0:
        raise ValueError(f"odd head width {D}")
    pos = np.arange(T) if positions is None else np.asarray(positions)
    freqs = 1.0 / base ** (np.arange(0, D, 2) / D)
    z = np.asarray(x, dtype=float).reshape(*lead, T, D // 2, 2)  # (..., T, D/2, 2)
    z = z[..., 0] + 1j * z[..., 1]
    z = z * np.exp(1j * np.outer(pos, freqs))
    return np.stack([z.real, z.imag], axis=-1).reshape(*lead, T, D)  # (..., T, D/2, 2) -> (..., T, D)
''',
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here
