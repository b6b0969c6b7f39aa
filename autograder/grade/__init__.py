"""Grading a class: ``python -m autograder grade`` (see GRADING.md)."""
