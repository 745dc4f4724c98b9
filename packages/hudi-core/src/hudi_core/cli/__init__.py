"""The ``hudi-py`` command line."""
