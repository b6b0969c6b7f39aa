"""Does every check of 07_complex_rotations_and_rope reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns
from tests.variants import variant

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
''', "only a product can"),
    Mistake("rotate_complex", "forgot_i", '''
def rotate_complex(z, theta):
    return z * np.exp(theta)
''', "two coordinates"),
    Mistake("rotate_complex", "sin_without_i", '''
def rotate_complex(z, theta):
    return z * (np.cos(theta) + np.sin(theta))
''', "the i is missing"),
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
    Mistake("rotation_matrix", "angles_axes_first", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])
''', "axes first"),
    Mistake("rotation_matrix", "no_minus_sign", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [s, c]])
''', "not a rotation"),
    Mistake("rotation_matrix", "sin_on_diagonal", '''
def rotation_matrix(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[s, -c], [c, s]])
''', "swapped"),
    Mistake("rotation_matrix", "float32_angle", '''
def rotation_matrix(theta):
    c, s = np.cos(np.float32(theta)), np.sin(np.float32(theta))
    return np.array([[c, -s], [s, c]])
''', "wrong values"),
    Mistake("rotation_angle", "cosine_only", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    return np.arccos(np.clip(M[..., 0, 0], -1, 1))
''', "lose their sign"),
    Mistake("rotation_angle", "reads_the_top_right_entry", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    return np.arctan2(M[..., 0, 1], M[..., 0, 0])
''', "wrong sign"),
    Mistake("rotation_angle", "tangent_only", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    return np.arctan(M[..., 1, 0] / M[..., 0, 0])
''', "quarter"),
    Mistake("rotation_angle", "no_impostor_test", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    return np.arctan2(M[..., 1, 0], M[..., 0, 0])
''', "mirror"),
    Mistake("rotation_angle", "lengths_tested_not_the_mirror", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    if not np.allclose(np.swapaxes(M, -1, -2) @ M, np.eye(2), atol=1e-6):
        raise ValueError("not a rotation: it changes lengths")
    return np.arctan2(M[..., 1, 0], M[..., 0, 0])
''', "turns the plane over"),
    Mistake("rotation_angle", "mirror_tested_not_the_lengths", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    if np.any(np.linalg.det(M) < 0):
        raise ValueError("not a rotation: a mirror")
    return np.arctan2(M[..., 1, 0], M[..., 0, 0])
''', "slants"),
    Mistake("rotation_angle", "one_matrix_only", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    if not np.allclose(M.T @ M, np.eye(2), atol=1e-6) or np.linalg.det(M) < 0:
        raise ValueError("not a rotation")
    return float(np.arctan2(M[1, 0], M[0, 0]))
'''),
    Mistake("rotation_angle", "loose_tolerance", '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    if not np.allclose(np.swapaxes(M, -1, -2) @ M, np.eye(2), atol=1e-2) or np.any(np.linalg.det(M) < 0):
        raise ValueError("not a rotation")
    return np.arctan2(M[..., 1, 0], M[..., 0, 0])
'''),
    Mistake("rotate_complex", "a_list_of_angles", '''
def rotate_complex(z, theta):
    return z * np.exp(1j * theta)
''', "TypeError"),
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
''', "the speed notebook 06 gives pair k / 2"),
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
''', "ac - bd"),
    Mistake("pair_score", "imaginary_part", '''
def pair_score(q, k, m, n, omega):
    return float(np.imag(rotate_complex(q, m * omega) * np.conj(rotate_complex(k, n * omega))))
''', "cross product"),
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
''', "unturned"),
    Mistake("pair_score", "positions_swapped", '''
def pair_score(q, k, m, n, omega):
    return float(np.real(rotate_complex(q, n * omega) * np.conj(rotate_complex(k, m * omega))))
''', "each other's angles"),
    # ------------------------------------------- half_layout_permutation: the reordering to rotate-half
    Mistake("half_layout_permutation", "the_inverse_reordering", '''
def half_layout_permutation(D):
    if D % 2:
        raise ValueError("odd D")
    return np.arange(D).reshape(2, D // 2).T.ravel()  # place 2k <- k: the way back
''', "other way round"),
    Mistake("half_layout_permutation", "odds_first", '''
def half_layout_permutation(D):
    if D % 2:
        raise ValueError("odd D")
    return np.concatenate([np.arange(1, D, 2), np.arange(0, D, 2)])
''', "turns the wrong way"),
    Mistake("half_layout_permutation", "no_reordering", '''
def half_layout_permutation(D):
    if D % 2:
        raise ValueError("odd D")
    return np.arange(D)
''', "leaves the features where they are"),
    Mistake("half_layout_permutation", "no_check_for_odd_D", '''
def half_layout_permutation(D):
    return np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])
''', "should raise ValueError"),
    Mistake("half_layout_permutation", "float_indices", '''
def half_layout_permutation(D):
    if D % 2:
        raise ValueError("odd D")
    return np.concatenate([np.arange(0.0, D, 2), np.arange(1.0, D, 2)])
''', "float"),
    # ------------------------------------------- the bug hunt: the bug as given, a half-fix, other slips
    Mistake("new_token_scores", "the_bug_as_given", variant(
        A, "new_token_scores", replace=("positions=np.array([T])", "positions=np.array([T - 1])"),
        name="turned at T - 1"), "code as given"),
    Mistake("new_token_scores", "moved_to_the_start", variant(
        A, "new_token_scores", replace=("positions=np.array([T])", "positions=np.array([0])"), name="turned at 0"),
        "at position 0"),
    Mistake("new_token_scores", "half_fix_one_position_late", variant(
        A, "new_token_scores", replace=("positions=np.array([T])", "positions=np.array([T + 1])"),
        name="turned at T + 1"), "one too long"),
    Mistake("new_token_scores", "half_fix_turned_before_the_text", variant(  # the sign of the offset flipped
        A, "new_token_scores", replace=("positions=np.array([T])", "positions=np.array([-T])"),
        name="turned at -T"), "before the text"),
    Mistake("new_token_scores", "query_unturned_keys_turned_again", variant(
        A, "new_token_scores", replace=("return cached_keys @ turned", "return apply_rope(cached_keys) @ q_new"),
        name="the kept keys turned again, the query not at all"), "at the start of the text"),
    Mistake("new_token_scores", "keys_turned_a_second_time", variant(
        A, "new_token_scores", replace=("return cached_keys @ turned", "return apply_rope(cached_keys) @ turned"),
        name="the kept keys turned again"), "second time"),
    returns("predict_shifted_score", "vanishes_far_away", "0.0", "do not make the score vanish"),
    returns("predict_shifted_score", "offset_zero", '5.0, "far apart, they no longer see each other"',
            "score at offset 0"),
    returns("predict_shifted_score", "offset_reversed", "-4.6338", "offset reversed"),
    returns("predict_shifted_score", "a_string", '"the same"', "one number"),
    returns("predict_four_speeds", "none_the_offset_is_still_3", '0, "the offset is still 3"', "same extra angle"),
    returns("predict_four_speeds", "all_four", '4, "two bases, so every pair"', "under any base"),
    returns("predict_four_speeds", "only_pair_0", '1, "pair 0 turns fastest"', "two speeds each"),
    returns("predict_four_speeds", "two_pairs", '2, "the slow pairs barely move"', "Three of the four"),
    returns("predict_four_speeds", "a_float", '3.0, "three"', "one int"),
    returns("predict_four_speeds", "a_choice", '"changes", "two bases"', "one int"),
    returns("predict_storage_angle", "not_a_turn", '"ValueError", "the minus sign is in the wrong place"',
            "it is a turn"),
    returns("predict_storage_angle", "forward", '"0.7", "the same step forward"', "a turn by -0.7"),
    returns("predict_storage_angle", "a_float", '-0.7, "backwards"', "answer with one of"),
    returns("predict_half_scores", "same", '"same", "the same speeds"', "not the same pairs"),
    returns("predict_half_scores", "a_bool", 'False, "no"', "answer with one of"),
    returns("predict_half_scores", "capitalised", '"Different", "other pairs"', "answer with one of"),
    returns("predict_swapped_score", "same", '"same", "the distance is 3 both ways"', "before or after the query"),
    returns("predict_swapped_score", "capitalised", '"Different"', "answer with one of"),
    returns("predict_swapped_score", "a_bool", "False", "answer with one of"),
    returns("predict_quarter_turn", "counter_clockwise", "(-1, 2), 'like multiplying by i'", "clockwise"),
    returns("predict_quarter_turn", "half_turn", "(-2.0, -1.0)", "half a turn"),
    returns("predict_quarter_turn", "swapped_only", "(1, 2)", "mirror in the diagonal"),
    returns("predict_quarter_turn", "one_number", "-2", "tuple of 2 numbers"),
    returns("predict_equal_cells", "anti_diagonal", '"each anti-diagonal", "m + n is the distance"', "opposite directions"),
    returns("predict_equal_cells", "rows", '"each row"', "the key moves"),
    returns("predict_equal_cells", "columns", '"each column"', "the query moves"),
    returns("predict_equal_cells", "not_a_choice", '"diagonals"', "answer with one of"),
    Mistake("diagonal_spread", "np_diagonal_offset_counts_n_minus_m", '''
def diagonal_spread(table):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("not square")
    T = len(table)
    return np.array([np.ptp(np.diagonal(table, o)) for o in range(-(T - 1), T)])
''', "reverse order"),
    Mistake("diagonal_spread", "anti_diagonals", '''
def diagonal_spread(table):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("not square")
    T = len(table)
    m, n = np.indices(table.shape)
    return np.array([np.ptp(table[m + n == s]) for s in range(2 * T - 1)])
''', "anti-diagonals"),
    Mistake("diagonal_spread", "standard_deviation", '''
def diagonal_spread(table):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("not square")
    T = len(table)
    m, n = np.indices(table.shape)
    return np.array([np.std(table[m - n == o]) for o in range(-(T - 1), T)])
''', "standard deviations"),
    Mistake("diagonal_spread", "lower_half_only", '''
def diagonal_spread(table):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("not square")
    return np.array([np.ptp(np.diagonal(table, -o)) for o in range(len(table))])
''', "2T - 1 diagonals"),
    Mistake("diagonal_spread", "means", '''
def diagonal_spread(table):
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError("not square")
    return np.array([np.mean(np.diagonal(table, -o)) for o in range(-(len(table) - 1), len(table))])
''', "means"),
    Mistake("diagonal_spread", "no_validation", '''
def diagonal_spread(table):
    T = len(table)
    return np.array([np.ptp(np.diagonal(table, -o)) for o in range(-(T - 1), T)])
''', "should raise ValueError"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
]

ALTERNATIVES = {
    "half_layout_permutation": '''
def half_layout_permutation(D):
    if D % 2 != 0:
        raise ValueError(f"{D} features cannot form pairs")
    return np.arange(D).reshape(D // 2, 2).T.reshape(-1)  # rows are pairs; read the first members, then the second
''',
    "new_token_scores": '''
def new_token_scores(q_new, cached_keys):
    T, D = cached_keys.shape
    angles = T * 10000.0 ** (-np.arange(0, D, 2) / D)  # (D/2,): the new token sits at position T
    z = (q_new[0::2] + 1j * q_new[1::2]) * np.exp(1j * angles)  # the query's pairs, turned
    keys = cached_keys[:, 0::2] + 1j * cached_keys[:, 1::2]  # (T, D/2)
    return np.real(keys * np.conj(z)).sum(axis=-1)  # a dot product of pairs is Re(k conj(q))
''',
    "pair_score": '''
def pair_score(q, k, m, n, omega):
    a, b = rotate_complex(q, m * omega), rotate_complex(k, n * omega)
    return float(np.real(np.conj(a) * b))
''',
    "predict_shifted_score": answer("predict_shifted_score", '5.341161, "only m - n counts"'),
    "predict_four_speeds": answer("predict_four_speeds", 'len(range(1, 4)), "base ** 0 is 1: pair 0 alone keeps one speed"'),
    "predict_storage_angle": answer("predict_storage_angle", 'f"{-0.7}", "(1, 0) goes below the axis"'),
    "predict_half_scores": answer("predict_half_scores", '"different"'),
    "predict_swapped_score": answer("predict_swapped_score", '"different"'),
    "predict_quarter_turn": answer("predict_quarter_turn", "(round(np.cos(np.pi / 2) * 2 + 1, 2), -2), 'clockwise'"),
    "predict_equal_cells": answer("predict_equal_cells", '("each " + "diagonal", "offset only")'),
    "diagonal_spread": '''
def diagonal_spread(table):
    if np.ndim(table) != 2 or len(table) != len(table[0]):
        raise ValueError("a square table please")
    T = len(table)
    out = []
    for offset in range(-(T - 1), T):
        cells = [float(table[m][m - offset]) for m in range(T) if 0 <= m - offset < T]
        out.append(max(cells) - min(cells))
    return np.array(out)
''',
    "rotate_complex": '''
def rotate_complex(z, theta):
    return z * np.exp(1j * np.asarray(theta))  # Euler's name for the point at angle theta
''',
    "rotation_matrix": '''
def rotation_matrix(theta):
    z = np.exp(1j * np.asarray(theta, dtype=float))[..., None, None]  # (..., 1, 1)
    return z.real * np.eye(2) + z.imag * np.array([[0.0, -1.0], [1.0, 0.0]])  # cos I + sin J
''',
    "rotation_angle": '''
def rotation_angle(M):
    M = np.asarray(M, dtype=float)
    for index in np.ndindex(M.shape[:-2]):
        m = M[index]
        (a, b), (c, d) = m
        if not (abs(a * a + c * c - 1) < 1e-6 and abs(b * b + d * d - 1) < 1e-6 and abs(a * b + c * d) < 1e-6):
            raise ValueError(f"matrix {index} is not a rotation: its columns are not perpendicular unit vectors")
        if a * d - b * c < 0:
            raise ValueError(f"matrix {index} is not a rotation: it is a mirror")
    return np.angle(M[..., 0, 0] + 1j * M[..., 1, 0])  # the first column read as a complex number
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


# ------------------------------------------- the bug hunt hunts: symptoms, one message per stage, no fix in them

def test_each_stage_of_the_hunt_gets_its_own_message_and_none_dictates_the_fix():
    from autograder.checks import nb07

    messages = [nb07.HUNT_MESSAGES[v] for v in nb07.HUNT_VARIANTS]
    assert len(set(messages)) == len(messages) == 6
    for message in messages:  # the fix is a position argument of T = len(cached_keys): never spelled out
        for fix in ("positions=", "len(cached_keys)", "position T", "at T ", "apply_rope("):
            assert fix not in message, (fix, message)


def test_the_hunt_variants_are_told_apart_on_the_visible_cases():
    """Each stage must be a different array on the checks' inputs, or two stages would share one message."""
    import numpy as np
    from autograder.checks import nb07

    rng = np.random.default_rng(0)
    q_new, keys = rng.normal(size=8), nb07._rope(rng.normal(size=(5, 8)))
    outs = {v: nb07._hunt(q_new, keys, v) for v in (None, *nb07.HUNT_VARIANTS)}
    names = list(outs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not np.allclose(outs[a], outs[b]), (a, b)
