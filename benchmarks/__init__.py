"""Speed benchmarks; run them all with `make bench` (python -m benchmarks.run)."""
