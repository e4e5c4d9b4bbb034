"""The behavioural suite: negation, contrast, robustness and identity tests, and how to run them.

``build_suite()`` makes the tests (``suite.py``, words in ``words.py``); ``run_suite(tests, probabilities)``
scores any model given as texts -> P(positive); ``summarise`` turns the results into the figures that
``metrics.json`` and the model card keep. ``python -m transformer.behaviour`` prints the table.
"""

from .run import TestResult, run_suite, summarise
from .suite import PARTS, Test, build_suite

__all__ = ["PARTS", "Test", "TestResult", "build_suite", "run_suite", "summarise"]
