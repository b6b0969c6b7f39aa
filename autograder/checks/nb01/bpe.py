"""Notebook 01's checks on byte-level BPE: train_bpe, bpe_encode and bpe_decode. The helpers model BPE and its
usual variants in plain Python, to name a wrong answer in a hint (never to decide the verdict)."""
from __future__ import annotations

import copy

from ..compare import Case, CheckFailure, call_with, const, equal
from .common import R, _pairs, check, known_values


def _merge(ids, pair, new_id, overlap=False):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 1 if overlap else 2
            if overlap and i < len(ids) - 1 and (ids[i], ids[i + 1]) != pair:
                i += 1
            continue
        out.append(ids[i])
        i += 1
    return out


def _train(data, n_merges, *, first_id=256, min_count=2, tie="first", recount=True):
    """byte-level BPE and its usual variants, for naming a wrong answer (hints only, never the verdict)."""
    ids, merges = list(data), []
    for k in range(n_merges):
        counts = _pairs(ids if recount else list(data))
        if not counts:
            break
        best = max(counts.values())
        tied = [p for p, c in counts.items() if c == best]
        pair = {"first": tied[0], "last": tied[-1], "smallest": min(tied)}[tie]
        if best < min_count:
            break
        new_id = first_id + k
        ids = _merge(ids, pair, new_id)
        merges.append((pair, new_id))
    return merges


def _encode(data, merges, *, order=1, chained=True):
    ids = list(data)
    for pair, new_id in merges[::order]:
        ids = _merge(ids if chained else list(data), tuple(pair), new_id)
    return ids


def replay_merges(text, n_merges, most_frequent_pair, merge_pair):
    """The reveal of predict_first_merges: n_merges rounds of the learner's own most_frequent_pair and merge_pair
    on the characters of text, each printed with the piece it made and the length left; returns the pieces, in
    order. It lives here, not in the notebook, so that the loop train_bpe asks for is not on screen before that
    exercise."""
    units = sorted(set(text))
    ids = [units.index(ch) for ch in text]
    for step in range(n_merges):
        pair = most_frequent_pair(ids)
        units.append(units[pair[0]] + units[pair[1]])
        ids = merge_pair(ids, pair, len(units) - 1)
        print(f"merge {step + 1}: {units[-1]!r:8} -> {len(ids)} tokens")
    return tuple(units[len(units) - n_merges:])


def _train_hints(data, n_merges):
    return [known_values(
        (lambda: _train(data, n_merges, first_id=max(data) + 1),
         "The new ids start right after the largest byte in the data: they must start at 256, because every "
         "id from 0 to 255 already stands for that byte, seen in this text or not."),
        (lambda: _train(data, n_merges, first_id=len(set(data))),
         "The new ids start at the number of distinct bytes: they must start at 256, because every id from "
         "0 to 255 already stands for that byte."),
        (lambda: _train(data, n_merges, first_id=255),
         "The first new id is 255, which is already the byte 0xff: new ids start at 256."),
        (lambda: _train(data, n_merges, min_count=1),
         "It goes on merging after nothing repeats: its last merges each join a pair that occurs only once in "
         "what the earlier merges left."),
        (lambda: _train(data, n_merges, min_count=3),
         "It stops too early: it leaves out a merge of a pair that occurs exactly twice."),
        (lambda: _train(data, n_merges, recount=False),
         "No merge builds on an earlier one: no learned pair holds a new token (256 or above), as if every "
         "round counted the pairs of the original bytes."),
        (lambda: _train(data, n_merges, tie="last"),
         "A tie went to the pair seen last: ties go to the pair that occurs first, as in most_frequent_pair."),
        (lambda: _train(data, n_merges, tie="smallest"),
         "A tie went to the smallest pair: ties go to the pair that occurs first, as in most_frequent_pair."),
    )]


@check
def train_bpe(hidden, rng):
    def case(data, n, note="", want=None):
        label = f"train_bpe({data[:24]!r}{'...' if len(data) > 24 else ''}, {n})" + (f": {note}" if note else "")
        want_fn = const(want) if want is not None else (lambda: R("train_bpe")(data, n))
        return Case(label, call_with(data, n), want_fn, equal(), hints=_train_hints(data, n))

    if not hidden:
        return [
            case(b"aaabdaaabac", 1, "(97, 97) occurs 4 times counted at every position; it becomes id 256",
                 [((97, 97), 256)]),
            case(b"aaabdaaabac", 10, "three merges, then no pair occurs twice: stop early",
                 [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]),
            case(b"abcd", 5, "no pair occurs twice: no merge at all", []),
            case(b"xyxzxz", 2, "(120, 122) occurs twice, every other pair once",
                 [((120, 122), 256)]),
        ]
    cases = []
    for n_bytes, alphabet, n in [(40, 3, 6), (120, 5, 20), (300, 8, 60)]:
        data = bytes(int(b) for b in rng.integers(97, 97 + alphabet, size=n_bytes))
        cases.append(case(data, n, f"{n_bytes} random bytes from {alphabet} letters"))
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    cases += [case(text, 12, "UTF-8 text with accents and an emoji"),
              case(bytes([255, 255, 0, 255, 255, 0]), 4, "the bytes 255 and 0"),
              case(b"", 3, "empty data"), case(b"zz", 0, "no merges asked for")]
    return cases


def _encode_hints(data, merges):
    text = None
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        pass
    return [known_values(
        (lambda: _encode(data, merges, chained=False),
         "Each merge was applied to the raw bytes: apply each merge to the result of the previous one."),
        (lambda: _encode(data, merges, order=-1),
         "The merges were applied in the wrong order: apply them in training order, first merge first, because "
         "a later merge is made of the tokens earlier merges created."),
        (lambda: _encode(data, merges[:1]),
         "Only the first merge was applied: apply every merge, in order."),
        (lambda: _encode([ord(c) for c in text], merges),
         "It starts from the characters' code points (ord(c)): byte-level BPE starts from the UTF-8 bytes, "
         "list(data), so 'é' is the two ids 195, 169 and no id is ever above 255 before merging."),
        (lambda: _overlapping_encode(data, merges),
         "Overlapping occurrences were merged: in each merge a token can be used once, so replace "
         "non-overlapping occurrences from left to right (that is what merge_pair does)."),
    )]


def _overlapping_encode(data, merges):
    ids = list(data)
    for pair, new_id in merges:
        out = []
        for i in range(len(ids)):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
                out.append(new_id)
            elif not (i > 0 and (ids[i - 1], ids[i]) == tuple(pair)):
                out.append(ids[i])
        ids = out
    return ids


AAA_MERGES = [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]


@check
def bpe_encode(hidden, rng):
    def case(data, merges, note="", want=None):
        label = f"bpe_encode({data[:24]!r}{'...' if len(data) > 24 else ''}, {len(merges)} merges)" + (
            f": {note}" if note else "")
        want_fn = const(want) if want is not None else (lambda: R("bpe_encode")(data, merges))
        return Case(label, call_with(data, merges), want_fn, equal(), hints=_encode_hints(data, merges))

    if not hidden:
        return [
            case(b"aaabdaaabac", AAA_MERGES, "the training text itself", [258, 100, 258, 97, 99]),
            case(b"aaab", AAA_MERGES, "merges in training order: (aa)ab, then ((aa)a)b, then (((aa)a)b)", [258]),
            case("bé".encode("utf-8"), AAA_MERGES, "'é' was never seen: it stays two bytes, 195 and 169",
                 [98, 195, 169]),
            case(b"aaaaa", AAA_MERGES, "(aa)(aa)a: then the second (aa) takes the last a", [256, 257]),
            case(b"", AAA_MERGES, "empty data", []),
        ]
    cases = []
    for n_bytes, alphabet, n in [(60, 3, 8), (200, 5, 30)]:
        train = bytes(int(b) for b in rng.integers(97, 97 + alphabet, size=n_bytes))
        merges = _train(train, n)  # inputs are built where the reference is absent too
        new = bytes(int(b) for b in rng.integers(96, 98 + alphabet, size=n_bytes // 2))
        cases.append(case(new, merges, f"new text, merges trained on {n_bytes} other random bytes"))
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    merges = _train(text, 15)
    cases += [case(text, merges, "the UTF-8 text the merges were trained on"),
              case("über naïve 👋 cafés".encode("utf-8"), merges, "new UTF-8 text"),
              case(b"xyz", [], "no merges: the bytes themselves"),
              # fixed, whatever the seed: a long run shows whether occurrences of a pair overlap
              case(b"baaaaaaab", AAA_MERGES, "a run of seven a's")]
    return cases


class same_bytes(equal):
    """bytes compared exactly; a decode that leaves merged ids behind is named, not just reported."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        try:
            super().__call__(got, want, case)
        except CheckFailure as failure:
            if got.raised and ("range(0, 256)" in got.message or "KeyError" in got.raised):
                raise CheckFailure(f"{failure} An id of 256 or more was left unexpanded: a merged id can stand "
                                   "for other merged ids, so expand recursively (or build each new id's bytes "
                                   "from its two parts' bytes, in training order, so the parts are already "
                                   "known).") from None
            raise

    def mismatch(self, got, want):
        if isinstance(got, tuple) and got and got[0] == "str":
            return (f"returned the str {got[1]!r}; return bytes. Turning bytes into text (.decode('utf-8')) "
                    "is a separate step, and not every byte string is valid UTF-8.")
        if isinstance(got, tuple) and got and got[0] not in ("bytes",):
            return f"expected bytes, got a {got[0]}: {got[1]}"
        if got == want:
            return None
        g, w = bytes(got[1]), bytes(want[1])
        return f"expected {w!r} ({len(w)} bytes), got {g!r} ({len(g)} bytes)."


def _as_bytes_result(value):
    """bytes are not evidence by themselves: send them as ('bytes', list of ints), anything else by its type."""
    if type(value) in (bytes, bytearray):
        return ("bytes", list(value))
    if type(value) is str:
        return ("str", value[:300])
    return (type(value).__name__, repr(value)[:200])


def _decode_hints(ids, merges):
    table = {i: bytes([i]) for i in range(256)}
    for (a, b), new in merges:
        table[new] = table[a] + table[b]

    def via_chars():
        return ("bytes", list("".join(chr(b) for i in ids for b in table[i]).encode("utf-8")))

    return [known_values(
        (via_chars, "A byte above 127 came back as two bytes (195 as 195 131): it looks as if each byte went "
                    "through a character, chr(i), encoded as UTF-8. Each id below 256 is one byte, not chr(i)."),
    )]


@check
def bpe_decode(hidden, rng):
    def case(ids, merges, note="", want=None):
        shown = ids if len(ids) <= 8 else f"{len(ids)} ids"
        label = f"bpe_decode({shown}, {len(merges)} merges)" + (f": {note}" if note else "")
        call = lambda fn: _as_bytes_result(fn(*copy.deepcopy((ids, merges))))
        want_fn = ((lambda: ("bytes", list(want))) if want is not None
                   else (lambda: _as_bytes_result(R("bpe_decode")(ids, merges))))
        return Case(label, call, want_fn, same_bytes(), hints=_decode_hints(ids, merges))

    if not hidden:
        return [
            case([258, 100, 258, 97, 99], AAA_MERGES, "258 is (257, b), 257 is (256, a), 256 is (a, a)",
                 b"aaabdaaabac"),
            case([256, 257], AAA_MERGES, "aa then aaa", b"aaaaa"),
            case([98, 195, 169], AAA_MERGES, "bytes below 256 stand for themselves: b'b\\xc3\\xa9' is 'bé'",
                 "bé".encode("utf-8")),
            case([], AAA_MERGES, "no ids", b""),
        ]
    text = "naïve café, naïve café: ünïcödé 👋👋 ünïcödé".encode("utf-8")
    merges = _train(text, 15)
    new = "über naïve 👋 cafés".encode("utf-8")
    ids = [int(i) for i in rng.integers(0, 256 + len(merges), size=25)]
    return [case(_encode(text, merges), merges, "the encoded training text"),
            case(_encode(new, merges), merges, "encoded new text"),
            case(ids, merges, "25 random ids, merged or not")]
