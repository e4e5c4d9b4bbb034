"""Keep a folder of files or subfolders bounded: past a count, the oldest entries go."""

import shutil
from pathlib import Path


def prune_oldest(directory: Path, keep: int) -> None:
    """Remove all but the ``keep`` newest entries of ``directory`` (another request may be pruning too)."""
    entries = []
    for entry in directory.iterdir():
        try:
            entries.append((entry.stat().st_mtime_ns, entry.name, entry))
        except OSError:  # already removed
            continue
    for _, _, stale in sorted(entries)[: max(len(entries) - keep, 0)]:
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)
