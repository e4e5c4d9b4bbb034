"""The tokenizer: special tokens, normalisation of raw vs treebank text, offsets, round trip, batching."""

import pytest
import torch
from tokenizers import Tokenizer

from transformer.tokenizer import (
    MASK_TOKEN,
    PAD_TOKEN,
    UNK_TOKEN,
    build_normalizer,
    encode_batch,
    train_tokenizer,
)


def ids(tokenizer, text: str) -> list[int]:
    """Token ids of one text, no special tokens."""
    return tokenizer.encode(text, add_special_tokens=False).ids


def test_special_tokens_have_fixed_ids(tiny_tokenizer):
    assert [tiny_tokenizer.token_to_id(t) for t in (PAD_TOKEN, UNK_TOKEN, MASK_TOKEN)] == [0, 1, 2]
    assert ids(tiny_tokenizer, "it 's [MASK] !")[2] == 2


def test_training_is_deterministic():
    texts = ["the film is good", "the plot is dull", "a good , good film", "it 's dull and boring"] * 5
    assert train_tokenizer(texts, vocab_size=60).to_str() == train_tokenizer(texts, vocab_size=60).to_str()


@pytest.mark.parametrize(
    ("treebank", "raw"),
    [
        ("do n't", "don't"),
        ("do n't", "Don’t"),
        ("do n't", "DONT"),
        ("ca n't", "can't"),
        ("it 's", "It's"),
        ("they 're wonderful", "They’re WONDERFUL"),
        ("``great''", '"great"'),
        ("`` great ''", "“Great”"),
        ("-lrb- sigh -rrb-", "(sigh)"),
        ("director 's", "Director's"),
        ("a charming journey", "a charmíng journey"),
        ("can not", "cannot"),
    ],
)
def test_raw_text_encodes_like_treebank_text(tiny_tokenizer, treebank, raw):
    assert ids(tiny_tokenizer, raw) == ids(tiny_tokenizer, treebank)


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        pytest.param("Café ﬁlm", "cafe film", id="unicode-and-accents"),
        pytest.param("GREAT Film", "great film", id="lowercase"),
        pytest.param("‘a’ ‚b‛ 2′", "'a' 'b' 2'", id="single-quotes"),
        pytest.param("“a” „b‟", '"a" "b"', id="double-quotes"),
        pytest.param("``great''", '"great"', id="treebank-quotes"),
        pytest.param("`cool'", "'cool'", id="backtick"),
        pytest.param("-lrb- sigh -RRB-", "( sigh )", id="round-brackets"),
        pytest.param("-lsb- sic -RSB-", "[ sic ]", id="square-brackets"),
        pytest.param("1\\/2 \\*ing a\\b", "1/2 *ing a\\b", id="escaped-slash-and-star"),
        pytest.param("_num_ stars, _NUM_", "0 stars, 0", id="number-placeholder"),
        pytest.param("don't isn't can't won't", "do n't is n't ca n't wo n't", id="nt-clitic"),
        pytest.param("it's they're we've i'll i'd i'm", "it 's they 're we 've i 'll i 'd i 'm", id="clitics"),
        pytest.param("dont isnt cant wont aint", "do n't is n't ca n't wo n't ai n't", id="nt-without-apostrophe"),
        pytest.param("do nt", "do n't", id="split-nt-without-apostrophe"),
        pytest.param("cannot", "can not", id="cannot"),
        pytest.param("gonna wanna", "gon na wan na", id="gonna-wanna"),
        pytest.param("want paint don gonnas cannoted", "want paint don gonnas cannoted", id="look-alikes-unchanged"),
    ],
)
def test_each_normaliser_rule(raw, normalised):
    assert build_normalizer().normalize_str(raw) == normalised


def test_clitics_and_punctuation_are_single_tokens(tiny_tokenizer):
    encoding = tiny_tokenizer.encode("I didn't, it's (sigh)!", add_special_tokens=False)
    assert encoding.tokens == ["i", "did", "n't", ",", "it", "'s", "(", "sigh", ")", "!"]


def test_offsets_point_into_the_raw_text(tiny_tokenizer):
    text = "It’s a “GREAT” film, I didnt like it (sigh)"
    encoding = tiny_tokenizer.encode(text, add_special_tokens=False)
    pieces = [text[start:end] for start, end in encoding.offsets]
    assert [token.removeprefix("##") for token in encoding.tokens] == [
        piece.lower().replace("’", "'").replace("“", '"').replace("”", '"').replace("nt", "n't") for piece in pieces
    ]
    assert pieces[:6] == ["It", "’s", "a", "“", "GREAT", "”"]
    assert "nt" in pieces  # "didnt" -> "did" + "n't", and "n't" maps back to the typed "nt"


def test_round_trip_reproduces_the_normalised_text(tiny_tokenizer):
    text = "The movie isn't funny, and it doesn't try hard enough."
    encoding = tiny_tokenizer.encode(text, add_special_tokens=False)
    assert UNK_TOKEN not in encoding.tokens
    normalised = tiny_tokenizer.normalizer.normalize_str(text)
    assert normalised == "the movie is n't funny, and it does n't try hard enough."
    assert "".join(token.removeprefix("##") for token in encoding.tokens) == normalised.replace(" ", "")
    decoded = tiny_tokenizer.decode(encoding.ids, skip_special_tokens=False)
    assert decoded.replace(" ", "") == normalised.replace(" ", "")


def test_saved_tokenizer_keeps_normaliser_and_never_truncates_or_pads(tiny_tokenizer, tmp_path):
    tiny_tokenizer.save(str(tmp_path / "tokenizer.json"))
    reloaded = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert reloaded.truncation is None and reloaded.padding is None
    long_text = "don't " * 300
    assert ids(reloaded, long_text) == ids(tiny_tokenizer, long_text)
    assert len(ids(reloaded, long_text)) == 300 * len(ids(tiny_tokenizer, "don't"))


def test_encode_batch_pads_right_and_truncates(tiny_tokenizer):
    texts = ["it 's charming", "the movie is n't funny , and it does n't try hard enough"]
    input_ids, attention_mask = encode_batch(tiny_tokenizer, texts, max_len=8)
    short = ids(tiny_tokenizer, texts[0])
    assert input_ids.dtype == attention_mask.dtype == torch.long
    assert input_ids.shape == attention_mask.shape == (2, 8)
    assert input_ids[0, : len(short)].tolist() == short
    assert input_ids[0, len(short) :].eq(0).all() and attention_mask[0, len(short) :].eq(0).all()
    assert attention_mask[0, : len(short)].eq(1).all() and attention_mask[1].eq(1).all()
    assert input_ids[1].tolist() == ids(tiny_tokenizer, texts[1])[:8]


def test_encode_batch_width_is_the_longest_encoding(tiny_tokenizer):
    input_ids, _ = encode_batch(tiny_tokenizer, ["sigh", "sigh sigh"], max_len=100)
    assert input_ids.shape[1] == len(ids(tiny_tokenizer, "sigh sigh"))


@pytest.mark.parametrize("texts", [[""], ["it 's charming", "   "], []])
def test_encode_batch_rejects_empty_input(tiny_tokenizer, texts):
    with pytest.raises(ValueError, match=r"encodes to no tokens|at least one"):
        encode_batch(tiny_tokenizer, texts, max_len=8)
