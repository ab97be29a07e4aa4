"""One dispatcher for every log format: bam JSON, CSV, rosbag2 (directory, ``.mcap``, ``.db3``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .bam_logs import read_bam_json, read_csv
from .rosbag_supply import AGREE
from .servo_log import DEFAULT_DT, LogError, ServoLog, clean_meta

_log = logging.getLogger(__name__)
LOG_SUFFIXES = (".json", ".csv", ".mcap", ".db3")


def is_rosbag(path: Path) -> bool:
    return path.suffix in (".mcap", ".db3") or (path.is_dir() and (path / "metadata.yaml").exists())


def lone_bag_file(path: Path, say: bool = True) -> Path | None:
    """The one ``.mcap``/``.db3`` of a rosbag2 directory without its ``metadata.yaml`` (a recorder stopped before
    writing it): read as a file, ``say`` in one line. None for anything else."""
    if not path.is_dir() or is_rosbag(path):
        return None
    kids = list(path.iterdir())
    files = [q for q in kids if q.suffix in (".mcap", ".db3")]
    if len(files) != 1 or any(q.is_dir() or q.suffix.lower() in (".json", ".csv") for q in kids):
        return None
    if say:
        _log.warning("%s: a rosbag2 directory without metadata.yaml: its storage file %s is read", path, files[0].name)
    return files[0]


def _broken_bag(q: Path) -> str | None:
    """Why the directory ``q`` is a rosbag2 that cannot be read without its ``metadata.yaml`` (split in several
    storage files, or its file compressed), else None."""
    kids = list(q.iterdir())
    stores = [k for k in kids if k.suffix in (".mcap", ".db3")]
    packed = [k for k in kids if ".mcap" in k.suffixes[:-1] or ".db3" in k.suffixes[:-1]]
    if len(stores) > 1:
        return (
            f"a rosbag2 directory without metadata.yaml, split in {len(stores)} storage files (a recording stopped "
            f"after a split): write its metadata.yaml with 'ros2 bag reindex {q}'"
        )
    if packed:
        return (
            f"a rosbag2 directory without metadata.yaml, its storage file {packed[0].name} compressed: decompress it "
            "(zstd -d) or restore metadata.yaml"
        )
    return None


def why_not_read(q: Path) -> str:
    """Why the folder entry ``q`` is not one of its logs (:func:`_scan`): sub-folders are not searched, a split or
    compressed rosbag2 directory is read only through its ``metadata.yaml``."""
    if not q.is_dir():
        if ".mcap" in q.suffixes or ".db3" in q.suffixes:
            return f"a compressed storage file ({q.suffix}): decompress it (zstd -d) or read its bag directory"
        return f"not a log ({q.suffix or 'no suffix'}: logs are .json, .csv, .mcap, .db3 or rosbag2 directories)"
    if (broken := _broken_bag(q)) is not None:
        return broken
    inside = sum(_log_of(k, say=False) is not None for k in q.iterdir())  # its own entries: never its sub-trees
    return f"a folder{f' of {inside} log(s)' if inside else ''} (sub-folders are not searched: give it as an argument)"


def _log_of(q: Path, say: bool) -> Path | None:
    """The log the folder entry ``q`` is (a log file, a rosbag2 directory, the storage file of one without
    metadata.yaml, ``say``-ing so), else None; looks no deeper than ``q``'s own entries."""
    if q.suffix.lower() in LOG_SUFFIXES or (q.is_dir() and is_rosbag(q)):
        return q
    return lone_bag_file(q, say)


def _scan(path: Path, say: bool = True) -> tuple[list[Path], list[str]]:
    """(the logs of a directory that is not one — files, rosbag2 directories, one without metadata.yaml by its file —,
    every other entry but hidden ones with why it is not read)."""
    out, left = [], []
    for q in sorted(path.iterdir()):
        if (log := _log_of(q, say)) is not None:
            out.append(log)
        elif not q.name.startswith("."):
            left.append(f"{q.name}: {why_not_read(q)}")
    return out, left


def _listed(left: list[str]) -> str:
    return f" ({'; '.join(left)})" if left else ""


def given_supply(log: ServoLog, meta: Mapping[str, Any] | None) -> ServoLog:
    """``log`` with a given ``meta['vin']`` [V] as its supply throughout, as a bag's (:mod:`.rosbag_supply`): it wins
    over the recorded ``input_volts``, a difference over ``AGREE`` said (before: the column won, the flag unsaid)."""
    if not meta or "vin" not in meta:
        return log
    med = float(np.median(log.input_volts))
    if abs(med - log.vin) > AGREE * log.vin:
        _log.warning(
            "%s: vin %g V (given) is used, not the recorded input_volts (median %.4g V)", log.source, log.vin, med
        )
    return log.with_(input_volts=np.full(len(log), log.vin), vin_source="given")


def read_log(
    path: str | Path, dt: float = DEFAULT_DT, meta: Mapping[str, Any] | None = None, **bag_options: Any
) -> ServoLog:
    """Read a bam JSON (``.json``), CSV (``.csv``) or rosbag2 (directory, ``.mcap``, ``.db3``) log."""
    p = Path(path)
    if not p.exists():
        raise LogError(f"{p}: no such file")
    if p.is_dir() and not is_rosbag(p):  # one log is asked for: a bag without metadata.yaml, or say what it holds
        lone = lone_bag_file(p)
        if lone is None:
            if (broken := _broken_bag(p)) is not None:  # before: "a directory of 2 logs", "holding no log"
                raise LogError(f"{p}: {broken}")
            kids, left = _scan(p, say=False)
            if not kids:
                what = "a directory holding no log (.json, .csv, rosbag2 directory/.mcap/.db3)"
                raise LogError(f"{p}: {what}{_listed(left)}")
            names = ", ".join(q.relative_to(p).as_posix() for q in kids[:4]) + (", …" if len(kids) > 4 else "")
            raise LogError(f"{p}: a directory of {len(kids)} logs ({names}), not one log: give one of them")
        p = lone
    if is_rosbag(p):
        from .rosbag import read_rosbag  # rosbags is imported only for bags

        return read_rosbag(p, dt=dt, meta=meta, **bag_options)
    if p.suffix.lower() == ".json":
        log = read_bam_json(p, dt)
        return given_supply(log.with_(**clean_meta(str(p), {**log.meta(), **meta})), meta) if meta else log
    if p.suffix.lower() == ".csv":
        return given_supply(read_csv(p, dt, meta), meta)
    raise LogError(f"{p}: unknown log format (expected .json, .csv, or a rosbag2 directory/.mcap/.db3)")


def find_logs(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their log files (sorted); rosbag2 directories count as one log. Sub-folders are not
    searched (a folder of days is given day by day: what is read stays what was asked); every entry of a folder not
    read is named in one line with why (:func:`why_not_read`). A file given twice (same resolved path, e.g. ``L ./L``
    or ``L dir/``) is used once, said in one warning line."""
    found = _expand(paths)
    first: dict[Path, Path] = {}
    twice: dict[Path, list[Path]] = {}
    for p in found:
        key = p.resolve()
        if key in first:
            twice.setdefault(key, [first[key]]).append(p)
        else:
            first[key] = p
    if twice:
        _log.warning(
            "log(s) given more than once, each used once: %s",
            "; ".join(" = ".join(map(str, names)) for names in twice.values()),
        )
    return list(first.values())


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise LogError(f"{p}: no such file or directory")
        if p.is_dir() and not is_rosbag(p):
            kids, left = _scan(p)
            if not kids:
                raise LogError(f"{p}: directory holds no .json/.csv/rosbag2 logs{_listed(left)}")
            if left:  # before: left out unsaid (a split bag without metadata.yaml, a day2/ folder of bags)
                _log.warning("%s: %d of its entries not read — %s", p, len(left), "; ".join(left))
            out.extend(kids)
        else:
            out.append(p)
    return out


def read_logs(paths: Iterable[str | Path], dt: float = DEFAULT_DT, **options: Any) -> list[ServoLog]:
    return [read_log(p, dt, **options) for p in find_logs(paths)]
