"""Notebook 09's one backbone with two heads: the cases of TaskHeads (a classifier pooling the real tokens, a tagger at
every position) and of task_accuracies (what the two-task training reports: the share of sentences classified right and
of real words tagged right), with the known mistakes a ``variant`` names, in NumPy float64."""
from __future__ import annotations

import numpy as np

from ..compare import Case, close
from ..toolkit import TOL, diagnose, import_torch, normal, tensor
from .numpy_tasks import TASK_MESSAGES, padded_outputs, shape_hint, task_heads_np


def task_case(label, h, lengths, C, K, rng):
    d = h.shape[-1]
    p = [normal(rng, C, d, scale=0.5), normal(rng, C, scale=0.1), normal(rng, K, d, scale=0.5), normal(rng, K, scale=0.1)]

    def call(cls):
        torch = import_torch()
        module = cls(d, C, K)
        with torch.no_grad():
            for lin, W, b in ((module.classifier, p[0], p[1]), (module.tagger, p[2], p[3])):
                lin.weight.copy_(tensor(W))
                lin.bias.copy_(tensor(b))
            return module(tensor(h), import_torch().tensor(lengths))

    variants = {n: (lambda n=n: task_heads_np(h, lengths, *p, variant=n)) for n in TASK_MESSAGES}
    return Case(label, call, lambda: tuple(map(tensor, task_heads_np(h, lengths, *p))), close(**TOL),
                hints=[diagnose(variants, TASK_MESSAGES), shape_hint(*h.shape[:2])])


def task_heads_cases(hidden, rng):
    """TaskHeads' cases: padded batches whose padding holds a number a pool that takes it in shows."""
    if not hidden:
        return [task_case("TaskHeads(4, 3, 2) on h (2, 5, 4), lengths [5, 2]: padded positions hold 5.0",
                           padded_outputs(rng, [5, 2], 5, 4), [5, 2], 3, 2, rng),
                task_case("TaskHeads(6, 2, 5) on h (3, 4, 6), lengths [4, 1, 3]", normal(rng, 3, 4, 6), [4, 1, 3], 2,
                           5, rng)]
    return [task_case("TaskHeads(8, 3, 4) on h (2, 6, 8), lengths [3, 6]: padded positions hold -4.0",
                       padded_outputs(rng, [3, 6], 6, 8, fill=-4.0), [3, 6], 3, 4, rng),
            task_case("TaskHeads(4, 2, 3) on h (4, 3, 4), lengths [1, 2, 3, 2]", padded_outputs(rng, [1, 2, 3, 2], 3, 4),
                       [1, 2, 3, 2], 2, 3, rng)]


# ------------------------------------------------------- task_accuracies: what the two-task training reports

ACCURACY_MESSAGES = {  # the symptom first, then the likely cause in a learner's words; never the line to write
    "counts_padding": "Your tagger's share drops when the same sentences are padded further: the padded positions "
                      "were counted as words, and no tag score ever matches their label -100.",
    "padding_right": "Your tagger's share rises when the same sentences are padded further: the padded positions "
                     "count as words tagged right.",
    "per_sentence": "Your tagger's share is not the share of real words tagged right: a sentence of 1 word weighs "
                    "as much as one of 4, as if each sentence's own share were averaged over the sentences.",
    "counts": "A share lies between 0 and 1, and yours does not: the sequences or words right were counted but "
              "not divided by how many there are.",
    "swapped": "The two shares come back in the other order: the classifier's (one per sequence) comes first.",
}


def task_accuracies_np(class_scores, tag_scores, classes, tags, variant=None):
    """(share of sequences classified right, share of real tokens tagged right) as floats; tags hold -100 at the
    padding. ``variant`` names a known mistake (ACCURACY_MESSAGES' keys)."""
    if variant is not None and variant not in ACCURACY_MESSAGES:
        raise ValueError(f"task_accuracies_np has no variant {variant!r}; the choices are {sorted(ACCURACY_MESSAGES)}")
    right_class = np.argmax(class_scores, axis=-1) == np.asarray(classes)  # (B,)
    tags = np.asarray(tags)
    real, right_tag = tags != -100, np.argmax(tag_scores, axis=-1) == tags  # (B, T) each
    shares = {"counts_padding": lambda: (right_class.mean(), right_tag.mean()),
              "padding_right": lambda: (right_class.mean(), (right_tag | ~real).mean()),
              "per_sentence": lambda: (right_class.mean(), np.mean([r[m].mean() for r, m in zip(right_tag, real)])),
              "counts": lambda: (right_class.sum(), right_tag[real].sum()),
              "swapped": lambda: (right_tag[real].mean(), right_class.mean())}
    return tuple(map(float, shares.get(variant, lambda: (right_class.mean(), right_tag[real].mean()))()))


def task_batch(rng, lengths, T, C=2, K=3):
    """Scores and labels of a padded batch: class_scores (B, C), tag_scores (B, T, K), classes (B,), tags (B, T)
    with -100 at the padding; about half the sentences and a third of the words right, unevenly over lengths."""
    B = len(lengths)
    class_scores, tag_scores = normal(rng, B, C), normal(rng, B, T, K)
    classes, tags = rng.integers(0, C, size=B), rng.integers(0, K, size=(B, T))
    tags[np.arange(T)[None, :] >= np.asarray(lengths)[:, None]] = -100
    return class_scores, tag_scores, classes, tags


def _accuracy_case(label, class_scores, tag_scores, classes, tags):
    def call(fn):
        torch = import_torch()
        return fn(tensor(class_scores), tensor(tag_scores), torch.as_tensor(np.asarray(classes, dtype=np.int64)),
                  torch.as_tensor(np.asarray(tags, dtype=np.int64)))

    variants = {n: (lambda n=n: task_accuracies_np(class_scores, tag_scores, classes, tags, n))
                for n in ACCURACY_MESSAGES}
    return Case(label, call, lambda: task_accuracies_np(class_scores, tag_scores, classes, tags),
                close(atol=1e-6, rtol=0.0), hints=[diagnose(variants, ACCURACY_MESSAGES)])


def padded_further(batch, extra, rng):
    """The same sentences padded ``extra`` positions further (the new positions hold random scores, tag -100)."""
    class_scores, tag_scores, classes, tags = batch
    B, _, K = tag_scores.shape
    more = np.concatenate([tag_scores, normal(rng, B, extra, K)], axis=1)
    return class_scores, more, classes, np.concatenate([tags, np.full((B, extra), -100)], axis=1)


def accuracy_cases(hidden, rng):
    """task_accuracies' cases: uneven lengths, then the same sentences padded further (the shares must not move)."""
    lengths = [1, 4, 2, 3] if not hidden else [5, 1, 3, 2, 5]
    batch = task_batch(rng, lengths, max(lengths))
    T = max(lengths)
    cases = [_accuracy_case(f"task_accuracies on {len(lengths)} sentences of lengths {lengths} padded to {T}", *batch),
             _accuracy_case(f"the same sentences padded to {T + 3}: the same two shares", *padded_further(batch, 3,
                                                                                                           rng))]
    if hidden:
        cases.append(_accuracy_case("task_accuracies on 6 sentences of lengths [6, 2, 1, 4, 3, 6] padded to 6",
                                    *task_batch(rng, [6, 2, 1, 4, 3, 6], 6, C=3, K=4)))
    return cases
