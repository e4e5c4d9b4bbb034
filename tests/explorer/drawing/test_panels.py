"""Multi-panel figures: one heatmap per panel on its own axes, side by side in proportion to their columns (or
stacked by their rows) without overlapping, each coloured from its own range, labels escaped, and no per-cell
text once a panel is large."""

import itertools

import plotly.graph_objects as go
import pytest
import torch
from tiny import tiny_model

from transformer.explain.walkthrough import walk_through
from transformer.explorer.drawing.figures import MAX_TICK_LABELS, label_width_px, token_labels
from transformer.explorer.drawing.panels import SHOW_VALUES_UP_TO, Panel, panel_figure
from transformer.explorer.views.walkthrough import STEPS

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

TOKENS = token_labels(["<b>bold</b>", "b", "c"])


def panel(columns: int, scale: float = 1.0, title: str = "p", signed: bool = True) -> Panel:
    values = torch.linspace(-scale, scale, 3 * columns).view(3, columns)
    return Panel(values, [f"d{j}" for j in range(columns)], TOKENS, title, signed)


@pytest.mark.parametrize("stacked", [False, True], ids=["side by side", "stacked"])
def test_the_panels_take_their_share_of_the_figure_and_never_overlap(stacked):
    figure = panel_figure([panel(10), panel(40), panel(20)], "t", stacked=stacked)
    key = "y" if stacked else "x"
    domains = [figure.layout[f"{key}axis{i or ''}"].domain for i in (0, 2, 3)]
    domains = domains[::-1] if stacked else domains  # stacked, the first panel is on top
    assert all(a[1] < b[0] for a, b in itertools.pairwise(domains))  # in order, with a gap
    widths = [d[1] - d[0] for d in domains]
    if not stacked:  # width follows the columns: 40 columns get twice the room of 20
        assert widths[1] == pytest.approx(2 * widths[2])
    for i, trace in enumerate(figure.data, start=1):
        assert (trace.xaxis, trace.yaxis) == (f"x{i if i > 1 else ''}", f"y{i if i > 1 else ''}")


def test_each_panel_has_its_own_colour_range_on_its_own_colour_bar_over_it():
    figure = panel_figure([panel(4, 2.0, "small"), panel(4, 50.0, "large"), panel(4, 0.5, "w", signed=False)], "t")
    assert [(t.zmin, t.zmax) for t in figure.data] == [(-2.0, 2.0), (-50.0, 50.0), (0.0, 0.5)]
    assert [list(t.colorbar.ticktext) for t in figure.data] == [["−2", "0", "+2"], ["−50", "0", "+50"], ["0", "0.5"]]
    for trace, i in zip(figure.data, ("", "2", "3"), strict=True):  # each bar spans its own panel, just above it
        x_domain, y_domain = figure.layout[f"xaxis{i}"].domain, figure.layout[f"yaxis{i}"].domain
        assert trace.colorbar.x == pytest.approx((x_domain[0] + x_domain[1]) / 2) and trace.colorbar.y == y_domain[1]
        assert trace.colorbar.len == pytest.approx(x_domain[1] - x_domain[0])


def test_labels_and_titles_are_escaped():
    figure = panel_figure([panel(4, title="<i>x</i>")], "<script>")
    assert "<b>" not in str(list(figure.data[0].y)) and "&lt;b&gt;" in figure.data[0].y[0]
    assert "<i>" not in figure.layout.annotations[0].text and "<script>" not in figure.layout.title.text


def test_only_small_panels_print_their_values():
    small, large = panel_figure([panel(2), panel(SHOW_VALUES_UP_TO)], "t").data
    assert small.texttemplate and not large.texttemplate and large.text is None


def test_a_wide_panel_labels_one_column_in_a_power_of_two_and_a_narrow_one_fewer():
    wide = panel_figure([panel(256), panel(64), panel(8)], "t").layout["xaxis"]
    narrow = panel_figure([panel(256), panel(64), panel(8)], "t").layout["xaxis2"]
    labelled = [int(label[1:]) for label in wide.tickvals]
    step = labelled[1] - labelled[0]
    assert step & (step - 1) == 0 and labelled == list(range(0, 256, step))  # every step-th, from d0
    assert len(narrow.tickvals) < len(wide.tickvals) and len(wide.tickvals) <= MAX_TICK_LABELS
    assert panel_figure([panel(8)], "t").layout["xaxis"].tickvals is None  # a few columns: every label


def test_every_walkthrough_figure_is_a_valid_plotly_figure():
    """``panel_figure`` skips plotly's validation for speed: here every step's figure goes through it."""
    walk = walk_through(tiny_model(seed=1), torch.tensor([[4, 8, 15, 16]]))
    for step in STEPS:
        figure = step.values(walk, ["a", "b", "<c>", "d"], 1, 1)
        validated = go.Figure(figure.to_dict())  # raises on any property plotly does not know
        assert len(validated.data) == len(figure.data) and validated.layout.title.text == figure.layout.title.text
    with pytest.raises(ValueError):
        go.Figure({"data": [{"type": "heatmap", "zz": [[1]]}]})  # the check itself can fail


def axis_domains(figure: go.Figure) -> list[list[float]]:
    """Every axis's domain in a figure, as plotly will check them."""
    layout = figure.to_dict()["layout"]
    return [axis["domain"] for name, axis in layout.items() if name[1:5] == "axis" and "domain" in axis]


@pytest.mark.parametrize("stacked", [False, True], ids=["side by side", "stacked"])
def test_every_domain_is_within_the_figure_at_every_number_of_rows(stacked):
    """Summed fractions can end at 1 + 2e-16, and ``1 - end`` then below 0: plotly refused the Walkthrough's step 11
    (a sentence's rows over one pooled row) for about one length in ten."""
    for rows in range(1, 129):
        tokens = token_labels([f"t{i}" for i in range(rows)])
        sentence = Panel(torch.ones(rows, 16), [f"d{j}" for j in range(16)], tokens, "LayerNorm(x)")
        pooled = Panel(torch.ones(1, 16), [f"d{j}" for j in range(16)], [""], "mean")
        figure = panel_figure([sentence, pooled, pooled], "t", stacked=stacked)
        for low, high in axis_domains(figure):
            assert 0.0 <= low < high <= 1.0, (rows, low, high)
    go.Figure(figure.to_dict())  # the last one, validated


def test_side_by_side_the_first_panel_labels_the_token_rows_and_the_others_share_them():
    figure = panel_figure([panel(4), panel(6), panel(2)], "t")
    assert figure.layout.yaxis.showticklabels is not False and list(figure.data[0].y) == TOKENS
    assert figure.layout.margin.l >= label_width_px(TOKENS)  # room for them
    for axis in ("yaxis2", "yaxis3"):
        assert figure.layout[axis].showticklabels is False and figure.layout[axis].matches == "y"


def test_every_walkthrough_figure_labels_its_token_rows():
    walk = walk_through(tiny_model(seed=1), torch.tensor([[4, 8, 15, 16]]))
    side_by_side = 0
    for step in STEPS:
        figure = step.values(walk, ["a", "b", "<c>", "d"], 1, 1)
        assert figure.layout.yaxis.showticklabels is not False, step.title
        side_by_side += len(figure.data) > 1 and figure.layout.yaxis2.matches == "y"
    assert side_by_side  # the figures checked include panels side by side
