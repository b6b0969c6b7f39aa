"""The class run: ``grade`` from start to end, and ``doctor``. Uses the submission room and the output room.

- :mod:`.config` - every option of a class run and its default (:class:`.config.GradeConfig`);
- :mod:`.pipeline` - a class run from start to end, the only writer: what to grade again, the gradebook, the
  results, the CSVs and feedback (through the output room);
- :mod:`.schedule` - a class on a pool of workers (local threads or processes), references first;
- :mod:`.cluster` - the same on a Dask cluster (``--cluster``);
- :mod:`.progress` - the progress line;
- :mod:`.doctor` - ``python -m autograder doctor``: can this machine grade, and what is exposed.
"""
