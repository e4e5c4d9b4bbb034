"""The ``/predict`` and ``/attention`` answers, and how big an answer that holds attention maps may be.

An answer holds the maps of the layers and heads its caller chose (every one by default), as nested lists
[layer][head][query][key], rounded. One map is N² numbers, so at 512 tokens every head of a DistilBERT-base
(6 × 12) would be 149 MB of JSON: an answer over ``MAX_ANSWER_BYTES`` is refused, saying how many heads fit at
this length, and the caller chooses some with ``layer`` and ``head`` (``/rollout``: layers, ``/head_internals``:
query rows, by ``refuse_past_size``).

Shape letters: L = layers, H = heads, N = tokens.
"""

from __future__ import annotations

import numpy as np

from .analysis import Analysis, InputError
from .inputs import chosen_indices, page_number

PAYLOAD_DECIMALS = 4
MAX_ANSWER_BYTES = 8_000_000  # an answer as the API sends it (json.dumps of the outputs, /call/<endpoint>)
OTHER_FIELDS_BYTES = 200_000  # kept for the rest of an answer beside its maps (tokens and offsets: ~20 KB at 512)


def label_payload(result: Analysis) -> dict:
    """The ``/predict`` answer, in ``gr.Label``'s format: {"label", "confidences": [{"label", "confidence"}]}, and
    "clear": false where the model has no clear opinion (``Analysis.clear``), a field added for old callers to
    ignore."""
    ranked = sorted(result.prediction.items(), key=lambda item: item[1], reverse=True)
    return {
        "label": ranked[0][0],
        "confidences": [{"label": name, "confidence": round(p, PAYLOAD_DECIMALS)} for name, p in ranked],
        "clear": result.clear,
    }


def attention_payload(result: Analysis, layer=None, head=None) -> dict:
    """The ``/attention`` answer: tokens, and the chosen layers' and heads' weights as [layer][head][query][key].

    Raises:
        InputError: a layer or head the model lacks, or more maps than fit in ``MAX_ANSWER_BYTES``.
    """
    return {
        "tokens": result.tokens,
        "offsets": [list(span) for span in result.offsets],
        "truncated": result.truncated,
        **chosen_maps(result.attentions, layer, head, "attentions"),
    }


def chosen_maps(maps: np.ndarray, layer, head, name: str, decimals: int = PAYLOAD_DECIMALS, **per_head) -> dict:
    """{"layers", "heads" (counted from 1), ``name``: the chosen heads' maps rounded to ``decimals``}, and each of
    ``per_head``'s arrays for the same heads.

    Args:
        maps: (L, H, N, N).
        layer, head: the caller's choice (``inputs.chosen_indices``): None for all, a number, or a list.
        name: the maps' key in the answer.
        decimals: what they are rounded to.
        per_head: more arrays (L, H, ...) to answer for the chosen heads, e.g. ``value_norms``.

    Raises:
        InputError: a layer or head the model lacks, or more maps than fit in ``MAX_ANSWER_BYTES``.
    """
    n = maps.shape[-1]
    layers, heads = chosen_heads(layer, head, *maps.shape[:2])
    refuse_past_size(
        len(layers) * len(heads), maps, n * n, decimals, "heads' maps", "layer and head (e.g. layer=1, head=[1, 2])"
    )
    chosen = np.ix_(layers, heads)
    return {
        "layers": [page_number(index) for index in layers],
        "heads": [page_number(index) for index in heads],
        name: rounded(maps[chosen], decimals),  # (layers, heads, N, N)
        **{key: rounded(values[chosen], decimals) for key, values in per_head.items()},
    }


def chosen_heads(layer, head, num_layers: int, num_heads: int) -> tuple[list[int], list[int]]:
    """A caller's ``layer`` and ``head`` as 0-based (layers, heads), every one of each by default.

    Raises:
        InputError: a layer or head the model lacks.
    """
    return chosen_indices(layer, "Layer", num_layers), chosen_indices(head, "Head", num_heads)


def refuse_past_size(count: int, values: np.ndarray, numbers_each: int, decimals: int, what: str, how: str) -> None:
    """Refuse an answer of ``count`` parts (maps, or rows of maps) that would pass ``MAX_ANSWER_BYTES``, saying how
    many fit at this length and how to choose fewer.

    Args:
        count: how many parts the caller chose.
        values: every number the parts are taken from; the longest sets each one's bytes (``number_bytes``).
        numbers_each: how many numbers one part holds (a head's map: N²).
        decimals: what they are rounded to.
        what: the parts, for the message ("heads' maps").
        how: the argument that chooses them, with an example.

    Raises:
        InputError: more than ``parts_that_fit``.

    Shape:
        values: (..., N), N the tokens.
    """
    fit = parts_that_fit(values, numbers_each, decimals)
    if count > fit:
        raise InputError(
            f"At {values.shape[-1]} tokens an answer holds at most {fit} {what} ({MAX_ANSWER_BYTES // 10**6} MB), "
            f"not {count}: choose fewer with {how}."
        )


def parts_that_fit(values: np.ndarray, numbers_each: int, decimals: int) -> int:
    """How many parts of ``numbers_each`` of ``values``' numbers an answer holds within ``MAX_ANSWER_BYTES``, each
    number at most ``number_bytes`` long."""
    return (MAX_ANSWER_BYTES - OTHER_FIELDS_BYTES) // max(numbers_each * number_bytes(values, decimals), 1)


def number_bytes(values: np.ndarray, decimals: int) -> int:
    """The most bytes ``json.dumps`` writes for one of ``values`` rounded to ``decimals``, its ", " included.

    The longest is the largest magnitude written in full ("0.1234" for a weight); a small number's shortest
    form is no longer ("1e-04"), and a row's brackets are under one byte a number.
    """
    largest = float(np.abs(values).max()) if values.size else 0.0
    sign = "-" if values.size and float(values.min()) < 0 else ""
    return len(f"{sign}{largest:.{decimals}f}") + len(", ")


def rounded(values: np.ndarray, decimals: int) -> list:
    """``values`` as nested lists rounded to ``decimals``; float64 first: a rounded float32 prints as
    0.12280000001192093 in JSON."""
    return np.round(np.asarray(values, dtype=np.float64), decimals).tolist()
