"""What a check records: a call's outcome as plain data, and the evidence handed to the grader.

In the student's notebook (``mode == "local"``) a check compares here and now; under the grader
(``mode == "evidence"``) it only records what the student's code returned, through :func:`encode`,
and :func:`emit` hands that to the grader, which compares it in its own process
(:func:`autograder.checks.verdict.verdict`). Everything a comparator sees has been through
:func:`encode` and :func:`decode` first, so an object that claims to equal everything is just an
unencodable object, and the local verdict is the grader's verdict.
"""
from __future__ import annotations

import base64
import json
import math
import os
import sys
import warnings
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

EVIDENCE_MIME = "application/vnd.autograder.evidence+json"
MODE_ENV = "AUTOGRADER_MODE"  # "local" (default) or "evidence"
SEED_ENV = "AUTOGRADER_SEED"  # the grader picks one per run; hidden inputs follow it
MAX_ELEMENTS = 1_000_000  # evidence larger than this is refused, not shipped


@dataclass
class Settings:
    """How checks behave in this process, fixed before any student code runs.

    Read once from the environment when this module is imported in a kernel (the grader's cell runner
    sets them from its typed request instead, just before the notebook's cells), never again at each call: a cell that clears ``os.environ`` or changes directory cannot switch a check
    out of evidence mode or change the hidden inputs by accident.
    """

    mode: str = "local"  # "local": compare with the reference here; "evidence": record results for the grader
    seed: int = 0  # the grader's run seed; hidden inputs follow it


SETTINGS = Settings()


def configure_from_environment(environ: "dict[str, str] | None" = None) -> Settings:
    environ = os.environ if environ is None else environ
    SETTINGS.mode = "evidence" if environ.get(MODE_ENV, "local") == "evidence" else "local"
    try:
        SETTINGS.seed = int(environ.get(SEED_ENV, "0"))
    except ValueError:
        SETTINGS.seed = 0
    return SETTINGS


configure_from_environment()


def mode() -> str:
    return SETTINGS.mode


def seed_for(name: str, seed: int | None = None) -> int:
    """A stable per-check seed, shifted by the run seed (``seed``, else this process's setting)."""
    run_seed = SETTINGS.seed if seed is None else int(seed)
    return (run_seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


# --------------------------------------------------------------------------- data

def encode(value: Any, _depth: int = 0) -> Any:
    """Turn a return value into plain JSON data; anything else becomes 'unencodable'."""
    if _depth > 20:
        return {"__unencodable__": "nested too deeply"}
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):  # np.str_ and other subclasses become a plain str
        return str.__str__(value)
    if type(value) is int:
        return value if abs(value) < 2**53 else {"__bigint__": str(value)}
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) is complex:
        return {"__complex__": [encode(value.real), encode(value.imag)]}
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        return _encode_array(np.asarray(value), "scalar")
    if type(value) is np.ndarray:
        return _encode_array(value, "ndarray")
    torch = _torch()
    if torch is not None and type(value) in (torch.Tensor, torch.nn.Parameter):
        return _encode_array(value.detach().cpu().resolve_conj().numpy(), "tensor")
    if type(value) in (list, tuple):
        items = [encode(v, _depth + 1) for v in value]
        return items if type(value) is list else {"__tuple__": items}
    if type(value) is dict:
        return {"__dict__": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    return {"__unencodable__": type(value).__name__}


def _torch():
    """torch if the caller has imported it (a tensor cannot exist otherwise); never import it here."""
    return sys.modules.get("torch")


def _encode_array(a: np.ndarray, kind: str) -> Any:
    if a.dtype.kind not in "biufc":
        return {"__unencodable__": f"array of dtype {a.dtype}"}
    if a.size > MAX_ELEMENTS:
        return {"__unencodable__": f"array with {a.size} elements"}
    a = np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array 1-d
    return {"__array__": base64.b64encode(a.tobytes()).decode("ascii"),
            "dtype": a.dtype.str, "shape": list(a.shape), "kind": kind}


def decode(data: Any) -> Any:
    """The inverse of :func:`encode`; arrays and tensors come back as NumPy arrays."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__array__" in data:
        raw = base64.b64decode(data["__array__"])
        a = np.frombuffer(raw, dtype=np.dtype(data["dtype"])).reshape(data["shape"]).copy()
        return Array(a, data["kind"])
    if "__tuple__" in data:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__dict__" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["__dict__"]}
    if "__float__" in data:
        return float(data["__float__"])
    if "__bigint__" in data:
        return int(data["__bigint__"])
    if "__complex__" in data:
        re, im = (decode(v) for v in data["__complex__"])
        return complex(re, im)
    if "__unencodable__" in data:
        return Unencodable(str(data["__unencodable__"]))
    raise ValueError(f"unknown evidence record: {sorted(data)[:3]}")


def _hashable(k: Any) -> Any:
    return k if not isinstance(k, (list, Array)) else repr(k)


@dataclass(frozen=True)
class Array:
    """A decoded array, remembering whether it was a NumPy array, a scalar or a tensor."""

    data: np.ndarray
    kind: str


@dataclass(frozen=True)
class Unencodable:
    type_name: str


@dataclass
class Outcome:
    """What one call did: returned ``value`` or raised ``raised`` (class names, most specific first)."""

    value: Any = None
    raised: tuple[str, ...] = ()
    message: str = ""

    def to_json(self) -> dict:
        if self.raised:
            return {"raised": list(self.raised), "message": self.message[:500]}
        return {"value": self.value}

    @classmethod
    def from_json(cls, data: Any) -> "Outcome":
        if not isinstance(data, dict) or not ({"value", "raised"} & set(data)):
            raise ValueError("malformed outcome")
        if "raised" in data:
            raised = data["raised"]
            if not (isinstance(raised, list) and all(isinstance(r, str) for r in raised)):
                raise ValueError("malformed outcome")
            return cls(raised=tuple(raised), message=str(data.get("message", "")))
        return cls(value=data["value"])

    @property
    def decoded(self) -> Any:
        return decode(self.value)


def capture(thunk: Callable[[], Any]) -> Outcome:
    """Run one call quietly: the value decides the verdict, and under stock nbgrader a warning
    on stderr (0/0 in a correct np.where, say) would cost the whole test cell its points."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = thunk()
    except Exception as exc:  # a student's error is data, not a crash of the check
        names = tuple(c.__name__ for c in type(exc).__mro__ if c not in (object, BaseException))
        return Outcome(raised=names, message=str(exc))
    return Outcome(value=encode(value))


SINKS: list[Callable[[dict], None]] = []  # tests collect evidence here instead of displaying it


def emit(payload: dict) -> None:
    """Hand evidence to the grader as a display output with our own MIME type."""
    text = json.dumps(payload, allow_nan=False)
    if SINKS:
        SINKS[-1](json.loads(text))
        return
    try:  # imported here: the grader's own process judges evidence and never needs IPython
        from IPython.display import display
        display({EVIDENCE_MIME: json.loads(text)}, raw=True)
    except ImportError:  # pragma: no cover - checks always run under IPython when grading
        print(text)

