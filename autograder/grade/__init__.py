"""Grading: ``python -m autograder grade`` (docs/grading.md is the guide).

A map, in the order a submission meets them:

- :mod:`.config` - every option of a class run and its default (:class:`.config.GradeConfig`);
- :mod:`.discover` - the submissions in nbgrader's layout and what is wrong with a folder;
- :mod:`.submission` - :func:`.submission.grade_one`, the one way to grade a notebook
  (sanitize -> execute -> judge), used by class grading, ``validate`` and Dask workers;
- :mod:`.sanitize`, :mod:`.engine`, :mod:`.judge` - the stages themselves. The engine is a package:
  its contract (:mod:`.engine.contract`: what a run is asked and answers, in one JSON form), the pool
  of warm parents (:mod:`.engine.pool`), the warm parent (:mod:`.engine.warm`), each run's attempts
  (:mod:`.engine.supervisor`), the forked processes that run student code (:mod:`.engine.child`: the
  warden and the cell runner, confined by :mod:`.engine.sandbox`, in the shell of
  :mod:`.engine.shell`), how they talk (:mod:`.engine.frames`) and a plain-kernel fallback
  (:mod:`.engine.fallback`);
- :mod:`.records` - the records passed between them (:class:`.records.Job`,
  :class:`.records.Reference`, :class:`.records.SubmissionResult`);
- :mod:`.results` - a graded submission as saved and as the gradebook has it
  (:class:`.results.FinalResult`), and the one rule for "an exercise passed" (:class:`.results.Exercise`,
  on :func:`.judge.exercise_status`) that every output below reads;
- :mod:`.schedule` - a class on a pool of workers (or :mod:`.cluster`, a Dask cluster);
- :mod:`.pipeline` - a class run from start to end, the only writer: results, the gradebook
  (:mod:`.gradebook`), the CSVs and feedback (:mod:`.report`, :mod:`.feedback`, :mod:`.classreport`, with each test's item analysis from :mod:`.items`).
"""
