"""Shared links: a view's inputs (text, view, controls) kept on disk under a short key, nothing computed.

A link is one small JSON file named after its content's hash, so the same inputs make the same link and
cost nothing more. An entry holds only strings, each at most the page's ``MAX_INPUT_CHARS``, and is at most
``MAX_LINK_BYTES``; past ``MAX_LINKS``
entries go, links nobody has opened first (oldest first), so the store never holds more than
``MAX_LINKS * MAX_LINK_BYTES`` bytes (64 MiB) and a link people open is not pushed out by fresh ones.
One address makes at most ``NEW_LINKS_BURST`` links at once and then one every few seconds (``NEW_LINKS``), and
all addresses together ``ALL_NEW_LINKS`` (both checked by ``address.share_link``), so no group of clients
can push everyone else's links out.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from ..analysis import MAX_INPUT_CHARS, InputError
from .clients import RateLimit
from .pruning import prune_oldest

LINK_DIR = Path(tempfile.gettempdir()) / "attention-explorer-links"
MAX_LINKS = 1024
MAX_LINK_BYTES = 64 * 1024  # three texts of MAX_INPUT_CHARS characters fit, in most scripts
NEW_LINKS_BURST = 20  # links one address may make at once ...
NEW_LINKS = RateLimit(per_second=0.2, burst=NEW_LINKS_BURST)  # ... then one every 5 s: 1,024 take over an hour
# All addresses together: 1,024 new links take at least 15 minutes however many addresses make them
ALL_NEW_LINKS = RateLimit(per_second=1.0, burst=128)
OPENED: OrderedDict[str, None] = OrderedDict()  # keys of links opened since the server started, last opened last
KEY = re.compile(r"[A-Za-z0-9_-]{16}")
_writing = threading.Lock()


def save_link(params: dict[str, str], directory: Path | None = None) -> str:
    """Keep ``params`` (address parameter -> value, all strings) in ``directory`` (``LINK_DIR``); return its key.

    Raises:
        InputError: a value that is not a string, a value over ``MAX_INPUT_CHARS`` characters (what the page
            takes), or inputs over ``MAX_LINK_BYTES`` in all.
    """
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in params.items()):
        raise InputError("A link holds text only.")
    longest = max(map(len, params.values()), default=0)
    if longest > MAX_INPUT_CHARS:  # the page would restore nothing from it
        raise InputError(
            f"This view's text has {longest:,} characters; the page takes at most {MAX_INPUT_CHARS:,}, so a link "
            "to it would restore nothing. Shorten it to share the view."
        )
    content = json.dumps(params, ensure_ascii=False, sort_keys=True).encode()
    if len(content) > MAX_LINK_BYTES:
        raise InputError(
            f"This view's texts take {len(content):,} bytes; a link holds at most {MAX_LINK_BYTES:,}. "
            "Shorten them to share the view."
        )
    directory = directory or LINK_DIR
    key = base64.urlsafe_b64encode(hashlib.blake2b(content, digest_size=12).digest()).decode()
    with _writing:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{key}.json"
        if path.exists():
            path.touch()  # shared again: the newest, last to be pruned
        else:
            with tempfile.NamedTemporaryFile("wb", dir=directory, suffix=".part", delete=False) as partial:
                partial.write(content)
            os.replace(partial.name, path)  # a concurrent reader never sees half a file
        prune_oldest(directory, MAX_LINKS, last=opened)
    return key


def opened(path: Path) -> bool:
    """Whether the link kept at ``path`` was opened since the server started (pruned after the unopened ones)."""
    return path.stem in OPENED


def mark_opened(key: str, path: Path) -> None:
    """Remember that ``key`` was opened (at most ``MAX_LINKS`` keys) and make its file the newest."""
    with _writing:
        OPENED[key] = None
        OPENED.move_to_end(key)
        while len(OPENED) > MAX_LINKS:
            OPENED.popitem(last=False)
    with contextlib.suppress(OSError):  # pruned meanwhile
        os.utime(path)


def load_link(key: object, directory: Path | None = None) -> dict[str, str] | None:
    """The inputs kept under ``key`` (in ``LINK_DIR``), or None for a key that is malformed, unknown or pruned."""
    if not isinstance(key, str) or not KEY.fullmatch(key):
        return None
    path = (directory or LINK_DIR) / f"{key}.json"
    try:
        params = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return None
    mark_opened(key, path)
    return params
