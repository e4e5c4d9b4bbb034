"""The page around the tabs: reading the sentence and drawing the main views with it.

``show_text`` runs the model once, keeps the ``Analysis`` in ``gr.State`` and draws the tab on screen when
it is a main view (``View.main``: Attention, All heads, Positional encoding); the other main views are
cleared and drawn from the kept analysis when their tab is opened, so one analysis sends one view's figure.
Their own controls and the colour scale redraw from it without calling the model. It computes no
explanation: the other tabs are drawn when used (``explorer/page/events.py``), and a tab whose numbers need the
model keeps them in its own ``gr.State`` with the analysis and controls they came from (``runner.kept_view``).
"""

from __future__ import annotations

import gradio as gr
from gradio.components.label import LabelConfidence, LabelData

from .. import runner
from ..analysis import NO_OPINION, Analysis, EmptyInputError, InputError
from ..drawing import token_spans
from ..registry import PageValues, Registry


def prediction_box(**settings) -> gr.Label:
    """A ``gr.Label`` (of ``settings``) that also shows a ``LabelData`` as it is: its bars under words of its own
    (``prediction_value``), not only under the top class. (A subclass of a component would have Gradio write a
    ``.pyi`` beside this module.)"""
    box = gr.Label(**settings)
    label_postprocess = box.postprocess
    box.postprocess = lambda value: value if isinstance(value, LabelData) else label_postprocess(value)
    return box


def prediction_value(result: Analysis) -> dict | LabelData:
    """The prediction as the page shows it: the classes' probabilities under the top class, or under "No clear
    opinion" where its two likeliest classes are close (``Analysis.clear``), so a coin flip does not read as a
    verdict."""
    if result.clear:
        return result.prediction
    ranked = sorted(result.prediction.items(), key=lambda item: item[1], reverse=True)
    bars = [LabelConfidence(label=name, confidence=p) for name, p in ranked]
    return LabelData(label=NO_OPINION, confidences=bars)


def show_main_view(registry: Registry, result: Analysis | None, view: str, values: PageValues) -> tuple:
    """The main views' figures (``registry.main_views`` order): ``view``'s drawn from the kept analysis, the others
    None."""
    return tuple(draw(result, values) if main == view else None for main, draw in registry.main.items())


def show_text(
    registry: Registry,
    text: str | None,
    layer: int,
    head: str,
    dims: list[int] | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
    view: str | None = None,
    controls: dict | None = None,
) -> tuple:
    """Run the model once on ``text``; draw the main view on screen, ``view`` (by default the first tab), with the
    page's controls and its own (``controls``: {address parameter: value}), and no other view (no explanation).

    Returns:
        (analysis state, prediction, token spans, notice, *the main views' figures): of the figures only
        ``view``'s, when it is a main view; the others None (drawn when their tab opens). Blank text gives a
        prompt in the notice and empty views, not an error.
    """
    values, view = PageValues(layer, head, dims, scale, leave_out, controls or {}), view or registry.first_view
    try:
        result = runner.run_model(text)
    except EmptyInputError as prompt:
        return None, None, None, str(prompt), *show_main_view(registry, None, view, values)
    except InputError as error:
        raise runner.user_error(error) from None
    return (
        result,
        prediction_value(result),
        token_spans.token_spans(result),
        result.notice or "",
        *show_main_view(registry, result, view, values),
    )
