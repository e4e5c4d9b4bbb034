"""The Export tab's files on a public server: built when a button is clicked, written inside Gradio's cache, held
to a byte cap, never copied."""

import os
import time
from pathlib import Path

import gradio as gr
import httpx
import pytest
from app_fixtures import serving
from fuzz_helpers import QueueCaller

from transformer.explorer import analysis
from transformer.explorer.jsonable import analysis_to_json
from transformer.explorer.registry import Page
from transformer.explorer.serving import export_files
from transformer.explorer.serving.export_files import export_dir, write_export
from transformer.explorer.serving.pruning import entry_bytes, prune_oldest
from transformer.explorer.views import export


def age(path: Path, seconds: float) -> None:
    """Date an export's folder ``seconds`` back: file times are coarse, so tests order them explicitly."""
    then = time.time() - seconds
    os.utime(path.parent, (then, then))


def all_files(root: Path) -> dict[Path, int]:
    """Every file under ``root`` and its size."""
    return {path: path.stat().st_size for path in root.rglob("*") if path.is_file()}


def test_many_distinct_exports_keep_the_folder_under_the_cap_and_the_newest(tmp_path, monkeypatch):
    monkeypatch.setattr(export_files, "MAX_EXPORT_BYTES", 10_000)
    written = []
    for i in range(40):
        content = f"{i:04d}" + "x" * 996  # 1,000 bytes, each distinct
        path = write_export("analysis.json", content, tmp_path)
        age(path, 1000 - i)  # the order they were written in
        written.append(path)
        assert entry_bytes(tmp_path) <= 10_000
        assert path.read_text(encoding="utf-8") == content
    assert sorted(tmp_path.iterdir()) == sorted(path.parent for path in written[-10:])  # the ten newest, no fewer


def test_an_export_over_the_cap_is_kept_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(export_files, "MAX_EXPORT_BYTES", 1_000)
    small = write_export("a.csv", "a" * 500, tmp_path)
    age(small, 60)
    big = write_export("b.json", "b" * 5_000, tmp_path)
    assert big.read_text() == "b" * 5_000 and not small.exists()
    age(big, 30)
    newest = write_export("c.json", "c" * 3_000, tmp_path)
    assert newest.exists() and not big.exists()


def test_exporting_the_same_content_again_makes_it_the_newest(tmp_path, monkeypatch):
    monkeypatch.setattr(export_files, "MAX_EXPORT_BYTES", 3_000)
    first, second = write_export("a.csv", "a" * 1_000, tmp_path), write_export("b.csv", "b" * 1_000, tmp_path)
    age(first, 100)
    age(second, 50)
    assert write_export("a.csv", "a" * 1_000, tmp_path) == first  # exported again: no new file, made the newest
    write_export("c.csv", "c" * 1_000, tmp_path)
    write_export("d.csv", "d" * 1_000, tmp_path)
    assert first.exists() and not second.exists()


def test_the_count_cap_still_holds_for_link_store_style_callers(tmp_path):
    for i in range(5):
        (tmp_path / f"{i}.json").write_text("{}")
        os.utime(tmp_path / f"{i}.json", (i, i))
    prune_oldest(tmp_path, keep=2)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["3.json", "4.json"]


def test_exports_go_to_a_subfolder_of_gradios_cache_read_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    path = write_export("a.csv", "a")
    assert export_dir() == tmp_path / "gradio" / export_files.EXPORT_SUBFOLDER
    assert path.parent.parent == export_dir() and path.read_text() == "a"


@pytest.fixture
def gradio_cache(tmp_path, monkeypatch) -> Path:
    """A fresh GRADIO_TEMP_DIR, set before any component is made (each reads its cache folder when made)."""
    folder = tmp_path / "gradio"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(folder))
    return folder


def export_demo(result: analysis.Analysis) -> tuple[gr.Blocks, dict[str, int]]:
    """The Export tab's own layout and handlers on a kept analysis, each behind a queued event: the demo and
    {handler name: fn_index} (``show_export`` draws the tab, ``build_json`` and ``build_csv`` are its buttons)."""
    with gr.Blocks() as demo:
        layer, head = gr.Radio([1, 2], value=1), gr.Radio(["1", "2", "mean"], value="1")
        page = Page(None, gr.State(result), None, None, layer, head, None)
        drawing = export.layout(page)
        for part in (drawing, *drawing.computes):
            gr.on(part.triggers or [gr.Button().click], part.handler, part.inputs, part.outputs)
    names = {block_fn.fn.__name__: index for index, block_fn in demo.fns.items() if block_fn.fn is not None}
    return demo, names


@pytest.mark.served
def test_drawing_the_tab_builds_no_file_and_each_button_builds_its_own(gradio_cache, model, tokenizer):
    result = analysis.analyze(model, tokenizer, "a charming and often affecting journey .")
    demo, events = export_demo(result)
    with serving(demo) as url:
        caller = QueueCaller(url)
        try:
            drawn = caller.call(events["show_export"], [None, 2, "mean"])
            assert drawn.success, drawn.error
            assert "layer 2, the mean of its heads" in drawn.data[0]
            assert all_files(gradio_cache) == {}  # the tab drawn: nothing built, nothing on disk

            built = caller.call(events["build_json"], [None])
            assert built.success, built.error
            path = Path(built.data[0]["path"])
            assert path.read_text(encoding="utf-8") == analysis_to_json(result)  # what the tab's file always held
            assert set(all_files(gradio_cache)) == {path} and path.parent.parent == export_dir()  # once, no copy
            served = httpx.get(f"{url.rstrip('/')}/gradio_api/file={path}", trust_env=False)
            assert served.status_code == 200 and served.content == path.read_bytes()

            csv_built = caller.call(events["build_csv"], [None, 2, "mean"])
            assert csv_built.success, csv_built.error
            csv_path = Path(csv_built.data[0]["path"])
            assert (csv_path.name, csv_path.read_text(encoding="utf-8")) == export.export_csv(result, 2, "mean")
            assert set(all_files(gradio_cache)) == {path, csv_path}

            again = caller.call(events["build_json"], [None])  # built again: the same file, nothing added
            assert again.success and Path(again.data[0]["path"]) == path
            assert set(all_files(gradio_cache)) == {path, csv_path}
        finally:
            caller.close()
