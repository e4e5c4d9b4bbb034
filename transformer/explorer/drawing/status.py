"""The page's status line: which model it shows, where it runs, how big it is and how well it scores."""

from __future__ import annotations

import html
from pathlib import Path

from ...loading import DEFAULT_MODEL_DIR


def model_source(source: str) -> str:
    """How the page names a model's source: the bundled model by its place in the repository, others as given.

    The server's own folders stay off the page: "bundled assets/model", not an absolute path.
    """
    path = Path(source)
    if not path.is_dir():
        return str(source)  # a Hub repo id
    resolved, bundled = path.resolve(), DEFAULT_MODEL_DIR.resolve()
    repository = bundled.parent.parent
    if resolved == bundled:
        return f"bundled {bundled.relative_to(repository).as_posix()}"
    return resolved.relative_to(repository).as_posix() if resolved.is_relative_to(repository) else str(source)


def model_status(loaded, note: str | None = None, name: str = "Model") -> str:
    """One Markdown line for the page: source, revision, device, parameter count and mean dev accuracy.

    Args:
        loaded: a ``transformer.loading.LoadedModel``.
        note: why the app is not on the model it was asked for, if so.
        name: what the line calls the model.
    """
    parameter_count = sum(p.numel() for p in loaded.model.parameters())
    dev = (loaded.metrics or {}).get("dev", {})
    accuracy = dev.get("mean")  # the selection score of transformer.train
    sets = [name for name in dev if name != "mean"]
    parts = [
        f"**{name}** {html.escape(model_source(loaded.source))}",
        f"revision {html.escape(loaded.revision or ('local folder' if Path(loaded.source).is_dir() else 'main'))}",
        f"device {html.escape(str(loaded.device))}",
        f"{parameter_count:,} parameters",
        "mean dev accuracy n/a"
        if accuracy is None
        else f"mean accuracy over its {len(sets)} dev sets ({html.escape(', '.join(sets))}) {accuracy:.1%}",
    ]
    line = " · ".join(parts)
    return line if note is None else f"{line}  \n⚠️ {html.escape(note)}"


def page_status(first: tuple, second: tuple) -> str:
    """The status of the explorer's model, then of the second one Compare reads with (when MODEL_ID_B is set).

    Args:
        first, second: ``runner.get_model()`` and ``runner.get_second_model()``, each (model or None, note).
    """
    lines = [model_status(*first)]
    loaded, note = second
    if loaded is not None:
        lines.append(model_status(loaded, name="Model B (Compare)"))
    elif note is not None:
        lines.append(f"⚠️ {html.escape(note)}")
    return "  \n".join(lines)
