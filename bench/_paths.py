"""How a bench names the files it writes: relative to the repository when inside it, so that bench/README.md reads
the same from every checkout (not a bench itself)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shown(path: str | Path) -> str:
    """``path`` relative to the repository root when it lies inside it, else as given."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(path)


#: a bench's exit code when the data it reads is absent: no figures, no RESULT line (bench/run_all.py then keeps
#: the section recorded before, and says so)
NO_DATA = 2


def no_data(path: str | Path, note: str = "") -> int:
    """Says in one line that the data path ``path`` is missing (``note``: where the data comes from); returns
    :data:`NO_DATA`, the bench's exit code."""
    print(f"data path missing: {shown(path)}{f' ({note})' if note else ''}: no figures, no RESULT line")
    return NO_DATA
