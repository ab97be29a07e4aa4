"""servo_ff's cached numba kernels are stamped by the sources they may inline (servo_ff.numba_cache): an edit of
models/fastmath.py alone (inlined by models/kernels.py) or models/friction.py (inlined by the MuJoCo servo kernels)
changes the stamp numba compares, so the stale machine code is not loaded."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("numba")

from servo_ff import numba_cache  # noqa: E402
from servo_ff.dynamics.eq19_kernel import eq19_clamped  # noqa: E402
from servo_ff.models import fastmath, friction, kernels, streaming  # noqa: E402


def _touched(path: str):
    """Context: ``path``'s mtime one second later, restored after."""

    class Touch:
        def __enter__(self):
            self.st = os.stat(path)
            os.utime(path, ns=(self.st.st_atime_ns, self.st.st_mtime_ns + 1_000_000_000))

        def __exit__(self, *exc):
            os.utime(path, ns=(self.st.st_atime_ns, self.st.st_mtime_ns))

    return Touch()


def test_servo_ff_kernels_use_the_dependency_locator():
    for dispatcher in (eq19_clamped, streaming.stream_rows):
        assert type(dispatcher._cache._impl.locator).__name__ == "DependencyStampLocator"


@pytest.mark.parametrize(
    "kernel_file,inlined",
    [(kernels.__file__, fastmath.__file__), (eq19_clamped._cache._impl.locator._py_file, friction.__file__)],
)
def test_an_edit_of_an_inlined_module_changes_the_kernels_stamp(kernel_file, inlined):
    before = numba_cache.source_stamp(kernel_file)
    with _touched(inlined):
        assert numba_cache.source_stamp(kernel_file) != before
    assert numba_cache.source_stamp(kernel_file) == before


def test_functions_outside_servo_ff_keep_numbas_locators(tmp_path):
    import numba

    src = tmp_path / "elsewhere.py"
    src.write_text("def f(x):\n    return x + 1\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("elsewhere", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    f = numba.njit(cache=True)(mod.f)
    assert f(1) == 2
    assert type(f._cache._impl.locator).__name__ != "DependencyStampLocator"
