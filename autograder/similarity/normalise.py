"""What copying rewrites without changing the code: read from the syntax tree, undone on the answer's tokens.

:mod:`.fingerprints` sets aside names, comments and layout token by token. Some disguises move or split code,
and only the syntax tree sees them; each is undone here, on the token list itself, so that every token keeps
its place in the answer (the side-by-side page marks what is shared where the student wrote it):

- **a temporary used once** is put back where it is used: ``scale = d ** 0.5`` then ``return s / scale``
  reads as ``return s / d ** 0.5``, and ``out = f(x)`` then ``return out`` as ``return f(x)``. Both answers are
  read with every such temporary inlined, so an answer split over temporaries and one written as a single
  expression read the same, whichever the copy did. A temporary is a name assigned once (by a plain ``=``, not
  in a loop's target, not a parameter) and read once, after it, in the same function (or in a comprehension,
  lambda or function inside it); never one read inside an f-string, where the name is not a token. One that
  holds a constant, a name or an attribute (``eps = 1e-9``, ``lo = -1``, ``d = x.ndim``) is put back wherever
  it is read, however often. A name given values one after another in one block, outside a loop, is read
  as one temporary for each value (``x = a @ b; x = x / s; return f(x)`` reads as ``return f(a @ b / s)``,
  as does the same with a name for each step, and ``x = a; x += b`` as ``a + b``);
- **the order of a sum's or a product's terms**: ``a * b`` and ``b * a``, ``x + y + z`` and ``z + x + y`` read
  the same (the terms sorted by their tokens; ``@``, ``-`` and ``/`` keep their order);
- **an augmented assignment**: ``x += y`` reads as ``x = x + y``;
- **a comparison from the other side**: ``a > b`` reads as ``b < a`` (and ``>=`` as ``<=``);
- **the order of independent statements**: in a function's body, two statements next to each other of which
  neither reads or writes what the other writes are read in the order of their tokens (two checks of the
  input swapped, a line moved above one it does not depend on); a ``return`` never moves;
- **a string standing alone as a statement** (a docstring added to a helper) and **a call of print** (a line
  left from checking by hand, or added to pad a copy) are left out, as comments are.

An answer that does not parse (a notebook's ``%magic``, a syntax error) keeps its tokens as they are.
"""
from __future__ import annotations

import ast
import bisect

Token = tuple[str, int, int]  # as in .fingerprints: (text as compared, start, end in the answer)

_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp, ast.ClassDef)
_SCOPE_TYPES = frozenset(_SCOPES)
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_CONTEXTS = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)  # no place, nothing inside
_COMMUTATIVE = (ast.Add, ast.Mult)
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
_BODIES = frozenset({ast.Module, ast.FunctionDef, ast.AsyncFunctionDef})  # whose statements may be reordered
_BARRIERS = frozenset({ast.Return, ast.Yield, ast.YieldFrom, ast.Break, ast.Continue, ast.Global, ast.Nonlocal,
                       ast.Await})
_FLIPPED = {ast.Gt: "<", ast.GtE: "<="}  # a comparison read from the other side
_AUGMENTED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
              ast.LShift: "<<", ast.RShift: ">>"}


def undo_rewrites(code: str, tokens: list[Token]) -> list[Token]:
    """``tokens`` (of ``code``, in order) with temporaries inlined, terms ordered, ``+=`` spelt out and lone
    strings left out; the tokens as they are when ``code`` does not parse."""
    if not tokens:
        return tokens
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return tokens
    try:
        return _Rewriter(code, tokens, tree).emit(tree)
    except RecursionError:  # pragma: no cover - an expression nested thousands deep
        return tokens


def _is_print(value: ast.expr) -> bool:
    """A call of ``print`` (a line left from checking the answer by hand)."""
    return type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "print"


def _plain(value: ast.expr) -> bool:
    """A constant (``eps = 1e-9``, ``lo = -1``) or a name or attribute (``d = x.ndim``): put back wherever it is
    read, however often, as a copy that names its constants reads like one that writes them out."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, (ast.Constant, ast.Name))


class _Rewriter:
    def __init__(self, code: str, tokens: list[Token], tree: ast.Module):
        self.tokens = tokens
        self.starts = [t[1] for t in tokens]
        lines = code.split("\n")
        self.line_starts = [0]
        for line in lines:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self.lines = lines
        self.removed: set[int] = set()  # ids of statements left out (inlined temporaries, lone strings)
        self.replaced: dict[int, ast.expr] = {}  # id of a Name read -> the value it is replaced by
        self.spans: dict[int, tuple[int, int] | None] = {}
        marks: list[ast.AST] = []
        self._scan(tree, marks)
        # where a rewrite starts: a node with none inside it is copied as it is (a node starting where one
        # starts but ending before it is read part by part, which copies it as it is too)
        self.marked = sorted(span[0] for span in map(self._span, marks) if span)

    # -- where a node is, in characters of the answer

    def _offset(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if not text.isascii():  # the tree counts columns in UTF-8 bytes
            col = len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))
        return self.line_starts[line - 1] + col

    def _span(self, node: ast.AST) -> tuple[int, int] | None:
        key = id(node)
        if key in self.spans:
            return self.spans[key]
        if getattr(node, "end_lineno", None) is None or not hasattr(node, "lineno"):
            span = None
        else:
            span = self._offset(node.lineno, node.col_offset), self._offset(node.end_lineno, node.end_col_offset)
        self.spans[key] = span
        return span

    def _dirty(self, span: tuple[int, int]) -> bool:
        """Whether a rewrite starts inside ``span``."""
        i = bisect.bisect_left(self.marked, span[0])
        return i < len(self.marked) and self.marked[i] < span[1]

    def _slice(self, start: int, end: int) -> list[Token]:
        return self.tokens[bisect.bisect_left(self.starts, start):bisect.bisect_left(self.starts, end)]

    def _children(self, node: ast.AST) -> list[tuple[int, int, ast.AST]]:
        """The nearest descendants with a place in the answer (an ``arguments`` or ``comprehension`` has none
        of its own: its parts stand in for it), in the answer's order."""
        found = []
        for child in ast.iter_child_nodes(node):
            span = self._span(child)
            if span is None:
                found += self._children(child)
            else:
                found.append((span[0], span[1], child))
        found.sort(key=lambda c: c[0])
        return found

    # -- what to rewrite

    def _scan(self, tree: ast.Module, marks: list[ast.AST]) -> None:
        stores: dict[tuple[int, str], int] = {}
        loads: dict[tuple[int, str], list[ast.Name]] = {}
        # each statement that gives a name a value (`x = ...`, `x += ...`): (statement, its block, in a loop)
        versions: dict[tuple[int, str], list[tuple[ast.stmt, int, bool]]] = {}
        blocked: set[tuple[int, str]] = set()

        # one pass over the tree, without recursion: (node, the scopes around it, inside an f-string, the
        # statement list it is in, inside a loop of its scope)
        todo: list[tuple[ast.AST, tuple[int, ...], bool, int, bool]] = [(tree, (id(tree),), False, 0, False)]
        Name, Load, Store, Assign, Expr, Constant, AugAssign, BinOp, arg = (
            ast.Name, ast.Load, ast.Store, ast.Assign, ast.Expr, ast.Constant, ast.AugAssign, ast.BinOp, ast.arg)
        while todo:
            node, scopes, in_fstring, block, in_loop = todo.pop()
            scope = scopes[-1]
            kind = type(node)
            if kind is Name:
                if type(node.ctx) is Load:
                    for s in scopes:  # a read in a function inside counts for every function around it
                        loads.setdefault((s, node.id), []).append(node)
                        if in_fstring:
                            blocked.add((s, node.id))
                else:
                    stores[scope, node.id] = stores.get((scope, node.id), 0) + (1 if type(node.ctx) is Store else 2)
                continue  # a name has nothing inside but its context
            if kind is arg:
                stores[scope, node.arg] = stores.get((scope, node.arg), 0) + 2
            elif kind is ast.Global or kind is ast.Nonlocal:
                blocked.update((scope, name) for name in node.names)
            elif kind is Assign and len(node.targets) == 1 and type(node.targets[0]) is Name:
                versions.setdefault((scope, node.targets[0].id), []).append((node, block, in_loop))
            elif in_fstring:  # an f-string is one token: nothing inside it is rewritten
                pass
            elif kind is Expr and (type(node.value) is Constant and isinstance(node.value.value, str)
                                   or _is_print(node.value)):
                self.removed.add(id(node))
                marks.append(node)
                continue  # what it reads is not read: a temporary printed and used once is still inlined
            elif kind is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in _FLIPPED:
                marks.append(node)
            elif kind is AugAssign and type(node.target) is Name and type(node.op) in _AUGMENTED:
                versions.setdefault((scope, node.target.id), []).append((node, block, in_loop))
                marks.append(node)
            elif kind is BinOp and isinstance(node.op, _COMMUTATIVE):
                marks.append(node)
            if kind in _BODIES and len(node.body) > 1:
                marks.append(node.body[1])  # its statements may be reordered: read it statement by statement
            new_scope = kind in _SCOPE_TYPES and node is not tree
            inner = scopes + (id(node),) if new_scope else scopes
            if kind in _DEFINITIONS:
                stores[scope, node.name] = stores.get((scope, node.name), 0) + 2  # its name is bound outside
            fstring = in_fstring or kind is ast.JoinedStr
            looping = (in_loop and not new_scope) or kind in _LOOPS
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    for child in value:
                        if isinstance(child, ast.AST) and not isinstance(child, _CONTEXTS):
                            todo.append((child, inner, fstring, id(value), looping))
                elif isinstance(value, ast.AST) and not isinstance(value, _CONTEXTS):
                    todo.append((value, inner, fstring, block, looping))
        for key, written in versions.items():
            if stores.get(key) == len(written) and key not in blocked:
                marks += self._inline(sorted(written, key=lambda w: self._span(w[0]) or (0, 0)), loads.get(key, []))

    def _inline(self, written: list[tuple[ast.stmt, int, bool]], read: list[ast.Name]) -> list[ast.AST]:
        """Put back each value of one name where it is read: a name given a value once (``t = ...``), or several
        times one after another in one block outside a loop (``x = a`` then ``x += b``, ``x = f(x)``), each value
        read once (or a constant, a name or an attribute read as often as it is); returns what it rewrote."""
        if len(written) > 1 and (len({block for _, block, _ in written}) > 1 or any(loop for *_, loop in written)):
            return []
        spans = [self._span(statement) for statement, *_ in written]
        if any(span is None or not self._slice(*span) for span in spans) or type(written[0][0]) is ast.AugAssign:
            return []  # assigned on a line the course gave, or `x += 1` on a value from outside
        ends = [span[1] for span in spans]
        reads: list[list[ast.Name]] = [[] for _ in written]
        for name in read:
            at = self._span(name)
            if at is None or at[0] < ends[0]:
                return []  # read before its first value (in a loop, or from outside)
            reads[bisect.bisect_right(ends, at[0]) - 1].append(name)
        for i, (statement, *_) in enumerate(written[1:]):
            if type(statement) is ast.AugAssign:  # `x += b` reads the value before it
                reads[i].append(statement.target)
        marks: list[ast.AST] = []
        for (statement, *_), used in zip(written, reads):
            plain = type(statement) is ast.Assign and _plain(statement.value)
            if not used or (len(used) > 1 and not plain):
                continue
            self.removed.add(id(statement))
            for name in used:
                self.replaced[id(name)] = statement
            marks += [statement, *used]
        return marks

    # -- the tokens, rewritten

    def emit(self, node: ast.AST) -> list[Token]:
        if id(node) in self.removed:
            return []
        if id(node) in self.replaced:
            statement = self.replaced[id(node)]
            if type(statement) is ast.AugAssign:
                span = self._span(statement)
                return self._augmented(statement, span)[len(self._slice(*self._span(statement.target))) + 1:]
            return self.emit(statement.value)
        span = self._span(node) or (0, self.starts[-1] + 1)
        if not self._dirty(span):
            return self._slice(*span)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _COMMUTATIVE):
            return self._terms(node, span)
        if isinstance(node, ast.AugAssign) and type(node.op) in _AUGMENTED:
            return self._augmented(node, span)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIPPED:
            return self._flipped(node, span)
        pieces: list[tuple[ast.AST | None, list[Token]]] = []  # each part: the child it is (None: between)
        at = span[0]
        for start, end, child in self._children(node):
            if start > at and (between := self._slice(at, start)):
                pieces.append((None, between))
            if tokens := self.emit(child):
                pieces.append((child, tokens))
            at = max(at, end)
        if tail := self._slice(at, span[1]):
            pieces.append((None, tail))
        if type(node) in _BODIES and len(node.body) > 1:
            self._reorder(pieces, {id(s) for s in node.body})
        return [token for _, tokens in pieces for token in tokens]

    def _reorder(self, pieces: list[tuple[ast.AST | None, list[Token]]], body: set[int]) -> None:
        """Statements next to each other that neither reads nor writes what the other writes, sorted by their
        tokens (a copy's checks or independent lines in another order read the same); in place."""
        moved = True
        while moved:
            moved = False
            for i in range(len(pieces) - 1):
                (a, first), (b, second) = pieces[i], pieces[i + 1]
                if (a is None or b is None or id(a) not in body or id(b) not in body
                        or [t[0] for t in second] >= [t[0] for t in first]):
                    continue
                (writes_a, names_a), (writes_b, names_b) = self._effects(a), self._effects(b)
                if writes_a is not None and writes_b is not None and not (writes_a & names_b or writes_b & names_a):
                    pieces[i], pieces[i + 1] = pieces[i + 1], pieces[i]
                    moved = True

    def _effects(self, statement: ast.AST) -> tuple[set[str] | None, set[str]]:
        """What a statement may change and every name it reads or writes; None for one that may not move
        (a return, or a yield, break or continue inside it). A call standing alone may change all it names,
        a check (``assert``, ``if ...: raise``) changes nothing."""
        names, writes = set(), set()
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.Name:
                names.add(node.id)
                if type(node.ctx) is not ast.Load:
                    writes.add(node.id)
            elif kind in _BARRIERS:
                return None, names
        kind = type(statement)
        if kind in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = statement.targets if kind is ast.Assign else [statement.target]
            writes |= {n.id for target in targets for n in ast.walk(target) if type(n) is ast.Name}
        elif kind is ast.Assert or (kind is ast.If and not statement.orelse
                                    and all(type(s) is ast.Raise for s in statement.body)):
            writes = set()
        else:  # a call, a loop, a with, a definition: anything it names
            writes = set(names)
        return writes, names

    def _terms(self, node: ast.BinOp, span: tuple[int, int]) -> list[Token]:
        """A sum's or product's terms (however nested: ``a + b + c``), sorted by their tokens."""
        terms: list[ast.AST] = []
        todo: list[ast.AST] = [node]
        while todo:  # left to right: the right term first onto the stack, so the left is taken first
            item = todo.pop()
            if isinstance(item, ast.BinOp) and type(item.op) is type(node.op) and self._span(item) is not None:
                todo += [item.right, item.left]
            else:
                terms.append(item)
        spans = [self._span(t) for t in terms]
        if any(s is None for s in spans):
            return self._slice(*span)
        emitted = [self.emit(t) for t in terms]
        between = [self._slice(spans[i][1], spans[i + 1][0]) for i in range(len(terms) - 1)]  # the operators
        ordered = sorted(emitted, key=lambda ts: [t[0] for t in ts])
        out = self._slice(span[0], spans[0][0])
        for i, tokens in enumerate(ordered):
            out += tokens + (between[i] if i < len(between) else [])
        return out + self._slice(spans[-1][1], span[1])

    def _flipped(self, node: ast.Compare, span: tuple[int, int]) -> list[Token]:
        """``a > b`` as ``b < a``, ``a >= b`` as ``b <= a``, the operator at its own place."""
        left, right = self._span(node.left), self._span(node.comparators[0])
        if left is None or right is None:
            return self._slice(*span)
        operator = self._slice(left[1], right[0])
        if len(operator) != 1:
            return self._slice(*span)
        _, start, end = operator[0]
        return (self._slice(span[0], left[0]) + self.emit(node.comparators[0])
                + [(_FLIPPED[type(node.ops[0])], start, end)] + self.emit(node.left) + self._slice(right[1], span[1]))

    def _augmented(self, node: ast.AugAssign, span: tuple[int, int]) -> list[Token]:
        """``x += y`` as ``x = x + y``, the new ``=`` and operator at the place of the ``+=``."""
        target, value = self._span(node.target), self._span(node.value)
        if target is None or value is None:
            return self._slice(*span)
        name = self._slice(*target)
        operator = self._slice(target[1], value[0])
        if len(operator) != 1:
            return self._slice(*span)
        _, start, end = operator[0]
        before = self.emit(node.target) if id(node.target) in self.replaced else name  # the value it adds to
        terms = [before, self.emit(node.value)]
        if isinstance(node.op, _COMMUTATIVE):  # `x += 1` as `x = 1 + x`, as the terms of a sum are read
            terms.sort(key=lambda tokens: [t[0] for t in tokens])
        return (name + [("=", start, end)] + terms[0] + [(_AUGMENTED[type(node.op)], start, end)] + terms[1]
                + self._slice(value[1], span[1]))
