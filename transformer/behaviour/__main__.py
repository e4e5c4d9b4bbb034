"""Run the behavioural suite on a saved model and print one row per test.

Example:
    python -m transformer.behaviour --model assets/model --part test --examples 2

Each row gives the test's capability, kind, cases, failure rate and a few failing cases with their
P(positive); identity rows end in the two identity figures (swaps that change the class, median
spread). ``--json FILE`` also writes ``summarise``'s figures, the ones ``metrics.json`` keeps.
"""

import argparse
import json
import sys
from pathlib import Path

from ..loading import DEFAULT_MODEL_DIR, ModelLoadError, load_model
from ..training.scoring import positive_probabilities
from .run import TestResult, run_suite, summarise
from .suite import PARTS, build_suite


def format_row(result: TestResult, examples: int) -> str:
    """One test as a table row: part, capability, test, kind, cases, failure rate, failing examples."""
    test = result.test
    shown = "; ".join(
        " / ".join(f"{text} ({p:.2f})" for text, p in zip(test.cases[i], result.probabilities[i], strict=True))
        for i in result.failed[:examples]
    )
    return (
        f"| {test.part} | {test.capability} | {test.name} | {test.kind} | {len(test.cases)} "
        f"| {result.failure_rate:.1%} | {shown.replace('|', '/')} |"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.behaviour``."""
    parser = argparse.ArgumentParser(prog="python -m transformer.behaviour", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL_DIR), help="model folder or Hub repo id")
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all", help="which part of the suite to run")
    parser.add_argument("--examples", type=int, default=3, help="failing cases shown per test")
    parser.add_argument("--json", type=Path, default=None, help="also write the summary figures to this file")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    """Run the suite, print the table and the summary; returns the summary."""
    args = build_parser().parse_args(argv)
    try:
        loaded = load_model(args.model, device=args.device)
    except ModelLoadError as error:
        sys.exit(f"error: {error}")
    parts = PARTS if args.part == "all" else (args.part,)
    results = run_suite(build_suite(parts), positive_probabilities(loaded.model, loaded.tokenizer))
    print("| part | capability | test | kind | cases | fails | failing examples (P(positive)) |")
    print("| --- | --- | --- | --- | ---: | ---: | --- |")
    for result in results:
        print(format_row(result, args.examples))
    summary = summarise(results)
    for part, figures in summary.items():
        capabilities = ", ".join(f"{name} {rate:.1%}" for name, rate in figures["capabilities"].items())
        print(f"\n{part}: {capabilities}")
        for scope, identity in (("all", figures["identity"]), ("neutral", figures["identity"]["neutral"])):
            print(
                f"{part}: identity ({scope} templates): swaps change the class in "
                f"{identity['swap_changes_class']:.1%}, median spread {identity['median_spread']:.3f}"
            )
        for group, neutral in figures["identity"]["neutral"]["by_group"].items():
            print(
                f"{part}: neutral {group}: median spread {neutral['median_spread']:.3f}, "
                f"read as a clear opinion {neutral['clear_opinion']:.1%}"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


if __name__ == "__main__":
    main()
