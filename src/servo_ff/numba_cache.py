"""numba's disk cache, invalidated by every servo_ff source a kernel may inline (ROS-free).

numba stamps a cached kernel with its own file only: a kernel in ``models/kernels.py`` that inlines
``models/fastmath.py``'s exp, or ``dynamics/mujoco_servo_kernels.py`` inlining ``models/friction.py``, kept running
the old machine code after an edit of the inlined file alone. :class:`DependencyStampLocator` stamps a servo_ff
function with its own directory's modules and those of ``servo_ff/models`` (where the shared helpers live);
functions outside servo_ff keep numba's own locators. :func:`install` runs before the first ``cache=True``
decoration of each module that compiles kernels (idempotent; numba without this private hook keeps its default).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
SHARED = PACKAGE / "models"


def source_stamp(py_file: str | Path) -> tuple:
    """(name, mtime ns, size) of ``py_file``'s directory's and ``servo_ff/models``' modules, sorted: changes when
    any of them is edited."""
    here = Path(py_file).resolve()
    files = sorted({here, *here.parent.glob("*.py"), *SHARED.glob("*.py")})
    return tuple((str(f.relative_to(PACKAGE)), *_stat(f)) for f in files)


def _stat(f: Path) -> tuple[int, int]:
    st = f.stat()
    return st.st_mtime_ns, st.st_size


def install() -> bool:
    """Put :class:`DependencyStampLocator` first among numba's cache locators; False where numba has no such hook."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    base = getattr(caching, "InTreeCacheLocator", None) or getattr(caching, "_InTreeCacheLocator", None)
    if not isinstance(classes, list) or base is None:  # pragma: no cover - another numba
        return False
    if any(getattr(c, "__name__", "") == "DependencyStampLocator" for c in classes):
        return True

    class DependencyStampLocator(base):
        """numba's in-tree (``__pycache__``) locator for servo_ff's kernels, stamped by :func:`source_stamp`."""

        def get_source_stamp(self):
            return source_stamp(self._py_file)

        @classmethod
        def from_function(cls, py_func, py_file):
            from numba.core import config

            if config.CACHE_DIR:  # NUMBA_CACHE_DIR set: numba's own locator for it
                return None
            try:
                Path(py_file).resolve().relative_to(PACKAGE)
            except ValueError:
                return None  # not servo_ff's: numba's own locators
            return super().from_function(py_func, py_file)

    classes.insert(0, DependencyStampLocator)
    return True
