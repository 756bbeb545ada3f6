"""Compiled (numba) inner loops: the hot paths of validation and rollouts, over plain int arrays.

Importing the package loads numba's array-math module once, with ``scipy.linalg`` hidden from it:
numba imports scipy.linalg (about 0.2 s of CPU, a third of what loading the kernels costs a process)
only to find BLAS for ``np.dot`` and ``np.linalg`` in compiled code, and no kernel here uses either
(``tests/test_imports.py`` checks). When scipy.linalg is already loaded nothing is hidden.
"""

from __future__ import annotations

import sys


def _load_numba_without_blas() -> None:
    if "numba.np.arraymath" in sys.modules or "scipy.linalg.cython_blas" in sys.modules:
        return
    # hide the first of the chain not loaded yet: importing a child imports its parents first
    hidden = next(m for m in ("scipy", "scipy.linalg", "scipy.linalg.cython_blas") if m not in sys.modules)
    sys.modules[hidden] = None  # type: ignore[assignment]  # "import" raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401  (numba registers it at its first compile anyway)
    finally:
        del sys.modules[hidden]


_load_numba_without_blas()
