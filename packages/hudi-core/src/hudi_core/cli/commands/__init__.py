"""One module per ``hudi-py`` command; each defines ``add_parser(subparsers)``."""
