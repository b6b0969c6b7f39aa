"""What confined a run, in words for people: the summary's and ``doctor``'s "Isolation in force" line and
what student code could still reach. Both are written from the fields of the engine's
:class:`~autograder.engine.Isolation` record; :func:`from_saved` also reads the text that results saved before the record
held (the only place that text is read back).
"""
from __future__ import annotations

from ...engine import Isolation

NBCLIENT = "none (nbclient fallback: a fresh Jupyter kernel in a scratch folder; no sandbox, no limits)"
UNKNOWN = "unknown"
BUBBLEWRAP = "bubblewrap (private filesystem, no network)"
NO_NAMESPACES = "resource limits only (no namespaces available here)"
ROOT = "root (nobody could not read the interpreter's files)"
RLIMITS = "rlimits (memory, CPU, processes, file size)"


def _facts(iso: Isolation) -> list[str]:
    """The sandbox's facts in the order it establishes them."""
    return [f for f, on in (("user namespace", iso.user_namespace), ("no network", iso.no_network),
                            ("private /tmp" + (", course hidden" if iso.course_hidden else ""), iso.private_tmp),
                            (ROOT, iso.runs_as_root), ("user nobody", iso.user_nobody),
                            ("no capabilities", iso.no_capabilities), (RLIMITS, iso.rlimits)) if on]


def describe_isolation(iso: Isolation) -> str:
    """One line: what was in force, e.g. "bubblewrap (private filesystem, no network) + user nobody + rlimits"."""
    if iso.kind == "none":
        return NBCLIENT
    if iso.kind != "sandbox":
        return UNKNOWN
    facts = _facts(iso)
    if not (iso.bubblewrap or iso.user_namespace or iso.no_network or iso.private_tmp):
        return NO_NAMESPACES + "".join(f" + {f}" for f in facts if f in (ROOT, "user nobody"))
    return " + ".join(([BUBBLEWRAP] if iso.bubblewrap else []) +
                      [f for f in facts if not (iso.bubblewrap and f == "no network")])


def not_isolated(iso: Isolation) -> list[str]:
    """What student code can still reach under ``iso``, for people."""
    gaps = []
    if not (iso.bubblewrap or iso.no_network):
        gaps.append("the network (student code can open connections)")
    if not (iso.bubblewrap or iso.private_tmp):
        gaps.append("your files (student code runs in a private folder but can read and write whatever your user "
                    "can: the course, the gradebook, your home folder)")
    if iso.runs_as_root:
        gaps.append("identity (student code runs as root: nobody could not read the Python installation)")
    elif not (iso.user_nobody or iso.no_capabilities or iso.user_namespace):
        gaps.append("identity (student code runs as you)")
    return gaps


def to_saved(iso: Isolation | None) -> dict | str:
    """The record as a saved result holds it ("" when nothing ran)."""
    return iso.to_json() if iso is not None else ""


def from_saved(value: object) -> Isolation | None:
    """A saved result's isolation: the record, or the text results held before it (its words, written by
    :func:`describe_isolation` then); None when nothing ran."""
    if isinstance(value, dict):
        return Isolation.from_json(value)
    text = str(value or "")
    if not text:
        return None
    if text == NBCLIENT:
        return Isolation(kind="none")
    parts = text.split(" + ")
    fields: dict[str, bool] = {}
    if parts[0] == NO_NAMESPACES:
        parts, fields["rlimits"] = parts[1:], True
    elif parts[0] == BUBBLEWRAP:
        parts, fields["bubblewrap"], fields["no_network"] = parts[1:], True, True
    known = {"user namespace": ("user_namespace",), "no network": ("no_network",), "private /tmp": ("private_tmp",),
             "private /tmp, course hidden": ("private_tmp", "course_hidden"), ROOT: ("runs_as_root",),
             "user nobody": ("user_nobody",), "no capabilities": ("no_capabilities",), RLIMITS: ("rlimits",)}
    if not all(p in known for p in parts):
        return Isolation(kind="unknown")
    return Isolation(**fields, **{name: True for p in parts for name in known[p]})
