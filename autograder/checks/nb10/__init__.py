"""Checks for 10_decoder_block (a package: the notebook's checks, split by exercise in the commits that follow)."""
from .layers import *  # noqa: F401,F403
from .layers import _dropout_kind  # noqa: F401
