//! `export --format parquet` checked by a real reader: DuckDB (its Python package, pinned in
//! `scripts/requirements-test.txt`) queries the tables of the conformance corpus and of a
//! generated tree with forks; totals against `stats --format json`, every entry once (once per
//! copy with `--no-dedupe`), joins (tool results to calls, parents to entries), the schema
//! version, and every DuckDB example of `docs/tables.md`, run as written; Polars and PySpark
//! (pinned there too; Spark on the machine's Java) run the doc's Polars and Spark examples and
//! count the rows DuckDB counts.
//!
//! The Python is `$PI_SESSION_TEST_PYTHON` (`scripts/setup-test-python.sh` makes it). Without
//! it the test says it is skipped, except under CI (`CI` set), where it fails.

use crate::adversarial::common::*;
use crate::tables_cli::export;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const T: Duration = Duration::from_secs(600);

/// The Python with DuckDB, or `None` (the test is skipped) outside CI.
fn python() -> Option<String> {
    match std::env::var("PI_SESSION_TEST_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ if std::env::var_os("CI").is_some() => panic!(
            "PI_SESSION_TEST_PYTHON is not set: run `export PI_SESSION_TEST_PYTHON=\"$(bash scripts/setup-test-python.sh)\"` before the tests"
        ),
        _ => {
            eprintln!("skipped: set PI_SESSION_TEST_PYTHON (see scripts/setup-test-python.sh)");
            None
        }
    }
}

/// The checks, run by DuckDB (and the Polars and Spark examples by Polars and Spark):
/// `check.py OUT STATS.json MODE DOC SPARK CODEC` (MODE `once` or `every`; SPARK `spark` or not;
/// CODEC the `--compression` of the export).
const CHECK: &str = r#"
import json, re, sys
import duckdb

out, stats_path, mode, doc, spark_wanted, compression = sys.argv[1:7]
stats = json.load(open(stats_path))
total = stats["total"]
con = duckdb.connect()
for t in ["sessions", "entries", "messages", "tool_calls", "compactions", "usage_entries"]:
    con.sql(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{out}/{t}/**/*.parquet')")

def one(sql):
    return con.execute(sql).fetchone()

# Whether the export was made with --validate: then every session has its verdicts.
validated = one("SELECT count(strict) FROM sessions")[0] > 0
if validated:
    assert one("SELECT count(*) FROM sessions WHERE strict IS NULL OR validate_codes IS NULL")[0] == 0

def close(a, b):
    a = a or 0.0
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)

# Totals: the tables add up to what stats says.
for table, key in [("messages", "messageUsage"), ("compactions", "summaryUsage"), ("usage_entries", "usageEntryUsage")]:
    got = one(f"SELECT sum(input), sum(output), sum(cache_read), sum(cache_write), sum(total_tokens), sum(cost_total) FROM {table}")
    want = [total[key][f] for f in ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]]
    for g, w, name in zip(got, want, ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]):
        assert close(g, w), f"{table} {name}: {g} != stats {w}"
roles = dict(con.execute("SELECT role, count(*) FROM messages GROUP BY role").fetchall())
assert roles.get("user", 0) == total["userMessages"], (roles, total)
assert roles.get("assistant", 0) == total["assistantMessages"]
assert roles.get("toolResult", 0) == total["toolResults"]
assert one("SELECT count(*) FROM messages")[0] == total["messages"]
assert one("SELECT coalesce(sum(tool_call_count), 0) FROM messages")[0] == total["toolCalls"]
assert one("SELECT count(*) FROM tool_calls")[0] == total["toolCalls"]
assert one("SELECT count(*) FROM compactions")[0] == total["compactions"] + total["branchSummaries"]
assert one("SELECT count(*) FROM usage_entries")[0] == total["usageEntries"]
assert one("SELECT count(*) FROM sessions")[0] == total["sessions"]

# Every entry of every file: once, or once per copy.
entries, files_entries, copied = one("SELECT (SELECT count(*) FROM entries), (SELECT sum(entries) FROM sessions), (SELECT sum(copied_entries) FROM sessions)")
assert one("SELECT count(*) FROM (SELECT file, line FROM entries GROUP BY ALL HAVING count(*) > 1)")[0] == 0, "an entry twice"
if mode == "once":
    assert entries == files_entries - copied, (entries, files_entries, copied)
    assert one("SELECT count(*) FROM entries WHERE is_copy")[0] == 0
else:
    assert entries == files_entries, (entries, files_entries)
    assert one("SELECT count(*) FROM entries WHERE is_copy")[0] == copied
    assert one("SELECT count(*) FROM entries WHERE is_copy AND owner_file IS NULL")[0] == 0
# Per file too: rows + copies left out = the file's entries.
bad = one(f"""SELECT count(*) FROM sessions s LEFT JOIN (SELECT file, count(*) n FROM entries GROUP BY file) e USING (file)
             WHERE coalesce(e.n, 0) != s.entries {"- s.copied_entries" if mode == "once" else ""}""")[0]
assert bad == 0, f"{bad} files whose rows do not add up"

# Joins: every tool result's call exists or is flagged; every parent resolves or is flagged.
# Every copy written (--no-dedupe): the call is in the result's own file. Counted once: a
# call a file shares with an earlier one is that one's row, which may differ where unrelated
# files reuse an id and time (the corpus does), so files without copies are checked.
orphans = one(f"""SELECT count(*) FROM messages m WHERE role = 'toolResult' AND call_found
                 AND ({"true" if mode == "every" else "m.file IN (SELECT file FROM sessions WHERE copied_entries = 0)"})
                 AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.call_id = m.tool_call_id AND t.file = m.file)""")[0]
assert orphans == 0, f"{orphans} tool results whose call is missing but not flagged"
dangling = one("""SELECT count(*) FROM entries e WHERE e.parent_id IS NOT NULL AND e.parent_found
                  AND NOT EXISTS (SELECT 1 FROM entries p WHERE p.entry_id = e.parent_id
                                  AND (p.file = e.file OR list_contains(p.copied_in, e.file)))""")[0]
assert dangling == 0, f"{dangling} parents that resolve nowhere but are not flagged"
assert one("SELECT count(*) FROM tool_calls WHERE result_entry_id IS NOT NULL AND result_timestamp < timestamp")[0] == 0
# Every call's result is its row in messages (schema 2 keeps no copy of its text): joined on
# the file and result_entry_id, one tool result answering that call; counted once, a result an
# earlier file shares is that file's row, so files without copies are checked.
with_result = one(f"""SELECT count(*) FROM tool_calls t WHERE result_entry_id IS NOT NULL
                      AND ({"true" if mode == "every" else "t.file IN (SELECT file FROM sessions WHERE copied_entries = 0)"})""")[0]
joined = one(f"""SELECT count(*) FROM tool_calls t JOIN messages m ON m.file = t.file AND m.entry_id = t.result_entry_id
                 WHERE m.role = 'toolResult' AND m.tool_call_id = t.call_id AND m.is_error IS NOT DISTINCT FROM t.is_error
                 AND m.timestamp IS NOT DISTINCT FROM t.result_timestamp
                 AND ({"true" if mode == "every" else "t.file IN (SELECT file FROM sessions WHERE copied_entries = 0)"})""")[0]
assert with_result == joined, f"{with_result} calls with a result, {joined} joined to theirs in messages"
assert with_result > 0 or one("SELECT count(*) FROM tool_calls")[0] == 0
assert "result_text" not in [c[0] for c in con.execute("DESCRIBE tool_calls").fetchall()]

# The schema version in every file's metadata.
versions = con.execute(f"SELECT DISTINCT decode(value) FROM parquet_kv_metadata('{out}/**/*.parquet') WHERE decode(key) = 'pi_session_tables.schema_version'").fetchall()
assert versions == [("2",)], versions

# The compression asked for (`zstd` unless the run says otherwise), in every column chunk.
codec = {"zstd": "ZSTD", "lz4": "LZ4_RAW", "snappy": "SNAPPY", "none": "UNCOMPRESSED"}[compression]
codecs = con.execute(f"SELECT DISTINCT compression FROM parquet_metadata('{out}/**/*.parquet')").fetchall()
assert codecs == [(codec,)], (codecs, codec)

# The DuckDB examples of docs/tables.md, as written.
examples = re.findall(r"```sql\n(.*?)```", open(doc).read(), re.S)
assert len(examples) >= 5, len(examples)
for sql in examples:
    rows = con.execute(sql.replace("'out/", f"'{out}/")).fetchall()
    # The verdict columns are null without --validate: their example finds nothing then.
    assert rows or ("validate_" in sql and not validated), f"no rows from:\n{sql}"

# The Polars examples of docs/tables.md, as written: every expression gives rows, and Polars
# reads the same tables DuckDB reads.
import ast
import polars as pl
blocks = [b for b in re.findall(r"```python\n(.*?)```", open(doc).read(), re.S) if "import polars" in b]
assert blocks, "no Polars example"
ns = {}
polars_results = 0
for block in blocks:
    for stmt in ast.parse(block.replace('"out/', f'"{out}/')).body:
        if isinstance(stmt, ast.Expr):
            result = eval(compile(ast.Expression(stmt.value), "docs/tables.md", "eval"), ns)
            assert len(result) > 0, f"no rows from:\n{ast.unparse(stmt)}"
            polars_results += 1
        else:
            exec(compile(ast.Module([stmt], []), "docs/tables.md", "exec"), ns)
for t in ["sessions", "entries", "messages", "tool_calls"]:
    got = pl.scan_parquet(f"{out}/{t}/**/*.parquet").select(pl.len()).collect().item()
    assert got == one(f"SELECT count(*) FROM {t}")[0], (t, got)
cost = pl.scan_parquet(f"{out}/messages/**/*.parquet").select(pl.col("cost_total").sum()).collect().item()
assert close(cost, one("SELECT coalesce(sum(cost_total), 0) FROM messages")[0]), cost

# The Spark examples of docs/tables.md, as written (PySpark, pinned there too, on the Java the
# machine has): every `show()` shows rows, and Spark counts the rows DuckDB counts.
spark_shown = []
if spark_wanted == "spark":
    import os, shutil
    if shutil.which("java") is None:
        assert not os.environ.get("CI"), "the Spark examples need Java (apt-get install openjdk-17-jre-headless)"
        print("skipped: the Spark examples (no java on PATH)")
    else:
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.getOrCreate()
        # The class of the DataFrames this session makes (PySpark 4 has several).
        frames = type(spark.range(1))
        show = frames.show
        def counting_show(self, *args, **kwargs):
            spark_shown.append(self.count())
            return show(self, *args, **kwargs)
        frames.show = counting_show
        blocks = [b for b in re.findall(r"```python\n(.*?)```", open(doc).read(), re.S) if "pyspark" in b]
        assert blocks, "no Spark example"
        for block in blocks:
            exec(compile(block.replace('"out/', f'"{out}/'), "docs/tables.md", "exec"), {})
        assert spark_shown and all(spark_shown), f"Spark examples showed {spark_shown} rows"
        for t in ["sessions", "entries", "messages", "tool_calls"]:
            got = spark.read.parquet(f"{out}/{t}").count()
            assert got == one(f"SELECT count(*) FROM {t}")[0], (t, got)
        spark.stop()
print(f"ok: {entries} entries, {len(examples)} DuckDB, {polars_results} Polars and {len(spark_shown)} Spark doc examples")
"#;

/// Runs the checks on the export `out`; `spark`: the Spark examples too (a JVM start, so only
/// for some exports).
/// `compression`: the export's `--compression` (`zstd` by default).
fn check(
    python: &str,
    out: &Path,
    stats_args: &[&str],
    mode: &str,
    dir: &Path,
    spark: bool,
    compression: &str,
) {
    let mut args = vec!["stats", "--format", "json"];
    args.extend_from_slice(stats_args);
    let report = run(&args, T);
    let stats = dir.join(format!("stats-{mode}.json"));
    fs::write(&stats, &report.stdout).unwrap();
    let script = dir.join("check.py");
    fs::write(&script, CHECK).unwrap();
    let o = Command::new(python)
        .arg(&script)
        .arg(out)
        .arg(&stats)
        .arg(mode)
        .arg(root().join("docs/tables.md"))
        .arg(if spark { "spark" } else { "no-spark" })
        .arg(compression)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "DuckDB checks failed on {}:\n{}{}",
        out.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn duckdb_agrees_with_stats_on_the_corpus() {
    let Some(python) = python() else { return };
    let dir = scratch("tables-duckdb-corpus");
    let corpus = root().join("conformance/cases");
    let out = dir.join("out");
    export(&[s(&corpus)], &out, &["--validate"]).assert_code(1);
    check(&python, &out, &[s(&corpus)], "once", &dir, true, "zstd");
    let every = dir.join("every");
    export(
        &[s(&corpus)],
        &every,
        &["--no-dedupe", "--compression", "snappy"],
    )
    .assert_code(1);
    check(
        &python,
        &every,
        &["--no-dedupe", s(&corpus)],
        "every",
        &dir,
        false,
        "snappy",
    );
}

#[test]
fn duckdb_agrees_with_stats_on_a_generated_tree() {
    let Some(python) = python() else { return };
    let dir = scratch("tables-duckdb-tree");
    let tree = dir.join("tree");
    let mut generate = bin();
    generate.args([
        "gen",
        "--tree",
        s(&tree),
        "--files",
        "200",
        "--size",
        "20MB",
        "--seed",
        "1",
    ]);
    run_limited(generate, None, T).assert_code(0);
    let out = dir.join("out");
    export(
        &[s(&tree)],
        &out,
        &["--partition-by", "month", "--compression", "lz4"],
    )
    .assert_code(0);
    check(&python, &out, &[s(&tree)], "once", &dir, false, "lz4");
    let every = dir.join("every");
    export(
        &[s(&tree)],
        &every,
        &[
            "--no-dedupe",
            "--partition-by",
            "project",
            "--compression",
            "none",
        ],
    )
    .assert_code(0);
    check(
        &python,
        &every,
        &["--no-dedupe", s(&tree)],
        "every",
        &dir,
        true,
        "none",
    );
}
