"""A ROS parameter YAML given to a bring-up's nodes, checked before any node gets it (``servo-ff up`` and the launch
files alike): read within the limits of :mod:`servo_ff.safe_parse`, each section a ``ros__parameters`` mapping, and
each value of the kind the bring-up's own YAML gives the same parameter — one line naming the file, section and key,
instead of a parser error in every node or rcl keeping the YAML's value unsaid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from servo_ff.errors import ServoFFError


class ConfigError(ServoFFError, ValueError):
    """A YAML parameter file given to the nodes is malformed; the message names the file and the key."""


def check_config(path: Path) -> None:
    """Read a ROS parameter YAML with the limits of :mod:`servo_ff.safe_parse` (size, depth, no anchors or
    aliases, no integer too large for a float) before any node process gets it: a bad file is one line naming
    it and the key, exit code 2, instead of a parser error in every node."""
    from servo_ff.safe_parse import parse_yaml, read_text

    doc = parse_yaml(read_text(path, ConfigError, what="parameter file"), str(path), ConfigError)
    if doc is not None and not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected '<node>: ros__parameters: ...' mappings at the top level")
    _check_sections(doc or {}, path)


def _check_sections(doc: dict, path: Path, where: str = "") -> None:
    """Each node's section holds ``ros__parameters:`` with a mapping of parameters, or is a namespace of further
    sections (``ns: node: ros__parameters:``, as rcl reads them): one line naming the file and the section."""
    for key, section in doc.items():
        name = f"{where}/{key}" if where else str(key)
        params = section.get("ros__parameters") if isinstance(section, dict) else section
        if isinstance(section, dict) and "ros__parameters" not in section:
            _check_sections(section, path, name)  # a namespace
        elif not isinstance(params, dict):
            what = type(params).__name__ if params is not None else "nothing"
            raise ConfigError(f"{path}: {name}: expected 'ros__parameters:' with a mapping of parameters, got {what}")


def kind(value) -> str:
    """A YAML value's kind as rcl types it: a number, text, a truth value or a list."""
    if isinstance(value, bool):
        return "a true/false"
    return {int: "a number", float: "a number", str: "a string", list: "a list"}.get(type(value), type(value).__name__)


def check_kinds(extra: Path, config: Path, node: str) -> None:
    """A ``--params-file`` value of another kind than the bring-up YAML's for the same parameter (``rate_hz:
    "fast"``): ConfigError naming file, node and parameter (before: rcl kept the YAML's value, unsaid)."""
    base = node_params(config, node)
    for key, value in node_params(extra, node).items():
        if key in base and kind(value) != kind(base[key]):
            raise ConfigError(
                f"{extra}: {node}: {key} is {kind(value)} ({value!r}), the bring-up's is {kind(base[key])} "
                f"({base[key]!r})"
            )


def node_params(params_file: str | Path, node: str) -> dict[str, Any]:
    """Node ``node``'s parameters in the parameter YAML ``params_file`` (empty: none): its ``/**`` section, then the
    node's own over it."""
    doc = yaml.safe_load(Path(params_file).read_text(encoding="utf-8")) if params_file else None
    if not isinstance(doc, dict):
        return {}
    sections = {k: v.get("ros__parameters") for k, v in doc.items() if isinstance(v, dict)}
    sections = {k: v for k, v in sections.items() if isinstance(v, dict)}  # up's check_config says the others
    own = [v for k, v in sections.items() if str(k).rsplit("/", 1)[-1] == node]
    return {k: v for s in [sections.get("/**", {}), *own] for k, v in s.items()}
