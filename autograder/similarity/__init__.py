"""``python -m autograder similarity``: answers that look alike across a class, exercise by exercise.

- :mod:`.answers` - the class's answers and what the course gave (stubs, given lines);
- :mod:`.fingerprints` - one answer as compared: names, comments, layout and function order normalised,
  winnowed k-grams (copydetect's winnowing);
- :mod:`.compare` - the pairs alike on one exercise, from an inverted index, and the chance of it;
- :mod:`.run` - :func:`.run.find_similar`, the whole class, in parallel;
- :mod:`.records` - what was found, as the report, CSV and JSON carry it (light: the class report reads it);
- :mod:`.section` and :mod:`.pages` - the report's section, the side-by-side pages, the CSV.

Nothing is imported here, so the class report loads :mod:`.records` without numpy or copydetect.
"""
