"""How a view's events run its draw, as ``events.view_events`` wires them: a quick event, or a long job with a
progress bar and, where the view has one, a Cancel button; each stamps the address (``PageParts.address_stamps``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Protocol

import gradio as gr
from gradio.events import Dependency

from ..registry import Drawing

PRIVATE = {"trigger_mode": "always_last", "api_visibility": "private"}  # the page's events: not an API


class Parts(Protocol):
    """What ``ViewDraws`` reads of ``events.PageParts``, which imports this module."""

    @property
    def drawings(self) -> dict[str, Drawing]: ...
    @property
    def running(self) -> dict[str, gr.State]: ...
    @property
    def failures(self) -> dict[str, gr.Markdown]: ...
    @property
    def current_view(self) -> gr.Textbox: ...
    @property
    def colour_controls(self) -> gr.Row: ...
    @property
    def address_stamps(self) -> dict[str, gr.Textbox]: ...
    def draw_event(self, view: str, draw, values: dict) -> dict: ...
    def open_or_draw(self, view: str, values: dict, event: gr.EventData) -> dict: ...
    def long_job(self, view: str, draw, values: dict, progress=...) -> dict: ...
    def kept_state(self, view: str) -> list: ...
    def cancelled(self, view: str, running: bool = True, kept=None) -> dict: ...


@dataclass
class ViewDraws:
    """``view``'s events that draw it, each stamping the address: quick ones, and its long computations (its
    ``computes``, and its own draw where it says when that starts one: ``Drawing.starts``), which run on the queue
    with a progress bar (``PageParts.long_job``). With a Cancel button (``Drawing.cancel``), it is shown first, off
    the queue, when the trigger starts one, hidden by the job's own answer, and its click cancels them (Gradio's
    ``cancels``; ``launch.stop_on_cancel`` stops the job's thread) and says so. Shown by the job (a generator's first
    answer), it would come only once the job holds a worker, and a job waiting in the queue must be cancellable too."""

    parts: Parts
    view: str
    events: list = field(default_factory=list)  # what the Cancel button cancels

    def draw(self, triggers, draw, inputs, outputs, settings: dict, show) -> Dependency:
        """The view's own ``draw`` on ``triggers``: ``long`` where the view says when it starts a computation,
        else ``quick``."""
        if self.parts.drawings[self.view].starts is None:
            return self.quick(triggers, draw, inputs, outputs, settings)
        return self.long(triggers, draw, inputs, outputs, settings, show)

    def quick(self, triggers, draw, inputs, outputs, settings: dict) -> Dependency:
        """``draw`` on ``triggers``, one event that stamps the address (``PageParts.draw_event``)."""
        stamped = functools.partial(self.parts.draw_event, self.view, draw)
        stamped.__name__ = draw.__name__  # the event's name, in the log and the tests
        return gr.on(triggers, stamped, inputs, [*outputs, self.parts.address_stamps[self.view]], **settings)

    def opened_or_drawn(self, tab: gr.Tab, triggers, inputs, outputs, settings: dict) -> Dependency:
        """A quick view's one drawing event: its ``tab`` selected, or ``triggers`` (its hidden redraw button, its
        controls), told apart by the event (``PageParts.open_or_draw``)."""
        handler = GivenEvent(self.parts.open_or_draw, self.view)
        handler.__name__ = "open_or_draw"
        outputs = [*outputs, self.parts.address_stamps[self.view]]
        return gr.on([tab.select, *triggers], handler, inputs, outputs, **settings)

    def long(self, triggers, draw, inputs, outputs, settings: dict, show) -> Dependency:
        """``draw`` on ``triggers``, a long computation; ``show`` says whether a trigger starts it (``show_cancel``)."""
        job = functools.partial(self.parts.long_job, self.view, draw)
        job.__name__ = draw.__name__
        outputs = [*outputs, self.parts.address_stamps[self.view]]
        cancel = self.parts.drawings[self.view].cancel
        if cancel is None:
            return gr.on(triggers, job, inputs, outputs, **settings)
        running = self.running
        shown = gr.on(triggers, show, inputs, [cancel, running], **settings | {"queue": False})
        self.events.append(shown.then(job, inputs, [*outputs, cancel, running], **settings))
        return self.events[-1]

    @property
    def running(self) -> gr.State:
        """Whether the view's long job's answer is still to come: set as the Cancel button shows, cleared by the
        answer itself (``PageParts.long_job``) and by the button's click; what that click reads."""
        if self.view not in self.parts.running:
            self.parts.running[self.view] = gr.State(False)
        return self.parts.running[self.view]

    def cancel_on_click(self) -> None:
        """The Cancel button's click: it cancels the long computations' events and says so (``cancelled``)."""
        cancel = self.parts.drawings[self.view].cancel
        if cancel is None:
            return
        parts = self.parts
        outputs = [cancel, self.running, parts.failures[self.view], parts.current_view, parts.colour_controls]
        outputs += list(parts.drawings[self.view].controls.values())  # back to what the shown result was made with
        inputs = [self.running, *parts.kept_state(self.view)]
        cancelled = named(parts.cancelled, self.view)
        cancel.click(cancelled, inputs, outputs, cancels=self.events, **PRIVATE, queue=False)


class GivenEvent(functools.partial):
    """A ``functools.partial`` of a method ``(..., values, event)`` that Gradio hands the event as well as the values
    (``gr.EventData``: which trigger fired). Gradio passes it to the parameter whose type hint asks for it, and reads
    the hints of a handler that is not a function from its ``__call__`` (``gradio_seam.type_hints_gradio_reads``)."""

    def __call__(self, values: dict, event: gr.EventData) -> dict:
        return super().__call__(values, event)


def named(method, *args) -> functools.partial:
    """``method`` given ``args`` first, under its own name (the event's name in the log and the tests)."""
    bound = functools.partial(method, *args)
    bound.__name__ = method.__name__
    return bound
