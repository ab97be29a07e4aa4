"""One help rule for every ``servo-ff`` parser (:func:`apply_help_rule`, applied by ``build_parser``): descriptions
as written (the modules' docstrings are laid out by hand), and an option's default appended as ``(default: X)``
only where its help does not already say it (the word "default") and there is one to say: not None, not an
empty list, not a flag's False, not a positional argument (before: ``virtual-bus --help`` alone appended
"(default: None)" to every option, also after "default: the --servo table's", while no other command said its
defaults unless its help did)."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """RawDescriptionHelpFormatter plus the default of an option whose help does not say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not says_default(action):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


def says_default(action: argparse.Action) -> bool:
    """Whether the help should append ``action``'s default: an option with a default worth saying, whose help
    does not mention one already."""
    d = action.default
    if not action.option_strings or d is None or d is argparse.SUPPRESS or action.help is argparse.SUPPRESS:
        return False
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)) or d == []:  # noqa: SLF001
        return False
    return "default" not in (action.help or "").lower()


def apply_help_rule(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` and every sub-command parser under it (at any depth) formatted by :class:`HelpFormatter`."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its sub-parsers only there
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                apply_help_rule(sub)
    return parser
