import importlib
import os
import pkgutil

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
