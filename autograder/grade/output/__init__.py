"""What a class run writes, from the results of the submission room (which it only reads).

- :mod:`.report` - saved results (``results/<student>/<assignment>.json``), the CSVs, the summary;
- :mod:`.gradebook` - nbgrader's gradebook (with :mod:`.course`: the nbgrader course a class is graded into,
  its late-submission plugin and timestamps);
- :mod:`.feedback` - each learner's feedback page;
- :mod:`.classreport` - the class report page (with :mod:`.classrows`: its per-student rows and troubles);
- :mod:`.items` - each test's item analysis;
- :mod:`.alike` - what ``similarity`` found (its saved records) and the report's section on it;
- :mod:`.costs` - where a run's CPU went (``--profile``).
"""
