"""Which paths an agent may give its file tools: the rules, checked on the text alone.

A path comes from a language model, so it is checked before anything is opened, and a
refusal says exactly what is wrong (`Refused`, which `adapters.agent_files` turns
into the agent's answer). Containment itself is not decided here but by how files
are opened (`adapters.home_io`); these rules keep names unambiguous and readable.

**Path rules.** A path names something inside the home, with `/` between names.
It is refused (with a message saying why) when it:

- is not text, is empty or only spaces, or contains a NUL byte;
- is absolute (starts with `/`) or starts with `~` (nothing is expanded: `$HOME`
  and `%2e%2e` are ordinary characters and stay ordinary names inside the home);
- contains a backslash, or any `..` component, or a name made only of dots (with or
  without combining marks), or an empty name (`a//b`);
- contains a control character (newline, tab, ...), an invisible format character
  (zero-width space, direction overrides), a lone surrogate, a private-use or
  unassigned code point, a line or paragraph separator, or any space other than the
  ordinary space U+0020; or a name that begins or ends with a space;
- contains a look-alike of `/`, `\\` or `.`: a non-ASCII character whose NFKC form
  contains one of them (U+FF0F FULLWIDTH SOLIDUS, U+2024 ONE DOT LEADER, U+FF0E,
  U+FE52, U+2025, U+2100 ACCOUNT OF, ...), or one in `LOOKALIKES` (U+2215 DIVISION
  SLASH, U+2044 FRACTION SLASH, U+29F8 BIG SOLIDUS, U+0338 COMBINING LONG SOLIDUS
  OVERLAY, U+2216 SET MINUS, U+0660 ARABIC-INDIC DIGIT ZERO, which renders as a
  dot, ...). The kernel would treat these as ordinary characters, so they could not
  escape here; they are refused because a name that looks like a traversal misleads
  whoever reads it, and would become one wherever text is NFKC-normalised;
- is not in Unicode NFC form (so one name has exactly one spelling);
- has a name longer than `max_name_length` characters (or 255 UTF-8 bytes), or more
  than `max_depth` names in all (`a/b/c/d.md` is 4 deep);
- uses a name starting with `.hearth-tmp-` (reserved for the temporary files that
  `adapters.home_io` writes through).

`.` components are dropped (`./notes.md` is `notes.md`); a trailing `/` names a
folder and is accepted by `list` only.
"""

from __future__ import annotations

import unicodedata

TEMP_PREFIX = ".hearth-tmp-"
NAME_MAX_BYTES = 255

# Characters that look like '/', '\' or '.' but do not turn into them under NFKC
# (those that do are caught by the NFKC test in `_check_character`). Chosen from
# Unicode's confusables for these three characters, leaving out letters in everyday
# use (such as U+30CE KATAKANA LETTER NO).
LOOKALIKES: dict[str, str] = {
    # like '/'
    "\u2044": "/",  # FRACTION SLASH
    "\u2215": "/",  # DIVISION SLASH
    "\u2571": "/",  # BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
    "\u27cb": "/",  # MATHEMATICAL RISING DIAGONAL
    "\u29f8": "/",  # BIG SOLIDUS
    "\u1735": "/",  # PHILIPPINE SINGLE PUNCTUATION
    "\u2cc6": "/",  # COPTIC CAPITAL LETTER OLD COPTIC ESH
    "\u3033": "/",  # VERTICAL KANA REPEAT MARK UPPER HALF
    "\u4e3f": "/",  # CJK UNIFIED IDEOGRAPH-4E3F (the slash radical)
    "\u0337": "/",  # COMBINING SHORT SOLIDUS OVERLAY
    "\u0338": "/",  # COMBINING LONG SOLIDUS OVERLAY
    # like '\'
    "\u2216": "\\",  # SET MINUS
    "\u2572": "\\",  # BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
    "\u27cd": "\\",  # MATHEMATICAL FALLING DIAGONAL
    "\u29f5": "\\",  # REVERSE SOLIDUS OPERATOR
    "\u29f9": "\\",  # BIG REVERSE SOLIDUS
    "\u20e5": "\\",  # COMBINING REVERSE SOLIDUS OVERLAY
    # like '.'
    "\u0660": ".",  # ARABIC-INDIC DIGIT ZERO
    "\u06f0": ".",  # EXTENDED ARABIC-INDIC DIGIT ZERO
    "\u0701": ".",  # SYRIAC SUPRALINEAR FULL STOP
    "\u0702": ".",  # SYRIAC SUBLINEAR FULL STOP
    "\ua4f8": ".",  # LISU LETTER TONE MYA TI
    "\ua60e": ".",  # VAI FULL STOP
    "\U00010a50": ".",  # KHAROSHTHI PUNCTUATION DOT
    "\U0001d16d": ".",  # MUSICAL SYMBOL COMBINING AUGMENTATION DOT
}
_SEPARATOR_LIKE = "/\\."


class Refused(Exception):
    """A request is refused; `message` is what the agent is told, `missing` that the
    file or folder asked for is not there."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing


_CONTROL_NAMES = {"\t": "TAB", "\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\x1b": "ESCAPE",
                  "\x7f": "DELETE"}


def _describe(ch: str) -> str:
    name = _CONTROL_NAMES.get(ch) or unicodedata.name(ch, "")
    if not name:
        name = "CONTROL" if unicodedata.category(ch) == "Cc" else "UNNAMED CHARACTER"
    return f"U+{ord(ch):04X} {name}"


def _check_character(ch: str) -> None:
    category = unicodedata.category(ch)
    if category == "Cc":
        raise Refused(f"path contains a control character ({_describe(ch)}); "
                      "names must be printable")
    if category in ("Cf", "Cs", "Co", "Cn"):
        raise Refused(f"path contains an invisible, private or unassigned character "
                      f"({_describe(ch)}); it is not allowed in names")
    if category in ("Zl", "Zp") or (category == "Zs" and ch != " "):
        raise Refused(f"path contains {_describe(ch)}; the only space allowed in names "
                      "is the ordinary space")
    if ord(ch) < 128:
        return
    like = LOOKALIKES.get(ch)
    if like is None:
        folded = unicodedata.normalize("NFKC", ch)
        like = next((c for c in folded if c in _SEPARATOR_LIKE or c in LOOKALIKES), None)
        if like is not None:
            like = LOOKALIKES.get(like, like)
    if like is not None:
        raise Refused(f"path contains {_describe(ch)}, which looks like '{like}'; "
                      "only the ASCII '/' separates folders and names may use only "
                      "the ASCII '.'")


def _only_dots(name: str) -> bool:
    bare = "".join(c for c in name if not unicodedata.category(c).startswith("M"))
    return bare != "" and set(bare) == {"."}


def parse_path(path: object, *, max_name_length: int,
                max_depth: int) -> tuple[tuple[str, ...], bool]:
    """The names in `path` and whether it ended with '/'; `Refused` says what is wrong.

    See the module docstring for the rules. `()` is the home itself.
    """
    if not isinstance(path, str):
        raise Refused(f"path must be text, like 'notes.md', not {type(path).__name__}")
    if "\x00" in path:
        raise Refused("path may not contain a NUL byte")
    if not path.strip():
        raise Refused("path is empty; give a path inside your home, like 'notes.md'")
    if "\\" in path:
        raise Refused("backslashes are not allowed; folders are separated by '/'")
    if path.startswith("/"):
        raise Refused("path must be relative to your home, like 'notes.md' "
                      "(it may not start with '/')")
    if path.startswith("~"):
        raise Refused("path must be relative to your home, like 'notes.md' "
                      "('~' is not expanded)")
    for ch in path:
        _check_character(ch)
    if not unicodedata.is_normalized("NFC", path):
        raise Refused("path is not in Unicode NFC form; write each accented letter as "
                      "one character (NFC)")
    trailing = path.endswith("/")
    names: list[str] = []
    for name in (path[:-1] if trailing else path).split("/"):
        if name == ".":
            continue
        if name == "":
            raise Refused("path has an empty name between two '/'")
        if name == "..":
            raise Refused("'..' is not allowed: a path cannot leave your home")
        if _only_dots(name):
            raise Refused(f"'{name}' is not allowed: a name may not be made only of dots")
        if name != name.strip():
            raise Refused("a name may not begin or end with a space")
        if len(name) > max_name_length:
            raise Refused(f"name '{name[:24]}...' is {len(name)} characters long; "
                          f"the limit is {max_name_length}")
        size = len(name.encode("utf-8", "surrogatepass"))
        if size > NAME_MAX_BYTES:
            raise Refused(f"name '{name[:24]}...' is {size} bytes in UTF-8; "
                          f"the limit is {NAME_MAX_BYTES}")
        if name.startswith(TEMP_PREFIX):
            raise Refused(f"names starting with '{TEMP_PREFIX}' are reserved for Hearth")
        names.append(name)
    if len(names) > max_depth:
        raise Refused(f"path is {len(names)} levels deep; the limit is {max_depth}")
    return tuple(names), trailing
