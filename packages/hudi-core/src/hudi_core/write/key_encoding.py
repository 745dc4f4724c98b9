"""The record key encoding a table of the complex key generator over one record key field holds.

Hudi 0.14.0 and earlier key such a table's records ``<field>:<value>``; 0.14.1, 0.15.0 and 1.0.0-1.0.2
wrote the bare ``<value>`` (HUDI-7001), and the releases that fixed it went back to ``<field>:<value>``
(``hoodie.write.complex.keygen.new.encoding``, default false, true for the bare value). A writer
whose encoding is not the table's keys every record anew: an upsert of a stored key adds a
duplicate instead of updating it. So, as Hudi's fixed releases do
(``hoodie.write.complex.keygen.auto.deduce.encoding``, default true), a write that does not set
the encoding takes the table's: the one recorded in ``.hoodie/.aux/complex_key_encoding``, else
the one a stored ``_hoodie_record_key`` shows, from a base file of the latest commit that wrote
one, then recorded there (Hudi's file: a Java properties file of that option) for the writes
after it. A table with no base file yet keeps the default and records nothing.
"""

from __future__ import annotations

import logging

import pyarrow.parquet as pq
from hudi_core.config.keygen import KeyGenOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import HudiError
from hudi_core.io.base_file import MIN_KEY, read_footer
from hudi_core.keygen import key_generator_for
from hudi_core.keygen.simple import ComplexKeyGenerator
from hudi_core.table.meta_client import MetaClient
from hudi_core.timeline.commit_metadata import CommitMetadata

__all__ = ["AUX_FILE", "stored_key_encoding", "with_table_key_encoding"]

log = logging.getLogger(__name__)

#: where Hudi's fixed releases record the encoding they deduced (a Java properties file)
AUX_FILE = ".aux/complex_key_encoding"


def with_table_key_encoding(table: MetaClient, config: HoodieConfig) -> HoodieConfig:
    """``config`` (a write's) with ``hoodie.write.complex.keygen.new.encoding`` set to the
    table's encoding, where the table keys records by the complex key generator over one field,
    the write does not set the encoding itself nor turn the deduction off, and the table tells."""
    new_encoding = KeyGenOptions.COMPLEX_BARE_SINGLE_FIELD
    if config.raw(new_encoding) is not None or not config.get(KeyGenOptions.COMPLEX_AUTO_DEDUCE_ENCODING):
        return config
    if not table.config.populate_meta_fields:
        return config  # virtual keys: no stored key to disagree with
    try:
        keygen = key_generator_for(config)
    except HudiError:  # a key generator the write cannot make fails later, with its own error
        return config
    fields = list(keygen.record_key_fields)
    if type(keygen) is not ComplexKeyGenerator or len(fields) != 1:
        return config
    bare = stored_key_encoding(table, fields[0])
    if bare is None:
        return config
    return config.with_options({new_encoding.key: str(bare).lower()})


def stored_key_encoding(table: MetaClient, field: str) -> bool | None:
    """True when the table's stored keys are bare values, False when ``<field>:<value>``, None
    when it cannot tell (no base file written yet)."""
    recorded = _recorded(table)
    if recorded is not None:
        return recorded
    tl = table.timeline
    for inst in reversed(list(tl.completed_commits())):
        stats = CommitMetadata.from_json(tl.read_details(inst)).all_write_stats()
        for stat in stats:
            if not stat.path or not stat.path.endswith(".parquet") or stat.num_writes <= 0:
                continue
            key = _first_key(table, f"{table.base_uri}/{stat.path}")
            if key is not None:
                bare = not key.startswith(f"{field}:")
                log.info("record keys of %s are %s (%s)", table.base_uri,
                         "bare values" if bare else f"'{field}:<value>'", stat.path)  # fmt: skip
                _record(table, bare)
                return bare
    return None


def _record(table: MetaClient, bare: bool) -> None:
    key = KeyGenOptions.COMPLEX_BARE_SINGLE_FIELD.key
    text = f"#Complex key generator encoding format\n{key}={str(bare).lower()}\n"
    try:
        table.storage.write_bytes(f"{table.meta_path}/{AUX_FILE}", text.encode())
    except OSError as e:  # the write goes on with what it found; the next one looks again
        log.warning("could not record the record key encoding of %s: %s", table.base_uri, e)


def _recorded(table: MetaClient) -> bool | None:
    path = f"{table.meta_path}/{AUX_FILE}"
    try:
        text = table.storage.read_text(path)
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key.strip() == KeyGenOptions.COMPLEX_BARE_SINGLE_FIELD.key:
            return value.strip().lower() == "true"
    return None


def _first_key(table: MetaClient, path: str) -> str | None:
    """A stored record key of the base file at ``path``: its footer's least key, else its first
    row's; None when the file is gone (cleaned) or holds no row."""
    try:
        least = read_footer(table.storage, path).get(MIN_KEY)
        if least:
            return least
        with table.storage.open_read(path) as f:
            parquet = pq.ParquetFile(f)
            if parquet.metadata.num_rows == 0:
                return None
            keys = parquet.read_row_group(0, columns=["_hoodie_record_key"]).column(0)
            return str(keys[0].as_py()) if len(keys) else None
    except FileNotFoundError:
        return None
