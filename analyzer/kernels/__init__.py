"""Compiled (numba) inner loops: the hot paths of validation and rollouts, over plain int arrays.

Importing the package loads numba's array-math module once, with ``scipy.linalg`` and ``cffi`` hidden
from it: numba imports scipy.linalg (about 0.2 s of CPU, a third of what loading the kernels costs a
process) only to find BLAS for ``np.dot`` and ``np.linalg`` in compiled code, and cffi (with its C
parser, ~0.05 s) only to call cffi functions from compiled code; no kernel here uses either
(``tests/test_imports.py`` checks). A module already loaded is not hidden.

:func:`load_cached` loads a kernel's compiled code from numba's on-disk cache without the set-up numba
does before its first compile (about 0.25 s of CPU a process, more than the load itself).
"""

from __future__ import annotations

import sys
from typing import Any


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


def load_cached(dispatcher: Any, signature: tuple[Any, ...]) -> None:
    """Make ``dispatcher`` ready for arguments of the types ``signature`` (a tuple of numba types, as
    numba keys its cache by), from numba's on-disk cache when it holds it.

    Before any cached load numba refreshes its whole typing and lowering context (imports of every
    implementation module, ~2,000 registrations: ~0.25 s of CPU) and, on a first call, types every
    argument in Python and reads every installed package's entry points (numpy.ma and
    importlib.metadata: ~0.08 s). A cached kernel needs none of it: its code is object code, linked
    against numba's runtime (initialised here, as numba does). So the cached overload is loaded by
    numba's own cache and dispatcher, with only that refresh left out; a miss (nothing cached, a stale
    entry, another CPU) compiles as numba always does, the full set-up included. The signature must be
    the exact type of the arguments later calls pass (else those calls go numba's usual way: slower,
    never wrong; ``tests/test_validate_raw.py`` checks that the validator's calls match).
    """
    if signature in dispatcher.overloads:
        return
    cache = dispatcher._cache
    if not (hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")):
        dispatcher.compile(signature)  # another numba's internals: its usual way
        return
    from numba.core.runtime import nrt

    def load_overload(sig: Any, target_context: Any) -> Any:
        nrt.rtsys.initialize(target_context)  # what numba's refresh does that the loaded code needs
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(sig, target_context)
        return None  # an I/O error the guard swallowed: compiled as usual

    cache.load_overload = load_overload  # this cache, this call only (the instance attribute hides the method)
    try:
        dispatcher.compile(signature)  # a hit: numba's own cache-hit path; a miss: its compiler, in full
    finally:
        del cache.load_overload
