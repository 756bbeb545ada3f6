"""Compiled (numba) inner loops: the hot paths of validation and rollouts, over plain int arrays.

Importing the package loads numba's array-math module once, with ``scipy.linalg`` and ``cffi`` hidden
from it: numba imports scipy.linalg (about 0.2 s of CPU, a third of what loading the kernels costs a
process) only to find BLAS for ``np.dot`` and ``np.linalg`` in compiled code, and cffi (with its C
parser, ~0.05 s) only to call cffi functions from compiled code; no kernel here uses either
(``tests/test_imports.py`` checks). A module already loaded is not hidden.
"""

from __future__ import annotations

import sys


def _load_numba_without_blas() -> None:
    if "numba.np.arraymath" in sys.modules:
        return
    hidden = []
    if "scipy.linalg.cython_blas" not in sys.modules:
        # hide the first of the chain not loaded yet: importing a child imports its parents first
        hidden.append(next(m for m in ("scipy", "scipy.linalg", "scipy.linalg.cython_blas") if m not in sys.modules))
    if "cffi" not in sys.modules and "numba.core.typing.cffi_utils" not in sys.modules:
        hidden.append("cffi")
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # "import" raises ImportError
    try:
        import numba.core.typing.cffi_utils  # noqa: F401  (numba imports it at its first compile or cache load)
        import numba.np.arraymath  # noqa: F401  (numba registers it at its first compile anyway)
    finally:
        for name in hidden:
            del sys.modules[name]


_load_numba_without_blas()
