"""``hudi-py plugins``: every registered component per hook, with its distribution."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("plugins", help="list installed plugins and their components",
                       description="List every registered component per hook kind.")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help='print {"<kind>": [{"name", "distribution", "version"}...]}')  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core.plugins.manager import get_plugin_manager

    described = get_plugin_manager().describe()
    if args.json:
        print_json(described)
        return 0
    for kind, comps in described.items():
        print(f"{kind}:")
        if not comps:
            print("  (none)")
        for c in comps:
            print(f"  {c['name']:<28} {c['distribution']} {c['version']}")
    return 0
