"""Registers the built-in key generators through ``hudi_register_key_generators``."""

from __future__ import annotations

from hudi_core.plugins.hookspecs import Register, hookimpl

__all__ = ["CoreKeyGenerators"]

_PKG = "org.apache.hudi.keygen."


class CoreKeyGenerators:
    """SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP and CUSTOM, aliased by Hudi's Java class names."""

    @hookimpl
    def hudi_register_key_generators(self, register: Register) -> None:
        from hudi_core.keygen.custom import CustomKeyGenerator
        from hudi_core.keygen.simple import (
            ComplexKeyGenerator,
            NonpartitionedKeyGenerator,
            SimpleKeyGenerator,
        )
        from hudi_core.keygen.timestamp import TimestampBasedKeyGenerator

        register(
            "SIMPLE",
            SimpleKeyGenerator,
            aliases=(_PKG + "SimpleKeyGenerator", _PKG + "SimpleAvroKeyGenerator"),
        )
        register(
            "COMPLEX",
            ComplexKeyGenerator,
            aliases=(_PKG + "ComplexKeyGenerator", _PKG + "ComplexAvroKeyGenerator"),
        )
        register(
            "NON_PARTITION",
            NonpartitionedKeyGenerator,
            aliases=(
                _PKG + "NonpartitionedKeyGenerator",
                _PKG + "NonpartitionedAvroKeyGenerator",
                "NONPARTITIONED",
            ),
        )
        register(
            "TIMESTAMP",
            TimestampBasedKeyGenerator,
            aliases=(_PKG + "TimestampBasedKeyGenerator", _PKG + "TimestampBasedAvroKeyGenerator"),
        )
        register(
            "CUSTOM",
            CustomKeyGenerator,
            aliases=(_PKG + "CustomKeyGenerator", _PKG + "CustomAvroKeyGenerator"),
        )
