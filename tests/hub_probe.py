"""Run by tests/test_hub_endpoints.py in a process of its own, with MODEL_ID set: import the app on that model, call
every endpoint as an API caller would (a sentence, the defaults), print {endpoint: "ok" or its error} as JSON."""

import inspect
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import app  # noqa: F401  (builds the page on MODEL_ID's model, as the Space does)
from transformer.explorer import api

# Two words swapped: as many tokens in any tokenizer, as /patching needs.
SENTENCE, OTHER = "a wonderful film , the acting was dull", "a dull film , the acting was wonderful"


def arguments(fn) -> dict[str, str]:
    """The texts an endpoint takes, filled in; every other argument keeps its default."""
    named = inspect.signature(fn).parameters
    return {name: text for name, text in (("text", SENTENCE), ("text_a", SENTENCE), ("text_b", OTHER)) if name in named}


answers = {}
for name, fn in api.endpoints().items():
    try:
        answers[name] = "ok" if fn(**arguments(fn)) else "empty"
    except Exception as error:  # what a caller would see, in one line
        answers[name] = f"{type(error).__name__}: {error}"
print("ANSWERS " + json.dumps(answers))
