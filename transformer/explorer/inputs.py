"""Checking what people send (the page, its address, API callers) and numbering layers, heads and classes.

The one place where the page's numbering meets the model's: layers and heads count from 1 on the
page, in the address and in every API argument and answer, and from 0 in ``transformer.explain``.
``layer_head`` (and ``layer_index``, ``model_head``) turn the page's numbers into the model's indices,
``page_number`` and ``page_numbers`` turn the model's indices back, and ``numbers`` lists the page's numbers of
a model's layers or heads. Token positions count from 0 everywhere, as in the token labels.

A bad value raises ``InputError`` (defined here, for every check of what people send) with a message that says
what is allowed. The page address's readers (``choice``, ``choices``, ``number``) instead return None for a
value the page does not offer, which the app reads as "keep what is on the page": every value in an address is
untrusted.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Sequence

import numpy as np


class InputError(ValueError):
    """Text or a value the explorer cannot read; the message is written for the person who sent it."""


MEAN_HEAD = "mean"  # the head choice that averages every head
PREDICTED = "predicted"  # the target-class choice that follows the model's prediction
_HEAD_LABEL = re.compile(r"\s*L\s*(\d+)\s*H\s*(\d+)\s*", re.IGNORECASE)


def quoted(value, limit: int = 40) -> str:
    """A caller's value quoted in a message: its repr, cut to ``limit`` characters and HTML-escaped.

    Gradio shows error messages as HTML, and a value may be markup or 10,000 characters long.
    """
    text = repr(value)
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…", quote=False)  # quotes stay plain text


def check_unicode(values) -> None:
    """Refuse text that is not valid Unicode: a lone surrogate (``"\\ud800"``), which JSON can carry and no tokenizer,
    file or answer can hold.

    Args:
        values: an event's inputs, strings at any depth of lists and dicts.

    Raises:
        InputError: the first string with a lone surrogate, named by its position.
    """
    strings = [values]
    while strings:
        value = strings.pop()
        if isinstance(value, dict):
            strings.extend(value.values())
        elif isinstance(value, list | tuple):
            strings.extend(value)
        elif isinstance(value, str):
            lone = LONE_SURROGATE.search(value)
            if lone is not None:
                raise InputError(
                    f"The text holds invalid Unicode (a lone surrogate, U+{ord(lone[0]):04X}, at character "
                    f"{lone.start():,}): send UTF-8 text."
                )


LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # Python's str holds surrogates only when they stand alone


def whole_number(value, name: str, low: int, high: int) -> int:
    """``value`` as an int in [low, high], or an ``InputError`` naming ``name`` and the range."""
    try:
        number = int(value)
        ok = number == float(value) and low <= number <= high
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InputError(f"{name} must be a whole number from {low} to {high}; got {quoted(value)}.")
    return number


def model_index(number: int) -> int:
    """A layer or head counted from 1, already range-checked, as the model's 0-based index."""
    return number - 1


def layer_index(layer, num_layers: int) -> int:
    """A layer counted from 1 as the model's 0-based index, range-checked."""
    return model_index(whole_number(layer, "Layer", 1, num_layers))


def numbers(count: int) -> range:
    """The page's numbers of ``count`` layers or heads: 1 to ``count``."""
    return range(1, count + 1)


def checked_numbers(layer, head, num_layers: int, num_heads: int) -> tuple[int, int]:
    """A layer and head counted from 1, range-checked, and still counted from 1 (for Compare's two models)."""
    return whole_number(layer, "Layer", 1, num_layers), whole_number(head, "Head", 1, num_heads)


def model_head(layer: int, head: int, num_layers: int, num_heads: int) -> tuple[int, int] | None:
    """A checked layer and head counted from 1 as a model's 0-based (layer, head); None when it has no such head."""
    return (model_index(layer), model_index(head)) if layer <= num_layers and head <= num_heads else None


def page_number(index: int) -> int:
    """A model's 0-based layer or head index as the page counts it, from 1."""
    return index + 1


def layer_head(layer, head, num_layers: int, num_heads: int, *, mean: bool = False) -> tuple[int, int | None]:
    """A layer and head counted from 1 as the model's 0-based indices, range-checked.

    With ``mean``, the head may be ``MEAN_HEAD`` (every head), returned as None.
    """
    layer = layer_index(layer, num_layers)
    if mean and head == MEAN_HEAD:
        return layer, None
    return layer, model_index(whole_number(head, "Head", 1, num_heads))


def chosen_indices(value, name: str, count: int, first: int = 1) -> list[int]:
    """An API caller's choice of layers, heads (or query positions) as sorted, distinct 0-based indices.

    Args:
        value: None or an empty list for all ``count``; else one number or a list of numbers, counted from ``first``.
        name: "Layer", "Head" or "Query position", for the message.
        count: how many the model (or text) has.
        first: what the caller counts from: 1 for layers and heads, 0 for token positions.
    """
    numbers = value if isinstance(value, list | tuple) else [] if value is None else [value]
    if len(numbers) > count:  # no list of distinct ones is longer: refused before each is read
        raise InputError(f"Name at most {count} {name.lower()}s (there are {count}); got {len(numbers):,}.")
    last = first + count - 1
    return sorted({whole_number(number, name, first, last) - first for number in numbers}) or list(range(count))


def page_numbers(value):
    """An explanation dataclass with its 0-based ``layer`` and ``head`` fields counted from 1, as the page does."""
    return dataclasses.replace(value, layer=page_number(value.layer), head=page_number(value.head))


def numbered_heads(num_layers: int, num_heads: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every head, layer by layer, as ((0-based layer, head) for the model, (layer, head) counted from 1)."""
    return [((layer, head), head_number(layer, head)) for layer in range(num_layers) for head in range(num_heads)]


def head_number(layer: int, head: int) -> tuple[int, int]:
    """A head's 0-based (layer, head) as the page counts them."""
    return page_number(layer), page_number(head)


def head_label(layer: int, head: int) -> str:
    """A head's name from its 0-based (layer, head): "L1 H1" for the first."""
    return "L{} H{}".format(*head_number(layer, head))


def head_labels(num_layers: int, num_heads: int) -> list[str]:
    """Every head's name, "L1 H1" ... "L{L} H{H}", layer by layer."""
    return [head_label(layer, head) for layer in range(num_layers) for head in range(num_heads)]


def parse_heads(labels: list[str] | tuple[str, ...], num_layers: int, num_heads: int) -> list[tuple[int, int]]:
    """Head names ("L1 H2", case and spaces free) as sorted, distinct 0-based (layer, head) pairs.

    Args:
        labels: the names a caller sent; at most ``num_layers * num_heads`` of them.
        num_layers, num_heads: the model's, to range-check each name against.

    Returns:
        The named heads, each once, in (layer, head) order.
    """
    if isinstance(labels, str) or not isinstance(labels, list | tuple):
        raise InputError(f'Heads must be a list of names like "L1 H2"; got {quoted(labels)}.')
    # No list of distinct heads is longer, and refusing a longer one first keeps a call's cost to the model's size.
    if len(labels) > (most := num_layers * num_heads):
        raise InputError(f"Name at most {most} heads (the model has {most}); got {len(labels):,} names.")
    heads = set()
    for label in labels:
        match = _HEAD_LABEL.fullmatch(label) if isinstance(label, str) else None
        if match is None:
            raise InputError(f'Name heads like "L1 H2" (layer 1, head 2); got {quoted(label)}.')
        heads.add(
            (
                whole_number(match[1], "The layer in a head name", 1, num_layers) - 1,
                whole_number(match[2], "The head in a head name", 1, num_heads) - 1,
            )
        )
    return sorted(heads)


def class_index(target: str | None, result) -> int:
    """A class name as its index in ``result`` (an ``analysis.Analysis``); None, "" or ``PREDICTED`` mean the class
    the model predicts."""
    if target in (None, "", PREDICTED):
        return int(np.argmax(result.probabilities))
    if target not in result.label_names:
        names = html.escape(", ".join(result.label_names), quote=False)
        raise InputError(f'Choose a target class from {names} (or "{PREDICTED}"); got {quoted(target)}.')
    return result.label_names.index(target)


def pick_position(value, n: int) -> int:
    """``value`` when it is one of n token positions, else 0: a kept choice may outlive its sentence."""
    try:
        return whole_number(value, "position", 0, n - 1)
    except ValueError:
        return 0


def token_choices(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """Dropdown choices for picking a token: ("position token", position); Gradio shows them as plain text."""
    return [(f"{position} {token}", position) for position, token in enumerate(tokens)]


def choice(value: str | None, allowed: Sequence):
    """The allowed choice whose text is ``value`` (choices may be numbers: "2" gives 2), or None."""
    return next((option for option in allowed if str(option) == value), None) if value is not None else None


def choices(value: str | None, allowed: Sequence) -> list | None:
    """A comma-separated list of allowed choices ("" is the empty list), or None if any is not allowed."""
    if value is None:
        return None
    picked = [choice(part.strip(), allowed) for part in value.split(",") if part.strip()]
    return None if None in picked else picked


def number(value: str | None, low: int, high: int) -> int | None:
    """A whole number in [low, high], or None."""
    if value is None:
        return None
    try:
        parsed = int(value)
    except (TypeError, ValueError):
        return None
    return parsed if low <= parsed <= high else None
