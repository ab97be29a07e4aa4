"""Where the package's data files are: the source tree (a checkout) or the installed share directory
(``colcon build``: ``share/servo_ff/{config,launch,urdf}``), found the same way by every front-end."""

from __future__ import annotations

from pathlib import Path

PACKAGE = "servo_ff"
_SOURCE_ROOT = Path(__file__).resolve().parents[3]  # src/servo_ff/io/paths.py → the checkout


def share_dir() -> Path:
    """The directory holding ``config/``, ``urdf/`` and ``launch/``: the checkout, else the ament share dir."""
    if (_SOURCE_ROOT / "config").is_dir() and (_SOURCE_ROOT / "urdf").is_dir():
        return _SOURCE_ROOT
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except (ImportError, LookupError) as e:
        raise FileNotFoundError(
            f"cannot find servo_ff's config/urdf directories (not a source checkout at "
            f"{_SOURCE_ROOT}, and no installed share directory: {e})"
        ) from None


def share_file(*parts: str) -> Path:
    """A packaged file, e.g. ``share_file("urdf", "pendulums2.urdf")``; FileNotFoundError names it."""
    path = share_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"packaged file {'/'.join(parts)} not found under {share_dir()}")
    return path


def resolve_path(path: str | Path) -> Path:
    """Absolute, relative to the working directory, or relative to the share directory (``urdf/x.urdf``)."""
    p = Path(path).expanduser()
    if p.is_absolute() or p.exists():
        return p
    try:
        root = share_dir()
    except FileNotFoundError:
        return p
    return root / p if (root / p).exists() else p


__all__ = ["PACKAGE", "share_dir", "share_file", "resolve_path"]
