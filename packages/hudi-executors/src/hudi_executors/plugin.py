"""Entry point of the hudi-executors plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations
