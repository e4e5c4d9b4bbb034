"""The Errors tab and ``/errors`` for a model without errors.json: the list computed on first open (with a progress
bar) or first call when the data folder is at hand, the one ``python -m transformer.artifacts`` writes, once, into
the cache folder, never the model folder; the filters' choices then follow it; without a data folder, how to make
one and nothing computed; and in Chromium, the first open draws the computed list and its sets."""

import inspect
import json
import os
import types
from pathlib import Path

import gradio as gr
import pytest
import torch
from conftest import without_artifact

from transformer.explain.layer_readout import committed_stage, layer_readout
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.corpus.on_demand import RUN
from transformer.explorer.views import errors as view

ANY = ("all", "all", "")  # every set and true label, no search
SETS_SHOWN = """() => [...document.querySelectorAll('#errors-table .virtual-row')]
    .map((row) => row.querySelector('[role=gridcell]')?.innerText.trim()).filter(Boolean)"""


@pytest.fixture
def fresh_errors(app, tmp_path, monkeypatch):
    """The app's model folder with no error list kept, stored or read yet, and a cache folder of this test's own."""
    with without_artifact(view.ERRORS, app.get_model()[0].folder, tmp_path / "cache", monkeypatch) as folder:
        yield folder


@pytest.fixture
def data_folder(tiny_data_dir, monkeypatch):
    """The tiny data folder as the explorer's (``SENTIMENT_DATA_DIR``)."""
    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    return tiny_data_dir


def listing(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_first_open_computes_the_list_the_command_writes_into_the_cache(fresh_errors, data_folder, loaded):
    before = listing(fresh_errors)
    summary, rows, sets, labels, needed = view.show_errors(*ANY)  # the tab's draw
    assert "computing it" in summary and rows is None and needed.split()[0] == RUN
    assert sets == labels == gr.update() and view.ERRORS.current() is None  # the draw computes nothing; values kept
    assert view.compute_and_show("", *ANY) == (gr.skip(),) * 5  # the hidden box cleared: nothing runs
    summary, rows, sets, labels, needed = view.compute_and_show(needed, *ANY)  # its change to the request, with the bar
    sha = artifacts.model_hash(fresh_errors)
    expected = artifacts.build_errors(loaded.model, loaded.tokenizer, corpus.dev_sets(data_folder), sha)
    assert view.ERRORS.current() == expected and expected["errors"] and needed == ""
    stages = [view.stage_name(decided_stage(loaded, e["text"])) for e in expected["errors"]]
    assert [[e["set"], e["label"], e["predicted"], e["confidence"], stage, e["text"]]
            for e, stage in zip(expected["errors"], stages, strict=True)] == rows  # fmt: skip
    assert "Wrong predictions: sst2" in summary and f"{len(rows)} match" in summary
    assert sets == gr.update(choices=["all", *corpus.DEV_SETS])  # the values as sent: left out (kept_control)
    assert labels == gr.update(choices=["all", *loaded.model.label_names])
    assert view.show_errors("yelp", "positive", "")[1] == [r for r in rows if r[:2] == ["yelp", "positive"]]
    assert listing(fresh_errors) == before  # nothing written next to the model
    cached = artifacts.cache_folder(sha) / artifacts.ERRORS_FILE
    assert cached.parent == Path(os.environ[artifacts.CACHE_VARIABLE]) / sha
    view.ERRORS.forget()  # a restart reads the cache
    assert json.loads(cached.read_text(encoding="utf-8")) == view.ERRORS.current() == expected


def decided_stage(loaded, text: str) -> int:
    """The committed stage of one sentence, computed here: the layer readout's own."""
    ids = torch.tensor([loaded.tokenizer.encode(text).ids])  # (1, N)
    return committed_stage(layer_readout(loaded.model, ids))


def test_the_late_flips_filter_keeps_the_errors_decided_at_the_last_layer_only(
    fresh_errors, data_folder, loaded, monkeypatch
):
    every = view.compute_and_show(RUN, *ANY)[1]
    layers = loaded.model.num_layers
    assert {row[4] for row in every} == {"embeddings"}  # the tiny model decides every one after the embeddings
    assert view.show_errors(*ANY, view.LATE)[1] == []
    sha = view.ERRORS.current()["model_sha256"]
    monkeypatch.setitem(view.DECIDED, (sha, every[1][-1]), layers)  # as if its class flipped at the last layer
    monkeypatch.setitem(view.DECIDED, (sha, every[2][-1]), layers - 1)
    late = view.show_errors(*ANY, view.LATE)[1]
    assert late == [[*every[1][:4], f"layer {layers}", every[1][-1]]]
    assert view.show_errors(*ANY)[1][2][4] == f"layer {layers - 1}"


def test_the_list_is_computed_once(fresh_errors, data_folder, forward_calls):
    first = view.compute_and_show(RUN, *ANY)
    ran = len(forward_calls)
    assert ran > 0 and view.compute_and_show(RUN, *ANY)[1] == first[1]
    assert view.errors(limit=5000)["errors"] == view.ERRORS.current()["errors"]
    view.ERRORS.forget()
    view.compute_and_show(RUN, *ANY)  # after a restart: the cached list
    assert len(forward_calls) == ran and view.show_errors(*ANY)[4] == ""


def test_without_a_data_folder_the_tab_says_how_to_make_the_list(fresh_errors, forward_calls):
    summary, rows, _, _, needed = view.show_errors(*ANY)
    assert "Make one with <code>python -m transformer.artifacts" in summary and rows is None and needed == ""
    assert view.errors()["note"] == "No error list ships with this model (errors.json)."
    with pytest.raises(gr.Error, match="No data folder here"):
        view.compute_and_show(RUN, *ANY)  # the hidden event, which anyone can post
    assert view.ERRORS.current() is None and forward_calls == []
    assert not Path(os.environ[artifacts.CACHE_VARIABLE]).exists()  # no cache folder made


def test_the_endpoint_computes_the_list_on_first_call(fresh_errors, data_folder, forward_calls):
    answer = view.errors(set="yelp", limit=5000)
    assert forward_calls and "note" not in answer and set(answer["sets"]) == set(corpus.DEV_SETS)
    assert answer["errors"] == [e for e in view.ERRORS.current()["errors"] if e["set"] == "yelp"]
    sha = artifacts.model_hash(fresh_errors)
    assert (artifacts.cache_folder(sha) / artifacts.ERRORS_FILE).is_file()


def test_the_first_open_shows_a_progress_bar_and_ends_drawn(app):
    """The hidden box's change computes with ``gr.Progress(track_tqdm=True)`` and draws the filters' choices too."""
    (found,) = [
        fn
        for fn in app.demo.fns.values()
        if fn.name == "compute_and_show" and view.VIEW.id in inspect.unwrap(fn.fn).args
    ]
    assert found.tracks_progress and found.api_visibility == "private" and found.queue
    assert [block.elem_id for block in found.outputs] == [
        "errors-summary",
        "errors-table",
        "errors-set",
        "errors-label",
        "errors-needed",
        None,  # the tab's failure line (tests/explorer/page/test_app.py)
        None,  # its view's address stamp, renewed by its answer: the address follows (events.address_after_draws)
        "errors-cancel",  # hidden by its answer
        None,  # whether its answer is still to come (a Cancel click reads it: draws.ViewDraws.running)
    ]


def test_the_filters_are_in_the_address_and_a_link_opens_them(app, fresh_errors, data_folder):
    """Issue 53: the set, true label and search were in neither the address nor Copy link: a link opened on every
    row. They are address parameters of the tab, restored by the page load; a value not allowed is said."""
    parts = next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")
    drawing = parts.drawings[view.VIEW.id]
    names = ("errors_set", "errors_label", "errors_search", "errors_decided")
    assert set(drawing.controls) == set(names) and set(names) <= set(parts.registry.url_params)
    link = {"view": "errors", "errors_set": "yelp", "errors_label": "negative", "errors_search": "slow"}
    link |= {"errors_decided": "late flips only"}
    values = parts.restore_page(types.SimpleNamespace(query_params=link))
    restored = [values[drawing.controls[name]] for name in names]
    assert [value["value"] if isinstance(value, dict) else value for value in restored] == [
        "yelp",
        "negative",
        "slow",
        "late flips only",
    ]
    read = parts.registry.readers
    assert read["errors_set"]("nonsense", None) is None and read["errors_set"]("all", None) == "all"


@pytest.mark.served
@pytest.mark.browser  # ``page`` (tests/conftest.py) skips where Chromium is missing
@pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated")  # gradio's queue and pandas 3
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_in_the_page_the_first_open_computes_the_list_and_the_set_filter_offers_its_sets(
    fresh_errors, data_folder, page, url
):
    page.goto(f"{url}?view=errors")
    page.wait_for_function("() => document.querySelector('#errors-summary')?.textContent.includes('Wrong predictions')")
    assert view.ERRORS.current() is not None
    wrong = {e["set"] for e in view.ERRORS.current()["errors"]}
    picked = next(name for name in corpus.DEV_SETS if name in wrong)
    page.locator("#errors-set").get_by_role("combobox").click()
    page.get_by_role("option", name=picked, exact=True).click()  # a choice the page did not start with
    page.wait_for_function(f"(s) => ({SETS_SHOWN})().length && ({SETS_SHOWN})().every((n) => n === s)", arg=picked)
