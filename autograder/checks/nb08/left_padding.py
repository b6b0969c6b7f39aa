"""Notebook 08's prediction on left padding: how many query rows of a left-padded batch keep no key."""
from __future__ import annotations

from ..questions import int_in, is_
from ..compare import equal
from .common import ask

predict_left_pad_empty_rows = ask(
    "predict_left_pad_empty_rows", reason=True,
    label="predict_left_pad_empty_rows(): the query rows that keep no key when lengths [3, 1, 4] are padded at the "
          "start (T = 4)",
    form=int_in(0, 12), compare=equal(),
    mistakes=[(is_(0), "A query may read itself, but on the left a padded query's own position is padding too, and so "
                       "is every key before it: those rows keep nothing."),
              (is_(1), "Not only the first sequence's first query: every query that stands before its sequence's "
                       "first real token may read only padding."),
              (is_(2), "One row per padded sequence counts only each first query. A query keeps no key while every "
                       "key up to it is padding: the sequence of length 1 has more than one such query."),
              (is_(12), "The real queries read at least their own token: only the queries in front of a sequence's "
                        "first real token are empty.")],
    otherwise="A query keeps no key when every key up to it is padding: the queries in front of the first real token. "
              "Left-padded to T = 4, length 3 has 1 of them, length 1 has 3, length 4 none: 4, one per padding token.")
