"""Grading: ``python -m autograder grade`` (docs/grading.md is the guide).

Three rooms, each a package, and the command at the top. Imports go downward only: :mod:`.cli` uses the
class run, the class run uses what it writes and the submission room, what it writes reads the submission
room's results, and the submission room runs cells on :mod:`autograder.engine` (a generic cell runner
beside this package, which knows nothing of the grader).

- :mod:`.cli` - the ``grade`` and ``doctor`` commands' arguments; starts the warm interpreters early;
- :mod:`.classrun` - a class run from start to end: its options (:mod:`.classrun.config`), the class on a
  pool of workers (:mod:`.classrun.schedule`, or a Dask cluster, :mod:`.classrun.cluster`), the run itself and
  the only writer (:mod:`.classrun.pipeline`), its progress line and ``doctor``;
- :mod:`.output` - what a class run writes: the saved results and CSVs (:mod:`.output.report`), the gradebook
  (:mod:`.output.gradebook`, in the nbgrader course of :mod:`.output.course`), the feedback pages
  (:mod:`.output.feedback`), the class report (:mod:`.output.classreport`, :mod:`.output.classrows`, each
  test's item analysis from :mod:`.output.items`) and the ``--profile`` costs (:mod:`.output.costs`);
- :mod:`.submission` - one submission, in the order it meets them: its folder (:mod:`.submission.discover`),
  :func:`.submission.grade_one.grade_one`, the one way to grade a notebook (sanitize -> execute -> judge),
  used by class grading, ``validate`` and Dask workers; the stages (:mod:`.submission.sanitize`,
  :mod:`.submission.running`, :mod:`.submission.judge`), the records passed between them
  (:mod:`.submission.records`) and the result (:mod:`.submission.results`): a graded submission as saved
  and as the gradebook has it, with the one rule for "an exercise passed" that every output reads.

:class:`UsageError` lives here: every room may say that what it was asked is wrong.
"""


class UsageError(ValueError):
    """Bad arguments or a missing SUBMISSIONS folder: a one-line message, exit status 2."""
