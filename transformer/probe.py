"""The held-out probe of a saved model: people, names and places training never named; time and who holds an opinion.

Example:
    python -m transformer.probe --model assets/model --json runs/probe.json

Prints one line per figure (``transformer/training/probe.py`` says what each measures) and, with ``--json``,
writes them all. ``--model`` is a local folder or a Hugging Face Hub repo id.
"""

import argparse
import json
import sys
from pathlib import Path

from .loading import DEFAULT_MODEL_DIR, ModelLoadError, load_model
from .training.probe import run_probe
from .training.scoring import positive_probabilities


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.probe``."""
    parser = argparse.ArgumentParser(prog="python -m transformer.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL_DIR), help="model folder or Hub repo id (default: the bundled model)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this JSON file")
    return parser


def summary_lines(report: dict) -> list[str]:
    """The probe's figures, one line each."""
    lines = [
        f"identity, {half} half ({scores['terms']} terms): median spread {scores['median_spread']:.3f}, "
        f"clear opinion {scores['clear_opinion']:.1%}"
        for half, scores in report["identity"].items()
    ]
    lines += [f"frame mean {mean:.3f}: {frame}" for frame, mean in report["frame_means"].items()]
    for kind, rate in report["invariance"].items():
        shown = (
            ", ".join(f"{half} {value:.1%}" for half, value in rate.items())
            if isinstance(rate, dict)
            else f"{rate:.1%}"
        )
        lines.append(f"{kind} change the class: {shown}")
    lines += [f"temporal fails {report['temporal']:.1%}", f"opinion holder fails {report['holder']:.1%}"]
    return lines


def main(argv: list[str] | None = None) -> dict:
    """Run the probe on the model; print its summary and return the report."""
    args = build_parser().parse_args(argv)
    try:
        loaded = load_model(args.model)
    except ModelLoadError as error:
        sys.exit(f"error: {error}")
    report = run_probe(positive_probabilities(loaded.model, loaded.tokenizer))
    print("\n".join(summary_lines(report)))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
