"""Does a notebook's set-up cell get NumPy's matrix products down to one thread, and never fail trying?"""
import ctypes.util
from pathlib import Path

import numpy as np
import pytest

from autograder import threads

BLAS = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]


@pytest.fixture
def threads_restored():
    """The thread counts as they were before the test, put back after it."""
    before = threads.numpy_threads()
    yield before
    for count in set(before.values()):
        threads.limit_numpy_threads(count)


@pytest.mark.skipif("openblas" not in BLAS, reason=f"this NumPy uses {BLAS}, which the helper leaves alone")
def test_the_openblas_numpy_loaded_is_found_and_follows_the_limit(threads_restored):
    """NumPy is already imported here, as in a kernel that ran a cell before the set-up cell."""
    assert threads_restored, "NumPy uses OpenBLAS, yet no loaded OpenBLAS library was found"
    assert threads.limit_numpy_threads(1) == list(threads_restored)
    assert set(threads.numpy_threads().values()) == {1}
    threads.limit_numpy_threads(3)  # more than one, whatever this machine's core count: the call is obeyed
    assert set(threads.numpy_threads().values()) == {3}


def test_a_library_without_openblas_calls_or_a_missing_file_changes_nothing_and_raises_nothing(monkeypatch):
    libc = ctypes.util.find_library("c") or pytest.skip("no C library found to stand for a library without OpenBLAS")
    monkeypatch.setattr(threads, "openblas_libraries", lambda: [Path("/no/such/libopenblas.so"), Path(libc)])
    assert threads.limit_numpy_threads(1) == []
    assert threads.numpy_threads() == {}


def test_a_sandbox_that_hides_the_list_of_loaded_libraries_gets_nothing_limited_and_no_error(monkeypatch):
    class Hidden(type(Path())):
        def exists(self, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(threads, "Path", Hidden)
    assert threads.openblas_libraries() == [] and threads.limit_numpy_threads(1) == []
