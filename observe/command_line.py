"""`hearth`'s command line: its flags, and the mistakes refused before any command runs.

A usage mistake is one line and exit 2 (the full usage is in --help); `main.py` parses
with `parse_args` and dispatches to the command the flags name.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from adapters.mind_choice import MIND_CHOICES
from services.command_errors import EXIT_USAGE

MIN_SIDE = 10
"""The smallest world side: room for a lake, a wood and a few agents."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (the full usage is in --help), and a
    misspelt flag is answered with the flag it is nearest to (Python 3.14's
    `suggest_on_error` does that only for choices and subcommands, 3.11 not at all)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def mistake(self, message: str) -> NoReturn:
        """One line and exit 2, for a mistake the line itself says how to mend."""
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's own, which is `parse_known_args` and a refusal of what is left,
        but naming the flag each word left over was probably meant to be."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            self.mistake(self._unrecognized(extra))
        return parsed

    def _unrecognized(self, words: list[str]) -> str:
        flags = list(self._option_string_actions)  # argparse's own table of every flag
        meant = {}
        for word in words:
            close = difflib.get_close_matches(word.partition("=")[0], flags, n=1, cutoff=0.7)
            if close:
                meant[word] = close[0]
        said = f"unrecognized argument{'s' if len(words) > 1 else ''} {' '.join(words)}"
        if not meant:
            return f"{said} (see {self.prog} --help)"
        if len(words) == 1:
            return f"{said} (did you mean {meant[words[0]]}?)"
        return f"{said} (did you mean {', '.join(f'{m} for {w}' for w, m in meant.items())}?)"


VALUE_FLAGS = ("--size", "--agents", "--seed")


def _glue_values(argv: Sequence[str]) -> list[str]:
    """`--size -5x10` -> `--size=-5x10`: argparse would take `-5x10` for a flag and
    report a missing value instead of the real mistake."""
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in VALUE_FLAGS and i + 1 < len(tokens) and tokens[i + 1].startswith("-") \
                and not tokens[i + 1].startswith("--"):
            out.append(f"{token}={tokens[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def build_parser(project_dir: Path) -> argparse.ArgumentParser:
    """Every flag of `hearth`, with its help; `project_dir` is where the default data
    and agents folders are (named in the help)."""
    parser = OneLineParser(
        prog="hearth",
        description="Hearth: a grid world where language-model agents live. "
        "With no command, opens the world (creating it on first run) and shows it.",
    )
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="where world.db, events and traces live (default: "
                             f"$HEARTH_DATA_DIR, else {project_dir / 'data'})")
    parser.add_argument("--agents-dir", type=Path, metavar="DIR",
                        help="agents' home folders (default: $HEARTH_AGENTS_DIR, "
                             f"else {project_dir / 'agents'})")
    parser.add_argument("--config-dir", type=Path, metavar="DIR",
                        help="folder with settings.yaml, agents.yaml, recipes.yaml, "
                             "terrain.yaml, landmarks.yaml (default: the shipped config)")
    parser.add_argument("--debug", action="store_true", help="verbose logging to stderr")
    command = parser.add_mutually_exclusive_group()
    command.add_argument("--status", action="store_true", help="summarise the world and exit")
    command.add_argument("--init", action="store_true", help="create a new world and exit")
    command.add_argument("--check", action="store_true",
                         help="list every damaged row of the world, changing nothing "
                              "(exit 1 if there is any)")
    command.add_argument("--run", type=_whole_number(minimum=1), metavar="N",
                         help="run N ticks, printing each action; Ctrl+C stops cleanly")
    command.add_argument("--serve", action="store_true",
                         help="serve the live observer to a browser, at "
                              "http://127.0.0.1:8000 (--host, --port); one app a page")
    command.add_argument("--watch", action="store_true",
                         help="open the live observer on the world without creating one "
                              "(plain `hearth` creates a world first if there is none)")
    command.add_argument("--gardener", action="store_true",
                         help="run the Gardener beside the world: it watches the world's "
                              "health and asks the engine for gentle changes to the world "
                              "(never to an agent); Ctrl+C stops it")
    command.add_argument("--fork", type=_whole_number(minimum=0), metavar="T",
                         help="with --into DIR: make DIR/data and DIR/agents, the world "
                              "exactly as it stood at tick T (the parent is only read)")
    command.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"),
                         help="say, per agent, from which tick two worlds (forks) differ "
                              "and how; --json for machines")
    command.add_argument("--map", nargs="?", const="", default=None, metavar="PATH",
                         help="draw the whole world in the terminal, or write it to PATH "
                              "(a .png image, one pixel per cell)")
    parser.add_argument("--json", action="store_true",
                        help="with --status or --run: machine-readable "
                             "(--run: one JSON object per tick)")
    parser.add_argument("--quiet", action="store_true",
                        help="with --run: print only the summary")
    parser.add_argument("--host", default=None, metavar="HOST",
                        help="with --serve: the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_whole_number(minimum=1), default=None, metavar="N",
                        help="with --serve: the port (default 8000)")
    parser.add_argument("--public", action="store_true",
                        help="with --serve: allow a --host other than this machine alone; "
                             "its pages only watch, never run or pause the world")
    parser.add_argument("--view-only", action="store_true",
                        help="with --watch or plain hearth: only watch, never run the world")
    parser.add_argument("--economy", action="store_true",
                        help="with --run: send the Claude agents' requests of each step "
                             "as one Message Batch, at half price; a step may then wait "
                             "up to an hour (for unattended runs)")
    parser.add_argument("--once", action="store_true",
                        help="with --gardener: run one cycle now and exit")
    parser.add_argument("--mind", choices=MIND_CHOICES,
                        help="with --run or the observer: who speaks for every agent "
                             "(default: each agent's "
                             "`mind` in agents.yaml, else auto: Claude when "
                             "ANTHROPIC_API_KEY is set, the offline mind otherwise)")
    parser.add_argument("--seed", type=_whole_number(minimum=0), metavar="N",
                        help="with --init: the world seed (default: settings or random)")
    parser.add_argument("--size", type=_size, metavar="WxH",
                        help="with --init: world size in cells, like 500x500 "
                             "(default: settings.yaml)")
    parser.add_argument("--agents", type=_whole_number(minimum=1), metavar="N",
                        help="with --init: how many agents (default: those in agents.yaml; "
                             "more get generated names and personalities)")
    parser.add_argument("--into", type=Path, metavar="DIR",
                        help="with --fork: a new or empty folder for the fork")
    parser.add_argument("--personality", type=_personality, action="append",
                        metavar="NAME=TEXT",
                        help="with --fork: the fork's agent NAME has this personality from "
                             "the fork on (the parent keeps its own); may be given for "
                             "several agents")
    parser.add_argument("--force", action="store_true",
                        help="with --init: replace an existing world (it is backed up first)")
    return parser


def _personality(raw: str) -> tuple[str, str]:
    """An argparse type: NAME=TEXT, both given."""
    name, sep, text = raw.partition("=")
    if not sep or not name.strip() or not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME=TEXT, an agent's name and its new personality, not {raw!r}")
    return name.strip(), text.strip()


def _whole_number(minimum: int):
    """An argparse type: a whole number of at least `minimum`, said plainly if not."""

    def parse(raw: str) -> int:
        try:
            value = int(raw, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {raw!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_SIZE_RE = re.compile(r"^\s*(-?\d+)\s*[xX]\s*(-?\d+)\s*$")


def _size(raw: str) -> tuple[int, int]:
    """An argparse type: `WxH` in cells, each side at least MIN_SIDE."""
    match = _SIZE_RE.fullmatch(raw)
    if not match:
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT in cells, like 500x500, not {raw!r}"
        )
    width, height = int(match.group(1)), int(match.group(2))
    if width < MIN_SIDE or height < MIN_SIDE:
        raise argparse.ArgumentTypeError(
            f"{width}x{height} is too small: each side needs at least {MIN_SIDE} cells"
        )
    return width, height


def parse_args(argv: Sequence[str] | None, project_dir: Path) -> argparse.Namespace:
    """The command line (`sys.argv` when `argv` is None), with the flags that go only
    with some command refused in one line unless that command is given."""
    parser = build_parser(project_dir)
    args = parser.parse_args(_glue_values(sys.argv[1:] if argv is None else argv))
    if (args.fork is None) != (args.into is None):
        parser.error("--fork T and --into DIR go together")
    if args.personality and args.fork is None:
        parser.error("--personality goes with --fork")
    named = [name for name, _ in args.personality or ()]
    if twice := sorted({name for name in named if named.count(name) > 1}):
        parser.error(f"--personality names {', '.join(twice)} more than once")
    if args.json and not (args.status or args.run or args.compare):
        parser.error("--json goes with --status, --run or --compare")
    if args.quiet and not args.run:
        parser.error("--quiet goes with --run")
    if args.economy and not args.run:
        parser.error("--economy goes with --run")
    served = [flag for flag, used in (("--host", args.host is not None),
                                       ("--port", args.port is not None),
                                       ("--public", args.public)) if used]
    if served and not args.serve:
        parser.error(f"{', '.join(served)} go{'es' if len(served) == 1 else ''} with --serve")
    if args.port is not None and args.port > 65535:
        parser.error(f"--port {args.port}: a port is 1 to 65535")
    if args.view_only and (args.run or args.status or args.init or args.map is not None
                           or args.gardener or args.serve):
        parser.error("--view-only goes with --watch or plain hearth")
    if args.once and not args.gardener:
        parser.error("--once goes with --gardener")
    if args.mind is not None and (args.status or args.init or args.map is not None
                                  or args.gardener):
        parser.error("--mind goes with --run, --watch or plain hearth")
    init_only = [flag for flag, used in (("--seed", args.seed is not None),
                                          ("--size", args.size is not None),
                                          ("--agents", args.agents is not None),
                                          ("--force", args.force)) if used]
    if init_only and not args.init:
        parser.error(f"{', '.join(init_only)} go{'es' if len(init_only) == 1 else ''} with --init")
    if args.config_dir is not None and not args.config_dir.is_dir():
        what = "a file, not a folder" if args.config_dir.exists() else "no such folder"
        parser.mistake(f"--config-dir {args.config_dir}: {what}")
    return args
