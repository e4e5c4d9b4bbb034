"""The name the system shows for the thread that runs a job (``runner.one_job``; ``top -H``,
``/proc/<pid>/task/<tid>/comm``), so an operator, and ``make attack``, can tell the threads that run jobs from
Gradio's and the server's own, which may be runnable at the same moment (Gradio copies its page configuration on a
worker thread for each ``/config``).

Linux's ``prctl(PR_SET_NAME)`` through the C library; where the C library has no ``prctl`` (macOS) nothing is named.
The app never reads the names.
"""

from __future__ import annotations

import contextlib
import ctypes

from ..explain.heap import libc_function

PR_SET_NAME, PR_GET_NAME = 15, 16  # linux/prctl.h
NAME_BYTES = 16  # the kernel keeps 15 bytes and a NUL


PRCTL = libc_function("prctl")


@contextlib.contextmanager
def thread_named(name: str):
    """Inside it, the calling thread's name as the system shows it is ``name`` (its first 15 bytes); after, the name
    it had."""
    if PRCTL is None:
        yield
        return
    before = ctypes.create_string_buffer(NAME_BYTES)
    PRCTL(PR_GET_NAME, before, 0, 0, 0)
    PRCTL(PR_SET_NAME, name.encode()[: NAME_BYTES - 1], 0, 0, 0)
    try:
        yield
    finally:
        PRCTL(PR_SET_NAME, before.value, 0, 0, 0)
