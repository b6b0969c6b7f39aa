"""Can an answer that is not right get past a comparator, or a right one be refused?

The comparators of :mod:`autograder.checks.core` (``close``, ``equal``, ``predicate`` and what every
comparator does first: errors, the stub, None, unreadable values, hints) are called here directly, on
values passed through ``encode`` as the grader's evidence is. Each wrong answer is a near miss of a
right one: a value just outside the tolerance, a transposed array, an int for a float, True for 1.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from autograder.checks import core
from autograder.checks.core import close, equal, predicate


def outcome(value=None, raises: type[BaseException] | None = None) -> core.Outcome:
    if raises is not None:
        def boom():
            raise raises("the message")
        return core.capture(boom)
    return core.capture(lambda: value)


def verdict(comparator, got, want, *, hints=()) -> str | None:
    """None when ``got`` passes against ``want``, else the failure's message."""
    got = got if isinstance(got, core.Outcome) else outcome(got)
    want = want if isinstance(want, core.Outcome) else outcome(want)
    case = core.Case("case", lambda fn: None, lambda: None, comparator, hints)
    try:
        comparator(got, want, case)
    except core.CheckFailure as failure:
        assert str(failure).startswith("case: "), "the case's label comes first"
        return str(failure)
    return None


# --------------------------------------------------------------------------- close: tolerance

@pytest.mark.parametrize("got, want", [
    (1.0 + 5e-7, 1.0),  # within 1e-6 relative
    (1000.0 + 5e-4, 1000.0),
    (5e-9, 0.0),  # within 1e-8 absolute
    (np.float32(0.5), 0.5),
    (np.array([1.0, 2.0 + 1e-7]), np.array([1.0, 2.0])),
    (np.array([np.nan, 1.0]), np.array([np.nan, 1.0])),  # nan where nan is due
    (np.array([1, 2]), np.array([1.0, 2.0])),  # integers equal to the floats due
    (3, 3.0),
    ((1.0, np.array([2.0])), (1.0, np.array([2.0]))),
    ([1.0, 2.0], np.array([1.0, 2.0])),
    (1 + 2j, 1 + 2j),
])
def test_close_accepts_what_is_equal_up_to_its_default_tolerance(got, want):
    assert verdict(close(), got, want) is None


@pytest.mark.parametrize("got, want, phrase", [
    (1.0 + 3e-6, 1.0, "expected 1, got 1"),  # 3e-6 relative: outside 1e-6
    (1.0 + 1e-3, 1.0, "expected 1, got 1.001"),
    (1000.0 + 5e-3, 1000.0, "expected 1000"),
    (3e-8, 0.0, "expected 0, got 3e-08"),  # outside 1e-8 absolute
    (np.array([1.0, 2.0 + 1e-4, 3.0]), np.array([1.0, 2.0, 3.0]), "1 of 3 differ, first at position 1"),
    (np.float16(1 / 3), 1 / 3, "expected 0.333333"),
    (np.array([1 / 3 + 1e-4, 1.0]), np.array([1 / 3, 1.0]), "first at position 0 (expected 0.333333, got 0.333433)"),
])
def test_close_refuses_a_near_miss_outside_its_default_tolerance(got, want, phrase):
    message = verdict(close(), got, want)
    assert message is not None and phrase in message, message


def test_a_given_tolerance_is_used_instead_of_the_default():
    assert verdict(close(atol=1e-3, rtol=0), 1.0005, 1.0) is None
    assert verdict(close(atol=1e-3, rtol=0), 1.002, 1.0) is not None
    assert verdict(close(atol=0, rtol=1e-2), 101.0, 100.0) is None
    assert verdict(close(atol=0, rtol=1e-2), 102.0, 100.0) is not None


# --------------------------------------------------------------------------- close: shape, type, kind

def test_close_refuses_a_wrong_shape_and_says_which():
    message = verdict(close(), np.zeros((2, 3)), np.zeros((3, 2)))
    assert "wrong shape: expected (3, 2), got (2, 3)" in message and "transposed" in message
    message = verdict(close(), np.zeros((1, 6)), np.zeros((2, 3)))
    assert "Same number of elements" in message and "transposed" not in message
    message = verdict(close(), np.zeros(4), np.zeros(3))
    assert message.endswith("wrong shape: expected (3,), got (4,).")
    assert "wrong shape" in verdict(close(), np.zeros((3, 2)), np.zeros(3))


def test_close_refuses_a_value_that_is_not_a_number():
    assert "expected a float, got a str ('1.0')" in verdict(close(), "1.0", 1.0)
    assert verdict(close(), None, np.zeros(2)) == "case: returned None. Did you forget the `return` statement?"
    assert verdict(close(), {"a": 1.0}, 1.0) is not None
    assert verdict(close(), [], np.zeros(0)) is not None


def test_close_refuses_booleans_for_numbers_but_takes_booleans_for_booleans():
    assert "booleans" in verdict(close(), np.array([True, False]), np.array([1.0, 0.0]))
    assert verdict(close(), True, 1.0) is not None
    assert verdict(close(), np.array([True, False]), np.array([True, False])) is None


def test_close_refuses_integers_where_fractions_are_due():
    message = verdict(close(), np.array([0, 1]), np.array([0.5, 1.0]))
    assert "got integers" in message and "integer division" in message


def test_close_with_a_dtype_refuses_other_kinds():
    assert "expected floats, got dtype int64" in verdict(close(dtype="f"), np.array([1, 2]), np.array([1.0, 2.0]))
    assert verdict(close(dtype="f"), np.array([1.0, 2.0], dtype=np.float32), np.array([1.0, 2.0])) is None
    assert "expected integers" in verdict(close(dtype="iu"), np.array([1.0]), np.array([1]))
    assert "expected x" in verdict(close(dtype="x"), np.array([1.0]), np.array([1.0]))


def test_close_with_kind_tensor_refuses_an_array():
    want = torch.tensor([1.0, 2.0], dtype=torch.float64)
    assert "expected a torch tensor, got an array" in verdict(close(kind="tensor"), want.numpy(), want)
    assert verdict(close(kind="tensor"), want.clone(), want) is None
    assert verdict(close(), want.numpy(), want) is None, "without kind=, an array is as good as a tensor"


def test_close_refuses_nan_or_inf_where_a_number_is_due():
    message = verdict(close(), np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    assert "got nan at position 1 where 2 was expected" in message and "overflow" in message
    assert "got inf at the result" in verdict(close(), np.inf, 2.0)
    assert verdict(close(), np.array([[1.0, np.inf]]), np.array([[1.0, 1.0]])).count("row 0, column 1") == 1


def test_close_refuses_complex_for_real_and_real_for_complex():
    assert verdict(close(), 1 + 1j, 1.0) is not None
    assert verdict(close(), 1.0, 1 + 1j) is not None
    assert verdict(close(), 1 + 0j, 1.0) is None, "a complex number equal to the real one due"


def test_close_compares_tuples_item_by_item():
    assert "expected 2 values (a tuple)" in verdict(close(), (1.0,), (1.0, 2.0))
    assert "expected 2 values (a list)" in verdict(close(), 1.0, [1.0, 2.0])
    message = verdict(close(), (1.0, 3.0), (1.0, 2.0))
    assert message.startswith("case: item 1 of the result: expected 2, got 3")


def test_close_names_the_first_wrong_entry_and_the_likely_cause():
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    message = verdict(close(), want.T, want)
    assert "2 of 4 differ, first at row 0, column 1 (expected 2, got 3)" in message
    assert "Row 0: expected [1., 2.], got [1., 3.]" in message and "transposed" in message
    assert "sign flipped" in verdict(close(), -want, want)
    assert "sign flipped" in verdict(close(), -np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    message = verdict(close(), np.array([[[1.0, 5.0]]]), np.array([[[1.0, 2.0]]]))
    assert "index [0, 0, 1]" in message and "Expected [" not in message, "the whole array only when 1-D"
    message = verdict(close(), np.array([1.0, 5.0]), np.array([1.0, 2.0]))
    assert "Expected [1., 2.], got [1., 5.]" in message and "sign" not in message


def test_close_with_none_due_passes_none_and_names_anything_else():
    """A function that only changes its input returns None: there is no tolerance to apply (this raised
    AttributeError from inside the check instead of a failure a learner can read)."""
    assert verdict(close(), None, None) is None
    assert verdict(close(), 1.5, None) == "case: expected no value (None), got a float (1.5)."
    assert verdict(close(), np.zeros(2), None) == ("case: expected no value (None), got an array of shape (2,) "
                                                   "([0., 0.]).")
    assert verdict(close(), (None, 1.0 + 1e-9), (None, 1.0)) is None, "the tolerance still applies to the numbers"


def test_a_learners_check_expecting_none_fails_with_a_message():
    case = core.Case("shuffle_in_place(x)", core.call_with([3, 1, 2]), core.const(None))

    def run(fn):
        case.compare(core.capture(lambda: case.call(fn)), core.capture(case.want), case)

    with pytest.raises(core.CheckFailure) as raised:
        run(lambda x: sorted(x))
    assert str(raised.value) == "shuffle_in_place(x): expected no value (None), got a list ([1, 2, 3])."
    run(lambda x: x.sort())  # returns None, as due: passes


def test_close_with_text_or_a_record_due_compares_it_exactly():
    assert verdict(close(), "abc", "abc") is None
    assert verdict(close(), "abd", "abc") == "case: expected 'abc', got 'abd'."
    assert verdict(close(), ("a", 1.0 + 1e-9), ("a", 1.0)) is None
    assert verdict(close(), {"k": 1}, {"k": 2}) == "case: 'k' maps to 1, expected 2."


# --------------------------------------------------------------------------- close: each message, word for word

DEFAULT = "atol 1e-08 + rtol 1e-06 × |expected| allows"  # close()'s tolerances, as a failure states them


@pytest.mark.parametrize("comparator, got, want, message", [
    (close(), (1.0,), (1.0, 2.0), "expected 2 values (a tuple), got a tuple."),
    (close(), 1.0, (1.0, 2.0), "expected 2 values (a tuple), got a float."),
    (close(), np.array([True, False]), np.array([1.0, 0.0]), "expected numbers, got booleans [ True, False]."),
    (close(dtype="b"), np.array([1.0]), np.array([1.0]), "expected booleans, got dtype float64."),
    (close(dtype="c"), np.array([1.0]), np.array([1.0]), "expected complex numbers, got dtype float64."),
    (close(), np.zeros((2, 3)), np.zeros((3, 2)),
     "wrong shape: expected (3, 2), got (2, 3). The axes look swapped: is something transposed?"),
    (close(), np.zeros((1, 6)), np.zeros((2, 3)),
     "wrong shape: expected (2, 3), got (1, 6). Same number of elements: check the order of a reshape or transpose."),
    (close(), np.array([0, 1]), np.array([0.5, 1.0]),
     "got integers [0, 1] where [0.5, 1. ] was expected: an integer division or an integer dtype?"),
    (close(), np.array([1.0, 2.0]), np.array([1 + 1j, 2 + 0j]), "expected [1.+1.j, 2.+0.j], got [1., 2.]."),
    (close(), np.array([1 + 1j, 2 + 0j]), np.array([1.0, 2.0]), "expected [1., 2.], got [1.+1.j, 2.+0.j]."),
    (close(), 1 / 3 + 1e-4, 1 / 3, f"expected 0.333333, got 0.333433 (a difference of 0.0001; {DEFAULT} 3.433e-07)."),
    (close(), np.array([[1.0, 5.0, 3.0]]), np.array([[1.0, 2.0, 3.0]]),  # one row: no row to point at
     "wrong values: 1 of 3 differ, first at row 0, column 1 (expected 2, got 5); the largest difference is 3, at "
     f"row 0, column 1 ({DEFAULT} 2.01e-06 there)."),
    (close(), np.array([[1.0], [5.0], [3.0]]), np.array([[1.0], [2.0], [3.0]]),
     "wrong values: 1 of 3 differ, first at row 1, column 0 (expected 2, got 5); the largest difference is 3, at "
     f"row 1, column 0 ({DEFAULT} 2.01e-06 there). Row 1: expected [2.], got [5.]."),
    (close(), np.arange(12.0) + (np.arange(12) == 11), np.arange(12.0),  # 12 entries: all are shown
     "wrong values: 1 of 12 differ, first at position 11 (expected 11, got 12); the largest difference is 1, at "
     f"position 11 ({DEFAULT} 1.101e-05 there). Expected [ 0.,  1.,  2.,  3.,  "
     "4.,  5.,  6.,  7.,  8.,  9., 10., 11.], got [ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 12.]."),
    (close(), np.arange(13.0) + (np.arange(13) == 12), np.arange(13.0),  # 13: too many to show
     "wrong values: 1 of 13 differ, first at position 12 (expected 12, got 13); the largest difference is 1, at "
     f"position 12 ({DEFAULT} 1.201e-05 there)."),
])
def test_close_says_exactly_what_is_wrong(comparator, got, want, message):
    assert verdict(comparator, got, want) == f"case: {message}"


def test_a_numeric_failure_shows_the_tolerances_and_the_largest_difference():
    """An instructor reads whether a failure was a near miss: the largest difference, where it is, and what the
    tolerance allowed there. The expectations are worked by hand, not by the comparator."""
    near = close(atol=1e-5, rtol=1e-3)
    got = np.array([[1.0, 2.01, 3.0], [4.0, 5.0, 6.5]])  # off by 0.01 at (0, 1), by 0.5 at (1, 2)
    want = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert verdict(near, got, want) == (
        "case: wrong values: 2 of 6 differ, first at row 0, column 1 (expected 2, got 2.01); the largest difference "
        "is 0.5, at row 1, column 2 (atol 1e-05 + rtol 0.001 × |expected| allows 0.00601 there). "
        "Row 0: expected [1., 2., 3.], got [1.  , 2.01, 3.  ].")
    # a near miss: 2.5e-4 off where 1e-5 + 1e-3 * 0.1 = 1.1e-4 is allowed
    assert verdict(near, 0.10025, 0.1) == ("case: expected 0.1, got 0.10025 (a difference of 0.00025; atol 1e-05 "
                                          "+ rtol 0.001 × |expected| allows 0.00011).")
    # unsigned integers: 1 - 3 is a difference of 2, not a wrap-around to 254
    assert "the largest difference is 2, at position 0" in verdict(
        close(), np.array([1, 2], np.uint8), np.array([3, 2], np.uint8))


def test_the_largest_difference_is_among_the_values_that_fail_in_complex_too_and_warns_of_nothing():
    """Where the message points: the largest difference among the values outside the tolerance (not a larger
    one the relative tolerance forgives), complex differences measured in the complex plane, an infinite
    difference before a nan one, and no floating-point warning printed into the learner's output."""
    forgiving = close(atol=1e-5, rtol=1e-3)  # 1000 -> 1000.5 is within 1.00001; 1 -> 1.1 is not
    assert "the largest difference is 0.1, at position 1" in verdict(
        forgiving, np.array([1000.5, 1.1]), np.array([1000.0, 1.0]))
    assert "the largest difference is 1, at position 0" in verdict(  # |(1+2j) - (1+1j)| = 1, not 0
        close(), np.array([1 + 2j, 0j]), np.array([1 + 1j, 0j]))
    assert "the largest difference is 5, at position 0" in verdict(  # |3+4j| = 5: both parts count
        close(), np.array([3 + 4j, 0j]), np.array([0j, 0j]))
    # inf - (-inf) is inf at position 0; 1 - nan is nan at position 1: both as bad, the first is named
    assert "the largest difference is inf, at position 0" in verdict(
        close(), np.array([np.inf, 1.0]), np.array([-np.inf, np.nan]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf where both are inf: no "invalid value" warning escapes
        assert "the largest difference is 1, at position 1" in verdict(
            close(), np.array([np.inf, 1.0]), np.array([np.inf, 2.0]))


TRANSPOSED = " It equals the expected result transposed: are the last two axes swapped?"
FLIPPED = " It is the expected result with the sign flipped."
SQUARE = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("got, want, message", [
    (SQUARE.T, SQUARE, "wrong values: 2 of 4 differ, first at row 0, column 1 (expected 2, got 3); the largest "
                       f"difference is 1, at row 0, column 1 ({DEFAULT} 2.01e-06 there). "
                       "Row 0: expected [1., 2.], got [1., 3.]." + TRANSPOSED),
    (-SQUARE, SQUARE, "wrong values: 4 of 4 differ, first at row 0, column 0 (expected 1, got -1); the largest "
                      f"difference is 8, at row 1, column 1 ({DEFAULT} 4.01e-06 there). "
                      "Row 0: expected [1., 2.], got [-1., -2.]." + FLIPPED),
    (np.swapaxes(np.arange(18.0).reshape(2, 3, 3), -1, -2), np.arange(18.0).reshape(2, 3, 3),
     "wrong values: 12 of 18 differ, first at index [0, 0, 1] (expected 1, got 3); the largest difference is 4, "
     f"at index [0, 0, 2] ({DEFAULT} 2.01e-06 there)." + TRANSPOSED),
    (np.swapaxes(np.arange(24.0).reshape(2, 3, 2, 2), -1, -2), np.arange(24.0).reshape(2, 3, 2, 2),
     "wrong values: 12 of 24 differ, first at index [0, 0, 0, 1] (expected 1, got 2); the largest difference is "
     f"1, at index [0, 0, 0, 1] ({DEFAULT} 1.01e-06 there)." + TRANSPOSED),
    (np.array([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),  # not square
     "wrong values: 1 of 6 differ, first at row 0, column 1 (expected 2, got 7); the largest difference is 5, at "
     f"row 0, column 1 ({DEFAULT} 2.01e-06 there). Row 0: expected [1., 2., 3.], "
     "got [1., 7., 3.]."),
])
def test_close_names_a_transposed_or_flipped_answer_in_any_number_of_dimensions(got, want, message):
    assert verdict(close(), got, want) == f"case: {message}"


def test_an_answer_is_called_transposed_or_flipped_only_within_the_comparators_tolerance():
    loose = close(atol=1e-3, rtol=0)
    assert verdict(loose, SQUARE.T + 5e-4, SQUARE).endswith(TRANSPOSED)
    assert verdict(loose, -SQUARE + 5e-4, SQUARE).endswith(FLIPPED)
    off = 1 + 5e-6  # outside close()'s relative 1e-6 (and inside NumPy's default 1e-5)
    assert not verdict(close(), SQUARE.T * off, SQUARE).endswith(TRANSPOSED)
    assert not verdict(close(), -SQUARE * off, SQUARE).endswith(FLIPPED)


def test_close_compares_complex_with_real_at_its_own_tolerance():
    assert verdict(close(atol=1e-3, rtol=0), 1.0 + 5e-4j, 1.0) is None
    assert verdict(close(atol=0, rtol=1e-3), 1000.0 + 0.5j, 1000.0) is None
    assert verdict(close(atol=1e-3, rtol=0), 1.0 + 2e-3j, 1.0) == "case: expected 1, got (1+0.002j)."


# --------------------------------------------------------------------------- equal

@pytest.mark.parametrize("got, want", [
    ([1, 2], [1, 2]), ((1, "a"), (1, "a")), ({"a": [1]}, {"a": [1]}), ("text", "text"), (None, None),
    (np.array([True, False]), np.array([True, False])), (np.int64(3), 3), ([], []),
    ((np.array([1, 2]), 3), (np.array([1, 2]), 3)), ([np.array([1, 2]), 3], [np.array([1, 2]), 3]),  # arrays inside
])
def test_equal_accepts_the_same_plain_data(got, want):
    assert verdict(equal(), got, want) is None


@pytest.mark.parametrize("got, want, phrase", [
    (1.0, 1, "expected an int 1, got a float 1"),
    (True, 1, "expected an int"),
    (1 + 0j, 1.0, "expected a float 1, got a complex (1+0j)."),  # equal in Python, not the same type of answer
    ([1, True], [1, 1], "item 1 differs"),
    ([1.0, 2], [1, 2], "item 0 differs"),
    ((1, 2), [1, 2], "expected a list, got a tuple"),
    ([1, 2, 3], [1, 2], "expected 2 items, got 3: expected [1, 2], got [1, 2, 3]."),
    ([2, 1], [1, 2], "item 0 differs (expected 1, got 2); expected [1, 2], got [2, 1]. "
                     "The right items in the wrong order."),
    ([1, 3], [1, 2], "item 1 differs (expected 2, got 3); expected [1, 2], got [1, 3]."),
    ((1, 3), (1, 2), "item 1 differs (expected 2, got 3); expected (1, 2), got (1, 3)."),
    (np.array([1, 3]), np.array([1, 2]), "item 1 differs (expected 2, got 3); expected [1, 2], got [1, 3]."),
    ({"a": 1}, {"a": 1, "b": 2}, "missing key 'b' (expected {'a': 1, 'b': 2}, got {'a': 1})."),
    ({"a": 1, "b": 2}, {"a": 1}, "unexpected key 'b' (expected {'a': 1}, got {'a': 1, 'b': 2})."),
    ({"a": 2}, {"a": 1}, "'a' maps to 2, expected 1"),
    ({"a": 1, "b": 3}, {"a": 1, "b": 2}, "'b' maps to 3, expected 2."),  # the key that differs, not the first
    ({"a": 1.0}, {"a": 1}, "'a' maps to 1"),
    ("Text", "text", "expected 'text', got 'Text'"),
    (np.array([[1, 2]]), np.array([[1], [2]]), "wrong shape: expected (2, 1), got (1, 2)"),
    (None, [1], "returned None"),
    (1, [1], "expected a list [1], got an int 1"),
])
def test_equal_refuses_what_differs_in_value_type_or_order(got, want, phrase):
    message = verdict(equal(), got, want)
    assert message is not None and phrase in message, message


def test_equal_without_the_order_hint_says_nothing_of_order():
    message = verdict(equal(hint_order=False), [2, 1], [1, 2])
    assert message is not None and "wrong order" not in message


# --------------------------------------------------------------------------- predicate

def test_predicate_fails_with_the_tests_message_and_passes_on_none():
    seen = []

    def test(got, want):
        seen.append((got, want))
        return None if got == want else "not the same"

    assert verdict(predicate(test), 2, 2) is None
    assert verdict(predicate(test), 3, 2) == "case: not the same"
    assert seen == [(2, 2), (3, 2)], "the predicate sees the decoded values, got first"


# --------------------------------------------------------------------------- what every comparator does first

@pytest.mark.parametrize("comparator", [close(), equal(), predicate(lambda got, want: None)])
def test_an_error_where_a_value_is_due_fails(comparator):
    assert verdict(comparator, outcome(raises=ValueError), 1) == "case: raised ValueError: the message"


@pytest.mark.parametrize("comparator", [close(), equal(), predicate(lambda got, want: None)])
def test_the_stub_is_not_attempted(comparator):
    with pytest.raises(core.NotAttempted, match="still raises NotImplementedError") as raised:
        comparator(outcome(raises=NotImplementedError), outcome(1), core.Case("case", None, None, comparator))
    shown = f"NotAttempted: {raised.value}"[:100]  # what nbgrader's Validate button shows of it
    assert "replace `raise NotImplementedError()` with your code" in shown, shown


def test_not_implemented_error_is_not_a_stub_when_it_is_the_answer():
    want = outcome(raises=NotImplementedError)
    assert verdict(equal(), outcome(raises=NotImplementedError), want) is None
    assert "should raise NotImplementedError" in verdict(equal(), 1, want)


def test_an_error_that_is_due_must_be_raised():
    want = outcome(raises=ValueError)
    assert verdict(equal(), outcome(raises=ValueError), want) is None

    class Narrower(ValueError):
        pass

    assert verdict(equal(), outcome(raises=Narrower), want) is None, "a subclass of the error due is that error"
    assert "should raise ValueError, but raised TypeError" in verdict(equal(), outcome(raises=TypeError), want)
    message = verdict(close(), 1.0, want)
    assert "should raise ValueError (the message), but it returned 1" in message
    assert verdict(equal(), outcome(raises=Exception), want) is not None, "a broader error is not the one due"


def test_a_value_the_check_cannot_read_fails():
    class Anything:
        def __eq__(self, other):
            return True

    message = verdict(equal(), Anything(), 1)
    assert message == "case: returned a Anything object, which is not a value the check can read; expected an int."
    assert verdict(close(), Anything(), 1.0) is not None


def test_none_is_a_right_answer_when_none_is_due():
    assert verdict(equal(), None, None) is None
    assert verdict(equal(), 1, None) is not None


def test_a_hint_names_the_mistake_and_a_broken_hint_is_ignored():
    def broken(got, want):
        raise RuntimeError("a hint's own bug")

    with pytest.raises(core.CheckFailure) as raised:
        equal()(outcome(2), outcome(1), core.Case("case", None, None, equal(), [broken, lambda g, w: None,
                                                                               lambda g, w: "you added one"]))
    assert str(raised.value) == "you added one\ncase: expected 1, got 2."  # the likely cause first
    assert raised.value.mistake == "you added one"
    assert verdict(equal(), 2, 1, hints=[broken]) == "case: expected 1, got 2."
    assert verdict(equal(), 1, 1, hints=[lambda g, w: "never asked"]) is None, "a hint is read only on a mismatch"


def test_a_hint_is_given_the_decoded_answer_and_expected_value():
    seen = []
    verdict(close(), np.array([1.0, 3.0]), np.array([1.0, 2.0]), hints=[lambda got, want: seen.append((got, want))])
    ((got, want),) = seen
    assert (got.data.tolist(), want.data.tolist()) == ([1.0, 3.0], [1.0, 2.0])


def test_a_mismatch_without_a_hint_has_no_mistake():
    with pytest.raises(core.CheckFailure) as raised:
        equal()(outcome(2), outcome(1), core.Case("case", None, None, equal()))
    assert raised.value.mistake == ""


def test_a_comparator_must_say_how_it_compares():
    with pytest.raises(NotImplementedError):
        core.Comparator().mismatch(1, 1)


def test_a_case_left_without_a_comparator_compares_with_the_default_close():
    case = core.Case("case", lambda fn: None, lambda: 1.0)
    assert type(case.compare) is close and (case.compare.atol, case.compare.rtol) == (1e-8, 1e-6)
