"""Read one sentence with the classifier: the model-side logic behind every view and API endpoint.

The text is tokenized once (keeping each token's character span in the typed text), cut to the
model's ``max_len`` with a notice, and run through the model once with ``output_attentions``.
Everything the views need is kept in an ``Analysis``, so changing layer or head redraws from it
without another model call.

Shape letters: L = layers, H = heads, N = tokens read, C = classes, D = d_model.
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..loading import DEFAULT_MODEL_DIR
from ..tokenizer import UNK_TOKEN

MAX_INPUT_CHARS = 10_000
PAYLOAD_DECIMALS = 4
MAX_UNKNOWN_SHOWN = 5  # unknown pieces named in the notice; the token view marks every one
MAX_PIECE_CHARS = 20  # an unknown piece longer than this is shortened in the notice


class InputError(ValueError):
    """Text the explorer cannot analyse; the message is written for the person who sent it."""


class EmptyInputError(InputError):
    """Blank text, or text in which the tokenizer finds no token."""


class InputTooLongError(InputError):
    """Text over ``MAX_INPUT_CHARS`` characters."""


@dataclass(frozen=True)
class Analysis:
    """What the model made of one text; plain data (lists, one float32 array), safe to keep in ``gr.State``.

    Attributes:
        text: the text as typed.
        tokens: the N tokens the model read (after truncation).
        token_ids: their vocabulary ids.
        offsets: each token's (start, end) character span in ``text``.
        total_tokens: how many tokens the whole text has; more than N when it was truncated.
        max_len: the model's longest input.
        label_names: the C class names.
        probabilities: the C class probabilities.
        attentions: every layer's and head's weights, (L, H, N, N): queries on rows, keys on columns.
    """

    text: str
    tokens: list[str]
    token_ids: list[int]
    offsets: list[tuple[int, int]]
    total_tokens: int
    max_len: int
    label_names: list[str]
    probabilities: list[float]
    attentions: np.ndarray

    @property
    def truncated(self) -> bool:
        """True when the text had more tokens than the model reads."""
        return self.total_tokens > len(self.tokens)

    @property
    def unknown(self) -> list[str]:
        """The typed pieces the model read as ``[UNK]`` (emoji, letters of other scripts), in order, each once."""
        spans = zip(self.tokens, self.offsets, strict=True)
        pieces = (self.text[start:end] for token, (start, end) in spans if token == UNK_TOKEN)
        return list(dict.fromkeys(piece for piece in pieces if piece))

    @property
    def notice(self) -> str | None:
        """Markdown telling the reader what the model did not read (a cut text, unknown pieces), or None."""
        sentences = []
        if self.truncated:
            kept_chars = self.offsets[-1][1]
            sentences.append(
                f"This text has {self.total_tokens} tokens but the model reads at most {self.max_len}: "
                f"only the first {len(self.tokens)} tokens (the first {kept_chars} of {len(self.text)} characters) "
                "were analysed."
            )
        if unknown := self.unknown:
            shown = ", ".join(_code_span(piece) for piece in unknown[:MAX_UNKNOWN_SHOWN])
            more = f" and {len(unknown) - MAX_UNKNOWN_SHOWN} more" if len(unknown) > MAX_UNKNOWN_SHOWN else ""
            one = len(unknown) == 1
            sentences.append(
                f"The model's vocabulary has no token for {shown}{more}: {'it was' if one else 'each was'} read "
                f"as `{UNK_TOKEN}`, the one placeholder for anything unknown, so {'its' if one else 'their'} "
                "meaning is lost."
            )
        return " ".join(sentences) or None

    @property
    def prediction(self) -> dict[str, float]:
        """Class name -> probability, the value ``gr.Label`` shows."""
        return dict(zip(self.label_names, self.probabilities, strict=True))


def _code_span(piece: str) -> str:
    """``piece`` as a Markdown code span, so that typed text shows as typed: shortened, backticks shown as quotes."""
    if len(piece) > MAX_PIECE_CHARS:
        piece = piece[: MAX_PIECE_CHARS - 1] + "…"
    return "`" + piece.replace("`", "'") + "`"


def check_text(text: str | None) -> str:
    """Return ``text`` if it can be analysed, else raise an ``InputError``: blank, too long, or not a string."""
    text = text or ""
    if not isinstance(text, str):  # API callers can send any JSON
        raise InputError(f"The text must be a string, not {type(text).__name__}.")
    if len(text) > MAX_INPUT_CHARS:
        raise InputTooLongError(
            f"The text has {len(text):,} characters; the explorer accepts at most {MAX_INPUT_CHARS:,}. "
            "Send a shorter text."
        )
    if not text.strip():
        raise EmptyInputError("Type a sentence to see how the model reads it.")
    return text


def analyze(model: torch.nn.Module, tokenizer, text: str | None) -> Analysis:
    """Tokenize ``text`` once, truncate it to ``model.max_len`` and run the model once.

    Args:
        model: a ``TransformerClassifier`` in eval mode.
        tokenizer: a ``tokenizers.Tokenizer`` whose ``encode`` maps tokens back to the raw text (offsets).
        text: the text as typed.

    Raises:
        EmptyInputError: blank text, or no token found in it.
        InputTooLongError: more than ``MAX_INPUT_CHARS`` characters.
    """
    text = check_text(text)
    encoding = tokenizer.encode(text)
    total = len(encoding.ids)
    if total == 0:
        raise EmptyInputError("The tokenizer found no token in this text. Type a sentence with some words in it.")
    n = min(total, model.max_len)
    device = next(model.parameters()).device
    input_ids = torch.tensor([encoding.ids[:n]], device=device)  # (1, N)
    with torch.inference_mode():
        logits, attentions = model(input_ids, output_attentions=True)  # (1, C), L x (1, H, N, N)
    probabilities = logits[0].float().softmax(dim=-1)  # (C,)
    weights = torch.cat(attentions).float()  # (L, H, N, N): the batch of one becomes the layer axis
    return Analysis(
        text=text,
        tokens=list(encoding.tokens[:n]),
        token_ids=list(encoding.ids[:n]),
        offsets=[tuple(span) for span in encoding.offsets[:n]],
        total_tokens=total,
        max_len=model.max_len,
        label_names=list(model.label_names),
        probabilities=probabilities.tolist(),
        attentions=weights.cpu().numpy(),
    )


def attention_matrix(result: Analysis, layer: int, head: int | None = None) -> np.ndarray:
    """One layer's weights, (N, N): one head (0-based) or, with ``head=None``, the mean over heads."""
    weights = result.attentions[layer]  # (H, N, N)
    return weights.mean(axis=0) if head is None else weights[head]


def text_pieces(text: str, offsets: list[tuple[int, int]]) -> list[tuple[str, int | None]]:
    """The typed text cut at token boundaries: (piece, token position) pairs, in order.

    Every character appears exactly once. A token's piece is its span of ``text``; text between
    tokens and text after the last one (cut by truncation) have position None. Where the normaliser
    made several tokens of one character ("…" is read as three "." tokens, all with its span), the
    character goes to the first of them and the others get no piece.
    """
    pieces: list[tuple[str, int | None]] = []
    cursor = 0
    for position, (start, end) in enumerate(offsets):
        if start > cursor:
            pieces.append((text[cursor:start], None))
        start = max(start, cursor)
        if end > start:
            pieces.append((text[start:end], position))
        cursor = max(cursor, end)
    if cursor < len(text):
        pieces.append((text[cursor:], None))
    return pieces


def token_spans(result: Analysis) -> list[tuple[str, str | None]]:
    """The text the model read cut into (piece, category) pairs for ``gr.HighlightedText`` (see ``text_pieces``).

    A token's category is its position, with the token itself when it differs from the piece
    (e.g. ``[UNK]`` or a lower-cased word); text between tokens has category None. A truncated text's unread
    rest is one marker, "… 1,843 more words not read" (``unread_marker``), not the rest itself: that could be
    thousands of words the model never saw, and it would flood the page.
    """
    read = result.offsets[-1][1] if result.truncated else len(result.text)
    spans: list[tuple[str, str | None]] = []
    for piece, position in text_pieces(result.text[:read], result.offsets):
        if position is None:
            spans.append((piece, None))
            continue
        token = result.tokens[position]
        spans.append((piece, str(position) if token.casefold() == piece.casefold() else f"{position} {token}"))
    if result.truncated:
        spans.append((unread_marker(result.text[read:]), None))
    return spans


def unread_marker(rest: str) -> str:
    """The token view's one line for a truncated text's unread ``rest``, counted in whole words.

    The cut can fall inside a word (the model read "mo" of "movie"): its unread tail counts as one word.
    """
    words = len(rest.split())
    if not words:  # the cut fell inside one character read as several tokens ("…" is three ".")
        return " … the rest was not read"
    return f" … {words:,} more {'word' if words == 1 else 'words'} not read"


def label_payload(result: Analysis) -> dict:
    """The ``/predict`` answer, in ``gr.Label``'s format: {"label", "confidences": [{"label", "confidence"}]}."""
    ranked = sorted(result.prediction.items(), key=lambda item: item[1], reverse=True)
    return {
        "label": ranked[0][0],
        "confidences": [{"label": name, "confidence": round(p, PAYLOAD_DECIMALS)} for name, p in ranked],
    }


def attention_payload(result: Analysis) -> dict:
    """The ``/attention`` answer: tokens and weights as nested lists [layer][head][query][key], rounded."""
    return {
        "tokens": result.tokens,
        "offsets": [list(span) for span in result.offsets],
        "truncated": result.truncated,
        # float64 before rounding: a rounded float32 prints as 0.12280000001192093 in JSON
        "attentions": np.round(result.attentions.astype(np.float64), PAYLOAD_DECIMALS).tolist(),
    }


def positional_table(model: torch.nn.Module) -> np.ndarray:
    """The model's own sinusoidal table, (max_len, D), as the model adds it to the token embeddings."""
    return model.positional_encoding.pe[0].float().cpu().numpy()  # (1, max_len, D) -> (max_len, D)


def model_source(source: str) -> str:
    """How the page names a model's source: the bundled model by its place in the repository, others as given.

    The server's own folders stay off the page: "bundled assets/model", not an absolute path.
    """
    path = Path(source)
    if not path.is_dir():
        return str(source)  # a Hub repo id
    resolved, bundled = path.resolve(), DEFAULT_MODEL_DIR.resolve()
    repository = bundled.parent.parent
    if resolved == bundled:
        return f"bundled {bundled.relative_to(repository).as_posix()}"
    return resolved.relative_to(repository).as_posix() if resolved.is_relative_to(repository) else str(source)


def model_status(loaded, note: str | None = None) -> str:
    """One Markdown line for the page: source, revision, device, parameter count and mean dev accuracy.

    Args:
        loaded: a ``transformer.loading.LoadedModel``.
        note: why the app is not on the model it was asked for, if so.
    """
    parameter_count = sum(p.numel() for p in loaded.model.parameters())
    dev = (loaded.metrics or {}).get("dev", {})
    accuracy = dev.get("mean")  # the selection score of transformer.train
    sets = [name for name in dev if name != "mean"]
    parts = [
        f"**Model** {html.escape(model_source(loaded.source))}",
        f"revision {html.escape(loaded.revision or ('local folder' if Path(loaded.source).is_dir() else 'main'))}",
        f"device {html.escape(str(loaded.device))}",
        f"{parameter_count:,} parameters",
        "mean dev accuracy n/a"
        if accuracy is None
        else f"mean accuracy over its {len(sets)} dev sets ({html.escape(', '.join(sets))}) {accuracy:.1%}",
    ]
    line = " · ".join(parts)
    return line if note is None else f"{line}  \n⚠️ {html.escape(note)}"


def sentence_ids(model: torch.nn.Module, result: Analysis) -> torch.Tensor:
    """The tokens the model read, as its input on its device: (1, N)."""
    return torch.tensor([result.token_ids], device=next(model.parameters()).device)


def model_attentions(result: Analysis) -> tuple[torch.Tensor, ...]:
    """The analysis's weights in the model's output format: L tensors of (1, H, N, N)."""
    return torch.from_numpy(result.attentions).unsqueeze(1).unbind(0)  # (L, H, N, N) -> L x (1, H, N, N)


def on_cpu(value):
    """A dataclass with each of its tensor fields moved to the CPU (views are kept and sent, never computed on)."""
    fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return dataclasses.replace(value, **{k: v.cpu() for k, v in fields.items() if isinstance(v, torch.Tensor)})
