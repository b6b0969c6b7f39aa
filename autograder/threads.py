"""One thread for NumPy's BLAS in a notebook's kernel.

NumPy's wheels bring OpenBLAS, which starts a thread per core for each matrix product. On two cores those
threads wait for each other and for everything else that runs: with other programs busy, notebook 05's
training loop with a one-hot ``embedding_backward`` took 14 to 35 s with two threads, under 2 s with one.
The usual cure, ``OPENBLAS_NUM_THREADS=1``, is read only when OpenBLAS loads, and in a Jupyter kernel NumPy
may already be loaded; so this asks the loaded library itself, through ``ctypes``, as threadpoolctl does
(which the course does not install). Another BLAS (Apple's Accelerate, MKL) is left as it is.
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

# OpenBLAS's own names for the calls: NumPy 2's wheels carry scipy-openblas (64-bit ints, "scipy_" prefix),
# NumPy 1.2x's carried openblas64_, and a system OpenBLAS has the plain names.
PREFIXES = ("scipy_openblas", "openblas")
SUFFIXES = ("64_", "")


def openblas_libraries() -> list[Path]:
    """The OpenBLAS libraries this process has loaded (NumPy's, at least), each once; none where a sandbox
    hides the places they are listed."""
    found: list[Path] = []
    maps = Path("/proc/self/maps")  # Linux: every loaded file, whatever folder it came from
    numpy_dir = Path(np.__file__).parent  # the wheels' bundled copy: numpy.libs (Linux, Windows), .dylibs (macOS)
    try:
        lines = maps.read_text().splitlines() if maps.exists() else []
        found += [Path(line.split(maxsplit=5)[-1]) for line in lines if "openblas" in line.rsplit("/", 1)[-1]]
        for folder in (numpy_dir.parent / "numpy.libs", numpy_dir / ".dylibs"):
            found += sorted(folder.glob("*openblas*")) if folder.is_dir() else []
    except OSError:
        pass  # what was found so far is all there is to limit
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _call(path: Path, verb: str) -> Callable | None:
    """OpenBLAS's ``set_num_threads`` or ``get_num_threads`` in the loaded library at ``path``, or None."""
    try:  # RTLD_NOLOAD: only a library already loaded, never a second copy of it
        lib = ctypes.CDLL(str(path), mode=getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0))
    except OSError:
        return None
    for prefix in PREFIXES:
        for suffix in SUFFIXES:
            func = getattr(lib, f"{prefix}_{verb}_num_threads{suffix}", None)
            if func is not None:
                return func
    return None


def numpy_threads() -> dict[Path, int]:
    """How many threads each loaded OpenBLAS uses for one product."""
    counts = {}
    for path in openblas_libraries():
        if (get := _call(path, "get")) is not None:
            get.restype = ctypes.c_int
            counts[path] = int(get())
    return counts


def limit_numpy_threads(n: int = 1) -> list[Path]:
    """Let NumPy's OpenBLAS use ``n`` threads from now on; returns the libraries changed. Never raises for
    want of a library: a notebook's set-up cell calls it, and a slower product is no reason to stop."""
    changed = []
    for path in openblas_libraries():
        if (set_ := _call(path, "set")) is not None:
            set_.argtypes, set_.restype = [ctypes.c_int], None  # int, also for the 64-bit-int builds
            set_(n)
            changed.append(path)
    return changed
