"""A local exclusive create's temporary file: a name no Hudi reader takes for a Hudi file, and
the leftovers of a killed create found by age."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hudi_core.storage import TEMP_PREFIX, LocalStorage, stale_temp_files
from hudi_core.table.file_names import BaseFileName, LogFileName

LOG = ".00000000-75e7-4228-865d-2d8cfa703b4d-0_20261127185612492.log.98_0-1-0"


def test_a_create_leaves_only_its_file(tmp_path: Path) -> None:
    storage = LocalStorage()
    assert storage.create_if_absent(str(tmp_path / LOG), b"blocks")
    assert not storage.create_if_absent(str(tmp_path / LOG), b"other")
    assert sorted(os.listdir(tmp_path)) == [LOG]
    assert (tmp_path / LOG).read_bytes() == b"blocks"


def test_stale_temp_files_are_the_old_leftovers_of_either_naming(tmp_path: Path) -> None:
    now = time.time()
    names = {
        "old": f"{TEMP_PREFIX}{'a' * 32}.tmp",
        "young": f"{TEMP_PREFIX}{'b' * 32}.tmp",
        "legacy": f"{LOG}.{'c' * 32}.tmp",  # what releases before TEMP_PREFIX named them
        "log": LOG,
    }
    for key, name in names.items():
        (tmp_path / name).write_bytes(b"x")
        age = 5.0 if key == "young" else 600.0
        os.utime(tmp_path / name, (now - age, now - age))
    stale = sorted(f.name for f in stale_temp_files(LocalStorage(), str(tmp_path), 60.0, now))
    assert stale == sorted([names["old"], names["legacy"]])
    everything = sorted(f.name for f in stale_temp_files(LocalStorage(), str(tmp_path), 0.0, now))
    assert everything == sorted([names["old"], names["young"], names["legacy"]])
    # our own parsers take the new name for neither kind of Hudi file
    assert LogFileName.parse(names["old"]) is None and BaseFileName.parse(names["old"]) is None
