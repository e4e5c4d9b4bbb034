"""What a view is: one tab of the page, registered in ``views.VIEWS``, which ``app.py`` walks.

``app.py`` makes one ``Registry`` of them and hands it to the page code (``page/``), which keeps no table of
its own: what the page needs to know of the views (their ids, main views, address parameters) is read there.

A view module defines one ``View``: its tab's id (the ``view`` in the page address) and title, a
``layout`` that places its controls and outputs inside the tab and says how to draw them, the
address parameters it keeps (with a reader that checks each), and its API endpoints. Views see the
page only through ``Page`` (and a main view, ``PageValues``) and never import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr

from ..interface import TUTORIAL_BLOCKS, Classifier
from .analysis import MAX_INPUT_CHARS, InputError
from .inputs import MEAN_HEAD, choice, numbers

GLOBAL_PARAMS = ["text", "view", "layer", "head", "scale", "leave_out"]  # the page's own address parameters


@dataclass(frozen=True)
class Page:
    """The page's own components and model, handed to every view's ``layout``.

    ``layer``, ``head`` and ``dims`` are made unrendered by the page (its analysis step draws with
    them, and Export reads the layer and head); the Attention and Positional-encoding views place them.
    ``result`` is the kept ``Analysis`` (None before the first), ``scale`` and ``leave_out`` the colour
    controls.
    """

    model: Classifier
    result: gr.State
    scale: gr.Radio
    leave_out: gr.CheckboxGroup
    layer: gr.Radio
    head: gr.Radio
    dims: gr.Dropdown


@dataclass(frozen=True)
class Drawing:
    """How a laid-out tab is drawn: ``handler(*inputs) -> outputs``, when a trigger fires or the tab is shown.

    ``controls`` maps each of the view's address parameters to the control that holds it. ``redraws`` are quick
    draws of part of the view from numbers it kept (e.g. a Next button that moves a step, then draws), each a
    ``Drawing`` of its own whose triggers the page wires off the queue. ``computes`` are long first computations (a
    corpus artifact, the behavioural suite), each a ``Drawing`` the page wires on the queue with a progress bar
    drawn from their tqdm bars. Either way a failure stays in the view as the tab's own draw's does, and the page
    writes the address after each (``events.PageParts``). ``cancel`` (a ``cancel_button`` the layout placed) is
    shown while one of the ``computes`` runs, and stops it; a compute's ``starts(*inputs)`` says whether a trigger
    starts it (None: each does), so that one that only skips never shows the button. A view whose own draw can run a
    job of many model passes (Integrated Gradients, head importance, patching) sets ``starts`` on its own
    ``Drawing``, saying whether a draw with those inputs runs one (not when it keeps that job's answer): its draws
    then get a progress bar, and ``cancel`` while they run one.
    """

    handler: Callable
    inputs: list
    outputs: list
    triggers: list = field(default_factory=list)
    controls: dict = field(default_factory=dict)
    redraws: list[Drawing] = field(default_factory=list)
    computes: list[Drawing] = field(default_factory=list)
    cancel: gr.Button | None = None
    starts: Callable[..., bool] | None = None

    def draw(self, values: dict) -> dict:
        """{output: value}, the handler run on its inputs' ``values`` (a Gradio dispatcher's input dict)."""
        drawn = self.handler(*(values[c] for c in self.inputs))
        drawn = drawn if len(self.outputs) > 1 else (drawn,)  # a one-output handler returns the value itself
        return dict(zip(self.outputs, drawn, strict=True))


def cancel_button(name: str) -> gr.Button:
    """A tab's Cancel button (``Drawing.cancel``), hidden until one of its computations runs."""
    return gr.Button("Cancel", visible=False, variant="stop", size="sm", elem_id=f"{name}-cancel")


def kept_control(sent, chosen, **props) -> dict:
    """A control's answer from a draw that read ``sent`` from it and chose ``chosen``: ``props`` (new choices), and
    the value only where the draw changed it. A draw reads its controls when it starts and answers when it ends;
    sending back the value it read would undo what the person chose meanwhile, and the next draw Gradio queued
    (``always_last``) would read that undone value. Gradio keeps a control's value when an answer leaves it out."""
    if type(chosen) is type(sent) and chosen == sent:
        return gr.update(**props)
    return gr.update(value=chosen, **props)


@dataclass(frozen=True)
class PageValues:
    """The values of the page's own controls when it analyzes a text, which a main view draws with; ``controls``, the
    main views' own controls as the analysis sent them ({address parameter: value}; none at the page load, which
    restores them after its draw)."""

    layer: int
    head: str
    dims: list[int] | None
    scale: str = "global"
    leave_out: list[str] | None = None
    controls: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """What an address reader may check a value against: the model, and how many tokens the sentence has."""

    model: Classifier
    tokens: int


@dataclass(frozen=True)
class View:
    """One tab of the page.

    Attributes:
        id: the tab's id, the ``view`` in the page address.
        title: the tab's label.
        layout: called inside the tab; places its components and returns their ``Drawing``.
        params: address parameter -> ``reader(value, Reading)``, the allowed value or None.
        fallbacks: one of ``params`` -> a page parameter read in its place when the address lacks it, so that
            ``?view=walkthrough&layer=2&head=3`` opens the Walkthrough at that layer and head.
        endpoints: API name -> function, each served at ``/<name>`` and as an MCP tool.
        main: for a view the page draws with every analysis, instead of when its tab is shown:
            ``main(result, PageValues) -> figure``, its first output drawn from the kept analysis. It never
            calls the model, so the view's events skip Gradio's queue (``explorer/page/events.py``).
        colour_scale: its figures follow the page's colour-scale and leave-out controls; the page hides those
            controls on the tabs of views that set it False, where they would change nothing.
    """

    id: str
    title: str
    layout: Callable[[Page], Drawing]
    params: dict[str, Callable[[str, Reading], object]] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)
    endpoints: dict[str, Callable] = field(default_factory=dict)
    main: Callable[[object, PageValues], object] | None = None
    colour_scale: bool = True


def view_params(views) -> dict[str, list[str]]:
    """{view id: its address parameters}; a parameter that two views (or a view and the page) claim is an error.

    Raises:
        ValueError: naming the parameter and both claimants, at start-up rather than as a silently lost value.
    """
    owners = dict.fromkeys(GLOBAL_PARAMS, "the page")
    for view in views:
        for name in view.params:
            if name in owners:
                raise ValueError(f'The address parameter "{name}" is claimed by both {owners[name]} and view {view.id}')
            owners[name] = f"view {view.id}"
    return {view.id: list(view.params) for view in views if view.params}


class Registry:
    """The page's views, in tab order, and what the page reads of them, made once by ``app.build_demo``.

    Attributes:
        views: the views, the first being the tab a page opens on (``first_view``).
        ids: each view's id; ``titles``: {tab title: view id}.
        main: {main view id: its ``View.main``}, in the order of ``page.show_text``'s figures (``main_views``).
        explanations: the views redrawn after an analysis when on screen: all but the main views, whose figure comes
            with the analysis, drawn with their own controls.
        view_params: {view id: its address parameters}; ``url_params``: the page's (``GLOBAL_PARAMS``), then theirs.
        readers: {view address parameter: its reader}; ``fallbacks``: {parameter: the page parameter in its place}.
        text_params: the free-text address parameters (``read_text``), the sentence first.
        colour_scale: {view id: ``View.colour_scale``}.

    Raises:
        ValueError: an address parameter claimed twice (``view_params``).
    """

    def __init__(self, views) -> None:
        self.views = tuple(views)
        self.view_params = view_params(self.views)  # first: a parameter claimed twice stops here
        self.ids = [view.id for view in self.views]
        self.first_view = self.ids[0]
        self.titles = {view.title: view.id for view in self.views}
        self.main = {view.id: view.main for view in self.views if view.main}
        self.main_views = list(self.main)
        self.explanations = [view for view in self.ids if view not in self.main]
        self.url_params = GLOBAL_PARAMS + [name for names in self.view_params.values() for name in names]
        self.readers = {name: read for view in self.views for name, read in view.params.items()}
        self.fallbacks = {name: page for view in self.views for name, page in view.fallbacks.items()}
        self.text_params = ["text", *(name for name, read in self.readers.items() if read is read_text)]
        self.colour_scale = {view.id: view.colour_scale for view in self.views}


def not_for_this_model(view_title: str, model: Classifier) -> str | None:
    """None when ``model`` has the tutorial's blocks (``TUTORIAL_BLOCKS``), else the sentence that says the view
    (whose maths reads that architecture's embedding, encoding and blocks) does not apply to it."""
    if TUTORIAL_BLOCKS in model.capabilities:
        return None
    return (
        f"{view_title} follows the tutorial's architecture (its embedding, sinusoidal encoding and encoder blocks), "
        f"so it does not apply to this {model.model_type} model."
    )


def require_tutorial_model(view_title: str, model: Classifier) -> None:
    """``not_for_this_model`` as an ``InputError``: the one-line answer of the view's endpoint for another model."""
    if message := not_for_this_model(view_title, model):
        raise InputError(message)


def read_text(value: str, reading: Reading) -> str:
    """The reader of a free-text parameter (a second sentence, a reordering): kept as sent, cut to size."""
    return value[:MAX_INPUT_CHARS]


def read_layer(value: str, reading: Reading) -> int | None:
    """The reader of a layer parameter: a layer of the model, counted from 1."""
    return choice(value, numbers(reading.model.num_layers))


def read_head(value: str, reading: Reading) -> int | None:
    """The reader of a head parameter: a head of the model, counted from 1."""
    return choice(value, numbers(reading.model.num_heads))


def layer_choices(model: Classifier) -> list[tuple[str, int]]:
    """Radio choices for a layer, "1".."L"."""
    return [(str(i), i) for i in numbers(model.num_layers)]


def head_choices(model: Classifier, mean: bool = False) -> list[tuple[str, int | str]]:
    """Radio choices for a head, "1".."H"; with ``mean``, the values are strings and "mean of heads" is added."""
    heads = numbers(model.num_heads)
    if mean:
        return [*((str(h), str(h)) for h in heads), ("mean of heads", MEAN_HEAD)]
    return [(str(h), h) for h in heads]


MAX_DIMS = 8  # positional-encoding dimensions drawn at once


def default_dims(model: Classifier) -> list[int]:
    """The dimensions shown at first: sines whose wavelengths (2π·10000^(dim/D)) span a sentence to a
    paragraph, and the first one's cosine."""
    sines = {2 * round(model.d_model * fraction / 2) for fraction in (0.1, 0.2, 0.35)}
    return sorted(dim for dim in sines | {min(sines) + 1} if dim < model.d_model)


def dims_control(model: Classifier) -> gr.Dropdown:
    """The dimensions dropdown, made unrendered: the page's analysis step reads it, the Positional encoding tab places
    it (it sits here, with the page's other shared controls, so that the page imports no view)."""
    return gr.Dropdown(
        list(range(model.d_model)),
        value=default_dims(model),
        multiselect=True,
        max_choices=MAX_DIMS,
        label="Dimensions",
        render=False,
    )
