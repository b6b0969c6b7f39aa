"""Tracing a failure to its cause: an exercise whose function calls another exercise's function that
fails its own check.

A learner whose ``softmax`` skips the max subtraction may pass ``sample_token``'s visible check and fail
its hidden one, which then reads as a mistake of ``sample_token``. The cause is one exercise earlier, and
saying so first saves the learner a search: "your softmax fails its own check: fix it first, and this one
may pass as it is". Two places need it, with the same words (:func:`cause_sentence`):

* the learner's check cell (:meth:`.registry.Check.__call__`): the names the function's code refers to
  (:func:`names_used`), each looked up where the function looks them up, and checked on its visible cases;
* the grader (:func:`autograder.grade.submission.judge.trace_causes`): the names in each exercise's source, against the
  exercises whose tests failed in the same submission.
"""
from __future__ import annotations

import ast
import dis
import inspect
import types
from typing import Any, Collection, Iterable


def cause_sentence(name: str, why: str = "", through: tuple[str, ...] = ()) -> str:
    """The sentence that goes first in a message whose failure another exercise may have caused (``through``
    the exercises in between: sample_token calls softmax through softmax_temperature)."""
    said = f" Its check says: {why}" if why else ""
    via = f" (this calls it through {', '.join(through)})" if through else ""
    return f"Your {name} fails its own check{via}: fix it first, and this one may pass as it is.{said}"


def mistake_of(name: str) -> str:
    """The mistake the class report counts for a failure traced to ``name``."""
    return f"caused by {name}, which fails its own check"


def traced_to(mistake: str) -> str:
    """The exercise a failure was traced to (the inverse of :func:`mistake_of`), or ""."""
    head, sep, tail = mistake.partition(", which fails its own check")
    return head.removeprefix("caused by ") if sep and not tail and head.startswith("caused by ") else ""


def parsed(source: str) -> ast.Module | None:
    """A cell's code as Python reads it, with IPython's rewriting of ``%magics`` when plain Python cannot; None
    when neither can."""
    try:
        return ast.parse(source)
    except SyntaxError:
        pass
    try:  # late: only a cell with a magic pays for IPython
        from IPython.core.inputtransformer2 import TransformerManager

        return ast.parse(TransformerManager().transform_cell(source))
    except Exception:
        return None


def loads(node: ast.AST) -> set[str]:
    """The names ``node`` reads, less those a lambda or a comprehension inside it binds for itself."""
    read, own = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            read.add(n.id)
        elif isinstance(n, ast.comprehension):
            own |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            own |= {a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg)}
    return read - own


def names_in_source(source: str) -> set[str]:
    """Every plain name a piece of code reads (``softmax`` in ``softmax(z / t)``); empty when it does not parse."""
    tree = parsed(source)
    return loads(tree) if tree is not None else set()


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def names_used(obj: Any) -> dict[str, Any]:
    """The global names a function (or each method of a class) refers to, with the values they have where
    it looks them up. Names it does not find there are left out."""
    functions = ([obj] if inspect.isfunction(obj) else
                 [f for f in vars(obj).values() if inspect.isfunction(f)] if inspect.isclass(obj) else [])
    found: dict[str, Any] = {}
    for fn in functions:
        namespace = fn.__globals__
        for code in _codes(fn.__code__):
            for name in _globals_read(code):
                if name in namespace:
                    found.setdefault(name, namespace[name])
    return found


def _globals_read(code) -> list[str]:
    """The names ``code`` looks up as globals. Not ``co_names``, which also holds attribute names: in
    ``F.cross_entropy(...)`` the name ``cross_entropy`` is F's attribute, not the learner's exercise."""
    return [i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")]


def failed_callee(names: Iterable[str], failed: Collection[str], exclude: str) -> str | None:
    """The first of ``names`` (in sorted order, so the answer never depends on a set's order) that is an
    exercise in ``failed``, other than ``exclude``; None when there is none."""
    return next((name for name in sorted(set(names)) if name != exclude and name in failed), None)
