"""Counterfactual logit pairing: the penalty, the slots it finds, the twins it draws, and the loss it joins."""

import dataclasses
import random

import pytest
import torch
from tiny import tiny_model
from tokenizers import Tokenizer, models, pre_tokenizers

from transformer.tokenizer import pad_ids
from transformer.training import pairing
from transformer.training.mixture import Mixture
from transformer.training.objectives import classification_loss, target_distributions

OPINION = frozenset({"great", "awful", "good"})


def word_tokenizer(words: list[str]) -> Tokenizer:
    """A whitespace tokenizer over ``words`` (ids from 4 up; 1 is [UNK])."""
    vocabulary = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3} | {w: i + 4 for i, w in enumerate(words)}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


def test_the_penalty_is_zero_for_equal_logits_grows_with_the_gap_and_reaches_both_sides():
    logits = torch.tensor([[0.2, 1.0], [1.5, -0.5]], requires_grad=True)
    assert pairing.pairing_penalty(logits, logits.detach().clone()).eq(0).all()
    near, far = torch.tensor([[0.2, 1.5], [1.5, -0.5]]), torch.tensor([[0.2, 3.0], [1.5, -0.5]])
    assert pairing.pairing_penalty(logits, near)[0].item() == pytest.approx(0.5)
    assert pairing.pairing_penalty(logits, far)[0] > pairing.pairing_penalty(logits, near)[0] > 0
    twin = torch.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    pairing.pairing_penalty(logits, twin).sum().backward()
    assert logits.grad.abs().sum() > 0 and twin.grad.abs().sum() > 0
    assert torch.equal(logits.grad, -twin.grad)  # the same pull on either side, opposite ways


@pytest.mark.parametrize(
    ("text", "kind", "span"),
    [
        ("as a muslim woman , the food was great", "identity", "muslim"),
        ("chloe said the food was great", "name", "chloe"),
        ("the food in oslo was great", "place", "oslo"),
        ("we waited 45 minutes", "number", "45"),
        ("great food http://x.com/abc", "url", "http://x.com/abc"),
        ("@sam great food", "handle", "@sam"),
        ("the soup does n't taste great", "typo", "soup"),
    ],
)
def test_each_kind_of_slot_is_found_where_it_is(text, kind, span):
    slot = pairing.find_slot(text, OPINION)
    assert (slot.kind, text[slot.start : slot.end]) == (kind, span)
    other = slot.filled("XYZ")
    assert other.replace("XYZ", span, 1) == text


def test_a_sentence_of_opinion_and_negation_words_only_has_no_slot():
    assert pairing.find_slot("not good , awful", OPINION) is None
    assert pairing.find_slot("great", OPINION) is None


def test_a_typo_goes_in_the_word_never_in_an_opinion_or_negation():
    slot = pairing.find_slot("never again , awful soup", OPINION)
    assert slot.text[slot.start : slot.end] == "again"
    typo = pairing.filler(slot, (), random.Random(0))
    assert typo != "again" and typo[0] == "a"


def test_rare_words_come_from_the_vocabularys_tail_minus_opinion_and_held_out_words():
    words = ["apple", "table", "great", "house", "chairs", "oslo", "ab", "tables"]
    rare = pairing.rare_words(word_tokenizer(words), OPINION | {"tables"}, share=0.5)
    assert rare == ("house", "chairs")  # "great": opinion; "oslo": held out; "ab": short; "tables": excluded


def build(texts: list[str], weight=1.0, share=0.5):
    tokenizer = word_tokenizer(sorted({w for t in texts for w in t.split()} | {"xx", "yy"}))
    sequences = [e.ids for e in tokenizer.encode_batch(texts)]
    mixture = Mixture(["sst2"], sequences, [1.0] * len(texts), [0] * len(texts), None, texts)
    made = pairing.build_pairing(weight, mixture, OPINION, tokenizer, max_len=16, seed=3)
    return dataclasses.replace(made, share=share), mixture, tokenizer


def test_twins_are_drawn_from_slotted_rows_by_share_and_the_same_rows_draw_the_same_twins():
    texts = ["chloe said it was great", "great", "the food in oslo was great", "we waited 45 minutes"] * 4
    made, _, _ = build(texts, share=0.5)
    rows = list(range(16))
    chosen, ids = made.twins(rows)
    assert len(chosen) == 8 and all(made.slots[rows[i]] is not None for i in chosen) and len(ids) == 8
    assert made.twins(rows) == (chosen, ids)
    assert made.twins(list(reversed(rows)))[0] != chosen  # another batch, another draw


def test_rare_kinds_are_paired_as_often_as_common_ones():
    texts = ["the soup tasted great"] * 90 + ["chloe said it was great"] * 10  # typos 9 : names 1
    made, _, _ = build(texts, share=0.1)
    names = 0
    for start in range(200):
        rows = random.Random(start).sample(range(100), 50)
        chosen, _ = made.twins(rows)
        names += sum(made.slots[rows[i]].kind == "name" for i in chosen)
    assert names / (200 * 5) > 0.35  # uniform picks would give about 0.1


def test_at_weight_zero_the_loss_is_the_loss_without_pairing():
    texts = ["chloe said it was great", "the food in oslo was great", "we waited 45 minutes", "great"]
    made, mixture, _ = build(texts, weight=0.0)
    model = tiny_model(0).train()
    targets = target_distributions(mixture.labels)
    losses = []
    for use in (None, made):
        torch.manual_seed(7)
        losses.append(classification_loss(model, mixture.sequences, targets, [0, 1, 2, 3], 0.3, 0.1, pairing=use))
    assert torch.equal(losses[0], losses[1])


def test_with_weight_the_loss_adds_the_gap_and_moves_towards_reading_twins_alike():
    texts = ["chloe said it was great", "the food in oslo was great", "we waited 45 minutes", "great"]
    made, mixture, _ = build(texts, weight=2.0, share=1.0)
    model = tiny_model(0, vocab_size=40).train()
    targets = target_distributions(mixture.labels)
    torch.manual_seed(1)
    plain = classification_loss(model, mixture.sequences, targets, [0, 1, 2, 3], 0.0, 0.0)
    torch.manual_seed(1)
    paired = classification_loss(model, mixture.sequences, targets, [0, 1, 2, 3], 0.0, 0.0, pairing=made)
    chosen, ids = made.twins([0, 1, 2, 3])
    with torch.no_grad():
        logits = model(*pad_ids([mixture.sequences[i] for i in chosen] + ids))
    gaps = pairing.pairing_penalty(logits[: len(chosen)], logits[len(chosen) :])
    assert paired.item() == pytest.approx(plain.item() + 2.0 * gaps.sum().item() / 4, rel=1e-5)


def test_pairing_only_some_kinds_leaves_every_other_row_unpaired():
    texts = ["chloe said it was great", "the food in oslo was great", "we waited 45 minutes", "the soup tasted great"]
    tokenizer = word_tokenizer(sorted({w for t in texts for w in t.split()}))
    mixture = Mixture(["sst2"], [e.ids for e in tokenizer.encode_batch(texts)], [1.0] * 4, [0] * 4, None, texts)
    every = pairing.build_pairing(1.0, mixture, OPINION, tokenizer, max_len=16, seed=3)
    assert [slot.kind for slot in every.slots] == ["name", "place", "number", "typo"]
    people = pairing.build_pairing(1.0, mixture, OPINION, tokenizer, 16, 3, kinds=("identity", "name", "place"))
    assert [slot and slot.kind for slot in people.slots] == ["name", "place", None, None]
    assert set(people.kind_weights) == {"name", "place"}
