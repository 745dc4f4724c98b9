"""``hudi-py read``: run a query and write the rows to parquet (or show the first rows)."""

from __future__ import annotations

import argparse
import ast
import re
from typing import Any

from hudi_core.cli.commands._common import add_option_flag, parse_options
from hudi_core.errors import ConfigError

_FILTER_RE = re.compile(r"^\s*([^!<>=\s]+)\s*(==|!=|<=|>=|=|<|>| in | not in )\s*(.+?)\s*$", re.IGNORECASE)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("read", help="query a table (snapshot, read_optimized, incremental)",
                       description="Run a query and write the result to a parquet file.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    add_option_flag(p)  # reader options: hoodie.read.timeline.holes.resolution.policy, ...incr.path.glob
    p.add_argument("--query", default="snapshot", choices=["snapshot", "read_optimized", "incremental"])
    p.add_argument("--as-of", default=None, metavar="T",
                   help="time travel: the table as of instant T (yyyyMMddHHmmss[SSS], "
                        "'yyyy-MM-dd HH:mm:ss[.SSS]' or yyyy-MM-dd)")  # fmt: skip
    p.add_argument("--start", default=None, metavar="T",
                   help="incremental: after instant T (exclusive; 000 for the beginning)")  # fmt: skip
    p.add_argument("--end", default=None, metavar="T", help="incremental: up to instant T (inclusive)")
    p.add_argument("--incremental-format", default="latest_state", choices=["latest_state", "cdc"],
                   help="incremental: the records the commits wrote, as they stand (latest_state), or "
                        "their changes on a table with hoodie.table.cdc.enabled (cdc: op, ts_ms, before, "
                        "after), Hudi's hoodie.datasource.query.incremental.format")  # fmt: skip
    p.add_argument("--cdc-images", default="json", choices=["json", "struct"],
                   help="cdc: the before and after images as JSON text (Hudi's answer) or as typed "
                        "structs of the table's data fields")  # fmt: skip
    p.add_argument("--columns", default=None, help="comma-separated columns to return")
    p.add_argument("--filter", action="append", default=[], metavar="EXPR",
                   help='"col=value", "col>=value", "col in (a,b)"... (repeatable, all must hold; '
                        'a date as 2024-01-31, a time as 2024-01-31T10:00:00Z)')  # fmt: skip
    p.add_argument(
        "--output", default=None, metavar="FILE.parquet", help="write the rows to this parquet file"
    )
    p.add_argument("--format", default="parquet", choices=["parquet", "table"],
                   help="table: print the first rows instead of writing a file")  # fmt: skip
    p.add_argument("--limit", type=int, default=20, help="rows to print with --format table")
    p.set_defaults(func=run)


def parse_filter(text: str) -> tuple[str, str, Any]:
    """``"city=sf"`` -> ``("city", "=", "sf")``; numbers and booleans become Python values."""
    m = _FILTER_RE.match(text)
    if not m:
        raise ConfigError(f"--filter {text!r} is not COLUMN OP VALUE (ops: = != < <= > >= in)")
    col, op, raw = m.group(1), m.group(2).strip().lower(), m.group(3)
    if op in ("in", "not in"):
        inner = raw.strip()
        if inner.startswith("(") and inner.endswith(")"):
            inner = inner[1:-1]
        return col, op, [_literal(v) for v in inner.split(",") if v.strip()]
    return col, op, _literal(raw)


def _literal(raw: str) -> Any:
    raw = raw.strip()
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw
    return value if isinstance(value, (int, float, str)) else raw


def run(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    from hudi_core import HudiTable

    if args.format == "parquet" and not args.output:
        raise ConfigError("--output FILE.parquet is required (or use --format table to print rows)")
    table = HudiTable.open(args.base_uri, options=parse_options(args.option))
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    filters = [parse_filter(f) for f in args.filter]
    if args.query == "incremental" and args.incremental_format == "cdc":
        result = table.read_changes(args.start or "000", args.end, images=args.cdc_images)
    else:
        result = table.read(args.query, as_of=args.as_of, start=args.start, end=args.end,
                            columns=columns, filters=filters)  # fmt: skip
    if args.format == "table":
        _print_rows(result, args.limit)
        return 0
    pq.write_table(result, args.output)
    print(f"wrote {result.num_rows} rows, {result.num_columns} columns to {args.output}")
    return 0


def _print_rows(result: Any, limit: int) -> None:
    names = result.column_names
    rows = result.slice(0, max(limit, 0)).to_pylist()
    cells = [[_cell(r[n]) for n in names] for r in rows]
    widths = [min(40, max([len(n)] + [len(c[i]) for c in cells])) for i, n in enumerate(names)]
    print("  ".join(n[:w].ljust(w) for n, w in zip(names, widths, strict=False)))
    for c in cells:
        print("  ".join(v[:w].ljust(w) for v, w in zip(c, widths, strict=False)))
    more = result.num_rows - len(rows)
    print(f"({result.num_rows} rows{f', {more} not shown' if more > 0 else ''})")


def _cell(value: Any) -> str:
    return "null" if value is None else str(value)
