"""The compiled pieces of hudi-core: the bloom filter hashing (``hudi_core.bloom._murmur``), the
record keys' hash tables (``hudi_core.keymatch._match``), the Avro records of log blocks
(``hudi_core.avro._codec``) and the BUCKET index's Java string hash
(``hudi_core.write.index._javahash``).

All optional: where no C compiler is found the install goes on without them, the filters hash in
numpy (``hudi_core.bloom.murmur``) with the same bits, keys are matched by pyarrow's kernels
(``hudi_core.keymatch``) with the same answers, and log blocks are encoded and decoded in numpy
(``hudi_core.avro.encoder``, ``hudi_core.avro.flat_decoder``) with the same bytes, and bucket
numbers are hashed in numpy (``hudi_core.write.index.bucket``) with the same answers.
Everything else is in pyproject.toml.
"""

from setuptools import Extension, setup

#: the string buffers' check the extensions that take keys share
STRINGS_H = ["src/hudi_core/_strings.h"]

setup(
    ext_modules=[
        Extension(
            "hudi_core.bloom._murmur",
            ["src/hudi_core/bloom/_murmur.c"],
            extra_compile_args=["-O3"],
            depends=STRINGS_H,
            optional=True,
        ),
        Extension(
            "hudi_core.keymatch._match",
            ["src/hudi_core/keymatch/_match.c"],
            extra_compile_args=["-O3"],
            depends=STRINGS_H,
            optional=True,
        ),
        Extension(
            "hudi_core.avro._codec",
            ["src/hudi_core/avro/_codec.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "hudi_core.write.index._javahash",
            ["src/hudi_core/write/index/_javahash.c"],
            extra_compile_args=["-O3"],
            depends=STRINGS_H,
            optional=True,
        ),
    ]
)
