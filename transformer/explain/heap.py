"""Handing the heap pages that freed memory leaves back to the system (glibc's ``malloc_trim``).

glibc keeps what a thread frees in that thread's arena (Gradio runs handlers on many threads; patching runs its
passes on threads of its own) and gives back to the system only what is freed at the top of a heap. A heavy job's
activations, freed among blocks still in use, would stay resident: the process would sit at its peak after the job,
and the next job's passes, of other sizes, would come on top. So ``batching.in_parallel`` hands them back after each
pass (each of its threads keeps an arena of its own), the explorer's ``runner.run_view`` after every view job, and
its sessions sweep after sessions go. ``libc_function`` finds a function of the C library (``malloc_trim`` here,
``prctl`` for ``explorer.thread_names``).
"""

import ctypes
import ctypes.util


def libc_function(name: str):
    """The C library's function ``name``, or None where that library has none (``malloc_trim`` is glibc's alone:
    not on macOS or musl)."""
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = libc_function("malloc_trim")


def return_freed_memory() -> bool:
    """Give the free pages of every arena back to the system; True where the C library can."""
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True
