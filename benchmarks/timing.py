"""Interleaved timing: every candidate runs once per round, so machine noise hits them alike."""

import statistics
import time
from collections.abc import Callable


def measure(candidates: dict[str, Callable[[], object]], rounds: int = 30, warmup: int = 3) -> dict[str, list[float]]:
    """Time each callable ``rounds`` times, round-robin, after ``warmup`` untimed rounds.

    Returns:
        seconds per call for each name, in the order measured.
    """
    for _ in range(warmup):
        for fn in candidates.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def median_ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def p95_ms(samples: list[float]) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
