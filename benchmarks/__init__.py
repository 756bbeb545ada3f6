"""The scripts behind every published figure, run from the repository's root as ``python -m benchmarks.NAME``.

benchmarks/README.md maps each figure to its command and results file; docs/evaluation.md is built from the files.
"""
