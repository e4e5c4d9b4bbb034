"""Training data that teaches composition: the rewrites of real sentences, identity swaps, and CAD pairs."""

import random
import re

import pytest
import torch
from conftest import write_tsv

from transformer.behaviour import words
from transformer.training import composition as composition_module
from transformer.training.composition import (
    composition_sets,
    contrasts,
    expectations,
    has_negation,
    negation_pair_set,
    negation_pairs,
    negations,
    rewritable,
    single_opinion_sentences,
    verb_negations,
)
from transformer.training.data import LabelledTexts, read_pairs
from transformer.training.identity import IDENTITY_LEXICON, IDENTITY_TERMS, identity_set, swap
from transformer.training.scoring import negation_scores, pair_scores

LEXICON = LabelledTexts(None, ["great", "not great", "awful", "not awful", "tasty", "not tasty"], [1, 0, 0, 1, 1, 0])
SENTENCES = LabelledTexts(
    None,
    [
        "the pasta was great .",  # usable: one opinion word that agrees with the label
        "the waiter was awful !",
        "my soup is tasty",
        "the pasta was great and tasty .",  # two opinion words
        "the pasta was not great .",  # already negated
        "the pasta was great , but cold .",  # a contrast already
        "the pasta was awful .",  # the label disagrees with the word
        "great .",  # too short, no copula
    ],
    [1, 0, 1, 1, 0, 1, 1, 1],
)


def test_only_short_single_opinion_sentences_without_negation_or_contrast_qualify():
    found = single_opinion_sentences([SENTENCES], {"great": 1, "awful": 0, "tasty": 1})
    assert found == [
        ("the pasta was great", 1, "great"),
        ("the waiter was awful", 0, "awful"),
        ("my soup is tasty", 1, "tasty"),
    ]


def test_negations_flip_the_label_and_negate_the_clause():
    sentences = [("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")]
    made = negations(sentences, random.Random(0), negative_copies=3)
    assert len(made.texts) == 2 * (1 + 3)
    for text, label in zip(made.texts, made.labels, strict=True):
        assert has_negation(text) or text.startswith(("i doubt", "it would be wrong")), text
        assert label == (0 if "great" in text else 1), text
        assert ("pasta" in text) == ("great" in text)


def test_a_contrast_takes_the_label_of_its_main_clause():
    sentences = [("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")]
    made = contrasts(sentences, 200, random.Random(0), same_label=0.0)
    assert 80 < sum(made.labels) < 120  # balanced, whatever the sentences' balance
    for text, label in zip(made.texts, made.labels, strict=True):
        main = re.search(r"(?:, but |\. however , |, yet |\. still , )(.*) \.$", text)
        if main is None:  # "although A , B" / "even though A , B" put B after the comma; "B , although A" first
            leading = re.match(r"^(?:although|even though) .*? , (.*) \.$", text)
            main = leading or re.match(r"^(.*?) , (?:although|even though) ", text)
        assert ("great" in main.group(1)) == (label == 1), text


def test_composition_sets_are_seeded():
    first = composition_sets(rewritable([SENTENCES], LEXICON), seed=3, contrast_pairs=20)
    again = composition_sets(rewritable([SENTENCES], LEXICON), seed=3, contrast_pairs=20)
    assert first == again and set(first) == {"negation", "expectation", "contrast"}
    assert all(first[name].texts for name in first)


def _strip_terms(text: str) -> str:
    terms = sorted((t for group in IDENTITY_LEXICON.values() for t in group), key=len, reverse=True)
    return re.sub(r"\b(?:an? )?(?:" + "|".join(map(re.escape, terms)) + r")\b", "<term>", text)


def test_an_identity_swap_changes_only_the_term_and_stays_in_its_group():
    rng = random.Random(0)
    for text in ["As a gay man , I loved the brunch .", "the waiter , a black man , was very kind .",
                 "i 'm muslim and the owner made me feel welcome", "our elderly neighbour recommended it"]:  # fmt: skip
        swapped = swap(text, rng)
        assert swapped is not None and swapped != text.lower()
        assert _strip_terms(swapped) == _strip_terms(text.lower())
        written = set(re.findall(r"[\w-]+", swapped)) - set(re.findall(r"[\w-]+", text.lower()))
        assert written and written <= {t for terms in IDENTITY_TERMS.values() for t in terms}  # the training half
    assert swap("the screen went black after a week", rng) is None  # not a person
    assert swap("The old phone was straight garbage", rng) is None
    assert swap("the room was white and clean", rng) is None  # after "was" a colour, not a person


def test_identity_examples_keep_their_labels_and_spread_over_every_group():
    rows = LabelledTexts(None, ["as a gay man , the food was great .", "the pasta was awful ."] * 60, [1, 0] * 60)
    made = identity_set([rows], seed=0, frames=12)
    assert len(made.texts) == 60 + 12  # one swap per mention, frames capped at a tenth of the short sentences
    for text, label in zip(made.texts, made.labels, strict=True):
        assert label == (1 if "great" in text else 0)
    swapped = made.texts[:60]
    assert len({t.split()[2] for t in swapped}) > 1 and all(t.split()[2] != "gay" for t in swapped)


def test_the_cad_reader_keeps_pairs_together(tmp_path):
    rows = [("bad film", 0, 7), ("good film", 1, 7), ("great cast", 1, 9), ("awful cast", 0, 9)]
    pairs = read_pairs(write_tsv(tmp_path / "cad.tsv.gz", rows, header="text\tlabel\tpair"))
    assert pairs.texts == ["bad film", "good film", "great cast", "awful cast"] and pairs.labels == [0, 1, 1, 0]
    for broken in ([rows[0], rows[2], rows[1], rows[3]],  # a pair split up
                   [rows[0], ("good film", 0, 7), *rows[2:]],  # same label on both sides
                   rows[:3]):  # fmt: skip
        with pytest.raises(ValueError, match="pair"):
            read_pairs(write_tsv(tmp_path / "broken.tsv.gz", broken, header="text\tlabel\tpair"))
    with pytest.raises(ValueError, match="pair"):
        read_pairs(write_tsv(tmp_path / "plain.tsv.gz", [r[:2] for r in rows], header="text\tlabel"))


def test_pair_consistency_on_a_hand_made_example():
    labels = [1, 0, 1, 0, 0, 1, 0, 1]
    predictions = torch.tensor(
        [1, 0, 1, 1, 0, 0, 1, 1]
    )  # pair 0 both right, 1 edit wrong, 2 edit wrong, 3 original wrong
    assert pair_scores(predictions, labels) == {"originals": 0.75, "edits": 0.5, "pair_consistency": 0.25}
    assert pair_scores(predictions[:7], labels[:7])["pair_consistency"] == pytest.approx(1 / 3, abs=1e-4)


def test_negation_scores_count_only_rows_with_a_negation_word():
    texts = ["not bad at all", "great", "i didn't like it", "never again", "fine"]
    scores = negation_scores(torch.tensor([0, 1, 0, 1, 1]), [1, 1, 0, 0, 1], texts)
    assert scores == {"n": 3, "accuracy": pytest.approx(1 / 3, abs=1e-4), "positives": 1, "positive_accuracy": 0.0}


def test_a_negative_clause_gives_more_negated_copies_than_a_positive_one():
    made = negations([("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")], random.Random(0), 3)
    from_praise = [label for text, label in zip(made.texts, made.labels, strict=True) if "great" in text]
    from_complaint = [label for text, label in zip(made.texts, made.labels, strict=True) if "awful" in text]
    assert from_praise == [0, 0]  # one copy of each kind: at the copula, around the clause
    assert from_complaint == [1] * 6  # three of each: "not bad" is what a bag of words misreads


def test_negation_pairs_put_each_clause_beside_one_negated_copy_of_the_opposite_label():
    clauses = [("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")] * 20
    verbs = [("we loved the pasta", 1, "loved"), ("i hated the service", 0, "hated")] * 10
    made = negation_pairs([*clauses, ("the waiter was very awful", 0, "awful")], verbs, random.Random(0))
    originals = [f"{clause} ." for clause, _, _ in clauses + verbs]  # "not very awful" is no clear praise: left out
    assert made.texts[0::2] == originals and made.labels[0::2] == [label for _, label, _ in clauses + verbs]
    assert made.labels[1::2] == [1 - label for label in made.labels[0::2]]
    drawn = set()
    for original, negated in zip(made.texts[0::2], made.texts[1::2], strict=True):
        if negated.endswith(" " + original):  # the whole clause denied: "i doubt the pasta was great ."
            drawn.add("denied")
            assert negated.removesuffix(" " + original) in composition_module._DENIALS
            continue
        drawn.add("verb" if original.startswith(("we ", "i ")) else "copula")
        assert has_negation(negated) and negated.split()[-2:] == original.split()[-2:], (original, negated)
    assert drawn == {"denied", "copula", "verb"}


def test_the_negation_pair_set_is_seeded_and_made_of_the_rewritable_sentences():
    first, again, other = (negation_pair_set(rewritable([SENTENCES], LEXICON), seed) for seed in (3, 3, 4))
    assert first == again and first.texts[0::2] == other.texts[0::2]
    assert first.texts[0::2] == ["the pasta was great .", "the waiter was awful .", "my soup is tasty ."]


def test_an_expectation_denied_flips_the_label_and_one_met_keeps_it():
    sentences = [("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")] * 20
    made = expectations(sentences, random.Random(0))
    denied = [text.endswith(("n't .", "not .")) for text in made.texts]
    assert any(denied) and not all(denied)  # both kinds drawn
    for text, label, was_denied in zip(made.texts, made.labels, denied, strict=True):
        clause_label = 1 if "great" in text else 0
        assert label == (1 - clause_label if was_denied else clause_label), text


def test_a_negated_opinion_verb_flips_the_label_and_its_expectation_follows_the_template():
    sentences = [("i loved the pasta", 1, "loved"), ("we hated the service", 0, "hated")] * 10
    made = verb_negations(sentences, random.Random(0))
    for (clause, _, _), negated in zip(sentences, made.texts[0::2], strict=True):
        assert has_negation(negated) and negated.endswith(clause.split(maxsplit=2)[-1] + " .")  # "... the pasta ."
    assert made.labels[0::2] == [1 - label for _, label, _ in sentences]  # "i did n't love the pasta": negative
    for (_, label, _), text, got in zip(sentences, made.texts[1::2], made.labels[1::2], strict=True):
        met = text.endswith(", and i did .")
        assert got == (label if met else 1 - label), text


@pytest.mark.parametrize("same_label", [0.0, 1.0])
def test_a_contrast_joins_clauses_of_opposite_labels_but_for_its_same_label_share(same_label):
    sentences = [("the pasta was great", 1, "great"), ("the waiter was awful", 0, "awful")]
    made = contrasts(sentences, 100, random.Random(0), same_label=same_label)
    agreeing = [("great" in text) != ("awful" in text) for text in made.texts]  # one clause's sentence, twice
    assert all(agreeing) == (same_label == 1.0) and any(agreeing) == (same_label == 1.0)


def test_the_rewrites_negate_none_of_the_suites_selection_verbs():
    # The selection part then measures negated verbs the rewrites never taught, as the test part's "despise" does.
    # (The test part's "like", "adore" and "regret" are among the rewrites' verbs: taking them out changes make train.)
    rewritten = {base for _, base in composition_module._VERBS.values()}
    selection = {*words.POSITIVE_VERBS.selection, *words.NEGATIVE_VERBS.selection}
    assert len(selection) == 8 and not rewritten & selection
