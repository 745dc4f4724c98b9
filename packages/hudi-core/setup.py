"""The one compiled piece of hudi-core: the bloom filter hashing (``hudi_core.bloom._murmur``).

Optional: where no C compiler is found the install goes on without it and the filters hash in
numpy (``hudi_core.bloom.murmur``), with the same bits. Everything else is in pyproject.toml.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "hudi_core.bloom._murmur",
            ["src/hudi_core/bloom/_murmur.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
