"""Compaction of MERGE_ON_READ tables: schedule -> plan -> execute -> commit (spec 9, seed 6).

>>> from hudi_core.compaction import schedule_compaction, run_compaction  # doctest: +SKIP
>>> t = schedule_compaction(table, force=True)  # doctest: +SKIP
>>> run_compaction(table, t)  # doctest: +SKIP
"""

from __future__ import annotations

from hudi_core.compaction.errors import CompactionError, CompactionValidationError
from hudi_core.compaction.plan import CompactionOperation, CompactionPlan, read_plan, write_plan
from hudi_core.compaction.runner import (
    CompactionResult,
    OperationResult,
    compact,
    maybe_compact_inline,
    pending_compactions,
    rollback_inflight_compaction,
    run_compaction,
    run_compaction_async,
    run_pending_compactions,
)
from hudi_core.compaction.scheduler import (
    build_plan,
    plan_strategy_for,
    schedule_compaction,
    trigger_for,
    validate_compaction_instant,
)

__all__ = [
    "CompactionError",
    "CompactionOperation",
    "CompactionPlan",
    "CompactionResult",
    "CompactionValidationError",
    "OperationResult",
    "build_plan",
    "compact",
    "maybe_compact_inline",
    "pending_compactions",
    "plan_strategy_for",
    "read_plan",
    "rollback_inflight_compaction",
    "run_compaction",
    "run_compaction_async",
    "run_pending_compactions",
    "schedule_compaction",
    "trigger_for",
    "validate_compaction_instant",
    "write_plan",
]
