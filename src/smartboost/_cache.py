"""Numba's on-disk cache, keyed on every kernel source instead of one file.

Numba keys a cached function on its own source file only (modification time and size). A
kernel compiled with another module's function in it (``grow_tree`` calls ``split``'s scans,
the objectives call ``exp``) would then load from the cache with the old code after only the
other file changed, as after a ``git pull`` in an editable install: stale results, or a crash
when a signature changed. So every compiled function of smartboost is keyed on all the files of
:data:`KERNEL_DIRS` and :data:`KERNEL_CONSTANTS`: an edit of any recompiles them all, which a package
upgrade does anyway, since it rewrites every file. Importing this module installs the key.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from numba.core.caching import CacheImpl

_PACKAGE = Path(__file__).resolve().parent

KERNEL_DIRS = ("_kernels", "objectives")
"""The package folders whose modules hold compiled (``@njit(cache=True)``) functions."""

KERNEL_CONSTANTS = ("_common.py",)
"""Modules outside those folders whose constants the kernels read: numba compiles a global's
value into the code, so an edit of one must recompile them too."""


def sources_stamp(root: Path) -> tuple:
    """Name, modification time and size of every ``.py`` file of ``root``'s kernel folders and
    of :data:`KERNEL_CONSTANTS`."""
    files = sorted([*(path for folder in KERNEL_DIRS for path in (root / folder).glob("*.py")),
                    *(root / name for name in KERNEL_CONSTANTS if (root / name).exists())])
    stats = [path.stat() for path in files]
    return tuple((str(path.relative_to(root)), st.st_mtime, st.st_size) for path, st in zip(files, stats))


@cache
def _package_stamp() -> tuple:
    return sources_stamp(_PACKAGE)


class KernelSourcesLocator:
    """Numba cache locator for smartboost's functions: the folder numba's own locators choose,
    with :func:`sources_stamp` of the package as the source stamp."""

    numba_locators = tuple(CacheImpl._locator_classes)

    @classmethod
    def from_function(cls, py_func, py_file):
        """A numba locator for ``py_func`` keyed on every kernel source, or None outside
        smartboost (numba's own locators take it)."""
        if _PACKAGE not in Path(py_file).resolve().parents:
            return None
        for numba_locator in cls.numba_locators:
            locator = numba_locator.from_function(py_func, py_file)
            if locator is not None:
                locator.get_source_stamp = _package_stamp
                return locator
        return None


if KernelSourcesLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes = [KernelSourcesLocator, *CacheImpl._locator_classes]
