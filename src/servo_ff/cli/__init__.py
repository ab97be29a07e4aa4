"""``servo-ff`` command line. Each module ``servo_ff/cli/<name>.py`` that defines
``register(subparsers)`` adds its own sub-command(s); ``main`` discovers them.
Sub-commands call the ROS-free core and return an exit code."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import ServoFFError
from ..interrupt import EXIT_INTERRUPTED, quiet_interrupt
from ._help import apply_help_rule


class _LazyModule:
    """Stands for module ``name`` until its first attribute access, which imports it with a plain import: what the
    module raises while it executes (ImportError, a Ctrl-C's KeyboardInterrupt) propagates as itself and leaves no
    half-executed module behind (importlib's LazyLoader marked the module loaded first, so an interrupted import
    became ``AttributeError: module ... has no attribute ...`` on every later access)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_import(name: str):
    """A module that is imported on first attribute access: keeps ``servo-ff --help`` and sub-commands that do
    not need heavy libraries (python-control, pinocchio, MuJoCo) fast to start."""
    return sys.modules.get(name) or _LazyModule(name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="servo-ff",
        description="Servo actuator models, identification, Dynamixel I/O and feed-forward (ROS 2 optional).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return apply_help_rule(parser)  # one help rule for every command (_help.py)


def main(argv: list[str] | None = None) -> int:
    with quiet_interrupt("servo-ff"):  # a Ctrl-C while the commands' modules load: no traceback out of an import
        parser = build_parser()
    return run_command(parser.parse_args(argv))


def run_command(args: argparse.Namespace) -> int:
    """``args.func(args)`` under the CLI's exit rule: its own code; a user error (bad value, missing file) one line
    naming the command, exit 2; a Ctrl-C (KeyboardInterrupt) one line, exit 130 (:data:`EXIT_INTERRUPTED`)."""
    try:
        return int(args.func(args) or 0)
    except (ServoFFError, ValueError, KeyError, OSError) as e:  # user errors: one clear line, no traceback
        print(f"servo-ff {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: what was written stays (files are written whole: io/atomic.py)
        print(f"servo-ff {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
