#!/usr/bin/env python3
"""Check the conformance cases and regenerate each area's README.md from the case.json files.

    python3 conformance/cases/gen_readmes.py           # validate, then rewrite <area>/README.md
    python3 conformance/cases/gen_readmes.py --check   # validate only; exit 1 if a README is stale

Validation: every case directory holds session.jsonl and case.json; case.json has a one-sentence
description, a non-empty list of rule ids that all exist in conformance/RULES.md, only the keys of
conformance/FORMAT.md, ops taken from the five operations, pi "0.73" or "0.87", and a divergence
field exactly in divergence/; every rule of RULES.md is used by at least one case. Exit status 1 on
any problem.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RULES_MD = os.path.join(HERE, "..", "RULES.md")
OPS = ["context", "llm", "migrate", "tree", "info"]
KEYS = {"description", "rules", "leaf", "pi", "ops", "divergence", "dialect"}
# A rule whose behaviour no single case can show says which corpus pins it instead.
PINNED_ELSEWHERE = "Pinned by `conformance/"
MIN_CASES = 170

# One paragraph of spec prose per area (areas without an entry here are listed but not described).
SUMMARIES = {
    "parse": (
        "How a session file becomes a list of JSON values. The bytes are decoded as UTF-8 (bad "
        "sequences become U+FFFD), the whole text is trimmed with the ECMAScript whitespace set, cut "
        "at LF only, blank lines are skipped and every other line is parsed untrimmed as one JSON "
        "value with JavaScript semantics; a line that does not parse is dropped without a trace, and "
        "any value that parses, object or not, is kept. What the operations print is `JSON.stringify` "
        "output, so number spelling, string escaping and key order follow JavaScript. Odd but readable "
        "files (header-only, torn or glued appends, long chains, long headers) belong here too."
    ),
    "header": (
        "The header is the first value that parses; it must be an object with `type` \"session\" and a "
        "string `id`, nothing else is checked. Its `version` decides which migrations run, compared with "
        "JavaScript coercion: missing or null means 1, at least 3 means none, NaN means none but the "
        "file is still rewritten. Later session lines are not entries and their version does not count."
    ),
    "migrate": (
        "Opening a file below version 3 migrates it in memory and rewrites it. v1→v2 gives every "
        "entry a fresh 8-hex id in file order and chains each entry to the previous one, overwriting "
        "what was there, and turns a numeric `firstKeptEntryIndex` (counted with the header as 0) into "
        "`firstKeptEntryId`; v2→v3 renames the `hookMessage` role to `custom`. The rewrite is one "
        "compact `JSON.stringify` line per value. A file with nothing to migrate is left byte for byte."
    ),
    "context": (
        "`buildSessionContext`: the path is walked from the leaf (the last entry of the file, or an "
        "explicit one) up the `parentId` links; thinking level and model are the last ones set on the "
        "whole path; the compaction closest to the leaf replaces everything before its "
        "`firstKeptEntryId` with its summary; message entries contribute their message as stored, "
        "`custom_message` and `branch_summary` entries are turned into messages with JavaScript date "
        "conversion of their timestamps, and every other entry contributes nothing."
    ),
    "llm": (
        "`convertToLlm`: user, assistant and toolResult messages pass through as they are; "
        "bashExecution, custom, branchSummary and compactionSummary messages become user messages "
        "built from fixed templates, with JavaScript truthiness deciding each optional part; every "
        "other role is dropped."
    ),
    "tree": (
        "`getTree`: one node per entry, roots for null, self, missing or unknown parents in file "
        "order, children attached by `parentId` and sorted by timestamp with V8's sort (stable; "
        "inconsistent when a timestamp is unreadable). Duplicate and missing ids share nodes, and "
        "entries reachable only through a cycle vanish."
    ),
    "labels-names": (
        "Labels and the session name are read from the whole file in file order, branches ignored: "
        "the latest `label` entry per target wins and a falsy label clears it; the latest "
        "`session_info` gives the trimmed name and an empty, blank or missing name clears it. Neither "
        "ever reaches the context."
    ),
    "info": (
        "The listing entry (`buildSessionInfo`) of a session: id, cwd, parent session and creation "
        "time from the header; every `message` entry counted; the first user text and all user and "
        "assistant texts (text blocks joined by spaces); `modified` from the latest message activity, "
        "falling back to the header time and then to the file's modification time."
    ),
    "pi-0.87": (
        "What `@earendil-works/pi-coding-agent@0.87.1` (`--pi 0.87`) does differently from 0.73.1 on "
        "the same file: no whole-text trim, falsy lines ignored, a missing final newline appended on "
        "open, `context_edit` entries applied to the context, `system` messages kept (except in a "
        "compaction's kept range) and passed to the model, a compaction's `systemMessage` emitted "
        "before its summary, null or missing content normalised, `usage` entries ignored; and cases "
        "showing that migrations, labels and names did not change."
    ),
    "omp": (
        "oh-my-pi (`omp`, `@oh-my-pi/pi-coding-agent` 18.3.4), the most used fork of pi, reads its "
        "own files and pi's: a fixed-width title slot before the header, settings by role and mode, "
        "`/clear` boundaries, failed turns and dangling tool calls left out of the context. These "
        "cases carry `\"dialect\": \"omp\"`: their expected outputs come from omp's own code "
        "(`conformance/reference/omp/omp-ref.ts`), an implementation is given `--dialect omp`, and "
        "`conformance run --dialect omp` runs them. `docs/dialects.md` lists every difference."
    ),
    "divergence": (
        "Inputs on which pi hangs (parent cycles), crashes (null lines, null messages, non-object v1 "
        "lines, a context_edit without replacement in 0.87.1) or destroys data (no valid header: the "
        "file is overwritten; unparseable lines dropped by a migration rewrite). The expected output "
        "of these cases is what pi-session does instead, as documented in `docs/divergences.md`; "
        "each case says why in its `divergence` field."
    ),
}
SUMMARIES["real"] = (
    "Whole sessions as they exist in the wild, kept forever as compatibility fixtures: files pi "
    "wrote itself (v1 and v3), files from third-party readers and writers (see SOURCES.md for "
    "where each comes from and its license), and realistic sessions recorded by driving pi's own "
    "`SessionManager` API (`recorded-*`, made by `conformance/reference/record-sessions.mjs`), "
    "including v1 and v2 files in their historical shapes. pi 0.73.1 and 0.87.1 give the same "
    "outputs on every one of them (checked by `.ci/run`)."
)
ORDER = ["parse", "header", "migrate", "context", "llm", "tree", "labels-names", "info", "pi-0.87", "omp", "divergence", "real"]


def load_rules():
    """The rule ids of RULES.md, each with whether it says another corpus pins it."""
    text = open(RULES_MD, encoding="utf-8").read()
    found = re.findall(r"^- \*\*([A-Z][0-9]+(?:\.[0-9]+)?)\*\*(.*)$", text, re.M)
    return [(rule, PINNED_ELSEWHERE in rest) for rule, rest in found]


def area_dirs():
    out = []
    for name in sorted(os.listdir(HERE)):
        p = os.path.join(HERE, name)
        if os.path.isdir(p) and not name.startswith("."):
            out.append(name)
    return out


def check(rules):
    problems = []
    cases = {}
    used = set()
    rule_set = {rule for rule, _ in rules}
    if len(rule_set) != len(rules):
        problems.append("RULES.md: duplicate rule ids")
    for area in area_dirs():
        adir = os.path.join(HERE, area)
        entries = []
        for name in sorted(os.listdir(adir)):
            cdir = os.path.join(adir, name)
            if not os.path.isdir(cdir):
                continue
            where = f"{area}/{name}"
            if not re.fullmatch(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", name):
                problems.append(f"{where}: name is not kebab-case")
            if not os.path.isfile(os.path.join(cdir, "session.jsonl")):
                problems.append(f"{where}: missing session.jsonl")
            try:
                meta = json.load(open(os.path.join(cdir, "case.json"), encoding="utf-8"))
            except FileNotFoundError:
                problems.append(f"{where}: missing case.json")
                continue
            except ValueError as e:
                problems.append(f"{where}: case.json is not JSON: {e}")
                continue
            if not isinstance(meta, dict):
                problems.append(f"{where}: case.json is not an object")
                continue
            extra = set(meta) - KEYS
            if extra:
                problems.append(f"{where}: unknown keys {sorted(extra)}")
            d = meta.get("description")
            if not isinstance(d, str) or not d.strip():
                problems.append(f"{where}: description missing")
            rl = meta.get("rules")
            if not isinstance(rl, list) or not rl or not all(isinstance(r, str) for r in rl):
                problems.append(f"{where}: rules must be a non-empty list of ids")
                rl = []
            for r in rl:
                if r not in rule_set:
                    problems.append(f"{where}: rule {r} is not in RULES.md")
                used.add(r)
            if "leaf" in meta and not isinstance(meta["leaf"], str):
                problems.append(f"{where}: leaf must be a string")
            if meta.get("pi", "0.73") not in ("0.73", "0.87"):
                problems.append(f"{where}: pi must be \"0.73\" or \"0.87\"")
            ops = meta.get("ops", OPS)
            if not isinstance(ops, list) or not ops or any(o not in OPS for o in ops) or len(set(ops)) != len(ops):
                problems.append(f"{where}: ops must be a non-empty list of distinct {OPS}")
            if area == "divergence":
                if not isinstance(meta.get("divergence"), str) or not meta["divergence"].strip():
                    problems.append(f"{where}: divergence/ cases need a divergence field")
            elif "divergence" in meta:
                problems.append(f"{where}: divergence field outside divergence/")
            if meta.get("dialect", "omp") != "omp" or (area == "omp") != (meta.get("dialect") == "omp") and area != "divergence":
                problems.append(f"{where}: omp/ cases need \"dialect\": \"omp\", and only they and divergence/ cases may have it")
            if area == "pi-0.87" and meta.get("pi") != "0.87":
                problems.append(f"{where}: pi-0.87/ cases need \"pi\": \"0.87\"")
            if os.path.isdir(os.path.join(cdir, "expected")):
                for f in os.listdir(os.path.join(cdir, "expected")):
                    op = f.split(".")[0]
                    if op not in ops:
                        problems.append(f"{where}: expected/{f} for an op not in ops")
            entries.append((name, meta))
        cases[area] = entries
    for r, pinned_elsewhere in rules:
        if r not in used and not pinned_elsewhere:
            problems.append(f"rule {r} is used by no case")
    total = sum(len(v) for a, v in cases.items() if a != "real")
    if total < MIN_CASES:
        problems.append(f"only {total} cases outside real/ (want at least {MIN_CASES})")
    return cases, problems


def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def most_common(values):
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return max(counts, key=lambda v: (counts[v], -values.index(v))) if counts else None


def render(area, entries):
    usual_ops = most_common([tuple(m.get("ops", OPS)) for _, m in entries])
    usual_pi = most_common([m.get("pi", "0.73") for _, m in entries])
    lines = [f"# `{area}/`", ""]
    if area in SUMMARIES:
        lines += [SUMMARIES[area], ""]
    lines += [
        "Generated by `conformance/cases/gen_readmes.py` from the `case.json` files; do not edit by hand.",
        "Rule ids refer to `conformance/RULES.md`. "
        + f"Unless a row says otherwise, a case runs with pi {usual_pi} and checks {', '.join(usual_ops or ())}.",
        "",
        "| case | rules | what it pins down |",
        "|---|---|---|",
    ]
    for name, meta in entries:
        notes = []
        if meta.get("pi", "0.73") != usual_pi:
            notes.append(f"pi {meta.get('pi', '0.73')}")
        if meta.get("leaf"):
            notes.append(f"leaf `{meta['leaf']}`")
        ops = meta.get("ops", OPS)
        if tuple(ops) != usual_ops:
            notes.append("ops: " + ", ".join(ops))
        what = cell(meta.get("description", ""))
        if notes:
            what += " _(" + "; ".join(notes) + ")_"
        lines.append(f"| [`{name}`]({name}/) | {', '.join(meta.get('rules', []))} | {what} |")
    return "\n".join(lines) + "\n"


def main():
    only_check = "--check" in sys.argv[1:]
    rules = load_rules()
    cases, problems = check(rules)
    stale = []
    for area, entries in cases.items():
        if area not in SUMMARIES:
            continue  # an area this script does not describe (e.g. real/) keeps its own README
        text = render(area, entries)
        path = os.path.join(HERE, area, "README.md")
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        if only_check:
            stale.append(f"{area}/README.md is out of date")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    counts = {a: len(cases[a]) for a in sorted(cases, key=lambda a: (ORDER.index(a) if a in ORDER else 99, a))}
    for a, n in counts.items():
        print(f"{a:14} {n}")
    print(f"{'total':14} {sum(counts.values())}  ({len(rules)} rules)")
    for p in problems + stale:
        print("PROBLEM:", p, file=sys.stderr)
    sys.exit(1 if problems or stale else 0)


if __name__ == "__main__":
    main()
