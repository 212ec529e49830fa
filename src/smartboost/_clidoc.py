"""The command-line reference, generated from the parser of :mod:`smartboost.cli`.

``python -m smartboost._clidoc > docs/reference/cli.md`` writes ``docs/reference/cli.md``, and
``tests/test_docs.py`` checks that the committed file equals :func:`parser_markdown`, as
``docs/reference/parameters.md`` is kept equal to the parameter registry. The usage lines are
built here rather than by ``argparse``, whose formatting depends on the terminal width and the
Python version.
"""

from __future__ import annotations

import argparse
import re

__all__ = ["parser_markdown"]

_HEADER = """# Command line

Generated from the argument parser of `smartboost.cli` by
`python -m smartboost._clidoc > docs/reference/cli.md`; do not edit by hand.

`smartboost COMMAND --help` prints the same text. Every command takes `-h`/`--help`. Every
training parameter of the [parameter reference](parameters.md) is also an option of
`smartboost train` (`--num_leaves 63`, `--sampling mvs`), or a key of the TOML file given with
`--config`. Errors are one line (exit status 1); `--debug` shows the traceback.
"""


def _text(text: str) -> str:
    """Help or description text as markdown: characters markdown would read as markup escaped."""
    return re.sub(r"([|<>*$\\])", r"\\\1", " ".join(text.split()))


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _arguments(action: argparse.Action) -> str:
    """The values an action takes, as usage writes them."""
    if action.nargs == 0:
        return ""
    name = _metavar(action)
    if action.nargs is None or action.nargs == 1:
        return name
    if action.nargs == "?":
        return f"[{name}]"
    if action.nargs == "+":
        return f"{name} [{name} ...]"
    if action.nargs == "*":
        return f"[{name} ...]"
    if isinstance(action.nargs, int):
        return " ".join([name] * action.nargs)
    return name


def _shown(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.help != argparse.SUPPRESS
            and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, help, parser)`` of each subcommand of ``parser``, in the order they were added."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            out += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return out


def _usage(prog: str, parser: argparse.ArgumentParser) -> str:
    words = [prog]
    for action in _shown(parser):
        if action.option_strings:
            option = " ".join(filter(None, [action.option_strings[0], _arguments(action)]))
            words.append(option if action.required else f"[{option}]")
    if _subcommands(parser):
        words.append("COMMAND ...")
    words += [_arguments(a) for a in _shown(parser) if not a.option_strings]
    return " ".join(words)


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in _shown(parser):
        if action.option_strings:
            values = _arguments(action)
            name = ", ".join(f"`{s}{' ' + values if values else ''}`" for s in action.option_strings)
        else:
            name = f"`{_arguments(action)}`"
        rows.append(f"| {name} | {_text(action.help or '')} |")
    if not rows:
        return []
    return ["| argument | meaning |", "|---|---|", *rows, ""]


def _section(prog: str, summary: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} `{prog}`", ""]
    if summary:
        lines += [_text(summary[0].upper() + summary[1:]) + ".", ""]
    if parser.description:
        if isinstance(parser.formatter_class, type) and issubclass(parser.formatter_class,
                                                                  argparse.RawDescriptionHelpFormatter):
            lines += ["```text", parser.description.rstrip(), "```", ""]
        else:
            lines += [_text(parser.description), ""]
    lines += ["```text", _usage(prog, parser), "```", ""]
    lines += _options_table(parser)
    if parser.epilog:
        epilog = parser.epilog.strip()
        if epilog.startswith("example: "):
            lines += ["Example:", "", "```bash", epilog[len("example: "):], "```", ""]
        else:
            lines += [_text(epilog), ""]
    for name, help_text, sub in _subcommands(parser):
        lines += _section(f"{prog} {name}", help_text, sub, min(level + 1, 4))
    return lines


def parser_markdown() -> str:
    """The command-line reference (``docs/reference/cli.md``): every command and subcommand of
    ``smartboost``, with its description, usage line and arguments."""
    from .cli import _parser

    parser = _parser()
    return "\n".join([_HEADER, *_section(parser.prog, "", parser, 2)]).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover - docs generator
    print(parser_markdown(), end="")
