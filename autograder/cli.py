"""``python -m autograder``: a thin command line over keyword-only functions."""
from __future__ import annotations

import argparse
import os
import sys
import sysconfig
from pathlib import Path

from .grade.cli import EXIT_USAGE, add_grade_parser
from .nbio import NotebookError


# Each command imports its module when it runs: release pulls in nbgrader, validate nbclient, site
# nbconvert (a second or more each), which `--help` and the other commands do not need.

def _release(args: argparse.Namespace) -> int:
    from .release import release  # late: see above

    result = release(check=args.check)
    if args.check:
        for path in result.stale:
            print(f"out of date: {path} (run `python -m autograder release`)", file=sys.stderr)
        if not result.stale:
            print(f"{len(result.unchanged)} student notebooks are up to date.")
        return 1 if result.stale else 0
    for path in result.written:
        print(f"wrote {path}")
    for path in result.stale:
        print(f"warning: {path} has no solution in solutions/; remove it or add its source", file=sys.stderr)
    print(f"{len(result.written)} written, {len(result.unchanged)} already up to date.")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from .validate import validate  # late: see above

    for path in args.notebooks:
        if not path.exists():
            raise NotebookError(f"{path}: no such file")
    return validate(notebooks=args.notebooks, timeout=args.timeout)


def _site(args: argparse.Namespace) -> int:
    from .website import SiteToolMissing, SiteUsageError, build_site  # late: see above

    try:
        site = build_site(out=args.out)
    except SiteUsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SiteToolMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"built {len(site.pages)} pages into {site.out} in {site.seconds:.1f} s ({site.bytes / 2**20:.1f} MiB); "
          f"open {site.out / 'index.html'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="Release, self-check and grade the Transformer-math notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("release", help="regenerate notebooks/ from solutions/ through nbgrader")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 naming any out-of-date notebook")
    p.set_defaults(run=_release)

    p = sub.add_parser("validate", help="run your notebook and see, per exercise, passed / failed / not attempted")
    p.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK")
    p.add_argument("--timeout", type=float, default=120, help="seconds a cell may run (default 120)")
    p.set_defaults(run=_validate)

    p = sub.add_parser("site", help="build the course's static website from notebooks/ (never solutions/)",
                       description="Render every student notebook with its math, a contents page in prerequisite "
                                   "order and the README's figures into DIR; works offline (MathJax is copied in).")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to build the site into")
    p.set_defaults(run=_site)

    add_grade_parser(sub)
    return parser


def _interpreter_bin_on_path() -> None:
    """nbgrader shells out to ``alembic``: find it where this interpreter's scripts are, even when no venv
    is active: beside the interpreter, in the installation's scripts folder (a venv with system
    site-packages keeps them in its base), or in the user's (``pip install --user``)."""
    found = [os.path.dirname(sys.executable), sysconfig.get_path("scripts"),
             sysconfig.get_path("scripts", vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})]
    try:
        found.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    path = os.environ.get("PATH", "").split(os.pathsep)
    extra = [d for d in dict.fromkeys(found) if d and os.path.isdir(d) and d not in path]
    if extra:
        os.environ["PATH"] = os.pathsep.join(extra + path)


def main(argv: list[str] | None = None) -> int:
    _interpreter_bin_on_path()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except NotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
