"""How the explorer is served so that traffic cannot exhaust memory or disk: the launch settings.

- Sessions: at most ``sessions.SESSION_CAPACITY``, lean (``sessions.LeanSession``), released when their page
  closes or goes idle.
- Gradio's ``/gradio_api/deep_link`` route (mounted whether or not a page uses it) writes a session's every
  component value to disk and never removes it: it is replaced by one that writes nothing. Shared links
  go through ``link_store`` (inputs only, capped).
- The page's style sheet (``theme.PAGE_CSS``: figures in the dark theme, the phone layout) and its scripts
  (``scripts.head``) go with them, so every server of the app, tests' included, serves the same page.
- Uploads: the app takes none (``guard`` refuses the route; ``MAX_FILE_SIZE`` would refuse any real file);
  ``DELETE_CACHE`` removes temporary files an hour old.
- Every request passes ``guard.Guard`` (closed routes, private event names, jobs per client, security headers).
- Model work: every queued event and endpoint shares one concurrency group, ``MODEL_WORK``, of one worker
  per core (``model_workers``), and the REST routes that would skip the queue are closed (``api_open=False``,
  as on a Space), so however many events or callers there are, at most that many model calls run at once;
  waiting jobs take turns by client (``fair_queue``).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os

import gradio as gr
from starlette.middleware import Middleware

from . import fair_queue, guard, page, scripts, sessions, theme

MAX_FILE_SIZE = "1kb"
DELETE_CACHE = (600, 3600)  # (every, older than) seconds: for gr.Blocks(delete_cache=...)
GRADIO_DEEP_LINK = "/gradio_api/deep_link"
MODEL_WORK = "model"  # the one concurrency group of every queued event
QUEUE_SIZE = 64  # jobs waiting at once, all clients together: a full queue drains in about 3 s (`make load`)


def model_workers() -> int:
    """One worker per core this process may use: a model call is 2-1000 ms of CPU, so more only time-slice."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return max(1, len(cores))


def configure_events(demo) -> None:
    """Put every queued event of ``demo`` in ``MODEL_WORK``, ``model_workers()`` at once, in turns fair to every
    client (``fair_queue``), and answer inputs that Gradio refuses without a traceback in the log
    (``quiet_input_errors``)."""
    workers = model_workers()
    for fn in demo.fns.values():
        if fn.queue:
            fn.concurrency_id, fn.concurrency_limit = MODEL_WORK, workers
    demo.queue(default_concurrency_limit=workers, max_size=QUEUE_SIZE, api_open=False)
    fair_queue.make_fair(demo._queue)
    quiet_input_errors(demo)


def quiet_input_errors(demo) -> None:
    """Make what ``demo`` refuses while reading an event's inputs (too few values, a value not among a control's
    choices) a short ``gr.Error`` for the sender: Gradio would print a traceback, quoting the values, per call."""
    read_inputs = demo.preprocess_data

    async def read_inputs_quietly(*args, **kwargs):
        try:
            return await read_inputs(*args, **kwargs)
        except gr.Error as error:  # a component's own refusal, already worded for the sender
            error.print_exception = False
            raise
        except Exception as error:  # every refusal here is about the sender's values
            reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else "bad inputs"
            raise gr.Error(
                html.escape(reason, quote=False), title="Cannot use these inputs", print_exception=False
            ) from None

    demo.preprocess_data = read_inputs_quietly


def no_deep_link(session_hash: str = "") -> str:
    """What Gradio's route answers for a session it does not know: no link, nothing written."""
    return ""


def close_gradio_deep_links(app) -> None:
    """Make ``GRADIO_DEEP_LINK`` on the FastAPI ``app`` answer ``no_deep_link`` instead of writing state to disk."""
    app.router.routes[:] = [route for route in app.router.routes if getattr(route, "path", "") != GRADIO_DEEP_LINK]
    app.add_api_route(GRADIO_DEEP_LINK, no_deep_link, methods=["GET"])


FORGET_EVERY = 60  # seconds between rounds of ``forget_removed_files``


def forget_removed_files(blocks) -> int:
    """Forget the files ``blocks`` returned that are gone (pruned exports); returns how many were forgotten.

    Gradio remembers the path of every file an event returns, to delete it at shutdown, and never forgets
    one: about 150 bytes per export, a set that would grow for as long as the server runs.
    """
    forgotten = 0
    for paths in blocks.temp_file_sets:
        for path in list(paths):  # copied: an event may be adding to it on another thread
            if not os.path.exists(path):
                paths.discard(path)
                forgotten += 1
    return forgotten


async def forget_removed_files_forever(blocks) -> None:
    while True:
        await asyncio.sleep(FORGET_EVERY)
        await asyncio.to_thread(forget_removed_files, blocks)


@contextlib.asynccontextmanager
async def lifespan(app):
    """While the server runs: Gradio's deep links closed, lean sessions, idle ones swept, removed files forgotten."""
    close_gradio_deep_links(app)
    tasks = [
        asyncio.create_task(sessions.sweep_idle(sessions.lean_sessions(app))),
        asyncio.create_task(forget_removed_files_forever(app.get_blocks())),
    ]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def launch_settings() -> dict:
    """Keyword arguments for ``demo.launch`` (a fresh dict: Gradio changes ``app_kwargs``)."""
    return {
        "css": theme.PAGE_CSS,
        "head": scripts.head(page.script_config()),
        "max_file_size": MAX_FILE_SIZE,
        "state_session_capacity": sessions.SESSION_CAPACITY,
        "app_kwargs": {"lifespan": lifespan, "middleware": [Middleware(guard.Guard)]},
    }
