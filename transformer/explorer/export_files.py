"""Files for the explorer's download buttons, written to a temporary folder that Gradio may serve.

A file is written once per content, in a folder named after the content's hash, so its own name
(what the browser saves it as) stays readable and repeated exports cost nothing. Past ``KEEP``
folders the oldest go: Gradio copies a returned file into its own cache straight away.
"""

import hashlib
import os
import tempfile
from pathlib import Path

from .pruning import prune_oldest

EXPORT_DIR = Path(tempfile.gettempdir()) / "attention-explorer-exports"
KEEP = 64


def write_export(name: str, content: str, directory: Path = EXPORT_DIR) -> Path:
    """Write ``content`` (UTF-8) as ``name`` and return its path; the same content returns the same path."""
    folder = directory / hashlib.sha256(content.encode()).hexdigest()[:20]
    path = folder / name
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, delete=False) as partial:
            partial.write(content)
        os.replace(partial.name, path)  # a concurrent reader never sees half a file
        prune_oldest(directory, KEEP)
    return path
