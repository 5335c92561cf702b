"""`pi_session.redact` and `redact_bytes`: the planted secrets of the command line's tests gone,
the structure kept, the report the command line's, and the arguments checked."""

import json
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

import pi_session

GITHUB_PAT = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u"
DATABASE_URL = "postgres://app:S3cr3tPassw0rd9@db.internal:5432/app"
NAMED = "correct-horse-battery-staple"
KEY = b"the python binding's test key"


def session() -> bytes:
    lines: List[Any] = [
        {"type": "session", "version": 3, "id": "0f8fad5b-d9cb-469f-a165-70867728950e",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
        {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": f"my token is {GITHUB_PAT}, pw {NAMED}", "timestamp": 1}},
        {"type": "message", "id": "b1b2c3d4", "parentId": "a1b2c3d4", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": json.dumps({"env": DATABASE_URL})}],
                     "timestamp": 2}},
        {"type": "message", "id": "c1b2c3d4", "parentId": "b1b2c3d4", "timestamp": "2026-01-01T00:00:03.000Z",
         "message": {"role": "user", "content": "nothing here", "timestamp": 3}},
    ]
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()


def test_redact_bytes_removes_the_secrets_and_keeps_the_structure() -> None:
    data = session()
    out, report = pi_session.redact_bytes(data, secrets=[NAMED], key=KEY)
    text = out.decode()
    for secret in (GITHUB_PAT, "S3cr3tPassw0rd9", NAMED):
        assert secret not in text
    assert report["redacted"] == 3
    assert report["rules"]["github-pat"] == {"redacted": 1, "candidates": 0}
    assert {f["entryId"] for f in report["findings"]} == {"a1b2c3d4", "b1b2c3d4"}
    assert all(secret not in json.dumps(report) for secret in (GITHUB_PAT, NAMED))
    before = [json.loads(line) for line in data.decode().splitlines()]
    after = [json.loads(line) for line in text.splitlines()]
    assert [(b.get("id"), b.get("parentId"), b["type"]) for b in before] == [
        (a.get("id"), a.get("parentId"), a["type"]) for a in after
    ]
    assert data.splitlines()[3] == out.splitlines()[3]
    # The same key, the same placeholders.
    assert pi_session.redact_bytes(data, secrets=[NAMED], key=KEY)[0] == out


def test_redact_writes_out_and_never_over_a_file(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(session())
    out = tmp_path / "out.jsonl"
    report = pi_session.redact(source, out, key=KEY)
    assert report["redacted"] == 2
    assert GITHUB_PAT not in out.read_text()
    assert source.read_bytes() == session()
    with pytest.raises(pi_session.PiSessionError):
        pi_session.redact(source, out, key=KEY)
    pi_session.redact(source, out, key=KEY, force=True)
    # Without `out`, a dry run.
    assert pi_session.redact(source)["redacted"] == 2


def test_secrets_from_reads_a_dotenv(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(f'export DB_PASSWORD="{NAMED}"  # prod\n')
    out, report = pi_session.redact_bytes(session(), secrets_from=[env])
    assert NAMED not in out.decode()
    assert report["rules"]["named-secret"]["redacted"] == 1


def test_the_report_is_the_command_lines(tmp_path: Path, pi_session_bin: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(session())
    key = tmp_path / "key"
    key.write_bytes(KEY)
    ran = subprocess.run(
        [str(pi_session_bin), "redact", "--dry-run", "--format", "json", "--key-file", str(key), str(source)],
        capture_output=True, check=False,
    )
    assert ran.returncode == 1, ran.stderr
    file = json.loads(ran.stdout)["files"][0]
    for member in ("path", "written", "backup"):
        file.pop(member)
    assert pi_session.redact(source, key=KEY) == file


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        pi_session.redact_bytes(session(), secrets=["abc"])
    with pytest.raises(ValueError):
        pi_session.redact_bytes(session(), key=b"short")
    with pytest.raises(pi_session.PiSessionError):
        pi_session.redact(tmp_path / "missing.jsonl")
