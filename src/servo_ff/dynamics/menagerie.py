"""``menagerie:<name>[/<entry>]``: a MuJoCo Menagerie robot as a robot description (ROS-free).

The optional package ``mujoco-menagerie`` (PyPI, Apache-2.0; ``pip install mujoco-menagerie``) downloads a robot's
model directory once and caches it (``MENAGERIE_CACHE_DIR``, default ``~/.cache/mujoco_menagerie``; a Menagerie
checkout instead: ``MENAGERIE_ROOT``). :func:`resolve_menagerie` returns the MJCF file of the robot's ``entry`` point
(default: its default scene, which has a floor; e.g. ``menagerie:robotis_op3`` or ``menagerie:robotis_op3/op3``).
Without the package, or when the robot cannot be downloaded, the error is one :class:`MenagerieSourceError` line.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ServoFFError

PREFIX = "menagerie:"
INSTALL_HINT = "pip install mujoco-menagerie"


class MenagerieSourceError(ServoFFError, ValueError):
    """A ``menagerie:`` source that cannot be resolved; the message names the source and what to do."""


def is_menagerie(source: object) -> bool:
    """Whether ``source`` is a ``menagerie:<name>[/<entry>]`` string."""
    return isinstance(source, str) and source.strip().startswith(PREFIX)


def resolve_menagerie(source: str) -> Path:
    """The MJCF path of ``menagerie:<name>[/<entry>]``, downloading the robot on first use."""
    spec = source.strip()[len(PREFIX) :].strip()
    name, _, entry = spec.partition("/")
    if not name:
        raise MenagerieSourceError(f"{source!r}: give a robot name, menagerie:<name>[/<entry>]")
    try:
        import mujoco_menagerie as mm
    except ImportError:
        raise MenagerieSourceError(
            f"{source}: needs the optional package mujoco-menagerie ({INSTALL_HINT}), which is not installed"
        ) from None
    try:
        robot = mm.get(name)
        path = robot.xml(entry or None, mm.Cache())
    except mm.DownloadError as e:
        raise MenagerieSourceError(
            f"{source}: cannot download robot {name!r} ({_one_line(e)}); without network, set MENAGERIE_ROOT to a "
            "Menagerie checkout or MENAGERIE_CACHE_DIR to a cache that holds it"
        ) from None
    except mm.MenagerieError as e:
        raise MenagerieSourceError(f"{source}: {_one_line(e)}") from None
    if not path.is_file():
        raise MenagerieSourceError(f"{source}: {path} is missing from the Menagerie cache")
    return path


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())


__all__ = ["PREFIX", "MenagerieSourceError", "is_menagerie", "resolve_menagerie"]
