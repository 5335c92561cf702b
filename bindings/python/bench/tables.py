"""`pi_session.tables()` against the other ways to get the same sessions into Arrow:
`pyarrow.parquet.read_table` of what `pi-session export --format parquet` wrote (the export
timed too), and DuckDB's `read_json` of the raw files (all lines as JSON, no tables).

    pi-session gen --tree /tmp/tree --files 1000 --size 200MB --seed 1
    python bench/tables.py /tmp/tree PI_SESSION_BIN [REPEAT]

Use release builds (the module and the binary). Best of REPEAT runs each (default 3).
"""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

import pi_session

NAMES = ["sessions", "entries", "messages", "tool_calls", "compactions", "usage_entries"]


def best(f, repeat):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    tree, binary = Path(sys.argv[1]), sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    files = list(tree.rglob("*.jsonl"))
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} sessions, {size / 1e6:.0f} MB")

    t, tables = best(lambda: pi_session.tables(tree), repeat)
    rows = {n: tables[n].num_rows for n in NAMES}
    print(f"pi_session.tables():                    {t:7.3f} s  {rows}")

    work = Path(tempfile.mkdtemp(prefix="pi-session-bench-"))
    try:
        def export():
            out = work / f"out-{time.monotonic_ns()}"
            subprocess.run(
                [binary, "export", "--format", "parquet", str(tree), "-o", str(out)],
                check=True,
                capture_output=True,
            )
            return out

        t_export, out = best(export, repeat)
        t_read, read = best(lambda: {n: pq.read_table(out / n) for n in NAMES}, repeat)
        assert {n: read[n].num_rows for n in NAMES} == rows
        print(f"pi-session export --format parquet:     {t_export:7.3f} s")
        print(f"pyarrow.parquet.read_table (6 tables):  {t_read:7.3f} s")
        print(f"  export + read:                        {t_export + t_read:7.3f} s")
    finally:
        shutil.rmtree(work)

    con = duckdb.connect()
    glob = str(tree / "**" / "*.jsonl")
    options = "format = 'newline_delimited', union_by_name = true, maximum_object_size = 1073741824"

    def count_lines():
        query = f"SELECT count(*) FROM read_json('{glob}', {options}, records = false)"
        return con.execute(query).fetchall()[0][0]

    t, lines = best(count_lines, repeat)
    print(f"duckdb read_json, lines counted:        {t:7.3f} s  {lines} lines")

    def lines_to_arrow():
        return con.sql(f"SELECT * FROM read_json('{glob}', {options})").to_arrow_table()

    t, table = best(lines_to_arrow, repeat)
    print(f"duckdb read_json, all lines to Arrow:   {t:7.3f} s  {table.num_rows} rows, {table.num_columns} columns")


if __name__ == "__main__":
    main()
