"""Handing the heap pages that freed memory leaves back to the system (glibc's ``malloc_trim``).

glibc keeps what a thread frees in that thread's arena (Gradio runs handlers on many threads; patching runs its
passes on threads of its own) and gives back to the system only what is freed at the top of a heap. A heavy job's
activations, freed among blocks still in use, would stay resident: the process would sit at its peak after the job,
and the next job's passes, of other sizes, would come on top. So ``batching.in_parallel`` hands them back after each
pass (each of its threads keeps an arena of its own), the explorer's ``runner.run_view`` after every view job, and
its sessions sweep after sessions go.
"""

import ctypes
import ctypes.util


def _libc_malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library is not glibc (macOS, musl)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _libc_malloc_trim()


def return_freed_memory() -> bool:
    """Give the free pages of every arena back to the system; True where the C library can."""
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True
