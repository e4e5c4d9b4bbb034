"""The model card's table of targets: each row's figure comes from metrics.json and is judged against its bound."""

import copy
import json

import pytest

from transformer.loading import DEFAULT_MODEL_DIR
from transformer.training.card_targets import TARGETS, describe_targets


@pytest.fixture(scope="module")
def metrics() -> dict:
    """The bundled model's metrics.json: a real run's figures, every target's figure recorded."""
    return json.loads((DEFAULT_MODEL_DIR / "metrics.json").read_text(encoding="utf-8"))


def table_rows(card: str) -> dict[str, list[str]]:
    """The table's rows, by target: [bound, value, met]."""
    rows = [line.strip("|").split(" | ") for line in card.splitlines() if line.startswith("| ") and "---" not in line]
    return {cells[0].strip(): [cell.strip() for cell in cells[1:]] for cells in rows[1:]}


def test_every_target_has_a_row_with_the_runs_own_figure(metrics):
    rows = table_rows(describe_targets(metrics))
    assert list(rows) == [target.what for target in TARGETS]
    for target in TARGETS:
        bound, shown, met = rows[target.what]
        assert shown == target.show(target.figure(metrics))
        assert met == ("yes" if target.met(target.figure(metrics)) else "**no**")
        assert bound.startswith("≤" if target.at_most else "≥")


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.what)
def test_a_figure_on_its_bound_is_met_and_one_past_it_is_not(target):
    assert target.met(target.bound)
    step = 0.001 if target.kind != "count" else 1
    assert not target.met(target.bound + step if target.at_most else target.bound - step)


def test_the_count_of_missed_targets_follows_the_figures(metrics):
    better = copy.deepcopy(metrics)
    better["dev"]["sst2"] = 0.9
    worse = copy.deepcopy(metrics)
    worse["dev"]["sst2"] = 0.5
    missed = [describe_targets(m).splitlines()[-1] for m in (better, worse)]
    counts = [int(line.split(" of ")[0]) if " of " in line else 0 for line in missed]
    assert counts[1] == counts[0] + 1
    assert table_rows(describe_targets(worse))["SST-2 dev accuracy"] == ["≥ 0.820", "0.500", "**no**"]


def test_figures_a_run_did_not_record_are_left_out(metrics):
    older = {key: value for key, value in metrics.items() if key != "probe"}
    rows = table_rows(describe_targets(older))
    assert rows and not any(name.startswith(("identity terms", "a held-out", "who holds")) for name in rows)
    assert describe_targets({}) == ""
    unmeasured = copy.deepcopy(metrics)
    unmeasured["composition"]["negation"]["pooled"]["positive_accuracy"] = None  # a set with no such row
    assert "positive selection rows with a negation word: accuracy" not in table_rows(describe_targets(unmeasured))
