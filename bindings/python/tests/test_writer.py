"""`pi_session.SessionWriter`: pi's `SessionManager` from Python."""

import json
from pathlib import Path

import pytest

import pi_session

USER = {"role": "user", "content": "Fix the build", "timestamp": 1775030400000}
ASSISTANT = {
    "role": "assistant",
    "content": [{"type": "text", "text": "Fixed."}],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "usage": {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
    },
    "stopReason": "stop",
    "timestamp": 1775030401000,
}


def test_create_append_and_read_back(tmp_path: Path) -> None:
    w = pi_session.SessionWriter.create("/work", tmp_path, session_id="s1")
    assert w.session_id == "s1" and w.cwd == "/work" and w.pi == "1.5"
    assert not w.is_written and w.leaf_id is None
    a = w.append_message(USER)
    assert w.is_written and w.path is not None and w.path.parent == tmp_path
    b = w.append_message(ASSISTANT)
    label = w.append({"type": "label", "targetId": a, "label": "start"})
    assert w.leaf_id == label and w.entry_count == 3
    session = pi_session.open(w.path)
    assert [m["role"] for m in session.context()["messages"]] == ["user", "assistant"]
    assert session.context()["messages"][1] == ASSISTANT
    assert session.tree()[0]["label"] == "start"
    assert [e["id"] for e in session.entries()] == [a, b, label]
    report = pi_session.validate(w.path, strict=True)
    assert report["files"][0]["verdict"] == {"strict": True, "piLoadable": True, "piResumes": True}
    assert w.to_jsonl() == w.path.read_bytes()


def test_in_memory_writes_nothing(tmp_path: Path) -> None:
    w = pi_session.SessionWriter.in_memory("/w", pi="0.87")
    w.append_message(USER)
    assert w.path is None and w.pi == "0.87"
    lines = w.to_jsonl().decode().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    assert json.loads(lines[1])["message"] == USER


def test_open_appends_and_locks(tmp_path: Path) -> None:
    w = pi_session.SessionWriter.create("/w", tmp_path)
    first = w.append_message(USER)
    assert w.path is not None
    path = w.path
    with pytest.raises(pi_session.PiSessionError) as raised:
        pi_session.SessionWriter.open(path)
    assert raised.value.code == "locked"
    del w
    again = pi_session.SessionWriter.open(path)
    assert again.leaf_id == first
    again.append_message(ASSISTANT)
    assert len(pi_session.open(path).context()["messages"]) == 2


def test_branch_fork_and_branched_session(tmp_path: Path) -> None:
    w = pi_session.SessionWriter.create("/w", tmp_path / "a")
    a = w.append_message(USER)
    w.append_message(ASSISTANT)
    w.branch(a)
    c = w.append_message({"role": "user", "content": "other", "timestamp": 3})
    assert w.path is not None
    assert len(pi_session.open(w.path).tree()[0]["children"]) == 2
    fork = pi_session.SessionWriter.fork(w.path, "/w", tmp_path / "b")
    assert fork.path is not None and fork.path.parent == tmp_path / "b"
    assert fork.entry_count == 3
    out = tmp_path / "branch.jsonl"
    assert w.branched_session(c, out) == out
    assert [m["content"] for m in pi_session.open(out).context()["messages"]] == ["Fix the build", "other"]


def test_refusals(tmp_path: Path) -> None:
    w = pi_session.SessionWriter.in_memory("/w")
    with pytest.raises(pi_session.PiSessionError) as raised:
        w.branch("nope")
    assert raised.value.code == "entry-not-found"
    with pytest.raises(pi_session.PiSessionError) as raised:
        w.append({"type": "message", "id": "x", "parentId": "missing", "message": USER})
    assert raised.value.code == "entry-not-found"
    with pytest.raises(pi_session.PiSessionError) as raised:
        w.append({"type": 5})
    assert raised.value.code == "bad-entry"
    with pytest.raises(ValueError):
        w.append_message({"role": "user", "content": float("nan")})
    not_a_session = tmp_path / "x.jsonl"
    not_a_session.write_text('{"type":"message"}\n')
    with pytest.raises(pi_session.PiSessionError) as raised:
        pi_session.SessionWriter.open(not_a_session)
    assert raised.value.code == "not-a-session"
    with pytest.raises(pi_session.PiSessionError) as raised:
        pi_session.SessionWriter.create("/w", tmp_path, session_id="bad id!")
    assert raised.value.code == "invalid-session-id"
