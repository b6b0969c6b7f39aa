"""Does ``python -m autograder hub`` refuse what cannot work, saying what to do, and does a real term's
login (PAM, the server's own accounts) work here? The term itself, in a browser: tests/course/test_hub.py."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
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


def test_a_students_image_starts_jupyterlab_without_the_news_question(tmp_path):
    """The image's overrides.json turns JupyterLab's news feed and update notices off, keeps what it held
    already, and names a plugin and values the installed JupyterLab's schema accepts."""
    import jsonschema

    from autograder import hub

    image = tmp_path / "image"
    overrides = image / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True)
    overrides.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    hub.configure_image(image, course_id="transformer-math", exchange=tmp_path / "exchange")
    written = json.loads(overrides.read_text())
    assert written == {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
                       "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                                       "checkForUpdates": False}}
    assert overrides.stat().st_mode & 0o777 == 0o644
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    for plugin, values in hub.STUDENTS_LAB_SETTINGS.items():
        package, _, name = plugin.partition(":")
        schema = json.loads((schemas / package / f"{name}.json").read_text())
        jsonschema.validate(values, schema)  # a setting JupyterLab does not know would be dropped, unseen
        assert set(values) <= set(schema["properties"])


def test_the_test_images_jupyterlab_settings_are_its_own(tmp_path):
    """The test image links the installation's JupyterLab, but its settings folder is its own: the students'
    settings never land in the instructors' installation. An image whose lab folder leads out is refused."""
    from autograder import hub

    installed = tmp_path / "installed" / "share" / "jupyter"
    for part in ("lab/static", "lab/schemas", "lab/settings", "kernels/python3"):
        (installed / part).mkdir(parents=True)
    (installed / "lab" / "settings" / "page_config.json").write_text("{}")
    image = tmp_path / "image"
    hub._link_jupyter_data(image / "share" / "jupyter", installed)
    lab = image / "share" / "jupyter" / "lab"
    assert not lab.is_symlink() and (lab / "static").is_symlink()
    assert (image / "share" / "jupyter" / "kernels").is_symlink()
    assert not (lab / "settings").is_symlink() and (lab / "settings" / "page_config.json").exists()
    hub.configure_image(image, course_id="transformer-math", exchange=tmp_path / "exchange")
    assert (lab / "settings" / "overrides.json").exists()
    assert sorted(p.name for p in (installed / "lab" / "settings").iterdir()) == ["page_config.json"]

    linked = tmp_path / "linked-image"
    (linked / "share" / "jupyter").mkdir(parents=True)
    (linked / "share" / "jupyter" / "lab").symlink_to(installed / "lab")
    with pytest.raises(hub.HubError, match=r"leads out of the students' image"):
        hub.configure_image(linked, course_id="transformer-math", exchange=tmp_path / "exchange")
    assert not (installed / "lab" / "settings" / "overrides.json").exists()


def test_root_owned_build_leftovers_in_a_course_go_back_to_its_owner(tmp_path):
    """What `sudo pip wheel .` leaves in an instructor's course (build/, dist/, *.egg-info) is given to the
    course's owner when the Hub starts; the rest of the course, and a course root owns, stay as they are."""
    import pwd

    from autograder import hub
    from tests.course.unix import ensure_user

    if os.geteuid() != 0:
        pytest.skip("makes root's files in a user's folder: run as root")
    ensure_user(TEACHER)
    owner = pwd.getpwnam(TEACHER)
    course = tmp_path / "course"
    for folder in ("build/lib/autograder", "dist", "transformer_math_autograder.egg-info", "solutions"):
        (course / folder).mkdir(parents=True)
    (course / "dist" / "transformer_math_autograder-0.1.0-py3-none-any.whl").write_text("")
    (course / "transformer_math_autograder.egg-info" / "PKG-INFO").write_text("")
    os.chown(course, owner.pw_uid, owner.pw_gid)
    said = []
    given = hub.give_back_builds(course, out=said.append)
    assert sorted(p.name for p in given) == ["build", "dist", "transformer_math_autograder.egg-info"]
    for path in course.rglob("*"):
        expected = 0 if path.parts[-1] == "solutions" else owner.pw_uid
        assert path.lstat().st_uid == expected, path
    assert len(said) == 3 and all(f"given to {TEACHER}" in line for line in said), said
    assert hub.give_back_builds(course, out=said.append) == []  # nothing left to give
    os.chown(course, 0, 0)
    (course / "build" / "again").mkdir()
    assert hub.give_back_builds(course, out=said.append) == []  # root's own course: root's builds are in place


def test_a_checkout_the_installation_imports_from_is_checked_like_the_course():
    """The instructors' installation reads the course's code from its checkout (pip install -e .): when that
    is another folder than the course, the Hub warns for its solutions others can read, with the fix."""
    from autograder import hub

    base = Path(tempfile.mkdtemp(prefix="ag-checkout-"))  # under /tmp, which every user passes through
    try:
        base.chmod(0o755)
        checkout, course = base / "checkout", base / "course"
        for folder in (checkout / "solutions", course / "solutions"):
            folder.mkdir(parents=True, mode=0o755)
            folder.chmod(0o755)
        checkout.chmod(0o755)
        warnings = hub.checkout_exposures(course, checkout)
        assert any(f"the course's installation imports from {checkout}; the solutions" in w
                   and f"Fix: chmod -R o-rwx {checkout / 'solutions'}" in w for w in warnings), warnings
        assert hub.checkout_exposures(checkout, checkout) == []  # the course itself: checked with the rest of it
        assert hub.checkout_exposures(course, None) == []  # an installation from the wheel
        (checkout / "solutions").chmod(0o700)
        checkout.chmod(0o750)
        assert hub.checkout_exposures(course, checkout) == []
    finally:
        shutil.rmtree(base)
