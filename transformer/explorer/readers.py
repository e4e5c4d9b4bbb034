"""Reading the explorer's view back from its page address, where every value is untrusted.

Each reader returns the value when the page offers it, else None, which the app reads as "keep
what is on the page".
"""

from collections.abc import Sequence


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
    try:
        parsed = int(value)
    except (TypeError, ValueError):
        return None
    return parsed if low <= parsed <= high else None
