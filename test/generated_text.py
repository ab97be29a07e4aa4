"""A generated robot file against the committed one: the same text, each number equal but for its last digits.

The drawn boxes' orientations come from ``numpy.linalg.eigh`` of a body's inertia and are printed at 17 digits;
two LAPACK builds differ there in the last digits (numpy 2.3.5's wheel: so101 0.28249560251446881 → …898, op3
0.0044719315326585234 → …6740075: 3e-12 relative, an eigenvector of eigenvalues 3 % apart), which no user of the file
can see. Words and number count must match exactly; each number within ``rtol`` — every other number is printed at 9
significant digits, where a change of the last one is ≥ 1e-9 relative and is caught."""

from __future__ import annotations

import math
import re

NUMBER = re.compile(r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")


def assert_same_generated_text(generated: str, committed: str, rtol: float = 1e-10) -> None:
    """Raise AssertionError naming the first line where ``generated`` and ``committed`` differ in a word, or in a
    number by more than ``rtol`` relative (1e-12 absolute near zero)."""
    a, b = NUMBER.split(generated), NUMBER.split(committed)
    for k, (x, y) in enumerate(zip(a, b)):
        same = x == y if k % 2 == 0 else math.isclose(float(x), float(y), rel_tol=rtol, abs_tol=1e-12)
        if not same:
            line = "".join(a[:k]).count("\n") + 1
            raise AssertionError(f"line {line}: generated {x!r}, committed {y!r}")
    assert len(a) == len(b), f"generated has {len(a) // 2} numbers, committed {len(b) // 2}"
