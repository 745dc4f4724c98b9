"""Entry point of the hudi-storage-s3 plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations
