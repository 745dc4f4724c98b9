"""Key generator options (spec 7): which generator, and how it renders keys and partitions."""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["KeyGenOptions", "TimestampKeyGenOptions"]


def _k(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="keygen")


_TS = "hoodie.keygen.timebased."
_TS_OLD = "hoodie.deltastreamer.keygen.timebased."


def _ts(suffix: str, default: object, doc: str) -> ConfigProperty:  # type: ignore[type-arg]
    return _k(_TS + suffix, default, doc, _TS_OLD + suffix)


class KeyGenOptions:
    CONSISTENT_LOGICAL_TIMESTAMP = _k(
        "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled",
        False,
        "Render timestamp key fields as java.sql.Timestamp text instead of raw epoch numbers.",
    )
    AUTO_KEY_INSTANT = _k(
        "_hoodie.record.key.gen.instant",
        None,
        "Internal: the instant of the record keys a write makes up for a table without record key "
        "fields (set by the writer for its tasks).",
    )
    COMPLEX_BARE_SINGLE_FIELD = _k(
        "hoodie.write.complex.keygen.new.encoding",
        False,
        "ComplexKeyGenerator with one record key field writes the bare value (as Hudi 0.14.1/0.15.0 "
        "did) instead of 'field:value'. Unset, a write into a table with data takes the table's "
        "encoding (see hoodie.write.complex.keygen.auto.deduce.encoding).",
    )
    COMPLEX_AUTO_DEDUCE_ENCODING = _k(
        "hoodie.write.complex.keygen.auto.deduce.encoding",
        True,
        "When hoodie.write.complex.keygen.new.encoding is not set, a write with ComplexKeyGenerator "
        "over one record key field keys records as the table's stored keys are (Hudi's record of it "
        "in .hoodie/.aux/complex_key_encoding, else a key of a recent base file), so an upsert "
        "updates what Hudi 0.14.1/0.15.0 wrote instead of adding duplicates.",
    )


class TimestampKeyGenOptions:
    TIMESTAMP_TYPE = _ts(
        "timestamp.type",
        None,
        "UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR, DATE_STRING or MIXED.",
    )
    SCALAR_TIME_UNIT = _ts(
        "timestamp.scalar.time.unit", "SECONDS", "SCALAR: java.util.concurrent.TimeUnit of the values."
    )
    INPUT_DATE_FORMAT = _ts("input.dateformat", "", "DATE_STRING/MIXED: Java date pattern(s) of inputs.")
    INPUT_DATE_FORMAT_DELIMITER = _ts(
        "input.dateformat.list.delimiter.regex", ",", "Separates several input patterns."
    )
    INPUT_TIMEZONE = _ts("input.timezone", "", "Zone of inputs without an offset; default: timezone.")
    OUTPUT_DATE_FORMAT = _ts("output.dateformat", "", "Java date pattern of the partition value.")
    OUTPUT_TIMEZONE = _ts("output.timezone", "", "Zone the partition value is formatted in.")
    TIMEZONE = _ts("timezone", "UTC", "Default zone for input and output.")
