"""The seed table of ``benchmarks/seed_sweep.sh``'s runs: per recipe, the mean and range over its seeds of each figure.

    python -m benchmarks.seed_table runs/sweep base clp

Reads each ``NAME-sSEED`` folder's ``evaluate.jsonl``, ``behaviour.json`` (the suite's selection part) and
``probe.json``, and prints a Markdown table: one row per figure, one column per recipe ("mean (min–max), n seeds").
"""

import argparse
import json
import statistics
from pathlib import Path

from transformer.training.probe import frames_outside

SETS = {"glue_dev.tsv": "SST-2 dev", "yelp/dev.tsv.gz": "Yelp dev", "pros_cons/dev.tsv.gz": "pros/cons dev",
        "tweets/dev.tsv.gz": "tweets dev"}  # fmt: skip
WORST = ("negation", "negation at a distance", "expectation denied", "contrast")


def figures(run: Path) -> dict[str, float]:
    """One run's figures, by row name."""
    found, positives = {}, []  # positives: (rows, accuracy) of the positive rows with a negation word, per set
    for line in (run / "evaluate.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["data"] in SETS:
            found[SETS[row["data"]]] = row["accuracy"]
            positives.append((row["negation"]["positives"], row["negation"]["positive_accuracy"] or 0.0))
        if row["data"] == "cad/dev.tsv.gz":
            found["CAD dev pairs"] = row["pair_consistency"]
    found["positive dev rows with a negation word"] = sum(n * a for n, a in positives) / sum(n for n, _ in positives)
    suite = json.loads((run / "behaviour.json").read_text(encoding="utf-8"))["selection"]
    composition = {name: rate for name, rate in suite["tests"].items() if name.split(":")[0] in WORST}
    found["worst selection negation / contrast test"] = max(composition.values())
    found["suite selection: identity neutral swaps"] = suite["identity"]["neutral"]["swap_changes_class"]
    probe = json.loads((run / "probe.json").read_text(encoding="utf-8"))
    for half in ("held_out", "training"):
        found[f"probe, {half} half: median spread"] = probe["identity"][half]["median_spread"]
        found[f"probe, {half} half: clear opinion"] = probe["identity"][half]["clear_opinion"]
    found["probe: frames with a mean outside [0.35, 0.65]"] = len(frames_outside(probe["frame_means"]))
    for kind in ("names", "places"):
        found[f"probe: held-out {kind} change the class"] = probe["invariance"][kind]["held_out"]
    found["probe: temporal fails"], found["probe: holder fails"] = probe["temporal"], probe["holder"]
    return found


def cell(values: list[float]) -> str:
    mean = statistics.fmean(values)
    return f"{mean:.3f} ({min(values):.3f}–{max(values):.3f}), {len(values)}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.seed_table", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the sweep's folder (runs/sweep)")
    parser.add_argument("names", nargs="+", help="recipe names, as given to seed_sweep.sh")
    args = parser.parse_args(argv)
    done = {name: [figures(run) for run in sorted(args.folder.glob(f"{name}-s*")) if (run / "probe.json").exists()]
            for name in args.names}  # fmt: skip
    rows = list(next(runs for runs in done.values() if runs)[0])
    print("| figure | " + " | ".join(f"{name}: mean (range), seeds" for name in args.names) + " |")
    print("| --- |" + " ---: |" * len(args.names))
    for row in rows:
        cells = [cell([run[row] for run in runs]) if runs else "–" for runs in done.values()]
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
