"""Does every check of 06_sinusoids_and_positions reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.checks.bug_hunts import stub_test
from tests.harness import Mistake, answer, exercise_suite, returns

pytestmark = pytest.mark.nb06
A = "06_sinusoids_and_positions"

MISTAKES = [
    Mistake("angular_frequencies", "exponent_k_over_d", '''
def angular_frequencies(d, base=10000.0):
    return base ** (-np.arange(d // 2) / d)
''', "periods grow too slowly"),
    Mistake("angular_frequencies", "one_per_feature", '''
def angular_frequencies(d, base=10000.0):
    return base ** (-np.arange(d) / d)
''', "d / 2 values, not d"),
    Mistake("angular_frequencies", "k_from_one", '''
def angular_frequencies(d, base=10000.0):
    return base ** (-2 * np.arange(1, d // 2 + 1) / d)
''', "k starts at 0"),
    Mistake("angular_frequencies", "divides_by_d_minus_2", '''
def angular_frequencies(d, base=10000.0):
    return base ** (-2.0 * np.arange(d // 2) / (d - 2))
''', "one step past the last pair"),
    Mistake("angular_frequencies", "positive_exponent", '''
def angular_frequencies(d, base=10000.0):
    return base ** (2 * np.arange(d // 2) / d)
''', "the pairs must get slower"),
    Mistake("angular_frequencies", "integer_division_in_exponent", '''
def angular_frequencies(d, base=10000.0):
    return base ** -(2 * np.arange(d // 2) // d)
''', "integer division"),
    Mistake("sinusoidal_positions", "exponent_k_over_d", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(T)[:, None] * base ** (-np.arange(d // 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe
''', "wrong speeds"),
    Mistake("sinusoidal_positions", "blocks_not_interleaved", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(T)[:, None] * base ** (-2 * np.arange(d // 2) / d)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
''', "interleaved"),
    Mistake("sinusoidal_positions", "positions_from_one", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(1, T + 1)[:, None] * base ** (-2 * np.arange(d // 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe
''', "positions start at 0"),
    Mistake("sinusoidal_positions", "no_odd_check", '''
def sinusoidal_positions(T, d, base=10000.0):
    angles = np.arange(T)[:, None] * base ** (-2 * np.arange((d + 1) // 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)[:, : d // 2]
    return pe
''', "should raise ValueError"),
    Mistake("sinusoidal_positions", "cos_on_even_features", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(T)[:, None] * base ** (-2 * np.arange(d // 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angles), np.sin(angles)
    return pe
''', "swapped"),
    Mistake("sinusoidal_positions", "per_feature_frequency", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(T)[:, None] * base ** (-np.arange(d) / d)
    pe = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, 1::2])
    return pe
''', "share one angle"),
    Mistake("first_repeat", "exact_float_comparison", '''
def first_repeat(omegas, horizon=10_000):
    periods = np.atleast_1d(period(omegas))
    for p in range(1, horizon + 1):
        if all(p % P == 0 for P in periods):
            return p
    return None
''', "p % period == 0"),
    Mistake("first_repeat", "product_of_periods", '''
def first_repeat(omegas, horizon=10_000):
    total = float(np.prod(period(omegas)))
    return int(round(total)) if total <= horizon else None
''', "product of the periods"),
    Mistake("first_repeat", "longest_period", '''
def first_repeat(omegas, horizon=10_000):
    return int(round(float(np.max(period(omegas)))))
''', "longest period"),
    Mistake("first_repeat", "rounded_periods_lcm", '''
import math
def first_repeat(omegas, horizon=10_000):
    periods = [int(round(float(P))) for P in np.atleast_1d(period(omegas))]
    p = math.lcm(*periods)
    return p if p <= horizon else None
''', "need not be whole"),
    Mistake("first_repeat", "horizon_excluded", '''
def first_repeat(omegas, horizon=10_000):
    periods = np.atleast_1d(period(omegas))
    for p in range(1, horizon):
        turns = p / periods
        if np.allclose(turns, np.round(turns), rtol=0, atol=1e-6):
            return p
    return None
''', "horizon is included"),
    Mistake("first_repeat", "starts_at_zero", '''
def first_repeat(omegas, horizon=10_000):
    periods = np.atleast_1d(period(omegas))
    for p in range(0, horizon + 1):
        turns = p / periods
        if np.allclose(turns, np.round(turns), rtol=0, atol=1e-6):
            return p
    return None
''', "first p > 0"),
    Mistake("first_repeat", "only_first_clock", '''
def first_repeat(omegas, horizon=10_000):
    P = float(np.atleast_1d(period(omegas))[0])
    for p in range(1, horizon + 1):
        if abs(p / P - round(p / P)) < 1e-6:
            return p
    return None
''', "only the first clock"),
    returns("predict_common_period", "product_of_periods", "96", "not for the first time"),
    returns("predict_common_period", "slow_hand_only", "12", "points the other way"),
    returns("predict_common_period", "periods_add", "20", "Periods do not add"),
    returns("predict_common_period", "not_an_int", "24.0", "one int"),
    returns("predict_sine_twin", "opposite_point", "7", "opposite"),
    returns("predict_sine_twin", "mirror_below", "11", "mirror image"),
    returns("predict_sine_twin", "next_period", "13", "between 0 and 11"),  # malformed: no point, the form says why
    returns("predict_sine_twin", "a_float", "5.0", "one int"),
    returns("predict_fast_return", "the_neighbour", "1", "neighbour in the text"),
    returns("predict_fast_return", "half_a_turn", "3", "almost opposite"),
    returns("predict_fast_return", "past_the_turn", "7", "0.72 past a full turn"),
    returns("predict_fast_return", "out_of_range", "0", "between 1 and 10"),  # malformed: no point, the form says why
    returns("predict_fast_return", "a_float", "6.0", "one int"),
    returns("predict_offset_terms", "only_pe_pe", '"only PE.PE"', "sin(a) cos(b)"),
    returns("predict_offset_terms", "all_four", '"all four"', "absolute position"),
    returns("predict_offset_terms", "not_a_choice", '"the last one"', "answer with one of"),
    returns("predict_position_eight", "both", '"both"', "raises IndexError"),
    returns("predict_position_eight", "only_the_table", '"only the learned table"', "fixed number of rows"),
    returns("predict_position_eight", "neither", '"neither"', "8 or 8000"),
    returns("predict_position_eight", "not_a_choice", '"the formula"', "answer with one of"),
    returns("predict_ratio_angles", "all_of_them", "100", "between -pi/2 and pi/2"),
    returns("predict_ratio_angles", "past_a_turn_is_wrong", "25", "0.72 past a turn"),
    returns("predict_ratio_angles", "three_quarters", "75", "not a quarter of it"),
    returns("predict_ratio_angles", "none", "0", "only the negative cosines"),
    returns("predict_ratio_angles", "out_of_range", "101", "between 0 and 100"),
    returns("predict_ratio_angles", "a_float", "50.0", "one int"),
    returns("predict_offset_matrices", "mixing_keeps_it", '"M1 and M3"', "sin(a + b)"),
    returns("predict_offset_matrices", "all_three", '"all three"', "twice and the sine once"),
    returns("predict_offset_matrices", "none", '"none"', "scales sine and cosine alike"),
    returns("predict_offset_matrices", "not_a_choice", '"M1"', "answer with one of"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("sinusoidal_positions", "float32", '''
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2:
        raise ValueError(f"d must be even to pair sines with cosines, got d={d}")
    k = np.arange(d // 2, dtype=np.float32)
    angles = np.arange(T, dtype=np.float32)[:, None] * np.float32(base) ** (-2 * k / d)  # (T, d/2) in float32
    pe = np.empty((T, d), dtype=np.float32)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
''', "wrong values"),
]

MISTAKES += [
    Mistake("angular_frequencies", "no_validation", '''
def angular_frequencies(d, base=10000.0):
    return base ** (-2.0 * np.arange(d // 2) / d)
''', "should raise ValueError"),
    # ------------------------------------------ shift_positions (a bug hunt: two slips, each with its own symptom)
    Mistake("shift_positions", "the_bug_both_slips", '''
def shift_positions(pe, k, base=10000.0):
    T, d = pe.shape
    out = np.empty_like(pe)
    turn = k * angular_frequencies(d)
    angle = np.arctan(pe[:, 0::2] / pe[:, 1::2])
    out[:, 0::2], out[:, 1::2] = np.sin(angle + turn), np.cos(angle + turn)
    return out
''', "Two different things are off"),
    Mistake("shift_positions", "half_fix_angle_only", '''
def shift_positions(pe, k, base=10000.0):
    T, d = pe.shape
    out = np.empty_like(pe)
    turn = k * angular_frequencies(d)
    angle = np.arctan2(pe[:, 0::2], pe[:, 1::2])
    out[:, 0::2], out[:, 1::2] = np.sin(angle + turn), np.cos(angle + turn)
    return out
''', "Pair 0 is right in every row, but the slower pairs are turned by the wrong angle"),
    Mistake("shift_positions", "half_fix_speeds_only", '''
def shift_positions(pe, k, base=10000.0):
    T, d = pe.shape
    out = np.empty_like(pe)
    turn = k * angular_frequencies(d, base)
    angle = np.arctan(pe[:, 0::2] / pe[:, 1::2])
    out[:, 0::2], out[:, 1::2] = np.sin(angle + turn), np.cos(angle + turn)
    return out
''', "Where on the circle did the flipped pairs start"),
    Mistake("shift_positions", "turned_back", '''
def shift_positions(pe, k, base=10000.0):
    turn = k * angular_frequencies(pe.shape[1], base)
    out = np.empty_like(pe)
    angle = np.arctan2(pe[:, 0::2], pe[:, 1::2])
    out[:, 0::2], out[:, 1::2] = np.sin(angle - turn), np.cos(angle - turn)
    return out
''', "of the wrong position: these are the encodings of positions p - "),
    Mistake("shift_positions", "pair_written_back_swapped", '''
def shift_positions(pe, k, base=10000.0):
    turn = k * angular_frequencies(pe.shape[1], base)
    out = np.empty_like(pe)
    angle = np.arctan2(pe[:, 0::2], pe[:, 1::2])
    out[:, 0::2], out[:, 1::2] = np.cos(angle + turn), np.sin(angle + turn)
    return out
''', "in each other's places"),
    Mistake("shift_positions", "two_reflections_still_miss_the_speeds", '''
def shift_positions(pe, k, base=10000.0):
    turn = k * angular_frequencies(pe.shape[1])
    out = np.empty_like(pe)
    angle = np.arctan2(pe[:, 1::2], pe[:, 0::2])
    out[:, 0::2], out[:, 1::2] = np.cos(angle - turn), np.sin(angle - turn)
    return out
''', "Pair 0 is right in every row"),
    Mistake("shift_positions", "nothing_turned", '''
def shift_positions(pe, k, base=10000.0):
    return pe.copy()
''', "nothing was turned"),
    # ------------------------------------------------------------------ nearest_collision
    returns("predict_nearest_position", "the_fast_hands_near_turn", '"below 10"', "position 6, 0.289 away"),
    returns("predict_nearest_position", "within_a_hundred", '"10 to 99"', "position 19, 0.242 away"),
    returns("predict_nearest_position", "not_a_choice", '"position 1885"', "answer with one of"),
    returns("predict_wider_nearest", "like_d_4", '"a distant one"', "eight hands must be"),
    returns("predict_wider_nearest", "a_number", "1", "answer with one of"),
    returns("predict_wider_nearest", "a_position", '"position 63"', "answer with one of"),
    returns("predict_nearest_position", "a_number", "1885", "answer with one of"),
    Mistake("nearest_collision", "finds_itself", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = np.linalg.norm(pe - pe[0], axis=1)
    return int(np.argmin(distance)), float(distance.min())
''', "nearest to itself"),
    Mistake("nearest_collision", "index_into_the_slice", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = np.linalg.norm(pe[min_gap:] - pe[0], axis=1)
    return int(np.argmin(distance)), float(distance.min())
''', "min_gap too small"),
    Mistake("nearest_collision", "squared_distance", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = ((pe[min_gap:] - pe[0]) ** 2).sum(axis=1)
    return min_gap + int(np.argmin(distance)), float(distance.min())
''', "square root missing"),
    Mistake("nearest_collision", "min_gap_ignored", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = np.linalg.norm(pe[1:] - pe[0], axis=1)
    return 1 + int(np.argmin(distance)), float(distance.min())
''', "closer to position 0 than min_gap allows"),
    Mistake("nearest_collision", "argmax", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = np.linalg.norm(pe[min_gap:] - pe[0], axis=1)
    return min_gap + int(np.argmax(distance)), float(distance.max())
''', "farthest"),
    Mistake("nearest_collision", "city_block", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    distance = np.abs(pe[min_gap:] - pe[0]).sum(axis=1)
    return min_gap + int(np.argmin(distance)), float(distance.min())
''', "absolute differences"),
    Mistake("nearest_collision", "neighbour_steps", '''
def nearest_collision(pe, min_gap=1):
    pe = np.asarray(pe, dtype=float)
    if pe.ndim != 2 or not 1 <= min_gap < len(pe):
        raise ValueError("bad input")
    steps = np.linalg.norm(pe[1:] - pe[:-1], axis=1)[min_gap - 1:]
    i = int(np.argmin(steps))
    return min_gap + i, float(steps[i])
''', "the row before it"),
    Mistake("nearest_collision", "no_validation", '''
def nearest_collision(pe, min_gap=1):
    distance = np.linalg.norm(np.asarray(pe)[min_gap:] - np.asarray(pe)[0], axis=-1)
    return min_gap + int(np.argmin(distance)), float(np.min(distance))
''', "should raise ValueError"),
]

ALTERNATIVES = {
    "first_repeat": '''
def first_repeat(omegas, horizon=10_000):
    periods = [float(P) for P in np.ravel(period(omegas))]
    for p in range(1, horizon + 1):
        if all(abs(p / P - round(p / P)) < 1e-7 for P in periods):
            return p
''',
    "predict_common_period": answer("predict_common_period", "next(p for p in range(1, 100) if p % 8 == p % 12 == 0)"),
    "predict_sine_twin": answer("predict_sine_twin", "int(np.int64(5))"),
    "predict_fast_return": answer("predict_fast_return", "int(round(2 * np.pi))"),
    "predict_nearest_position": answer("predict_nearest_position", '"100 or " + "more"'),
    "predict_wider_nearest": answer("predict_wider_nearest", '"position " + str(1)'),
    "nearest_collision": '''
import math
def nearest_collision(pe, min_gap=1):
    if np.ndim(pe) != 2:
        raise ValueError("a (T, d) table please")
    T = len(pe)
    if min_gap < 1 or min_gap >= T:
        raise ValueError(f"min_gap out of range: {min_gap}")
    best, best_p = math.inf, None
    for p in range(min_gap, T):
        dist = math.sqrt(sum((float(a) - float(b)) ** 2 for a, b in zip(pe[p], pe[0])))
        if dist < best:
            best, best_p = dist, p
    return best_p, best
''',
    "predict_position_eight": answer("predict_position_eight", '"only the " + "sinusoidal one"'),
    "predict_ratio_angles": answer("predict_ratio_angles", "int(np.int64(49))"),
    "predict_offset_matrices": answer("predict_offset_matrices", '"only " + "M1"'),
    "predict_offset_terms": '''
def predict_offset_terms():
    answer = "none"
    return answer
''',
    "angular_frequencies": '''
def angular_frequencies(d, base=10000.0):
    if d <= 0 or d % 2 == 1:
        raise ValueError(f"bad width {d}")
    return np.exp(-np.log(base) * np.arange(0, d, 2) / d)
''',
    "shift_positions": '''
def shift_positions(pe, k, base=10000.0):
    T, d = pe.shape
    z = (pe[:, 1::2] + 1j * pe[:, 0::2]) * np.exp(1j * k * angular_frequencies(d, base))  # cos + i sin, turned
    return np.stack([z.imag, z.real], axis=-1).reshape(T, d)
''',
    "sinusoidal_positions": '''
import math
def sinusoidal_positions(T, d, base=10000.0):
    if d % 2 == 1:
        raise ValueError(f"odd width {d}")
    pe = np.zeros((T, d))
    for p in range(T):
        for i in range(0, d, 2):
            w = 1.0 / base ** (i / d)
            pe[p, i] = math.sin(p * w)
            pe[p, i + 1] = math.cos(p * w)
    return pe
''',
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here
globals().update(stub_test(A))  # shift_positions is a bug hunt: its released cell is the bug, proven rejected


def test_the_bug_hunt_names_a_symptom_of_its_own_for_the_bug_and_each_half_fix():
    """The released bug and each half-fix get their own first message, none states the fixed lines, and the fix
    passes (the learner sees progress as the messages change). The two slips are independent: no single change to
    the released code passes, whichever line it touches (the sign of the turn, the write-back order, the reading)."""
    import numpy as np

    from autograder.checks import nb06
    from autograder.reference import ref

    freqs = ref(A, "angular_frequencies")

    def shifted(half_circle, default_speeds, turn_sign=1, write_swapped=False, reading_swapped=False):
        def shift_positions(pe, k, base=10000.0):
            turn = turn_sign * k * (freqs(pe.shape[1]) if default_speeds else freqs(pe.shape[1], base))
            sin_p, cos_p = (pe[:, 1::2], pe[:, 0::2]) if reading_swapped else (pe[:, 0::2], pe[:, 1::2])
            angle = np.arctan(sin_p / cos_p) if half_circle else np.arctan2(sin_p, cos_p)
            out = np.empty_like(pe)
            first, second = np.sin(angle + turn), np.cos(angle + turn)
            out[:, 0::2], out[:, 1::2] = (second, first) if write_swapped else (first, second)
            return out
        return shift_positions

    attempts = {"the bug": shifted(True, True), "angle fixed": shifted(False, True),
                "speeds fixed": shifted(True, False)}
    first_lines = {}
    for name, attempt in attempts.items():
        with pytest.raises(AssertionError) as failure:
            nb06.shift_positions(attempt)
        first_lines[name] = str(failure.value).splitlines()[0]
        for fix in ("arctan2", "base)", "angular_frequencies(d, base"):
            assert fix not in str(failure.value), (name, fix)
        assert "base" not in first_lines[name], (name, "the message names the fix, not the symptom")
    assert len(set(first_lines.values())) == len(attempts), first_lines
    for one_change in (shifted(True, True, turn_sign=-1), shifted(True, True, write_swapped=True),
                       shifted(True, True, reading_swapped=True)):
        for hidden in (False, True):
            with pytest.raises(AssertionError):
                nb06.shift_positions(one_change, hidden=hidden)
    nb06.shift_positions(shifted(False, False))  # the fix passes
    nb06.shift_positions(shifted(False, False), hidden=True)
