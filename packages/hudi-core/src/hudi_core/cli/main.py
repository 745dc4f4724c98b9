"""``hudi-py``: the command line. Each module in ``hudi_core.cli.commands`` adds one command
(``add_parser(subparsers)`` registers it and sets ``func`` to a ``run(args) -> int``)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from collections.abc import Sequence

from hudi_core import __version__
from hudi_core.errors import HudiError

__all__ = ["build_parser", "main"]


#: ``key=value`` where the key names a credential: argparse echoes arguments it refuses
_CREDENTIAL_RE = re.compile(
    r"([\w.\-]*(?:secret|password|token|access[._]?key|credential)[\w.\-]*=)\S+", re.I
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        shown = _CREDENTIAL_RE.sub(r"\1***", message)
        self.exit(2, f"{self.prog}: error: {shown}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hudi-py", description="Apache Hudi tables from Python.")
    parser.add_argument("--version", action="version", version=f"hudi-py {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    from hudi_core.cli import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.add_parser(sub)
    return parser


#: libraries whose errors mean the storage refused (credentials, endpoint), not a bug here
_STORAGE_LIBRARIES = ("botocore", "aiobotocore", "s3fs", "fsspec", "hdfs_native")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except HudiError as e:
        print(f"hudi-py {args.command}: error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"hudi-py {args.command}: error: file not found: {e.filename or e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:  # the storage refused: permissions, credentials, the network
        print(f"hudi-py {args.command}: error: storage: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        if type(e).__module__.split(".")[0] not in _STORAGE_LIBRARIES:
            raise  # a bug: its traceback is what to report
        print(f"hudi-py {args.command}: error: storage: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"hudi-py {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
