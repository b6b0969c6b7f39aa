"""Notebook 09's questions about what limits a recurrence and what attention changes: the known wrong answers of its
predictions (the path between two positions, the copying task, the dependent steps, the first-token label, language
identification) and the matching of each limitation with its fix, with what each wrong pairing is told."""
from __future__ import annotations

# predict_path_steps: position 0 to position 9, (dh_9/dx_0 for h_t = 0.9 h_(t-1) + x_t, window_layers) with a window
# of itself and 3 back; the truth is (0.9^9 = 0.387, 3)
def _near(a, b, tol=0.004):
    return abs(a - b) <= tol


PATH_STEP_MISTAKES = [
    (lambda g: _near(g[0], 0.9 ** 10), "0.9^10 counts positions, not updates: h_9 holds x_0 after the updates at "
                                       "positions 1, 2, ..., 9, 9 times 0.9."),
    (lambda g: _near(g[0], 0.9, 0.01) or _near(g[0], 1.0, 0.01),
     "x_0 does not reach h_9 in one update: each of the 9 updates between h_0 and h_9 multiplies what the state holds "
     "of x_0 by 0.9."),
    (lambda g: _near(g[0], 3) and _near(g[1], 0.9 ** 9, 0.01), "The two are swapped: (a) is the gradient of the "
                                                               "recurrence, (b) the number of layers."),
    (lambda g: g[1] == 1, "One layer of this attention reads only the 3 positions before a query: position 9 sees "
                          "6 .. 9. Position 0 reaches position 3 in layer 1, 6 in layer 2 and 9 in layer 3."),
    (lambda g: g[1] == 4, "Each layer carries information 3 positions further, not 4 (the window's 4 keys include the "
                          "query itself): 0 -> 3 -> 6 -> 9, 3 layers."),
    (lambda g: g[1] == 9, "A window is not a chain of neighbours: each layer jumps up to 3 positions back, so 3 layers "
                          "cover the 9 positions between 0 and 9."),
    (lambda g: g[1] == 2, "Two layers carry position 0 only as far as position 6 (0 -> 3 -> 6); position 9 needs a "
                          "third.")]
PATH_STEP_TRUTH = ("(0.387, 3): the recurrence carries x_0 to h_9 through 9 updates of its state, each multiplying "
                   "it by 0.9: 0.9^9 = 0.387. With a window of itself and the 3 positions before, each layer carries "
                   "information 3 positions further: 0 -> 3 -> 6 -> 9, 3 layers.")

# predict_copy_accuracy: (fixed_vector, attention) share of tokens right at source length 10
COPY_MISTAKES = [
    ((1.0, 1.0), "Both were given the same training; but the fixed-vector decoder must rebuild 10 tokens from one "
                 "state of 32 numbers written before it starts, while the attention decoder looks each token up when "
                 "it needs it."),
    (lambda v: isinstance(v, tuple) and len(v) == 2 and v[0] > 0.6,
     "The fixed vector holds short sources well, but at 10 tokens it has to keep the first token through 9 further "
     "updates of its state, on this small training budget: far fewer tokens come back right."),
    (lambda v: isinstance(v, tuple) and len(v) == 2 and v[1] < 0.7,
     "Attention does not have to remember: at output step j it reads the source state that matches the query for "
     "position j, so its accuracy hardly depends on the length.")]
COPY_TRUTH = "The fixed vector falls towards chance (1/8) as the source grows; attention stays near 1 at every length."

# predict_dependent_steps: how many times longer the longest chain of operations is at T = 256 than at T = 64,
# (rnn, one attention layer)
STEP_MISTAKES = [
    ((16.0, 16.0), "16 = 4^2 is how the number of scores grows, the work. The question is about the chain: operations "
                   "that must wait for each other. Every score of the table can be computed at the same time."),
    ((4.0, 16.0), "The recurrence is right. Attention's table grows 16-fold, but no score waits for another: the chain "
                  "from an input to an output is as long at T = 256 as at T = 64."),
    ((4.0, 4.0), "The recurrence is right. Attention does more work on a longer sequence, but each output is one "
                 "weighted sum over every position at once, not a walk along them: its chain does not grow."),
    ((1.0, 1.0), "Attention is right. A recurrence cannot compute h_t before h_(t-1): its chain is one update per "
                 "token, so four times as many tokens make it four times as long."),
    ((16.0, 1.0), "Attention is right. The recurrence does one update per token, each waiting for the one before: "
                  "four times as many tokens, four times as long, not 16."),
    ((1.0, 4.0), "The two are swapped: the recurrence's chain grows with every token; attention's does not.")]
STEP_TRUTH = ("The recurrence's chain is a few operations per token, each waiting for the last: 4 times the tokens, "
              "about 4 times as long. One attention layer's chain is the same few operations at any length: 1.")

# predict_first_token: which classifier's accuracy falls towards chance as the sequences grow
FIRST_TOKEN_CHOICES = ("last state", "mean pool", "both", "neither")
FIRST_TOKEN_MISTAKES = [
    ("both", "The last state does fall: it must carry the first token through every later update. The pool does not: "
             "the first token's vector is in the mean itself, divided by n like every other, and a readout that "
             "ignores the words' directions finds it at any length."),
    ("mean pool", "The other way round: the pool takes the first token's own vector in, whatever the length, while "
                  "the last state holds it only as far as n - 1 updates of the state have left it."),
    ("neither", "The last state is one fixed vector of 16 numbers, as in the copying task: each later word is written "
                "over what it holds, and after a few dozen words the first token is lost.")]
FIRST_TOKEN_TRUTH = ("The last state falls towards 1/3; the mean pool stays at 1: it reads every position at once, the "
                     "first one included, as cross-attention did for the copying decoder.")

# predict_language_id: (job, labels for the batch of lengths 7, 5, 3, 2 padded to 7) for "which language is this text in"
JOBS = ("classifier", "tagger")
LANGUAGE_MISTAKES = [
    (("tagger", 17), "A text gets one language here: that is one answer per sequence, the classifier's job, and 4 "
                     "labels for 4 texts. (A tagger would suit text that switches language from word to word.)"),
    (("tagger", 28), "One answer per text, the classifier's job: 4 labels. A tagger would not count the padding "
                     "either."),
    (("classifier", 17), "The job is right: one language per text. But a classifier's loss uses one label per "
                         "sequence, 4, however many words each holds."),
    (("classifier", 7), "The job is right; it asks one label of each of the 4 texts, not of each position: 4.")]
LANGUAGE_TRUTH = "Which language a text is in is one answer per text: a classifier, and 4 labels for the 4 texts."


# match_fixes: each symptom of notebook 09's SYMPTOMS (five made-up projects, by letter), paired with its cure
FIXES = {"A": "cross-attention", "B": "self-attention", "C": "embedding", "D": "self-attention", "E": "positions"}
FIX_NAMES = ("self-attention", "gates", "embedding", "cross-attention", "positions")
WHAT_EACH_LIMITS = {  # a wrong pairing is told what causes the symptom, never which fix cures it
    "A": "the writing RNN starts from one vector of fixed size, written after the article's last word, and every "
         "fact must survive in it until then: the longer the article, the more of its start has been overwritten.",
    "B": "state t cannot be computed before state t - 1 is done, so the chain of steps grows with the text's "
         "length, and no amount of hardware shortens it.",
    "C": "a one-hot id says which token it is and nothing about what it is like: every two ids stay equally far "
         "apart, before training and after.",
    "D": "the gradient is multiplied by a factor below 1 at each of the 299 steps between the pronoun and the "
         "name: a fix that only brings each factor nearer 1 delays the decay, and the path stays as long as the "
         "distance.",
    "E": "nothing in the model says where a token stands: its weights and outputs depend on which tokens are "
         "there, not on their order.",
}
GATES = ("gates slow the decay of one symptom but cure none of the five: with gates the path from the pronoun back "
         "to the name is still 299 steps long, each a factor below 1.")


def fixes_problem(got) -> "str | None":
    """What is wrong with a learner's pairing (a dict symptom letter -> fix), or None when it is the right one."""
    if not isinstance(got, dict):
        return f"expected a dict from each symptom's letter to its fix, got {type(got).__name__}."
    missing, extra = [k for k in FIXES if k not in got], [k for k in got if k not in FIXES]
    if missing or extra:
        return (f"the keys must be the five letters of SYMPTOMS, 'A' to 'E'; missing {missing}, not a letter "
                f"{extra}.")
    unknown = [v for v in got.values() if v not in FIX_NAMES]
    if unknown:
        return f"each value must be one of FIXES, spelt as there; {unknown!r} is not."
    wrong = [k for k in FIXES if got[k] != FIXES[k]]
    if not wrong:
        return None
    first = wrong[0]
    why = GATES + " " if got[first] == "gates" else ""
    return (f"{len(wrong)} of the 5 pairs are wrong. Symptom {first} is not cured by '{got[first]}': {why}"
            f"Its cause: {WHAT_EACH_LIMITS[first]}")
