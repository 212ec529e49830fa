import importlib
import os
import pkgutil
import sys

from numba.core.dispatcher import Dispatcher
from numba.core.registry import CPUDispatcher

import smartboost
from smartboost._cache import KERNEL_DIRS, _package_stamp, sources_stamp


def _compiled_functions():
    for folder in KERNEL_DIRS:
        package = importlib.import_module(f"smartboost.{folder}")
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if isinstance(value, CPUDispatcher) and value.__module__ == module.__name__:
                    yield value


def test_every_kernel_is_keyed_on_all_kernel_sources():
    """Numba would key each cached function on its own file only: a kernel with another
    module's function compiled in would load stale code after that module alone changed."""
    functions = list(_compiled_functions())
    assert len(functions) > 50
    for function in functions:
        assert function._cache._cache_file._source_stamp == _package_stamp(), function.__qualname__
    assert len(_package_stamp()) == sum(
        1 for folder in KERNEL_DIRS
        for name in os.listdir(os.path.join(os.path.dirname(smartboost.__file__), folder)) if name.endswith(".py"))


def test_stamp_changes_with_any_kernel_source(tmp_path):
    for folder in KERNEL_DIRS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    stamp = sources_stamp(tmp_path)
    (tmp_path / KERNEL_DIRS[1] / "a.py").write_text("x = 12\n")
    edited = sources_stamp(tmp_path)
    assert edited != stamp
    (tmp_path / KERNEL_DIRS[0] / "b.py").write_text("")
    added = sources_stamp(tmp_path)
    assert added not in (stamp, edited)
    (tmp_path / "engine.py").write_text("")  # outside the kernel folders
    assert sources_stamp(tmp_path) == added


def _compiled_outside_kernel_folders(package):
    """``module.name`` of every compiled function defined in a module of ``package`` outside
    its kernel folders (modules whose optional dependencies are missing are passed over)."""
    outside = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=lambda name: None):
        if info.name.split(".")[1] in KERNEL_DIRS:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        outside += [f"{info.name}.{name}" for name, value in vars(module).items()
                    if isinstance(value, Dispatcher) and value.__module__ == info.name]
    return outside


def test_compiled_functions_live_in_the_kernel_folders():
    """The cache key covers the kernel folders only: a cached function compiled elsewhere would
    load stale code after a kernel it calls changed."""
    assert _compiled_outside_kernel_folders(smartboost) == []


def test_a_compiled_function_outside_the_kernel_folders_is_found(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    for folder in ("", *KERNEL_DIRS):
        (package / folder).mkdir(exist_ok=True)
        (package / folder / "__init__.py").write_text("")
    compiled = "from numba import njit\n\n\n@njit\ndef f(x):\n    return x\n"
    (package / KERNEL_DIRS[0] / "inside.py").write_text(compiled)
    (package / "outside.py").write_text(compiled)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert _compiled_outside_kernel_folders(importlib.import_module("pkg")) == ["pkg.outside.f"]
    finally:
        for name in [name for name in sys.modules if name == "pkg" or name.startswith("pkg.")]:
            del sys.modules[name]
