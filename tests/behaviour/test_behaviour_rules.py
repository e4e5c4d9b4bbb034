"""The behavioural suite (transformer.behaviour): its parts, its scoring rules, its runner on models we understand."""

import json
import re

import pytest
from tiny import tiny_model

from transformer.behaviour import PARTS, build_suite, run_suite, summarise, words
from transformer.behaviour import __main__ as behaviour_cli
from transformer.behaviour import suite as suite_module
from transformer.behaviour.run import case_fails
from transformer.behaviour.suite import Test as SuiteTest
from transformer.tokenizer import train_tokenizer
from transformer.training.scoring import positive_probabilities

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

SUITE = build_suite()


def always(p: float):
    return lambda texts: [p] * len(texts)


def test_both_parts_hold_every_test_and_share_no_word_and_no_template():
    names = {part: [(t.capability, t.name) for t in SUITE if t.part == part] for part in PARTS}
    assert names["selection"] == names["test"] and len(names["test"]) >= 40
    assert all(test.cases for test in SUITE)
    for role in [value for value in vars(words).values() if isinstance(value, words.Words)]:
        assert role.selection and role.test and not set(role.selection) & set(role.test), role
    for group, terms in words.IDENTITY.items():
        assert not set(terms.selection) & set(terms.test), group
    for name in ("VOCABULARY", "NEGATED", "NEGATED_VERB", "DISTANT", "EXPECTED", "CONTRAST", "ROBUST", "IDENTITY",
                 "INSERTED"):  # fmt: skip
        table = getattr(suite_module, name)
        assert not set(table["selection"]) & set(table["test"]), name
    texts = {part: {text for t in SUITE if t.part == part for case in t.cases for text in case} for part in PARTS}
    assert not texts["selection"] & texts["test"]


def test_the_capabilities_the_issue_names_are_all_there():
    capabilities = {test.capability for test in SUITE}
    assert {"vocabulary", "negation", "negation at a distance", "expectation denied", "contrast",
            "intensifiers and reducers", "robustness", "identity"} <= capabilities  # fmt: skip
    robustness = {test.name for test in SUITE if test.capability == "robustness"}
    assert {"typos", "punctuation", "contractions", "names", "places", "numbers", "urls", "handles"} <= robustness
    groups = {test.group for test in SUITE if test.capability == "identity"}
    assert groups == {"race", "religion", "gender", "sexuality", "nationality", "disability", "age"}


def test_a_model_that_always_answers_positive_fails_every_negative_test_and_no_invariance():
    for result in run_suite(SUITE, always(0.9)):
        test = result.test
        if test.kind == "label" and test.expect == "negative":
            assert result.failure_rate == 1.0, test.name
        else:  # positive, not negative, every invariance and every direction test
            assert result.failure_rate == 0.0, test.name
    summary = summarise(run_suite(SUITE, always(0.9)))
    identity = summary["test"]["identity"]
    assert identity["swap_changes_class"] == 0.0 and identity["median_spread"] == 0.0
    neutral = identity["neutral"]  # every neutral text at 0.9: no spread, but every one a clear opinion
    assert (neutral["swap_changes_class"], neutral["median_spread"], neutral["clear_opinion"]) == (0.0, 0.0, 1.0)
    assert set(neutral["by_group"]) == set(words.IDENTITY)
    assert all(group["clear_opinion"] == 1.0 for group in neutral["by_group"].values())


def test_scoring_rules_at_their_thresholds():
    label = SuiteTest("t", "c", "label", "test", "not negative", (("x",),))
    assert not case_fails(label, [1 / 3]) and case_fails(label, [0.33])
    assert case_fails(SuiteTest("t", "c", "label", "test", "negative", (("x",),)), [0.5])
    positive = SuiteTest("t", "c", "label", "test", "positive", (("x",),))
    assert not case_fails(positive, [0.5]) and case_fails(positive, [0.4999])
    not_positive = SuiteTest("t", "c", "label", "test", "not positive", (("x",),))
    assert not case_fails(not_positive, [2 / 3]) and case_fails(not_positive, [0.6667])
    up = SuiteTest("t", "c", "direction", "test", "not down", (("a", "b"),))
    assert not case_fails(up, [0.8, 0.71]) and case_fails(up, [0.8, 0.69])
    down = SuiteTest("t", "c", "direction", "test", "not up", (("a", "b"),))
    assert not case_fails(down, [0.2, 0.29]) and case_fails(down, [0.2, 0.31])
    same = SuiteTest("t", "c", "invariance", "test", None, (("a", "b", "c"),))
    assert not case_fails(same, [0.6, 0.9, 0.5]) and case_fails(same, [0.6, 0.9, 0.4])


def test_identity_figures_on_a_model_that_reads_one_term_as_negative():
    term = words.IDENTITY["religion"].test[0]
    tests = [t for t in SUITE if t.part == "test" and t.group == "religion"]
    results = run_suite(tests, lambda texts: [0.2 if term in text else 0.8 for text in texts])
    identity = summarise(results)["test"]["identity"]
    # Three terms per case, one flipped: 4 of the 6 ordered pairs change class, and every spread is 0.6.
    assert identity["swap_changes_class"] == pytest.approx(4 / 6, abs=1e-4)
    assert identity["median_spread"] == pytest.approx(0.6)
    neutral = identity["neutral"]["by_group"]["religion"]  # one term in three at 0.2, two at 0.8: all clear
    assert neutral["median_spread"] == pytest.approx(0.6) and neutral["clear_opinion"] == 1.0
    assert all(result.failure_rate == 1.0 for result in results)


def _without_terms(text: str, terms: tuple[str, ...]) -> str:
    for term in sorted(terms, key=len, reverse=True):
        text = re.sub(rf"\b(?:an? )?{re.escape(term)}\b", "<term>", text, flags=re.IGNORECASE)
    return text


def test_a_model_near_one_half_on_neutral_texts_reads_no_clear_opinion():
    tests = [t for t in SUITE if t.part == "test" and t.capability == "identity"]
    neutral = summarise(run_suite(tests, lambda texts: [0.5 + 0.01 * (i % 3) for i in range(len(texts))]))
    figures = neutral["test"]["identity"]["neutral"]
    assert figures["clear_opinion"] == 0.0 and figures["median_spread"] == pytest.approx(0.02)


def test_url_and_handle_cases_add_one_token_to_the_same_sentence():
    for test in (t for t in SUITE if t.name in ("urls", "handles")):
        inserted = words.URLS.part(test.part) if test.name == "urls" else words.HANDLES.part(test.part)
        for base, variant in test.cases:
            extra = [token for token in inserted if token in variant]
            assert len(extra) == 1 and base in variant and base not in extra[0]


def test_an_identity_swap_changes_only_the_identity_term():
    for test in (t for t in SUITE if t.capability == "identity"):
        terms = words.IDENTITY[test.group].part(test.part)
        for case in test.cases:
            assert len(case) == len(terms)
            for text, term in zip(case, terms, strict=True):
                assert term in text
            assert len({_without_terms(text, terms) for text in case}) == 1, case


def test_an_order_blind_model_passes_invariance_to_clause_order():
    tests = [t for t in SUITE if t.name == "clause order"]
    texts = [text for t in tests for case in t.cases for text in case]
    tokenizer = train_tokenizer(texts, vocab_size=300)
    blind = tiny_model(vocab_size=tokenizer.get_vocab_size(), max_len=64, use_positional_encoding=False)
    results = run_suite(tests, positive_probabilities(blind, tokenizer))
    for result in results:
        assert result.failure_rate == 0.0
        assert all(abs(a - b) < 1e-5 for a, b in result.probabilities)  # a word-swapped pair reads the same
    seeing = tiny_model(vocab_size=tokenizer.get_vocab_size(), max_len=64)  # positions on: the pairs differ
    assert any(abs(a - b) > 1e-4 for r in run_suite(tests, positive_probabilities(seeing, tokenizer))
               for a, b in r.probabilities)  # fmt: skip


def test_the_command_prints_a_row_per_test_and_writes_the_summary(tiny_model_dir, tmp_path, capsys):
    out = tmp_path / "behaviour.json"
    summary = behaviour_cli.main(["--model", str(tiny_model_dir), "--part", "test", "--json", str(out)])
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| test |")]
    assert len(rows) == sum(t.part == "test" for t in SUITE)
    assert json.loads(out.read_text()) == summary and list(summary) == ["test"]
    assert "identity (neutral templates)" in printed


def test_the_command_fails_in_one_line_on_a_missing_model(tmp_path):
    with pytest.raises(SystemExit, match="error: "):
        behaviour_cli.main(["--model", str(tmp_path / "nowhere")])


def _expected_reading(name: str) -> str:
    """What a label test's name says it expects: the valence of the clause that carries the opinion ("A, but B": B's),
    denied by "negated", "negation" or "denied" (a denied complaint need only read as not negative)."""
    carried = name.split(", but ")[-1]
    valence = "positive" if "positive" in carried else "negative"
    if any(word in name for word in ("negated", "negation", "denied")):
        return "negative" if valence == "positive" else "not negative"
    return valence


def test_every_test_expects_what_its_name_and_words_say():
    for part in PARTS:
        positive, negative = set(words.POSITIVE.part(part)), set(words.NEGATIVE.part(part))
        for test in (t for t in SUITE if t.part == part and t.kind == "label"):
            assert test.expect == _expected_reading(test.name), test.name
            if test.capability in ("vocabulary", "negation", "negation at a distance", "expectation denied"):
                named = positive if "positive" in test.name else negative  # the adjective the name promises
                other = negative if named is positive else positive
                if "verb" not in test.name:
                    for (text,) in test.cases:
                        found = set(re.findall(r"[a-z-]+", text.lower()))
                        assert found & named and not found & other, (test.name, text)
        for test in (t for t in SUITE if t.part == part and t.kind == "direction"):
            degree, valence = test.name.split(" on ")  # an intensifier makes an opinion stronger, a reducer weaker
            rises = (degree == "intensifier") == (valence == "positive")  # P(positive) may only go up
            assert test.expect == ("not down" if rises else "not up"), test.name
            degrees = words.INTENSIFIERS.part(part) if degree == "intensifier" else words.REDUCERS.part(part)
            for base, variant in test.cases:
                assert any(variant.replace(f" {d} ", " ", 1) == base for d in degrees), (test.name, base, variant)
