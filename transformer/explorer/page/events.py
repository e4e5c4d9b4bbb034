"""When each part of the page draws: the events between the components ``app.py`` lays out, in five groups.

- ``analyze``: Analyze, Enter and the examples run ``page.show_text``, which draws the main view on
  screen; then the address follows (``page.js``), and an explanation tab on screen is redrawn.
- ``view_events``: each view's own events: its tab selected, its controls (``Drawing.triggers``), and a
  hidden redraw button that ``page.js`` presses for the tab on screen.
- ``address_after_draws``: a listener per view (and one for the analysis) that writes the address after each of
  its draws that answers (its answer renews the view's hidden stamp), not a js-only step after each of some sixty
  events.
- ``share``: "Copy link" keeps the view's inputs (``address.share_link``) and copies the link.
- ``load_page``: the page load's one step (``PageParts.restore_page``), then ``page.js`` puts the text in
  the box unless the person typed meanwhile, selects the view's tab and writes the address.

Each view's events name only its own components: on every message of every event, Gradio refreshes the
loading status of every component that the events run so far have named, inputs included. A main view is
redrawn from the kept analysis, a few milliseconds without the model, so its events skip the queue, each of
whose extra messages costs the page such a refresh.
"""

from __future__ import annotations

import functools
import logging
import secrets
from dataclasses import dataclass, field

import gradio as gr

from .. import runner
from ..registry import GLOBAL_PARAMS, Drawing, Page, Registry
from . import scripts
from .address import share_link
from .draws import PRIVATE, ViewDraws, named
from .page import show_text
from .restore import drawn_over, restore_controls, restore_view, unrestored

LOG = logging.getLogger(__name__)

ANALYZED = "(analysis)"  # the analysis's address stamp, beside each view's: no view's id has brackets


@dataclass(frozen=True)
class PageParts:
    """The page's components that events join, and how a view is drawn from them.

    ``registry`` holds the views the page was laid out with. ``restored_text`` is a hidden box for the page load's
    text (never the sentence box, where the person may be typing); ``current_view`` holds the view on screen;
    ``tabs`` maps each view's id to its tab and drawing; ``failures`` to a hidden line in its tab that says when it
    could not be drawn; ``running`` to the state of each view with a Cancel button that says whether its long job's
    answer is still to come (``ViewDraws`` makes them).
    """

    registry: Registry
    page: Page
    text_box: gr.Textbox
    restored_text: gr.Textbox
    analyze_button: gr.Button
    share_button: gr.Button
    link_key: gr.Textbox
    examples: gr.Examples
    notice: gr.Markdown
    prediction: gr.Label
    tokens_view: gr.HighlightedText
    colour_controls: gr.Row
    current_view: gr.Textbox
    tabs: dict[str, tuple[gr.Tab, Drawing]]
    failures: dict[str, gr.Markdown]
    running: dict[str, gr.State] = field(default_factory=dict)

    @functools.cached_property
    def drawings(self) -> dict[str, Drawing]:
        return {view_id: drawing for view_id, (_, drawing) in self.tabs.items()}

    def show_text(self, *values) -> tuple:
        """``page.show_text`` on ``analyze_inputs``' values (Analyze, Enter, the examples), then the address stamp."""
        own = len(self.page_inputs)
        controls = dict(zip(self.main_controls, values[own:-1], strict=True))
        drawn = show_text(self.registry, *values[:own], view=values[-1], controls=controls)
        return (*drawn, self.stamped(ANALYZED)[self.address_stamps[ANALYZED]])

    @functools.cached_property
    def address_stamps(self) -> dict[str, gr.Textbox]:
        """{a view's id, or ``ANALYZED``: a hidden box that each of its draws which answers renews (``stamped``),
        whose change writes the address}. Made by the first event that names them (the analysis's), so they sit with
        the events' hidden buttons."""
        return {drawn: gr.Textbox(visible=False, elem_classes=["address-stamp"]) for drawn in [ANALYZED, *self.tabs]}

    @functools.cached_property
    def load_mark(self) -> gr.Textbox:
        """A hidden box that the page load's answer fills (``restore_page``), so it is empty in an event the page sent
        before that answer came: Gradio's select of the first tab as the page mounts, which carries the controls'
        defaults while the analysis it would draw from is the session's, the load's (``open_or_draw``)."""
        return gr.Textbox("", visible=False, elem_id="load-mark")

    def stamped(self, drawn: str) -> dict:
        """The address stamp of ``drawn`` (a view's id, or ``ANALYZED``) with a new token, so that the box changes:
        random, as a count would tell each page how many draws the server made."""
        return {self.address_stamps[drawn]: secrets.token_hex(4)}

    def draw_event(self, view: str, draw, values: dict) -> dict:
        """A quick event of ``view``: ``draw(values)``, then the address stamp, as a long one (``long_job``)."""
        return draw(values) | self.stamped(view)

    def open_or_draw(self, view: str, values: dict, event: gr.EventData) -> dict:
        """A quick ``view``'s one drawing event (``ViewDraws.opened_or_drawn``): ``draw_view``, then the stamp; where
        its tab was selected (the ``event``'s target), the view is made current too (``make_current``). It draws even
        on the view already current: Gradio's page reruns an event triggered again while it ran (``always_last``)
        with its first trigger's target, so a control changed while the tab opened comes back as the tab. A view whose
        draw starts a computation (its ``computes``) is opened as ``open_view`` opens it: not drawn again, which
        would start it again. Sent before the page load's answer came (an empty ``load_mark``), it draws nothing: the
        load draws the view from the address, and the controls such an event carries are the page's defaults."""
        if not values[self.load_mark]:
            return {self.current_view: gr.skip()}  # every output left as it is (Gradio refuses an empty dict)
        opened = getattr(event.target, "_id", None) == self.tabs[view][0]._id
        if opened and self.drawings[view].computes:
            return self.draw_event(view, functools.partial(self.open_view, view), values)
        drawn = lambda values: self.opened(view, opened, values) | self.draw_view(view, values)  # noqa: E731
        return self.draw_event(view, drawn, values)

    def opened(self, view: str, opened: bool, values: dict) -> dict:
        """Where ``view``'s tab was ``opened``: ``view`` made current (``made_current``); else nothing."""
        return self.made_current(view, values) if opened else {}

    def made_current(self, view: str, values: dict) -> dict:
        """``make_current(view)``, but on the view already current the current view is left as it is: Gradio selects
        the first tab as the page mounts, and that answer may come after the page load made another view current."""
        if view == values[self.current_view]:
            return {self.current_view: gr.skip()} | self.show_colour_controls(view)
        return self.make_current(view)

    def share_link(self, request: gr.Request, *values) -> str:
        """``address.share_link`` on the page's views: the "Copy link" button."""
        return share_link(self.registry, request, *values)

    @property
    def page_inputs(self) -> list:
        """The text and the page's own five controls: the first of ``analyze_inputs``."""
        page = self.page
        return [self.text_box, page.layer, page.head, page.dims, page.scale, page.leave_out]

    @property
    def analyze_inputs(self) -> list:
        """``show_text``'s inputs: ``page_inputs``, the main views' own controls (``main_controls``: no redraw after
        the analysis), then the view on screen (last: ``page.js``'s ``onScreenView`` puts the tab there)."""
        return self.page_inputs + [self.url_controls[name] for name in self.main_controls] + [self.current_view]

    @functools.cached_property
    def main_controls(self) -> list[str]:
        """The address parameters of the main views' own controls (the weightings), in ``analyze_inputs``' order."""
        return [name for view in self.registry.main_views for name in self.drawings[view].controls]

    @property
    def main_figures(self) -> list:
        """Each main view's figure, the first of its outputs (``View.main``), in ``registry.main_views`` order."""
        return [self.drawings[view].outputs[0] for view in self.registry.main_views]

    @property
    def analyzed(self) -> list:
        """``show_text``'s outputs: the analysis, prediction, tokens, notice and each main view's figure."""
        return [self.page.result, self.prediction, self.tokens_view, self.notice, *self.main_figures]

    @property
    def spinners(self) -> list:
        """Where the analysis and the page load show progress: the figures, not the prediction (benchmarks/README)."""
        return self.main_figures

    @functools.cached_property
    def url_controls(self) -> dict:
        """{address parameter: the control that holds it}."""
        page = self.page
        controls = {"text": self.text_box, "view": self.current_view, "layer": page.layer, "head": page.head}
        controls |= {"scale": page.scale, "leave_out": page.leave_out}
        return controls | {name: c for drawing in self.drawings.values() for name, c in drawing.controls.items()}

    def show_colour_controls(self, view: str) -> dict:
        """The colour-scale and leave-out controls, shown only with a view whose figures they change."""
        return {self.colour_controls: gr.update(visible=self.registry.colour_scale.get(view, True))}

    def draw_view(self, view: str, values: dict) -> dict:
        """Draw ``view`` from its inputs' ``values``; a main view only from an analysis (else it stays as it is).

        A failure stays in the view: its outputs keep what they show, a line in its tab says it could not be
        drawn, and the log has the traceback, once. (A ``gr.Error`` is the sender's to read, as Gradio shows it.)
        """
        drawing = self.drawings[view]
        if view in self.registry.main_views and values[self.page.result] is None:
            return {output: gr.skip() for output in self.view_outputs(view)}
        return self.draw_part(view, drawing, values)

    def draw_part(self, view: str, drawing: Drawing, values: dict) -> dict:
        """Draw ``drawing``, the whole of ``view`` or one of its ``redraws`` or ``computes``, with a failure kept in
        the view."""
        failure = self.failures[view]
        try:
            return drawing.draw(values) | {failure: gr.update(visible=False)}
        except (gr.Error, runner.JobCancelled):
            raise
        except Exception as error:
            LOG.exception("The %s view could not be drawn", view)
            said = f"**This view could not be drawn** ({type(error).__name__}); the rest of the page is unaffected."
            return {output: gr.skip() for output in drawing.outputs} | {failure: gr.update(value=said, visible=True)}

    def long_job(self, view: str, draw, values: dict, progress=gr.Progress(track_tqdm=True)) -> dict:  # noqa: B008 (Gradio's progress idiom)
        """``draw(values)``, a draw of ``view`` that runs a long computation (one of its ``computes``, or its own draw
        where it says when that starts one), stopped at its next model pass once its event is cancelled
        (``runner.stoppable``): Gradio reads ``progress`` in this signature and draws the computation's tqdm bars as
        the view's progress bar. Its answer hides the view's Cancel button and stamps the address. Where there is a
        button, a ``gr.Error`` is said in a warning instead, with the button hidden and no stamp: Gradio's page runs
        no step after a failed event (not even a ``.then``), so a raised one would leave the button on screen."""
        try:
            with runner.stoppable():
                drawn = draw(values)
        except runner.JobCancelled:  # its event is over: nothing reads this answer (the click hid the button)
            return {}
        except gr.Error as error:
            if self.drawings[view].cancel is None:
                raise
            gr.Warning(error.message, title=error.title)
            return self.hide_cancel(view)
        return drawn | self.hide_cancel(view) | self.stamped(view)

    def job_running(self, view: str, running: bool) -> dict:
        """``view``'s ``running`` state set, where it has one (a view with a Cancel button)."""
        return {self.running[view]: running} if view in self.running else {}

    def show_cancel(self, view: str, drawing: Drawing, values: dict) -> dict:
        """Before a long draw of ``view`` (``drawing``, one of its ``computes`` or its own): its Cancel button, shown
        when the trigger starts the computation (``Drawing.starts``)."""
        starts = drawing.starts is None or drawing.starts(*(values[c] for c in drawing.inputs))
        return self.cancel_shown(view) if starts else skipped(self.cancel_shown(view))

    def cancel_shown(self, view: str) -> dict:
        """``view``'s Cancel button shown, its job running."""
        return {self.drawings[view].cancel: gr.update(visible=True)} | self.job_running(view, True)

    def show_cancel_on_open(self, view: str, values: dict) -> dict:
        """``show_cancel`` for ``view``'s own draw as its tab is selected: not on the view already current, which
        ``open_view`` does not draw."""
        if view == values[self.current_view]:
            return skipped(self.cancel_shown(view))
        return self.show_cancel(view, self.drawings[view], values)

    def hide_cancel(self, view: str) -> dict:
        """After a long draw of ``view`` (done, failed or cancelled): its Cancel button hidden where it has one, no job
        running (a Cancel clicked after the job's answer cancels nothing)."""
        cancel = self.drawings[view].cancel
        return ({cancel: gr.update(visible=False)} if cancel is not None else {}) | self.job_running(view, False)

    def cancelled(self, view: str, running: bool = True, kept=None) -> dict:
        """The Cancel button pressed: it is hidden and the tab shows what it showed before. Where the job's answer
        had not come (``running``), the view's line says in one line that the new computation was cancelled, and
        the controls go back to what that result was made with (the view's ``kept`` state), so the two agree (the
        steps said 128 above a result of 32); an answer that came first stays, with no such line. The button shows
        only on its tab, so the tab is on screen even where a tab's opening was cancelled before ``open_view`` said
        so."""
        said = f"**{runner.CANCELLED}** The new computation was stopped; this tab shows what it showed before."
        shown = {self.failures[view]: gr.update(value=said, visible=True)} if running else {}
        controls = self.drawings[view].controls
        kept_with = {controls[name]: value for name, value in runner.kept_controls(kept).items() if name in controls}
        return self.hide_cancel(view) | shown | (kept_with if running else {}) | self.make_current(view)

    def kept_state(self, view: str) -> list:
        """The ``gr.State`` among ``view``'s inputs that keeps its shown result, if it has one."""
        return [block for block in self.drawings[view].inputs if isinstance(block, gr.State)][-1:]

    def view_outputs(self, view: str) -> list:
        """What drawing ``view`` writes: its outputs and its failure line."""
        return [*self.drawings[view].outputs, self.failures[view]]

    def open_view(self, view: str, values: dict) -> dict:
        """A tab was selected: ``view`` made current and drawn. Gradio also selects the first tab as the page mounts,
        whenever that request reaches the queue; it names the view already current, so it draws nothing (the load
        draws)."""
        already = view == values[self.current_view]
        return self.made_current(view, values) | ({} if already else self.draw_view(view, values))

    def make_current(self, view: str) -> dict:
        """``view`` made the current view with its colour controls, drawing nothing. Also the hidden button's
        handler, for the tab on screen where a tab's answer came back after the next tab's and left ``current_view``
        behind (``page.js`` ``writeAddress``): the next click on that earlier tab then draws it again."""
        return {self.current_view: view} | self.show_colour_controls(view)

    @property
    def restored(self) -> list:
        """``restore_view``'s outputs: the text (to ``restored_text``), the page's controls, then ``analyzed``."""
        page = self.page
        return [self.restored_text, page.layer, page.head, page.scale, page.leave_out, *self.analyzed]

    @property
    def restored_names(self) -> list[str]:
        """The address parameters of the controls the page load writes: the view, then each view's."""
        return ["view", *(name for name in self.registry.url_params if name not in GLOBAL_PARAMS)]

    @property
    def load_outputs(self) -> list:
        """What the page load writes: ``restored``, every view's controls and outputs, the colour controls' row, and
        the ``load_mark``."""
        controls = [self.url_controls[name] for name in self.restored_names]
        outputs = [c for view in self.drawings for c in self.view_outputs(view)]
        return list(dict.fromkeys([*self.restored, *controls, self.colour_controls, self.load_mark, *outputs]))

    def restore_page(self, request: gr.Request) -> dict:
        """Page load, one step: the text, the view and its controls from the address; the analysis; the view drawn;
        the ``load_mark`` filled.

        It reads nothing from the page: a page that has just opened holds the defaults, and a deep-linked one
        could hold anything (Gradio's rejection of a value would echo it in a toast that renders HTML). A text
        or control that cannot be read is said in a warning and the rest is restored all the same, so the next
        step still hands the address over to the views. The text goes to ``restored_text``.
        """
        text, layer, head, dims, scale, leave_out = (c.value for c in self.page_inputs)  # the defaults, as opened
        try:
            restored = restore_view(
                self.registry, text, layer, head, dims, request, scale, leave_out, self.current_view.value
            )
            values = dict(zip(self.restored, restored, strict=True))
        except gr.Error as error:  # a text in the address that the model cannot read
            gr.Warning(error.message, title=error.title)
            values = {}
        registry = self.registry
        defaults = [self.url_controls[name] for name in self.restored_names if name not in registry.text_params]
        values |= {control: control.value for control in defaults}  # each view's own text keeps the page's
        for name, value in restore_controls(registry, values.get(self.page.result), request).items():
            values[self.url_controls[name]] = value
        labels = {name: control.label for name, control in self.url_controls.items() if control.label}
        if lost := unrestored(registry, values.get(self.page.result), request, labels):
            gr.Warning(lost, title="Not everything in this link was restored")
        view = values[self.current_view]
        drawing = self.drawings[view]
        drawn = view in registry.main_views and len(drawing.outputs) <= 1 and not drawing.controls  # by the analysis
        if not drawn:
            try:  # a view's gr.State starts at its own value, as in a new session
                values = drawn_over(values, self.draw_view(view, {c: values.get(c, c.value) for c in drawing.inputs}))
            except gr.Error as error:
                gr.Warning(error.message, title=error.title)
        return values | self.show_colour_controls(view) | {self.load_mark: "loaded"}


def write_address(parts: PageParts) -> dict:
    """The js-only step that writes the address from every parameter (``page.js`` ``writeAddress``), and redraws the
    view on screen."""
    inputs = [parts.url_controls[name] for name in parts.registry.url_params]
    return {"fn": None, "inputs": inputs, "js": scripts.call("writeAddress")}


def analyze(parts: PageParts) -> None:
    """Analyze, Enter and the examples: the analysis draws the main view on screen (the tab shown, even if
    chosen an instant before); then the address follows (its stamp), and an explanation tab on screen is redrawn."""
    inputs, outputs = parts.analyze_inputs, [*parts.analyzed, parts.address_stamps[ANALYZED]]
    run = {"fn": parts.show_text, "inputs": inputs, "outputs": outputs, "js": scripts.call("onScreenView", len(inputs))}
    run |= PRIVATE | {"show_progress_on": parts.spinners, "show_progress": "minimal"}  # a timer over the kept figure
    gr.on([parts.analyze_button.click, parts.text_box.submit], **run)
    parts.examples.load_input_event.then(**run)
    page = parts.page
    gr.on([page.scale.input, page.leave_out.input], **write_address(parts))
    address_after_draws(parts)


def address_after_draws(parts: PageParts) -> None:
    """The address written after each draw that answers, by a js-only listener on its view's address stamp
    (``page.js`` ``writeDrawnAddress``, with no request to the server) that reads that view's parameters: Gradio's page
    reads a step's inputs one by one, and every parameter for each draw made a head change 10% slower. The analysis
    reads the page's own parameters only: it changes no view's controls, so the view on screen keeps the parameters
    its own draws wrote. After an analysis, an explanation tab on screen is redrawn; a main view is not (the analysis
    drew it with its own controls, ``analyze_inputs``). A draw that fails (a ``gr.Error``) sends no stamp: no
    address."""
    for drawn, stamp in parts.address_stamps.items():
        analyzed = drawn == ANALYZED
        names = GLOBAL_PARAMS + ([] if analyzed else parts.registry.view_params.get(drawn, []))
        js = scripts.call("writeDrawnAddress", None if analyzed else drawn)  # its names: page.js ``paramsOf``
        stamp.change(None, [stamp, *(parts.url_controls[name] for name in names)], None, js=js, **PRIVATE)


def current_button(parts: PageParts) -> None:
    """The hidden button ``page.js`` presses to make the tab on screen the current view (``make_current``): its
    ``js`` hands over that tab's view as the input."""
    button = gr.Button(visible="hidden", elem_id=scripts.CURRENT_ID)
    outputs = [parts.current_view, parts.colour_controls]
    button.click(
        parts.make_current, parts.current_view, outputs, js=scripts.call("tabOnScreenInput"), queue=False, **PRIVATE
    )


def view_events(parts: PageParts) -> None:
    """Each view's own events: its tab selected, its hidden redraw button, its controls, its quick redraws and long
    computations, each stamping the address (``address_after_draws``)."""
    for view, drawing in parts.drawings.items():
        events = PRIVATE | {"queue": view not in parts.registry.main_views}
        draws = ViewDraws(parts, view)
        own_draws(parts, view, draws, events)
        for redraw in drawing.redraws:  # from what the view kept, off the queue
            on_redraw = functools.partial(parts.draw_part, view, redraw)
            on_redraw.__name__ = redraw.handler.__name__
            outputs = [*redraw.outputs, parts.failures[view]]
            draws.quick(redraw.triggers, on_redraw, set(redraw.inputs), outputs, PRIVATE | {"queue": False})
        once = PRIVATE | {"trigger_mode": "once"}  # never a second run queued behind a long one
        for computed in drawing.computes:
            on_compute = functools.partial(parts.draw_part, view, computed)
            on_compute.__name__ = computed.handler.__name__
            outputs, on_show = [*computed.outputs, parts.failures[view]], named(parts.show_cancel, view, computed)
            draws.long(computed.triggers, on_compute, set(computed.inputs), outputs, once, on_show)
        draws.cancel_on_click()


def own_draws(parts: PageParts, view: str, draws: ViewDraws, events: dict) -> None:
    """``view``'s draw as its tab is selected (``open_view``), and by its hidden redraw button (``page.js``'s
    ``redrawView``) and its controls' triggers (``draw_view``, one event named after the view's handler where it has
    controls). A quick view's are one event (``ViewDraws.opened_or_drawn``), which reads the ``load_mark`` too; a
    long one's are two, as ``draws.draw`` wires them, each showing the Cancel button its own way
    (``show_cancel_on_open``, ``show_cancel``)."""
    tab, drawing = parts.tabs[view]
    redraw_button = gr.Button(visible="hidden", elem_id=scripts.REDRAW_ID + view)
    triggers, inputs, outputs = [redraw_button.click, *drawing.triggers], set(drawing.inputs), parts.view_outputs(view)
    opened = {"inputs": {parts.current_view, *inputs}, "outputs": [parts.current_view, parts.colour_controls, *outputs]}
    if drawing.starts is None:
        draws.opened_or_drawn(tab, triggers, {parts.load_mark, *opened["inputs"]}, opened["outputs"], events)
        return
    on_open = named(parts.show_cancel_on_open, view)
    draws.draw(tab.select, named(parts.open_view, view), opened["inputs"], opened["outputs"], events, on_open)
    on_draw = functools.partial(parts.draw_view, view)
    on_draw.__name__ = drawing.handler.__name__ if drawing.triggers else "draw_view"  # in the log and the tests
    draws.draw(triggers, on_draw, inputs, outputs, events, named(parts.show_cancel, view, drawing))


def skipped(updates: dict) -> dict:
    """The same components, each left as it is."""
    return {block: gr.skip() for block in updates}


def share(parts: PageParts) -> None:
    """The "Copy link" button: keep the view's inputs, then copy the address with their key (or show it)."""
    inputs = [parts.url_controls[name] for name in parts.registry.url_params]
    shared = parts.share_button.click(parts.share_link, inputs, parts.link_key, **PRIVATE)
    shared.success(None, parts.link_key, None, js=scripts.call("copyLink"))


def load_page(demo: gr.Blocks, parts: PageParts) -> None:
    """The page load: ``restore_page``; then the page's script keeps a typed text (decided in the page when the
    load's answer has arrived, so a keystroke at any moment wins), selects the view's tab, writes the address,
    and analyzes a text typed meanwhile. (An event with the tabs as output would name every view's components.)
    """
    loaded = demo.load(
        parts.restore_page, None, parts.load_outputs, api_visibility="private", show_progress_on=parts.spinners
    )
    loaded = loaded.then(None, parts.restored_text, None, js=scripts.call("keepTyped", parts.text_box.value))
    url_params = parts.registry.url_params
    every_control = [parts.url_controls[name] for name in url_params]
    opened = loaded.then(None, every_control, None, js=scripts.call("openAddressView"))
    opened.then(None, js=scripts.call("reanalyzeTyped"))
