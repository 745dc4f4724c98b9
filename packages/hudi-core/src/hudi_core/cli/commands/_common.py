"""Helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hudi_core.errors import ConfigError

__all__ = ["add_option_flag", "parse_options", "print_json"]


def add_option_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--option", "-o", action="append", default=[], metavar="KEY=VALUE",
        help="a hoodie.* option (repeatable)",
    )  # fmt: skip


def parse_options(pairs: list[str], flag: str = "--option") -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ConfigError(f"{flag} {pair!r} is not KEY=VALUE")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
