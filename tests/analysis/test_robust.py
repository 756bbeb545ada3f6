"""Huber's robust line (analysis.robust): scikit-learn's HuberRegressor's answer, without importing scikit-learn."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from analyzer.analysis.robust import huber_line


def _points(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A level curve's kind of points: log skill against a heavy-tailed z, a tenth of them pulled far up in a third
    of the seeds (cheaters the line must not follow)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 200))
    x = np.log(np.clip(rng.exponential(1.0, n), 1e-3, None))
    y = 0.5 + 1.3 * x + rng.standard_t(3, n)
    if seed % 3 == 0:
        k = max(1, n // 10)
        y[:k] += rng.normal(8.0, 2.0, k)
    return x, y


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_the_line_is_scikit_learns(seed: int) -> None:
    from sklearn.linear_model import HuberRegressor

    x, y = _points(seed)
    reg = HuberRegressor().fit(x[:, None], y)
    c, w, s = huber_line(x, y)
    assert np.allclose(c + w * x, reg.predict(x[:, None]), rtol=0, atol=1e-6)
    assert abs(s - reg.scale_) < 1e-6


def test_far_points_do_not_pull_the_line() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 1.0, 60)
    y = 2.0 - 0.5 * x + rng.normal(0.0, 0.1, 60)
    y[:6] += 50.0  # a tenth far off: least squares' intercept moves by ~5
    c, w, _ = huber_line(x, y)
    assert abs(c - 2.0) < 0.2 and abs(w + 0.5) < 0.2
    assert abs(np.polyfit(x, y, 1)[1] - 2.0) > 3.0  # the same points pull the least-squares line


@pytest.mark.parametrize(("x", "y"), [([], []), ([1.0, np.nan], [0.0, 1.0]), ([1.0, 2.0], [0.0, np.inf]),
                                      ([1.0, 2.0], [0.0])])
def test_no_points_or_points_that_are_not_finite_are_refused(x: list[float], y: list[float]) -> None:
    with pytest.raises(ValueError, match="huber_line"):
        huber_line(np.array(x), np.array(y))


def test_the_player_table_imports_no_scikit_learn() -> None:
    """A room with enough peers for the level curve: the table is made without importing scikit-learn (~1.3 CPU-s
    a process) or scipy.stats, and its level_z is the one scikit-learn's regressor gives."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from analyzer.analysis.players import _level_z\n"
        "rng = np.random.default_rng(1)\n"
        "skill = rng.uniform(0.5, 4.0, 20); dd = rng.normal(0.0, 1.0, 20); ok = np.ones(20, bool)\n"
        "z = _level_z(dd, skill, ok)\n"
        "assert np.isfinite(z).all()\n"
        "assert 'sklearn' not in sys.modules and 'scipy.stats' not in sys.modules, 'imported'\n"
        "from sklearn.linear_model import HuberRegressor\n"
        "x = np.log(skill); r = dd - HuberRegressor().fit(x[:, None], dd).predict(x[:, None])\n"
        "spread = max(1.0, 1.4826 * float(np.median(np.abs(r - np.median(r)))))\n"
        "lever = 1 / 20 + (x - x.mean()) ** 2 / ((x - x.mean()) ** 2).sum()\n"
        "assert np.allclose(z, r / (spread * np.sqrt(1 + lever)), rtol=0, atol=1e-6)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300)
