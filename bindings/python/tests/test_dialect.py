"""oh-my-pi's dialect (`dialect=`, docs/dialects.md): every case of `conformance/cases/omp/`
(context, tree and listing entry computed by omp 18.3.4) read with `dialect="omp"`; pi's
dialect by default and the file's own with `dialect="auto"` (as the command line reads it
without `--dialect`), as the Node binding's; `llm()` refused for omp sessions;
`stats()` and `validate()` by omp's rules."""

import datetime
import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Dict

import pytest

import pi_session
from conftest import CASES, ROOT, case_meta, case_params, same_json

ALL_OMP_CASES = sorted(p.parent for p in (CASES / "omp").glob("*/case.json"))
# The cases omp resumes, and those it refuses for their header (rule O18: omp's error expected).
OMP_CASES = [c for c in ALL_OMP_CASES if not (c / "expected" / "context.error").exists()]
REFUSED_CASES = [c for c in ALL_OMP_CASES if c not in OMP_CASES]
# Every case's session (not its `expected/` outputs, some of which are session files too).
OMP_SESSIONS = [str(c / "session.jsonl") for c in ALL_OMP_CASES]
OPS = ("context", "tree", "info")
# The file time the corpus's `info` outputs take (conformance/FORMAT.md).
MTIME_2000 = 946684800
# A case whose file starts with omp's title slot.
SLOT_CASE = CASES / "omp" / "title-slot-is-not-an-entry"


def case_id(case: Path) -> str:
    return f"omp/{case.name}"


def blobs_of(case: Path, tmp_path: Path) -> Path:
    """The case's blob store, else an empty one (not omp's own, which the machine may have)."""
    if (case / "blobs").is_dir():
        return case / "blobs"
    empty = tmp_path / "no-blobs"
    empty.mkdir(exist_ok=True)
    return empty


def run(case: Path, op: str, tmp_path: Path) -> Any:
    meta = case_meta(case)
    path = case / "session.jsonl"
    # v1 files get ids numbered as the corpus numbers them.
    session = pi_session.open(
        path, pi=meta["pi"], sequential_ids=True, dialect="omp", blobs=blobs_of(case, tmp_path)
    )
    assert session.dialect == "omp"
    if op == "context":
        return session.context(meta.get("leaf"))
    if op == "tree":
        return session.tree()
    # The listing entry, read as omp's list reads the file, and the session's, the same.
    listed = pi_session.info(path, pi=meta["pi"], dialect="omp", mtime=MTIME_2000)
    assert session.info(mtime=MTIME_2000) == listed
    return listed


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
@pytest.mark.parametrize("case,op", case_params(OMP_CASES, OPS, OPS))
def test_case(case: Path, op: str, tmp_path: Path) -> None:
    expected = case / "expected" / f"{op}.json"
    assert expected.exists(), expected
    assert same_json(run(case, op, tmp_path), expected)


@pytest.mark.parametrize("case", REFUSED_CASES, ids=case_id)
def test_a_file_omp_refuses_is_refused(case: Path) -> None:
    path = case / "session.jsonl"
    for read in (
        lambda: pi_session.open(path, dialect="omp"),
        lambda: pi_session.loads(path.read_bytes(), dialect="omp"),
    ):
        with pytest.raises(pi_session.PiSessionError) as raised:
            read()
        assert raised.value.code in ("PS0101", "PS0102"), raised.value
        assert "omp refuses to resume it" in str(raised.value)


def test_the_omp_corpus_is_there() -> None:
    assert len(REFUSED_CASES) >= 3
    assert len(OMP_CASES) > 40
    assert all(case_meta(case)["dialect"] == "omp" for case in OMP_CASES)
    assert any((case / "blobs").is_dir() for case in OMP_CASES)
    assert any("leaf" in case_meta(case) for case in OMP_CASES)


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
def test_the_file_s_own_dialect_with_auto(tmp_path: Path) -> None:
    detected = 0
    for case in OMP_CASES:
        meta = case_meta(case)
        path = case / "session.jsonl"
        blobs = blobs_of(case, tmp_path)
        auto: Dict[str, Any] = {"sequential_ids": True, "blobs": blobs, "dialect": "auto"}
        session = pi_session.open(path, pi=meta["pi"], **auto)
        loaded = pi_session.loads(path.read_bytes(), pi=meta["pi"], **auto)
        assert loaded.dialect == session.dialect, case_id(case)
        if session.dialect != "omp":
            # No sign of omp in the file (a pi file read as omp's, a header with `title`
            # alone, …): read as pi's, as the command line reads it.
            assert session.dialect == "pi", case_id(case)
            continue
        assert "dialect='omp'" in repr(session) or 'dialect="omp"' in repr(session)
        assert same_json(session.tree(), case / "expected" / "tree.json"), case_id(case)
        if "leaf" not in meta:
            assert same_json(session.context(), case / "expected" / "context.json"), case_id(case)
            assert same_json(loaded.context(), case / "expected" / "context.json"), case_id(case)
        detected += 1
    assert detected > 30, detected
    assert pi_session.open(SLOT_CASE / "session.jsonl", dialect="auto").dialect == "omp"


def test_the_listing_entry_in_the_file_s_own_dialect_with_auto() -> None:
    for case in OMP_CASES:
        path = case / "session.jsonl"
        # The listing tells the dialect from the first lines (the title slot or a header
        # member), as `pi-session info` does.
        first = path.read_bytes().split(b"\n", 1)[0]
        own = pi_session.info(path, pi="0.87", mtime=MTIME_2000, dialect="auto")
        # pi's by default.
        default = pi_session.info(path, pi="0.87", mtime=MTIME_2000)
        assert default == pi_session.info(path, pi="0.87", mtime=MTIME_2000, dialect="pi")
        if b'"type":"title"' in first:
            assert same_json(own, case / "expected" / "info.json"), case_id(case)
        else:
            as_pi = pi_session.info(path, pi="0.87", mtime=MTIME_2000, dialect="pi")
            as_omp = pi_session.info(path, pi="0.87", mtime=MTIME_2000, dialect="omp")
            assert own in (as_pi, as_omp), case_id(case)


def test_an_omp_file_read_as_pi_s_is_refused_with_its_dialect_named() -> None:
    path = SLOT_CASE / "session.jsonl"
    for read in (
        lambda: pi_session.open(path),
        lambda: pi_session.open(path, dialect="pi"),
        lambda: pi_session.loads(path.read_bytes()),
        lambda: pi_session.loads(path.read_bytes(), dialect="pi"),
    ):
        with pytest.raises(pi_session.PiSessionError) as raised:
            read()
        assert raised.value.code == "wrong-dialect"
        assert "omp" in str(raised.value)


def test_a_pi_file_read_as_omp_s() -> None:
    case = CASES / "omp" / "pi-file-read-as-omp"
    path = case / "session.jsonl"
    as_pi = pi_session.open(path, pi="0.87")
    assert as_pi.dialect == "pi"
    assert "model" in as_pi.context() and "models" not in as_pi.context()
    assert as_pi.llm() is not None
    session = pi_session.open(path, pi="0.87", dialect="omp")
    assert session.dialect == "omp"
    assert "models" in session.context() and "model" not in session.context()
    assert same_json(session.context(), case / "expected" / "context.json")


def test_llm_is_refused_for_an_omp_session() -> None:
    session = pi_session.open(SLOT_CASE / "session.jsonl", dialect="omp")
    assert session.dialect == "omp"
    with pytest.raises(pi_session.PiSessionError) as raised:
        session.llm()
    assert raised.value.code == "omp-unsupported"
    assert "convertToLlm is not reproduced yet" in str(raised.value)
    assert "context()" in str(raised.value)
    # The context is omp's.
    assert same_json(session.context(), SLOT_CASE / "expected" / "context.json")


def test_the_dialect_argument_is_checked() -> None:
    path = SLOT_CASE / "session.jsonl"
    for call in (
        lambda: pi_session.open(path, dialect="oh-my-pi"),  # type: ignore[arg-type]
        lambda: pi_session.loads(path.read_bytes(), dialect="PI"),  # type: ignore[arg-type]
        lambda: pi_session.info(path, dialect="omp2"),  # type: ignore[arg-type]
        lambda: pi_session.stats(path, dialect="x"),  # type: ignore[arg-type]
        lambda: pi_session.validate(path, dialect="x"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError, match='expected "pi", "omp"|expected "pi" or "omp"'):
            call()
    # "auto" is the file's own; not for validate, which checks by one dialect's rules.
    assert pi_session.open(path, dialect="auto").dialect == "omp"
    assert pi_session.info(path, dialect="auto") == pi_session.info(path, dialect="omp")
    with pytest.raises(ValueError, match='expected "pi" or "omp"'):
        pi_session.validate(path, dialect="auto")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pi_session.open(path, blobs=3)  # type: ignore[arg-type]


def test_mtime_as_seconds_or_an_aware_datetime() -> None:
    path = SLOT_CASE / "session.jsonl"
    utc = datetime.timezone.utc
    expected = pi_session.info(path, mtime=MTIME_2000, dialect="omp")
    assert expected is not None and expected["modified"] == "2000-01-01T00:00:00.000Z"
    assert pi_session.info(path, mtime=float(MTIME_2000), dialect="omp") == expected
    aware = datetime.datetime(2000, 1, 1, tzinfo=utc)
    assert pi_session.info(path, mtime=aware, dialect="omp") == expected
    session = pi_session.open(path, dialect="omp")
    assert session.info(mtime=datetime.datetime(2000, 1, 1, tzinfo=utc)) == expected
    with pytest.raises(ValueError, match="without a time zone"):
        pi_session.info(path, mtime=datetime.datetime(2000, 1, 1))
    with pytest.raises(TypeError):
        pi_session.info(path, mtime="2000-01-01")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        session.info(mtime=True)


@pytest.fixture
def omp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """omp's own store for this test: `$PI_CODING_AGENT_DIR`, its `blobs/` and `sessions/`."""
    agent = tmp_path / "agent"
    agent.mkdir()
    for name in ("PI_CONFIG_DIR", "OMP_PROFILE", "PI_PROFILE", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return agent


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
def test_omp_s_own_blob_store_by_default(omp_home: Path) -> None:
    case = CASES / "omp" / "image-blob-restored"
    path = case / "session.jsonl"
    expected = case / "expected" / "context.json"
    # No store: the references stay in place.
    assert not same_json(pi_session.open(path, dialect="omp").context(), expected)
    shutil.copytree(case / "blobs", omp_home / "blobs")
    assert same_json(pi_session.open(path, dialect="omp").context(), expected)
    # A store given wins over omp's own.
    empty = omp_home / "empty"
    empty.mkdir()
    assert not same_json(pi_session.open(path, dialect="omp", blobs=empty).context(), expected)
    assert same_json(pi_session.open(path, dialect="omp", blobs=str(case / "blobs")).context(), expected)


def test_stats_reads_each_file_in_its_dialect_or_the_one_given() -> None:
    omp: Dict[str, Any] = json.loads((ROOT / "conformance" / "stats" / "omp.json").read_text())
    paths = [str(CASES / case / "session.jsonl") for case in omp]
    with pytest.warns(pi_session.PiSessionWarning, match="omp refuses to resume it"):
        report = pi_session.stats(OMP_SESSIONS, dialect="omp")
    groups = {g["name"]: g for g in report["groups"]}
    # omp refuses the files without a valid header (O18): skipped, and said.
    errors = {path: omp[case]["18.3"]["error"] for case, path in zip(omp, paths) if "error" in omp[case]["18.3"]}
    refused = {path for path, error in errors.items() if "Cannot resume session" in error}
    assert len(refused) >= 3
    assert {e["path"] for e in report["errors"]} == refused
    assert len(groups) == len(OMP_CASES)
    compared = 0
    for case, path in zip(omp, paths):
        if path in refused:
            continue
        if path in errors:
            # omp throws on a usage without cost; counted as unreadable (docs/divergences.md).
            assert "usage.cost" in errors[path] and groups[path]["ompUnreadable"] > 0, case
            compared += 1
            continue
        group = groups[path]
        assert group["dialect"] == "omp", case
        assert "pi" not in group, case
        assert group["omp"] == omp[case]["18.3"], case
        assert group["ompUnreadable"] == 0, case
        compared += 1
    assert compared == len(omp) - len(refused) > 40
    # Each file in its own: the omp files without a sign of omp are pi's.
    with pytest.warns(pi_session.PiSessionWarning, match="skipped: no session header"):
        own = {g["name"]: g["dialect"] for g in pi_session.stats(OMP_SESSIONS)["groups"]}
    assert set(own.values()) == {"pi", "omp"}
    # As pi's, a file with omp's title slot is not a session: skipped, with its dialect named.
    with pytest.warns(pi_session.PiSessionWarning, match="not pi's"):
        as_pi = pi_session.stats(str(SLOT_CASE / "session.jsonl"), dialect="pi")
    assert as_pi["groups"] == [] and len(as_pi["errors"]) == 1
    assert "omp" in as_pi["errors"][0]["error"]


def test_stats_without_paths_reads_omp_s_session_directory(omp_home: Path) -> None:
    with pytest.raises(pi_session.PiSessionError) as raised:
        pi_session.stats(dialect="omp")
    assert raised.value.code == "not-found"
    project = omp_home / "sessions" / "-work-app"
    project.mkdir(parents=True)
    shutil.copyfile(SLOT_CASE / "session.jsonl", project / "s.jsonl")
    report = pi_session.stats(dialect="omp")
    assert [g["dialect"] for g in report["groups"]] == ["omp"]


def test_validate_by_omp_s_rules(tmp_path: Path) -> None:
    path = SLOT_CASE / "session.jsonl"
    as_pi = pi_session.validate(path)
    assert "dialect" not in as_pi
    assert "PS0111" in {d["code"] for d in as_pi["files"][0]["diagnostics"]}
    report = pi_session.validate(path, dialect="omp", blobs=tmp_path)
    assert report["dialect"] == "omp"
    (file,) = report["files"]
    assert "PS0111" not in {d["code"] for d in file["diagnostics"]}
    assert file["valid"], file["diagnostics"]


def test_validate_reports_missing_blobs_against_the_store_given(tmp_path: Path) -> None:
    case = CASES / "omp" / "image-blob-restored"
    found = pi_session.validate(case / "session.jsonl", dialect="omp", blobs=case / "blobs")
    missing = pi_session.validate(case / "session.jsonl", dialect="omp", blobs=tmp_path)
    def codes(report: Any) -> Any:
        return {d["code"] for d in report["files"][0]["diagnostics"]}

    assert "PS0229" not in codes(found)
    assert "PS0229" in codes(missing)


def path_bytes(case: Path) -> bytes:
    return (case / "session.jsonl").read_bytes()


def cli_json(binary: Path, *args: str) -> Any:
    done = subprocess.run([str(binary), *args], capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
def test_the_same_answers_as_the_command_line(tmp_path: Path, pi_session_bin: Path) -> None:
    """`dialect="auto"`: the file's own, as `pi-session context/tree/info` without `--dialect`."""
    for case in OMP_CASES:
        meta = case_meta(case)
        path = str(case / "session.jsonl")
        blobs = blobs_of(case, tmp_path)
        session = pi_session.open(path, pi=meta["pi"], blobs=blobs, dialect="auto")
        if b'"version":3' not in path_bytes(case).replace(b" ", b""):
            continue  # a v1/v2 file: its entries get random ids, here as there
        pi = ["--pi", meta["pi"]]
        assert session.context() == cli_json(pi_session_bin, "context", *pi, "--blobs", str(blobs), path), case
        assert session.tree() == cli_json(pi_session_bin, "tree", *pi, path), case
        listed = pi_session.info(path, pi=meta["pi"], mtime=MTIME_2000, dialect="auto")
        assert listed == cli_json(pi_session_bin, "info", *pi, "--mtime", str(MTIME_2000 * 1000), path), case


def test_validate_and_stats_as_the_command_line(tmp_path: Path, pi_session_bin: Path) -> None:
    omp = str(CASES / "omp")
    cli = cli_json(pi_session_bin, "validate", "--format", "json", "--dialect", "omp", "--blobs", str(tmp_path), omp)
    ours = pi_session.validate(omp, dialect="omp", blobs=tmp_path)
    assert ours["tool"]["name"] != cli["tool"]["name"]
    del cli["tool"], ours["tool"]
    assert ours == cli
    for args, kwargs in [([], {}), (["--dialect", "omp"], {"dialect": "omp"}), (["--dialect", "pi"], {"dialect": "pi"})]:
        expected = cli_json(pi_session_bin, "stats", "--format", "json", *args, omp)
        with warnings.catch_warnings():
            # As pi's, the files with omp's title slot are not sessions (said, and skipped).
            warnings.simplefilter("ignore", pi_session.PiSessionWarning)
            assert pi_session.stats(omp, **kwargs) == expected, args


def test_what_the_context_skips_or_leaves_is_a_warning(tmp_path: Path) -> None:
    """A missing blob (its reference left in place) and a `message` entry without a message
    (skipped) are `PiSessionWarning`s, worded as `pi-session context` says them."""
    case = CASES / "omp" / "image-blob-missing-stays"
    empty = tmp_path / "blobs"
    empty.mkdir()
    session = pi_session.open(case / "session.jsonl", dialect="omp", blobs=empty)
    with pytest.warns(pi_session.PiSessionWarning) as caught:
        context = session.context()
    assert same_json(context, case / "expected" / "context.json")
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert re.fullmatch(
        r"\d+: warning: blob sha256:[0-9a-f]{64} is not in the blob store .+; its reference is "
        r"left in place, as omp leaves it",
        messages[0],
    ), messages[0]
    null_message = CASES / "divergence" / "message-null-on-path" / "session.jsonl"
    with pytest.warns(pi_session.PiSessionWarning, match="`message` is missing or null; entry skipped"):
        pi_session.open(null_message).context()
    # Nothing to say: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pi_session.open(SLOT_CASE / "session.jsonl", dialect="omp").context()
