"""Which cells of a notebook its tests need, so that grading can leave out the course's demonstrations.

A notebook's code cells are of three kinds: the set-up and demonstration cells the course wrote, the
learner's exercise cells, and the test cells. A test cell reads only ``check`` and an exercise's name, and
every check builds its inputs from its own seed (a submission's process starts from a random global seed
anyway), so a demonstration (training a model for a plot, printing an example) changes no score, unless a
cell that runs reads something it makes. :func:`needed` finds the cells that do: the exercise and test cells
and every cell that binds a name a needed cell reads, or may change such a name's object in place, wherever it
stands (a function reads its globals when it is called, maybe after a later cell rebound them). It
over-approximates on purpose (reads inside function bodies count, a binding never hides another, passing an
object to a function may change it), and when a notebook does something it
cannot follow (``exec``, ``globals()``, ``%run``, ``%time x = ...``, ``import *``, a cell Python cannot
read) it answers None: run every cell, as stock nbgrader does.

Names bound only by ``def``, ``class`` or ``import`` are not changed by being called or read, so a cell that
calls ``generate(model, ...)`` is not needed for ``generate``'s sake. A cell that assigns an attribute or
item of one (``LayerNorm.eps = ...``, ``os.environ[...] = ...``), or configures a module through it
(``torch.set_default_dtype``, ``np.seterr``, ``sys.path.append``), binds it. A module's setting binds it
without making it data: ``torch.set_printoptions(...)`` in one cell does not make every ``torch.zeros(...)``
elsewhere a change of ``torch``; a change in place (``TABLE.append(1)``, ``sys.path.append``) does make its
name data, which any cell that calls a method on it or passes it on may change.
Setting a random generator's state (``torch.set_rng_state``, ``np.random.set_state``) is a draw like
``torch.manual_seed``, not a configuration: no score depends on the global generator (see above).
"""

from __future__ import annotations

import ast
import functools
import symtable
from dataclasses import dataclass
from typing import Iterable, Sequence

# names through which a cell can reach or make any name: the grader cannot follow them, so it runs every cell
OPAQUE = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__", "setattr", "delattr",
                    "__builtins__", "__dict__", "importlib", "compile"})
# line magics that only configure the kernel (IPython writes them as get_ipython().run_line_magic(...))
SAFE_MAGICS = ("matplotlib", "config", "load_ext", "reload_ext", "autoreload", "precision", "env", "pip")
# method names that change how later code computes: a module's settings, and a list or dict changed in place
SETTINGS = ("set_", "use_deterministic_algorithms", "seterr", "setrecursionlimit", "filterwarnings", "simplefilter")
IN_PLACE = ("append", "insert", "extend", "update", "setdefault", "pop", "remove", "clear")
# builtins that read their arguments and never change them: passing a name to one is not a change
PURE = frozenset({"print", "len", "repr", "str", "int", "float", "bool", "abs", "min", "max", "sum", "sorted",
                  "list", "tuple", "set", "frozenset", "type", "isinstance", "issubclass", "range", "enumerate",
                  "zip", "round", "format", "id", "hash", "any", "all", "callable", "hasattr", "getattr",
                  "divmod"})


@dataclass(frozen=True)
class CellNames:
    """What one code cell does with the notebook's names."""

    binds: frozenset[str]  # assigned, defined, imported or deleted, or an attribute or item of theirs assigned
    declared: frozenset[str]  # bound by a def, class or import statement
    reads: frozenset[str]  # read anywhere in the cell, function bodies included (their own locals not)
    touches: frozenset[str]  # where they may be changed in place: a method called on them, or passed on
    sets_globals: tuple[tuple[str, frozenset[str]], ...]  # (a function defined here, the globals it declares)
    always: bool = False  # a %magic or !command: always run
    # bound here only by a module's setting (``torch.set_default_dtype``): bound, yet no sign it holds data
    configures: frozenset[str] = frozenset()


def python_of(source: str) -> str | None:
    """A cell's code as Python reads it, with IPython's rewriting of ``%magics`` where plain Python cannot read
    it; None when neither can."""
    try:
        ast.parse(source)
        return source
    except SyntaxError:
        pass
    try:  # late: only a cell with a magic pays for IPython
        from IPython.core.inputtransformer2 import TransformerManager

        code = TransformerManager().transform_cell(source)
        ast.parse(code)
        return code
    except Exception:
        return None


def global_reads(table: symtable.SymbolTable) -> set[str]:
    """The module-level names the code of ``table`` and of every scope inside it reads (a function's own
    parameters and locals are not read from the notebook)."""
    found = set()
    for symbol in table.get_symbols():
        if not symbol.is_referenced():
            continue
        if table.get_type() == "module" or symbol.is_global() or symbol.is_declared_global() \
                or (table.get_type() == "class" and not symbol.is_assigned()):
            found.add(symbol.get_name())
    for child in table.get_children():
        found |= global_reads(child)
    return found


class _Names(ast.NodeVisitor):
    """One pass over a cell: the module-level names it binds (assigned or deleted, declared global and
    assigned in a function, an attribute or item of theirs assigned, configured through a method) and those
    it may change in place (the object of a method call, an argument passed to a call). A function's or a
    class's own names are its own, not the notebook's."""

    def __init__(self) -> None:
        self.binds: set[str] = set()
        self.touches: set[str] = set()
        self.settings: set[str] = set()  # the modules configured through a method (``torch.set_default_dtype``)
        self.local: list[set[str]] = []  # the own names of the functions and classes we are in, innermost last

    def _notebooks(self, names: set[str]) -> set[str]:
        return {n for n in names if not any(n in scope for scope in self.local)}

    def _scope(self, node: ast.AST, own: set[str], body: list[ast.stmt]) -> None:
        said_global = {n for stmt in body for g in ast.walk(stmt) if isinstance(g, (ast.Global, ast.Nonlocal))
                       for n in g.names}
        stored = {n.id for stmt in body for n in ast.walk(stmt)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        self.local.append((own | stored) - said_global)
        for child in ast.iter_child_nodes(node):
            self.visit(child)
        self.local.pop()

    def visit_FunctionDef(self, node) -> None:
        args = node.args
        own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
        self._scope(node, own, node.body if isinstance(node.body, list) else [ast.Expr(node.body)])

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node, set(), node.body)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.binds |= self._notebooks({node.id})

    def _item_or_attribute(self, node) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):  # x.attr = ..., x[i] = ..., del x[i]
            self.binds |= self._notebooks(_base(node))
        self.generic_visit(node)

    visit_Attribute = visit_Subscript = _item_or_attribute

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            base, attr = self._notebooks(_base(node.func.value)), node.func.attr
            if _sets_random_state(node.func):  # as torch.manual_seed: a draw, not a setting
                self.touches |= base
            elif attr.startswith(SETTINGS):
                self.settings |= base
            else:
                (self.binds if attr.startswith(IN_PLACE) else self.touches).update(base)
        if not (isinstance(node.func, ast.Name) and node.func.id in PURE):
            for arg in (*node.args, *(k.value for k in node.keywords)):
                self.touches |= self._notebooks(_base(arg.value if isinstance(arg, ast.Starred) else arg))
        self.generic_visit(node)


def _sets_random_state(func: ast.Attribute) -> bool:
    """``torch.set_rng_state``, ``torch.cuda.set_rng_state_all``, ``np.random.set_state``: what a cell calls to
    restore a random generator's state."""
    return func.attr.startswith("set_rng_state") or (
        func.attr == "set_state" and isinstance(func.value, ast.Attribute) and func.value.attr == "random")


def _base(node: ast.AST) -> set[str]:
    """The name an attribute, item or call chain starts from (``torch`` in ``torch.backends.x``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return {node.id} if isinstance(node, ast.Name) else set()


def _magic(call: ast.Call) -> bool | None:
    """For ``get_ipython().method(...)``, what IPython writes for a %magic or !command: True when it only
    configures the kernel or runs a shell command, False when it may run Python that binds names
    (``%time x = 1``, ``%run``); None for any other call."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call)
            and isinstance(f.value.func, ast.Name) and f.value.func.id == "get_ipython"):
        return None
    if f.attr in ("system", "getoutput"):
        return True
    first = call.args[0] if call.args else None
    return (f.attr in ("run_line_magic", "run_cell_magic") and isinstance(first, ast.Constant)
            and first.value in SAFE_MAGICS)


@functools.lru_cache(maxsize=4096)
def names_of(source: str) -> CellNames | None:
    """The names ``source`` binds, reads and may change; None when the grader cannot follow it. Kept per source:
    a class's submissions share most of their cells (the course's), and reading 10's cells costs 50 ms."""
    code = python_of(source)
    if code is None:
        return None
    tree = ast.parse(code)
    declared: set[str] = set()
    sets_globals: list[tuple[str, frozenset[str]]] = []
    magic = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            declared.add(node.name)
            if not isinstance(node, ast.ClassDef):
                sets_globals.append((node.name, frozenset(n for g in ast.walk(node) if isinstance(g, ast.Global)
                                                          for n in g.names)))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            declared |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Call):
            kind = _magic(node)
            if kind is False:
                return None
            magic = magic or bool(kind)
    reads = global_reads(symtable.symtable(code, "<cell>", "exec"))
    if reads & OPAQUE:
        return None
    names = _Names()
    names.visit(tree)
    return CellNames(frozenset(names.binds | names.settings | declared), frozenset(declared), frozenset(reads),
                     frozenset(names.touches), tuple(sets_globals), always=magic,
                     configures=frozenset(names.settings - names.binds))


def needed(sources: Sequence[str], keep: Iterable[int]) -> set[int] | None:
    """The positions of ``sources`` (a notebook's code cells, in order) that must run for the cells at ``keep``
    (its exercise and test cells) to compute what they would in a run of every cell; None: run every cell."""
    cells = [names_of(s) for s in sources]
    if any(c is None for c in cells):
        return None
    # a name bound otherwise than by def, class, import or a module's setting holds data a cell can change in
    # place; calling a function that declares globals binds them
    changeable = set().union(*(c.binds - c.declared - c.configures for c in cells))
    sets_globals = {name: names for c in cells for name, names in c.sets_globals if names}
    # Order is not followed: a function defined in a needed cell reads its globals when it is called, which may
    # be after a later cell (re)binds them, so a name any needed cell reads is wanted from every cell. Repeat
    # until nothing more is needed.
    run = set(keep)
    while True:
        wanted = set().union(*(cells[i].reads for i in run))
        more = {i for i, c in enumerate(cells) if i not in run and (
            c.always or c.binds.union(*(sets_globals.get(name, ()) for name in c.reads)) & wanted
            or c.touches & changeable & wanted)}
        if not more:
            return run
        run |= more
