import importlib
import os
import pkgutil
import sys

from numba.core.dispatcher import Dispatcher
from numba.core.registry import CPUDispatcher

import smartboost
from smartboost._cache import KERNEL_CONSTANTS, KERNEL_DIRS, _package_stamp, sources_stamp


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
    assert len(_package_stamp()) == len(KERNEL_CONSTANTS) + sum(
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
    (tmp_path / KERNEL_CONSTANTS[0]).write_text("MIN_ROWS = 1000\n")  # constants the kernels compile in
    constants = sources_stamp(tmp_path)
    assert constants != added
    (tmp_path / KERNEL_CONSTANTS[0]).write_text("MIN_ROWS = 50000\n")
    assert sources_stamp(tmp_path) != constants


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


_CACHED_CALL = """
import sys
from smartboost._kernels.binning import _edge_between
assert _edge_between(1.0, 2.0) == 1.5
print(_edge_between._cache._cache_path)
print(sum(_edge_between.stats.cache_hits.values()), sum(_edge_between.stats.cache_misses.values()))
"""


def test_the_cache_goes_to_the_user_cache_folder_when_the_package_folder_is_read_only(tmp_path):
    """An installed package folder may be read-only: the compiled kernels are then cached in the
    user's cache folder (numba's, under ``$XDG_CACHE_HOME``) and loaded from there next time."""
    import shutil
    import subprocess

    package = tmp_path / "site" / "smartboost"
    shutil.copytree(os.path.dirname(smartboost.__file__), package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    # root may write to any folder, so the package's kernel folder is made unwritable for
    # everyone by a file where numba would create its __pycache__ folder
    (package / "_kernels" / "__pycache__").write_text("")
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(tmp_path / "site"), XDG_CACHE_HOME=str(tmp_path / "user-cache"),
               PYTHONDONTWRITEBYTECODE="1")

    def run():
        result = subprocess.run([sys.executable, "-c", _CACHED_CALL], env=env, capture_output=True, text=True,
                                check=True)
        path, counts = result.stdout.split("\n")[:2]
        return path, tuple(int(n) for n in counts.split())

    path, (hits, misses) = run()
    assert path.startswith(str(tmp_path / "user-cache")) and (hits, misses) == (0, 1)
    assert any(name.endswith(".nbi") for name in os.listdir(path))
    assert run() == (path, (1, 0))
