"""Do the checks of notebook 10's encoder-decoder (translator_loss, greedy_decode) and of the embeddings' geometry
(token_vectors) reject the mistakes students make, each with its own message, and accept other correct code?

The known-wrong implementations and the differently written correct ones are data here (MISTAKES,
ALTERNATIVES), in the harness's form, so the notebook's standard suite can run them through its test cells
too (tests/checks/test_nb10.py). The tests below add what that suite does not ask, through the same harness.
"""
import pytest
import torch

from autograder.checks import nb10
from tests.harness import (Mistake, answer, assert_accepted, assert_rejected_everywhere_each_in_its_own_words,
                           indent, returns)

pytestmark = pytest.mark.nb10
A = "10_decoder_block"

DECODE = """
def greedy_decode(model, src, bos_id, eos_id, max_len):
{body}
"""
VECTORS = """
def token_vectors(model, ids, position):
{body}
"""
FORCING = """
def translator_loss(model, src, tgt, bos_id, pad_id):
{body}
"""
READS = """
def reads_its_translation(cross, src, tgt, translation):
{body}
"""


def decode(body: str) -> str:
    return DECODE.format(body=indent(body, 4))


def vectors(body: str) -> str:
    return VECTORS.format(body=indent(body, 4))


def forcing(body: str) -> str:
    return FORCING.format(body=indent(body, 4))


def reads(read: str = "cross[b, t].argmax()", hit: str = "translation.get(int(src[b, int(read)])) == french",
          counted: str = "french in words", result: str = "hits / total") -> str:
    return READS.format(body=indent(f"""
words = set(translation.values())
hits = total = 0
for b in range(cross.shape[0]):
    for t in range(cross.shape[1]):
        french = int(tgt[b, t])
        if not ({counted}):
            continue
        total += 1
        read = {read}
        hits += int({hit})
return {result}""", 4))


GREEDY_LOOP = """
out = [bos_id]
for _ in range({steps}):
    logits = model(src[None], torch.tensor([out]))
    word = int({read})
    {append_and_stop}
return {result}
"""


def greedy(steps="max_len", read="logits[0, -1].argmax()", result="out[1:]", start="[bos_id]",
           append_and_stop="out.append(word)\n    if word == eos_id:\n        break"):
    return decode(GREEDY_LOOP.format(steps=steps, read=read, result=result, append_and_stop=append_and_stop)
                  .replace("out = [bos_id]", f"out = {start}"))


EXERCISES = ("translator_loss", "greedy_decode", "reads_its_translation", "token_vectors")  # the predictions need the notebook's answer

MISTAKES = [
    Mistake("translator_loss", "fed_its_own_targets", forcing("return lm_loss(model(src, tgt), tgt, ignore=pad_id)"),
            "very words it is asked to predict"),
    Mistake("translator_loss", "padding_scored", forcing("""
tgt_in = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt[:, :-1]], dim=1)
return lm_loss(model(src, tgt_in), tgt)"""),
            "counts the padding"),
    Mistake("translator_loss", "pad_as_the_first_input", forcing(
        "return lm_loss(model(src, torch.cat([torch.full_like(tgt[:, :1], pad_id), tgt[:, :-1]], dim=1)), tgt, "
        "ignore=pad_id)"), "first input is not BOS"),
    Mistake("translator_loss", "shifted_left", forcing("""
tgt_in = torch.cat([tgt[:, 1:], torch.full_like(tgt[:, :1], bos_id)], dim=1)
return lm_loss(model(src, tgt_in), tgt, ignore=pad_id)"""), "towards the start"),
    Mistake("translator_loss", "bos_over_the_first_word", forcing("""
tgt_in = tgt.clone()
tgt_in[:, 0] = bos_id
return lm_loss(model(src, tgt_in), tgt, ignore=pad_id)"""), "took the place of the first word"),
    Mistake("translator_loss", "batch_as_one_sequence", forcing("""
tgt_in = torch.cat([torch.tensor([bos_id]), tgt.flatten()[:-1]]).view_as(tgt)
return lm_loss(model(src, tgt_in), tgt, ignore=pad_id)"""), "row above it"),
    Mistake("translator_loss", "shifted_in_place", forcing("""
tgt[:, 1:] = tgt[:, :-1].clone()
tgt[:, 0] = bos_id
return lm_loss(model(src, tgt), tgt, ignore=pad_id)"""), "changed the targets it was given"),
    Mistake("translator_loss", "bos_put_in_front_and_the_first_prediction_dropped", forcing("""
tgt_in = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt], dim=1)
return lm_loss(model(src, tgt_in)[:, 1:], tgt, ignore=pad_id)"""), "one longer than the targets"),
    Mistake("greedy_decode", "no_stop_at_eos", greedy(append_and_stop="out.append(word)"), "goes on after EOS"),
    Mistake("greedy_decode", "bos_returned", greedy(result="out"), "starts with BOS"),
    Mistake("greedy_decode", "eos_dropped", greedy(append_and_stop="if word == eos_id:\n        break\n    "
                                                                   "out.append(word)"), "just before EOS"),
    Mistake("greedy_decode", "first_position_read", greedy(read="logits[0, 0].argmax()"), "after BOS alone"),
    Mistake("greedy_decode", "argmax_over_positions", greedy(read="logits[0].argmax(dim=0)[-1]"), "wrong axis"),
    Mistake("greedy_decode", "one_word_too_many", greedy(steps="max_len + 1"), "more ids than max_len"),
    Mistake("greedy_decode", "no_bos", greedy(start="[]", read="logits[0, -1].argmax()"), "no input"),
    Mistake("token_vectors", "embedding_row_missing", vectors("""
x, rows = model.embed(ids[None]), []
for block in model.blocks:
    x = block(x)
    rows.append(x[0, position])
return torch.stack(rows)
"""), "one row short"),
    Mistake("token_vectors", "final_norm_added", vectors("""
x = model.embed(ids[None])
rows = [x[0, position]]
for block in model.blocks:
    x = block(x)
    rows.append(x[0, position])
rows.append(model.ln_f(x)[0, position])
return torch.stack(rows)
"""), "final layernorm"),
    Mistake("token_vectors", "last_position", vectors("""
x = model.embed(ids[None])
rows = [x[0, -1]]
for block in model.blocks:
    x = block(x)
    rows.append(x[0, -1])
return torch.stack(rows)
"""), "last position"),
    Mistake("token_vectors", "token_table_only", vectors("""
x = model.tok_emb(ids[None])
rows = [x[0, position]]
for block in model.blocks:
    x = block(x)
    rows.append(x[0, position])
return torch.stack(rows)
"""), "without its positions"),
    Mistake("token_vectors", "every_block_reads_the_embedding", vectors("""
x = model.embed(ids[None])
return torch.stack([x[0, position]] + [block(x)[0, position] for block in model.blocks])
"""), "what the block before it wrote"),
    Mistake("token_vectors", "next_position", vectors("""
x = model.embed(ids[None])
rows = [x[0, position + 1]]
for block in model.blocks:
    x = block(x)
    rows.append(x[0, position + 1])
return torch.stack(rows)
"""), "neighbouring position"),
]

MISTAKES += [  # where the decoder reads, measured: each wrong reading of the map shows its own symptom
    Mistake("reads_its_translation", "judged_by_place", reads(hit="int(read) == t"), "own position"),
    Mistake("reads_its_translation", "the_row_before", reads(read="cross[b, max(t - 1, 0)].argmax()"),
            "the row one place earlier"),
    Mistake("reads_its_translation", "eos_and_pad_rows_counted", reads(counted="True"), "translate nothing"),
    Mistake("reads_its_translation", "a_count", reads(result="float(hits)"), "not a share"),
    Mistake("reads_its_translation", "argmax_down_the_columns",
            reads(read="cross[b, :, min(t, cross.shape[2] - 1)].argmax()",
                  hit="int(read) < cross.shape[2] and translation.get(int(src[b, int(read)])) == french"),
            "down the columns"),
]

MISTAKES += [  # the predictions: a wrong answer of the right form is recorded wrong, with its reason
    returns("predict_noun_geometry", "counts_say_alike", "('a singular and a plural noun', 'same neighbours')",
            "count vector sees"),
    returns("predict_noun_geometry", "a_tie", "'about the same'", "writes the number into the rows"),
    returns("predict_noun_geometry", "not_a_choice", "'cat and dog'", "answer with one of"),
    returns("predict_rouge_reads", "the_same_place", "(2, 'French keeps the place')", "where 'rouge' sits in French"),
    returns("predict_rouge_reads", "the_first_word", "0", "the first word"),
    returns("predict_rouge_reads", "not_a_position", "8", "between 0 and 7"),
    returns("predict_contextual", "block_2_undoes_block_1", "('smaller', 'the last block tidies up')",
            "no reason to undo"),
    returns("predict_contextual", "the_gap_is_passed_on", "('about the same', 'the residual passes it on')",
            "does not pass the gap on unchanged"),
    returns("predict_contextual", "not_a_choice", "'different'", "answer with one of"),
    returns("predict_coordinate", "one_axis_is_number", "('a single coordinate', 'one feature per axis')",
            "nothing in the model prefers the table's axes"),
    returns("predict_coordinate", "a_tie", "'as well as each other'", "no reason to line its features up"),
    returns("predict_coordinate", "not_a_choice", "'coordinate 17'", "answer with one of"),
]

ALTERNATIVES = {
    "translator_loss": forcing("""
tgt_in = torch.cat([torch.full_like(tgt[:, :1], bos_id), tgt[:, :-1]], dim=1)
logits = model(src, tgt_in)
each = F.cross_entropy(logits.transpose(1, 2), tgt, reduction="none")  # (B, T)
counted = tgt != pad_id
return each[counted].mean()"""),
    "reads_its_translation": READS.format(body=indent("""
writes = cross.argmax(dim=-1)  # (B, T): the English position each decoder position reads most
read_word = torch.gather(src, 1, writes)  # (B, T): the English id found there
lookup = torch.full((int(max(translation)) + 1,), -1, dtype=torch.long)
lookup[torch.tensor(list(translation.keys()))] = torch.tensor(list(translation.values()))
is_word = torch.isin(tgt, torch.tensor(list(translation.values())))
return ((lookup[read_word] == tgt) & is_word).sum().item() / is_word.sum().item()""", 4)),
    "predict_noun_geometry": answer("predict_noun_geometry", "('two ' + 'singular nouns', 'the verb agrees in number')"),
    "predict_rouge_reads": answer("predict_rouge_reads", "(['the', 'red'].index('red'), 'red is read')"),
    "predict_contextual": answer("predict_contextual", "'lar' + 'ger'"),
    "predict_coordinate": answer("predict_coordinate", "(' '.join(['the', 'direction']), 'axes mean nothing')"),
    "greedy_decode": decode("""
written = torch.tensor([[bos_id]])
while written.shape[1] <= max_len:
    next_id = model(src.unsqueeze(0), written)[:, -1, :].argmax(dim=-1, keepdim=True)
    written = torch.cat([written, next_id], dim=1)
    if next_id.item() == eos_id:
        break
return written[0, 1:]
"""),
    "token_vectors": vectors("""
with torch.no_grad():
    h = model.embed(ids.unsqueeze(0))
    out = [h[:, position]]
    for block in model.blocks:
        h = block(h)
        out.append(h[:, position])
return torch.cat(out, dim=0)
"""),
}





@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_mistake_fails_the_visible_and_the_hidden_cell_each_with_its_own_message(exercise):
    """The suite of test_nb10 proves each mistake rejected and each alternative accepted; here every cell must
    reject it, and no two mistakes of an exercise may read alike."""
    mine = [m for m in MISTAKES if m.exercise == exercise]
    assert len(mine) >= 3, f"{exercise} has {len(mine)} known mistakes"
    assert_rejected_everywhere_each_in_its_own_words(A, mine)

def test_the_messages_name_symptoms_not_the_line():
    """A message may say what went wrong and why; it never hands over the code to write."""
    for message in [*nb10.FORCING_MESSAGES.values(), *nb10.DECODE_MESSAGES.values()]:
        for code in ("torch.cat", "[:, :-1]", "argmax(dim=-1)", "argmax(-1)", "break", "torch.full"):
            assert code not in message, f"{code!r} dictates the line: {message}"


def test_the_made_up_translator_depends_on_what_it_is_fed():
    """The rule that makes the decoding cases bite: the next word depends on the word fed last and on BOS."""
    from autograder.checks.nb10.translation import _RuleTranslator

    model = _RuleTranslator()
    src = torch.tensor([[4, 9, 6, 2]])
    a = model(src, torch.tensor([[1, 5]]))[0, -1].argmax()
    b = model(src, torch.tensor([[1, 6]]))[0, -1].argmax()
    c = model(src, torch.tensor([[3, 5]]))[0, -1].argmax()
    assert int(a) != int(b) and int(a) != int(c)  # the word fed last counts, and so does BOS in front
    assert int(model(src, torch.tensor([[1, 5, 5, 5, 5]]))[0, -1].argmax()) == 2  # past the source: EOS
    with pytest.raises(ValueError, match="batch axis"):
        model(src[0], torch.tensor([[1]]))


def test_a_broken_check_is_caught_by_these_tests(monkeypatch):
    """Break the check on purpose (its right answer scores the padding too): the reference is then rejected."""
    from autograder.checks.nb10 import translation

    right = translation._forcing_case

    def broken(label, rng, B, S, T):
        case = right(label, rng, B, S, T)
        return translation.Case(label, case.call, lambda: case.want() + 0.5, case.compare)

    monkeypatch.setattr(translation, "_forcing_case", broken)
    with pytest.raises(AssertionError, match="rejected"):
        assert_accepted(A, "translator_loss", ALTERNATIVES["translator_loss"])


def test_the_harness_catches_a_mistake_that_passes_a_cell_and_two_that_read_alike():
    """Break the rule on purpose: a right answer posing as a mistake passes, and one mistake twice reads alike."""
    with pytest.raises(AssertionError, match="passed"):
        assert_rejected_everywhere_each_in_its_own_words(A, [Mistake("translator_loss", "right",
                                                                      ALTERNATIVES["translator_loss"])])
    twice = [m for m in MISTAKES if m.label == "fed_its_own_targets"] * 2
    with pytest.raises(AssertionError, match="read alike"):
        assert_rejected_everywhere_each_in_its_own_words(A, [twice[0], Mistake("translator_loss", "again", twice[1].source)])
