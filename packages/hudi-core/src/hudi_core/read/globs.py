"""Hadoop's glob patterns (``org.apache.hadoop.fs.GlobPattern``), which Hudi's incremental
queries match file paths with (``hoodie.datasource.read.incr.path.glob``).

Hadoop turns a glob into a Java regex, matched against the whole text: ``*`` is ``.*`` (it
crosses ``/``), ``?`` one character, ``{a,b}`` either, ``[...]`` and ``[!...]`` a character
class and its complement, ``\\`` escapes the next character; the regex's own special characters
(``.``, ``$``, ``(``, ``)``, ``|``, ``+``, and ``^`` outside a class) stand for themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hudi_core.errors import ConfigError

__all__ = ["glob_matcher"]

_LITERAL = frozenset(".$()|+")


def glob_regex(glob: str) -> str:
    """The regex Hadoop's ``GlobPattern.set`` makes of ``glob``, character for character."""
    out: list[str] = []
    set_open = curly_open = 0
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "\\":
            i += 1
            if i >= len(glob):
                raise ConfigError(f"glob {glob!r}: missing escaped character at pos {i}")
            out.append(c + glob[i])
        elif c in _LITERAL:
            out.append("\\" + c)
        elif c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "{":
            out.append("(?:")
            curly_open += 1
        elif c == ",":
            out.append("|" if curly_open else c)
        elif c == "}" and curly_open:
            curly_open -= 1
            out.append(")")
        elif c == "[":
            if set_open:
                raise ConfigError(f"glob {glob!r}: unclosed character class at pos {i}")
            set_open += 1
            out.append(c)
        elif c == "^":
            out.append(c if set_open else "\\^")
        elif c == "!":
            out.append("^" if set_open and glob[i - 1] == "[" else "!")
        elif c == "]":
            set_open = 0
            out.append(c)
        else:
            out.append(c)
        i += 1
    if set_open:
        raise ConfigError(f"glob {glob!r}: unclosed character class at pos {len(glob)}")
    if curly_open:
        raise ConfigError(f"glob {glob!r}: unclosed group at pos {len(glob)}")
    return "".join(out)


def glob_matcher(glob: str) -> Callable[[str], bool]:
    """Whether a whole path matches ``glob`` as Hadoop's ``GlobPattern.matches`` says."""
    try:
        compiled = re.compile(glob_regex(glob), re.DOTALL)
    except re.error as e:
        raise ConfigError(f"glob {glob!r} is not a pattern: {e}") from None
    return lambda path: compiled.fullmatch(path) is not None
