"""Hugging Face ``transformers``, offline, with the modules notebook 10 builds its models from (GPT-2, Llama).

Importing this module sets the two offline switches (unless they are set already), so that any attempt to
reach the model hub fails at once instead of waiting, and then imports ``transformers`` with its GPT-2 and
Llama modules. Every model of the course is built from a configuration; nothing is downloaded. Notebook 10's
checks import ``transformers`` through this module, so the switches are set in one place.
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when huggingface_hub is first imported: set them before
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # noqa: E402
from transformers.models.gpt2 import modeling_gpt2  # noqa: E402,F401 - GPT2Config, GPT2LMHeadModel
from transformers.models.llama import modeling_llama  # noqa: E402,F401 - LlamaConfig, LlamaAttention

__all__ = ["transformers"]
