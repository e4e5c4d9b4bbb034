"""The model card's "what is still wrong": the project's targets for reading people alike and reading negation,
each beside the run's figure from its metrics.json, and whether it is met.

A target whose figure the run did not record (an older metrics.json) is left out of the table.
"""

from collections.abc import Callable
from dataclasses import dataclass

from .probe import frames_outside

FORMATS = {"share": "{:.1%}", "score": "{:.3f}", "count": "{:g}"}


@dataclass(frozen=True)
class Target:
    """One row: ``figure`` reads the value from metrics.json; it is met at ``bound`` or below (``at_most``) or at
    ``bound`` or above; ``kind`` (a key of ``FORMATS``) says how both are printed."""

    what: str
    figure: Callable[[dict], float]
    bound: float
    at_most: bool
    kind: str = "share"

    def met(self, value: float) -> bool:
        return value <= self.bound if self.at_most else value >= self.bound

    def show(self, value: float) -> str:
        return FORMATS[self.kind].format(value)


def _frames_outside(metrics: dict) -> int:
    """How many of the probe's neutral frames have a mean P(positive) outside [0.35, 0.65] (``NEUTRAL_BAND``)."""
    return len(frames_outside(metrics["probe"]["frame_means"]))


def _identity(half: str, figure: str) -> Callable[[dict], float]:
    """A figure of the probe's identity terms, for one half of the word list."""
    return lambda metrics: metrics["probe"]["identity"][half][figure]


def _suite_test(name: str) -> Callable[[dict], float]:
    """A test of the behavioural suite's test part (templates and words that selection never saw)."""
    return lambda metrics: metrics["behaviour"]["test"]["tests"][name]


TARGETS = [
    *(
        target
        for half, label in (("held_out", "held-out half"), ("training", "training half"))
        for target in (
            Target(f"identity terms, {label}: median spread of P(positive)", _identity(half, "median_spread"), 0.15,
                   at_most=True, kind="score"),
            Target(f"identity terms, {label}: neutral frames read as a clear opinion",
                   _identity(half, "clear_opinion"), 0.10, at_most=True),
        )
    ),
    Target("neutral frames whose mean P(positive) is outside [0.35, 0.65]", _frames_outside, 0, True, kind="count"),
    Target("a held-out name changes the class", lambda m: m["probe"]["invariance"]["names"]["held_out"], 0.10, True),
    Target("a held-out place changes the class", lambda m: m["probe"]["invariance"]["places"]["held_out"], 0.10, True),
    Target("a number changes the class", lambda m: m["probe"]["invariance"]["numbers"], 0.10, True),
    *(Target(f"{kind} change the class", _suite_test(f"robustness: {kind}"), 0.15, True)
      for kind in ("urls", "handles", "typos")),
    Target('a change of mind over time ("used to ... but now") fails', lambda m: m["probe"]["temporal"], 0.25, True),
    Target("who holds the opinion fails", lambda m: m["probe"]["holder"], 0.25, True),
    Target("positive selection rows with a negation word: accuracy",
           lambda m: m["composition"]["negation"]["pooled"]["positive_accuracy"], 0.75, at_most=False, kind="score"),
    Target("CAD dev pair consistency", lambda m: m["composition"]["cad"]["pair_consistency"], 0.72, False, "score"),
    Target("SST-2 dev accuracy", lambda m: m["dev"]["sst2"], 0.82, at_most=False, kind="score"),
]  # fmt: skip


def describe_targets(metrics: dict) -> str:
    """The card's table of targets, and how many of them this run misses."""
    rows, missed = [], 0
    for target in TARGETS:
        try:
            value = target.figure(metrics)
        except (KeyError, TypeError):  # a figure that only newer runs record
            continue
        if value is None:  # nothing to measure it on (no positive row with a negation word)
            continue
        met = target.met(value)
        bound = f"{'≤' if target.at_most else '≥'} {target.show(target.bound)}"
        rows.append(f"| {target.what} | {bound} | {target.show(value)} | {'yes' if met else '**no**'} |")
        missed += not met
    if not rows:
        return ""
    return "\n".join([
        "",
        "",
        "What is still wrong: the project's targets for reading people alike and reading negation, beside this "
        "model's figures above (the suite's test part, the probe's held-out words, the selection sets):",
        "",
        "| target | bound | this model | met |",
        "| --- | ---: | ---: | --- |",
        *rows,
        "",
        f"{missed} of the {len(rows)} targets are missed." if missed else "Every target in the table is met.",
    ])  # fmt: skip
