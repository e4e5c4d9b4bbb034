"""Sweep: every tab's own drawing (the handler the page runs when the tab is shown or a control changes), at token
counts from 1 to ``max_len`` and past it, with every control at its defaults, all at their first extreme and all at
their last (and a short slider, the Walkthrough's steps, at every position), on the tutorial's tiny model and on a
tiny BERT, DistilBERT and RoBERTa.

Hypothesis then writes texts of any Unicode (emoji, right-to-left scripts, long words, only punctuation, only
whitespace between words) and every tab is drawn on each, at its defaults.

No browser: each tab is laid out once per model (``app.lay_out_page``) and its ``Drawing`` called as the page calls
it, its kept state carried from one draw to the next as the page carries it. A draw may refuse a control with a
clear ``gr.Error``, never with any other exception; at the defaults it never refuses. Every figure's axis domains are
checked as plotly checks them, and each figure (a tab's output at one setting) goes through plotly's whole
validation once per model, the first time it is drawn at the shortest or the longest sentence (the views build some
figures unvalidated; validating every draw took a sixth of the sweep).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gradio as gr
import plotly.graph_objects as go
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer import TransformerClassifier
from transformer.explorer import analysis, runner
from transformer.explorer.page.events import PageParts
from transformer.explorer.views import VIEWS
from transformer.loading import LoadedModel, load_model

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

FAMILIES = ["tutorial", "bert", "distilbert", "roberta"]
# Token counts drawn at the defaults on the tutorial's model: the shortest, a few where the Walkthrough's layout once
# failed, and the ends (max_len, and a text past it). The controls' extremes are drawn at the shortest, at 17, at
# max_len and past it; a Hub model is drawn at those only (the sweep's time is mostly the tabs' own maths).
LENGTHS = [1, 2, 3, 5, 8, 12, 17, 31, 52]
EXTREME_LENGTHS = [17]
WHOLE_SLIDER = 16  # a slider of fewer positions is drawn at each of them, at every length
WORDS = ["a", "the", "film", "and", "was", "it", "great", "dull", ",", ".", "movie", "acting", "not", "i"]


@dataclass
class Swept:
    """One model's page: its tabs' drawings, a text for each sampled token count (max_len + 1: a longer text) and
    its analysis, shared by every tab as the page shares it; which figures plotly has validated."""

    loaded: LoadedModel
    parts: PageParts
    texts: dict[int, str]
    results: dict[int, analysis.Analysis]
    validated: set = field(default_factory=set)


def one_token_words(loaded: LoadedModel) -> list[str]:
    """The ``WORDS`` the tokenizer reads as one known token each after a space (as a byte-level BPE sees them)."""
    added = len(analysis.analyze(loaded.model, loaded.tokenizer, "a").tokens) - 1
    kept = []
    for word in WORDS:
        tokens = analysis.analyze(loaded.model, loaded.tokenizer, f"a {word}").tokens
        if len(tokens) == added + 2 and "[UNK]" not in tokens and "<unk>" not in tokens:
            kept.append(word)
    return kept


def texts_by_length(loaded: LoadedModel) -> dict[int, str]:
    """{token count: a text of that many tokens (the tokenizer's added ones included)} for each sampled count the
    model can read, and at ``max_len + 1`` a text twice too long (read up to ``max_len``)."""
    words = one_token_words(loaded)
    added = len(analysis.analyze(loaded.model, loaded.tokenizer, words[0]).tokens) - 1
    max_len = loaded.model.max_len
    sample = LENGTHS if isinstance(loaded.model, TransformerClassifier) else [1, *EXTREME_LENGTHS]
    counts = sorted({n for n in (*sample, max_len) if added < n <= max_len} | {added + 1})
    texts = {n: " ".join(words[i % len(words)] for i in range(n - added)) for n in counts}
    texts[max_len + 1] = " ".join(words[i % len(words)] for i in range(2 * max_len))
    for n, text in texts.items():
        assert len(analysis.analyze(loaded.model, loaded.tokenizer, text).tokens) == min(n, max_len), (n, text)
    return texts


@pytest.fixture(scope="module", params=FAMILIES)
def swept(request, app, hub_model_dirs):
    """The page laid out on one model, with ``runner.get_model`` answering that model while the module runs."""
    family = request.param
    loaded = app.get_model()[0] if family == "tutorial" else load_model(hub_model_dirs[family], device="cpu")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "get_model", lambda: (loaded, None))
        with gr.Blocks():
            parts = app.lay_out_page(loaded.model)
        texts = texts_by_length(loaded)
        yield Swept(loaded, parts, texts, {n: runner.run_model(text) for n, text in texts.items()})


def extremes(control, tokens: int) -> tuple[object, object] | None:
    """A control's (first, last) extreme values: a slider's or number box's ends, a radio's or dropdown's first and
    last choices (token positions 0 and N - 1 when its choices follow the sentence), an empty and a full checkbox
    group; None for what has no extremes (a text box, a state)."""
    if isinstance(control, gr.Slider):
        return control.minimum, control.maximum
    if isinstance(control, gr.Number):
        return control.minimum or 0, control.maximum if control.maximum is not None else 2**31 - 1
    if isinstance(control, gr.CheckboxGroup):
        return [], [value for _, value in control.choices]
    if isinstance(control, gr.Radio | gr.Dropdown):
        values = [value for _, value in control.choices] or [0, tokens - 1]
        return values[0], values[-1]
    return None


def every_position(control) -> list:
    """Every value of a slider of at most ``WHOLE_SLIDER`` positions (the Walkthrough's 12 steps), drawn at every
    length; none for another control."""
    if not isinstance(control, gr.Slider) or (control.maximum - control.minimum) / control.step >= WHOLE_SLIDER:
        return []
    return list(range(int(control.minimum), int(control.maximum) + 1, int(control.step)))


def draw(drawing, values: dict) -> dict:
    """The drawing's outputs, its states written back into ``values`` as the page keeps them."""
    drawn = drawing.draw(values)
    values.update({output: value for output, value in drawn.items() if isinstance(output, gr.State)})
    return drawn


def check_domains(drawn: dict) -> None:
    """Every axis domain of every figure drawn within [0, 1], as plotly checks it: cheap enough for every draw."""
    for figure in drawn.values():
        if isinstance(figure, go.Figure):
            for name, axis in figure.layout.to_plotly_json().items():
                if name[1:5] == "axis" and "domain" in axis:
                    assert 0.0 <= axis["domain"][0] < axis["domain"][1] <= 1.0, (name, axis["domain"])


def validate_once(drawn: dict, kind: tuple, validated: set) -> None:
    """Put each figure drawn through plotly's validation unless one of its ``kind`` (view, setting) and output is in
    ``validated``; then it is."""
    for output, figure in drawn.items():
        if isinstance(figure, go.Figure) and (kind, output) not in validated:
            go.Figure(figure.to_dict())  # raises on anything plotly does not accept
            validated.add((kind, output))


@pytest.mark.parametrize("view", [view.id for view in VIEWS])
def test_every_tab_draws_every_length_with_its_controls_at_their_extremes(swept, view):
    drawing = swept.parts.drawings[view]
    result_state = swept.parts.page.result
    reads_sentence = result_state in drawing.inputs
    counts = list(swept.texts) if reads_sentence else [min(swept.texts)]
    ends = {min(counts), *counts[-2:]}  # the shortest, max_len, and past it
    for n in counts:
        result = swept.results[n]
        values = {control: control.value for control in drawing.inputs} | {result_state: result}
        settings = [{}]  # the defaults, then every control at its first extreme, then at its last
        ranges = {c: extremes(c, len(result.tokens)) for c in drawing.inputs if c is not result_state}
        if n in ends or n in EXTREME_LENGTHS:
            settings += [{c: ends_[side] for c, ends_ in ranges.items() if ends_} for side in (0, 1)]
        settings += [{c: value} for c in drawing.inputs for value in every_position(c)]
        for i, setting in enumerate(settings):
            try:
                drawn = draw(drawing, values | setting)
            except gr.Error as error:  # a control the view refuses, said in a sentence
                assert i and str(error.message).strip(), (view, n, setting, error.message)
                continue
            check_domains(drawn)
            if n in ends:
                validate_once(drawn, (view, i, n), swept.validated)  # the shortest and the longest both


# Words of every kind a person may type, joined by any whitespace.
WORD_KINDS = st.one_of(
    st.sampled_from(["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🧪"]),  # emoji, skin tones, ZWJ sequences
    st.text(st.characters(min_codepoint=0x05D0, max_codepoint=0x05EA), min_size=1, max_size=8),  # Hebrew
    st.text(st.characters(min_codepoint=0x0627, max_codepoint=0x064A), min_size=1, max_size=8),  # Arabic
    st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=30, max_size=80),  # one long word
    st.text(st.sampled_from("!?.,;:…—«»¿¡()[]{}\"'"), min_size=1, max_size=6),  # only punctuation
    st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6),  # anything at all
)
SPACES = st.sampled_from([" ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2009"])
UNICODE_TEXTS = st.lists(st.tuples(WORD_KINDS, SPACES), min_size=1, max_size=12).map(
    lambda words: "".join(word + space for word, space in words)
)
ANY_TEXT = settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


@ANY_TEXT
@given(text=UNICODE_TEXTS)
def test_every_tab_draws_any_unicode_text(swept, text):
    try:
        result = runner.run_model(text)
    except analysis.InputError:  # no token in it (only controls or marks the normaliser drops): said, not drawn
        return
    for drawing in swept.parts.drawings.values():
        if swept.parts.page.result not in drawing.inputs:
            continue
        values = {control: control.value for control in drawing.inputs} | {swept.parts.page.result: result}
        draw(drawing, values)  # any exception fails, a gr.Error included: the defaults suit every sentence
