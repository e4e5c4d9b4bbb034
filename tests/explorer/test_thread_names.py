"""A thread's name as the system shows it: set inside ``thread_named``, the one before it afterwards, cut to what
the kernel keeps; nothing where the C library cannot name threads."""

from pathlib import Path

import pytest

from transformer.explorer import thread_names

SELF = Path("/proc/thread-self/comm")
pytestmark = pytest.mark.skipif(not SELF.exists() or thread_names.PRCTL is None, reason="Linux names threads")


def system_name() -> str:
    return SELF.read_text().rstrip("\n")


def test_the_name_holds_inside_and_the_one_before_comes_back_after():
    before = system_name()
    with thread_names.thread_named("model job"):
        assert system_name() == "model job"
        with thread_names.thread_named("light job"):
            assert system_name() == "light job"
        assert system_name() == "model job"
    assert system_name() == before


def test_a_long_name_is_cut_to_what_the_kernel_keeps_and_still_restored():
    before = system_name()
    with thread_names.thread_named("a name of more than fifteen bytes"):
        assert system_name() == "a name of more "
    assert system_name() == before


def test_without_prctl_nothing_is_named(monkeypatch):
    before = system_name()
    monkeypatch.setattr(thread_names, "PRCTL", None)
    with thread_names.thread_named("model job"):
        assert system_name() == before
