"""The nbgrader course a class is graded into, read from its ``nbgrader_config.py``.

When SUBMISSIONS is a course's ``submitted/`` folder (the folder ``nbgrader collect`` fills, beside
the course's ``nbgrader_config.py``), ``grade`` works as a stage of that course: its gradebook, its
course id, its ``autograded/`` folder for formgrader and ``generate_feedback``, and its late-
submission plugin. Anywhere else the run keeps everything in ``--out``.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import BasePlugin, LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from nbgrader.utils import parse_utc
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from ..submission.discover import read_regular

CONFIG_NAME = "nbgrader_config.py"
TIMESTAMP_NAME = "timestamp.txt"


@dataclass
class Course:
    root: Path
    course_id: str
    db_url: str
    autograded: Path  # autograded/<student>/<assignment>/<assignment>.ipynb go here
    late_plugin: BasePlugin


def load_config(folder: Path) -> Config:
    loader = PyFileConfigLoader(CONFIG_NAME, path=str(folder))
    return loader.load_config()


def find_course(submissions: Path) -> Course | None:
    """The course whose submitted folder ``submissions`` is, or None."""
    folder = submissions.resolve().parent
    if not (folder / CONFIG_NAME).is_file():
        return None
    config = load_config(folder)
    coursedir = CourseDirectory(config=config)
    if not coursedir.root or Path(coursedir.root).resolve() != folder:
        coursedir.root = str(folder)
    if submissions.resolve().name != coursedir.submitted_directory:
        return None
    return Course(root=folder, course_id=coursedir.course_id, db_url=coursedir.db_url,
                  autograded=folder / coursedir.autograded_directory, late_plugin=late_plugin(config))


def late_plugin(config: Config | None = None) -> BasePlugin:
    """The late-submission plugin nbgrader's ``autograde`` would use with this configuration."""
    assign = AssignLatePenalties(config=config or Config())
    assign.init_plugin()
    return assign.plugin_inst or LateSubmissionPlugin()


def read_timestamp(folder: Path) -> datetime.datetime | None:
    """nbgrader's submission time (``timestamp.txt``, written by ``submit`` and kept by ``collect``), in UTC."""
    path = folder / TIMESTAMP_NAME
    try:  # a link or a FIFO in a student's folder is refused (Refused is an OSError), never followed or waited on
        text = read_regular(path, limit=4096).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text:
        return None
    try:
        return parse_utc(text)
    except (ValueError, OverflowError):
        return None


def late_penalty(plugin: BasePlugin, student_id: str, score: float, seconds_late: float) -> float | None:
    """The plugin's penalty, kept between 0 and the score, as nbgrader's ``AssignLatePenalties`` keeps it."""
    if seconds_late <= 0:
        return None
    penalty = plugin.late_submission_penalty(student_id, score, seconds_late)
    if penalty is None:
        return None
    return min(max(float(penalty), 0.0), float(score))
