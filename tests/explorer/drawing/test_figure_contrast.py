"""Every figure's text reads at 4.5:1 (WCAG AA) on what is behind it, on the light page and on the dark one.

Nothing is drawn: each text's colour and background are resolved from the figure as it is sent (its layout, its
template, plotly's defaults) and from what the page does to it. ``gr.Plot`` draws a figure's JSON as it is, with
no template of its own in either theme; in the dark theme ``theme.PAGE_CSS`` then fills every text (hover labels
aside: plotly colours those against their own box) with the page's text colour, gives a cell's number its
``--dark`` colour and inverts the heatmaps' cells. A transparent figure shows the Gradio block it sits on
(``--block-background-fill``), on the page (``--body-background-fill``), both from Gradio's default theme.
That model was checked once by hand in Chromium: every label's computed fill was the figure's own on the light
page (#2a3f5f on a white block) and rgb(244, 244, 245) on the dark one (on the block's rgb(39, 39, 42)),
cells' numbers their ``--dark`` colour.
"""

import re
from dataclasses import dataclass, field

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import ImageColor

from transformer.explorer import analysis, registry
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.drawing import erasure as erasure_figures
from transformer.explorer.drawing import figures, theme
from transformer.explorer.page import launch as server
from transformer.explorer.registry import Registry
from transformer.explorer.views import (
    VIEWS,
    all_heads,
    attention,
    attributions,
    compare,
    head_atlas,
    inside_head,
    knockout,
    positional_encoding,
    rollout,
    token_embeddings,
    walkthrough,
    word_order,
)

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them
AA = 4.5
THEME = gr.themes.Default()  # what ``demo.launch`` uses when given no theme, as ``server.launch_settings`` gives
PLOTLY_FONT, PLOTLY_BACKGROUND, TRANSPARENT = "#444", "#fff", "rgba(0,0,0,0)"  # plotly's own defaults
SENTENCE = "a wonderful film , the acting was dull <b>bold</b> !"
SENTENCE_B = "the film was wonderful"


def theme_colour(name: str, mode: str) -> str:
    """A Gradio theme variable (``body-text-color``) as the page has it in ``mode``, references followed."""
    attribute = name.replace("-", "_")
    value = (getattr(THEME, f"{attribute}_dark", None) if mode == "dark" else None) or getattr(THEME, attribute)
    return theme_colour(value[1:], mode) if value.startswith("*") else value


def rgba(colour: str) -> tuple[float, float, float, float]:
    """A CSS colour (hex, rgb(), rgba() or a name) as sRGB and alpha, 0 to 1 each."""
    colour = colour.strip().lower()
    if colour == "transparent":
        return 0.0, 0.0, 0.0, 0.0
    if colour.startswith("rgb"):
        parts = [float(part) for part in re.findall(r"[0-9.]+", colour)]
        return parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3] if len(parts) > 3 else 1.0
    channels = ImageColor.getrgb(colour)
    return *(channel / 255 for channel in channels[:3]), (channels[3] / 255 if len(channels) > 3 else 1.0)


def hex_of(rgb: tuple) -> str:
    return "#" + "".join(f"{round(channel * 255):02x}" for channel in rgb)


def over(colour: str | tuple, background: tuple) -> tuple[float, float, float]:
    """``colour`` painted over the opaque ``background``, its alpha blended."""
    *rgb, alpha = rgba(colour) if isinstance(colour, str) else (*colour, 1.0)
    return tuple(alpha * c + (1 - alpha) * b for c, b in zip(rgb, background, strict=True))


def page_rules(css: str, mode: str) -> dict:
    """What the page's style sheet does to figures in ``mode``: on the dark page "text" (every label's fill), "cell
    text" (a cell's number takes its ``--dark``) and "cells" (heatmap cells inverted as ``figures.dark_colour``
    computes); "unmodelled", any other rule that colours a figure (which fails the check until it is modelled)."""
    found = {"unmodelled": []}
    for selector, body in re.findall(r"([^{}]*\.js-plotly-plot[^{}]*)\{([^{}]*)\}", css):
        selector = selector.strip()
        dark = selector.startswith(".dark ")
        fill = re.fullmatch(r"\s*fill:\s*(\S.*?)\s*!important;?\s*", body)
        if dark and mode != "dark":
            continue
        if dark and fill and re.fullmatch(r"\.dark \.js-plotly-plot text:not\(\.hoverlayer \*\)", selector):
            found["text"] = re.sub(r"var\(--([\w-]+)\)", lambda var: theme_colour(var[1], "dark"), fill[1])
        elif dark and fill and fill[1] == "var(--dark)" and selector.endswith('.heatmap-label tspan[style*="--dark"]'):
            found["cell text"] = True
        elif (
            dark
            and re.fullmatch(r"\s*filter: invert\(1\) hue-rotate\(180deg\);?\s*", body)
            and "heatmaplayer image" in selector
        ):
            found["cells"] = True
        elif re.search(r"\b(fill|color|opacity|filter)\s*:", body):
            found["unmodelled"].append(selector)
    return found


@dataclass
class Text:
    """One piece of a figure's text as plotly draws it."""

    what: str  # where it is, for the failure message
    label: str  # its text, markup included (a ``<span style>`` colours its part)
    colour: str | None  # the colour plotly gives it (figure, template or plotly's default); None: plotly picks
    behind: list[tuple] = field(default_factory=list)  # what may be under it: stacks of fills, lowest first
    cell: tuple | None = None  # the sRGB of the heatmap cell under it (as on the light page)


def dig(tree, path: str):
    for key in path.split("."):
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def first(*values):
    return next((value for value in values if value is not None), None)


class Look:
    """A figure's settings as plotly resolves them: the figure's own, else its template's."""

    def __init__(self, figure: go.Figure):
        self.layout = figure.to_plotly_json()["layout"]
        self.template = self.layout.get("template", {})
        self.traces = [trace.to_plotly_json() for trace in figure.data]
        self.raw = list(figure.data)  # z and text as arrays (the JSON has them base64)

    def get(self, path: str, container: str | None = None):
        """``path`` in the layout; ``container`` (``xaxis3``) falls back on the template's for its kind (``xaxis``)."""
        template = self.template.get("layout", {})
        if container is None:
            return first(dig(self.layout, path), dig(template, path))
        kind = re.sub(r"\d+$", "", container)
        return first(dig(self.layout.get(container), path), dig(template.get(kind), path))

    def trace_get(self, trace: dict, path: str):
        defaults = (self.template.get("data", {}).get(trace.get("type", "scatter")) or [{}])[0]
        return first(dig(trace, path), dig(defaults, path))

    def font(self, *colours):
        """The first colour given, else the layout's font colour, which every text inherits."""
        return first(*colours, self.get("font.color"), PLOTLY_FONT)

    @property
    def paper(self) -> str:
        return self.get("paper_bgcolor") or PLOTLY_BACKGROUND

    @property
    def plot(self) -> str:
        return self.get("plot_bgcolor") or PLOTLY_BACKGROUND

    def in_plot(self) -> list[tuple]:
        """What text inside the plot area may sit on: the plot's background, and any shape's fill over it."""
        shapes = [shape for shape in self.layout.get("shapes", []) if shape.get("fillcolor")]
        fills = [over_alpha(shape["fillcolor"], shape.get("opacity", 1.0)) for shape in shapes]
        return [(self.paper, self.plot), *((self.paper, self.plot, fill) for fill in fills)]


def over_alpha(colour: str, opacity: float) -> str:
    r, g, b, a = rgba(colour)
    return f"rgba({r * 255},{g * 255},{b * 255},{a * opacity})"


def axis_of(trace: dict, letter: str) -> str:
    """The layout name of the ``letter`` ("x" or "y") axis ``trace`` is drawn on: "x2" is ``xaxis2``."""
    return f"{letter}axis{(trace.get(f'{letter}axis') or letter)[1:]}"


def axis_labels(look: Look, name: str) -> str:
    """The labels an axis may show: its ``ticktext``, else the categories its traces put on it."""
    if given := look.get("ticktext", name):
        return " ".join(map(str, given))
    letter = name[0]
    values = [
        getattr(raw, letter, None)
        for raw, trace in zip(look.raw, look.traces, strict=True)
        if axis_of(trace, letter) == name
    ]
    return " ".join(value for part in values if part is not None for value in part if isinstance(value, str))


def titles(look: Look) -> list[Text]:
    """The figure's title and each axis's title and tick labels."""
    found = [Text("title", look.get("title.text") or "", look.font(look.get("title.font.color")), [(look.paper,)])]
    axes = {name for name in look.layout if re.fullmatch(r"[xy]axis\d*", name)}
    for trace in look.traces:
        axes |= {axis_of(trace, "x"), axis_of(trace, "y")}
    for name in sorted(axes):
        colour = look.get("color", name)
        default = colour if colour not in (None, PLOTLY_FONT) else None  # plotly: the axis's colour, when set
        inside = "inside" in (look.get("ticklabelposition", name) or "")
        behind = [(look.paper,), *(look.in_plot() if inside else [])]
        if look.get("title.text", name):
            colour = look.font(look.get("title.font.color", name), default)
            found.append(Text(f"{name} title", look.get("title.text", name), colour, behind))
        if look.get("showticklabels", name) is not False and look.get("visible", name) is not False:
            colour = look.font(look.get("tickfont.color", name), default)
            found.append(Text(f"{name} tick labels", axis_labels(look, name), colour, behind))
    return found


def annotations(look: Look) -> list[Text]:
    """Annotations (subplot titles among them) on their own box, which may lie on the plot area."""
    found = []
    defaults = look.get("annotationdefaults") or {}
    for k, note in enumerate(look.layout.get("annotations", [])):
        box = first(note.get("bgcolor"), defaults.get("bgcolor"), TRANSPARENT)
        colour = look.font(dig(note, "font.color"), dig(defaults, "font.color"))
        on_paper = note.get("xref") == note.get("yref") == "paper"  # else it may lie on the plot area
        stacks = [(look.paper,), *([] if on_paper else look.in_plot())]
        found.append(Text(f"annotation {k}", note.get("text") or "", colour, [(*stack, box) for stack in stacks]))
    return found


def legend(look: Look) -> list[Text]:
    """The legend's entries (traces not left out of it; heatmaps are by default) and its title, on its box."""
    names = [
        trace.get("name") or ""
        for trace in look.traces
        if first(look.trace_get(trace, "showlegend"), trace.get("type") != "heatmap")
    ]
    if not names or look.get("showlegend") is False:
        return []
    colour = look.font(look.get("legend.font.color"))
    behind = [(look.paper, first(look.get("legend.bgcolor"), look.paper))]  # plotly: the paper's colour
    found = [Text("legend", " ".join(names), colour, behind)]
    if look.get("legend.title.text"):
        found.append(
            Text(
                "legend title",
                look.get("legend.title.text"),
                look.font(look.get("legend.title.font.color"), colour),
                behind,
            )
        )
    return found


def colour_bars(look: Look) -> list[Text]:
    """Each colour bar's title and tick labels: a heatmap's, a marker scale's, a shared colour axis's."""
    bars = []
    for trace in look.traces:
        if trace.get("coloraxis"):
            continue
        if trace.get("type") == "heatmap" and look.trace_get(trace, "showscale") is not False:
            bars.append(look.trace_get(trace, "colorbar") or {})
        if dig(trace, "marker.showscale"):
            bars.append(dig(trace, "marker.colorbar") or {})
    used = {trace["coloraxis"] for trace in look.traces if trace.get("coloraxis")}
    bars += [look.get(f"{axis}.colorbar") or {} for axis in sorted(used) if look.get(f"{axis}.showscale") is not False]
    found = []
    for k, bar in enumerate(bars):
        behind = [(look.paper, bar.get("bgcolor") or TRANSPARENT)]
        ticks = " ".join(map(str, bar.get("ticktext") or []))
        found.append(Text(f"colour bar {k} ticks", ticks, look.font(dig(bar, "tickfont.color")), behind))
        title = dig(bar, "title.text") or ""
        found.append(Text(f"colour bar {k} title", title, look.font(dig(bar, "title.font.color")), behind))
    return found


def cell_texts(look: Look) -> list[Text]:
    """A heatmap's printed numbers, each on its cell (its colour from the trace's own scale and range)."""
    found = []
    for raw, trace in zip(look.raw, look.traces, strict=True):
        if trace.get("type") != "heatmap" or not trace.get("texttemplate"):
            continue
        scale = look.get(f"{trace['coloraxis']}.colorscale") if trace.get("coloraxis") else trace.get("colorscale")
        z = np.asarray(raw.z, dtype=float)
        low = first(trace.get("zmin"), look.get(f"{trace.get('coloraxis')}.cmin"), np.nanmin(z))
        high = first(trace.get("zmax"), look.get(f"{trace.get('coloraxis')}.cmax"), np.nanmax(z))
        text = np.asarray(raw.text if raw.text is not None else np.full(z.shape, ""), dtype=object)
        colour = look.trace_get(trace, "textfont.color")  # None: plotly picks one itself, which is not modelled
        for (i, j), value in np.ndenumerate(z):
            label = text[i, j] if trace["texttemplate"] == "%{text}" else trace["texttemplate"]
            if label and not np.isnan(value):
                found.append(Text(f"cell ({i}, {j})", label, colour, cell=figures.cell_colour(value, scale, low, high)))
    return found


def trace_texts(look: Look) -> list[Text]:
    """Text a trace prints on the plot area: a scatter's ``mode="text"``, and any bar text (not modelled: failed)."""
    found = []
    for raw, trace in zip(look.raw, look.traces, strict=True):
        kind = trace.get("type", "scatter")
        if kind == "scatter" and "text" in (trace.get("mode") or "") and raw.text is not None:
            colour = look.font(look.trace_get(trace, "textfont.color"))
            found.append(Text(f"{kind} text", " ".join(map(str, np.ravel(raw.text))), colour, look.in_plot()))
        elif kind not in ("scatter", "heatmap") and (trace.get("text") is not None or trace.get("texttemplate")):
            found.append(Text(f"{kind} text", "", None))
    return found


def texts(figure: go.Figure) -> list[Text]:
    """Every text plotly draws on ``figure``, hover labels aside."""
    look = Look(figure)
    return [*titles(look), *annotations(look), *legend(look), *colour_bars(look), *cell_texts(look), *trace_texts(look)]


SPAN = re.compile(r"<span style=([\"'])(.*?)\1>(.*?)</span>", re.S)


def pieces(label: str) -> list[dict]:
    """The styles of a label's parts: one per ``<span style>`` (its properties), ``{}`` for the text outside."""
    styles = [dict(re.findall(r"\s*([-\w]+)\s*:\s*([^;]+)", style)) for _, style, _ in SPAN.findall(label)]
    outside = re.sub(r"<[^>]*>", "", SPAN.sub("", label)).strip()
    return ([{}] if outside or not styles else []) + [{k.lower(): v.strip() for k, v in s.items()} for s in styles]


def shown_colour(text: Text, style: dict, rules: dict) -> str | None:
    """The colour the page shows a part of ``text`` in: a span's own beats the style sheet's, which beats plotly's."""
    if text.cell is not None and "--dark" in style and rules.get("cell text"):
        return style["--dark"]
    return first(style.get("color"), rules.get("text"), text.colour)


def backgrounds(text: Text, mode: str, rules: dict) -> list[tuple]:
    """The opaque colours ``text`` may sit on in ``mode``: its cell (inverted on the dark page), or its stacks of
    fills on the block and on the page."""
    if text.cell is not None:
        return [figures.dark_colour(text.cell) if rules.get("cells") else text.cell]
    pages = [rgba(theme_colour(name, mode))[:3] for name in ("block-background-fill", "body-background-fill")]
    found = []
    for page in pages:
        for stack in text.behind:
            colour = page
            for fill in stack:
                colour = over(fill, colour)
            found.append(colour)
    return found


def failures(figure: go.Figure, mode: str, css: str = theme.PAGE_CSS) -> list[str]:
    """Each text of ``figure`` under 4.5:1 on something behind it in ``mode`` ("light" or "dark"), said how."""
    rules = page_rules(css, mode)
    found = [
        f"the style sheet's {selector!r} colours figures in a way this check does not model"
        for selector in rules["unmodelled"]
    ]
    for text in texts(figure):
        for style in pieces(text.label):
            colour = shown_colour(text, style, rules)
            if colour is None:
                found.append(f"{text.what}: plotly picks its colour, which this check does not model; set one")
                continue
            for behind in backgrounds(text, mode, rules):
                ratio = figures.contrast(over(colour, behind), behind)
                if ratio < AA:
                    found.append(f"{text.what}: {colour} on {hex_of(behind)} is {ratio:.2f}:1")
    return list(dict.fromkeys(found))  # once each: the block and the page are often the same colour


FIGURES = (
    "attention", "attention, mean of heads, row scale", "all heads", "all heads, row scale", "positional curves",
    "positional table", "positional similarity", "rollout shares", "rollout matrix", "attributions", "agreement",
    "inside a head", "knockout grid", "head importance", "word order", "compare A", "compare B", "compare B - A",
    "token embeddings", "head atlas", "faithfulness", *(f"walkthrough step {i}" for i in range(1, 13)),
)  # fmt: skip


@pytest.fixture(scope="module")
def drawn(model, tokenizer) -> dict[str, go.Figure]:
    """Every figure the views draw, from the views' own functions on the tiny model (no app, no server)."""
    result, result_b = (analysis.analyze(model, tokenizer, text) for text in (SENTENCE, SENTENCE_B))
    shares, matrix = rollout.show_rollout(result, 1, "global", None)
    explained = attributions.attribution_view(model, tokenizer, result, steps=4)
    *_, attribution, agreement = attributions.attribution_panel(explained)
    faithful = attributions.attribution_tab(model, tokenizer, result, steps=4, removal="delete").faithfulness["delete"]
    knocked = knockout.knockout_view(model, tokenizer, result, heads_off=["L1 H1"])
    importance = knockout.importance_view(model, tokenizer, result).importance
    *_, head_a, head_b, difference, _ = compare.compare_panel(compare.compare_view(result, result_b), "global", [])
    rows = [corpus.Row("sst2", text, label) for text, label in ((SENTENCE, 0), (SENTENCE_B, 1), ("dull !", 0))]
    return {
        "attention": attention.show_head(result, 1, "1"),
        "attention, mean of heads, row scale": attention.show_head(result, 2, "mean", "row", ["special"]),
        "all heads": all_heads.show_grid(result),
        "all heads, row scale": all_heads.show_grid(result, "row", ["punctuation"]),
        "positional curves": positional_encoding.positional_curves(
            analysis.positional_table(model), registry.default_dims(model), result.tokens
        ),
        **dict(
            zip(("positional table", "positional similarity"), positional_encoding.model_tables(model), strict=True)
        ),
        "rollout shares": shares,
        "rollout matrix": matrix,
        "attributions": attribution,
        "agreement": agreement,
        "inside a head": inside_head.head_panel(inside_head.head_view(model, tokenizer, result, 1, 2), 1)[0],
        "knockout grid": knockout.knockout_panel(knocked, "global", [])[2],
        "head importance": knockout.head_importance_figure(importance, result.label_names),
        "word order": word_order.word_order_panel(word_order.word_order_view(model, tokenizer, result))[1],
        "compare A": head_a,
        "compare B": head_b,
        "compare B - A": difference,
        "token embeddings": token_embeddings.embeddings_figure(
            token_embeddings.embeddings_view(model, tokenizer, result)
        ),
        "head atlas": head_atlas.atlas_figure(artifacts.build_atlas(model, tokenizer, rows, "hash")),
        "faithfulness": erasure_figures.faithfulness_figure(faithful, "<b>positive</b>"),
        **walkthrough_figures(walkthrough.walkthrough_view(model, tokenizer, result)),
    }


def walkthrough_figures(view) -> dict[str, go.Figure]:
    """Each walkthrough step's figure, for the last layer and head."""
    layer, head = len(view.walk.layers) - 1, view.walk.layers[0].weights.size(0) - 1
    return {
        f"walkthrough step {i}": step.values(view.walk, view.tokens, layer, head)
        for i, step in enumerate(walkthrough.STEPS, start=1)
    }


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("name", FIGURES)
def test_every_text_of_every_figure_reads_on_what_is_behind_it(drawn, name, mode):
    problems = failures(drawn[name], mode)
    assert not problems, f"{len(problems)} texts under {AA}:1, e.g. " + "; ".join(problems[:5])


def kind(text: Text) -> str:
    """What sort of text it is: "axis title" for ``xaxis2 title``, "cell" for ``cell (1, 2)``."""
    return re.sub(r" \d+$| \(.*\)$| \d+(?= )", "", re.sub(r"^[xy]axis\d*", "axis", text.what))


def test_the_check_reads_every_kind_of_text_the_figures_have(drawn):
    assert set(drawn) == set(FIGURES)
    kinds = {kind(text) for figure in drawn.values() for text in texts(figure)}
    assert kinds >= {"title", "axis title", "axis tick labels", "annotation", "legend", "colour bar ticks"}
    assert kinds >= {"colour bar title", "cell", "scatter text"}
    for figure in drawn.values():  # each has its title, and a cell's number sits on a cell, not on the page
        assert any(text.label for text in texts(figure) if text.what == "title")
        assert all(text.cell is not None for text in texts(figure) if kind(text) == "cell")


def plain(**layout) -> go.Figure:
    """A bar chart in the explorer's template with ``layout`` on top."""
    return go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout={"template": figures.TEMPLATE, **layout})


def test_a_grey_title_fails_on_the_light_page_where_the_figure_s_colours_show():
    figure = plain(title={"text": "grey", "font": {"color": "#808080"}})  # 3.9:1 on white
    assert {problem.split(":")[0] for problem in failures(figure, "light")} == {"title"}
    assert failures(figure, "dark") == []  # the dark page fills every label with its own text colour


def test_a_grey_span_fails_on_the_dark_page_where_it_beats_the_style_sheet():
    figure = plain(title={"text": 'a <span style="color:#767676">grey</span> word'})  # 4.5:1 on white, 3.6 on dark
    assert failures(figure, "light") == []
    assert {problem.split(":")[0] for problem in failures(figure, "dark")} == {"title"}


def test_an_opaque_light_figure_fails_on_the_dark_page():
    assert failures(plain(paper_bgcolor="white", title={"text": "t"}), "dark")  # light labels on white


def without(rule: str) -> str:
    """``theme.PAGE_CSS`` less the dark theme's rule whose selector holds ``rule``."""
    css = re.sub(r"\.dark [^{}]*" + re.escape(rule) + r"[^{}]*\{[^{}]*\}", "", theme.PAGE_CSS)
    assert css != theme.PAGE_CSS
    return css


def test_without_the_dark_style_sheet_the_figures_fail_on_the_dark_page(drawn):
    unfilled = failures(drawn["attention"], "dark", without("text:not(.hoverlayer *)"))
    assert {"title", "xaxis tick labels", "colour bar 0 title"} <= {problem.split(":")[0] for problem in unfilled}
    cells = failures(drawn["agreement"], "dark", without('tspan[style*="--dark"]'))  # light colours, dark cells
    assert cells and all(problem.startswith("cell") for problem in cells)


def test_the_page_colours_are_gradio_s_default_theme_s():
    assert "theme" not in server.launch_settings(REGISTRY)  # demo.launch then uses gr.themes.Default
    light, dark = (rgba(theme_colour("block-background-fill", mode))[:3] for mode in ("light", "dark"))
    assert figures.contrast(light, figures.WHITE) == 1 and figures.luminance(dark) < 0.05
    assert page_rules(theme.PAGE_CSS, "light") == {"unmodelled": []}  # the light page shows figures as they are
    assert figures.luminance(rgba(page_rules(theme.PAGE_CSS, "dark")["text"])[:3]) > 0.8


def test_a_style_sheet_rule_that_greys_the_titles_on_the_dark_page_fails(drawn):
    css = theme.PAGE_CSS + ".dark .js-plotly-plot .gtitle { fill: #808080 !important; }"  # 3.8:1 on the dark block
    assert failures(drawn["attention"], "dark", css) and failures(drawn["attention"], "light", css) == []


def page_variable(css: str, selector: str, name: str) -> str | None:
    """The value ``css`` gives the theme variable ``--name`` under exactly ``selector``, if it does."""
    for found, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        if found.strip() == selector and (value := re.search(rf"--{name}:\s*([^;]+);", body)):
            return value[1].strip()
    return None


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_the_analyze_button_and_the_subdued_text_pass_aa_on_either_page(mode):
    """Issue 53 (axe-core): white on the Analyze button's orange was 2.8:1, and the footer's and a slider's subdued
    text 1.9:1 on the light page. The style sheet's variables win over the theme's (``theme._CONTRAST``)."""
    css = theme.PAGE_CSS
    selector = ".dark .gradio-container" if mode == "dark" else ":root:root"
    fill = page_variable(css, selector, "button-primary-background-fill")
    text = rgba(theme_colour("button-primary-text-color", mode))[:3]
    assert fill and figures.contrast(rgba(fill)[:3], text) >= AA
    hover = page_variable(css, selector, "button-primary-background-fill-hover")
    assert hover and figures.contrast(rgba(hover)[:3], text) >= AA
    subdued = page_variable(css, ":root:root", "body-text-color-subdued") if mode == "light" else None
    subdued = subdued or theme_colour("body-text-color-subdued", mode)
    for background in ("background-fill-primary", "block-background-fill"):
        assert figures.contrast(rgba(subdued)[:3], rgba(theme_colour(background, mode))[:3]) >= AA, background
