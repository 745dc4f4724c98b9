"""Avro binary <-> Arrow: the vectorised encoder, the decoder, object-container files."""

from __future__ import annotations

from hudi_core.avro.decoder import NotFlat, decode_flat_records, decode_records
from hudi_core.avro.encoder import encode_records, record_segments

__all__ = ["NotFlat", "decode_flat_records", "decode_records", "encode_records", "record_segments"]
