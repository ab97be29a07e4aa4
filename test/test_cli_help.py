"""Every ``servo-ff`` command's help follows one rule (cli/_help.py): an option's default is said once, "(default:
X)" appended only where its help does not say it already and there is one to say. Before, ``virtual-bus --help``
(ArgumentDefaultsHelpFormatter) appended "(default: None)" to 15 options, also after helps that gave the default
("default: the --servo table's, else dxl2 … (default: None)"), while the other commands said no default their help
did not."""

from __future__ import annotations

import argparse

from servo_ff.cli import build_parser


def parsers(parser: argparse.ArgumentParser, path: str = "servo-ff"):
    """(command path, parser) of ``parser`` and every sub-command under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{path} {name}")


def option_help(parser: argparse.ArgumentParser, action: argparse.Action) -> tuple[str, str]:
    """(the help ``parser --help`` prints for ``action``, its own help text alone), each on one line."""
    if not action.help or action.help == argparse.SUPPRESS:
        return "", ""
    printed = parser._get_formatter()._expand_help(action)
    own = argparse.HelpFormatter(parser.prog)._expand_help(action)
    return " ".join(printed.split()), " ".join(own.split())


def test_every_option_says_its_default_once_and_never_none():
    said = 0
    for path, parser in parsers(build_parser()):
        assert "(default: None)" not in " ".join(parser.format_help().split()), path
        for action in parser._actions:
            printed, own = option_help(parser, action)
            if printed == own:
                continue
            said += 1
            assert printed.startswith(own) and printed[len(own) :].startswith(" (default: "), (path, printed)
            assert "default" not in own.lower(), (path, action.dest, printed)  # its help said it already
            d = action.default
            assert d is not None and d is not False and d != [], (path, action.dest, printed)
    assert said > 50  # the defaults the helps do not say are said (before: virtual-bus's alone, 23)


def test_virtual_bus_help_gives_its_own_default_text_alone():
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["virtual-bus"].format_help().split())
    assert "(default: the --servo table's, else dxl2)" in text or "default: the --servo table's, else dxl2)" in text
    assert "(default: 1000000)" in text and "(default: 1-6)" in text
    assert "--wire-time delay replies by their wire time at --baud (default: False)" not in text
