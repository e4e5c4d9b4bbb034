"""HTML pieces for the views' ``gr.HTML`` panels and values for ``gr.Label``: every piece of user text escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence

import torch


def probabilities(label_names: Sequence[str], values: torch.Tensor | Sequence[float]) -> dict[str, float]:
    """Class name -> probability, the value ``gr.Label`` shows."""
    return dict(zip(label_names, (float(v) for v in values), strict=True))


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table; every cell is escaped. On a narrow page it scrolls sideways inside itself (``theme._TABLES``),
    so it takes the keyboard's focus (``tabindex="0"``): the arrow keys scroll it, as WCAG asks of a scroll box."""

    def cells(tag: str, values: Sequence[object]) -> str:
        return "".join(f"<{tag}>{html.escape(str(value))}</{tag}>" for value in values)

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return f"<table tabindex='0'><thead><tr>{cells('th', header)}</tr></thead><tbody>{body}</tbody></table>"


def sentence(tokens: Sequence[str]) -> str:
    """Tokens as escaped HTML code, separated by spaces, so each stays visible as the model reads it."""
    return " ".join(f"<code>{html.escape(token)}</code>" for token in tokens)


def change_rows(label_names: Sequence[str], before, after) -> list[list[str]]:
    """One row per class: its name, probability before, after, and the change."""
    return [
        [name, f"{b:.4f}", f"{a:.4f}", f"{a - b:+.4f}"]
        for name, b, a in zip(label_names, map(float, before), map(float, after), strict=True)
    ]
