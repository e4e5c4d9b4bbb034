"""The held-out probe: its frames are its own, each figure is what it says on models whose answer is known, and the
command writes every figure."""

import json
import re

import pytest

from transformer.behaviour import suite as suite_module
from transformer.probe import main, summary_lines
from transformer.training import neutral, probe
from transformer.training.identity import HELD_OUT_TERMS, IDENTITY_TERMS
from transformer.training.nuisance import HELD_OUT_NAMES


def constant(value: float):
    return lambda texts: [value] * len(texts)


def test_no_frame_is_a_training_template_or_the_suites():
    ours = {re.sub(r"[^a-z{} ]", "", frame.lower()).split("{term}")[0].strip() for frame in probe.IDENTITY_FRAMES}
    training = " ".join(neutral.IDENTITY_TEMPLATES + neutral.EVERYDAY_TEMPLATES)
    suite = " ".join(template for part in suite_module.IDENTITY.values() for _, template in part)
    for frame in probe.IDENTITY_FRAMES:
        stem = frame.rstrip(".").lower()
        assert stem not in training.lower() and frame not in suite, frame
    assert len(ours) == len(probe.IDENTITY_FRAMES)  # no two frames open alike


def test_a_model_that_reads_every_statement_as_half_has_no_spread_and_no_opinion():
    report = probe.run_probe(constant(0.5))
    for half in ("training", "held_out"):
        assert report["identity"][half]["median_spread"] == 0 and report["identity"][half]["clear_opinion"] == 0
    assert set(report["frame_means"].values()) == {0.5}
    assert report["invariance"] == {"names": {"training": 0, "held_out": 0}, "places": {"training": 0, "held_out": 0},
                                    "numbers": 0}  # fmt: skip


def test_a_model_that_learnt_only_the_training_words_shows_the_gap_on_the_held_out_half():
    held = {term for terms in HELD_OUT_TERMS.values() for term in terms}
    taught = {term for terms in IDENTITY_TERMS.values() for term in terms}

    def reads_words(texts):  # 0.5 for the training half's terms; the held-out half swings with its first letter
        values = []
        for text in texts:
            term = next((t for t in held | taught if re.search(rf"\b{re.escape(t)}\b", text.lower())), None)
            values.append(0.5 if term is None or term in taught else (0.95 if term[0] < "m" else 0.05))
        return values

    report = probe.run_probe(reads_words)
    assert report["identity"]["training"]["median_spread"] == 0
    assert report["identity"]["held_out"]["median_spread"] == pytest.approx(0.9)
    assert report["identity"]["held_out"]["clear_opinion"] == 1.0


def test_a_name_that_moves_the_class_is_counted_in_its_half():
    name = HELD_OUT_NAMES[0]
    report = probe.run_probe(lambda texts: [0.2 if name in text else 0.8 for text in texts])
    names = report["invariance"]["names"]
    assert names["training"] == 0 and names["held_out"] == pytest.approx(1 / (len(HELD_OUT_NAMES) // 4))


def answer_key(cases: list[tuple[str, bool]]):
    """A model that reads every case right."""
    key = dict(cases)
    return lambda texts: [0.9 if key[text] else 0.1 for text in texts]


def test_time_and_holder_cases_need_more_than_the_last_opinion_word():
    positive = set(probe.POSITIVE) | {form for verb in probe.POSITIVE_VERBS for form in verb}
    negative = set(probe.NEGATIVE) | {form for verb in probe.NEGATIVE_VERBS for form in verb}

    def reads_the_last_opinion(texts):
        values = []
        for text in texts:
            found = [w for w in re.findall(r"[a-z]+", text.lower()) if w in positive | negative]
            values.append(0.9 if found[-1] in positive else 0.1)
        return values

    for templates in (probe.TEMPORAL, probe.HOLDER):
        cases = probe.ordered_cases(templates)
        assert {positive for _, positive in cases} == {True, False}
        assert probe.failure_rate(answer_key(cases), cases) == 0
        assert 0 < probe.failure_rate(reads_the_last_opinion, cases) < 0.5


def test_the_command_prints_each_figure_and_writes_them_all(tiny_model_dir, tmp_path, capsys):
    report = main(["--model", str(tiny_model_dir), "--json", str(tmp_path / "probe.json")])
    assert json.loads((tmp_path / "probe.json").read_text(encoding="utf-8")) == report
    out = capsys.readouterr().out
    assert out.strip().splitlines() == summary_lines(report) and "held_out half" in out and "temporal fails" in out
