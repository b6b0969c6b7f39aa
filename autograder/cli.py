"""``python -m autograder``: a thin command line over keyword-only functions."""
from __future__ import annotations

import argparse
import gc
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


def _similarity(args: argparse.Namespace) -> int:
    from .similarity.pages import too_short_lines, write_outputs  # late: numpy and copydetect, unlike the rest
    from .similarity.answers import CourseError  # late: see above
    from .similarity.run import SimilarityUsageError, find_similar  # late: see above

    out = args.out or args.submissions.resolve().parent / f"{args.submissions.resolve().name}-graded"
    try:
        result = find_similar(args.submissions, assignments=tuple(args.assignment or ()),
                              students=tuple(args.student or ()), min_exercises=args.min_exercises, jobs=args.jobs)
    except (SimilarityUsageError, CourseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    written = write_outputs(out, result, args.submissions)
    compared = sum(t.answered for t in result.exercises)
    print(f"Compared {compared} answers of {result.students} students in {len(result.exercises)} exercises "
          f"in {result.seconds:.1f} s.")
    print("\n".join(too_short_lines(result)) or "No answer was too short to compare.")
    print(f"{len(result.pairs)} pair(s) alike on {result.min_exercises} or more exercises"
          + (":" if result.pairs else "."))
    for p in result.pairs[:20]:
        print(f"  {p.a} and {p.b}: {len(p.shared)} of {p.both_answered} exercises (by chance: {p.expected:.2f})")
    if len(result.pairs) > 20:
        print(f"  ... and {len(result.pairs) - 20} more in {written.csv}")
    for u in result.unread:
        print(f"not compared: {u.student} {u.assignment}: {u.why}")
    print(f"Alike is not proof of copying: read both answers side by side ({written.page}) before you act. "
          f"Written: {written.csv}, {written.page}; report.html shows it from the next `grade`.")
    return 0


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one user, e.g. alice,bob")
    return names


def _hub(args: argparse.Namespace) -> int:
    from . import hub  # late: see above

    extra = args.jupyterhub_args[1:] if args.jupyterhub_args[:1] == ["--"] else args.jupyterhub_args
    try:
        if args.test:
            for option in ("course", "image", "students_group", "exchange", "state"):
                if getattr(args, option):
                    raise hub.HubError(f"--{option.replace('_', '-')} is for a real term; a test term makes its "
                                       "own under --dir")
            term = hub.prepare_test_term(args.dir, instructor=(args.instructor or [hub.TEST_INSTRUCTOR])[0],
                                         students=args.students or hub.TEST_STUDENTS, port=args.port, ip=args.ip,
                                         password=args.password or "")
            who = ", ".join((*term.instructors, *term.students))
            print(f"Test term on http://{term.ip}:{term.port}/ : log in as {who} with the password {term.password}\n"
                  f"instructor: formgrader at http://{term.ip}:{term.port}/user/{term.instructors[0]}/formgrader ; "
                  f"the course is {term.course}. Ctrl-C stops the Hub and every server.", flush=True)
        else:
            missing = [o for o in ("course", "instructor", "image") if not getattr(args, o)]
            if missing:
                raise hub.HubError("a real term needs " + ", ".join(f"--{m}" for m in missing)
                                   + " (or try --test for a test term)")
            if args.password:
                raise hub.HubError("--password is for a test term; a real term logs in with the server's "
                                   "accounts (PAM)")
            term = hub.prepare_term(course=args.course, instructors=tuple(args.instructor), image=args.image,
                                    students=args.students or (), students_group=args.students_group or "",
                                    exchange=args.exchange or Path("/srv/nbgrader/exchange"),
                                    state=args.state or Path("/srv/jupyterhub"), ip=args.ip, port=args.port)
            print(f"JupyterHub for {term.course} on http://{term.ip}:{term.port}/", flush=True)
        hub.start(term, extra)
    except hub.HubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0  # not reached: start() becomes JupyterHub


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

    p = sub.add_parser("similarity", help="pairs of students whose answers look alike on several exercises",
                       description="Compare every pair of students' answers, exercise by exercise, with the "
                                   "course's stubs and given lines left out and names, comments, layout and the order "
                                   "of functions set aside; name the pairs alike on --min-exercises or more. Writes "
                                   "similarity.csv, similarity.html and a side-by-side page per pair into --out; "
                                   "report.html shows them from the next `grade`. It finds similarity, not guilt.")
    p.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                   help="the class in nbgrader's layout: SUBMISSIONS/<student_id>/<assignment_id>/")
    p.add_argument("--out", type=Path, help="output folder (default: SUBMISSIONS-graded beside SUBMISSIONS, as grade)")
    p.add_argument("--assignment", action="append", metavar="ID", help="only this assignment (repeat for several)")
    p.add_argument("--student", action="append", metavar="ID", help="only these students (repeat for several)")
    p.add_argument("--min-exercises", type=int, default=3, metavar="N",
                   help="name a pair when its answers are alike on at least N exercises (default 3)")
    p.add_argument("--jobs", type=int, help="parallel processes (default: the number of cores)")
    p.set_defaults(run=_similarity)

    p = sub.add_parser("hub", help="run a term on JupyterHub (as root): --test for a test term on this machine",
                       description="Start JupyterHub for the course: instructors' servers run the course with "
                                   "formgrader, students' servers run the students' image (the course from its "
                                   "wheel, no solutions) with the assignment list and Validate. A real term logs "
                                   "in with the server's accounts (PAM); --test makes a test term (users, a copy "
                                   "of the course, an exchange, a students' image) under --dir with one shared "
                                   "password. Arguments after -- go to jupyterhub. See docs/grading.md.")
    p.add_argument("--test", action="store_true", help="a test term: make the users, course, exchange and image")
    p.add_argument("--dir", type=Path, default=Path("/srv/transformer-math/test-term"),
                   help="a test term's folder (default /srv/transformer-math/test-term)")
    p.add_argument("--password", help="a test term's shared password (default: a random one, printed)")
    p.add_argument("--course", type=Path, help="the course folder (with nbgrader_config.py)")
    p.add_argument("--instructor", action="append", metavar="USER",
                   help="an instructor's Unix user (repeat for more); a test term's default is tm-instructor")
    p.add_argument("--students", type=_names, metavar="USER,USER",
                   help="students allowed to log in; a test term's default is tm-student1,tm-student2")
    p.add_argument("--students-group", metavar="GROUP", help="or: every member of this Unix group")
    p.add_argument("--image", type=Path, metavar="PREFIX", help="the students' image (a virtualenv)")
    p.add_argument("--exchange", type=Path, help="nbgrader's exchange (default /srv/nbgrader/exchange)")
    p.add_argument("--state", type=Path, help="the Hub's own files (default /srv/jupyterhub)")
    p.add_argument("--ip", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to serve on (default 8000)")
    p.add_argument("jupyterhub_args", nargs=argparse.REMAINDER, metavar="-- JUPYTERHUB-ARGS")
    p.set_defaults(run=_hub)
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


def run() -> int:
    """The program (``autograder`` and ``python -m autograder``): :func:`main` on ``sys.argv``, then an exit
    that skips the interpreter's last garbage collections. Those go through every object the command
    made (nbgrader, SQLAlchemy, a class's results) for nothing: everything is written and closed by now,
    and the process is ending. They cost a grade of 96 submissions half a second on one core, with the
    other idle. Frozen objects are freed as usual when their modules go; only reference cycles among
    them are left to the end of the process."""
    code = main()
    gc.freeze()
    return code
