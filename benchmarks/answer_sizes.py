"""Issue 37's answer-size targets, checked in ``make bench``'s real-size section: each endpoint called with its
defaults on a 512-token text answers at most 8 MB of JSON (or refuses, saying what to choose), and one chosen
head's ``/attention`` is at most 3 MB.

Each endpoint is called as the API calls it (``api.endpoints``), with the text alone (both texts the same where it
takes two). Left out, with the reason printed: the endpoints timed with their answers in the table above, the ones
whose answer does not depend on the text, and those too long to run here (``SKIPPED``).
"""

import json

import gradio as gr

DEFAULT_LIMIT_MB, ONE_HEAD_LIMIT_MB = 8.0, 3.0
SKIPPED = {
    "attributions": "timed above, its answer beside it",
    "head_importance": "timed above, its answer beside it",
    "faithfulness": "two erasure curves, one point per token: at 128 tokens in the table above",
    "patching": "1 + L·N patched runs (787 at 512 tokens, about 28 minutes here); one number per layer and token",
    "behaviour": "the behavioural suite's figures: the same whatever the text",
    "errors": "the error list of a corpus: the same whatever the text",
    "head_atlas": "the head atlas of a corpus: the same whatever the text",
    "compare_models": "needs a second model (MODEL_ID_B)",
}
TWO_TEXTS = {"compare"}


def answer_mb(fn, *args, **kwargs) -> tuple[float | None, str]:
    """``fn``'s answer as JSON in MB, or None and the first line of its refusal (a ``gr.Error``)."""
    try:
        return len(json.dumps(fn(*args, **kwargs))) / 1e6, ""
    except gr.Error as refusal:
        return None, str(refusal.message).splitlines()[0]


def size_lines(text: str) -> list[str]:
    """One line per endpoint: its default answer's size (or refusal) against 8 MB; then one head's ``/attention``."""
    from transformer.explorer.page import api
    from transformer.explorer.registry import Registry
    from transformer.explorer.views import VIEWS

    lines, missed = ["answers at 512 tokens, each endpoint with its defaults (target <= 8 MB, or a refusal):"], []
    endpoints = api.endpoints(Registry(VIEWS))
    for name, fn in endpoints.items():
        if name in SKIPPED:
            lines.append(f"  /{name:<16} not called: {SKIPPED[name]}")
            continue
        size, refusal = answer_mb(fn, text, text) if name in TWO_TEXTS else answer_mb(fn, text)
        if size is not None and size > DEFAULT_LIMIT_MB:
            missed.append(name)
        lines.append(f"  /{name:<16} {f'{size:.2f} MB' if size is not None else f'refused: {refusal[:90]}'}")
    lines.append(
        f"every default answer <= {DEFAULT_LIMIT_MB:.0f} MB: {'MISSED by ' + ', '.join(missed) if missed else 'met'}"
    )
    one_head, _ = answer_mb(endpoints["attention"], text, layer=1, head=1)
    verdict = "met" if one_head is not None and one_head <= ONE_HEAD_LIMIT_MB else "MISSED"
    lines.append(
        f"/attention, layer 1 head 1: {one_head or 0:.2f} MB (target <= {ONE_HEAD_LIMIT_MB:.0f} MB): {verdict}"
    )
    return lines
