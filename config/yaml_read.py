"""Reading a YAML file, and saying where in it something is wrong.

A file is composed into PyYAML's nodes before it is turned into Python values, and the
nodes are kept: each carries the line and column it came from, so a mistake found
later, by the schema, can still be named as `FILE:LINE:COL:` (`mark_of`). A syntax
error is one such line too, PyYAML's own problem without the snippet of the file it
prints; and a quoted string whose closing quote is missing, which swallows the lines
after it, is named as that, at the quote, rather than by what it swallowed.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from config.errors import ConfigError

QUOTES = ("'", '"')
LONGEST_PROBLEM = 200
"""Characters of a problem's text kept: a value echoed back whole can run to pages."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate keys.

    Plain PyYAML keeps the last of two equal keys, so a pasted second `world:`
    section would silently replace the first one.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def shorten(problem: str) -> str:
    return problem if len(problem) <= LONGEST_PROBLEM else problem[:LONGEST_PROBLEM - 1] + "…"


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(path, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(path, "is a directory, not a file") from None
    except PermissionError:
        raise ConfigError(path, "permission denied") from None
    except OSError as err:
        raise ConfigError(path, f"cannot read file: {err.strerror or err}") from err
    raw = raw.removeprefix(codecs.BOM_UTF8)  # tolerate the BOM some editors add
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        start = raw.rfind(b"\n", 0, err.start) + 1
        column = len(raw[start:err.start].decode("utf-8", "replace")) + 1
        raise ConfigError(path, f"not valid UTF-8 (byte 0x{raw[err.start]:02x})",
                          line=raw.count(b"\n", 0, err.start) + 1, column=column) from None


def read_document(path: Path) -> tuple[Any, yaml.Node | None]:
    """A YAML file's value and the node it was made from (None for an empty file)."""
    text = read_text(path)
    loader = None
    try:
        loader = _UniqueKeyLoader(text)  # a SafeLoader: no arbitrary objects
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    except yaml.MarkedYAMLError as err:
        raise _syntax_error(path, text, err) from None
    except ReaderError as err:
        code = err.character if isinstance(err.character, int) else ord(err.character)
        line, column = _place(text, err.position)
        raise ConfigError(path, f"character #x{code:04x} is not allowed in YAML",
                          line=line, column=column) from None
    except yaml.YAMLError as err:
        raise ConfigError(path, shorten(f"invalid YAML: {err}")) from None
    finally:
        if loader is not None:
            loader.dispose()


def _place(text: str, position: int) -> tuple[int, int]:
    """The 1-based line and column of a character's position in `text`."""
    return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1


def _syntax_error(path: Path, text: str, err: yaml.MarkedYAMLError) -> ConfigError:
    """PyYAML's complaint as `FILE:LINE:COL: problem`, the quote to blame if one is."""
    if (err.context_mark is not None and "quoted scalar" in (err.context or "")
            and "end of stream" in (err.problem or "")):
        return _at(path, err.context_mark, "a quoted string is never closed")
    mark = err.problem_mark or err.context_mark
    if mark is not None and (quote := _run_on_quote(text, mark.line)) is not None:
        return _at(path, quote.start_mark, runs_on(quote.end_mark.line))
    problem = err.problem or err.context or "invalid YAML"
    if err.context and err.problem:
        problem = f"{problem} ({err.context})"
    if mark is None:
        return ConfigError(path, shorten(problem))
    return _at(path, mark, shorten(problem))


def _at(path: Path, mark: yaml.Mark, problem: str, location: str | None = None) -> ConfigError:
    return ConfigError(path, problem, location, line=mark.line + 1, column=mark.column + 1)


def runs_on(last_line: int) -> str:
    """What to say of a quoted string that ends on `last_line` (0-based), lines after
    it began: its closing quote is missing, and the next quote in the file closed it."""
    return f"a quoted string runs on to line {last_line + 1}: is its closing quote missing?"


def _run_on_quote(text: str, line: int) -> yaml.ScalarToken | None:
    """A quoted string spanning lines that ends on `line` (0-based) or the line before:
    the likely cause of a syntax error there (YAML lets a quote run on, so the error
    comes only where the next quote in the file happened to close it)."""
    found = None
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if token.start_mark.line > line:
                break
            if (isinstance(token, yaml.ScalarToken) and token.style in QUOTES
                    and token.start_mark.line < token.end_mark.line
                    and token.end_mark.line >= line - 1):
                found = token
    except yaml.YAMLError:
        pass
    return found


def _entry(node: yaml.Node | None, part: Any) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key, value) nodes `part` names in a mapping or a sequence, if it holds it."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                return key, value
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
            and 0 <= part < len(node.value):
        return node.value[part], node.value[part]
    return None


def node_at(root: yaml.Node | None, loc: Sequence[Any], *, key: bool = False
            ) -> yaml.Node | None:
    """The node of the value a pydantic error's `loc` names (its key's node, with
    `key`), else the deepest node on the way there: a part the file does not hold (a
    key left out, a step of pydantic's own such as a union's branch) is passed over."""
    node, named = root, root
    for part in loc:
        entry = _entry(node, part)
        if entry is not None:
            named, node = entry
    return named if key else node


def mark_of(root: yaml.Node | None, loc: Sequence[Any], *, key: bool = False
            ) -> dict[str, int]:
    """`line` and `column` (1-based) of what `loc` names, as ConfigError takes them;
    empty when there are no nodes (an empty file)."""
    node = node_at(root, loc, key=key)
    if node is None:
        return {}
    return {"line": node.start_mark.line + 1, "column": node.start_mark.column + 1}


def run_on_at(root: yaml.Node | None, loc: Sequence[Any]) -> yaml.Node | None:
    """The node at `loc` if it is a quoted string spanning lines: a value that took in
    the lines after it because its closing quote is missing (the schema then complains
    about the whole run of lines)."""
    node = node_at(root, loc)
    if (isinstance(node, yaml.ScalarNode) and node.style in QUOTES
            and node.end_mark.line > node.start_mark.line):
        return node
    return None
