"""Errors of the cleaning service."""

from __future__ import annotations

from hudi_core.errors import HudiError

__all__ = ["CleanError"]


class CleanError(HudiError):
    """A clean could not be planned or executed."""
