"""The explorer's models, each loaded once, and every call to them: the only place that loads or runs a model.

``get_model`` is the cached loader (MODEL_ID at MODEL_REVISION, else the bundled model), ``get_second_model``
the optional one Compare sets beside it (MODEL_ID_B at MODEL_REVISION_B); ``run_model`` and ``run_view`` are
the GPU-wrapped calls. The rest turn an ``InputError`` into a clear ``gr.Error`` for the person or API caller
who sent the text or the controls.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import functools
import logging
import os
import threading
import time
from pathlib import Path
from typing import TypeGuard

import gradio as gr
import torch

from ..checkpoints import list_checkpoints
from ..explain import heap
from ..interface import Classifier
from ..loading import DEFAULT_MODEL_DIR, LoadedModel, ModelLoadError, default_device, load_model
from . import analysis, thread_names
from .analysis import Analysis, InputError
from .jsonable import to_jsonable
from .serving import gradio_seam

try:  # Hugging Face ZeroGPU: the model's work runs inside spaces.GPU; imported before anything touches CUDA
    import spaces
except ImportError:
    spaces = None

logger = logging.getLogger(__name__)

API_DECIMALS = 6  # the explanation endpoints round their numbers to this many decimals (/export keeps them exact)
# No view's job runs longer than this: a job of many passes (Integrated Gradients, erasure, patching) is stopped
# at its next pass past it, so a worker is never held longer whatever the load. How long the worst legal jobs take
# is measured in benchmarks/README.md ("Each heavy job at its worst legal input", ``benchmarks/job_times.py``, and
# "Real size"); a real-size model needs more: the ``JOB_SECONDS`` setting.
JOB_SECONDS = float(os.environ.get("JOB_SECONDS", "10"))
if not JOB_SECONDS > 0:
    raise ValueError(f"JOB_SECONDS must be a number of seconds above 0, not {os.environ['JOB_SECONDS']!r}")
DEFAULT_SHARE = 0.5  # a default scaled to the model (``explain.budget``) asks for at most this share of the cap
clock = time.monotonic
# The running view job's deadline, in its context: a pass that a job runs on another thread (``batching.in_parallel``)
# is given a copy of the context, so it stops too.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("job_deadline", default=None)
# The running job's stop, in its context as the deadline is: set when its Gradio event is cancelled (``cancel``).
# Gradio's /cancel only cancels the task that awaits the job's thread, which would run on and hold its worker.
_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("job_stop", default=None)
_stops: dict[str, threading.Event] = {}  # Gradio event id -> the stop of its job, while the job's thread runs it
# Events cancelled before their job's thread began (waiting for a worker or a slot): the job then does nothing
_early_cancels: collections.OrderedDict[str, None] = collections.OrderedDict()
MAX_EARLY_CANCELS = 1024  # remembered at most (an event cancelled while waiting never starts, so is never looked up)
_stops_lock = threading.Lock()
CANCELLED = "Cancelled."


class JobTooLong(InputError):
    """A view's job ran past ``JOB_SECONDS``."""


class JobCancelled(InputError):
    """A job whose Gradio event was cancelled (a Cancel button, an API caller's cancel)."""


def check_deadline(module, args) -> None:
    """A forward pre-hook on the models: once its job is cancelled or past its deadline, stop it before this pass."""
    check_stop()
    deadline = _deadline.get()
    if deadline is not None and clock() > deadline:
        raise JobTooLong(
            f"This took longer than {JOB_SECONDS:g} s, the most one job may run here, and was stopped: "
            "the server is busy, or the job is large (fewer steps or a shorter text run faster)."
        )


def check_stop() -> None:
    """Raise ``JobCancelled`` once the running job's event is cancelled (``cancel``); outside a job, nothing."""
    stop = _stop.get()
    if stop is not None and stop.is_set():
        raise JobCancelled(CANCELLED)


def default_seconds() -> float:
    """The seconds a view's default settings may ask for by ``explain.budget``'s estimate: ``DEFAULT_SHARE`` of
    ``JOB_SECONDS``, the rest left for a slower or busier machine."""
    return DEFAULT_SHARE * JOB_SECONDS


@contextlib.contextmanager
def job_deadline():
    """Inside it, the job's model passes stop once ``JOB_SECONDS`` have gone by, or its event is cancelled
    (``check_deadline``)."""
    outer = _deadline.get()
    token = _deadline.set(clock() + JOB_SECONDS if outer is None else outer)  # a job inside a job keeps the first's
    try:
        with stoppable():
            yield
    finally:
        _deadline.reset(token)


@contextlib.contextmanager
def stoppable():
    """Inside it, the model passes of the Gradio event running it stop once that event is cancelled (``cancel``):
    the next pass raises ``JobCancelled``, and a cancel that came before it began raises at once. While it runs,
    its event is ``running``. Outside an event (a script, a test's direct call) it does nothing."""
    event_id = gradio_seam.current_event_id()
    if event_id is None or _stop.get() is not None:  # no event, or a stop already given (a job inside a job)
        yield
        return
    stop = threading.Event()
    with _stops_lock:
        _stops[event_id] = stop
        if event_id in _early_cancels:
            del _early_cancels[event_id]
            stop.set()
    token = _stop.set(stop)
    try:
        check_stop()
        yield
    finally:
        _stop.reset(token)
        with _stops_lock:
            _stops.pop(event_id, None)


def cancel(event_id: str) -> bool:
    """Stop the job of Gradio's event ``event_id`` at its next model pass, or before it begins; whether it was
    running."""
    with _stops_lock:
        stop = _stops.get(event_id)
        if stop is not None:
            stop.set()
            return True
        _early_cancels[event_id] = None
        while len(_early_cancels) > MAX_EARLY_CANCELS:
            _early_cancels.popitem(last=False)
        return False


def running(event_id: str) -> bool:
    """Whether a thread is still running the job of Gradio's event ``event_id`` (a cancelled one's too)."""
    return event_id in _stops


def one_job(fn, slots: threading.Semaphore, thread_name: str = "job"):
    """``fn``, the function of a queued Gradio event, as one job: ``stoppable`` from its first line, and holding
    one of ``slots`` (its lane's workers) until its thread returns, that thread named ``thread_name`` meanwhile
    (``thread_names``). Gradio frees a cancelled event's worker while the thread runs on, so without the slot the
    next jobs would run beside it; a cancelled job is one line for its sender. Its signature and type hints are
    ``fn``'s, which Gradio reads (``gr.Request``, ``gr.Progress``)."""

    @functools.wraps(fn)
    def job(*args, **kwargs):
        try:
            with stoppable(), slots, thread_names.thread_named(thread_name):
                check_stop()  # cancelled while it waited for a slot
                return fn(*args, **kwargs)
        except JobCancelled as error:
            raise user_error(error, "Cancelled") from None

    job.__annotations__ = gradio_seam.type_hints_gradio_reads(fn)
    return job


@functools.lru_cache(maxsize=1)
def get_model() -> tuple[LoadedModel, str | None]:
    """The model to explore, loaded once: MODEL_ID at MODEL_REVISION, else the bundled model.

    Returns:
        (the loaded model, a note saying why the app fell back to the bundled model, or None).
    """
    source = os.environ.get("MODEL_ID") or str(DEFAULT_MODEL_DIR)
    revision = os.environ.get("MODEL_REVISION") or None
    note = None
    try:
        loaded = load_model(source, revision=revision, device="cpu")
    except ModelLoadError as error:
        if Path(source).resolve() == Path(DEFAULT_MODEL_DIR).resolve():
            raise
        note = f"Could not load {source} ({error}); showing the bundled model instead."
        logger.warning(note)
        try:
            loaded = load_model(DEFAULT_MODEL_DIR, device="cpu")
        except ModelLoadError as fallback_error:
            raise ModelLoadError(f"{error}; the bundled model did not load either: {fallback_error}") from None
    return on_device(loaded), note


@functools.lru_cache(maxsize=1)
def get_second_model() -> tuple[LoadedModel | None, str | None]:
    """The model Compare reads the same sentence with, loaded once: MODEL_ID_B at MODEL_REVISION_B.

    Returns:
        (the model, None); (None, None) when MODEL_ID_B is unset; (None, why) when it does not load, and
        Compare then compares two sentences through the explorer's model, as without it.
    """
    source = os.environ.get("MODEL_ID_B")
    if not source:
        return None, None
    try:
        loaded = load_model(source, revision=os.environ.get("MODEL_REVISION_B") or None, device="cpu")
    except ModelLoadError as error:
        note = f"Could not load MODEL_ID_B {source} ({error}); Compare reads two sentences with one model."
        logger.warning(note)
        return None, note
    return on_device(loaded), None


_checkpoints: list = [None, None]  # [the explorer's model, its checkpoints]: kept for that model only
_checkpoints_lock = threading.Lock()


def get_checkpoints() -> tuple[tuple[tuple[int, LoadedModel], ...], str | None]:
    """The explorer's model at each of its training checkpoints (``transformer.checkpoints``), loaded once and kept
    while it is the explorer's model: ((step, model), ...) by step, the last being the explorer's own model when it
    is the model folder itself.

    Returns:
        (the checkpoints, None), or ((), the one line that says why there are none).
    """
    loaded = get_model()[0]
    with _checkpoints_lock:  # one load of them, however many requests ask at once
        if _checkpoints[0] is not loaded.model:
            _checkpoints[:] = [loaded.model, load_checkpoints(loaded)]
        return _checkpoints[1]


def load_checkpoints(loaded: LoadedModel) -> tuple[tuple[tuple[int, LoadedModel], ...], str | None]:
    """``get_checkpoints``'s answer for ``loaded``, each checkpoint loaded on the explorer's device."""
    folder = loaded.folder.resolve() if loaded.folder is not None else None
    local = Path(loaded.source).is_dir()  # a folder's path is the server's own: never said to a caller
    where = "This model" if local else f"The model {loaded.source}"
    where = "The bundled model" if folder == DEFAULT_MODEL_DIR.resolve() else where
    try:
        found = list_checkpoints(loaded.source)
    except OSError as error:
        logger.warning("listing the checkpoints of %s failed: %s", loaded.source, error)
        return (), f"{where}'s training checkpoints could not be listed."
    if not found:
        return (), (
            f"{where} kept no training checkpoints (a checkpoints/ folder or step-N branches on the Hub), so there is "
            "no training to show: python -m transformer.train --keep-steps 12 keeps them."
        )
    each = model_bytes(loaded.model)
    last_loaded = found[-1].revision is not None  # a Hub branch: the final step is loaded too, not the model reused
    found, note = within_memory(found, each, where, CHECKPOINT_BYTES - (each if last_loaded else 0))
    if not found:
        return (), note
    models = []
    for checkpoint in found:
        if checkpoint.revision is None and Path(checkpoint.source).resolve() == folder:
            models.append((checkpoint.step, loaded))  # the final checkpoint is the model itself: not loaded twice
            continue
        try:
            step_model = load_model(checkpoint.source, revision=checkpoint.revision, device="cpu")
        except ModelLoadError as error:
            logger.warning("the checkpoint at step %d did not load: %s", checkpoint.step, error)
            return (), f"{where}'s checkpoint at step {checkpoint.step} did not load, so there is no training to show."
        models.append((checkpoint.step, on_device(step_model)))
    return tuple(models), note


# The checkpoints kept in memory beside the model, at most: the bundled model's 12 are 120 MB; a DistilBERT-base's
# one is 268 MB, so none of its is kept (the server's memory budget, issue 36, has no room for them).
CHECKPOINT_BYTES = 256 * 2**20


def model_bytes(model: Classifier) -> int:
    """What ``model``'s parameters take in memory."""
    return sum(parameter.numel() * parameter.element_size() for parameter in model.parameters())


def within_memory(found: list, each: int, where: str, budget: int = CHECKPOINT_BYTES) -> tuple[list, str | None]:
    """The checkpoints of ``found`` (oldest first, the last the model itself) kept in ``budget`` bytes at ``each``
    per loaded checkpoint: all, or the first, the last and evenly spaced ones between; with the line that says how
    many were left out (None when none was), or none at all when not even one fits beside the model."""
    room = budget // max(each, 1)
    if len(found) - 1 <= room:
        return found, None
    if room < 1:
        size = f"{each / 2**20:,.0f} MB"
        return [], f"{where}'s training checkpoints are too large to keep in memory ({size} each), so none is shown."
    picked = sorted({round(i * (len(found) - 2) / max(room - 1, 1)) for i in range(room)})  # among all but the last
    kept = [found[i] for i in picked] + [found[-1]]
    return kept, f"{len(kept)} of the {len(found)} checkpoints kept in memory (each {each / 2**20:,.0f} MB)."


def checkpoint_models() -> tuple[tuple[int, LoadedModel], ...]:
    """``get_checkpoints``'s models; none is an ``InputError`` with its one line (the Training tab's endpoint's
    answer for a model without checkpoints)."""
    found, why = get_checkpoints()
    if not found:
        raise InputError(why or "This model has no training checkpoints.")
    return found


@functools.lru_cache(maxsize=1)
def explorer_device() -> torch.device:
    """The device every model of the explorer runs on, chosen once: CUDA where there is a GPU, else the CPU."""
    return default_device()


def on_device(loaded: LoadedModel) -> LoadedModel:
    """``loaded``, read on the CPU, moved to ``explorer_device``.

    On ZeroGPU hardware the main process may not touch CUDA itself, and ``.to("cuda")`` is the move that
    ``spaces`` defers.
    """
    device = explorer_device()
    loaded.model.to(device)
    loaded.model.register_forward_pre_hook(check_deadline)
    return dataclasses.replace(loaded, device=device)


def loaded_model(second: bool = False) -> LoadedModel:
    """The explorer's model, or with ``second`` the one beside it (``get_second_model``).

    Raises:
        InputError: ``second`` and there is no second model.
    """
    if not second:
        return get_model()[0]
    loaded, note = get_second_model()
    if loaded is None:
        raise InputError(note or "There is no second model: start the explorer with MODEL_ID_B set to compare two.")
    return loaded


def _on_gpu(fn):
    """``spaces.GPU(fn)`` where the ``spaces`` package is installed (Hugging Face ZeroGPU), else ``fn``."""
    return spaces.GPU(fn) if spaces is not None else fn


@_on_gpu
def run_model(text: str | None, *, second: bool = False) -> Analysis:
    """Analyze ``text`` with the explorer's model (``second``: the one beside it): one forward pass, every layer's
    attention kept."""
    loaded = loaded_model(second)
    return analysis.analyze(loaded.model, loaded.tokenizer, text)


@_on_gpu
def run_view(build, result: Analysis, *, second: bool = False, **controls):
    """Compute an explanation view, ``build(model, tokenizer, result, **controls)`` from a view module, with the
    explorer's model (``second``: the one beside it, which ``result`` must come from); stopped with ``JobTooLong``
    at its first model pass after ``JOB_SECONDS``. Freed memory goes back to the system before it starts and as it
    ends (``heap``): a big model's job, or what ran before it outside a view job (its own analysis, ``/predict``, the
    behaviour suite), would otherwise leave hundreds of MB resident under its peak."""
    check_stop()  # cancelled during the job's work before this view (its analysis)
    loaded = loaded_model(second)
    heap.return_freed_memory()
    try:
        with job_deadline():
            return build(loaded.model, loaded.tokenizer, result, **controls)
    finally:
        heap.return_freed_memory()


def user_error(error: InputError, title: str = "Cannot read this text") -> gr.Error:
    """A clear message for the person who sent the text or settings, without a stack trace in the log."""
    return gr.Error(str(error), title=title, print_exception=False)


@contextlib.contextmanager
def clear_errors(title: str = "Cannot draw this view"):
    """Inside it, controls a view cannot use raise a clear ``gr.Error`` titled ``title``; a cancelled job stays
    ``JobCancelled`` (nobody reads its event's answer, and the page's events tell it from a failure)."""
    try:
        yield
    except JobCancelled:
        raise
    except InputError as error:
        raise user_error(error, title) from None


def read_for_api(text: str, *, second: bool = False) -> Analysis:
    """``run_model`` for API callers: any unusable text, blank included, is a clear ``gr.Error``."""
    with clear_errors("Cannot read this text"):
        return run_model(text, second=second)


def explain(build, result: Analysis, *, second: bool = False, **controls):
    """``run_view`` for a person or an API caller: controls it cannot use are a clear ``gr.Error``."""
    with clear_errors():
        return run_view(build, result, second=second, **controls)


def kept_view(kept: tuple | None, build, result: Analysis, *, second: bool = False, **controls) -> tuple:
    """A tab's (key, view): ``kept`` when it holds ``build``'s view of this analysis with these controls, else new.

    Redrawing a tab (another colour scale or query token, coming back to it) then calls no model. ``second``
    builds it with the second model; a tab keeps each model's view in a state of its own.
    """
    key = kept_key(build, result.text, **controls)
    return kept if is_kept(kept, key) else (key, explain(build, result, second=second, **controls))


def kept_key(build, text: str, **controls) -> tuple:
    """What a kept view is kept under: the function that built it, the analyzed text and the controls."""
    return (build.__name__, text, controls)


def kept_controls(kept) -> dict:
    """The controls a tab's kept view was made with (its ``kept_key``'s), or {} where it keeps none."""
    key = kept[0] if isinstance(kept, tuple) and len(kept) == 2 else None
    return dict(key[2]) if isinstance(key, tuple) and len(key) == 3 and isinstance(key[2], dict) else {}


def is_kept(kept, key: tuple) -> TypeGuard[tuple]:
    """Whether ``kept`` (a tab's ``gr.State``) holds the view kept under ``key``."""
    return isinstance(kept, tuple) and len(kept) == 2 and kept[0] == key


def api_view(build, text: str, **controls):
    """An explanation view for an API caller, as JSON: unusable text or controls are a clear ``gr.Error``."""
    return to_jsonable(explain(build, read_for_api(text), **controls), API_DECIMALS)


def on_cpu(value):
    """A dataclass with each of its tensor fields moved to the CPU (views are kept and sent, never computed on)."""
    fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return dataclasses.replace(value, **{k: v.cpu() for k, v in fields.items() if isinstance(v, torch.Tensor)})
