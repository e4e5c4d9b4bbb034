"""Freed memory handed back to the system by glibc's ``malloc_trim`` (``heap``)."""

import os
from pathlib import Path

import pytest

from transformer.explain import heap


def resident_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(heap.MALLOC_TRIM is None or not Path("/proc/self/statm").exists(), reason="glibc on Linux")
def test_freed_memory_goes_back_to_the_system():
    blocks = [bytes(4000) + bytes([i % 256]) for i in range(50_000)]  # 200 MB of malloc'd (not pymalloc) objects
    kept = blocks[::16]  # a few stay alive across the heap, as a live session's would, so it cannot just shrink
    del blocks
    freed = resident_mb()
    assert heap.return_freed_memory()
    assert freed - resident_mb() > 100  # about 190 MB were free but still resident
    assert len(kept) == 3125
