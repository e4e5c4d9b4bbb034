"""Sentences with no opinion and their soft target 0.5: the neutral/ reader and its cue guard, the neutral statements
about people, the identity lexicon, and the loss that takes a soft target."""

import gzip
import re
from collections import Counter

import pytest
import torch
from tiny import tiny_model, write_gz

from transformer.behaviour import build_suite, words
from transformer.behaviour import suite as suite_module
from transformer.training import neutral
from transformer.training.composition import composed_sentences
from transformer.training.data import LabelledTexts
from transformer.training.identity import IDENTITY_TERMS, RELATIONS
from transformer.training.nuisance import NAMES, PLACES
from transformer.training.objectives import classification_loss, target_distributions


def test_the_reader_strips_the_cues_the_data_readme_lists_and_gives_every_row_one_half(tmp_path):
    rows = [
        ('Seth Rollins loses the title tomorrow night"', "tweeteval"),
        ('He said ""not today"" at the 6th hole', "tweeteval"),
        ('the \\"new\\" line opens on monday', "tweeteval"),
        ("Derby County v Peterborough 28 Apr: a form guide as...", "tweeteval"),
        ("Fans queue outside the arena …", "tweeteval"),
        ("a movie that weighs style against substance .", "sst5"),
    ]
    labelled = tmp_path / "labelled.tsv.gz"
    write_gz(labelled, rows)  # a text<TAB>label header: not a neutral file
    with pytest.raises(ValueError, match="text<TAB>source"):
        neutral.read_neutral(labelled)
    path = tmp_path / "neutral.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as file:
        file.write("text\tsource\n" + "".join(f"{text}\t{source}\n" for text, source in rows))
    read = neutral.read_neutral(path)
    assert read.texts == [
        "Seth Rollins loses the title tomorrow night",
        'He said "not today" at the 6th hole',
        'the "new" line opens on monday',
        "Derby County v Peterborough 28 Apr: a form guide as",
        "Fans queue outside the arena",
        "a movie that weighs style against substance .",
    ]
    assert read.labels == [0.5] * 6 and neutral.read_neutral(path, max_rows=2).texts == read.texts[:2]


def test_neutral_statements_cover_every_term_of_every_group_with_one_half():
    made = neutral.neutral_people(seed=0, per_term=3, everyday=20, invented=0)
    terms = [term for group in IDENTITY_TERMS.values() for term in group]
    assert len(made.texts) == 3 * len(terms) + 20 and set(made.labels) == {0.5}
    for term in terms:
        assert sum(bool(re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", t)) for t in made.texts) >= 3, term
    assert made == neutral.neutral_people(seed=0, per_term=3, everyday=20, invented=0)
    assert not any("male lady" in t or "female man" in t for t in neutral.neutral_people(1, per_term=30).texts)


def test_neutral_statements_come_in_sets_that_differ_only_in_the_term():
    made = neutral.neutral_people(seed=2, per_term=2, everyday=0, invented=0)
    for terms in IDENTITY_TERMS.values():
        pattern = "|".join(sorted(map(re.escape, terms), key=len, reverse=True))
        masked = Counter(
            re.sub(rf"\b(?:an? )?(?:{pattern})(?![\w-])", "TERM", text)
            for text in made.texts
            if re.search(rf"(?<![\w-])(?:{pattern})(?![\w-])", text)
        )
        assert sorted(masked.values()) == [len(terms), len(terms)], masked  # two sets, each with every term


def test_invented_words_come_in_sets_of_new_words_that_differ_only_in_the_word():
    made = neutral.neutral_people(seed=3, per_term=0, everyday=0, invented=50, invented_size=4)
    assert len(made.texts) == 200 and set(made.labels) == {0.5}
    fillers = " ".join(neutral.IDENTITY_TEMPLATES + NAMES + PLACES + RELATIONS + neutral._NOUNS + neutral._GENDERED)
    known = set(fillers.lower().split()) | {"a", "an"}
    masked, invented = Counter(), set()
    for text in made.texts:
        new = [word for word in text.split() if word not in known and not word.isdigit()]
        assert len(new) == 1, text  # one word is not the templates' or the fillers'
        invented.add(new[0])
        masked[text.replace(f" {new[0]} ", " WORD ")] += 1
    assert len(invented) > 190 and not invented & {t for terms in IDENTITY_TERMS.values() for t in terms}
    assert all(count % 4 == 0 for count in masked.values()), masked  # each set: one sentence, four words


def test_the_identity_lexicon_has_every_group_the_issue_names_and_none_of_the_suites_words():
    assert set(IDENTITY_TERMS) == {
        "race", "ethnicity", "nationality", "religion", "gender", "sexuality", "disability", "age", "migration"
    }  # fmt: skip
    ours = {term.lower() for terms in IDENTITY_TERMS.values() for term in terms}
    for part in ("selection", "test"):  # both parts measure terms the training never swapped
        suite = {term.lower() for terms in words.IDENTITY.values() for term in terms.part(part)}
        assert not ours & suite, part
        assert not ours & {t.replace("-", "") for t in suite}  # nor a spelling of one ("non-binary", "nonbinary")


def test_no_neutral_template_is_one_of_the_suites():
    suite = {t.lower().rstrip(".") for _, t in suite_module.IDENTITY["test"] + suite_module.IDENTITY["selection"]}
    test_texts = {text.lower() for t in build_suite(("test",)) for case in t.cases for text in case}
    for template in neutral.IDENTITY_TEMPLATES + neutral.EVERYDAY_TEMPLATES:
        assert template.rstrip(" .") not in suite
        pattern = re.escape(template.rstrip(" .")).replace(r"\{", "{").replace(r"\}", "}")
        pattern = pattern.replace("{term}", r"[\w-]+(?: [\w-]+)?")  # a term may be two words
        pattern = re.sub(r"\{\w+\}", r"\\S+", pattern)  # a name, place, number, noun or article: one word
        assert not any(re.fullmatch(pattern + r"\.?", text) for text in test_texts), template


def test_a_soft_label_is_exactly_one_half_on_each_class_and_the_loss_is_least_at_even_logits():
    targets = target_distributions([0, 1, 0.5])
    assert targets.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    model = tiny_model()
    for p in model.classifier[-1].parameters():
        torch.nn.init.zeros_(p)  # logits (0, 0): P(positive) = 0.5 for every input
    sequences = [[5, 6, 7], [8, 9]]
    even = classification_loss(model, sequences, targets[[2, 2]], [0, 1], 0.0, 0.0)
    assert even.item() == pytest.approx(torch.log(torch.tensor(2.0)).item(), abs=1e-6)
    with torch.no_grad():
        model.classifier[-1].bias.copy_(torch.tensor([0.0, 1.0]))  # leaning positive costs a neutral row more
    assert classification_loss(model, sequences, targets[[2, 2]], [0, 1], 0.0, 0.0) > even


def test_composed_sentences_are_the_real_rows_with_a_negation_or_a_contrast_of_either_label():
    rows = LabelledTexts(
        None,
        ["not bad at all", "great but pricey", "the food was awful", "it was n't good", "lovely staff"],
        [1, 0, 0, 0, 1],
    )
    made = composed_sentences([rows], seed=0)
    kept = dict(zip(made.texts, made.labels, strict=True))
    assert kept["not bad at all"] == 1 and sorted(made.labels) == [0, 1]  # the one positive, one negative of two
    assert set(kept) - {"not bad at all"} <= {"great but pricey", "it was n't good"}
    assert made == composed_sentences([rows], seed=0)


def test_composed_sentences_keep_as_many_of_each_label_whatever_the_share_in_the_data():
    negatives = [f"it was not good {i}" for i in range(30)]
    rows = LabelledTexts(None, [*negatives, "not bad", "good but loud", "fine"], [0] * 30 + [1, 1, 1])
    made = composed_sentences([rows], seed=3)
    assert sorted(made.labels) == [0, 0, 1, 1] and {"not bad", "good but loud"} <= set(made.texts)
    assert made.texts != composed_sentences([rows], seed=4).texts or made.labels != [0, 0, 1, 1]
