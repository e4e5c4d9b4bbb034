"""What a view is: one tab of the page, registered in ``views.VIEWS``, which ``app.py`` walks.

A view module defines one ``View``: its tab's id (the ``view`` in the page address) and title, a
``layout`` that places its controls and outputs inside the tab and says how to draw them, the
address parameters it keeps (with a reader that checks each), and its API endpoints. Views see the
page only through ``Page`` and never import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr

from .analysis import MAX_INPUT_CHARS


@dataclass(frozen=True)
class Page:
    """The page's own components and model, handed to every view's ``layout``.

    ``layer``, ``head`` and ``dims`` are made unrendered by the page (its analysis step draws with
    them, and Export reads the layer and head); the Attention and Positional-encoding views place them.
    """

    model: object
    result: gr.State
    scale: gr.Radio
    leave_out: gr.CheckboxGroup
    layer: gr.Radio
    head: gr.Radio
    dims: gr.Dropdown


@dataclass(frozen=True)
class Drawing:
    """How a laid-out tab is drawn: ``handler(*inputs) -> outputs``, when a trigger fires or the tab is shown.

    ``controls`` maps each of the view's address parameters to the control that holds it.
    """

    handler: Callable
    inputs: list
    outputs: list
    triggers: list = field(default_factory=list)
    controls: dict = field(default_factory=dict)

    def draw(self, values: dict) -> dict:
        """{output: value}, the handler run on its inputs' ``values`` (a Gradio dispatcher's input dict)."""
        drawn = self.handler(*(values[c] for c in self.inputs))
        drawn = drawn if len(self.outputs) > 1 else (drawn,)  # a one-output handler returns the value itself
        return dict(zip(self.outputs, drawn, strict=True))


@dataclass(frozen=True)
class Reading:
    """What an address reader may check a value against: the model, and how many tokens the sentence has."""

    model: object
    tokens: int


@dataclass(frozen=True)
class View:
    """One tab of the page.

    Attributes:
        id: the tab's id, the ``view`` in the page address.
        title: the tab's label.
        layout: called inside the tab; places its components and returns their ``Drawing``.
        params: address parameter -> ``reader(value, Reading)``, the allowed value or None.
        endpoints: API functions, each served under its own name.
        main: drawn by the page with every analysis instead of when the tab is shown. It is drawn from the
            kept analysis only, never by the model, so its events skip Gradio's queue (``app.py``).
        colour_scale: its figures follow the page's colour-scale and leave-out controls; the page hides those
            controls on the tabs of views that set it False, where they would change nothing.
    """

    id: str
    title: str
    layout: Callable[[Page], Drawing]
    params: dict[str, Callable[[str, Reading], object]] = field(default_factory=dict)
    endpoints: tuple[Callable, ...] = ()
    main: bool = False
    colour_scale: bool = True


def read_text(value: str, reading: Reading) -> str:
    """The reader of a free-text parameter (a second sentence, a reordering): kept as sent, cut to size."""
    return value[:MAX_INPUT_CHARS]


def layer_choices(model) -> list[tuple[str, int]]:
    """Radio choices for a layer, "1".."L"."""
    return [(str(i), i) for i in range(1, model.num_layers + 1)]


def head_choices(model) -> list[tuple[str, int]]:
    """Radio choices for a head, "1".."H"."""
    return [(str(h), h) for h in range(1, model.num_heads + 1)]
