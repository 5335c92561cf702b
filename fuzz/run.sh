#!/usr/bin/env bash
# fuzz/run.sh TARGET [SECONDS] [LIBFUZZER_ARG...]
#
# Runs one fuzz target for SECONDS (default 60) with its options (fuzz/options/TARGET.options:
# max_len, dict, timeout, rss_limit_mb) on its corpus (fuzz/corpus/TARGET, seeded by
# `cargo xtask fuzz seed`; new inputs are added to it). Exits non-zero on a crash, a hang or
# an out-of-memory; the input is then in fuzz/artifacts/TARGET/.
#
# Uses the nightly toolchain when rustup has one, otherwise the default toolchain with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz needs nightly-only -Z flags). FUZZ_SANITIZER picks the
# sanitizer (default: none; the crate has no unsafe code, so coverage-guided checks are what
# matters and run about twice as fast; use `address` to look for memory errors in
# dependencies).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: fuzz/run.sh TARGET [SECONDS] [LIBFUZZER_ARG...]}
seconds=${2:-60}
shift
[ $# -gt 0 ] && shift

options=()
while IFS= read -r line; do
	line=${line%%#*}
	[[ $line =~ ^[[:space:]]*([a-z_]+)[[:space:]]*=[[:space:]]*([^[:space:]]+) ]] || continue
	key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
	[ "$key" = dict ] && value=$PWD/$value
	options+=("-$key=$value")
done <"options/$target.options"

if rustup run nightly rustc --version >/dev/null 2>&1; then
	fuzz=(cargo +nightly fuzz)
else
	fuzz=(env RUSTC_BOOTSTRAP=1 cargo fuzz)
fi
mkdir -p "corpus/$target"
exec "${fuzz[@]}" run --sanitizer "${FUZZ_SANITIZER:-none}" "$target" "corpus/$target" -- \
	-max_total_time="$seconds" -print_final_stats=1 "${options[@]}" "$@"
