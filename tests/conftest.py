import os

# Plots in set-up cells must not try to open a window when notebooks run in-process.
os.environ.setdefault("MPLBACKEND", "Agg")
