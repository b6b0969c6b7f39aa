"""One submission: from its folder to its result. Imports nothing of the class run or of what it writes.

- :mod:`.discover` - the submissions in nbgrader's layout, what is wrong with a folder, which files travel;
- :mod:`.grade_one` - :func:`.grade_one.grade_one`, the one way to grade a notebook (sanitize -> execute ->
  judge), :func:`.grade_one.grade_job` for a class's job and :func:`.grade_one.run_reference`;
- :mod:`.sanitize` - the cells that run: the learner's, the course's tests in place of theirs
  (with :mod:`.needed`, which of the course's set-up cells a notebook needs);
- :mod:`.running` - how the grader runs cells on :mod:`autograder.engine`: the checks' harness, the modules
  each notebook preloads (``NOTEBOOK_IMPORTS``), the earlier solutions a run may import;
- :mod:`.judge` - each test's score from the run's evidence, and the one rule for an exercise's status
  (with :mod:`.interrupted`: where a timed-out cell was stopped);
- :mod:`.autograded` - the notebook as it ran, with verdicts, for formgrader;
- :mod:`.records` - what a submission is graded against (:class:`.records.Reference`) and the job that
  travels to a worker (:class:`.records.Job`);
- :mod:`.results` - the result of grading one submission (:class:`.results.SubmissionResult`), as a worker
  returns it, as saved in ``results/<student>/<assignment>.json`` and as the gradebook has it;
- :mod:`.isolation` - what confined a run, in words for people (and those words read back from old results).
"""
