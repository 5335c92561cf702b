//! What each rule's regex costs on a file: every rule run over every line, the slowest
//! printed first with its throughput. A tool for tuning the prefilter (see
//! docs/PERFORMANCE.md): `cargo run --release -p pi-session-redact --example rule_costs FILE`.

use pi_session_redact::rules::RuleSet;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: rule_costs FILE");
    let bytes = std::fs::read(&path).expect("a readable file");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let mut costs = Vec::new();
    for rule in &RuleSet::builtin().rules {
        let Ok(regex) = rule.regex() else { continue };
        let start = Instant::now();
        let mut matches = 0usize;
        for line in &lines {
            matches += regex.find_iter(line).count();
        }
        costs.push((start.elapsed(), rule.id.as_str(), matches));
    }
    costs.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (elapsed, id, matches) in costs.iter().take(25) {
        let mbps = bytes.len() as f64 / elapsed.as_secs_f64() / 1e6;
        println!(
            "{id:45} {:>8.1} ms {mbps:>8.0} MB/s {matches:>6} matches",
            elapsed.as_secs_f64() * 1e3
        );
    }
}
