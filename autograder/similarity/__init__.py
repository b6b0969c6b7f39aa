"""``python -m autograder similarity``: answers that look alike across a class, exercise by exercise.

- :mod:`.answers` - the class's answers and what the course gave (stubs, given lines);
- :mod:`.fingerprints` - one answer as compared: names, comments, layout and function order normalised,
  winnowed k-grams (copydetect's winnowing);
- :mod:`.normalise` - what the syntax tree sees through: temporaries, the order of terms, ``+=``, docstrings;
- :mod:`.compare` - the pairs alike on one exercise, from an inverted index, and the chance of it;
- :mod:`.run` - :func:`.run.find_similar`, the whole class, in parallel;
- :mod:`.pages` - the side-by-side pages, the CSV, ``similarity.html``.

What was found (the records saved as ``similarity.json``) and the section that shows it live below this
package, in :mod:`autograder.grade.output.alike`: the class report reads them there without importing this
package (numpy, copydetect), and no import runs from the grader up to here.
"""
