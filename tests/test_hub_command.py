"""Does ``python -m autograder hub`` refuse what cannot work, saying what to do, and does a real term's
login (PAM, the server's own accounts) work here? The term itself, in a browser: tests/course/test_hub.py."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import free_port

pytestmark = pytest.mark.hub
TEACHER = "ag_hubteacher"


def test_a_real_term_logs_in_with_the_servers_own_passwords(tmp_path):
    """The real term's configuration is PAM: a Unix user's password lets them in, a wrong one does not."""
    import asyncio
    import pwd

    from traitlets.config import Config
    from jupyterhub.auth import PAMAuthenticator

    from autograder import hub
    from tests.course.unix import ensure_user

    if os.geteuid() != 0:
        pytest.skip("sets a Unix user's password: run as root")
    user, password = "ag_hubpam", "pam-" + secrets.token_hex(8)
    ensure_user(user)
    c = Config()
    term = hub.Term(course=tmp_path, exchange=tmp_path, image=tmp_path, staff_python=Path(sys.executable),
                    state=tmp_path, instructors=(TEACHER,), students=(user,))
    hub.configure(c, term, hub_port=free_port(), proxy_api_port=free_port())
    assert c.JupyterHub.authenticator_class == "pam"
    subprocess.run(["chpasswd"], input=f"{user}:{password}", text=True, check=True)
    try:
        auth = PAMAuthenticator(config=c)
        assert asyncio.run(auth.get_authenticated_user(None, {"username": user, "password": password}))["name"] == user
        assert asyncio.run(auth.get_authenticated_user(None, {"username": user, "password": password + "x"})) is None
        assert pwd.getpwnam(user)
    finally:
        subprocess.run(["usermod", "--lock", user], check=True)  # the password stops working


def test_the_hub_command_says_what_a_term_needs(capsys):
    from autograder.cli import main

    assert main(["hub"]) == 2
    assert "a real term needs --course, --instructor, --image (or try --test" in capsys.readouterr().err
    assert main(["hub", "--test", "--course", "/tmp"]) == 2
    assert "--course is for a real term" in capsys.readouterr().err
    assert main(["hub", "--course", "/tmp", "--instructor", "x", "--image", "/tmp", "--password", "p"]) == 2
    assert "--password is for a test term" in capsys.readouterr().err


def test_a_test_term_as_an_ordinary_user_says_to_use_root(monkeypatch, tmp_path):
    from autograder import hub

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(hub.HubError, match=r"runs as root: JupyterHub starts each user's server as that Unix user"):
        hub.prepare_test_term(tmp_path)


def test_a_python_other_users_cannot_run_is_refused_with_the_install_that_works(tmp_path):
    from autograder import hub

    if os.geteuid() != 0:
        pytest.skip("a test term needs root")
    if hub.runs_for_everyone(sys.executable):
        pytest.skip(f"{sys.executable} is one every user can run")
    with pytest.raises(hub.HubError, match=r"other users cannot run this Python .* /usr/bin/python3 -m venv"):
        hub.prepare_test_term(tmp_path / "term")
    assert not (tmp_path / "term").exists()  # refused before making anything
