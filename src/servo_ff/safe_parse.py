"""Bounded parsing of user files, shared by every reader (parameters, logs, α tables, ILC records, URDFs).

* :func:`read_text`: a size limit, directories / unreadable files / non-UTF-8 bytes as one line;
* :func:`parse_json`, :func:`parse_yaml`: a nesting-depth limit checked *before* the recursive parts run,
  YAML anchors and aliases refused (a "billion laughs" file stops at its first anchor), and
  :func:`check_tree` on the result — integers too large for a float and types a JSON document cannot hold
  (YAML dates, binary, sets) are refused naming the key path (``entries[3].position``);
* :func:`load_npz`: a ``.npz`` archive without pickles, its total unpacked size bounded, every zip/npy error
  turned into one line.

Each function takes ``source`` (the file as it is named in messages) and ``error``, the reader's own error
class (a ``ValueError`` subclass such as ``ParameterError`` or ``LogError``), and raises
``error("<source>: <what>")`` — one line, no traceback at the CLI (exit code 2).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

MAX_BYTES = 256 * 2**20  # largest text file or unpacked .npz any reader takes [bytes]
MAX_DEPTH = 64  # deepest nesting of objects / lists in a JSON or YAML document
_MAX_INT_DIGITS = 320  # longer integer literals are not parsed at all (a float holds at most ~1.8e308)

ErrorType = type  # a ValueError subclass: the reader's error


def read_text(path: str | Path, error: ErrorType, max_bytes: int = MAX_BYTES, what: str = "file") -> str:
    """UTF-8 text of ``path``; a directory, an unreadable, oversized or non-UTF-8 file raises ``error``."""
    p = Path(path)
    if p.is_dir():
        raise error(f"{p}: is a directory, expected a {what}")
    try:
        with open(p, "rb") as f:
            size = os.fstat(f.fileno()).st_size  # a regular file too big is refused before a byte is read
            if size > max_bytes:
                raise error(f"{p}: {size} bytes, larger than the {max_bytes} byte limit for a {what}")
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except OSError as e:
        raise error(f"{p}: cannot read ({e.strerror or e})") from None
    if len(data) > max_bytes:
        raise error(f"{p}: larger than the {max_bytes} byte limit for a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{p}: not a UTF-8 text file (invalid byte at offset {e.start})") from None


# ----------------------------------------------------------------------------------------------- JSON
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def parse_document(path: str | Path, error: ErrorType, what: str = "file") -> Any:
    """A YAML (``.yaml``/``.yml``) or else JSON file's content through :func:`parse_yaml` / :func:`parse_json`;
    an unreadable or malformed file raises ``error`` naming it."""
    text = read_text(path, error, what=what)
    if Path(path).suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, str(path), error)
    return parse_json(text, str(path), error)


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in a JSON text (brackets inside strings do not count); linear time, no
    recursion — run before ``json.loads``, whose recursion a deep document would exhaust."""
    raw = _JSON_STRING.sub(b'""', text.encode("utf-8", "surrogatepass"))
    b = np.frombuffer(raw, dtype=np.uint8)
    step = np.zeros(b.shape, dtype=np.int32)
    step[(b == 0x5B) | (b == 0x7B)] = 1
    step[(b == 0x5D) | (b == 0x7D)] = -1
    return int(np.cumsum(step).max()) if step.size else 0


class _HugeInt:
    """An integer literal too long to convert (kept as a marker until :func:`check_tree` names its key)."""

    def __init__(self, digits: int):
        self.digits = digits


def _parse_int(s: str) -> Any:
    return int(s) if len(s) <= _MAX_INT_DIGITS else _HugeInt(len(s.lstrip("-")))


def parse_json(text: str, source: str, error: ErrorType, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with a depth limit and :func:`check_tree`; a malformed document raises ``error``."""
    depth = json_depth(text)
    if depth > max_depth:
        raise error(f"{source}: JSON nested {depth} levels deep; the limit is {max_depth}")
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise error(f"{source}: malformed JSON ({e})") from None
    except (ValueError, RecursionError) as e:
        raise error(f"{source}: malformed JSON ({_one_line(e)})") from None
    check_tree(data, source, error)
    return data


# ----------------------------------------------------------------------------------------------- YAML
def _one_line(e: BaseException) -> str:
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if problem and mark is not None:
        context = getattr(e, "context", None)
        text = f"{context} but {problem}" if context else problem
        return " ".join(f"{text} at line {mark.line + 1}, column {mark.column + 1}".split())
    return " ".join(str(e).split()) or type(e).__name__


def _loader_class(max_depth: int):
    import yaml
    from yaml.composer import ComposerError

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader that refuses anchors and aliases and documents nested deeper than ``max_depth``."""

        _depth = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise ComposerError(
                    None,
                    None,
                    f"alias *{event.anchor} refused (YAML anchors and aliases are not accepted)",
                    event.start_mark,
                )
            if getattr(event, "anchor", None) is not None:
                raise ComposerError(
                    None,
                    None,
                    f"anchor &{event.anchor} refused (YAML anchors and aliases are not accepted)",
                    event.start_mark,
                )
            self._depth += 1
            try:
                if self._depth > max_depth:
                    raise ComposerError(None, None, f"nested more than {max_depth} levels deep", event.start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node):
            if len(node.value) > _MAX_INT_DIGITS:  # never handed to int(): named by check_tree
                return _HugeInt(len(node.value.lstrip("+-")))
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


_LOADERS: dict[int, type] = {}


def yaml_loader(max_depth: int = MAX_DEPTH) -> type:
    """The YAML loader class every reader uses (SafeLoader, no anchors/aliases, depth ≤ ``max_depth``)."""
    if max_depth not in _LOADERS:
        _LOADERS[max_depth] = _loader_class(max_depth)
    return _LOADERS[max_depth]


def parse_yaml(text: str, source: str, error: ErrorType, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document through :func:`yaml_loader` and :func:`check_tree`; refusals raise ``error``."""
    import yaml

    try:
        data = yaml.load(text, Loader=yaml_loader(max_depth))  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        raise error(f"{source}: malformed YAML ({_one_line(e)})") from None
    except (ValueError, TypeError, RecursionError) as e:  # e.g. an integer beyond Python's digit limit
        raise error(f"{source}: malformed YAML ({_one_line(e)})") from None
    check_tree(data, source, error)
    return data


# ----------------------------------------------------------------------------------------------- content
_PLAIN = (str, bool, float, type(None))


def check_tree(data: Any, source: str, error: ErrorType) -> None:
    """Refuse, naming the key path, integers no float can hold and values other than mappings with string keys,
    lists, strings, numbers, booleans and null. Iterative: no recursion on deep input."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        where = path or "the top level"
        if isinstance(value, _PLAIN):
            continue
        if isinstance(value, int):
            try:
                float(value)
            except OverflowError:
                raise error(
                    f"{source}: {where}: an integer of {len(str(abs(value)))} digits is too large for a float"
                ) from None
        elif isinstance(value, _HugeInt):
            raise error(f"{source}: {where}: an integer of {value.digits} digits is too large for a float")
        elif isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    raise error(f"{source}: {where}: key {k!r} is not a string")
                stack.append((v, f"{path}.{k}" if path else k))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
        else:
            raise error(
                f"{source}: {where}: a {type(value).__name__} value is not accepted (numbers, strings, "
                "booleans, lists and mappings only)"
            )


def describe(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (a 401-digit number or a long list stays one short line)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}…({len(text)} chars)"


def as_float(value: Any, source: str, key: str, error: ErrorType) -> float:
    """``value`` as a float; lists, mappings, strings that are not numbers and integers no float can hold raise
    ``error`` naming ``key`` (no TypeError / OverflowError escapes)."""
    if isinstance(value, (list, tuple, dict)) or value is None:
        kind = "null" if value is None else f"a {type(value).__name__}"
        raise error(f"{source}: {key} must be a number, got {kind} ({describe(value)})")
    try:
        return float(value)
    except OverflowError:
        raise error(f"{source}: {key}: {describe(value)} is too large for a float") from None
    except (TypeError, ValueError):
        raise error(f"{source}: {key} must be a number, got {describe(value)}") from None


# ----------------------------------------------------------------------------------------------- npz
def load_npz(path: str | Path, error: ErrorType, max_bytes: int = MAX_BYTES) -> dict[str, np.ndarray]:
    """Every array of a ``.npz`` archive (no pickles, unpacked size ≤ ``max_bytes``); a missing, truncated or
    garbage file raises ``error`` naming it."""
    import zipfile
    import zlib

    p = Path(path)
    if not p.is_file():
        raise error(f"{p}: no such file")
    try:
        with zipfile.ZipFile(p) as z:
            total = sum(i.file_size for i in z.infolist())
        if total > max_bytes:
            raise error(f"{p}: the archive unpacks to {total} bytes, more than the {max_bytes} byte limit")
        with np.load(p, allow_pickle=False) as data:
            return {k: np.asarray(data[k]) for k in data.files}
    except zipfile.BadZipFile as e:
        raise error(f"{p}: not a .npz archive ({e})") from None
    except error:
        raise
    except (OSError, ValueError, EOFError, KeyError, RuntimeError, zlib.error, NotImplementedError) as e:
        raise error(f"{p}: cannot read the .npz archive ({_one_line(e)})") from None


def finite_scalar(arrays: dict[str, np.ndarray], key: str, source: str, error: ErrorType) -> float:
    """``arrays[key]`` as one finite float, or ``error`` naming the key and what it holds."""
    a = arrays[key]
    if a.size != 1 or a.dtype.kind not in "iuf":  # a boolean is no number (True would read as 1)
        raise error(f"{source}: {key} must be one number, got an array of shape {a.shape} and dtype {a.dtype}")
    v = float(a.reshape(()))
    if not math.isfinite(v):
        raise error(f"{source}: {key} is not finite ({v})")
    return v


__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "read_text",
    "parse_json",
    "parse_yaml",
    "yaml_loader",
    "check_tree",
    "json_depth",
    "as_float",
    "describe",
    "load_npz",
    "finite_scalar",
]
