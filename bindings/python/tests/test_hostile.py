"""Hostile inputs: each raises `PiSessionError` with a code (or reads as pi reads it), never
hangs and never crashes the interpreter; a panic reaches Python as an exception."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import pi_session

HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'


def entry(id: str, parent: "str | None", text: str = "hi", role: str = "user") -> bytes:
    message = {"role": role, "content": text, "timestamp": 1}
    line = {
        "type": "message",
        "id": id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def write(tmp_path: Path, data: bytes, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def code_of(f) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(pi_session.PiSessionError) as raised:
        f()
    assert str(raised.value)
    return raised.value.code


def test_missing_file(tmp_path: Path) -> None:
    assert code_of(lambda: pi_session.open(tmp_path / "nope.jsonl")) == "not-found"


def test_directory(tmp_path: Path) -> None:
    assert code_of(lambda: pi_session.open(tmp_path)) == "is-a-directory"


def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    # In a child, so that a regression hangs the child, not the test run.
    program = f"""
import pi_session
for f in (lambda: pi_session.open({str(fifo)!r}),
          lambda: pi_session.validate({str(fifo)!r}),
          lambda: pi_session.tables({str(fifo)!r}),
          lambda: pi_session.SessionWriter.open({str(fifo)!r})):
    try:
        f()
        print("no error")
    except pi_session.PiSessionError as e:
        print(e.code)
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["not-a-file"] * 4, done.stderr


def test_directories_skip_fifos_and_say_so(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.jsonl")
    write(tmp_path, HEADER + entry("a", None), "good.jsonl")
    with pytest.warns(pi_session.PiSessionWarning, match="fifo.jsonl"):
        report = pi_session.validate(tmp_path)
    assert [Path(f["path"]).name for f in report["files"]] == ["good.jsonl"]
    with pytest.warns(pi_session.PiSessionWarning, match="fifo.jsonl"):
        assert pi_session.tables(tmp_path)["entries"].num_rows == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.warns(pi_session.PiSessionWarning, match="no session files"):
        assert pi_session.validate(empty)["files"] == []


def test_character_device() -> None:
    assert code_of(lambda: pi_session.open("/dev/null")) == "not-a-file"
    assert code_of(lambda: pi_session.validate(["/dev/zero"])) == "not-a-file"


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, b"")
    assert code_of(lambda: pi_session.open(path)) == "PS0101"
    assert code_of(lambda: pi_session.open(path, pi="0.73")) == "PS0101"


def test_not_a_session(tmp_path: Path) -> None:
    path = write(tmp_path, entry("a", None))
    assert code_of(lambda: pi_session.open(path)) == "PS0102"


def test_invalid_utf8_is_read_as_pi_reads_it(tmp_path: Path) -> None:
    # pi decodes the file as UTF-8 with U+FFFD for bad bytes (P1).
    path = write(tmp_path, HEADER + entry("a", None, "caf\udce9").replace(b"\\udce9", b"\xe9"))
    (message,) = pi_session.open(path).context()["messages"]
    assert message["content"] == "caf\ufffd"
    report = pi_session.validate(path)
    assert "PS0008" in {d["code"] for d in report["files"][0]["diagnostics"]}


def test_invalid_utf8_everywhere(tmp_path: Path) -> None:
    path = write(tmp_path, bytes(range(128, 256)) * 100)
    assert code_of(lambda: pi_session.open(path)) in {"PS0101", "PS0102"}


def test_parent_cycle(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + entry("a", "b") + entry("b", "a"))
    session = pi_session.open(path)
    assert code_of(session.context) == "PS0213"
    assert code_of(session.llm) == "PS0213"
    # The tree and the listing are still there (each node once).
    assert session.tree() == []
    assert session.info() is not None


def test_self_parent(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + entry("a", "a"))
    assert code_of(pi_session.open(path).context) == "PS0214"


def test_lone_surrogates_survive(tmp_path: Path) -> None:
    line = entry("a", None, "x").replace(b'"content":"x"', b'"content":"a\\ud800b"')
    path = write(tmp_path, HEADER + line)
    (message,) = pi_session.open(path).context()["messages"]
    assert message["content"] == json.loads('"a\\ud800b"') == "a\ud800b"


def test_numbers_as_json_loads_reads_them(tmp_path: Path) -> None:
    line = entry("a", None).replace(
        b'"timestamp":1}', b'"timestamp":1,"n":[1e400,-0,1.5,1e21,123456789012345678901,2.0]}'
    )
    path = write(tmp_path, HEADER + line)
    (message,) = pi_session.open(path).context()["messages"]
    # What JSON.stringify writes of them, read by json.loads.
    assert message["n"] == [None, 0, 1.5, 1e21, 123456789012345680000, 2]
    assert [type(n) for n in message["n"]] == [type(None), int, float, float, int, int]


def test_deep_nesting(tmp_path: Path) -> None:
    depth = 100_000
    deep = b"[" * depth + b"]" * depth
    line = entry("a", None).replace(b'"timestamp":1}', b'"timestamp":1,"deep":' + deep + b"}")
    path = write(tmp_path, HEADER + line)
    (message,) = pi_session.open(path).context()["messages"]
    value, levels = message["deep"], 0
    while value:
        (value,) = value
        levels += 1
    assert levels == depth - 1


def test_garbage_lines_and_nulls(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + b"not json\nnull\n[1,2]\n" + entry("a", None) + b'{"type":')
    session = pi_session.open(path)
    assert len(session.context()["messages"]) == 1
    # pi takes the array line for an entry without id or type, a root of its own.
    assert [n.get("id") for n in session.tree()] == [None, "a"]


def test_a_panic_is_an_exception() -> None:
    with pytest.raises(BaseException) as raised:
        pi_session._panic_for_tests()  # type: ignore[attr-defined]
    assert type(raised.value).__name__ == "PanicException"
    # The interpreter goes on.
    assert pi_session.validate([])["files"] == []


def test_the_gil_is_released_while_loading(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + b"".join(entry(f"e{i}", f"e{i-1}" if i else None) for i in range(20000)))
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(len(pi_session.open(path).context()["messages"])))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [20000] * 4


def test_bad_arguments_are_python_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        pi_session.open(tmp_path / "x.jsonl", pi="2.0")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pi_session.validate(42)  # type: ignore[arg-type]


def test_a_file_truncated_while_it_is_read_is_an_answer_or_io_never_a_signal(tmp_path: Path) -> None:
    # 40 MB (mapped), cut to 4 KiB a few milliseconds into the read, in a child: a read past
    # the new end would be SIGBUS there, not here.
    lines = [HEADER]
    parent = None
    for i in range(20_000):
        lines.append(entry(f"m{i}", parent, "x" * 2000))
        parent = f"m{i}"
    source = b"".join(lines)
    program = """
import json, subprocess, sys
import pi_session
path, delay = sys.argv[1], sys.argv[2]
subprocess.Popen(["sh", "-c", 'sleep "$0"; truncate -s 4096 "$1"', delay, path])
out = {}
for name, run in [
    ("open", lambda: len(pi_session.open(path).context()["messages"])),
    ("validate", lambda: pi_session.validate(path)["files"][0].get("readError", "ok")),
    ("stats", lambda: len(pi_session.stats(path)["errors"])),
    ("tables", lambda: pi_session.tables(path)["messages"].num_rows),
]:
    try:
        out[name] = run()
    except pi_session.PiSessionError as e:
        out[name] = e.code
print(json.dumps(out))
"""
    for delay in ("0", "0.002", "0.01", "0.04"):
        path = write(tmp_path, source, f"shrinking-{delay}.jsonl")
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", program, str(path), delay],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert done.returncode == 0, f"the child died ({done.returncode}): {done.stderr[-2000:]}"
        out = json.loads(done.stdout)
        # Loaded whole before the cut, after it (4 KiB hold one message), or the shrink said.
        assert out["open"] in (20_000, 1, "io"), out
        assert out["validate"] == "ok" or "shr" in out["validate"], out
        assert out["stats"] in (0, 1), out
        assert out["tables"] in (20_000, 1, 0), out
