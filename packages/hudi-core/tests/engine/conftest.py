from hudi_core.testing.fixtures import mimalloc_default

__all__ = ["mimalloc_default"]
