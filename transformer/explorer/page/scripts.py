"""The page's JavaScript: ``page.js``, ``answer_stream.js`` (Gradio's stream of answers, kept open while an answer is
due on it) and ``phone.js``, loaded once in the page's ``<head>`` in that order, and the calls to them.

Python only passes data. ``head`` puts what the scripts need (``address.script_config``: the address's
parameters, the views' titles, the phone layout's sizes) in ``window.explorerConfig`` before them, and
``call`` writes an event's ``js=`` function, which hands the event's values to one of ``page.js``'s
functions with the event's own data.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SCRIPTS = [HERE / "page.js", HERE / "answer_stream.js", HERE / "phone.js"]
REDRAW_ID = "redraw-"  # + a view's id: the element id of its hidden redraw button, which ``writeAddress`` presses
CURRENT_ID = "make-current"  # the hidden button that ``writeAddress`` presses to make the tab on screen current


def head(config: dict) -> str:
    """The page's ``<head>`` addition (``launch(head=...)``): ``config`` (``address.script_config``), then each
    script."""
    tags = [f"window.explorerConfig = {_script_json(config)};"]
    tags += [compact(path.read_text(encoding="utf-8")) for path in SCRIPTS]
    return "\n".join(f"<script>\n{tag}\n</script>" for tag in tags)


def compact(script: str) -> str:
    """``script`` without its comment lines, blank lines and indentation: the comments are for its readers, and the
    page's configuration carries the scripts to every visitor (issue 54: 30 -> 18 KB), so each comment has a line of
    its own (``tests/explorer/page/test_scripts.py``). Indentation is not content
    because no template literal in the page's scripts spans lines (``tests/explorer/page/test_scripts.py``)."""
    lines = (line.strip() for line in script.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def call(function: str, *data) -> str:
    """An event's ``js=``: ``explorer.<function>(values, *data)``, ``data`` passed as JSON."""
    arguments = "".join(f", {_script_json(value)}" for value in data)
    return f"(...values) => explorer.{function}(values{arguments})"


def _script_json(value) -> str:
    """``value`` as JSON that cannot close its ``<script>`` element (a view's title could hold "</script>")."""
    return json.dumps(value).replace("</", "<\\/")
