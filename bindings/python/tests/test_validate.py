"""`pi_session.validate`: the validator's corpus (`conformance/validate/*/expected.json`) and the
command line's `validate --format json`."""

import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import pi_session
from conftest import CASES, CORPUS_PI, VALIDATE_CASES, case_meta, read_json

# The checks of the file's name and directory (PS0302, PS0303): `validate` always makes them
# (it is given real paths), the corpus's reports only for cases with a `path`.
LAYOUT = {"PS0302", "PS0303"}


def without_layout(diagnostics: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [d for d in diagnostics if d["code"] not in LAYOUT]


def validate_cases() -> List[Any]:
    out = []
    for case in sorted(p.parent for p in VALIDATE_CASES.glob("*/case.json")):
        meta = case_meta(case)
        # `path` and `maxTextUnits` are the Rust tests' knobs, not the API's; `dialect` (oh-my-pi's
        # rules) neither: the API checks pi's format.
        if "path" in meta or "maxTextUnits" in meta or "dialect" in meta:
            continue
        out.append(pytest.param(case, id=case.name))
    return out


@pytest.mark.parametrize("case", validate_cases())
def test_report_matches_the_validator_corpus(case: Path) -> None:
    meta = case_meta(case)
    expected = read_json(case / "expected.json")
    report = pi_session.validate(
        case / "session.jsonl",
        pi=meta.get("pi", CORPUS_PI),
        schema_only=meta.get("schemaOnly", False),
    )
    assert report["formatVersion"] == 1
    assert report["summary"]["files"] == 1
    (file,) = report["files"]
    assert file["verdict"] == expected["verdict"]
    assert without_layout(file["diagnostics"]) == expected["diagnostics"]
    stats = {k: v for k, v in file["stats"].items() if k != "infos"}
    assert stats == {k: v for k, v in expected["stats"].items() if k != "infos"}
    assert sorted({d["code"] for d in without_layout(file["diagnostics"])}) == sorted(
        meta["codes"]
    )


def test_many_paths_directories_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    report = pi_session.validate([CASES / "context", missing], pi="0.73", strict=True)
    files = report["files"]
    assert len(files) > 50
    assert files[-1]["path"].endswith("missing.jsonl")
    assert "readError" in files[-1] and not files[-1]["valid"]
    assert report["summary"]["unreadable"] == 1
    assert report["verdict"] == "strict"
    assert report["pi"] == "0.73.1"


def test_no_paths_is_nothing() -> None:
    report = pi_session.validate([])
    assert report["files"] == [] and report["summary"]["files"] == 0


def test_same_report_as_the_command_line(pi_session_bin: Path) -> None:
    paths = [str(CASES / "context"), str(VALIDATE_CASES / "parent-cycle" / "session.jsonl")]
    done = subprocess.run(
        [str(pi_session_bin), "validate", "--format", "json", "--pi", "0.87", *paths],
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    cli = json.loads(done.stdout)
    ours = pi_session.validate(paths, pi="0.87")
    assert ours["tool"]["name"] != cli["tool"]["name"]
    del cli["tool"], ours["tool"]
    assert ours == cli
