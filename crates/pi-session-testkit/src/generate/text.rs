//! Synthetic text with the shape of what a coding agent's session holds: prose (prompts,
//! answers, reasoning, summaries), source code (file contents, edits), command output, paths,
//! and opaque tokens (base64 signatures and images, hex ids). Only the shape matters (length,
//! line structure, the characters JSON has to escape, some non-ASCII), not the meaning.

use super::rng::Rng;

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "the", "the", "a", "a", "to", "to", "of", "of", "and", "and", "in", "is", "is", "it",
    "that", "for", "on", "with", "this", "we", "be", "as", "not", "are", "from", "by", "at", "or",
    "can", "should", "will", "then", "when", "if", "but", "so", "now", "also", "just", "file",
    "function", "test", "tests", "session", "entry", "entries", "parser", "index", "context",
    "message", "messages", "tool", "call", "result", "error", "value", "type", "types", "module",
    "branch", "leaf", "path", "tree", "compaction", "summary", "config", "settings", "provider",
    "model", "token", "tokens", "cache", "stream", "buffer", "line", "lines", "output", "input",
    "command", "build", "check", "lint", "format", "refactor", "rename", "extract", "move",
    "split", "merge", "update", "fix", "add", "remove", "keep", "read", "write", "edit", "run",
    "look", "need", "make", "use", "want", "think", "see", "let", "me", "I", "I'll", "you", "your",
    "it's", "don't", "there", "here", "which", "because", "instead", "first", "next", "last",
    "still", "already", "again", "only", "every", "each", "some", "all", "both", "other", "new",
    "old", "same", "different", "small", "large", "simple", "nicer", "cleaner", "faster", "slower",
    "broken", "missing", "correct", "wrong", "async", "await", "promise", "callback", "handler",
    "listener", "event", "events", "state", "agent", "mode", "interactive", "print", "rpc", "TUI",
    "component", "renderer", "selector", "editor", "footer", "theme", "colors", "width", "height",
    "terminal", "render", "request", "response", "API", "JSON", "JSONL", "UTF-8", "npm",
    "TypeScript", "Rust", "import", "export", "class", "interface", "method", "property", "field",
    "key", "keys", "array", "object", "string", "number", "boolean", "null", "undefined", "—", "→",
    "✅", "naïve", "façade", "`npm run check`", "`SessionManager`", "`buildSessionContext()`",
    "`agent-session.ts`", "**important**", "(see above)", "e.g.", "i.e.", "etc.", "\"quoted\"",
    "it\\'s", "50%", "#123", "v0.73.1",
];

#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "session", "entry", "entries", "leafId", "parentId", "byId", "messages", "result", "options",
    "config", "state", "agent", "model", "provider", "thinkingLevel", "summary", "index", "path",
    "file", "content", "text", "lines", "line", "value", "key", "error", "event", "listener",
    "handler", "tools", "toolCall", "usage", "tokens", "cost", "stream", "buffer", "output",
    "args", "cwd", "timestamp", "id", "label", "branch", "children", "node", "tree", "map",
    "items", "count", "offset", "limit", "width", "theme", "ui", "editor", "container", "chat",
    "footer", "queue", "pending", "compaction", "cutPoint",
];

#[rustfmt::skip]
const TYPES: &[&str] = &[
    "SessionEntry", "AgentMessage", "SessionManager", "AgentSession", "Model", "ThinkingLevel",
    "ToolCall", "ToolResult", "Usage", "string", "number", "boolean", "void", "Promise<void>",
    "Map<string, SessionEntry>", "CompactionEntry", "BranchSummaryEntry", "TUI", "Container",
    "Component", "Theme", "Record<string, unknown>", "AbortController", "ReadonlyArray<string>",
];

#[rustfmt::skip]
const CODE: &[&str] = &[
    "import { $T, type $T } from \"./$i.js\";", "import * as $i from \"node:$i\";",
    "export function $i($i: $T, $i?: $T): $T {", "export async function $i($i: $T): Promise<$T> {",
    "export interface $T {", "\t$i: $T;", "\t$i?: $T;", "\tprivate $i: $T | null = null;",
    "const $i = await this.$i.$i($i);", "const $i = $i.map(($i) => $i.$i);",
    "const { $i, $i } = $i;", "let $i = $i.get($i.$i);", "if (!$i) return $i;",
    "if ($i.type === \"$i\" && $i.$i !== undefined) {", "if ($i.length === 0) {",
    "for (const $i of $i.$i) {", "while ($i && $i.$i) {", "\t$i.push($i);",
    "\t$i = $i.get($i.$i);", "\treturn { $i: $i.$i, $i: $i };",
    "\tthrow new Error(`$T not found: ${$i}`);", "\tthis.$i.$i(($i) => this.$i($i));", "} else {",
    "} catch ($i) {", "try {", "}", "}", "},", "});", "", "", "// $w", "/** $w */", " * $w", "/**",
    " */", "\tconsole.log(`$i: ${$i.$i}`);",
    "\treturn $i.filter(($i) => $i.$i !== $i).length > 0;", "\t\t$i: \"$i\",",
    "\t\t$i: $i.$i ?? $i,", "case \"$i\":", "\tbreak;", "default:", "switch ($i.type) {",
    "fn $i(&self, $i: &$T) -> Result<$T, Error> {",
    "    let $i = self.$i.get(&$i).ok_or(Error::Missing)?;",
];

#[rustfmt::skip]
const DIRS: &[&str] = &[
    "src", "src/core", "src/core/tools", "src/modes/interactive", "src/modes", "src/utils", "test",
    "packages/coding-agent/src", "packages/coding-agent/src/core", "packages/ai/src",
    "packages/tui/src/components", "docs", "scripts",
];

#[rustfmt::skip]
const FILES: &[&str] = &[
    "session-manager", "agent-session", "messages", "compaction", "main", "cli", "config", "theme",
    "selector", "tree-selector", "footer", "editor", "bash-executor", "tools", "model-registry",
    "settings-manager", "index", "types", "utils", "export-html", "rpc-mode", "print-mode",
    "interactive-mode", "branch-summary", "keybindings", "auth-storage",
];

const EXTS: &[&str] = &[
    ".ts", ".ts", ".ts", ".ts", ".md", ".json", ".rs", ".test.ts",
];

#[rustfmt::skip]
const COMMANDS: &[&str] = &[
    "npm run check", "npm test", "git status", "git diff --stat", "git log --oneline -20",
    "ls -la", "cat package.json", "rg -n \"buildSessionContext\" packages/",
    "find . -name \"*.ts\" -newer package.json | head -50", "cargo test --workspace",
    "cargo clippy --all-targets -- -D warnings", "npx tsc --noEmit", "wc -l src/**/*.ts",
    "git add -A && git commit -m \"wip\"", "node --version", "npm run build 2>&1 | tail -40",
    "grep -rn \"TODO\" src | head", "sed -n '120,220p' src/core/agent-session.ts",
];

/// Appends prose of about `len` bytes: sentences, paragraphs, sometimes a list.
pub(crate) fn prose(rng: &mut Rng, out: &mut String, len: usize) {
    let end = out.len() + len;
    let mut sentence = 0;
    while out.len() < end {
        let words = rng.urange(5, 22);
        let bullet = rng.chance(60);
        if bullet {
            out.push_str("- ");
        }
        for w in 0..words {
            let word = *rng.pick(WORDS);
            if w == 0 {
                let mut chars = word.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(word);
            }
            if w + 1 < words && rng.chance(40) {
                out.push(',');
            }
        }
        sentence += 1;
        out.push_str(match rng.below(20) {
            0 => ":\n",
            1 => "?",
            _ => ".",
        });
        if bullet || (sentence > 2 && rng.chance(200)) {
            out.push_str(if bullet { "\n" } else { "\n\n" });
            sentence = 0;
        } else if out.len() < end {
            out.push(' ');
        }
    }
}

/// Appends a short title (`words` words, no final period).
pub(crate) fn title(rng: &mut Rng, out: &mut String, words: usize) {
    for w in 0..words {
        if w > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick_str(WORDS));
    }
}

/// Appends source-code-like lines of about `len` bytes (tabs, quotes, backslashes, braces).
pub(crate) fn code(rng: &mut Rng, out: &mut String, len: usize) {
    let end = out.len() + len;
    let mut depth: usize = 0;
    while out.len() < end {
        for _ in 0..depth.min(4) {
            out.push('\t');
        }
        let template = *rng.pick(CODE);
        fill(rng, out, template);
        out.push('\n');
        if template.ends_with('{') {
            depth += 1;
        } else if template.starts_with('}') {
            depth = depth.saturating_sub(1);
        }
    }
}

fn fill(rng: &mut Rng, out: &mut String, template: &str) {
    let mut rest = template;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let tag = rest.as_bytes().get(pos + 1).copied();
        match tag {
            Some(b'i') => out.push_str(rng.pick_str(IDENTS)),
            Some(b'T') => out.push_str(rng.pick_str(TYPES)),
            Some(b'w') => {
                let n = rng.urange(3, 12);
                title(rng, out, n);
            }
            _ => {
                out.push('$');
                rest = &rest[pos + 1..];
                continue;
            }
        }
        rest = &rest[pos + 2..];
    }
    out.push_str(rest);
}

/// Appends command output of about `len` bytes: paths with line numbers, code and
/// status lines.
pub(crate) fn output(rng: &mut Rng, out: &mut String, len: usize) {
    let end = out.len() + len;
    while out.len() < end {
        match rng.below(6) {
            0 | 1 => {
                path(rng, out);
                out.push(':');
                out.push_str(&rng.range(1, 2000).to_string());
                out.push_str(": ");
                let t = *rng.pick(CODE);
                fill(rng, out, t);
            }
            2 => {
                let t = *rng.pick(CODE);
                fill(rng, out, t);
            }
            3 => {
                out.push_str(rng.pick_str(&[
                    "  ✓ ",
                    "  ✗ ",
                    "PASS ",
                    "ok ",
                    "warning: ",
                    "error: ",
                ]));
                let n = rng.urange(3, 10);
                title(rng, out, n);
            }
            _ => path(rng, out),
        }
        out.push('\n');
    }
}

/// Appends a unified-diff-like snippet as pi's edit tool shows it.
pub(crate) fn diff(rng: &mut Rng, out: &mut String, len: usize) {
    let end = out.len() + len;
    let mut n = rng.range(1, 1500);
    out.push_str("     ...\n");
    while out.len() < end {
        let sign = *rng.weighted(&[(6, ' '), (2, '-'), (2, '+')]);
        out.push(sign);
        out.push_str(&format!("{n:>4} "));
        let t = *rng.pick(CODE);
        fill(rng, out, t);
        out.push('\n');
        n += 1;
    }
    out.push_str("     ...");
}

/// Appends a project-relative path.
pub(crate) fn path(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick_str(DIRS));
    out.push('/');
    out.push_str(rng.pick_str(FILES));
    out.push_str(rng.pick_str(EXTS));
}

pub(crate) fn command(rng: &mut Rng) -> &'static str {
    rng.pick_str(COMMANDS)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `len` base64 characters (padded like a real encoding when `len % 4 != 0`).
pub(crate) fn base64(rng: &mut Rng, out: &mut String, len: usize) {
    let body = len - len % 4;
    let mut bytes = Vec::with_capacity(len);
    while bytes.len() < body {
        let mut x = rng.next_u64();
        for _ in 0..10 {
            if bytes.len() == body {
                break;
            }
            bytes.push(B64[(x & 63) as usize]);
            x >>= 6;
        }
    }
    match len % 4 {
        0 => {}
        r => {
            for _ in 0..r.min(2) {
                bytes.push(B64[rng.below(64) as usize]);
            }
            bytes.extend(std::iter::repeat_n(b'=', r - r.min(2)));
        }
    }
    out.push_str(std::str::from_utf8(&bytes).expect("ASCII"));
}

pub(crate) fn base62(rng: &mut Rng, out: &mut String, len: usize) {
    for _ in 0..len {
        out.push(char::from(B62[rng.below(62) as usize]));
    }
}

pub(crate) fn hex(rng: &mut Rng, out: &mut String, len: usize) {
    for _ in 0..len {
        out.push(char::from(HEX[rng.below(16) as usize]));
    }
}
