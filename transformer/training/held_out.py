"""Half of every word list that fills a slot (identity terms, names, places) is held out of training.

A model that reads "I am gay." as 0.5 because training named "gay" has learnt a word; one that reads a term it
never saw as 0.5 has learnt that the slot carries no opinion. To tell the two apart, each list is split in two:
the **training half** fills the training rewrites (``identity.py``, ``neutral.py``, ``nuisance.py`` and the
counterfactual pairing, ``pairing.py``) and the **evaluation half** only the held-out probe (``probe.py``).

The rule: within one list, the words sorted by the SHA-256 of their lowercase form alternate between the halves,
the first to training. Sorting by hash makes the split independent of the list's order, and alternating keeps the
halves within one word of each other, so a group of six terms keeps three a side.
"""

import hashlib
from collections.abc import Sequence


def _digest(word: str) -> str:
    return hashlib.sha256(word.lower().encode("utf-8")).hexdigest()


def halves(words: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(training half, evaluation half)`` of ``words`` by the module's rule, each in the list's own order."""
    rank = {word: i for i, word in enumerate(sorted(words, key=_digest))}
    return tuple(w for w in words if rank[w] % 2 == 0), tuple(w for w in words if rank[w] % 2 == 1)


def split_groups(groups: dict[str, Sequence[str]]) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Each group of ``groups`` split by ``halves``: ``(training halves, evaluation halves)``, keyed as given."""
    split = {group: halves(words) for group, words in groups.items()}
    return {g: pair[0] for g, pair in split.items()}, {g: pair[1] for g, pair in split.items()}
