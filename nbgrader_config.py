# nbgrader's configuration for this course: the repository is the course directory.
#
# source/NN_slug/NN_slug.ipynb are links to solutions/NN_slug.ipynb, made by
# `python -m autograder release` (edit the solutions, never the links). nbgrader's own commands
# (generate_assignment, release_assignment, collect, autograde, generate_feedback,
# release_feedback, export, formgrader) run from this folder; `python -m autograder grade submitted`
# grades the class into the same gradebook and autograded/ folder. See docs/grading.md.
import os

from autograder.engine import Limits
from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput,
                                    ClearSolutions, ComputeChecksums, IncludeHeaderFooter, InstantiateTests,
                                    LockCells, SaveCells)

from autograder.bug_hunt import ShowBugs
from autograder.release import STUB

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

# The course id students fetch with; set AUTOGRADER_COURSE_ID, or write your own here.
c.CourseDirectory.course_id = os.environ.get("AUTOGRADER_COURSE_ID", "transformer-math")
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
# The gradebook is the record: formgrader's manual scores and comments live here too.
c.CourseDirectory.db_url = os.environ.get(
    "AUTOGRADER_DB_URL", "sqlite:///" + os.path.join(c.CourseDirectory.root, "gradebook.db"))

# The exchange students fetch from and submit to (nbgrader's default; a folder every user can write,
# mode 1777, on the JupyterHub server). NBGRADER_EXCHANGE moves it, e.g. for a test.
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")

# The same stub as the course's own release, so both ways of releasing give the same student notebook.
c.ClearSolutions.code_stub = {"python": STUB}
# nbgrader's own generate_assignment steps, with ours after ClearSolutions: a bug hunt's student cell shows
# the buggy code to fix, not the stub (autograder/bug_hunt.py), exactly as `python -m autograder release` does.
c.GenerateAssignment.preprocessors = [
    IncludeHeaderFooter, InstantiateTests, LockCells, ClearSolutions, ShowBugs, ClearOutput, CheckCellMetadata,
    ComputeChecksums, SaveCells, ClearHiddenTests, ClearMarkScheme, ComputeChecksums, CheckCellMetadata]
# Seconds a cell may run under `nbgrader autograde` (nbgrader sets NBGRADER_EXECUTION there, so notebook
# 10's training runs its short version).
c.ExecutePreprocessor.timeout = Limits().kernel_timeout()  # 30, the grader's own default (and stock nbgrader's)

# Late submissions, as nbgrader decides them: a due date per assignment (formgrader's "Manage
# Assignments", or `nbgrader db assignment add NAME --duedate=...`), submission times from each
# submission's timestamp.txt, and this plugin's penalty ("none" or "zero"; or your own plugin class).
c.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"
c.LateSubmissionPlugin.penalty_method = os.environ.get("AUTOGRADER_LATE_PENALTY", "none")
