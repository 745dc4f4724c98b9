"""Stage 4: which file group ("bucket") each record goes to (seed 4.2, Spark's UpsertPartitioner).

Runs on the driver over counts (a :class:`WorkloadProfile`), never over records:

* updates go to the bucket of the file group the index found;
* new records are packed into small base files first (``SmallFileAssign``: files under
  ``hoodie.parquet.small.file.limit``, room = (max file size - size) / average record size),
  then into new file groups of ``hoodie.parquet.max.file.size`` (``NewFileAssignState``).

MOR tables (no index here can index log files): a small file is a slice without log files; a
bucket that receives packed inserts rewrites its base file through the merge handle, as Hudi's
``handleUpdate`` "small file correction" does; other MOR updates append to the slice's log.
The BUCKET index does no packing: its buckets are fixed by the hash.

:func:`assign_buckets` then labels each record with its bucket number (vectorised).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteBehaviourOptions, WriteOptions
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.completed import CompletedDetails
from hudi_core.timeline.timeline import ActiveTimeline
from hudi_core.write.index import BUCKET_NUM, bucket_file_id
from hudi_core.write.records import BASE_INSTANT as BASE_INSTANT_COL
from hudi_core.write.records import BUCKET, DELETE_FLAG, FILE_ID, PARTITION_PATH

__all__ = [
    "BucketInfo",
    "BucketPlan",
    "SmallFile",
    "WorkloadProfile",
    "assign",
    "assign_buckets",
    "average_record_size",
    "partition_codes",
    "profile_of",
    "recent_record_sizes",
]

CREATE, MERGE, APPEND = "CREATE", "MERGE", "APPEND"


@dataclass(frozen=True)
class SmallFile:
    partition_path: str
    file_id: str
    base_instant: str
    size: int


@dataclass(frozen=True)
class BucketInfo:
    """One bucket: a file group written by one handle."""

    number: int
    partition_path: str
    file_id: str
    base_instant: str | None  # None: a new file group
    io_type: str  # CREATE, MERGE or APPEND

    @property
    def is_new(self) -> bool:
        return self.base_instant is None


@dataclass
class WorkloadProfile:
    """Counts per partition (inserts) and per existing file group (updates, deletes)."""

    inserts: dict[str, int] = field(default_factory=dict)
    #: (partition, file id, base instant) -> (updates, deletes)
    updates: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    #: BUCKET index: (partition, hash bucket, file id or None, base instant or None)
    hash_buckets: list[tuple[str, int, str | None, str | None]] = field(default_factory=list)


@dataclass
class BucketPlan:
    buckets: list[BucketInfo]
    #: partition -> (cumulative insert capacities, bucket numbers) for new records
    insert_ranges: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: (partition, hash bucket) -> bucket number (BUCKET index)
    hash_map: dict[tuple[str, int], int] = field(default_factory=dict)

    def bucket(self, number: int) -> BucketInfo:
        return self.buckets[number]


def partition_codes(tagged: pa.Table) -> tuple[np.ndarray, dict[str, int]]:
    """Dictionary codes of the batch's partition paths and the code of each path: computed once,
    they serve :func:`profile_of` and :func:`assign_buckets` both (a hash pass over the paths,
    ~20 ms a million rows)."""
    return _codes(tagged.column(PARTITION_PATH))


def profile_of(
    tagged: pa.Table, partitions: tuple[np.ndarray, dict[str, int]] | None = None
) -> WorkloadProfile:
    """The workload profile of a tagged batch (stage 3 output), counted over dictionary codes
    of the location columns (the records themselves are not copied). ``partitions``: the
    batch's :func:`partition_codes`, when the caller has them."""
    prof = WorkloadProfile()
    if tagged.num_rows == 0:
        return prof
    pcodes, pdict = partitions if partitions is not None else partition_codes(tagged)
    fcodes, fdict = _codes(tagged.column(FILE_ID))
    bcodes, bdict = _codes(tagged.column(BASE_INSTANT_COL))
    parts, fids, bases = list(pdict), list(fdict), list(bdict)
    nf, nb = len(fids) + 1, len(bases) + 1  # code -1 (null) is shifted to 0
    loc = ((pcodes * nf) + fcodes + 1) * nb + bcodes + 1

    def decode(code: int) -> tuple[str, str | None, str | None]:
        pf, bc = divmod(code, nb)
        pi, fc = divmod(pf, nf)
        return parts[pi], (fids[fc - 1] if fc else None), (bases[bc - 1] if bc else None)

    if BUCKET_NUM in tagged.column_names:
        hb = tagged.column(BUCKET_NUM).to_numpy(zero_copy_only=False).astype(np.int64)
        width = int(hb.max()) + 1
        for code in _distinct(loc * width + hb).tolist():
            lc, b = divmod(code, width)
            p, f, base = decode(lc)
            prof.hash_buckets.append((p, b, f, base))
    is_new = fcodes < 0
    if is_new.any():
        counts = np.bincount(pcodes[is_new], minlength=len(parts))
        prof.inserts = {parts[i]: int(c) for i, c in enumerate(counts.tolist()) if c}
    old = ~is_new
    if old.any():
        deletes = tagged.column(DELETE_FLAG).to_numpy(zero_copy_only=False).astype(np.int64)
        uniq = _distinct(loc[old])
        inverse = np.searchsorted(uniq, loc[old])
        n_all = np.bincount(inverse, minlength=len(uniq))
        n_del = np.bincount(inverse, weights=deletes[old], minlength=len(uniq)).astype(np.int64)
        for code, n, d in zip(uniq.tolist(), n_all.tolist(), n_del.tolist(), strict=True):
            p, f, base = decode(code)
            prof.updates[(p, f, base)] = (n - d, d)  # type: ignore[index]
    return prof


def _record_sizes(raw: bytes) -> tuple[int, int]:
    """(bytes, records) a commit wrote into base files, from its metadata's text."""
    stats = [
        s for s in CommitMetadata.from_json(raw).all_write_stats() if (s.path or "").endswith(".parquet")
    ]
    return sum(s.total_write_bytes for s in stats), sum(s.num_writes for s in stats)


#: what each completed commit wrote into base files (a stream's micro-batches never write enough
#: for one to settle the estimate, so every write would read the last ten again)
_RECORD_SIZES = CompletedDetails(_record_sizes)


def recent_record_sizes(timeline: ActiveTimeline) -> Iterator[tuple[int, int]]:
    """:func:`_record_sizes` of the last 10 completed commits, newest first, each read only when
    asked for: :func:`average_record_size` stops at the first that wrote enough bytes (a read
    less per commit it skips, ~30 ms each on S3), and a commit read before in this process is
    not read again. An unreadable one is skipped."""
    for inst in reversed(list(timeline.completed_commits())[-10:]):
        try:
            sizes = _RECORD_SIZES.get(timeline, inst)
        except Exception:
            continue
        yield sizes


def average_record_size(sizes: Iterable[tuple[int, int]], config: HoodieConfig) -> int:
    """Bytes per record from the newest commit that wrote enough base-file bytes (``sizes``:
    :func:`recent_record_sizes`), else ``hoodie.copyonwrite.record.size.estimate`` (Hudi's
    AverageRecordSizeUtils)."""
    default = int(config.get(WriteOptions.RECORD_SIZE_ESTIMATE))
    threshold = float(config.get(WriteBehaviourOptions.RECORD_SIZE_ESTIMATION_THRESHOLD)) * int(
        config.get(WriteOptions.PARQUET_SMALL_FILE_LIMIT)
    )
    for total_bytes, total_records in sizes:
        if total_records > 0 and total_bytes > threshold:
            return max(1, total_bytes // total_records)
    return max(1, default)


def _new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def assign(
    profile: WorkloadProfile,
    small_files: Sequence[SmallFile],
    config: HoodieConfig,
    *,
    is_mor: bool,
    avg_record_size: int,
    pack_small_files: bool = True,
) -> BucketPlan:
    """Plan buckets for a workload: updates, then small-file packing, then new file groups."""
    buckets: list[BucketInfo] = []
    plan = BucketPlan(buckets)
    update_io = APPEND if is_mor else MERGE
    if profile.hash_buckets:
        for part, hb, fid, base in sorted(profile.hash_buckets, key=lambda r: (r[0], r[1], r[2] or "")):
            if (part, hb) in plan.hash_map and fid is None:
                continue
            if fid is None:
                info = BucketInfo(len(buckets), part, bucket_file_id(hb), None, CREATE)
            else:
                info = BucketInfo(len(buckets), part, fid, base, update_io)
            buckets.append(info)
            plan.hash_map[(part, hb)] = info.number
        return plan
    by_fg: dict[tuple[str, str], int] = {}
    for part, fid, base in sorted(profile.updates):
        info = BucketInfo(len(buckets), part, fid, base, update_io)
        buckets.append(info)
        by_fg[(part, fid)] = info.number
    max_size = int(config.get(WriteOptions.PARQUET_MAX_FILE_SIZE))
    per_new_bucket = max(1, max_size // avg_record_size)
    smalls: dict[str, list[SmallFile]] = {}
    for sf in small_files:
        smalls.setdefault(sf.partition_path, []).append(sf)
    for part in sorted(profile.inserts):
        remaining = profile.inserts[part]
        caps: list[int] = []
        nums: list[int] = []
        total = 0
        for sf in sorted(smalls.get(part, []) if pack_small_files else [], key=lambda s: s.size):
            if remaining <= 0:
                break
            room = max(0, (max_size - sf.size) // avg_record_size)
            take = min(room, remaining)
            if take <= 0:
                continue
            num = by_fg.get((part, sf.file_id))
            if num is None:
                info = BucketInfo(len(buckets), part, sf.file_id, sf.base_instant, MERGE)
                buckets.append(info)
                by_fg[(part, sf.file_id)] = num = info.number
            elif is_mor:
                # packing inserts into a MOR small file rewrites its base (see module doc)
                old = buckets[num]
                buckets[num] = BucketInfo(num, old.partition_path, old.file_id, old.base_instant, MERGE)
            total += take
            remaining -= take
            caps.append(total)
            nums.append(num)
        while remaining > 0:
            take = min(per_new_bucket, remaining)
            info = BucketInfo(len(buckets), part, _new_file_id(), None, CREATE)
            buckets.append(info)
            total += take
            remaining -= take
            caps.append(total)
            nums.append(info.number)
        plan.insert_ranges[part] = (caps, nums)
    return plan


def _codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, dict[str, int]]:
    """Dictionary codes of a string column (nulls: -1) and the code of every value."""
    if column.null_count == len(column):  # e.g. no record has a location yet
        return np.full(len(column), -1, dtype=np.int64), {}
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    enc = arr.dictionary_encode()
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, {v: i for i, v in enumerate(enc.dictionary.to_pylist())}


def _distinct(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct non-negative codes: a bincount when the code space is small (no sort)."""
    if len(codes) == 0:
        return codes
    top = int(codes.max())
    if top <= 4 * len(codes) + 1024:
        return np.flatnonzero(np.bincount(codes, minlength=top + 1))
    return np.unique(codes)


def assign_buckets(
    tagged: pa.Table, plan: BucketPlan, partitions: tuple[np.ndarray, dict[str, int]] | None = None
) -> pa.Table:
    """Label every record with its bucket number (column ``BUCKET``); vectorised over
    dictionary codes (a loop over buckets, never over records). ``partitions``: the batch's
    :func:`partition_codes`, when the caller has them."""
    n = tagged.num_rows
    out = np.full(n, -1, dtype=np.int64)
    pcodes, pdict = partitions if partitions is not None else partition_codes(tagged)
    if plan.hash_map:
        hb = tagged.column(BUCKET_NUM).to_numpy(zero_copy_only=False).astype(np.int64)
        width = max(int(hb.max()) + 1 if n else 1, max(b for _, b in plan.hash_map) + 1)
        lookup = np.full(len(pdict) * width + 1, -1, dtype=np.int64)
        for (part, b), num in plan.hash_map.items():
            if part in pdict:
                lookup[pdict[part] * width + b] = num
        out = lookup[pcodes * width + hb]
    else:
        fcodes, fdict = _codes(tagged.column(FILE_ID))
        is_new = fcodes < 0
        lookup = np.full(len(pdict) * (len(fdict) + 1) + 1, -1, dtype=np.int64)
        for info in plan.buckets:
            if not info.is_new and info.partition_path in pdict and info.file_id in fdict:
                lookup[pdict[info.partition_path] * (len(fdict) + 1) + fdict[info.file_id]] = info.number
        old = ~is_new
        out[old] = lookup[pcodes[old] * (len(fdict) + 1) + fcodes[old]]
        for part, (caps, nums) in plan.insert_ranges.items():
            if part not in pdict:
                continue
            rows = np.flatnonzero(is_new & (pcodes == pdict[part]))
            slot = np.searchsorted(np.asarray(caps), np.arange(len(rows)), side="right")
            out[rows] = np.asarray(nums, dtype=np.int64)[slot]
    if (out < 0).any():  # pragma: no cover - a planning bug, never user input
        raise AssertionError(f"{int((out < 0).sum())} records have no bucket")
    cols = [c for c in tagged.column_names if c != BUCKET]
    return tagged.select(cols).append_column(BUCKET, pa.array(out))
