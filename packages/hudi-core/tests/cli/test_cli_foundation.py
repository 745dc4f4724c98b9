from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hudi_core.cli.main import build_parser, main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hudi_core.cli.main", *args], capture_output=True, text=True)


def test_create_then_timeline_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(tmp_path / "t")
    assert main(["create", base, "--name", "t", "--type", "mor", "--record-key", "id", "--partition-by", "p",
                 "--option", "hoodie.database.name=default"]) == 0  # fmt: skip
    assert "MERGE_ON_READ" in capsys.readouterr().out
    (tmp_path / "t/.hoodie/20240101000000000.deltacommit.requested").write_text("")
    assert main(["timeline", base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"instant": "20240101000000000", "action": "deltacommit", "state": "REQUESTED"}
    ]


def test_plugins_json_lists_every_kind_with_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"storage", "key_generator", "executor", "engine", "compaction_trigger",
            "compaction_plan_strategy", "lock_provider"} <= set(out)  # fmt: skip
    assert {"name": "SIMPLE", "distribution": "hudi-core", "version": "0.1.0"} in out["executor"]
    for comps in out.values():
        for c in comps:
            assert set(c) == {"name", "distribution", "version"}


def test_every_command_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands = sorted(sub.choices)  # type: ignore[union-attr]
    assert {"create", "timeline", "plugins"} <= set(commands)
    for name in commands:
        proc = run(name, "--help")
        assert proc.returncode == 0, name
        assert "usage: hudi-py " + name in proc.stdout


def test_missing_table_and_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    proc = run("timeline", str(tmp_path / "missing"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "no Hudi table" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("create", str(tmp_path / "x"), "--record-key", "id")
    assert proc.returncode == 2 and "--name" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("create", str(tmp_path / "y"), "--name", "y", "--record-key", "id", "--option", "novalue")
    assert proc.returncode == 1 and "KEY=VALUE" in proc.stderr and "Traceback" not in proc.stderr


def test_a_storage_refusal_is_a_one_line_error_and_a_bug_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What s3fs raises for a wrong secret (PermissionError: Forbidden) reads as the storage's
    refusal, in one line; an error of our own code keeps its traceback."""
    from hudi_core import HudiTable

    base = str(tmp_path / "t")
    assert main(["create", base, "--name", "t", "--record-key", "id"]) == 0
    capsys.readouterr()

    def forbidden(*args: object, **kwargs: object) -> None:
        raise PermissionError("Forbidden")

    monkeypatch.setattr(HudiTable, "open", forbidden)
    assert main(["timeline", base]) == 1
    err = capsys.readouterr().err
    assert err == "hudi-py timeline: error: storage: PermissionError: Forbidden\n"

    def bug(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(HudiTable, "open", bug)
    with pytest.raises(ZeroDivisionError):
        main(["timeline", base])


def test_a_refused_argument_never_echoes_a_credential() -> None:
    res = run(
        "timeline", "/nowhere", "--option", "hoodie.storage.s3.secret.key=s3cr3t", "AWS_SESSION_TOKEN=tok3n"
    )
    assert res.returncode == 2
    assert "unrecognized arguments" in res.stderr
    assert "s3cr3t" not in res.stderr and "tok3n" not in res.stderr
    assert "hoodie.storage.s3.secret.key=***" in res.stderr


def test_create_without_a_record_key_makes_a_table_whose_writes_make_keys_up(tmp_path: Path) -> None:
    import pyarrow as pa
    from hudi_core import HudiTable

    base = str(tmp_path / "logs")
    assert main(["create", base, "--name", "logs", "--partition-by", "p"]) == 0
    assert "recordkey" not in (tmp_path / "logs/.hoodie/hoodie.properties").read_text()
    HudiTable.open(base).insert(pa.table({"p": ["a", "b"], "v": [1, 2]}))
    HudiTable.open(base).insert(pa.table({"p": ["a"], "v": [3]}))
    rows = HudiTable.open(base).read().to_pylist()
    commits = [i.timestamp for i in HudiTable.open(base).timeline.completed_commits()]
    assert sorted((r["_hoodie_record_key"], r["v"]) for r in rows) == [
        (f"{commits[0]}_0_0", 1),
        (f"{commits[0]}_0_1", 2),
        (f"{commits[1]}_0_0", 3),
    ]
