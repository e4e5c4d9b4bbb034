"""Shared links on disk (transformer.explorer.serving.link_store): the size cap counts bytes, and a link shared again
becomes the newest, last to be pruned."""

import os
from collections import OrderedDict

import pytest

from transformer.explorer.analysis import InputError
from transformer.explorer.serving import link_store


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    monkeypatch.setattr(link_store, "OPENED", OrderedDict())
    return tmp_path


def test_the_cap_counts_utf8_bytes_not_characters(store):
    two_byte = "é" * (link_store.MAX_LINK_BYTES // 2 + 16)  # fewer characters than the cap, more bytes
    assert len(two_byte) < link_store.MAX_LINK_BYTES < len(two_byte.encode())
    with pytest.raises(InputError, match="at most"):
        link_store.save_link({"text": two_byte})
    assert not list(store.iterdir())
    one_byte = "e" * (link_store.MAX_LINK_BYTES - 64)  # the same room in ASCII fits
    assert link_store.load_link(link_store.save_link({"text": one_byte})) == {"text": one_byte}


def test_a_link_shared_again_is_the_newest_and_outlives_a_newer_one(store, monkeypatch):
    monkeypatch.setattr(link_store, "MAX_LINKS", 2)
    first = link_store.save_link({"text": "first"})
    second = link_store.save_link({"text": "second"})
    os.utime(store / f"{first}.json", (1_000, 1_000))  # the oldest by far ...
    os.utime(store / f"{second}.json", (2_000, 2_000))
    assert link_store.save_link({"text": "first"}) == first  # ... until shared again
    assert (store / f"{first}.json").stat().st_mtime > 2_000
    link_store.save_link({"text": "third"})  # one past the cap: the oldest goes
    assert link_store.load_link(first) == {"text": "first"}
    assert link_store.load_link(second) is None
