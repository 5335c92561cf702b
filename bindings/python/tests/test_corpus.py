"""The API against the conformance corpus: every case's expected outputs
(`conformance/cases/<area>/<case>/expected/*.json`, compared as parsed JSON) under the case's
pi (`case.json`'s `pi`, default 0.73); an expected `*.error` is a `PiSessionError` with a code.
"""

import decimal
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

import pi_session
from conftest import CASES, CORPUS_PI, case_meta, case_params, same_json, value_tokens

# The cases of pi's dialect, read as pi's (the default, said: one of them,
# `divergence/omp-title-slot-first-line`, is an omp file, whose own dialect "auto" would take);
# the `omp/` cases are omp's (test_dialect.py).
ALL_CASES = sorted(
    p.parent
    for p in CASES.glob("*/*/case.json")
    if json.loads(p.read_text(encoding="utf-8")).get("dialect", "pi") == "pi"
)
OPS = ("context", "llm", "tree", "info")
# The file time the corpus's `info` outputs take (conformance/FORMAT.md).
MTIME_2000 = 946684800


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def run(case: Path, op: str, tmp_path: Path) -> Any:
    meta = case_meta(case)
    pi = meta.get("pi", CORPUS_PI)
    path = case / "session.jsonl"
    if op == "info":
        path = tmp_path / "session.jsonl"
        shutil.copyfile(case / "session.jsonl", path)
        os.utime(path, (MTIME_2000, MTIME_2000))
        # pi's listing does not need the file to load; when it does, the session says the same.
        listed = pi_session.info(path, pi=pi, dialect="pi")
        try:
            session = pi_session.open(path, pi=pi, dialect="pi")
        except pi_session.PiSessionError:
            return listed
        assert session.info() == listed
        return listed
    # v1 files get ids numbered as the corpus numbers them.
    session = pi_session.open(path, pi=pi, sequential_ids=True, dialect="pi")
    answer: Callable[[], Any] = {
        "context": lambda: session.context(meta.get("leaf")),
        "llm": lambda: session.llm(meta.get("leaf")),
        "tree": session.tree,
    }[op]
    return answer()


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
@pytest.mark.parametrize(
    "case,op", case_params(ALL_CASES, OPS, ["context", "llm", "migrate", "tree", "info"])
)
def test_case(case: Path, op: str, tmp_path: Path) -> None:
    expected = case / "expected" / f"{op}.json"
    if expected.exists():
        assert same_json(run(case, op, tmp_path), expected)
    else:
        assert (case / "expected" / f"{op}.error").exists()
        with pytest.raises(pi_session.PiSessionError) as raised:
            run(case, op, tmp_path)
        codes = {"PS0101", "PS0102", "PS0213", "PS0214", "wrong-dialect"}
        assert raised.value.code in codes, raised.value


def test_the_corpus_is_there() -> None:
    assert len(ALL_CASES) > 300


def js_float(text: str) -> Any:
    """A JSON number as JSON.stringify(JSON.parse(text)) writes it, read by json.loads:
    infinity is null, an integral value below 1e21 is written (and read) as an integer, its
    shortest digits beyond 2^53 (`12345678901234567000`)."""
    x = float(text)
    if math.isinf(x):
        return None
    if x == int(x) and abs(x) < 1e21:
        return int(x) if abs(x) <= 2**53 else int(decimal.Decimal(repr(x)))
    return x


def js_int(text: str) -> Any:
    """An integer, as `js_float` (JavaScript has doubles only)."""
    return int(text) if abs(int(text)) <= 2**53 else js_float(text)


def typed_strings(value: Any) -> Any:
    """Strings as the typed model keeps them: a lone surrogate becomes U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [typed_strings(v) for v in value]
    if isinstance(value, dict):
        return {typed_strings(k): typed_strings(v) for k, v in value.items()}
    return value


def plain_entries(path: Path) -> Any:
    """The entry lines of a plain v3 file (every line a JSON object), or None."""
    values = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            # As text: json.loads of bytes would skip a BOM, which JSON.parse does not.
            value = json.loads(line.decode("utf-8"), parse_float=js_float, parse_int=js_int)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        values.append(typed_strings(value))
    if not values or values[0].get("type") != "session" or values[0].get("version") != 3:
        return None
    if any(v.get("type") == "session" for v in values[1:]):
        return None
    return values[1:]


def test_entries_are_the_lines_of_plain_files() -> None:
    compared = 0
    for case in ALL_CASES:
        lines = plain_entries(case / "session.jsonl")
        if lines is None:
            continue
        pi = case_meta(case).get("pi", CORPUS_PI)
        try:
            session = pi_session.open(case / "session.jsonl", pi=pi)
        except pi_session.PiSessionError:
            continue  # not a session for this pi (a BOM before the header, …)
        try:
            entries = session.entries()
        except pi_session.PiSessionError as e:
            # An entry the typed model cannot read: said with its code.
            assert e.code == "entry-not-typed", e
            continue
        assert entries == lines, case_id(case)
        compared += 1
    assert compared > 150, compared


@pytest.mark.filterwarnings("ignore::pi_session.PiSessionWarning")  # what the context skips is said: see test_dialect.py
def test_loads_of_the_bytes_answers_as_open_of_the_file() -> None:
    compared = 0
    for case in ALL_CASES:
        pi = case_meta(case).get("pi", CORPUS_PI)
        path = case / "session.jsonl"
        try:
            opened = pi_session.open(path, pi=pi, sequential_ids=True)
        except pi_session.PiSessionError as e:
            with pytest.raises(pi_session.PiSessionError) as raised:
                pi_session.loads(path.read_bytes(), pi=pi)
            assert raised.value.code == e.code, case_id(case)
            continue
        loaded = pi_session.loads(path.read_bytes(), pi=pi, sequential_ids=True)
        assert loaded.path is None and opened.path == path
        assert loaded.pi == opened.pi
        try:
            expected = opened.context()
        except pi_session.PiSessionError:
            continue  # a cycle: tested with the cases
        # Deep values: compared as token streams (`==` recurses).
        assert value_tokens(loaded.context()) == value_tokens(expected), case_id(case)
        assert value_tokens(loaded.tree()) == value_tokens(opened.tree()), case_id(case)
        compared += 1
    assert compared > 300, compared
    with pytest.raises(TypeError):
        pi_session.loads("not bytes")  # type: ignore[arg-type]
