"""Run by tests/hub/test_hub_endpoints.py (and test_medium_model.py, test_cuda.py) in a process of its own, with
MODEL_ID set: import the app on that model, call every endpoint as an API caller would (a sentence, the defaults), print
{endpoint: "ok" or its error} as JSON, then {endpoint: the answer's size} as the API sends it (json.dumps of the
outputs, as /call/<endpoint> does), and the device the model ran on. ``PROBE_REPEAT=k`` sends the sentences k times
over (a long text)."""

import inspect
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import app  # noqa: F401  (builds the page on MODEL_ID's model, as the Space does)
from transformer.explorer import runner
from transformer.explorer.page import api

# Two words swapped: as many tokens in any tokenizer, as /patching needs.
SENTENCE, OTHER = "a wonderful film , the acting was dull", "a dull film , the acting was wonderful"
REPEAT = int(os.environ.get("PROBE_REPEAT", "1"))
SENTENCE, OTHER = " ".join([SENTENCE] * REPEAT), " ".join([OTHER] * REPEAT)


def arguments(fn) -> dict[str, str]:
    """The texts an endpoint takes, filled in; every other argument keeps its default."""
    named = inspect.signature(fn).parameters
    return {name: text for name, text in (("text", SENTENCE), ("text_a", SENTENCE), ("text_b", OTHER)) if name in named}


answers, sizes = {}, {}
for name, fn in api.endpoints().items():
    try:
        answer = fn(**arguments(fn))
        answers[name], sizes[name] = "ok" if answer else "empty", len(json.dumps([answer]))
    except Exception as error:  # what a caller would see, in one line
        answers[name] = f"{type(error).__name__}: {error}"
print("ANSWERS " + json.dumps(answers))
print("SIZES " + json.dumps(sizes))
print("DEVICE " + json.dumps(str(next(runner.get_model()[0].model.parameters()).device)))
