"""Run by tests/hub/test_hub_endpoints.py (and test_medium_model.py, test_cuda.py) in a process of its own, with
MODEL_ID set: import the app on that model, call every endpoint as an API caller would (a sentence, the defaults), print
{endpoint: "ok" or its error} as JSON, then {endpoint: the answer's size} as the API sends it (json.dumps of the
outputs, as /call/<endpoint> does), and the device the model ran on. ``PROBE_REPEAT=k`` sends the sentences k times
over (a long text); ``PROBE_SUITE_SAMPLE=1`` runs the behavioural suite's first test of each part and capability
(every part and capability its report has, a fifth of its texts) instead of all 96."""

import inspect
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import app  # builds the page on MODEL_ID's model, as the Space does
from transformer.behaviour import build_suite
from transformer.explorer import runner
from transformer.explorer.corpus import model_files
from transformer.explorer.page import api
from transformer.explorer.views import behaviour

# Two words swapped: as many tokens in any tokenizer, as /patching needs.
SENTENCE, OTHER = "a wonderful film , the acting was dull", "a dull film , the acting was wonderful"
REPEAT = int(os.environ.get("PROBE_REPEAT", "1"))
SENTENCE, OTHER = " ".join([SENTENCE] * REPEAT), " ".join([OTHER] * REPEAT)


def sampled_suite(*args) -> list:
    """The suite's first test of each part and capability."""
    tests = build_suite(*args)
    return [
        test
        for test in tests
        if next(t for t in tests if (t.part, t.capability) == (test.part, test.capability)) is test
    ]


if os.environ.get("PROBE_SUITE_SAMPLE") == "1":
    model_files.build_suite = behaviour.build_suite = sampled_suite  # where the report and the endpoint read it


def arguments(fn) -> dict[str, str]:
    """The texts an endpoint takes, filled in; every other argument keeps its default."""
    named = inspect.signature(fn).parameters
    return {name: text for name, text in (("text", SENTENCE), ("text_a", SENTENCE), ("text_b", OTHER)) if name in named}


answers, sizes = {}, {}
for name, fn in api.endpoints(app.REGISTRY).items():
    try:
        answer = fn(**arguments(fn))
        answers[name], sizes[name] = "ok" if answer else "empty", len(json.dumps([answer]))
    except Exception as error:  # what a caller would see, in one line
        answers[name] = f"{type(error).__name__}: {error}"
print("ANSWERS " + json.dumps(answers))
print("SIZES " + json.dumps(sizes))
print("DEVICE " + json.dumps(str(next(runner.get_model()[0].model.parameters()).device)))
