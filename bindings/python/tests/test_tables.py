"""`pi_session.tables`: the six tables of `export --format parquet` as pyarrow tables; Polars
and DuckDB take them as they are, and the DuckDB and Polars examples of `docs/tables.md` run
against them (`read_parquet('out/T/**/*.parquet')` / `pl.scan_parquet(...)` replaced by the
table)."""

import ast
import re
import subprocess
import warnings
from pathlib import Path
from typing import Any, Dict

import pytest

import pi_session
from conftest import CASES, DOCS_TABLES

pa = pytest.importorskip("pyarrow")
NAMES = ["sessions", "entries", "messages", "tool_calls", "compactions", "usage_entries"]


@pytest.fixture(scope="module")
def corpus_tables() -> Dict[str, Any]:
    with warnings.catch_warnings():
        # Some corpus files are deliberately not sessions.
        warnings.simplefilter("ignore", pi_session.PiSessionWarning)
        return pi_session.tables(CASES, validate=True)


def test_six_pyarrow_tables(corpus_tables: Dict[str, Any]) -> None:
    assert list(corpus_tables) == NAMES
    for name, table in corpus_tables.items():
        assert isinstance(table, pa.Table), name
    assert corpus_tables["sessions"].num_rows > 300
    assert corpus_tables["messages"].num_rows > 1000


def test_skipped_files_are_warned(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not a session\n")
    good = tmp_path / "good.jsonl"
    good.write_bytes((CASES / "context" / "explicit-leaf-selects-branch" / "session.jsonl").read_bytes())
    with pytest.warns(pi_session.PiSessionWarning, match="bad.jsonl: skipped"):
        tables = pi_session.tables(tmp_path)
    assert tables["sessions"].num_rows == 1
    assert tables["entries"].num_rows == 8


def test_no_paths_gives_empty_tables_with_their_schemas() -> None:
    tables = pi_session.tables([])
    assert all(t.num_rows == 0 for t in tables.values())
    assert "role" in tables["messages"].schema.names


def test_dedupe(tmp_path: Path) -> None:
    a = tables_of_fork(tmp_path, dedupe=True)
    b = tables_of_fork(tmp_path, dedupe=False)
    assert b["entries"].num_rows > a["entries"].num_rows
    assert "is_copy" in b["entries"].schema.names


def tables_of_fork(tmp_path: Path, dedupe: bool) -> Dict[str, Any]:
    """A session and its fork (which copies its history)."""
    src = tmp_path / "src"
    if not src.exists():
        src.mkdir()
        w = pi_session.SessionWriter.create("/w", src / "a")
        w.append_message({"role": "user", "content": "hi", "timestamp": 1})
        w.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "hello"}],
                "api": "x",
                "provider": "p",
                "model": "m",
                "usage": {
                    "input": 1,
                    "output": 2,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 3,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
                "timestamp": 2,
            }
        )
        assert w.path is not None
        pi_session.SessionWriter.fork(w.path, "/w", src / "b").append_message(
            {"role": "user", "content": "more", "timestamp": 3}
        )
    return pi_session.tables(src, dedupe)


def test_same_tables_as_the_parquet_export(pi_session_bin: Path, tmp_path: Path) -> None:
    """On a generated tree of sessions with forks (the corpus's v1 files get random ids),
    forked history once and every copy."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    tree = tmp_path / "tree"

    def run(*args: str) -> None:
        subprocess.run([str(pi_session_bin), *args], capture_output=True, check=True)

    run("gen", "--tree", str(tree), "--files", "30", "--size", "3MB", "--seed", "7")
    for dedupe in (True, False):
        out = tmp_path / f"out-{dedupe}"
        every_copy = [] if dedupe else ["--no-dedupe"]
        run("export", "--format", "parquet", "--validate", *every_copy, str(tree), "-o", str(out))
        tables = pi_session.tables(tree, dedupe, validate=True)
        for name in NAMES:
            exported = pq.read_table(out / name)
            ours = tables[name]
            assert ours.num_rows > 0 or name == "usage_entries", name
            assert ours.schema.equals(exported.schema.remove_metadata()), name
            keys = [(c, "ascending") for c in ours.schema.names if not pa.types.is_list(ours.schema.field(c).type)]
            assert ours.sort_by(keys).equals(exported.sort_by(keys).cast(ours.schema)), (name, dedupe)
        copies = tables["entries"]["is_copy"].to_pylist().count(True)
        assert (copies == 0) == dedupe, copies


def test_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables are made in memory: no temporary directory is needed (here none can be made)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    a = tables_of_fork(tmp_path, dedupe=True)
    assert a["entries"].num_rows > 0
    assert not (tmp_path / "missing").exists()


def test_polars_and_duckdb_take_them(corpus_tables: Dict[str, Any]) -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    messages = pl.from_arrow(corpus_tables["messages"])
    assert messages.height == corpus_tables["messages"].num_rows
    con = duckdb.connect()
    for name, table in corpus_tables.items():
        con.register(name, table)
    (count,) = con.execute("select count(*) from messages where role = 'assistant'").fetchone()
    assert count == messages.filter(pl.col("role") == "assistant").height > 0


def test_the_duckdb_examples_of_docs_tables_md(corpus_tables: Dict[str, Any]) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    for name, table in corpus_tables.items():
        con.register(name, table)
    examples = re.findall(r"```sql\n(.*?)```", DOCS_TABLES.read_text(), re.S)
    assert len(examples) >= 7
    for sql in examples:
        sql = re.sub(r"read_parquet\('out/(\w+)/\*\*/\*\.parquet'\)", r"\1", sql)
        assert "read_parquet" not in sql, sql
        rows = con.execute(sql).fetchall()
        assert rows, f"no rows from:\n{sql}"


def test_the_polars_examples_of_docs_tables_md(corpus_tables: Dict[str, Any]) -> None:
    pl = pytest.importorskip("polars")
    (block,) = re.findall(r"```python\n(import polars.*?)```", DOCS_TABLES.read_text(), re.S)
    block = re.sub(
        r'pl\.scan_parquet\("out/(\w+)/\*\*/\*\.parquet"\)',
        r'pl.from_arrow(tables["\1"]).lazy()',
        block,
    )
    assert "scan_parquet" not in block
    ns: Dict[str, Any] = {"tables": corpus_tables}
    results = 0
    for stmt in ast.parse(block).body:
        if isinstance(stmt, ast.Expr):
            result = eval(compile(ast.Expression(stmt.value), "docs/tables.md", "eval"), ns)
            assert isinstance(result, pl.DataFrame) and result.height > 0
            results += 1
        else:
            exec(compile(ast.Module([stmt], []), "docs/tables.md", "exec"), ns)
    assert results == 3
