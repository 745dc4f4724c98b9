"""Entry point of the hudi-spark plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations
