"""Compare's summary of two models (transformer.explorer.two_models.models_summary): each class's probability under
A, under B, and B − A, from readings made by hand."""

import re
import types

from transformer.explorer.two_models import ModelReading, ModelsView, models_summary


def reading(name: str, probabilities: list[float], label_names=("negative", "positive")) -> ModelReading:
    return ModelReading(
        name=name,
        source=f"model {name}",
        tokens=["a", "b"],
        offsets=[(0, 1), (2, 3)],
        label_names=list(label_names),
        probabilities=probabilities,
        num_layers=2,
        num_heads=2,
        attention=None,
        attributions=types.SimpleNamespace(target_label="positive"),
    )


def table_rows(summary: str) -> list[list[str]]:
    return [re.findall(r"<t[dh]>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", summary)]


def test_the_table_gives_a_then_b_then_b_minus_a():
    view = ModelsView("a b", 1, 1, (reading("A", [0.8, 0.2]), reading("B", [0.3, 0.7])))
    assert table_rows(models_summary(view)) == [
        ["class", "A", "B", "B − A"],
        ["negative", "0.8000", "0.3000", "-0.5000"],
        ["positive", "0.2000", "0.7000", "+0.5000"],
    ]


def test_models_naming_their_classes_differently_get_no_table():
    view = ModelsView("a b", 1, 1, (reading("A", [0.8, 0.2]), reading("B", [0.3, 0.7], ("neg", "pos"))))
    summary = models_summary(view)
    assert not table_rows(summary) and "name their classes differently" in summary
