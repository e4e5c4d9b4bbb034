"""Keep a folder of files or subfolders bounded: past a count, or a total size, the oldest entries go."""

import os
import shutil
from pathlib import Path


def entry_bytes(entry: Path) -> int:
    """The bytes of a file, or of every file under a folder (an entry removed meanwhile counts 0).

    Args:
        entry: a file or a folder.

    Returns:
        The sum of the files' sizes (``st_size``).
    """
    if not entry.is_dir():
        try:
            return entry.stat().st_size
        except OSError:
            return 0
    total = 0
    for root, _, names in os.walk(entry):
        for name in names:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def _remove(entry: Path) -> None:
    if entry.is_dir():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def prune_oldest(directory: Path, keep: int, max_bytes: int | None = None, last=None) -> None:
    """Remove the oldest entries of ``directory`` (by mtime) until at most ``keep`` remain and, when
    ``max_bytes`` is given, they hold at most that many bytes in all. Another request may be pruning too.

    Args:
        directory: the folder whose direct entries (files or subfolders) are counted and removed.
        keep: the most entries left.
        max_bytes: the most bytes left in all (``entry_bytes``); None for no size bound.
        last: a test ``(entry) -> bool`` of the entries to remove only after every other one; None: none.
    """
    entries = []
    for entry in directory.iterdir():
        try:
            entries.append((bool(last and last(entry)), entry.stat().st_mtime_ns, entry.name, entry))
        except OSError:  # already removed
            continue
    entries.sort()
    excess = max(len(entries) - keep, 0)
    stale, kept = entries[:excess], entries[excess:]
    if max_bytes is not None:
        sizes = [entry_bytes(entry) for *_, entry in kept]
        total, drop = sum(sizes), 0
        while drop < len(kept) and total > max_bytes:
            total -= sizes[drop]
            drop += 1
        stale += kept[:drop]
    for *_, entry in stale:
        _remove(entry)
