"""Release, self-check and grade the Transformer-math notebooks (built on nbgrader)."""

__version__ = "0.1.0"
