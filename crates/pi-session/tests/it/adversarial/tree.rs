//! Adversarial cases: `tree` (issue 12, items 1, 2 and the tree part of 5) — deep chains,
//! duplicate-id graphs whose unfolding is exponential or endless, very wide nodes.

use super::common::*;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(120);

/// A file of `levels` levels with two entries sharing each id, each level's entries under
/// the previous level's id: pi's `getTree()` links the one node of a level twice under the
/// node of the level above, so its output doubles with every level.
fn duplicate_id_dag(levels: usize) -> String {
    let mut text = HEADER.to_owned();
    for level in 0..levels {
        let parent = match level {
            0 => "null".to_owned(),
            _ => format!("\"d{:07}\"", level - 1),
        };
        for copy in 0..2 {
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"d{level:07}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:{:02}.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"level {level} copy {copy}\",\"timestamp\":1}}}}\n",
                level % 60
            ));
        }
    }
    text
}

/// Item 1: `tree` overflowed the stack (rc 134) on a linear chain of 35,000 entries and was
/// quadratic before that (0.85 s at 34k). The chain is written whole, one node inside the
/// next, in well under a second.
#[test]
fn tree_linear_chain_of_35000_entries_does_not_overflow_the_stack() {
    let dir = scratch("tree-linear-35000");
    let path = generated(&dir, "chain.jsonl", &["--entries", "35000", "--linear"]);
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let out = run.stdout_text();
    assert!(
        out.starts_with("[{\"id\":"),
        "{}",
        &out[..out.len().min(200)]
    );
    // One root; every entry nested in the one before it.
    assert!(out.ends_with(&format!("{}]\n", "]}".repeat(35_000))));
    assert_eq!(out.matches("\"children\":[").count(), 35_000);
    assert!(
        run.elapsed < Duration::from_secs(10),
        "took {:?}",
        run.elapsed
    );
}

/// Item 2: a 7.6 KB file of 24 levels with two entries sharing each id made `tree` write
/// gigabytes (20 levels: 91 MB and 1.2 GB of memory), where pi's own output doubles with
/// every level. The output is bounded by the file: each entry once, with a warning.
#[test]
fn tree_duplicate_id_dag_of_24_levels_writes_each_node_once() {
    let dir = scratch("tree-duplicate-id-dag");
    let text = duplicate_id_dag(24);
    let path = write(&dir, "dag.jsonl", &text);
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    assert!(
        run.stdout_len < 64 * text.len() as u64,
        "{} bytes of output for a file of {}",
        run.stdout_len,
        text.len()
    );
    assert!(
        run.elapsed < Duration::from_secs(5),
        "took {:?}",
        run.elapsed
    );
    let out = run.stdout_text();
    for level in 0..24 {
        assert_eq!(
            out.matches(&format!("\"d{level:07}\"")).count(),
            1,
            "level {level}"
        );
    }
    assert!(
        run.stderr
            .contains(":2: warning: the id \"d0000000\" is reused")
            && run.stderr.contains("pi would print"),
        "{}",
        run.stderr
    );
}

/// Item 2 at 70 levels: pi's output size no longer fits in 64 bits, and the warning said
/// "pi would print 18446744073709551615 bytes" (the saturated count); it says at least 2^64.
#[test]
fn tree_duplicate_id_dag_of_70_levels_says_how_big_pi_would_be() {
    let dir = scratch("tree-duplicate-id-dag-70");
    let path = write(&dir, "dag.jsonl", duplicate_id_dag(70));
    for format in ["json", "text"] {
        let run = run(&["tree", "--format", format, s(&path)], TIMEOUT);
        run.assert_code(0);
        assert!(
            run.stderr.contains("(pi would print at least 2^64 bytes)")
                && !run.stderr.contains("18446744073709551615"),
            "{}",
            run.stderr
        );
    }
    // Below the saturation, the exact count: 24 levels.
    let path = write(&dir, "dag24.jsonl", duplicate_id_dag(24));
    let run = run(&["tree", s(&path)], TIMEOUT);
    let said = run.stderr.split("pi would print ").nth(1).unwrap_or("");
    let bytes: u64 = said.split(' ').next().unwrap_or("").parse().unwrap_or(0);
    assert!(bytes > 1 << 30 && bytes < 1 << 40, "{}", run.stderr);
}

/// Item 2, its sibling: duplicate ids that link a node below itself made pi's `getTree()`
/// loop forever; a long such loop is listed once per node, promptly.
#[test]
fn tree_duplicate_ids_forming_a_10000_entry_loop_end_promptly() {
    let dir = scratch("tree-duplicate-id-loop");
    let mut text = HEADER.to_owned();
    text.push_str("{\"type\":\"custom\",\"id\":\"e0\",\"parentId\":null}\n");
    for i in 1..10_000 {
        text.push_str(&format!(
            "{{\"type\":\"custom\",\"id\":\"e{i}\",\"parentId\":\"e{}\"}}\n",
            i - 1
        ));
    }
    // The first id again, now under the last entry: e0 → … → e9999 → e0.
    text.push_str("{\"type\":\"custom\",\"id\":\"e0\",\"parentId\":\"e9999\"}\n");
    let path = write(&dir, "loop.jsonl", &text);
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    let out = run.stdout_text();
    assert_eq!(out.matches("\"id\":\"e0\"").count(), 1);
    assert_eq!(out.matches("\"children\":[").count(), 10_000);
    assert!(
        run.stderr.contains("pi would loop forever"),
        "{}",
        run.stderr
    );
}

/// A node with 150,000 children (timestamps shuffled, some invalid): sorted without a
/// panic, every child listed once.
#[test]
fn tree_root_with_150000_children_some_with_invalid_timestamps_is_sorted() {
    let dir = scratch("tree-wide");
    let mut text = HEADER.to_owned();
    text.push_str("{\"type\":\"custom\",\"id\":\"root\",\"parentId\":null}\n");
    for i in 0..150_000u64 {
        let time = match i % 7 {
            0 => "\"not a date\"".to_owned(),
            _ => format!("{}", (i * 7_919) % 1_000_003),
        };
        text.push_str(&format!(
            "{{\"type\":\"custom\",\"id\":\"c{i}\",\"parentId\":\"root\",\"timestamp\":{time}}}\n"
        ));
    }
    let path = write(&dir, "wide.jsonl", &text);
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    assert_eq!(
        run.stdout_text().matches("\"children\":[]").count(),
        150_000
    );
}

/// Item 1 at scale: `gen --size 100MB --seed 2` overflowed the stack.
#[test]
#[ignore = "long: generates a 100 MB session"]
fn tree_generated_100mb_session_seed_2_does_not_overflow_the_stack() {
    let dir = scratch("tree-100mb-seed-2");
    let path = generated(&dir, "big.jsonl", &["--size", "100MB", "--seed", "2"]);
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    assert!(run.stdout_text().starts_with("[{\"id\":"));
}

/// Item 5 (tree part): a 1M-entry linear chain took `tree` over 120 s. The target is 2 s
/// with a release build (docs/PERFORMANCE.md); a debug build gets more room.
#[test]
#[ignore = "long: generates a 1M-entry session"]
fn tree_linear_chain_of_1m_entries_is_linear() {
    let dir = scratch("tree-linear-1m");
    let path = generated(&dir, "chain.jsonl", &["--entries", "1000000", "--linear"]);
    let size = std::fs::metadata(&path).unwrap().len();
    let run = run(&["tree", s(&path)], TIMEOUT);
    run.assert_code(0);
    // The file is read through small buffers, not mapped whole: 338 MiB for this 484 MB
    // file (it held 784 MiB of the mapping before).
    assert!(
        run.max_rss_kib << 10 < size,
        "peak {} MiB for a {} MiB file",
        run.max_rss_kib >> 10,
        size >> 20
    );
    // At least `{"id":"…","type":"…","children":[]}` for each entry.
    assert!(run.stdout_len > 40_000_000, "{} bytes", run.stdout_len);
    assert!(run.stdout_text().starts_with("[{\"id\":"));
    // A guard against the quadratic walk (over 120 s before); the 2 s target is measured
    // with the benchmarks (docs/PERFORMANCE.md).
    let limit = if cfg!(debug_assertions) { 30 } else { 4 };
    assert!(
        run.elapsed < Duration::from_secs(limit),
        "took {:?} (limit {limit} s)",
        run.elapsed
    );
}

/// `tree --format text` draws a branching recorded session (branch points, branch summaries,
/// the leaf) and a 200,000-entry chain collapsed to a few lines, without recursion.
#[test]
fn tree_text_draws_branches_and_collapses_long_chains() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let branches = root.join("conformance/cases/real/recorded-branches/session.jsonl");
    let r = run(&["tree", s(&branches), "--format", "text"], TIMEOUT);
    r.assert_code(0);
    let out = r.stdout_text();
    assert!(out.contains("├─ ") && out.contains("└─ "), "{out}");
    assert!(out.contains("branch summary: "), "{out}");
    assert_eq!(out.matches("◀ leaf").count(), 1, "{out}");
    // The JSON is unchanged by the option's existence.
    let json = run(&["tree", s(&branches)], TIMEOUT);
    assert!(json.stdout_text().starts_with("[{\"id\":"));
    let dir = scratch("tree-text-chain");
    let chain = generated(&dir, "chain.jsonl", &["--entries", "200000", "--linear"]);
    let r = run(&["tree", s(&chain), "--format", "text"], TIMEOUT);
    r.assert_code(0);
    let out = r.stdout_text();
    assert!(out.lines().count() < 10, "{out}");
    assert!(out.contains("entries …"), "{out}");
    let short = generated(&dir, "short.jsonl", &["--entries", "20000", "--linear"]);
    let all = run(
        &["tree", s(&short), "--format", "text", "--no-collapse"],
        TIMEOUT,
    );
    all.assert_code(0);
    assert_eq!(
        all.stdout_text().lines().count(),
        20_000,
        "one line per entry"
    );
}
