"""Reading one sentence: one tokenization, one model call, truncation with a notice, plain payloads."""

import dataclasses
import json
import types

import numpy as np
import pytest
import torch
from app_fixtures import MARKUP, TINY_MAX_LEN

from transformer import sinusoidal_table
from transformer.explorer import analysis, payloads
from transformer.explorer.drawing import status, token_spans


@pytest.fixture
def forward_calls(model):
    """How many times the model's forward pass has run since the test started."""
    calls = []
    handle = model.register_forward_hook(lambda *_: calls.append(1))
    yield calls
    handle.remove()


def long_text(tokens: int) -> str:
    return " ".join(["wonderful", "film"] * (tokens // 2))


def test_analyze_reads_the_sentence_in_one_forward_pass(model, tokenizer, forward_calls):
    text = "A wonderful film, the acting was dull"
    result = analysis.analyze(model, tokenizer, text)
    assert len(forward_calls) == 1
    assert result.tokens == ["a", "wonderful", "film", ",", "the", "acting", "was", "dull"]
    assert result.token_ids == tokenizer.encode(text).ids
    n = len(result.tokens)
    assert result.attentions.shape == (2, 2, n, n) and result.attentions.dtype == np.float32
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)
    assert result.text == text and not result.truncated and result.notice is None
    assert sum(result.probabilities) == pytest.approx(1.0)
    with torch.inference_mode():
        expected = model(torch.tensor([result.token_ids])).softmax(-1)[0].tolist()
    assert result.probabilities == pytest.approx(expected, abs=1e-6)
    assert list(result.prediction) == ["negative", "positive"]


def test_offsets_point_into_the_typed_text(model, tokenizer):
    text = "The FILM isn't   dull"
    result = analysis.analyze(model, tokenizer, text)
    pieces = [text[start:end] for start, end in result.offsets]
    assert pieces == ["The", "FILM", "is", "n't", "dull"]
    assert result.tokens == ["the", "film", "is", "n't", "dull"]


def test_token_spans_cover_the_typed_text_exactly_once(model, tokenizer):
    text = "  The FILM isn't [UNK]-ish 😀 漢字  "
    spans = token_spans.token_spans(analysis.analyze(model, tokenizer, text))
    assert "".join(piece for piece, _ in spans) == text
    categories = [category for _, category in spans if category is not None]
    assert categories[:3] == ["0", "1", "2"]  # the typed "The" is the token "the": only its position
    assert spans[0] == ("  ", None) and spans[-1] == ("  ", None)


def test_long_text_is_truncated_with_a_notice(model, tokenizer, forward_calls):
    text = long_text(TINY_MAX_LEN + 10)
    result = analysis.analyze(model, tokenizer, text)
    assert len(result.tokens) == TINY_MAX_LEN and result.total_tokens == TINY_MAX_LEN + 10
    assert result.truncated
    assert f"at most {TINY_MAX_LEN} tokens: only the first {TINY_MAX_LEN} of {TINY_MAX_LEN + 10}" in result.notice
    assert result.attentions.shape[-1] == TINY_MAX_LEN
    assert len(forward_calls) == 1
    spans = token_spans.token_spans(result)
    read = result.offsets[-1][1]
    assert "".join(piece for piece, _ in spans[:-1]) == text[:read]  # what the model read, then one marker
    assert spans[-1] == (f" … {len(text[read:].split())} more words not read", None)


def test_a_long_texts_token_view_shows_what_was_read_and_counts_the_rest(model, tokenizer):
    text = ("a charming journey , the movie is n't funny . " * 300)[: analysis.MAX_INPUT_CHARS]
    result = analysis.analyze(model, tokenizer, text)
    spans = token_spans.token_spans(result)
    positions = [int(category.split()[0]) for _, category in spans if category is not None]
    assert positions == list(range(TINY_MAX_LEN))  # every token read, in order, and nothing after them
    marker, category = spans[-1]
    unread = len(text[result.offsets[-1][1] :].split())
    assert category is None and marker == f" … {unread:,} more words not read" and "," in f"{unread:,}"
    assert sum(len(piece) for piece, _ in spans) < 400  # the panel holds 32 tokens, not 10,000 characters


@pytest.mark.parametrize(
    ("rest", "marker"),
    [
        ("vie is great", " … 3 more words not read"),  # the tail of a word cut by the model's limit is one word
        (" great ", " … 1 more word not read"),
        ("", " … the rest was not read"),
    ],
)
def test_the_unread_marker_counts_whole_words(rest, marker):
    assert token_spans.unread_marker(rest) == marker


def test_a_text_that_fits_is_shown_whole_without_a_marker(model, tokenizer):
    spans = token_spans.token_spans(analysis.analyze(model, tokenizer, "a charming journey"))
    assert "".join(piece for piece, _ in spans) == "a charming journey" and "not read" not in spans[-1][0]


def test_pieces_the_vocabulary_lacks_are_named_in_the_notice(model, tokenizer):
    result = analysis.analyze(model, tokenizer, "a charming film \U0001f642 \U0001f3ac \U0001f642")
    assert result.tokens.count("[UNK]") == 3 and not result.truncated
    assert result.unknown == ["\U0001f642", "\U0001f3ac"]  # in order, each once
    assert "no token for `\U0001f642`, `\U0001f3ac`: each was read as `[UNK]`" in result.notice


def test_the_notice_names_a_few_unknown_pieces_each_kept_short(model, tokenizer):
    emoji = [chr(0x1F680 + i) for i in range(7)]
    result = analysis.analyze(model, tokenizer, " ".join(["\u0436" * 30, *emoji]))
    assert result.unknown == ["\u0436" * 30, *emoji]
    shown = [f"`{piece}`" for piece in ["\u0436" * 19 + "\u2026", *emoji[: analysis.MAX_UNKNOWN_SHOWN - 1]]]
    assert f"no token for {', '.join(shown)} and 3 more:" in result.notice


def test_a_cut_text_with_unknown_pieces_gets_both_sentences(model, tokenizer):
    result = analysis.analyze(model, tokenizer, "\U0001f642 " + long_text(TINY_MAX_LEN + 10))
    assert result.truncated and result.unknown == ["\U0001f642"]
    assert f"at most {TINY_MAX_LEN}" in result.notice and "it was read as `[UNK]`" in result.notice


def test_exactly_max_len_tokens_is_not_truncated(model, tokenizer):
    result = analysis.analyze(model, tokenizer, long_text(TINY_MAX_LEN))
    assert len(result.tokens) == TINY_MAX_LEN and not result.truncated and result.notice is None


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", None])
def test_blank_text_asks_for_a_sentence(model, tokenizer, text, forward_calls):
    with pytest.raises(analysis.EmptyInputError, match="Type a sentence"):
        analysis.analyze(model, tokenizer, text)
    assert not forward_calls


def test_text_with_no_token_is_an_empty_input(model, tokenizer):
    with pytest.raises(analysis.EmptyInputError, match="no token"):
        analysis.analyze(model, tokenizer, "\u0301\u0301")  # combining accents: the normaliser strips them all


def test_oversized_text_is_refused_before_tokenizing(model, tokenizer, forward_calls):
    analysis.analyze(model, tokenizer, "a" * analysis.MAX_INPUT_CHARS)  # the cap itself is fine
    forward_calls.clear()
    with pytest.raises(analysis.InputTooLongError, match="10,000"):
        analysis.analyze(model, tokenizer, "a" * (analysis.MAX_INPUT_CHARS + 1))
    assert not forward_calls


@pytest.mark.parametrize(
    "text",
    [
        "great 😀🎬👍🏽",
        "שלום world",
        "漢字 and かな",
        "tab\there\x00nul\x1bescape\u200bzero-width",
        MARKUP,
        "e\u0301\u0301",
    ],
)
def test_any_unicode_is_read(model, tokenizer, text):
    result = analysis.analyze(model, tokenizer, text)
    assert result.tokens
    spans = token_spans.token_spans(result)
    read = text[: result.offsets[-1][1]] if result.truncated else text  # MARKUP is longer than the model reads
    assert "".join(piece for piece, _ in spans[: len(spans) - result.truncated]) == read
    json.dumps(payloads.attention_payload(result))


def test_attention_matrix_picks_a_head_or_averages_them(model, tokenizer):
    result = analysis.analyze(model, tokenizer, "a wonderful film")
    np.testing.assert_array_equal(analysis.attention_matrix(result, 1, 0), result.attentions[1, 0])
    np.testing.assert_allclose(analysis.attention_matrix(result, 1), result.attentions[1].mean(axis=0))


def test_attention_payload_is_json_with_rows_that_sum_to_one(model, tokenizer):
    result = analysis.analyze(model, tokenizer, "the film , the film , the acting")
    payload = json.loads(json.dumps(payloads.attention_payload(result)))
    assert payload["tokens"] == result.tokens and payload["truncated"] is False
    attentions = np.array(payload["attentions"])
    n = len(result.tokens)
    assert attentions.shape == (2, 2, n, n)  # [layer][head][query][key]
    np.testing.assert_allclose(attentions.sum(axis=-1), 1.0, atol=n * 10**-payloads.PAYLOAD_DECIMALS)
    np.testing.assert_array_equal(attentions, np.round(attentions, payloads.PAYLOAD_DECIMALS))


@pytest.mark.parametrize(("weight", "decimals"), [(0.1234, 4), (0.123457, 6), (3.141593, 6), (1e-06, 6)])
def test_the_most_heads_an_answer_holds_fit_in_8_mb_at_their_longest(weight, decimals):
    """Every number printed at its longest ("0.1234" at 4 decimals): the heads that fit (``chosen_maps``) are at most
    ``MAX_ANSWER_BYTES`` as the API sends them, and one more head is refused."""
    n = 512
    maps = np.full((1, 12, n, n), weight, dtype=np.float32)
    fit = payloads.parts_that_fit(maps, n * n, decimals)
    assert 1 <= fit < 12
    answer = payloads.chosen_maps(maps, 1, list(range(1, fit + 1)), "maps", decimals)
    size = len(json.dumps([answer]))
    assert size <= payloads.MAX_ANSWER_BYTES
    if weight > 0.1:  # printed in full, the bound is tight (1e-06 prints shorter than "0.000001")
        assert size > payloads.MAX_ANSWER_BYTES * fit / (fit + 1) - payloads.OTHER_FIELDS_BYTES
    with pytest.raises(analysis.InputError, match=f"At {n} tokens an answer holds at most {fit} heads"):
        payloads.chosen_maps(maps, 1, list(range(1, fit + 2)), "maps", decimals)


@pytest.mark.parametrize("score", [-123.456789, 0.654321, 7e-07])
def test_the_most_query_rows_of_four_maps_fit_in_8_mb_and_one_more_is_refused(score):
    """``refuse_past_size`` on parts that are rows (``/head_internals``: one query's row of its four maps): the rows
    that fit are at most ``MAX_ANSWER_BYTES`` with every score at its longest, and one more row is refused."""
    n, decimals = 512, 6
    maps = np.full((n, 4, n), score)  # one query's rows of raw, scaled, weights, weights_unscaled
    fit = payloads.parts_that_fit(maps, 4 * n, decimals)
    assert 1 <= fit < n
    payloads.refuse_past_size(fit, maps, 4 * n, decimals, "queries' rows", "query")
    size = len(json.dumps([payloads.rounded(maps[:fit], decimals)]))
    assert size <= payloads.MAX_ANSWER_BYTES
    if abs(score) > 0.1:  # printed in full, the bound is tight
        assert size > payloads.MAX_ANSWER_BYTES * fit / (fit + 1) - payloads.OTHER_FIELDS_BYTES
    with pytest.raises(analysis.InputError, match=f"^At {n} tokens an answer holds at most {fit} queries' rows "):
        payloads.refuse_past_size(fit + 1, maps, 4 * n, decimals, "queries' rows", "query")


def test_label_payload_ranks_the_classes(model, tokenizer):
    result = analysis.analyze(model, tokenizer, "a wonderful film")
    payload = payloads.label_payload(result)
    best = max(result.prediction, key=result.prediction.get)
    assert payload["label"] == best == payload["confidences"][0]["label"]
    assert {entry["label"] for entry in payload["confidences"]} == {"negative", "positive"}
    assert sum(entry["confidence"] for entry in payload["confidences"]) == pytest.approx(1.0, abs=1e-3)


def test_positional_table_is_the_models_own(model):
    table = analysis.positional_table(model)
    np.testing.assert_allclose(table, sinusoidal_table(model.max_len, model.d_model).numpy())


def test_model_status_names_the_model_and_escapes_the_note(model, tmp_path):
    loaded = types.SimpleNamespace(
        model=model, source=str(tmp_path), revision=None, device="cpu", metrics={"dev": {"sst2": 0.8, "mean": 0.8412}}
    )
    line = status.model_status(loaded, note="Could not load <b>x</b>")
    parameters = sum(p.numel() for p in model.parameters())
    over = "mean accuracy over its 1 dev sets (sst2) 84.1%"  # what the accuracy is over, said where it is given
    for part in (str(tmp_path), "local folder", "cpu", f"{parameters:,} parameters", over, "&lt;b&gt;x"):
        assert part in line
    hub = types.SimpleNamespace(model=model, source="someone/sentiment", revision=None, device="cuda:0", metrics={})
    assert "revision main" in status.model_status(hub) and "mean dev accuracy n/a" in status.model_status(hub)


@pytest.mark.parametrize(
    ("probabilities", "clear"), [([0.51, 0.49], False), ([0.41, 0.59], False), ([0.61, 0.39], True), ([0.0, 1.0], True)]
)
def test_predict_says_when_the_model_has_no_clear_opinion(model, tokenizer, probabilities, clear):
    """Issue 53: within 0.1 of 0.5 the answer says so in a field added beside the old ones."""
    result = dataclasses.replace(analysis.analyze(model, tokenizer, "a film"), probabilities=probabilities)
    payload = payloads.label_payload(result)
    assert payload["clear"] is clear
    assert payload["label"] == payload["confidences"][0]["label"]  # the old fields as they were
