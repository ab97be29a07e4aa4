"""How a bench names the files it writes: relative to the repository when inside it, so that bench/README.md reads
the same from every checkout (not a bench itself)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shown(path: str | Path) -> str:
    """``path`` relative to the repository root when it lies inside it, else as given."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(path)
