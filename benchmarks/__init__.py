"""The scripts behind every published figure, run from the repository's root as ``python -m benchmarks.NAME``.

benchmarks/README.md maps each figure to its command and results file; the evaluation pages (docs/evaluation*.md)
are built from the files.
"""
