"""The loaded model's artifacts (``model_files``): each read from next to the model first, else from the explorer's
cache folder, else computed once in this process and written to the cache folder, never next to the model.

A ``ModelArtifact`` is one file of them (the head atlas, the behaviour report, the faithfulness means).
One computation runs at a time: a request that comes meanwhile waits for it and gets its result.
A tab that computes its artifact on first open (Behaviour, Errors) draws a new ``run_request`` into a hidden box of its
own, whose change runs ``compute_then_draw`` with a progress bar; after a failure, the tab's next draw runs it again.
"""

from __future__ import annotations

import functools
import html
import itertools
import threading
from collections.abc import Callable
from pathlib import Path

import gradio as gr

from ...loading import INDEX_FILE
from .. import runner
from . import data_folder, model_files

RUN = "run"  # how a tab's hidden box's value that computes its artifact begins (``run_request``)
# A computation the model's size puts above this many seconds (``model_files.nominal_seconds``) says how long it will
# take, measured here, before it starts: a DistilBERT-base's atlas, errors and behaviour, never the bundled model's.
SAY_TIME_AFTER_SECONDS = 60.0
COMMAND = "python -m transformer.artifacts --model MODEL_FOLDER --data-dir DATA_FOLDER"  # writes them next to a model


@functools.lru_cache(maxsize=1)
def model_identity() -> tuple[Path | None, str | None]:
    """The explorer's model folder and the sha256 of its weights (None, None when it has no local folder).

    The weights are model.safetensors, or a sharded checkpoint's index and shards (``model_files.model_hash``).
    """
    folder = runner.get_model()[0].folder
    if folder is None or not any((folder / name).is_file() for name in (model_files.WEIGHTS_FILE, INDEX_FILE)):
        return None, None
    return folder, model_files.model_hash(folder)


class ModelArtifact:
    """One artifact file of the loaded model.

    Args:
        name: its file name (``model_files.ATLAS_FILE``...).
        build: ``build(sha256) -> data``, what computes it for the loaded model (None: it is only ever read).
    """

    def __init__(self, name: str, build: Callable[[str], dict] | None = None):
        self.name = name
        self.build = build
        self._computed: dict[str | None, dict] = {}  # computed in this process, by model hash
        self._computing = threading.Lock()
        self._stored = functools.lru_cache(maxsize=1)(self._read)

    def _read(self, folder: Path | None, sha: str | None) -> dict | None:
        """The file on disk, read once: next to the model first, else in the cache folder."""
        bundled = model_files.read_artifact(folder, self.name, sha)
        return bundled or model_files.read_artifact(model_files.cache_folder(sha), self.name, sha)

    def current(self) -> dict | None:
        """The model's data: computed in this process, else stored for it, else None."""
        folder, sha = model_identity()
        return self._computed.get(sha) or self._stored(folder, sha)

    def compute(self) -> dict:
        """The model's data, built (``build``) only when there is none yet, kept for the process and written to
        the cache folder (``model_files.cache_artifact``: when it cannot be written it is kept in memory only)."""
        data = self.current()
        if data is not None:
            return data
        with self._computing:
            data = self.current()  # computed by the request this one waited for
            if data is not None:
                return data
            sha = model_identity()[1]
            if self.build is None:
                raise RuntimeError(f"{self.name} is only ever read: nothing computes it")
            with runner.stoppable():  # a cancelled event's computation stops at its next pass, and keeps nothing
                data = self.build(sha or "unknown")
            model_files.cache_artifact(self.name, data)
            self._computed[sha] = data
            return data

    def forget(self) -> None:
        """Drop what was computed and read, and the model's identity: the next call looks again (tests)."""
        self._computed.clear()
        self._stored.cache_clear()
        model_identity.cache_clear()


_requests = itertools.count(1)


def run_request() -> str:
    """A value for a tab's hidden box that computes its artifact: ``RUN`` and a number no draw wrote before.

    Gradio fires a change only for a new value, so a box still holding the request of a computation that failed
    would never run it again; a new one each time makes the tab's next draw (reopened, a filter changed) retry it.
    """
    return f"{RUN} {next(_requests)}"


def duration(seconds: float) -> str:
    """``seconds`` as a person reads a wait: "40 s", "3 min", "1.5 h"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def time_note(what: str, texts: list[str], rows_per_text: int = 1) -> str:
    """How long computing ``what`` (``rows_per_text`` forward rows of each of ``texts``) will take with the loaded
    model, as one HTML paragraph; "" when its size puts it under ``SAY_TIME_AFTER_SECONDS``. The time is measured:
    one pass timed now (``model_files.measured_seconds``), so a busy machine says more."""
    loaded = runner.get_model()[0]
    encodings = loaded.tokenizer.encode_batch(texts)
    ids = [encoding.ids[: loaded.model.max_len] for encoding in encodings if encoding.ids]  # as ``model_files.encode``
    if model_files.nominal_seconds(loaded.model, ids, rows_per_text) <= SAY_TIME_AFTER_SECONDS:
        return ""
    seconds = model_files.measured_seconds(loaded.model, ids, rows_per_text)
    return (
        f"<p><b>This model is large: {html.escape(what)} takes about {duration(seconds)} here</b> ({len(texts):,} "
        f"texts, {rows_per_text * len(texts):,} rows through the model, timed from one pass now); a progress bar "
        f"follows it. <code>{html.escape(COMMAND)}</code> computes it ahead, next to the model.</p>"
    )


def requested(needed, *inputs) -> bool:
    """Whether a tab's hidden box holds a ``run_request`` (a computation starts), not its clearing (the rest of a
    compute's ``inputs`` are its draw's, which do not matter here)."""
    return isinstance(needed, str) and needed.split(" ")[0] == RUN


def compute_then_draw(artifact: ModelArtifact, needed: str, draw: Callable[..., tuple], inputs: tuple, outputs: int):
    """A tab's hidden box changed to ``needed``: at a ``run_request``, compute ``artifact`` (only if there is none
    yet), then return ``draw(*inputs)``; any other change (the draw clearing the box) leaves the ``outputs`` drawn as
    they are."""
    if not requested(needed):
        return (gr.skip(),) * outputs
    artifact.compute()
    return draw(*inputs)


def data_folder_for(what: str, them: str = "it") -> Path:
    """The data folder to compute ``what`` from, or a clear ``gr.Error`` saying how to make ``them`` instead.

    Raises:
        gr.Error: there is no data folder with the dev sets here.
    """
    data_dir = data_folder.data_dir()
    if not data_folder.has_dev_sets(data_dir):
        message = f"No data folder here to compute {what} from. Make {them} with: {COMMAND}"
        raise gr.Error(message, print_exception=False)
    return data_dir
