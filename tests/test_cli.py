"""Does bad input to the command line get one clear line and a non-zero exit?"""
import subprocess
import sys


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_validate_a_missing_file_says_so_in_one_line(tmp_path):
    r = run("validate", str(tmp_path / "nope.ipynb"))
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: {tmp_path / 'nope.ipynb'}: no such file"


def test_validate_a_file_that_is_not_json_says_where(tmp_path):
    bad = tmp_path / "04_softmax_and_probability.ipynb"
    bad.write_text('{"cells": [oops')
    r = run("validate", str(bad))
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1
    assert "not valid JSON (line 1, column 12" in r.stderr


def test_validate_json_that_is_not_a_notebook(tmp_path):
    bad = tmp_path / "x.ipynb"
    bad.write_text("[1, 2, 3]")
    r = run("validate", str(bad))
    assert r.returncode == 1 and "not a Jupyter notebook" in r.stderr


def test_unknown_command_is_a_usage_error():
    r = run("frobnicate")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_help_lists_the_commands():
    r = run("--help")
    assert r.returncode == 0 and "release" in r.stdout and "validate" in r.stdout


def test_reading_a_notebook_does_not_build_the_iri_parsers():
    """Importing nbformat used to cost about 2 core-seconds in every grade, validate and nbgrader process: jsonschema
    4.25+ builds rfc3987-syntax's parsers at import. requirements.txt pins the jsonschema before that."""
    code = "import sys, nbformat, nbgrader.apps; print(sorted(m for m in sys.modules if m.startswith(('rfc3987', 'lark'))))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", f"importing nbformat and nbgrader loaded {r.stdout.strip()}: see jsonschema in requirements.txt"
