"""Notebook 09's questions about what limits a recurrence and what attention changes: the known wrong answers of its
predictions (the path between two positions, the copying task, the dependent steps, the first-token label, language
identification) and the matching of each limitation with its fix, with what each wrong pairing is told."""
from __future__ import annotations

# predict_path_steps: (the largest distance t - s with dh_t/dx_s >= 0.01 for h_t = 0.9 h_(t-1) + x_t, window_layers
# from position 0 to 9) with a window of itself and 3 back; the truth is (43, 3): 0.9^43 = 0.0108, 0.9^44 = 0.0097
def _near(a, b, tol=0.004):
    return abs(a - b) <= tol


PATH_STEP_MISTAKES = [
    (lambda g: _near(g[0], 3) and _near(g[1], 43), "The two are swapped: (a) is a distance along the recurrence, "
                                                   "(b) a number of layers."),
    (lambda g: _near(g[0], 44), "log 0.01 / log 0.9 = 43.7 rounds down, not up: 0.9^44 = 0.0097 is already below "
                                "0.01, 0.9^43 = 0.0108 is not."),
    (lambda g: g[0] < 1, "(a) asks for a distance in positions, the largest t - s, not for a gradient: the gradient "
                         "is 0.9 to the power of the distance; find the largest power still at least 0.01."),
    (lambda g: _near(g[0], 100) or _near(g[0], 99), "0.9^100 = 3e-5 is far below 0.01: the gradient crosses 0.01 "
                                                    "much sooner. Solve 0.9^k >= 0.01 for k."),
    (lambda g: _near(g[0], 9) or _near(g[0], 10), "The distance is not bounded by this sequence's 10 tokens: the "
                                                  "question asks how far back the gradient still reaches 0.01 in a "
                                                  "longer one, where it is 0.9 to the power of the distance."),
    (lambda g: g[1] == 1, "One layer of this attention reads only the 3 positions before a query: position 9 sees "
                          "6 .. 9. Position 0 reaches position 3 in layer 1, 6 in layer 2 and 9 in layer 3."),
    (lambda g: g[1] == 4, "Each layer carries information 3 positions further, not 4 (the window's 4 keys include the "
                          "query itself): 0 -> 3 -> 6 -> 9, 3 layers."),
    (lambda g: g[1] == 9, "A window is not a chain of neighbours: each layer jumps up to 3 positions back, so 3 layers "
                          "cover the 9 positions between 0 and 9."),
    (lambda g: g[1] == 2, "Two layers carry position 0 only as far as position 6 (0 -> 3 -> 6); position 9 needs a "
                          "third.")]
PATH_STEP_TRUTH = ("(43, 3): each update of the recurrence multiplies what the state holds of a token by 0.9, so "
                   "dh_t/dx_s = 0.9^(t - s), at least 0.01 while t - s <= log 0.01 / log 0.9 = 43.7. With a window "
                   "of itself and the 3 positions before, each layer carries information 3 positions further: "
                   "0 -> 3 -> 6 -> 9, 3 layers.")

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

# predict_dependent_steps: at T = 64, how many times longer the longest chain of operations is at width 64 than at
# width 8, (rnn, one attention layer); the truth is (1, 1)
STEP_MISTAKES = [
    ((8.0, 8.0), "8 times the width is more work in every product, but a product is one operation of the graph: its "
                 "multiplications run side by side and none waits for another. The chain counts operations that "
                 "wait, and there are as many at width 64 as at width 8."),
    ((64.0, 64.0), "64 = 8^2 is how the multiplications of a product grow, the work. The chain counts operations "
                   "that must wait for each other, and a wider product is still one of them."),
    ((4.0, 1.0), "That is what four times as many tokens would do. Here the tokens stay 64 and each is wider: the "
                 "recurrence still runs 64 updates, each as many operations as before."),
    ((1.0, 8.0), "The recurrence is right. Attention's scores at width 64 are sums of 64 products instead of 8, but "
                 "one product of matrices computes them all: the chain does not grow."),
    ((8.0, 1.0), "Attention is right. The recurrence runs the same 64 updates at either width, each the same few "
                 "operations on wider vectors: its chain does not grow."),
    ((64.0, 1.0), "Attention is right. The recurrence's chain is one update per token, 64 at either width: the "
                  "width makes each product more work, not the chain longer.")]
STEP_TRUTH = ("(1, 1): a product of matrices is one operation of the graph however wide; the recurrence's chain is "
              "a few operations per token, set by T, and one attention layer's the same handful at any size.")

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
