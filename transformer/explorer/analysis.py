"""Read one sentence with the classifier: the ``Analysis`` record every view and API endpoint reads.

The text is tokenized once (keeping each token's character span in the typed text), cut to the
model's ``max_len`` with a notice, and run through the model once with ``output_attentions``.
Everything the views need is kept in an ``Analysis``, so changing layer or head redraws from it
without another model call.

Shape letters: L = layers, H = heads, N = tokens read, C = classes, D = d_model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..explain.attention_norms import value_norms_of_run
from ..interface import Classifier
from ..tokenizer import UNK_TOKEN
from .inputs import InputError

MAX_INPUT_CHARS = 10_000
MAX_UNKNOWN_SHOWN = 5  # unknown pieces named in the notice; the token view marks every one
MAX_PIECE_CHARS = 20  # an unknown piece longer than this is shortened in the notice
# The two likeliest classes closer than this read as no clear opinion: for two classes, P within 0.1 of 0.5
# (0.40 to 0.60), where the bundled model's neutral sentences about people fall (tests/model/test_bundled_model.py).
NO_OPINION_MARGIN = 0.2
NO_OPINION = "No clear opinion"


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
        value_norms: ‖f(x_j)‖, how long what each head moves from each key is, (L, H, N) (``explain.attention_norms``),
            so that the attention views redraw weight × ‖f(x_j)‖ without the model.
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
    value_norms: np.ndarray

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
                f"The model reads at most {self.max_len} tokens: only the first {len(self.tokens)} of "
                f"{self.total_tokens} (the first {kept_chars:,} of {len(self.text):,} characters) were analyzed."
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

    @property
    def clear(self) -> bool:
        """Whether the model leans one way: its two likeliest classes at least ``NO_OPINION_MARGIN`` apart."""
        top, second = sorted(self.probabilities, reverse=True)[:2]
        return top - second >= NO_OPINION_MARGIN


def _code_span(piece: str) -> str:
    """``piece`` as a Markdown code span, so that typed text shows as typed: shortened, backticks shown as quotes."""
    if len(piece) > MAX_PIECE_CHARS:
        piece = piece[: MAX_PIECE_CHARS - 1] + "…"
    return "`" + piece.replace("`", "'") + "`"


def check_text(text: str | None) -> str:
    """Return ``text`` if it can be analyzed, else raise an ``InputError``: blank, too long, or not a string."""
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


def read_tokens(model: Classifier, tokenizer, text: str | None) -> tuple:
    """``text`` tokenized without running the model: (its ``tokenizers.Encoding``, N: how many of its tokens the
    model reads), with ``analyze``'s errors.

    Raises:
        EmptyInputError: blank text, or no token found in it.
        InputTooLongError: more than ``MAX_INPUT_CHARS`` characters.
    """
    encoding = tokenizer.encode(check_text(text))
    if not encoding.ids:
        raise EmptyInputError("The tokenizer found no token in this text. Type a sentence with some words in it.")
    return encoding, min(len(encoding.ids), model.max_len)


def analyze(model: Classifier, tokenizer, text: str | None) -> Analysis:
    """Tokenize ``text`` once, truncate it to ``model.max_len`` and run the model once.

    Args:
        model: a ``Classifier`` in eval mode.
        tokenizer: a ``tokenizers.Tokenizer`` whose ``encode`` maps tokens back to the raw text (offsets).
        text: the text as typed.

    Raises:
        EmptyInputError: blank text, or no token found in it.
        InputTooLongError: more than ``MAX_INPUT_CHARS`` characters.
    """
    text = check_text(text)
    encoding, n = read_tokens(model, tokenizer, text)
    total = len(encoding.ids)
    device = next(model.parameters()).device
    input_ids = torch.tensor([encoding.ids[:n]], device=device)  # (1, N)
    with torch.inference_mode(), value_norms_of_run(model) as value_norms:
        logits, attentions = model(input_ids, output_attentions=True)  # (1, C), L x (1, H, N, N)
        norms = value_norms()  # (L, H, N)
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
        value_norms=norms.float().cpu().numpy(),
    )


def attention_matrix(result: Analysis, layer: int, head: int | None = None) -> np.ndarray:
    """One layer's weights, (N, N): one head (0-based) or, with ``head=None``, the mean over heads."""
    weights = result.attentions[layer]  # (H, N, N)
    return weights.mean(axis=0) if head is None else weights[head]


def positional_table(model: Classifier) -> np.ndarray:
    """The model's own position table, (max_len, D), as it adds it to the token embeddings: the tutorial's
    sinusoids, or a Hub model's learned position embeddings."""
    return model.position_table().detach().float().cpu().numpy()


def sentence_ids(model: Classifier, result: Analysis) -> torch.Tensor:
    """The tokens the model read, as its input on its device: (1, N)."""
    return torch.tensor([result.token_ids], device=next(model.parameters()).device)


def model_attentions(result: Analysis) -> tuple[torch.Tensor, ...]:
    """The analysis's weights in the model's output format: L tensors of (1, H, N, N)."""
    return torch.from_numpy(result.attentions).unsqueeze(1).unbind(0)  # (L, H, N, N) -> L x (1, H, N, N)
