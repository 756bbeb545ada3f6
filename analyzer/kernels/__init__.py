"""Compiled (numba) inner loops: the hot paths of validation and rollouts, over plain int arrays.

numba's own modules load with ``scipy`` and ``cffi`` hidden from them, whenever they load: numba imports
scipy at its import only to check its version, scipy.linalg (about 0.2 s of CPU, a third of what
loading the kernels costs a process) when its array-math module loads, only to find BLAS for ``np.dot``
and ``np.linalg`` in compiled code, and cffi (with its C parser, ~0.05 s) only to call cffi functions
from compiled code; no kernel here uses either (``tests/test_imports.py`` checks). Importing this
package puts a finder first on ``sys.meta_path`` that hides them while those three modules run (a
module already loaded is not hidden); nothing is imported ahead of need, so a process that loads its
kernels from the cache (:func:`load_cached`) never loads numba's array-math module at all (~0.05 s).

:func:`load_cached` loads a kernel's compiled code from numba's on-disk cache without the set-up numba
does before its first compile (about 0.25 s of CPU a process, more than the load itself).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_SCIPY_CHAIN = ("scipy", "scipy.linalg", "scipy.linalg.cython_blas")


def _hidden_scipy() -> list[str]:
    if "scipy.linalg.cython_blas" in sys.modules:
        return []
    # hide the first of the chain not loaded yet: importing a child imports its parents first
    return [next(m for m in _SCIPY_CHAIN if m not in sys.modules)]


#: numba's modules that import scipy or cffi as they run, and what to hide from them.
_HIDE = {
    "numba": _hidden_scipy,  # its version check
    "numba.np.arraymath": _hidden_scipy,  # looks for BLAS
    "numba.core.typing.cffi_utils": lambda: [] if "cffi" in sys.modules else ["cffi"],
}


class _Hiding(importlib.abc.Loader):
    """The module's own loader, run with some modules hidden ("import" of them raises ImportError)."""

    def __init__(self, loader: Any, hide: Any) -> None:
        self.loader, self.hide = loader, hide

    def __getattr__(self, name: str) -> Any:  # get_code, get_source, is_package...: the module's own loader's
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        hidden = self.hide()
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]
        try:
            self.loader.exec_module(module)
        finally:
            for name in hidden:
                del sys.modules[name]


class _HideFromNumba(importlib.abc.MetaPathFinder):
    """Finds the modules of ``_HIDE`` as the rest of ``sys.meta_path`` would, with their loader wrapped."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name not in _HIDE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Hiding(spec.loader, _HIDE[name])
                return spec
        return None


if not any(isinstance(f, _HideFromNumba) for f in sys.meta_path):
    sys.meta_path.insert(0, _HideFromNumba())


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
    never wrong; ``tests/validate/test_validate_raw.py`` checks that the validator's calls match).
    """
    if not hasattr(dispatcher, "overloads") or signature in dispatcher.overloads:
        return  # loaded already, or no dispatcher at all (NUMBA_DISABLE_JIT, a test's stand-in): nothing to load
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


class Ready:
    """Loads a module's kernels by name, once a process each (:func:`load_cached`): ``Ready(globals(), SIGNATURES)``
    then ``ready("kernel", ...)`` before the kernels' first calls; ``signatures`` maps each name to its exact
    argument types."""

    def __init__(self, namespace: dict[str, Any], signatures: dict[str, tuple[Any, ...]]) -> None:
        self.namespace, self.signatures = namespace, signatures
        self.loaded: set[str] = set()

    def __call__(self, *names: str) -> None:
        for name in names:
            if name not in self.loaded:
                load_cached(self.namespace[name], self.signatures[name])
                self.loaded.add(name)
