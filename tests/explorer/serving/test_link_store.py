"""Shared links on disk (transformer.explorer.serving.link_store): the size cap counts bytes, a text holds what the page
takes, and a link shared again becomes the newest, last to be pruned."""

import os
from collections import OrderedDict

import pytest

from transformer.explorer.analysis import MAX_INPUT_CHARS, InputError
from transformer.explorer.serving import link_store


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    monkeypatch.setattr(link_store, "OPENED", OrderedDict())
    return tmp_path


def test_the_cap_counts_utf8_bytes_not_characters(store):
    four_byte = "\U0001f3ac" * 9_000  # within the page's characters, two of them over the bytes
    with pytest.raises(InputError, match="at most"):
        link_store.save_link({"text": four_byte, "text_b": four_byte})
    assert not list(store.iterdir())
    three = {name: "e" * MAX_INPUT_CHARS for name in ("text", "text_b", "reordered")}  # in ASCII, three texts fit
    assert link_store.load_link(link_store.save_link(three)) == three


def test_a_text_longer_than_the_page_takes_is_refused_saying_so(store):
    with pytest.raises(InputError, match=f"65,000 characters; the page takes at most {MAX_INPUT_CHARS:,}"):
        link_store.save_link({"text": "e" * 65_000})
    assert not list(store.iterdir())


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
