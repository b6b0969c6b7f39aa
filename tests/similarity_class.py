"""A synthetic class for the similarity check: independent answers written differently, and planted copies.

Built on the course's released notebooks, so the real stubs and given lines are there to subtract: each
``# YOUR CODE HERE`` / ``raise NotImplementedError()`` is replaced by a generated body. An exercise is a *task*,
a fixed chain of computing steps (the same for everyone: it is what the exercise asks), drawn from its grade
id. A student writes each step in one of several equivalent forms (``a @ b``, ``np.matmul(a, b)``,
``a.dot(b)``, a loop), with names of their own, their own comments, optional checks of the input, steps
inlined into one expression or kept apart, and sometimes two helper functions. So independent answers
share what the task forces and often a step or two, as honest answers do.

A planted copy re-renders the source's very choices with what copying changes: other names (all of them),
other comments (or none), helpers in the other order, lines split over two or joined with ``;``, about half
of its steps split off into a temporary or a temporary folded back into the next line, a constant put in a
temporary of its own (``scale = 0.5`` ... ``x * scale``) or taken out of one, the terms of sums and products
in the other order (``b * a``), ``x = x + y`` written ``x += y``, comparisons from the other side (``0 < x``),
one name for every step's value (``x = ...; x = f(x)``) or a name for each, the checks of the input in the
other order,
a docstring added to the helpers, a ``print`` left in or taken out, sometimes
one step rewritten in another form, and one of the copied exercises written afresh. Students who work alone
make the same choices, each their own way. Predictions
(``predict_...``) and a share of one-line exercises are answered in one short line: too short to tell apart.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.similarity.answers import course_exercises, read_answers
from autograder.similarity.compare import MIN_TOKENS
from autograder.similarity.run import answer_fingerprints

NAMES = ("x", "y", "z", "a", "b", "c", "out", "res", "result", "tmp", "t", "s", "val", "vals", "arr", "m", "w",
         "acc", "total", "scores", "probs", "h", "u", "v2", "q1", "step", "cur", "prev", "nxt", "buf", "data",
         "vec", "mat", "norm", "ans", "part", "term", "k1", "r", "e")
COMMENTS = ("# compute it", "# step", "# vectorised", "# see the formula above", "# shape check", "# TODO tidy",
            "# the main part", "# as in the lecture", "# works on batches", "# careful with the axis")
KINDS = ("binary", "reduce", "unary", "matmul", "transpose", "scale", "clip")


@dataclass(frozen=True)
class Step:
    kind: str
    param: str  # the operator, function or constant the task fixes


@dataclass
class Style:
    """How one student writes: forms per step, names, comments, checks, inlining, helpers, layout."""
    forms: list[int]
    names: list[str]
    comments: list[str | None]
    checks: list[int]
    noise: dict[int, int]  # step -> a line written before it (see _noise)
    inline: list[bool]
    helpers: bool
    helpers_swapped: bool = False
    layout: str = "plain"  # "plain", "split" (long lines over two) or "joined" (pairs of lines with ;)
    hoist: frozenset[int] = frozenset()  # steps whose constant is first put in a temporary of its own
    commute: bool = False  # sums and products written with their terms the other way round
    augmented: bool = False  # the first step that adds or multiplies onto the running value written `x += y`
    documented: bool = False  # helpers carry a docstring
    flipped: bool = False  # comparisons written from the other side (`0 < x` for `x > 0`)
    prints: frozenset[int] = frozenset()  # steps after which the value is printed (a check by hand, left in)
    reuse: bool = False  # every step's value under one name (`x = ...; x = f(x)`), not a name for each


@dataclass
class Planted:
    """What the class holds: students, and each planted pair with the exercises the copy shares."""
    students: list[str]
    pairs: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)  # (source, copier) -> shared
    trivial: set[tuple[str, str]] = field(default_factory=set)  # (assignment, grade id) answered in one line


def task(key: str, params: list[str]) -> list[Step]:
    rng = random.Random(key)
    ops = {"binary": "+-*/", "reduce": ("sum", "max", "mean", "min"), "unary": ("exp", "log", "sqrt", "abs", "tanh"),
           "matmul": ("@",), "transpose": ("T",), "scale": ("0.5", "2.0", "1e-3", "3"), "clip": ("0", "1.0", "-1")}
    return [Step(kind, rng.choice(ops[kind])) for kind in rng.choices(KINDS, k=rng.randint(4, 8))]


def _fn(op: str) -> str:
    return {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}[op]


def _expr(step: Step, form: int, a: str, b: str, *, commute: bool = False, const: str | None = None,
          flipped: bool = False) -> str:
    """One step's expression, in one of its forms (``a`` the previous value, ``b`` an input; ``commute``: a sum or
    product the other way round; ``const``: the name of a temporary holding the step's constant)."""
    k, p = step.kind, const or step.param
    if flipped and k == "clip" and form % 6 in (1, 4):
        return (f"np.where({p} < {a}, {a}, {p})" if form % 6 == 1
                else f"{a} * ({p} < {a}) + {p} * ({a} <= {p})")
    if commute and ((k == "binary" and step.param in "+*" and form % 8 in (0, 2)) or (k == "scale" and form % 6 in (0, 1))):
        a, b = (b, a) if k == "binary" else (a, b)
        if k == "scale":
            return f"{p} * {a}" if form % 6 == 0 else f"{a} * {p}"
    options = {  # lazily: only this step's kind is built
        "binary": lambda: [f"{a} {p} {b}", f"np.{_fn(p)}({a}, {b})", f"({a}) {p} ({b})", f"{a}.__{_dunder(p)}__({b})",
                           f"np.asarray({a}) {p} np.asarray({b})", f"{a} {p} {b}.reshape({a}.shape)"]
        + ([f"{b} {p} {a}", f"np.{_fn(p)}({b}, {a})"] if p in "+*" else []),
        "reduce": lambda: [f"np.{p}({a}, axis=-1)", f"{a}.{p}(axis=-1)", f"np.{p}({a}, -1)", f"{a}.{p}(-1)",
                           f"np.{p}({a}, axis=-1, keepdims=True)[..., 0]", f"{a}.{p}(axis={a}.ndim - 1)",
                           f"np.apply_along_axis(np.{p}, -1, {a})", f"np.array([row.{p}() for row in {a}])"],
        "unary": lambda: [f"np.{p}({a})", f"np.{p}({a}.astype(float))", f"np.{p}(np.asarray({a}, dtype=float))",
                          f"np.vectorize(math.{p if p != 'abs' else 'fabs'})({a})", f"np.{p}({a}, out=None)"]
        + ([f"{a} ** 0.5", f"np.power({a}, 0.5)"] if p == "sqrt" else [f"np.absolute({a})"] if p == "abs" else []),
        "matmul": lambda: [f"{a} @ {b}", f"np.matmul({a}, {b})", f"{a}.dot({b})", f"np.dot({a}, {b})",
                           f"np.einsum('ij,jk->ik', {a}, {b})", f"np.tensordot({a}, {b}, axes=1)",
                           f"({a}[:, :, None] * {b}[None, :, :]).sum(axis=1)"],
        "transpose": lambda: [f"{a}.T", f"np.transpose({a})", f"{a}.transpose()", f"np.swapaxes({a}, -1, -2)",
                              f"{a}.swapaxes(0, 1)", f"np.moveaxis({a}, -1, 0)", f"np.einsum('ij->ji', {a})"],
        "scale": lambda: [f"{a} * {p}", f"{p} * {a}", f"np.multiply({a}, {p})", f"{a} / (1 / {p})",
                          f"{a} * float({p})", f"np.full_like({a}, {p}) * {a}"],
        "clip": lambda: [f"np.maximum({a}, {p})", f"np.where({a} > {p}, {a}, {p})", f"np.clip({a}, {p}, None)",
                         f"np.fmax({a}, {p})", f"{a} * ({a} > {p}) + {p} * ({a} <= {p})",
                         f"np.select([{a} > {p}], [{a}], default={p})"],
    }[k]()
    return options[form % len(options)]


def _dunder(op: str) -> str:
    return {"+": "add", "-": "sub", "*": "mul", "/": "truediv"}[op]


def _noise(kind: int, x: str, y: str) -> list[str]:
    """A line some students add and others do not: a copy, a size kept for later, a conversion, a print."""
    return [[f"{x} = {x}.copy()"], [f"{y} = {x}.shape[-1]"], [f"{x} = np.array({x}, dtype=np.float64)"],
            [f"{y} = len({x})"], [f"assert {x}.ndim >= 1"], [f"{x} = np.atleast_1d({x})"],
            [f"{y} = {x}.size", f"if {y} == 0:", f"    return {x}"], [f"{x} = np.nan_to_num({x})"]][kind % 8]


def _check(kind: int, x: str) -> list[str]:
    return [[f"{x} = np.asarray({x}, dtype=float)"],
            [f"if {x}.ndim == 0:", f"    raise ValueError(f'expected an array, got {{{x}!r}}')"],
            [f"assert {x}.size > 0, 'empty input'"],
            [f"if not np.all(np.isfinite({x})):", "    raise ValueError('not finite')"]][kind % 4]


def new_style(rng: random.Random, steps: int) -> Style:
    names = rng.sample(NAMES, k=min(len(NAMES) // 2, steps + 5))
    return Style(forms=[rng.randrange(60) for _ in range(steps)], names=names,
                 noise={i: rng.randrange(8) for i in range(steps) if rng.random() < 0.25},
                 comments=[rng.choice(COMMENTS) if rng.random() < 0.3 else None for _ in range(steps)],
                 checks=rng.sample(range(4), k=rng.choice((0, 0, 1, 2))),
                 inline=[rng.random() < 0.3 for _ in range(steps)], helpers=rng.random() < 0.3 and steps >= 4,
                 layout=rng.choice(("plain", "plain", "split", "joined")),
                 hoist=frozenset(i for i in range(steps) if rng.random() < 0.15), commute=rng.random() < 0.3,
                 augmented=rng.random() < 0.2, documented=rng.random() < 0.2, flipped=rng.random() < 0.3,
                 prints=frozenset(i for i in range(steps) if rng.random() < 0.05), reuse=rng.random() < 0.2)


def copy_style(rng: random.Random, style: Style, rewrite: float = 0.3) -> Style:
    """What copying changes: every name, the comments, the helpers' order, the layout, temporaries split off or
    folded back, the order of a product's terms, ``+=``, docstrings, sometimes one step's form."""
    forms = list(style.forms)
    if rng.random() < rewrite:  # beyond what the check must see through: a copier who rewrites one step
        i = rng.randrange(len(forms))
        forms[i] += 1
    names = rng.sample([n for n in NAMES if n not in style.names], k=len(style.names))
    return Style(forms=forms, names=names,
                 comments=[rng.choice(COMMENTS) if rng.random() < 0.3 else None for _ in forms],
                 checks=list(reversed(style.checks)), noise=dict(style.noise), helpers=style.helpers,
                 inline=[not inlined if rng.random() < 0.5 else inlined for inlined in style.inline],
                 helpers_swapped=not style.helpers_swapped,
                 layout={"plain": "split", "split": "joined", "joined": "plain"}[style.layout],
                 hoist=style.hoist ^ frozenset(i for i in range(len(forms)) if rng.random() < 0.3),
                 commute=not style.commute, augmented=not style.augmented, documented=not style.documented,
                 flipped=not style.flipped, reuse=not style.reuse,
                 prints=style.prints ^ frozenset(i for i in range(len(forms)) if rng.random() < 0.15))


def render(steps: list[Step], style: Style, params: list[str], indent: str) -> str:
    """The body a student writes for ``steps`` in ``style`` (``params``: the function's parameters)."""
    inputs = params or ["x"]
    lines: list[str] = []
    for kind in style.checks:
        lines += _check(kind, inputs[0])
    value = inputs[0]
    pending: str | None = None  # an inlined expression not yet given a name
    helpers: list[list[str]] = []
    augmented = style.augmented
    for i, step in enumerate(steps):
        b = inputs[(i + 1) % len(inputs)]
        twice = _expr(step, style.forms[i], "\0", b).count("\0") > 1  # nobody writes a long expression twice
        if i in style.noise or (twice and pending):  # a line of one's own habits is kept, whatever a copy folds
            if pending:  # the value so far is needed by name
                value = style.names[(i - 1) % len(style.names)]
                lines.append(f"{value} = {pending}")
                pending = None
            if i in style.noise:
                lines += _noise(style.noise[i], value, style.names[-5])
        const = None
        if i in style.hoist and step.kind in ("scale", "clip") and not (style.helpers and i in (1, 2)):
            const = f"{style.names[-6]}{i}"
            lines.append(f"{const} = {step.param}")
        # an inlined step keeps its parentheses, as anyone's code must (`(a + b) * 3`, never `a + b * 3`)
        expr = _expr(step, style.forms[i], f"({pending})" if pending else value, b, commute=style.commute, const=const,
                     flipped=style.flipped)
        if style.helpers and i in (1, 2):
            name = f"_{style.names[-1 - i]}"
            doc = [f'    """{step.kind} step."""'] if style.documented else []
            helpers.append([f"def {name}({style.names[-3]}, {style.names[-4]}):", *doc,
                            f"    return {_expr(step, style.forms[i], style.names[-3], style.names[-4], commute=style.commute)}"])
            expr = f"{name}({pending or value}, {b})"
        if style.inline[i] and i < len(steps) - 1:
            pending = expr
            continue
        target = style.names[0 if style.reuse else i % len(style.names)]
        if style.comments[i]:
            lines.append(style.comments[i])
        op = step.param if step.kind == "binary" and step.param in "+*" else None
        if augmented and op and not pending and style.forms[i] % 8 == 0 and target != value:
            # `y = x + b` as `y = x` then `y += b`
            lines += [f"{target} = {value}", f"{target} {op}= {b}"]
            augmented = False
        else:
            lines.append(f"{target} = {expr}")
        pending = None
        value = target
        if i in style.prints:
            lines.append(f"print({value}.shape)")
    lines.append(f"return {pending or value}")
    if style.helpers_swapped:
        helpers.reverse()
    lines = [line for helper in helpers for line in helper] + lines
    return "\n".join(indent + line for line in _layout(lines, style.layout))


def _layout(lines: list[str], layout: str) -> list[str]:
    if layout == "split":  # a long assignment over two lines, inside parentheses
        return [f"{m.group(1)} = (\n    {m.group(2)}\n)" if (m := re.fullmatch(r"(\w+) = (.{25,})", line)) else line
                for line in lines]
    if layout == "joined":  # two simple assignments on one line
        out: list[str] = []
        for line in lines:
            if out and re.fullmatch(r"\w+ = [^:;]+", line) and re.fullmatch(r"\w+ = [^:;]+", out[-1]):
                out[-1] += "; " + line
            else:
                out.append(line)
        return out
    return lines


STUB = re.compile(r"^(?P<indent>[ \t]*)# YOUR CODE HERE\n(?P=indent)raise NotImplementedError\(\)[ \t]*$", re.M)
DEF = re.compile(r"def \w+\(([^)]*)\)", re.S)


def _params(cell: str, at: int) -> list[str]:
    defs = list(DEF.finditer(cell, 0, at))
    if not defs:
        return []
    # the commas between parameters, not those inside an annotation (`merges: list[tuple[int, int]]`)
    parts = re.split(r",(?![^\[]*\])", defs[-1].group(1))
    names = [p.split(":")[0].split("=")[0].strip().lstrip("*") for p in parts]
    return [n for n in names if n.isidentifier() and n != "self"]


def fill(cell: str, answer) -> str:
    """The released cell with each stub region replaced by ``answer(region index, parameters, indent)``."""
    parts, at = [], 0
    for i, m in enumerate(STUB.finditer(cell)):
        parts += [cell[at:m.start()], answer(i, _params(cell, m.start()), m.group("indent"))]
        at = m.end()
    return "".join(parts) + cell[at:]


def make_class(out: Path, course: Path, assignments: list[str], *, students: int, copiers: int,
               seed: int = 0, min_shared: int = 3, rewrite: float = 0.3) -> Planted:
    """Write ``out/<student>/<assignment>/<assignment>.ipynb`` for ``students`` students, ``copiers`` of whom
    copy, each from another student, between ``min_shared`` and ten exercises (one of them then written
    afresh); in each copied exercise, one step is written in another form with probability ``rewrite``."""
    rng = random.Random(seed)
    names = [f"s{i:04d}" for i in range(students)]
    planted = Planted(names)
    notebooks = {a: json.loads((course / "notebooks" / f"{a}.ipynb").read_text()) for a in assignments}
    exercises = [(a, c["metadata"]["nbgrader"]["grade_id"]) for a, nb in notebooks.items() for c in nb["cells"]
                 if c["cell_type"] == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    for a, gid in exercises:
        if gid.startswith("predict_") or random.Random(f"{seed}:{a}:{gid}:short").random() < 0.12:
            planted.trivial.add((a, gid))
    styles: dict[tuple[str, str, str, int], Style] = {}
    copied: dict[str, tuple[str, set[tuple[str, str]], tuple[str, str]]] = {}
    long = [ex for ex in exercises if ex not in planted.trivial]
    chosen = rng.sample(names, k=copiers)
    alone = [n for n in names if n not in chosen]  # a source never copies: no chains of copies
    for copier in chosen:
        source = rng.choice(alone)
        start = rng.randrange(len(long))
        count = min(len(long), rng.randint(min_shared + 1, 11))  # one of them is then written afresh
        span = [long[(start + j) % len(long)] for j in range(count)]
        changed = rng.choice(span)
        copied[copier] = (source, set(span) - {changed}, changed)
        planted.pairs[source, copier] = set(span) - {changed}

    def body(student: str, a: str, gid: str, region: int, params: list[str], indent: str) -> str:
        key = (student, a, gid, region)
        steps = task(f"{seed}:{a}:{gid}:{region}", params)
        if (a, gid) in planted.trivial:
            r = random.Random(f"{student}:{a}:{gid}")
            return indent + (f"return {r.choice(params or ['0.5'])} @ {r.choice(params or ['1'])}.T"
                             if params else f"return {r.randint(0, 9)}.{r.randint(0, 999):03d}")
        if key not in styles:
            source = copied.get(student)
            if source and (a, gid) in source[1]:
                original = styles.get((source[0], a, gid, region)) or new_style(
                    random.Random(f"{seed}:{source[0]}:{a}:{gid}:{region}"), len(steps))
                styles[source[0], a, gid, region] = original
                styles[key] = copy_style(random.Random(f"{seed}:copy:{student}:{a}:{gid}"), original, rewrite)
            else:
                styles[key] = new_style(random.Random(f"{seed}:{student}:{a}:{gid}:{region}"), len(steps))
        return render(steps, styles[key], params, indent)

    for student in names:
        for a, nb in notebooks.items():
            cells = []
            for c in nb["cells"]:
                meta = c.get("metadata", {}).get("nbgrader", {})
                if c["cell_type"] == "code" and meta.get("solution"):
                    src = fill("".join(c["source"]), lambda i, p, ind, gid=meta["grade_id"]: body(student, a, gid, i, p, ind))
                    c = {**c, "source": src}
                cells.append(c)
            folder = out / student / a
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{a}.ipynb").write_text(json.dumps({**nb, "cells": cells}))
    return planted


def long_enough(folder: Path, pairs: dict[tuple[str, str], set[tuple[str, str]]]) -> dict[tuple[str, str], int]:
    """Per planted pair, the copied exercises both of whose answers are long enough to compare (the check's own
    rule, :data:`MIN_TOKENS` tokens of the student's own): the non-trivial ones the goal counts."""
    students = tuple(sorted({s for pair in pairs for s in pair}))
    sizes: dict[tuple[str, str, str], int] = {}
    for assignment in sorted({a for shared in pairs.values() for a, _ in shared}):
        exercises = {ex.grade_id: ex for ex in course_exercises(assignment)}
        answers, _ = read_answers(folder, assignment, set(exercises), students=students)
        for answer in answers:
            sizes[answer.student, assignment, answer.grade_id] = answer_fingerprints(
                answer, exercises[answer.grade_id]).size
    return {pair: sum(1 for a, g in shared if min(sizes.get((s, a, g), 0) for s in pair) >= MIN_TOKENS)
            for pair, shared in pairs.items()}
