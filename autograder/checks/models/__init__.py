"""Reference models and their known-wrong variants, which the checks compare with: notebook 09's attention,
notebook 10's models, and notebook 05's optimiser. They import the core and :mod:`..toolkit`, never a
notebook's checks module (``nbNN``).

- :mod:`.numpy_attention`: scaled dot-product attention, RoPE and multi-head attention in NumPy (float64), for
  notebook 09's checks and the models below;
- :mod:`.weights`: parameters by name (TinyGPT's and a block's shapes, random weights, loading them into a module);
- :mod:`.numpy_gpt`: LayerNorm, GELU, the feed-forward, the block, the embeddings and TinyGPT in NumPy (float64),
  each with the known mistakes a ``variant`` names;
- :mod:`.torch_gpt`: the same built from PyTorch's own layers, a TinyGPT of our own on notebook 09's attention,
  and cached generation with its known mistakes;
- :mod:`.stand_ins`: models whose next token is known, for ``generate``;
- :mod:`.training`: one reference training step, and its known mistakes;
- :mod:`.gpt2` and :mod:`.llama`: GPT-2 from transformers' weights, and Llama's attention layout.
- :mod:`.adamw`: notebook 05's AdamW in NumPy, alone and training the bigram table.

A variant's name is checked (:func:`autograder.checks.hints.known_variant`): a misspelled one raises rather
than quietly giving the correct model.
"""
