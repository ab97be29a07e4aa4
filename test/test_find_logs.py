"""Which logs of a folder ``servo-ff identify DIR`` reads (io/logs.py find_logs): its files and rosbag2 directories,
not its sub-folders; every other entry is named in one line with why. Before: a split bag without metadata.yaml, a
compressed one and a day2/ folder of bags were left out unsaid, the only hint identify's "1 logs"."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from servo_ff.io.logs import find_logs, read_log
from servo_ff.io.servo_log import LogError


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def _bag_dir(path: Path) -> Path:
    """The layout of a rosbag2 directory (find_logs reads no bag: its metadata.yaml makes it one)."""
    _touch(path / "metadata.yaml")
    _touch(path / f"{path.name}_0.mcap")
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    logs = tmp_path / "logs"
    _bag_dir(logs / "good_bag")
    _touch(logs / "crashed_split" / "crashed_split_0.mcap")  # ros2 bag record killed after a split
    _touch(logs / "crashed_split" / "crashed_split_1.mcap")
    _touch(logs / "zstd_nometa" / "zstd_nometa_0.mcap.zstd")  # file compression, metadata lost
    _bag_dir(logs / "day2" / "bag_day2")
    _touch(logs / "notes.txt")
    _touch(logs / ".hidden")
    return logs


def test_every_entry_not_read_is_named_with_why_in_one_line(folder, caplog):
    with caplog.at_level(logging.WARNING):
        assert [p.name for p in find_logs([folder])] == ["good_bag"]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith(f"{folder}: 4 of its entries not read — "), said
    line = said[0]
    for words in (
        "crashed_split: a rosbag2 directory without metadata.yaml, split in 2 storage files",
        f"'ros2 bag reindex {folder / 'crashed_split'}'",
        "zstd_nometa: a rosbag2 directory without metadata.yaml, its storage file zstd_nometa_0.mcap.zstd compressed",
        "day2: a folder of 1 log(s) (sub-folders are not searched: give it as an argument)",
        "notes.txt: not a log (.txt",
    ):
        assert words in line, (words, line)
    assert ".hidden" not in line


def test_a_folder_given_is_read_and_a_folder_of_nothing_says_why(folder):
    """The sub-folder given as an argument is read; a folder with no log says what it holds."""
    assert [p.name for p in find_logs([folder / "day2"])] == ["bag_day2"]
    empty = folder / "day3"
    _touch(empty / "readme.md")
    with pytest.raises(LogError) as e:
        find_logs([empty])
    why = "readme.md: not a log (.md: logs are .json, .csv, .mcap, .db3 or rosbag2 directories)"
    assert str(e.value) == f"{empty}: directory holds no .json/.csv/rosbag2 logs ({why})"


def test_fitting_a_split_bag_without_metadata_names_the_fix(folder):
    """servo-ff fit DIR on the split bag (before: "a directory of 2 logs …: give one of them", each half a recording),
    on the compressed one (before: "a directory holding no log")."""
    for name, words in (("crashed_split", "split in 2 storage files"), ("zstd_nometa", "compressed: decompress it")):
        with pytest.raises(LogError) as e:
            read_log(folder / name)
        assert words in str(e.value) and "metadata.yaml" in str(e.value), str(e.value)


def test_a_sub_folder_is_counted_by_its_own_entries_not_walked(folder, monkeypatch, caplog):
    """day2 holds a bag and a tree of 30 nested folders: the line counts day2's own log, and no folder below day2's
    own entries is listed (their listing tells a bag directory without metadata.yaml) (before: the whole tree was,
    down to day2/d0/…/d29, to count what is not read)."""
    deep = folder / "day2"
    for k in range(30):
        deep = deep / f"d{k}"
        _bag_dir(deep / f"bag{k}")
    listed: list[Path] = []
    real = Path.iterdir

    def counting(self):
        listed.append(self)
        return real(self)

    monkeypatch.setattr(Path, "iterdir", counting)
    with caplog.at_level(logging.WARNING):
        assert [p.name for p in find_logs([folder])] == ["good_bag"]
    assert "day2: a folder of 1 log(s) (sub-folders are not searched" in caplog.records[0].getMessage()
    deeper = sorted(str(p.relative_to(folder)) for p in listed if len(p.relative_to(folder).parts) > 2)
    assert deeper == [], deeper
