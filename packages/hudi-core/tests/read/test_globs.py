"""Hadoop's glob patterns, as ``org.apache.hadoop.fs.GlobPattern`` 3.3.4 matched these paths
(after the ``*`` Hudi's incremental queries put first; a one-file Java program, 2026-12-07)."""

from __future__ import annotations

import pytest
from hudi_core.errors import ConfigError
from hudi_core.read.globs import glob_matcher

PATHS = [
    "file:/tmp/t/a/f1-0_0-1-1_20240101.parquet",
    "/tmp/t/b/.f2_20240101.log.1_0-1-1",
    "/tmp/t/c/f3.parquet",
    "/tmp/t/x=1/f.parquet",
    "/tmp/t/a+b/f.parquet",
    "/tmp/t/(a)/f.parquet",
    "/tmp/t/^a/f.parquet",
    "/tmp/t/a$/f.parquet",
    "/tmp/t/2024/01/03/f.parquet",
    "/tmp/t/a|b/f.parquet",
    "/tmp/t/d/f.parquet",
]

#: glob -> Hadoop's answer for each of PATHS
JAVA = {
    "/a/*": "10000000000",
    "/{a,c}/*": "10100000000",
    "/[ab]/*": "11000000000",
    "/[!ab]/*": "11111111111",
    "*.parquet": "10111111111",
    "/b/*.log.*": "01000000000",
    "a": "00000000000",
    "/a/?????*": "10000000000",
    "/x=1/*": "00010000000",
    "\\.parquet": "10111111111",
    "/a$/*": "00000001000",
    "/a+b/*": "00001000000",
    "/(a)/*": "00000100000",
    "/^a/*": "00000010000",
    "/[^a]/*": "11111111111",
    "*/2024/01/*": "00000000100",
    "{/a/,/c/}*": "10100000000",
    "/a|b/*": "00000000010",
}


@pytest.mark.parametrize("glob", sorted(JAVA))
def test_paths_match_as_hadoops_glob_pattern_says(glob: str) -> None:
    matches = glob_matcher("*" + glob)
    assert "".join("1" if matches(p) else "0" for p in PATHS) == JAVA[glob]


@pytest.mark.parametrize("glob", ["/{a,b/*", "/[a", "/a\\"])
def test_a_glob_hadoop_refuses_is_refused(glob: str) -> None:
    with pytest.raises(ConfigError, match="glob"):
        glob_matcher("*" + glob)
