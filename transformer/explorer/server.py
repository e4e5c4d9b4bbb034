"""How the explorer is served so that traffic cannot exhaust memory or disk: the launch settings.

- Sessions: at most ``sessions.SESSION_CAPACITY``, lean (``sessions.LeanSession``), released when their page
  closes or goes idle.
- Gradio's ``/gradio_api/deep_link`` route (mounted whether or not a page uses it) writes a session's every
  component value to disk and never removes it: it is replaced by one that writes nothing. Shared links
  go through ``link_store`` (inputs only, capped).
- The page's style sheet (``theme.PAGE_CSS``: figures in the dark theme, the phone layout) goes with them, so
  every server of the app, tests' included, serves the same page.
- Uploads: the app takes none, so ``MAX_FILE_SIZE`` refuses any real file; ``DELETE_CACHE`` removes
  temporary files (uploads, downloads) an hour old.
"""

from __future__ import annotations

import asyncio
import contextlib

from . import sessions, theme

MAX_FILE_SIZE = "1kb"
DELETE_CACHE = (600, 3600)  # (every, older than) seconds: for gr.Blocks(delete_cache=...)
GRADIO_DEEP_LINK = "/gradio_api/deep_link"


def no_deep_link(session_hash: str = "") -> str:
    """What Gradio's route answers for a session it does not know: no link, nothing written."""
    return ""


def close_gradio_deep_links(app) -> None:
    """Make ``GRADIO_DEEP_LINK`` on the FastAPI ``app`` answer ``no_deep_link`` instead of writing state to disk."""
    app.router.routes[:] = [route for route in app.router.routes if getattr(route, "path", "") != GRADIO_DEEP_LINK]
    app.add_api_route(GRADIO_DEEP_LINK, no_deep_link, methods=["GET"])


@contextlib.asynccontextmanager
async def lifespan(app):
    """While the server runs: Gradio's deep links closed, lean sessions, idle ones swept."""
    close_gradio_deep_links(app)
    sweeping = asyncio.create_task(sessions.sweep_idle(sessions.lean_sessions(app)))
    try:
        yield
    finally:
        sweeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeping


def launch_settings() -> dict:
    """Keyword arguments for ``demo.launch`` (a fresh dict: Gradio changes ``app_kwargs``)."""
    return {
        "css": theme.PAGE_CSS,
        "head": theme.PHONE_JS,
        "max_file_size": MAX_FILE_SIZE,
        "state_session_capacity": sessions.SESSION_CAPACITY,
        "app_kwargs": {"lifespan": lifespan},
    }
