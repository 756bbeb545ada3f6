"""The collector's settings for the long commands (analyzer.running.collector), and the caches the audit's own process loads
while its Dask workers analyse (analyzer.audit.warm.warm_reasons)."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from analyzer.running import collector

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_collector(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    old = gc.get_threshold()
    monkeypatch.setattr(collector, "settled", False)
    yield
    gc.set_threshold(*old)


def test_settle_collects_then_freezes_and_collects_the_young_less_often(fresh_collector: None) -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the collector frees it

    before = gc.get_freeze_count()
    kept = [[i] for i in range(5_000)]  # containers alive when it settles: frozen
    gone = weakref.ref(Node())  # garbage already: collected, not frozen
    collector.settle()
    assert gc.get_threshold() == (collector.YOUNG, 10, 10)
    assert gc.get_freeze_count() >= before + len(kept)
    assert gone() is None
    frozen = gc.get_freeze_count()
    collector.settle()  # once a process: a second call freezes nothing more
    assert gc.get_freeze_count() == frozen


def test_the_commands_settle_after_their_imports() -> None:
    """players (as audit and decisions) settles the collector in its own process, once its imports are done (a
    fresh process: the tests' own settled long ago): the thresholds relaxed and the imports' objects frozen."""
    code = (
        "import gc, sys\n"
        "from click.testing import CliRunner\n"
        "from analyzer.cli import cli\n"
        "from analyzer.running import collector\n"
        "assert gc.get_threshold()[0] != collector.YOUNG and gc.get_freeze_count() == 0\n"
        "r = CliRunner().invoke(cli, ['players', 'samples/legal.jsonl', '--format', 'csv'])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert collector.settled and gc.get_threshold()[0] == collector.YOUNG and gc.get_freeze_count() > 100_000\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_warm_reasons_loads_the_reasons_kernel() -> None:
    """In a fresh process: the kernel strategy.score runs is not loaded, then is (and scikit-learn is not
    imported: the player table's robust line is :mod:`analyzer.analysis.robust`); scipy's chain that numba's imports
    would hide from other threads is imported before the thread starts (the audit's main thread imports scipy)."""
    code = (
        "from analyzer.kernels.features import score_options\n"
        "assert not score_options.overloads\n"
        "import sys\n"
        "assert 'sklearn.linear_model' not in sys.modules\n"
        "from analyzer.audit.warm import warm_reasons_soon\n"
        "thread = warm_reasons_soon()\n"
        # numba's modules hide the scipy modules not loaded yet from every thread while they import: none is left
        "assert 'scipy.linalg.cython_blas' in sys.modules\n"
        "thread.join()\n"
        "assert score_options.overloads\n"
        "assert 'sklearn' not in sys.modules  # the player table's robust fit needs none of it\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300)
