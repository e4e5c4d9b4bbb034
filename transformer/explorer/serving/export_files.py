"""Files for the explorer's download buttons, written inside Gradio's own cache folder and bounded there.

Gradio copies a returned file into its cache (``GRADIO_TEMP_DIR``, else ``<temp>/gradio``) unless it is already
there, and empties that cache only of files an hour old. So the exports are written in a subfolder of that
cache (``EXPORT_SUBFOLDER``), which Gradio serves as is: one file on disk per export, never a copy. Before
each new file the oldest go, until the folder holds at most ``KEEP`` entries and ``MAX_EXPORT_BYTES`` with
the new file counted: however many exports are asked for, the folder never holds more (a single export
larger than that is kept alone).

A file is written once per content, in a folder named after the content's hash, so its own name (what the
browser saves it as) stays readable and repeated exports cost nothing: they only make it the newest again.
"""

import hashlib
import os
import tempfile
import threading
from pathlib import Path

from . import gradio_seam
from .pruning import prune_oldest

EXPORT_SUBFOLDER = "attention-explorer-exports"
KEEP = 64  # entries (one per file)
MAX_EXPORT_BYTES = 48 * 2**20  # 48 MiB: with the folders' own blocks, well under 64 MB on disk
_writing = threading.Lock()  # one write and its pruning at a time, so the bound holds under concurrent exports


def export_dir() -> Path:
    """The exports' folder: a subfolder of Gradio's cache, read now so that ``GRADIO_TEMP_DIR`` is honoured.

    Returns:
        ``<Gradio's upload folder>/attention-explorer-exports`` (not created here).
    """
    return Path(gradio_seam.upload_folder()) / EXPORT_SUBFOLDER


def _touch(path: Path) -> None:
    """Make an existing export the newest (file and folder), so it is the last to be pruned."""
    for target in (path, path.parent):
        try:
            os.utime(target)
        except OSError:  # pruned meanwhile by another process: it is written again on the next export
            continue


def write_export(name: str, content: str, directory: Path | None = None) -> Path:
    """Write ``content`` as ``name`` in the exports' folder, keeping that folder bounded.

    Args:
        name: the file's name, as the browser saves it.
        content: the text, written as UTF-8.
        directory: the exports' folder; ``export_dir()`` when None.

    Returns:
        The file's path; the same content returns the same path.
    """
    directory = export_dir() if directory is None else directory
    data = content.encode()
    folder = directory / hashlib.sha256(data).hexdigest()[:20]
    path = folder / name
    with _writing:
        if path.exists():
            _touch(path)
            return path
        directory.mkdir(parents=True, exist_ok=True)
        prune_oldest(directory, KEEP - 1, MAX_EXPORT_BYTES - len(data))  # room first: the bound holds while writing
        folder.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False) as partial:
            partial.write(data)
        os.replace(partial.name, path)  # a concurrent reader never sees half a file
    return path
