"""One dispatcher for every log format: bam JSON, CSV, rosbag2 (directory, ``.mcap``, ``.db3``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .bam_logs import read_bam_json, read_csv
from .servo_log import DEFAULT_DT, LogError, ServoLog, clean_meta


def is_rosbag(path: Path) -> bool:
    return path.suffix in (".mcap", ".db3") or (path.is_dir() and (path / "metadata.yaml").exists())


def read_log(
    path: str | Path, dt: float = DEFAULT_DT, meta: Mapping[str, Any] | None = None, **bag_options: Any
) -> ServoLog:
    """Read a bam JSON (``.json``), CSV (``.csv``) or rosbag2 (directory, ``.mcap``, ``.db3``) log."""
    p = Path(path)
    if not p.exists():
        raise LogError(f"{p}: no such file")
    if is_rosbag(p):
        from .rosbag import read_rosbag  # rosbags is imported only for bags

        return read_rosbag(p, dt=dt, meta=meta, **bag_options)
    if p.suffix.lower() == ".json":
        log = read_bam_json(p, dt)
        return log.with_(**clean_meta(str(p), {**log.meta(), **meta})) if meta else log
    if p.suffix.lower() == ".csv":
        return read_csv(p, dt, meta)
    raise LogError(f"{p}: unknown log format (expected .json, .csv, or a rosbag2 directory/.mcap/.db3)")


def find_logs(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their log files (sorted); rosbag2 directories count as one log."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise LogError(f"{p}: no such file or directory")
        if p.is_dir() and not is_rosbag(p):
            kids = sorted(
                q
                for q in p.iterdir()
                if q.suffix.lower() in (".json", ".csv", ".mcap", ".db3") or (q.is_dir() and is_rosbag(q))
            )
            if not kids:
                raise LogError(f"{p}: directory holds no .json/.csv/rosbag2 logs")
            out.extend(kids)
        else:
            out.append(p)
    return out


def read_logs(paths: Iterable[str | Path], dt: float = DEFAULT_DT, **options: Any) -> list[ServoLog]:
    return [read_log(p, dt, **options) for p in find_logs(paths)]
