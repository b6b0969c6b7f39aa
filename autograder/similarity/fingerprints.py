"""One answer's fingerprints: its code with what copying hides taken out, cut into k-grams, winnowed.

What copying hides, and how each is taken out before anything is compared:

- **names**: a name the answer binds (its variables, parameters, helper functions) becomes ``V``; a name it
  only uses (``np``, ``torch``, the notebook's own functions), a builtin, an attribute after a dot and a
  keyword argument's name stay, since a copier rarely changes them and they tell honest answers apart;
- **comments, docstrings and strings**: comments go, every string becomes ``S``;
- **whitespace and line breaks**: tokens are compared, not lines, so a line split in two or two joined by
  ``;`` read the same;
- **the order of functions**: each ``def`` or ``class`` starts a block of its own, fingerprinted apart,
  and an answer's fingerprints are a set, so moving a helper above or below another changes nothing;
- **the given lines**: a line that the released stub or the solution's given code has (the ``def`` line,
  the docstring, a line given after the solution) is left out before the answer is tokenised;
- **temporaries, the order of terms, ``+=``, docstrings and prints**: read from the syntax tree and undone
  on the tokens (:mod:`.normalise`).

The fingerprints are the winnowing of Schleimer, Wilkerson and Aiken (SIGMOD 2003), the method of MOSS,
through ``copydetect``'s own implementation (:func:`copydetect.utils.winnow`): of every window of ``WINDOW``
consecutive k-gram hashes the smallest is kept, so any run of ``K + WINDOW - 1`` tokens two answers share
is found, and runs shorter than ``K`` tokens (the noise every answer has) never are. The tokeniser is one
regular expression: copydetect tokenises with Pygments, which took about 4 ms an answer here, 200 s for a
class of 500 students and ten notebooks; this one takes a tenth of that, and it keeps the names an answer
only uses (copydetect's filter makes every name ``V``).
"""
from __future__ import annotations

import bisect
import builtins
import keyword
import re
import zlib
from dataclasses import dataclass

import numpy as np

from .normalise import undo_rewrites

try:  # copydetect's package imports matplotlib.pyplot for its own report; none of it draws anything here
    from copydetect.utils import get_copied_slices, winnow
except ImportError as exc:  # pragma: no cover - said to the instructor, never a traceback
    raise ImportError("the similarity check needs copydetect (pinned in requirements.txt): "
                      "pip install -r requirements.txt") from exc

K = 6  # tokens in a k-gram: a shared run shorter than this is noise
WINDOW = 3  # winnowing window: every shared run of K + WINDOW - 1 = 8 tokens is caught
REWRITE_FROM = 12  # tokens from which an answer is read as a syntax tree too (:mod:`.normalise`)
_MASK = (1 << 52) - 1  # copydetect's winnowing compares hashes as float64: keep them exact there
_BASE = np.uint64(1_000_003)

# One token a match, the whitespace, comments and line continuations before it skipped in the same match
# (possessively, and the token optional, so a comment at the end is never searched into for a token).
TOKEN = re.compile(r"""(?:\s+|\#[^\n]*|\\\n)*+(?:
   (?P<string>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
 | (?P<number>0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
 | (?P<name>[^\W\d]\w*)
 | (?P<op>\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%@&|^=<>!]=|[-+*/%@&|^~<>=.,:;()\[\]{}]|\S))?""", re.X)
BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_BLOCK_STARTS = frozenset({"def", "class"})
BOUNDARY = ""  # a token that only ends a block (where a given `def` line was left out); never hashed
# `a = 1; b = 2` reads as two lines, and `x = (a\n + b)` as `x = a + b`: a line split inside parentheses
# (or a pair of them added to split it) changes nothing. Brackets and braces stay.
_DROPPED_OPS = frozenset({";", "(", ")"})


Token = tuple[str, int, int]  # (text as compared: "V" a bound name, "S" a string, else itself; start; end in the answer)


@dataclass(frozen=True)
class Fingerprints:
    """An answer as compared: its tokens (given lines left out) and the winnowed hashes of its k-grams."""
    tokens: tuple[Token, ...]
    hashes: frozenset[int]
    positions: dict[int, tuple[int, ...]]  # hash -> the first token of each k-gram that has it

    @property
    def size(self) -> int:
        """Tokens of the learner's own (what decides whether an answer is too short to tell apart)."""
        return sum(1 for t in self.tokens if t[0] != BOUNDARY)


def normalised_tokens(code: str, *, given: frozenset[str] = frozenset()) -> list[Token]:
    """The tokens of ``code`` as compared, leaving out every line whose stripped text is in ``given``."""
    own = "\n".join(line for line in code.split("\n") if line.strip() not in given) if given else code
    bound = _bound_names(own) | _parameters(code)  # the parameters are named on the given `def` line
    # Tokenised whole, then a token that starts on a given line is left out: a docstring the course has since
    # changed stays one string token, where blanking its given lines first would leave its words as code.
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    skipped = [line.strip() in given for line in code.split("\n")]
    # no need to read the given lines before the first of the learner's own (the `def` line, the docstring)
    first = next((i for i, skip in enumerate(skipped) if not skip), len(skipped))
    out: list[Token] = []
    depth = 0
    previous = ""
    for m in TOKEN.finditer(code, starts[first] if first < len(starts) else len(code)):
        kind = m.lastgroup
        if kind is None:  # only whitespace or a comment was left at the end
            continue
        start, end = m.span(kind)
        if skipped[bisect.bisect_right(starts, start) - 1]:
            if m.group(kind) in _BLOCK_STARTS and (not out or out[-1][0] != BOUNDARY):
                out.append((BOUNDARY, start, start))  # a given `def` still ends the block before it
            continue
        text = m.group(kind)
        if kind == "op":
            if text in "([{":
                depth += 1
            elif text in ")]}" and depth:
                depth -= 1
            if text in _DROPPED_OPS:
                continue
        elif kind == "string":
            text = "S"
        elif kind == "name" and previous != "." and text in bound and not (depth and _is_keyword_argument(code, end)):
            text = "V"
        out.append((text, start, end))
        previous = text
    # a line or two: nothing to undo that could make it long enough to compare (and the tree costs 1 ms)
    return undo_rewrites(code, out) if len(out) >= REWRITE_FROM else out


def _is_keyword_argument(code: str, end: int) -> bool:
    """Whether the name ending at ``end`` is followed by a single ``=`` (``dim=-1``), not ``==``."""
    rest = code[end:end + 40].lstrip(" \t")
    return rest.startswith("=") and not rest.startswith("==")


_ASSIGNED = re.compile(r"(?:^|[;(,\s])([^\W\d]\w*)\s*(?:,\s*[^\W\d]\w*\s*)*(?:=(?!=)|[-+*/@%|&^]=|:=)")
_INTRODUCED = re.compile(r"\b(?:def|class|for|as|lambda|global|nonlocal)\s+([^\W\d]\w*(?:\s*,\s*[^\W\d]\w*)*)")
_PARAMETERS = re.compile(r"\bdef\s+\w+\s*\(([^)]*)\)")
_LAMBDA = re.compile(r"\blambda\b([^:]*):")
_NAME = re.compile(r"[^\W\d]\w*")


def _bound_names(code: str) -> set[str]:
    """Names the code binds: assigned (also in a tuple, ``a, b = ...``), augmented, ``for`` and ``with ... as``
    targets, ``def``/``class`` names and parameters. Read with regular expressions, not :mod:`ast`, so an
    answer that does not parse is read too, and fast; a name caught wrongly only loses a little signal."""
    names: set[str] = set()
    for m in _ASSIGNED.finditer(code):
        names.update(_NAME.findall(m.group(0).split("=")[0]))
    for pattern in (_INTRODUCED, _PARAMETERS, _LAMBDA):
        names |= _listed(pattern, code)
    return names - BUILTINS


def _listed(pattern: re.Pattern, code: str) -> set[str]:
    """The names each match of ``pattern`` lists in its group 1 (``a, b: int = 1``: a and b)."""
    names = set()
    for m in pattern.finditer(code):
        for part in m.group(1).split(","):
            head = _NAME.search(part.split(":")[0].split("=")[0])
            if head:
                names.add(head.group())
    return names


_IDS: dict[str, int] = {}  # token text -> its id, for the life of the process


def _parameters(code: str) -> set[str]:
    """The parameters of every ``def`` in ``code`` (given or not)."""
    return _listed(_PARAMETERS, code) - BUILTINS


def _token_id(text: str) -> int:
    found = _IDS.get(text)
    if found is None:
        found = _IDS[text] = zlib.crc32(text.encode())  # stable across runs, unlike hash()
    return found


def fingerprint(tokens: list[Token]) -> Fingerprints:
    """Winnowed k-gram hashes of ``tokens``, each ``def``/``class`` block apart (so their order does not count)."""
    hashes: set[int] = set()
    positions: dict[int, list[int]] = {}
    for first, last in _blocks(tokens):
        n = last - first
        if n < K:
            continue
        ids = np.fromiter((_token_id(t[0]) for t in tokens[first:last]), dtype=np.uint64, count=n)
        grams = np.zeros(n - K + 1, dtype=np.uint64)
        for j in range(K):  # a polynomial hash of each k-gram; uint64 wraps around, deterministically
            grams = grams * _BASE + ids[j:n - K + 1 + j]
        grams = (grams & np.uint64(_MASK)).astype(np.int64)
        chosen, where = winnow(grams, WINDOW, remove_duplicates=False)
        for h, i in zip(chosen.tolist(), where.tolist()):
            hashes.add(h)
            positions.setdefault(h, []).append(first + i)
    return Fingerprints(tuple(tokens), frozenset(hashes), {h: tuple(p) for h, p in positions.items()})


def _blocks(tokens: list[Token]) -> list[tuple[int, int]]:
    """(first, last) token index of each block: a new one starts at each ``def`` and ``class`` (and after a
    :data:`BOUNDARY`, which no block holds)."""
    cuts = [0] + [i for i, t in enumerate(tokens) if i and t[0] in _BLOCK_STARTS] + [len(tokens)]
    cuts += [i + 1 for i, t in enumerate(tokens) if t[0] == BOUNDARY]
    cuts = sorted(set(cuts))
    return [(a, b - (tokens[b - 1][0] == BOUNDARY)) for a, b in zip(cuts, cuts[1:])
            if b - (tokens[b - 1][0] == BOUNDARY) > a]


def shared_spans(fp: Fingerprints, hashes: frozenset[int] | set[int]) -> list[tuple[int, int]]:
    """Character spans of ``fp``'s answer covered by k-grams whose hash is in ``hashes``, merged, in order.

    The tokens as compared are not always in the answer's order (a temporary inlined where it is used), so
    each covered token is marked where it stands, and tokens next to each other in the answer are merged."""
    idx = np.array([i for h in hashes for i in fp.positions.get(h, ())], dtype=np.int64)
    if not len(idx):
        return []
    starts, ends = get_copied_slices(idx, K)  # token slices, copydetect's own merging
    covered = {fp.tokens[i][1:] for a, b in zip(starts.tolist(), ends.tolist()) for i in range(a, b)
               if fp.tokens[i][0] != BOUNDARY}
    order = sorted({t[1:] for t in fp.tokens if t[0] != BOUNDARY})  # every token, in the answer's order
    spans: list[tuple[int, int]] = []
    follows = False
    for span in order:
        if span in covered:
            if follows and span[0] >= spans[-1][1]:
                spans[-1] = (spans[-1][0], span[1])
            else:
                spans.append(span)
        follows = span in covered
    return spans
