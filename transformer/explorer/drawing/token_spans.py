"""The Tokens panel: the typed text cut at token boundaries, for ``gr.HighlightedText``."""

from __future__ import annotations

from ..analysis import Analysis


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
