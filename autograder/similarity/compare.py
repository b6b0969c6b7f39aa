"""Which pairs of students share an exercise beyond chance, found through an index, never pair by pair.

For one exercise, every answer long enough to tell apart (:data:`MIN_TOKENS` tokens of the student's own) is a
set of fingerprints (:mod:`.fingerprints`). What a shared fingerprint says depends on how many answers have
it: one that most answers have is how the exercise is solved, one that two answers alone have is evidence.
So two answers A and B are weighed by a likelihood ratio: for each fingerprint of A, how much likelier it is
that B has it (or lacks it) if B was copied from A (then B keeps each with probability :data:`KEPT`) than if
B was written alone (then B has it as often as the rest of the class does, ``q``). Its logarithm adds up
``log(KEPT / q)`` for each fingerprint B shares and ``log((1 - KEPT) / (1 - q))`` for each it lacks; the score
is the smaller of the two directions, and the answers are **alike** at :data:`ALIKE` or more. A fingerprint
that every answer has adds nothing; one the two alone have adds about ``log(0.8 * n)``; a long answer
matters more than a short one, and no share of a short one is enough on its own. An answer that could not
reach :data:`ALIKE` even against a word-for-word copy of itself is **too short to tell apart at this class
size**, and is said to be, not counted as compared.

A pair of students is named when alike on :data:`run.MIN_EXERCISES` exercises, or when alike on all but one of
them and the last scores :data:`SUPPORT` or more (e^10: 20,000 times likelier copied). The bar of
:data:`ALIKE` is set for a pair nothing else speaks for (one of the class's 125,000); a pair alike on two
exercises is no longer one of those, and its third needs less: a copy of a short answer (20 to 30 tokens,
whose fingerprints are fewer and commoner) or of one with a step rewritten rarely reaches 20 even copied,
yet among a class of 500 the pairs alike on two exercises by chance are a handful, and few of those also
score 10 on a third. What a supporting exercise scores is shown with it; an answer too short at this class
size supports nothing.

Pairs to weigh come from an inverted index (fingerprint -> answers): the fingerprints that at most
:data:`RARE` answers (or 10% of them) have propose each pair of their holders, and a pair whose shared ones
add :data:`PROPOSE` to the score is weighed. So a class of 500 weighs hundreds of pairs an exercise, not
125,000; a copy shares its source's rarer parts, so none is missed for it.

The chance that two answers are alike is measured on the class itself, per exercise: the share of its pairs
that are alike (``p``). A pair that both answered exercises with chances ``p1, p2, ...`` would share
``sum(p)`` of them by chance alone; :func:`chance_of_at_least` is the Poisson probability of sharing as many
as it does.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from math import log

import numpy as np

MIN_TOKENS = 20  # fewer tokens of the student's own (a one-line `return Q @ K.T` has 7): too short to tell apart
KEPT = 0.8  # the share of its source's fingerprints a copy keeps, in the likelihood ratio
ALIKE = 20.0  # log-likelihood ratio from which two answers are alike (e^20: 500 million times likelier copied)
SUPPORT = 10.0  # from which an exercise counts for a pair already alike on all but one of the exercises needed
PRIOR = 0.05, 10  # how common an unseen fingerprint is taken to be, and as how many answers' worth of evidence
RARE = 10  # a fingerprint that at most this many answers (or 10% of them) have proposes their pairs
PROPOSE = 8.0  # what those must add to the score for the pair to be weighed


@dataclass(frozen=True)
class Alike:
    """Two students' answers to one exercise that are alike."""
    a: str
    b: str
    score: float  # the log-likelihood ratio, copied against written alone


def alike_pairs(answers: dict[str, frozenset[int]], *, at: float = ALIKE) -> tuple[list[Alike], set[str]]:
    """The pairs of ``answers`` (student -> fingerprints of their answer to one exercise) that score ``at`` or more
    (:data:`ALIKE`: alike; :data:`SUPPORT`: also those that can only support a pair), and the students whose
    answer is too short to tell apart at this class size (:func:`_ceiling`)."""
    students = list(answers)
    n = len(students)
    holders: dict[int, list[int]] = defaultdict(list)
    for i, student in enumerate(students):
        for h in answers[student]:
            holders[h].append(i)
    mean, weight = PRIOR
    # q: how often another answer has the fingerprint, from the others that have it, with a small prior so that
    # a class of two still weighs something
    q = {h: (len(who) - 1 + mean * weight) / (n - 1 + weight) for h, who in holders.items()}
    share = {h: log(KEPT / p) for h, p in q.items()}
    lack = {h: log((1 - KEPT) / (1 - min(p, 0.999))) for h, p in q.items()}
    lacking = {s: sum(lack[h] for h in hashes) for s, hashes in answers.items()}  # if the other had none of them
    short = {s for s, hashes in answers.items() if _ceiling(hashes, holders, n) < ALIKE}
    found = []
    for a, b in _proposed(holders, share, n):
        sa, sb = students[a], students[b]
        if sa in short or sb in short:  # too short at this class size: never compared, nor a support
            continue
        # each direction: share() for what the other has, lack() for what it has not; the smaller of the two
        score = sum(share[h] - lack[h] for h in answers[sa] & answers[sb]) + min(lacking[sa], lacking[sb])
        if score >= at:
            found.append(Alike(sa, sb, score))
    return found, short


def _ceiling(hashes: frozenset[int], holders: dict[int, list[int]], n: int) -> float:
    """The most an answer could score with any other of this class, were that other a word-for-word copy of it.

    A pair's score is at most the sum, over one answer's fingerprints, of the larger of ``log(KEPT / q)`` and
    ``log((1 - KEPT) / (1 - q))``; ``q`` is taken with the copy among the holders (at least two). Below
    :data:`ALIKE`, the answer cannot be found alike, however it was copied: it has too few fingerprints, or
    too common ones, for a class of this size (a rare fingerprint weighs ``log(0.8 * n)``: a class of 20 needs
    about twice as many of them as a class of 500)."""
    mean, weight = PRIOR
    total = 0.0
    for h in hashes:
        p = min((max(len(holders[h]), 2) - 1 + mean * weight) / (n - 1 + weight), 0.999)
        total += max(log(KEPT / p), log((1 - KEPT) / (1 - p)))
    return total


def _proposed(holders: dict[int, list[int]], share: dict[int, float], n: int) -> list[tuple[int, int]]:
    """Pairs (a < b) that the rarer fingerprints they share give at least :data:`PROPOSE` of the score.

    All pairs of each fingerprint's holders at once, with numpy, one array per number of holders: a class of
    500 has a few million such (pair, fingerprint) entries an exercise, a Python loop over them seconds."""
    rare = max(RARE, n // 10)
    by_count: dict[int, list[tuple[list[int], float]]] = defaultdict(list)
    for h, who in holders.items():
        if 2 <= len(who) <= rare:
            by_count[len(who)].append((who, share[h]))
    total = np.zeros(n * n)
    for count, rows in by_count.items():
        who = np.array([r[0] for r in rows], dtype=np.int64)  # (fingerprints, count), each row ascending
        gain = np.array([r[1] for r in rows])
        first, second = np.triu_indices(count, 1)
        keys = (who[:, first] * n + who[:, second]).ravel()
        total += np.bincount(keys, weights=np.repeat(gain, len(first)), minlength=n * n)
    return [divmod(int(k), n) for k in np.flatnonzero(total >= PROPOSE)]


def chance_of_at_least(k: int, expected: float) -> float:
    """P(X >= k) for X Poisson with mean ``expected``: the chance of sharing ``k`` or more exercises by chance.
    Summed over the upper tail itself, so a tiny chance is not lost to rounding in ``1 - P(X < k)``."""
    if k <= 0:
        return 1.0
    if expected <= 0:
        return 0.0
    term = math.exp(-expected + k * math.log(expected) - math.lgamma(k + 1))
    total, i = 0.0, k
    while term > total * 1e-17 and i < k + 1000:
        total += term
        i += 1
        term *= expected / i
    return min(1.0, total)
