from hudi_core.testing.fixtures import avro_codec

__all__ = ["avro_codec"]
