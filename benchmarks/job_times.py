"""Each heavy endpoint at its worst legal input, as a queued job runs it: ``python -m benchmarks.job_times``.

A victim's light call waits at most for one running job to end (issue 36), so what bounds that wait is the
longest any one job runs. Each endpoint of ``admission.HEAVY_WEIGHTS`` is called in
process, on the bundled model and torch on one thread as the app sets it, with the largest inputs its checks
allow: a 10,000-character text (the model reads its first max_len tokens), 128 Integrated Gradients steps,
delete mode, every head, the largest limits. Printed: the median and the worst of ``--repeats`` calls in
seconds, and the answer's size as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from transformer.explorer import runner, views
from transformer.explorer.serving import admission

FILLER = "the film was a quiet , funny and completely charming surprise but the plot is thin".split()
LONGEST = (" ".join(FILLER) + " ") * 700  # over 10,000 characters: cut below
TEXT = LONGEST[: runner.analysis.MAX_INPUT_CHARS]
OTHER = TEXT.replace("charming", "dreadful")  # as many tokens: /patching needs one length


def worst_calls() -> dict:
    """{endpoint: a call at its worst legal input}."""
    steps = views.attributions.MAX_IG_STEPS
    model = runner.get_model()[0].model
    every_head = [
        f"L{layer} H{head}" for layer in range(1, model.num_layers + 1) for head in range(1, 1 + model.num_heads)
    ]
    return {
        "walkthrough": lambda: views.walkthrough.walkthrough(TEXT, step=9),
        "export": lambda: views.export.export(TEXT),
        "faithfulness": lambda: views.attributions.faithfulness(TEXT, mode="delete", steps=steps),
        "faithfulness (pad)": lambda: views.attributions.faithfulness(TEXT, mode="pad", steps=steps),
        "attributions": lambda: views.attributions.attributions(TEXT, steps=steps),
        "knockout": lambda: views.knockout.knockout(TEXT, every_head[: model.num_heads]),  # as many as its check allows
        "head_importance": lambda: views.knockout.head_importance(TEXT),
        "perturb": lambda: views.perturb.perturb(TEXT, position=0, mode="remove"),
        "word_order": lambda: views.word_order.word_order(TEXT),
        "compare": lambda: views.compare.compare(TEXT, OTHER),
        "patching": lambda: views.patching.patching(TEXT, OTHER),
        "routes": lambda: views.routes.routes(TEXT, threshold=views.routes.THRESHOLDS[0] / 100),
        "head_atlas": views.head_atlas.head_atlas,
        "errors": lambda: views.errors.errors(limit=views.errors.MAX_SHOWN),
        "behaviour": lambda: views.behaviour.behaviour(limit=5000),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="endpoints to time (default: all)")
    args = parser.parse_args()
    runner.JOB_SECONDS = float("inf")  # time each job whole: the cap is what these times are set against
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(1)  # as app.py
    calls = worst_calls()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'endpoint':<20} {'weight':>6} {'median s':>9} {'worst s':>8} {'answer':>10}")
    for name, call in calls.items():
        if args.only and name.split()[0] not in args.only:
            continue
        answer = call()  # the first call loads what it caches (corpus files, the tokenizer's cache)
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            answer = call()
            seconds.append(time.perf_counter() - start)
        seconds.sort()
        size = len(json.dumps(answer))
        weight = admission.HEAVY_WEIGHTS.get(name.split()[0], admission.LIGHT_COST)
        print(f"{name:<20} {weight:>6.1f} {seconds[len(seconds) // 2]:>9.2f} {seconds[-1]:>8.2f} {size:>10,}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
