"""Which code cells of a notebook show the learner's own work: the cells whose output, on the course's site,
would be the solution run's answer under an exercise the learner has not written.

A name is the learner's work when an exercise defines it (its grade id and whatever its cell binds), when the
set-up takes it from the learner's earlier notebooks (:data:`autograder.pieces.NEEDS`, handed out by
``use_pieces``), or when a cell computes it from such a name (``probs = softmax(z)``). Cells are read with
:mod:`ast`, statement by statement in the order they run (:func:`steps`), and a name is followed from cell to
cell (:func:`depends_on`); a module's name (``np``) never is the learner's.
"""
from __future__ import annotations

import ast

from .checks.causes import loads, parsed
from .nbio import grade_id, is_solution_cell
from .pieces import NEEDS


def exercise_names(nb, assignment: str = "") -> set[str]:
    """The names whose value is the learner's own work on ``nb``'s page: each exercise (its grade id and what its
    cell defines), the earlier pieces the set-up takes from the learner's saved notebooks
    (:data:`autograder.pieces.NEEDS`), and ``use_pieces`` itself, which hands them out."""
    names = {"use_pieces"} | {piece.name for piece in NEEDS.get(assignment, ())}
    for cell in nb.cells:
        if is_solution_cell(cell):
            names.add(grade_id(cell))
            tree = parsed(cell.source)
            names |= {name for statement in (tree.body if tree else []) for _, bound, _ in steps(statement)
                      for name in bound}
    return names


def stores(target: ast.AST) -> tuple[set[str], set[str]]:
    """(names rebound, names changed in place) by assigning to ``target``: ``x, y = ...`` rebinds both,
    ``a.b = ...`` and ``a[i] = ...`` change ``a``."""
    bound, changed = set(), set()
    for t in ast.walk(target):
        if isinstance(t, ast.Name) and isinstance(t.ctx, (ast.Store, ast.Del)):
            bound.add(t.id)
        elif isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.ctx, (ast.Store, ast.Del)):
            root = t
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                changed.add(root.id)
    return bound, changed


def called_on(node: ast.AST) -> set[str]:
    """The objects whose methods ``node`` calls (``history`` in ``history.append(x)``): they may now hold what
    they were given."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            root = n.func
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name):
                found.add(root.id)
    return found


def steps(statement: ast.stmt):
    """``statement`` as the steps it runs in, in order: (names read, names rebound, names changed in place). A
    compound statement's header comes before its body; a function or class is one step that reads what its body
    reads from outside and binds its name."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        local = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local |= {a.arg for a in ast.walk(statement) if isinstance(a, ast.arg)}
        yield loads(statement) - local, {statement.name}, set()
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        bound, changed = stores(statement.target)
        yield loads(statement.iter), bound, changed | called_on(statement.iter)
        for s in statement.body + statement.orelse:
            yield from steps(s)
    elif isinstance(statement, (ast.While, ast.If)):
        yield loads(statement.test), set(), called_on(statement.test)
        for s in statement.body + statement.orelse:
            yield from steps(s)
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            bound, changed = stores(item.optional_vars) if item.optional_vars else (set(), set())
            yield loads(item.context_expr), bound, changed | called_on(item.context_expr)
        for s in statement.body:
            yield from steps(s)
    elif isinstance(statement, ast.Try):
        for s in statement.body:
            yield from steps(s)
        for handler in statement.handlers:
            yield (loads(handler.type) if handler.type else set()), {handler.name} if handler.name else set(), set()
            for s in handler.body:
                yield from steps(s)
        for s in statement.orelse + statement.finalbody:
            yield from steps(s)
    elif isinstance(statement, (ast.Import, ast.ImportFrom)):
        return  # modules: never the learner's work
    else:  # an assignment, an expression, a return ...: what it reads, then what it binds
        targets = (statement.targets if isinstance(statement, ast.Assign) else
                   [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else [])
        bound, changed = set(), called_on(statement)
        for t in targets:
            b, c = stores(t)
            bound, changed = bound | b, changed | c
        read = loads(statement) | (bound if isinstance(statement, ast.AugAssign) else set())
        if isinstance(statement, ast.Delete):
            bound |= set().union(*(stores(t)[0] for t in statement.targets))
        yield read, bound, changed


def imported_names(trees) -> set[str]:
    """The names import statements bind in ``trees`` (``np``, ``plt``, ``check``): modules, never the learner's work,
    though ``np.random.default_rng(0)`` calls a method on one."""
    return {alias.asname or alias.name.split(".")[0] for tree in trees for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for alias in n.names}


def depends_on(tree: ast.Module, tainted: set[str], imported: set[str] = frozenset()) -> bool:
    """Does ``tree`` read a name in ``tainted``, as its steps run in order (:func:`steps`)? A step that reads one
    adds what it binds or changes to ``tainted`` (``probs = softmax(z)`` makes ``probs`` the learner's work
    too); one that reads none takes what it rebinds out (``x = torch.arange(6)`` is a fresh ``x``). Names in
    ``imported`` (:func:`imported_names`) never count. The steps are taken as written: a branch or a loop body
    counts as run once."""
    found = False
    for statement in tree.body:
        for read, bound, changed in steps(statement):
            if read & tainted:
                found = True
                tainted |= (bound | changed) - imported
            else:
                tainted -= bound
    return found


def learners_cells(nb, assignment: str = "", solution=None) -> set[int]:
    """The positions of ``nb``'s code cells whose output would be the learner's work: every exercise and test
    cell, every cell that reads a name of the learner's work (:func:`depends_on`, followed in notebook order),
    and every cell whose code cannot be read (nothing is known of it). ``solution``, the course's notebook of
    the same assignment, adds what its exercise cells define."""
    tainted = exercise_names(nb, assignment) | (exercise_names(solution, assignment) if solution is not None else set())
    trees = {i: None if is_solution_cell(c) or grade_id(c) else parsed(c.source)
             for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    imported = imported_names(t for t in trees.values() if t is not None)
    return {i for i, tree in trees.items() if tree is None or depends_on(tree, tainted, imported)}
