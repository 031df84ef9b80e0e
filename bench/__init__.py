"""The benchmarks, run from the repository root as modules: ``.venv/bin/python -m bench.run``."""
