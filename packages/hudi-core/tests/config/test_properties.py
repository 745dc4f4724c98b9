from __future__ import annotations

from pathlib import Path

import pytest
from hudi_core.config.properties import dump_properties, load_properties
from hudi_core.testing.corpus import corpus_root


def test_load_follows_java_properties_semantics() -> None:
    text = (
        "# comment\n! also a comment\n"
        "a=1\n"
        "b : two words\n"
        "c\tthree\n"
        "  d=spaced key line\n"
        "e=line\\\n    continued\n"
        "f=esc\\=aped\\:colon\\u00e9\\n\n"
        "g\\ key=with space\n"
        "h=\n"
    )
    props = load_properties(text)
    assert props == {
        "a": "1",
        "b": "two words",
        "c": "three",
        "d": "spaced key line",
        "e": "linecontinued",
        "f": "esc=aped:colon\u00e9\n",
        "g key": "with space",
        "h": "",
    }


def test_dump_escapes_like_properties_store_and_round_trips() -> None:
    props = {
        "hoodie.table.create.schema": '{"type":"record","name":"x"}',
        "fmt": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "odd key": " leading space=#!\\",
        "unicode": "caf\u00e9\t",
    }
    text = dump_properties(props, "Properties saved on 2024-04-18T22:35:50.847Z")
    lines = text.splitlines()
    assert lines[0] == "#Properties saved on 2024-04-18T22:35:50.847Z"
    assert lines[1].startswith("#")
    assert 'hoodie.table.create.schema={"type"\\:"record","name"\\:"x"}' in lines
    assert "fmt=yyyy-MM-dd'T'HH\\:mm\\:ss.SSSZ" in lines
    assert "odd\\ key=\\ leading space\\=\\#\\!\\\\" in lines
    assert "unicode=caf\\u00E9\\t" in lines
    assert load_properties(text) == props


def test_every_corpus_properties_file_parses_to_its_schema() -> None:
    root = corpus_root()
    assert root is not None
    files = sorted(Path(root).glob("tables/*/*/.hoodie/hoodie.properties"))
    assert len(files) >= 10
    for f in files:
        props = load_properties(f.read_text("latin-1"))
        assert props["hoodie.table.name"] == f.parent.parent.name
        if "hoodie.table.create.schema" in props:
            import json

            schema = json.loads(props["hoodie.table.create.schema"])
            assert schema["type"] == "record"


@pytest.mark.parametrize("bad", ["k=\\u12", "k=\\uzzzz"])
def test_malformed_unicode_escape_is_an_error(bad: str) -> None:
    with pytest.raises(ValueError, match="uXXXX"):
        load_properties(bad)
