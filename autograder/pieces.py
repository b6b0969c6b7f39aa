"""The learner's own earlier pieces, for the notebooks that build on them (05, 09 and 10).

A later notebook calls functions written in earlier ones. Each notebook runs in its own kernel, so the
learner's versions reach it only through their saved notebooks. :func:`use_pieces` is the one way a
set-up cell gets them. For each piece it takes, in this order:

1. the learner's own version, when their saved notebook is found and that version passes the visible
   cases of its exercise's check (every case that needs no course solution, so the verdict is the same
   on a student's machine and on ours);
2. else the course's reference, when the solutions are installed (this repository, the grader);
3. else a :class:`StandIn`: the set-up cell goes on (Run All never stops there), and the first cell that
   calls the piece stops with :class:`PieceNotReady`: the piece, its notebook, its whole check message
   and what to do. Every cell that does not call it runs.

It prints one line per piece: whose it is and why. A joint where a later notebook uses a piece beyond
what its own exercise asks (08's ``is_causal`` takes NumPy arrays; 09 and 10 test torch layers with it)
adapts there (:attr:`Piece.joint`), so a piece that passes its own check works wherever it is used. Under grading (nbgrader's ``NBGRADER_EXECUTION``, or
our grader's evidence mode) it always takes the reference, so one notebook's grade never depends on
another's. From a learner's saved notebook only the set-up, library and solution cells run (see
:func:`autograder.reference.load_cells`), never its demos or checks.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from . import paths, reference
from .checks import core, toolkit


@dataclass(frozen=True)
class Piece:
    """One earlier definition a notebook builds on."""

    assignment: str  # the notebook that defines it, e.g. "08_causality_and_masking"
    name: str
    # False for given code (a library cell) that travels with its notebook's exercises and has no check of
    # its own: it is taken from the same notebook as the exercise listed before it.
    exercise: bool = True
    # How the later notebook uses it beyond its own exercise's statement: wraps whatever version is chosen.
    joint: Callable[[Any], Any] | None = None


def _pieces(assignment: str, *names: str, exercise: bool = True,
            joint: Callable[[Any], Any] | None = None) -> tuple[Piece, ...]:
    return tuple(Piece(assignment, name, exercise, joint) for name in names)


def causal_on_tensors(is_causal: Callable) -> Callable:
    """08's exercise asks for ``is_causal(fn, x)`` on NumPy arrays; 09 and 10 test torch layers with it. At
    that joint the learner's version sees what its exercise promised: ``x`` as a NumPy array and an ``fn`` of
    NumPy arrays (the layer runs on tensors of ``x``'s dtype inside). NumPy input passes through unchanged."""

    @functools.wraps(is_causal)
    def on_tensors(fn: Callable, x: Any) -> Any:
        if not hasattr(x, "detach"):  # already NumPy: nothing to adapt
            return is_causal(fn, x)
        import numpy as np  # here: importing the pieces must not load NumPy or torch (the grader imports it)
        import torch  # here: only 09 and 10 get this far, and they have torch loaded already

        def fn_of_arrays(a: Any) -> Any:
            out = fn(torch.as_tensor(np.asarray(a), dtype=x.dtype))
            return out.detach().cpu().numpy() if hasattr(out, "detach") else np.asarray(out)

        return is_causal(fn_of_arrays, x.detach().cpu().numpy())

    return on_tensors


# Which earlier pieces each notebook's set-up cell asks for (the contract's list), in the order printed.
NEEDS: dict[str, tuple[Piece, ...]] = {
    "05_gradients_and_chain_rule": (
        _pieces("01_tokens_and_ids", "build_vocab", "encode", "decode", "embedding_lookup")
        + _pieces("04_softmax_and_probability", "cross_entropy", "sample_token")),
    "09_attention": (
        _pieces("02_shapes_and_matmul", "split_heads", "merge_heads")
        + _pieces("03_dot_and_outer_products", "score_table")
        + _pieces("04_softmax_and_probability", "softmax")
        + _pieces("07_complex_rotations_and_rope", "apply_rope")
        + _pieces("08_causality_and_masking", "masked_softmax")
        + _pieces("08_causality_and_masking", "is_causal", joint=causal_on_tensors)
        + _pieces("05_gradients_and_chain_rule", "linear_backward", "embedding_backward", "softmax_jacobian",
                  "rnn_forward")),
    "10_decoder_block": (
        _pieces("09_attention", "MultiHeadAttention", "scaled_dot_product_attention")
        + _pieces("09_attention", "apply_rope_torch", exercise=False)
        + _pieces("06_sinusoids_and_positions", "sinusoidal_positions")
        + _pieces("08_causality_and_masking", "is_causal", joint=causal_on_tensors)),
}

YOURS, COURSE, NOT_READY = "yours", "the course's", "not ready"


@dataclass(frozen=True)
class Choice:
    """Which version of one piece a notebook runs on, and why."""

    piece: Piece
    whose: str  # YOURS, COURSE, or NOT_READY (the value is a StandIn)
    why: str  # one sentence, whole
    value: Any = field(default=None, repr=False, compare=False)

    def line(self, width: int = 0) -> str:
        """``name (NN) whose: why``, the name padded to ``width`` so a notebook's lines align."""
        return f"{self.piece.name:{width}s} ({self.piece.assignment[:2]}) {self.whose}: {self.why}"


@dataclass(frozen=True)
class Pieces:
    """What :func:`use_pieces` found: one choice per piece, looked up by name (``pieces["softmax"]``)."""

    choices: tuple[Choice, ...]

    def __getitem__(self, name: str) -> Any:
        return self.choice(name).value

    def whose(self, name: str) -> str:
        """``YOURS``, ``COURSE`` or ``NOT_READY``: whose version of ``name`` this notebook runs on."""
        return self.choice(name).whose

    def choice(self, name: str) -> Choice:
        for choice in self.choices:
            if choice.piece.name == name:
                return choice
        raise KeyError(f"no earlier piece named {name!r}; the pieces here are "
                       f"{', '.join(c.piece.name for c in self.choices)}")


class PieceNotReady(core.ShownAsMessage, RuntimeError):
    """A cell called an earlier piece that is missing or fails its check (a :class:`StandIn`)."""

    def __init__(self, piece: Piece, why: str, detail: str = ""):
        self.piece = piece
        notebook = f"{piece.assignment}.ipynb"
        lines = [f"{piece.name} ({notebook}) is not ready: fix it there first, then rerun this notebook's set-up "
                 "cell.", f"Why: {why}"]
        if detail:
            lines += ["Its check says:", *("    " + line for line in detail.splitlines())]
        lines.append(f"What to do: open {notebook}, make {piece.name} pass its check cell, save the notebook, then "
                     "run this notebook's set-up cell again. Cells that do not call it run as they are.")
        super().__init__("\n".join(lines))


class StandIn:
    """Stands where a piece that is not ready would be: the set-up cell goes on, and calling it (or reading an
    attribute, as ``attn.w_q`` would) raises :class:`PieceNotReady` with the whole reason."""

    def __init__(self, piece: Piece, why: str, detail: str = ""):
        self._piece, self._why, self._detail = piece, why, detail

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        raise PieceNotReady(self._piece, self._why, self._detail)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # IPython, copy and pickle probe dunders: theirs to miss, not an error
            raise AttributeError(name)
        raise PieceNotReady(self._piece, self._why, self._detail)

    def __repr__(self) -> str:
        return f"<{self._piece.name} of {self._piece.assignment}: not ready, a stand-in>"


@dataclass(frozen=True)
class _Search:
    """How one top-level call looks for the learner's notebooks; nested loads (a learner's 09 asking for its
    own 08) inherit it, and share one cache so a notebook is run and checked once per call."""

    here: Path  # the running notebook's folder
    folder: Path | None  # the folder the learner named, looked in first
    cache: dict = field(default_factory=dict, compare=False)


def under_grading(environ: Mapping[str, str] | None = None) -> bool:
    """Is this kernel being graded? ``nbgrader autograde`` sets ``NBGRADER_EXECUTION=autograde``; our grader
    runs checks in evidence mode (``core.mode()``, fixed when the checks were imported, so a cell cannot undo
    it). ``nbgrader validate`` (the Validate button) sets it to ``validate``: that is the learner checking
    their own work, on their own pieces, in an image where the course's are not installed."""
    environ = os.environ if environ is None else environ
    return environ.get("NBGRADER_EXECUTION", "") not in ("", "validate") or core.mode() == "evidence"


def use_pieces(notebook: str, *, mine: bool = True, folder: str | Path | None = None,
               quiet: bool = False) -> Pieces:
    """The earlier pieces ``notebook`` builds on (``NEEDS[notebook]``): the learner's where found and
    passing, else the course's, else a :class:`StandIn` that says why when called. ``mine=False`` takes the
    course's for every piece where they are installed; ``folder`` is where the learner keeps their notebooks
    when not beside this one (or in nbgrader's ``../NN_slug/`` layout). Prints one line per piece unless
    ``quiet``. Never raises for the learner's sake: a set-up cell must not stop Run All."""
    if notebook not in NEEDS:
        raise ValueError(f"{notebook!r} builds on no earlier pieces; the notebooks that do are "
                         f"{', '.join(sorted(NEEDS))}")
    needs = NEEDS[notebook]
    notes: list[str] = []  # sentences about the switches, printed before the pieces' lines
    outer = reference.importing()
    if outer == reference.REFERENCE:  # the course's notebook imported as a module: it stands on the course's
        choices = tuple(_course(p, "the course's notebooks build on the course's pieces") for p in needs)
        quiet = True
    elif isinstance(outer, _Search):  # a learner's notebook imported for a later one: same search, quietly
        choices = _choose_all(needs, outer, mine=True)
        quiet = True
    else:
        if folder is not None and not Path(folder).expanduser().is_dir():
            notes.append(f"MY_NOTEBOOKS = {str(folder)!r} is not a folder here, so the set-up looks beside this "
                         "notebook instead: set MY_NOTEBOOKS to the folder of your saved notebooks, or to None.")
            folder = None
        search = _Search(Path.cwd(), Path(folder).expanduser().resolve() if folder is not None else None)
        if under_grading():
            why = "under grading every notebook runs on the course's pieces, so its grade depends on it alone"
            choices = tuple(_course(p, why) for p in needs)
        else:
            if not mine and not all(reference.available(p.assignment) for p in needs):
                notes.append("USE_MY_PIECES = False asks for the course's versions, which are not installed here, "
                             "so this notebook runs on your own pieces.")
                mine = True
            choices = _choose_all(needs, search, mine=mine)
    choices = tuple(_joined(c) for c in choices)
    if not quiet:
        for note in notes:
            print(note)
        width = max(len(c.piece.name) for c in choices)
        for choice in choices:
            print(choice.line(width))
    return Pieces(choices)


# The checks' own models find a learner's pieces with it (notebook 10's are built on 09's attention); they may
# not import this module, which imports the checks, so it is handed down to them.
toolkit.hand_down_use_pieces(use_pieces)


def _joined(choice: Choice) -> Choice:
    """The choice with its piece's joint applied (a stand-in stays as it is: calling it says why)."""
    if choice.piece.joint is None or isinstance(choice.value, StandIn):
        return choice
    return Choice(choice.piece, choice.whose, choice.why, choice.piece.joint(choice.value))


def _course(piece: Piece, why: str) -> Choice:
    if not reference.available(piece.assignment):
        return _stand_in(piece, f"{why}, and the course's are not installed here")
    return Choice(piece, COURSE, why, reference.ref(piece.assignment, piece.name))


def _stand_in(piece: Piece, why: str, detail: str = "") -> Choice:
    return Choice(piece, NOT_READY, f"{why}; a cell that calls it will say what to do", StandIn(piece, why, detail))


def _choose_all(pieces: tuple[Piece, ...], search: _Search, *, mine: bool) -> tuple[Choice, ...]:
    choices: list[Choice] = []
    for piece in pieces:
        # Given code goes with its notebook's exercises: yours only if every one of them before it is yours.
        partners = [c for c in choices if c.piece.assignment == piece.assignment and c.piece.exercise]
        if mine and not piece.exercise and any(c.whose != YOURS for c in partners):
            names = ", ".join(c.piece.name for c in partners if c.whose != YOURS)
            choices.append(_course(piece, f"given code of {piece.assignment[:2]}, taken with the course's {names}"))
        else:
            choices.append(_choose(piece, search, mine=mine))
    return tuple(choices)


def _choose(piece: Piece, search: _Search, *, mine: bool) -> Choice:
    if not mine:
        return _course(piece, "your own pieces are turned off (USE_MY_PIECES = False)")
    found = _load_learner(piece.assignment, search)
    if isinstance(found, str):  # why the learner's notebook gave nothing
        return _fallback(piece, found)
    path, module = found
    if not hasattr(module, piece.name):
        return _fallback(piece, f"your {path.name} defines no {piece.name}")
    value = getattr(module, piece.name)
    if isinstance(value, StandIn):  # given code of a learner's notebook whose own pieces were not ready
        return _fallback(piece, value._why, value._detail)
    if not piece.exercise:
        return Choice(piece, YOURS, f"from {_shown(path, search)}, given code that runs on your pieces", value)
    verdict = _verdict(piece, value, search)
    if verdict:
        return _fallback(piece, *verdict)
    return Choice(piece, YOURS, f"from {_shown(path, search)}, its check passes", value)


def _fallback(piece: Piece, why_not_yours: str, detail: str = "") -> Choice:
    if not reference.available(piece.assignment):
        return _stand_in(piece, why_not_yours, detail)
    first = detail.strip().splitlines()[0] if detail.strip() else ""  # whole: its notebook's check shows the rest
    return Choice(piece, COURSE, f"{why_not_yours}: {first}" if first else why_not_yours,
                  reference.ref(piece.assignment, piece.name))


def _candidates(assignment: str, search: _Search) -> list[Path]:
    """Where a learner keeps ``assignment``'s notebook, most explicit first."""
    name = f"{assignment}.ipynb"
    places = [search.folder / name] if search.folder is not None else []
    places += [search.here / name, search.here.parent / assignment / name]  # beside; nbgrader's fetched layout
    return places


def _load_learner(assignment: str, search: _Search) -> "tuple[Path, Any] | str":
    """(path, module) of the learner's saved notebook, or a sentence saying why there is none."""
    if assignment in search.cache:
        return search.cache[assignment]
    solutions = paths.solutions_dir().resolve()
    places = _candidates(assignment, search)
    # The course's own solutions folder holds no learner's work (an author running solutions/ sees "the course's").
    existing = [p for p in places if p.is_file() and p.resolve().parent != solutions]
    if not existing and any(p.is_file() for p in places):
        result: "tuple[Path, Any] | str" = "the notebooks here are the course's solutions, not yours"
    elif not existing:
        looked = ", ".join(_shown(p.parent, search) + "/" for p in places)
        result = f"no saved {assignment}.ipynb of yours found (looked in {looked})"
    else:
        path = existing[0]
        try:
            result = (path, reference.load_cells(path, f"autograder.pieces.learner.nb{assignment[:2]}", search))
        except core.ShownAsMessage as exc:  # e.g. a piece it calls at top level is not ready
            result = f"your {path.name} could not run: {_first_line(exc)}"
        except Exception as exc:  # the learner's notebook may hold anything
            result = f"your {path.name} could not run: {type(exc).__name__}: {_first_line(exc)}"
    search.cache[assignment] = result
    return result


def _verdict(piece: Piece, value: Any, search: _Search) -> tuple[str, str] | None:
    """None when the learner's ``value`` passes every visible case of its check that needs no course
    solution, else (why, the check's whole message). The same cases a learner's check cell shows, so no
    hidden input leaks."""
    check = getattr(core.checks_module(piece.assignment), piece.name)
    try:
        ran, failure = check.compare_visible(value)
    except Exception as exc:  # a learner's object can break a comparison in any way
        return f"your {piece.name} could not be checked", f"{type(exc).__name__}: {str(exc).strip()}"
    if isinstance(failure, core.NotAttempted):
        return (f"your {piece.name} in {piece.assignment}.ipynb is not written yet (it still raises "
                "NotImplementedError)", "")
    if failure is not None:
        return f"your {piece.name} does not pass its check yet", str(failure).strip()
    if not ran:  # a verdict on no case at all would take any object
        return f"none of {piece.name}'s checks can run without the course's solutions", ""
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _shown(path: Path, search: _Search) -> str:
    """A path as the learner would type it from the running notebook's folder (stable across machines)."""
    try:
        return os.path.relpath(path, search.here)
    except ValueError:  # another drive on Windows
        return str(path)
