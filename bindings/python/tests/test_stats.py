"""`stats()`: each session's own numbers are pi's (conformance/stats/pi.json, recorded from the
pinned pis), history copied into a fork counted once, the arguments checked, and the very
report `pi-session stats --format json` prints."""

import datetime
import json
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import pi_session
from conftest import CASES, ROOT

RECORDED: Dict[str, Any] = json.loads((ROOT / "conformance" / "stats" / "pi.json").read_text())


def files() -> List[str]:
    return [str(CASES / case / "session.jsonl") for case in RECORDED]


@pytest.mark.parametrize("pi", ["0.73", "0.87", "1.5"])
def test_each_session_s_own_numbers_are_pi_s(pi: str) -> None:
    paths = files()
    assert len(paths) > 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi_session.PiSessionWarning)
        report = pi_session.stats(paths, pi=pi)
    skipped = {e["path"] for e in report["errors"]}
    groups = {g["name"]: g for g in report["groups"]}
    compared = 0
    for case, path in zip(RECORDED, paths):
        expected = RECORDED[case][pi]
        group = groups.get(path)
        if "error" in expected:
            assert path in skipped or (group is not None and group.get("piUnreadable", 0) > 0), case
            continue
        if path in skipped and expected["totalMessages"] == 0:
            continue  # no header: pi 0.73.1 counts an empty session, we refuse it (a listed divergence)
        assert group is not None, f"{case} (pi {pi}): not counted"
        assert group["pi"] == expected, f"{case} (pi {pi})"
        compared += 1
    assert compared > 250


def test_an_omp_file_s_own_numbers_are_omp_s() -> None:
    """oh-my-pi's numbers (conformance/stats/omp.json, recorded from omp 18.3.4) for the omp
    corpus sessions the file tells apart as omp's."""
    omp: Dict[str, Any] = json.loads((ROOT / "conformance" / "stats" / "omp.json").read_text())
    paths = [str(CASES / case / "session.jsonl") for case in omp]
    with pytest.warns(pi_session.PiSessionWarning, match="skipped: no session header"):
        report = pi_session.stats(paths)
    groups = {g["name"]: g for g in report["groups"]}
    compared = 0
    skipped = {e["path"] for e in report["errors"]}
    for case, path in zip(omp, paths):
        # omp refuses a file without a valid header (O18); read as pi's, pi may too.
        if "error" in omp[case]["18.3"] and path in skipped:
            continue
        group = groups[path]
        if group["dialect"] != "omp":
            continue
        assert "pi" not in group, case
        assert group["omp"] == omp[case]["18.3"], case
        assert group["ompUnreadable"] == 0, case
        compared += 1
    assert compared > 20


def user(id: str, parent: Optional[str], t: str) -> Dict[str, Any]:
    return {"type": "message", "id": id, "parentId": parent, "timestamp": t,
            "message": {"role": "user", "content": "hi", "timestamp": 0}}


def assistant(id: str, parent: str, t: str, cost: float) -> Dict[str, Any]:
    usage = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}
    return {"type": "message", "id": id, "parentId": parent, "timestamp": t,
            "message": {"role": "assistant", "provider": "anthropic", "model": "claude",
                        "content": [{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}],
                        "usage": usage, "stopReason": "toolUse", "timestamp": 0}}


def write(path: Path, id: str, created: str, entries: List[Dict[str, Any]], parent: Optional[str] = None) -> Path:
    header: Dict[str, Any] = {"type": "session", "version": 3, "id": id, "timestamp": created, "cwd": "/work"}
    if parent:
        header["parentSession"] = parent
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *entries]))
    return path


@pytest.fixture
def forked(tmp_path: Path) -> Path:
    history = [user("u1", None, "2026-03-01T10:00:00.000Z"), assistant("a1", "u1", "2026-03-01T10:00:01.000Z", 0.25)]
    original = write(tmp_path / "a.jsonl", "s-a", "2026-03-01T10:00:00.000Z", history)
    write(tmp_path / "b.jsonl", "s-b", "2026-03-02T10:00:00.000Z",
          [*history, user("u2", "a1", "2026-03-02T10:00:00.000Z")], str(original))
    return tmp_path


def test_copied_history_counts_once(forked: Path) -> None:
    once = pi_session.stats(forked)
    assert once["dedupe"] is True
    assert once["total"]["messages"] == 3
    assert once["total"]["usage"]["cost"] == 0.25
    assert once["copies"]["messages"] == 2
    assert once["forkedSessions"] == 1
    assert once["groups"][1]["id"] == "s-b"
    assert once["groups"][1]["pi"]["totalMessages"] == 3
    every = pi_session.stats([forked], dedupe=False)
    assert every["total"]["messages"] == 5
    assert every["total"]["usage"]["cost"] == 0.5


def test_groupings_and_dates(forked: Path) -> None:
    by_model = pi_session.stats(forked, "model")
    assert [(g["name"], g["messages"]) for g in by_model["groups"]] == [("-", 2), ("anthropic/claude", 1)]
    by_day = pi_session.stats(forked, by="day", since="2026-03-02")
    assert [(g["name"], g["messages"]) for g in by_day["groups"]] == [("2026-03-02", 1)]
    assert pi_session.stats(forked, until=datetime.date(2026, 3, 1))["total"]["messages"] == 2
    aware = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
    assert pi_session.stats(forked, by="month", until=aware)["total"]["messages"] == 2


def test_arguments_are_checked(forked: Path) -> None:
    with pytest.raises(ValueError, match='cannot group by "week": use one of session, project'):
        pi_session.stats(forked, by="week")
    with pytest.raises(ValueError, match='since: "someday" is not a date'):
        pi_session.stats(forked, since="someday")
    with pytest.raises(ValueError, match="is not before"):
        pi_session.stats(forked, since="2026-02-02", until="2026-02-01")
    with pytest.raises(ValueError, match="without a time zone"):
        pi_session.stats(forked, since=datetime.datetime(2026, 3, 1))
    with pytest.raises(TypeError):
        pi_session.stats(forked, since=3)  # type: ignore[arg-type]


def test_a_file_that_is_not_a_session_is_reported_and_the_others_counted(forked: Path) -> None:
    (forked / "bad.jsonl").write_text("not json\n")
    with pytest.warns(pi_session.PiSessionWarning, match="bad.jsonl: skipped"):
        report = pi_session.stats(forked)
    assert report["total"]["sessions"] == 2
    assert [e["path"].endswith("bad.jsonl") for e in report["errors"]] == [True]


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(pi_session.PiSessionError) as e:
        pi_session.stats(fifo)
    assert e.value.code == "not-a-file"


def test_the_same_report_as_the_command_line(tmp_path: Path, pi_session_bin: Path) -> None:
    some = []
    for i, path in enumerate(files()[:40]):
        copy = tmp_path / f"{i:03}.jsonl"
        shutil.copyfile(path, copy)
        some.append(str(copy))
    for args, kwargs in [
        ([], {}),
        (["--by", "model", "--pi", "0.73"], {"by": "model", "pi": "0.73"}),
        (["--by", "day", "--no-dedupe", "--since", "2025-01-01"], {"by": "day", "dedupe": False, "since": "2025-01-01"}),
    ]:
        done = subprocess.run([str(pi_session_bin), "stats", "--format", "json", *args, *some],
                              capture_output=True, text=True, check=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pi_session.PiSessionWarning)
            assert pi_session.stats(some, **kwargs) == json.loads(done.stdout), args
