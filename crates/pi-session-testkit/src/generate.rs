//! A deterministic generator of realistic pi sessions, for benchmarks and scaling tests.
//!
//! [`generate`] writes a session file as pi writes it (`JSON.stringify` of each entry, with
//! [`JsonWriter`]; pi's key orders, 8-hex-digit entry ids, ISO timestamps with milliseconds)
//! with the message mix and content sizes of real pi sessions (`conformance/cases/real/`):
//! user prompts, assistant messages with thinking blocks and long signatures, text and tool
//! calls, usage with costs, tool results from a few bytes to 50 KB (with pi's truncation
//! details, which repeat the content), occasional images, `!` commands, model and
//! thinking-level changes, branches left through `/tree` with branch summaries, compactions
//! whose `firstKeptEntryId` is a valid cut point on the path, labels, session names, and
//! extension entries.
//!
//! - **Deterministic.** The output is a function of [`Options`] only: the PRNG
//!   (SplitMix64) and every distribution are defined in this module with integer arithmetic,
//!   so the same options give the same bytes on every machine and with every dependency
//!   version. [`REVISION`] changes whenever the output for given options changes.
//! - **Versions.** [`FileVersion::V3`] is what current pi writes. [`FileVersion::V2`] has
//!   `version: 2` and v2's `hookMessage` messages instead of `custom_message` entries.
//!   [`FileVersion::V1`] has no `version`, no `id`/`parentId` (so no tree: no branches,
//!   labels, names or extension entries), the legacy header fields, usage without
//!   `totalTokens`, and compactions with a `firstKeptEntryIndex` counted with the header as 0.
//! - **Size.** [`Limit::Bytes`] stops after the entry that reaches the size (a session cut off
//!   mid-turn, as a killed pi leaves it); [`Limit::Entries`] after that many entries (header
//!   not counted). `linear` writes a plain chain of short user/assistant pairs instead: the
//!   shape of the scaling test (every entry on the path, nothing compacted).
//!
//! Long file: one generator (`Gen`) whose methods write every entry and message kind pi
//! writes, each in pi's key order, sharing the session state (PRNG, clock, path, token
//! counts); the PRNG and the text pieces are in `generate/`, the tests in `generate/tests.rs`.

mod rng;
mod text;
mod tree;

pub use tree::{TreeOptions, TreeStats, generate_tree, session_dir_name};

use pi_session_format::json::JsonWriter;
use rng::Rng;
use std::collections::HashSet;
use std::io::{self, Write};

/// Changes whenever the bytes generated for given [`Options`] change (cache keys use it).
pub const REVISION: u32 = 1;

/// The session format version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileVersion {
    /// No `version`, no entry ids (pi before 0.31.0).
    V1,
    /// `version: 2`: the id/parentId tree, `hookMessage` messages.
    V2,
    /// `version: 3`: current pi.
    V3,
}

impl FileVersion {
    /// `1`, `2` or `3`.
    pub fn from_number(n: u32) -> Option<FileVersion> {
        match n {
            1 => Some(FileVersion::V1),
            2 => Some(FileVersion::V2),
            3 => Some(FileVersion::V3),
            _ => None,
        }
    }

    /// The version number.
    pub fn number(self) -> u32 {
        match self {
            FileVersion::V1 => 1,
            FileVersion::V2 => 2,
            FileVersion::V3 => 3,
        }
    }
}

/// When to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Stop after the entry that makes the file at least this many bytes long.
    Bytes(u64),
    /// Stop after this many entries (the header not counted).
    Entries(u64),
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The PRNG seed.
    pub seed: u64,
    /// The format version.
    pub version: FileVersion,
    /// When to stop.
    pub limit: Limit,
    /// A linear chain of short user/assistant pairs instead of a realistic session.
    pub linear: bool,
}

/// What was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes written.
    pub bytes: u64,
    /// Entries written (header not counted).
    pub entries: u64,
    /// `message` entries.
    pub messages: u64,
    /// Of which tool results.
    pub tool_results: u64,
    /// Image blocks.
    pub images: u64,
    /// `compaction` entries.
    pub compactions: u64,
    /// Times the session went back to an earlier entry (`/tree`).
    pub branches: u64,
    /// `branch_summary` entries.
    pub branch_summaries: u64,
    /// `label` entries.
    pub labels: u64,
    /// Entries on the path from the root to the last entry (the leaf pi resumes at).
    pub path_entries: u64,
    /// The largest line, in bytes (newline excluded).
    pub max_line: u64,
}

impl Stats {
    /// The statistics as one JSON object.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"bytes\":{},\"entries\":{},\"messages\":{},\"toolResults\":{},\"images\":{},\
             \"compactions\":{},\"branches\":{},\"branchSummaries\":{},\"labels\":{},\
             \"pathEntries\":{},\"maxLine\":{}}}",
            self.bytes,
            self.entries,
            self.messages,
            self.tool_results,
            self.images,
            self.compactions,
            self.branches,
            self.branch_summaries,
            self.labels,
            self.path_entries,
            self.max_line
        )
    }
}

pub use pi_session_fs::size::{SizeError, SizeErrorKind, parse_size};

/// A short label for a size: `100MB`, `1GB`, `64MiB`, or the byte count.
pub fn size_label(bytes: u64) -> String {
    for (unit, m) in [
        ("GB", 1_000_000_000),
        ("GiB", 1 << 30),
        ("MB", 1_000_000),
        ("MiB", 1 << 20),
        ("KB", 1_000),
        ("KiB", 1 << 10),
    ] {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{unit}", bytes / m);
        }
    }
    format!("{bytes}B")
}

/// A file name that identifies the output of `options` (with [`REVISION`]), for caches:
/// `gen-r1-v3-s42-100MB.jsonl`, `gen-r1-v3-s1-linear-1000000.jsonl`.
pub fn file_name(options: &Options) -> String {
    let limit = match options.limit {
        Limit::Bytes(b) => size_label(b),
        Limit::Entries(n) => format!("{n}entries"),
    };
    format!(
        "gen-r{REVISION}-v{}-s{}-{}{limit}.jsonl",
        options.version.number(),
        options.seed,
        if options.linear { "linear-" } else { "" }
    )
}

/// Writes a session for `options` to `out` (buffer it: the generator writes line by line).
pub fn generate<W: Write>(options: &Options, out: W) -> io::Result<Stats> {
    let mut g = Gen::new(options, out);
    match g.run() {
        Ok(()) | Err(Halt::Limit) => {}
        Err(Halt::Io(e)) => return Err(e),
    }
    g.stats.path_entries = g.path.len() as u64;
    g.out.flush()?;
    Ok(g.stats)
}

/// [`generate`] into memory.
pub fn generate_to_vec(options: &Options) -> (Vec<u8>, Stats) {
    let mut out = Vec::new();
    let stats = generate(options, &mut out).expect("writing to a Vec cannot fail");
    (out, stats)
}

// ---------------------------------------------------------------------------------------------
// The model of a session
// ---------------------------------------------------------------------------------------------

/// A model as pi-ai describes it; prices in dollars per million tokens
/// (input, output, cacheRead, cacheWrite).
struct Model {
    provider: &'static str,
    api: &'static str,
    id: &'static str,
    price: [f64; 4],
}

impl Model {
    fn openai(&self) -> bool {
        self.provider.starts_with("openai")
    }
}

const MODELS_V1: &[(u64, Model)] = &[
    (
        6,
        Model {
            provider: "anthropic",
            api: "anthropic-messages",
            id: "claude-sonnet-4-5",
            price: [3.0, 15.0, 0.3, 3.75],
        },
    ),
    (
        3,
        Model {
            provider: "anthropic",
            api: "anthropic-messages",
            id: "claude-opus-4-5",
            price: [5.0, 25.0, 0.5, 6.25],
        },
    ),
    (
        2,
        Model {
            provider: "openai",
            api: "openai-responses",
            id: "gpt-5.1-codex",
            price: [1.25, 10.0, 0.125, 0.0],
        },
    ),
];

const MODELS: &[(u64, Model)] = &[
    (
        5,
        Model {
            provider: "anthropic",
            api: "anthropic-messages",
            id: "claude-opus-4-5",
            price: [5.0, 25.0, 0.5, 6.25],
        },
    ),
    (
        3,
        Model {
            provider: "anthropic",
            api: "anthropic-messages",
            id: "claude-sonnet-4-5",
            price: [3.0, 15.0, 0.3, 3.75],
        },
    ),
    (
        3,
        Model {
            provider: "openai-codex",
            api: "openai-codex-responses",
            id: "gpt-5.5",
            price: [5.0, 30.0, 0.5, 0.0],
        },
    ),
    (
        1,
        Model {
            provider: "anthropic",
            api: "anthropic-messages",
            id: "claude-haiku-4-5",
            price: [1.0, 5.0, 0.1, 1.25],
        },
    ),
];

const LEVELS: &[(u64, &str)] = &[
    (4, "off"),
    (1, "minimal"),
    (2, "low"),
    (3, "medium"),
    (2, "high"),
    (1, "xhigh"),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tool {
    Bash,
    Edit,
    Read,
    Write,
    Grep,
    Find,
}

const TOOLS: &[(u64, Tool)] = &[
    (40, Tool::Bash),
    (28, Tool::Edit),
    (22, Tool::Read),
    (4, Tool::Write),
    (3, Tool::Grep),
    (3, Tool::Find),
];

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Bash => "bash",
            Tool::Edit => "edit",
            Tool::Read => "read",
            Tool::Write => "write",
            Tool::Grep => "grep",
            Tool::Find => "find",
        }
    }
}

struct Call {
    id: String,
    tool: Tool,
    path: String,
    image: bool,
}

/// What an entry on the current path is, for compaction cut points and branch targets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Item {
    User,
    Assistant,
    ToolResult,
    /// bashExecution, custom / hookMessage: valid cut points that are not prompts.
    OtherMessage,
    BranchSummary,
    Compaction,
    /// Settings, labels, names, custom entries: not in the context.
    Silent,
}

impl Item {
    /// pi's `findValidCutPoints`: never a tool result.
    fn is_cut_point(self) -> bool {
        matches!(
            self,
            Item::User | Item::Assistant | Item::OtherMessage | Item::BranchSummary
        )
    }

    fn in_context(self) -> bool {
        !matches!(self, Item::Compaction | Item::Silent)
    }
}

struct PathItem {
    id: u32,
    /// Position in the file, the header being 0 (v1's `firstKeptEntryIndex`).
    file_index: u32,
    item: Item,
    /// Estimated context tokens of the path up to and including this entry.
    cum_tokens: u64,
}

/// Compaction triggers above this many (estimated) context tokens, and keeps about
/// `KEEP_TOKENS` of the most recent ones (pi's defaults for a 200k-token window:
/// `reserveTokens` 16384, `keepRecentTokens` 20000; tokens estimated as bytes / 4).
const COMPACT_TOKENS: u64 = 165_000;
const KEEP_TOKENS: u64 = 20_000;

/// `new Date(ms).toISOString()` for years 1970–9999: `YYYY-MM-DDTHH:mm:ss.sssZ`.
fn iso(ms: i64) -> String {
    pi_session_format::date::to_iso_string(ms as f64)
}

enum Halt {
    Limit,
    Io(io::Error),
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Halt {
        Halt::Io(e)
    }
}

type Step = Result<(), Halt>;

struct Gen<W: Write> {
    rng: Rng,
    out: W,
    version: FileVersion,
    limit: Limit,
    linear: bool,
    line: JsonWriter,
    /// Scratch text buffers.
    s1: String,
    s2: String,
    now: i64,
    ids: HashSet<u32>,
    path: Vec<PathItem>,
    /// Path index of the compaction in force, if any.
    compaction_at: Option<usize>,
    /// Context tokens: `path.last().cum_tokens - ctx_base + ctx_extra`.
    ctx_base: u64,
    ctx_extra: u64,
    /// Tokens already billed (for `cacheRead`/`cacheWrite`).
    cached: u64,
    lines: u32,
    model: &'static Model,
    thinking: &'static str,
    turns: u64,
    named: bool,
    cwd: String,
    stats: Stats,
}

impl<W: Write> Gen<W> {
    fn new(options: &Options, out: W) -> Gen<W> {
        Gen {
            rng: Rng::new(options.seed),
            out,
            version: options.version,
            limit: options.limit,
            linear: options.linear,
            line: JsonWriter::new(),
            s1: String::new(),
            s2: String::new(),
            now: 0,
            ids: HashSet::new(),
            path: Vec::new(),
            compaction_at: None,
            ctx_base: 0,
            ctx_extra: 0,
            cached: 0,
            lines: 0,
            model: &MODELS[0].1,
            thinking: "off",
            turns: 0,
            named: false,
            cwd: String::new(),
            stats: Stats::default(),
        }
    }

    fn v1(&self) -> bool {
        self.version == FileVersion::V1
    }

    fn run(&mut self) -> Step {
        self.start()?;
        if self.linear {
            loop {
                self.linear_pair()?;
            }
        }
        loop {
            self.turn()?;
        }
    }

    // ---- time, ids, lines ---------------------------------------------------------------------

    fn tick(&mut self, lo: u64, hi: u64) -> i64 {
        self.now += self.rng.range(lo, hi) as i64;
        self.now
    }

    fn new_id(&mut self) -> u32 {
        loop {
            let id = self.rng.next_u64() as u32;
            if self.ids.insert(id) {
                return id;
            }
        }
    }

    /// `{"type":TYPE,"id":..,"parentId":..,"timestamp":..` (v1: no id/parentId). Returns the id.
    fn begin(&mut self, ty: &str) -> u32 {
        if ty == "message" {
            self.stats.messages += 1;
        }
        self.line.clear();
        self.line.begin_object();
        self.line.key("type").string(ty);
        if self.v1() {
            self.line.key("timestamp").string(&iso(self.now));
            0
        } else {
            let id = self.new_id();
            self.base_fields(id);
            id
        }
    }

    /// For the entry types whose base fields come last (`custom`, `custom_message`).
    fn begin_bare(&mut self, ty: &str) -> u32 {
        self.line.clear();
        self.line.begin_object();
        self.line.key("type").string(ty);
        self.new_id()
    }

    fn base_fields(&mut self, id: u32) {
        self.line.key("id").string(&format!("{id:08x}"));
        self.line.key("parentId");
        match self.path.last() {
            Some(p) => self.line.string(&format!("{:08x}", p.id)),
            None => self.line.null(),
        };
        self.line.key("timestamp").string(&iso(self.now));
    }

    /// Closes the entry, writes the line and puts the entry on the path.
    fn finish(&mut self, id: u32, item: Item) -> Step {
        self.line.end_object();
        let len = self.line.len() as u64;
        self.line.newline();
        self.out.write_all(self.line.as_bytes())?;
        self.lines += 1;
        let tokens = if item.in_context() { len / 4 } else { 0 };
        let cum = self.path.last().map_or(0, |p| p.cum_tokens) + tokens;
        self.path.push(PathItem {
            id,
            file_index: self.lines - 1,
            item,
            cum_tokens: cum,
        });
        let s = &mut self.stats;
        s.bytes += len + 1;
        s.entries += 1;
        s.max_line = s.max_line.max(len);
        let done = match self.limit {
            Limit::Bytes(b) => s.bytes >= b,
            Limit::Entries(n) => s.entries >= n,
        };
        if done { Err(Halt::Limit) } else { Ok(()) }
    }

    fn context_tokens(&self) -> u64 {
        self.path.last().map_or(0, |p| p.cum_tokens) - self.ctx_base + self.ctx_extra
    }

    // ---- the header and settings --------------------------------------------------------------

    fn start(&mut self) -> Step {
        // v1: Nov–Dec 2025; v2: early Jan 2026; v3: spring 2026.
        let (from, to) = match self.version {
            FileVersion::V1 => (1_763_000_000_000, 1_766_500_000_000),
            FileVersion::V2 => (1_767_330_000_000, 1_767_600_000_000),
            FileVersion::V3 => (1_775_000_000_000, 1_781_000_000_000),
        };
        self.now = self.rng.range(from, to) as i64;
        let models = if self.v1() { MODELS_V1 } else { MODELS };
        self.model = self.rng.weighted(models);
        self.thinking = *self.rng.weighted(LEVELS);
        self.cwd.clear();
        self.cwd.push_str(self.rng.pick_str(&[
            "/home/dev",
            "/Users/mario",
            "/home/ci",
            "/Users/sam",
        ]));
        self.cwd.push_str(
            self.rng
                .pick_str(&["/projects/", "/workspaces/", "/src/", "/code/"]),
        );
        let project = *self.rng.pick(&[
            "pi-mono",
            "sandcastle",
            "webapp",
            "api-server",
            "notes",
            "infra",
            "game",
            "cli",
        ]);
        self.cwd.push_str(project);

        let mut uuid = String::new();
        self.line.clear();
        self.line.begin_object();
        self.line.key("type").string("session");
        if !self.v1() {
            self.line
                .key("version")
                .uint(u64::from(self.version.number()));
            // UUID v7: 48-bit millisecond timestamp, version 7, variant 10.
            uuid.push_str(&format!(
                "{:08x}-{:04x}-7",
                (self.now >> 16) as u32,
                (self.now & 0xffff) as u32
            ));
        } else {
            // UUID v4.
            text::hex(&mut self.rng, &mut uuid, 8);
            uuid.push('-');
            text::hex(&mut self.rng, &mut uuid, 4);
            uuid.push_str("-4");
        }
        text::hex(&mut self.rng, &mut uuid, 3);
        uuid.push('-');
        uuid.push(char::from(b"89ab"[self.rng.below(4) as usize]));
        text::hex(&mut self.rng, &mut uuid, 3);
        uuid.push('-');
        text::hex(&mut self.rng, &mut uuid, 12);
        self.line.key("id").string(&uuid);
        self.line.key("timestamp").string(&iso(self.now));
        let cwd = std::mem::take(&mut self.cwd);
        self.line.key("cwd").string(&cwd);
        self.cwd = cwd;
        if self.v1() {
            // Legacy header fields of Nov–Dec 2025 files.
            self.line.key("provider").string(self.model.provider);
            self.line.key("modelId").string(self.model.id);
            self.line.key("thinkingLevel").string(self.thinking);
        }
        self.line.end_object();
        self.stats.bytes += self.line.len() as u64 + 1;
        self.stats.max_line = self.line.len() as u64;
        self.line.newline();
        self.out.write_all(self.line.as_bytes())?;
        self.lines = 1;
        if let Limit::Entries(0) = self.limit {
            return Err(Halt::Limit);
        }
        if !self.v1() {
            // A new session starts with the model and the thinking level (`parentId: null`).
            self.now += 10;
            self.write_model_change()?;
            self.write_thinking_change()?;
        }
        Ok(())
    }

    fn write_model_change(&mut self) -> Step {
        let id = self.begin("model_change");
        self.line.key("provider").string(self.model.provider);
        self.line.key("modelId").string(self.model.id);
        self.finish(id, Item::Silent)
    }

    fn write_thinking_change(&mut self) -> Step {
        let id = self.begin("thinking_level_change");
        self.line.key("thinkingLevel").string(self.thinking);
        self.finish(id, Item::Silent)
    }

    fn model_change(&mut self) -> Step {
        self.tick(1_000, 30_000);
        let models = if self.v1() { MODELS_V1 } else { MODELS };
        self.model = self.rng.weighted(models);
        self.write_model_change()
    }

    fn thinking_change(&mut self) -> Step {
        self.tick(500, 20_000);
        self.thinking = *self.rng.weighted(LEVELS);
        self.write_thinking_change()
    }

    // ---- turns --------------------------------------------------------------------------------

    fn turn(&mut self) -> Step {
        let v1 = self.v1();
        if !v1 && self.turns > 2 && self.rng.chance(40) {
            self.branch()?;
        }
        if self.rng.chance(30) {
            self.thinking_change()?;
        }
        if self.rng.chance(8) {
            self.model_change()?;
        }
        if self.rng.chance(40) {
            self.bash_execution()?;
        }
        if !v1 && self.rng.chance(20) {
            self.custom_message()?;
        }
        if !v1 && self.rng.chance(30) {
            self.custom()?;
        }
        self.user_prompt()?;
        let steps = self
            .rng
            .bucket(&[(25, 0, 1), (35, 1, 4), (25, 4, 10), (15, 10, 30)]);
        let mut ended = false;
        for _ in 0..steps {
            let calls = *self.rng.weighted(&[(80, 1usize), (14, 2), (4, 3), (2, 4)]);
            match self.assistant(calls)? {
                Some(calls) => {
                    for call in calls {
                        self.tool_result(call)?;
                    }
                }
                None => {
                    ended = true;
                    break;
                }
            }
        }
        if !ended {
            self.assistant(0)?;
        }
        if !v1 {
            if (!self.named && self.turns == 0 && self.rng.chance(600)) || self.rng.chance(3) {
                self.session_info()?;
            }
            if self.rng.chance(15) {
                self.label()?;
            }
        }
        self.turns += 1;
        self.maybe_compact()
    }

    fn linear_pair(&mut self) -> Step {
        self.tick(2_000, 60_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("user");
        self.line.key("content").begin_array();
        self.line.begin_object();
        self.line.key("type").string("text");
        self.s1.clear();
        let n = self.rng.urange(20, 100);
        text::prose(&mut self.rng, &mut self.s1, n);
        self.line.key("text").string(&self.s1);
        self.line.end_object();
        self.line.end_array();
        self.line.key("timestamp").uint((self.now - 1) as u64);
        self.line.end_object();
        self.finish(id, Item::User)?;

        let started = self.now + 2;
        self.tick(800, 10_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("assistant");
        self.line.key("content").begin_array();
        self.line.begin_object();
        self.line.key("type").string("text");
        self.s1.clear();
        let n = self.rng.urange(20, 200);
        text::prose(&mut self.rng, &mut self.s1, n);
        self.line.key("text").string(&self.s1);
        self.line.end_object();
        self.line.end_array();
        let output = (n / 4) as u64 + 1;
        self.assistant_tail(output, 0, started, "stop");
        self.finish(id, Item::Assistant)
    }

    fn user_prompt(&mut self) -> Step {
        self.tick(4_000, 400_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("user");
        self.line.key("content").begin_array();
        self.line.begin_object();
        self.line.key("type").string("text");
        self.s1.clear();
        let len = self.rng.bucket(&[
            (55, 15, 120),
            (33, 120, 500),
            (10, 500, 1500),
            (2, 1500, 4000),
        ]);
        text::prose(&mut self.rng, &mut self.s1, len as usize);
        self.line.key("text").string(&self.s1);
        self.line.end_object();
        if self.rng.chance(30) {
            self.image()?;
        }
        self.line.end_array();
        self.line.key("timestamp").uint((self.now - 1) as u64);
        self.line.end_object();
        self.finish(id, Item::User)
    }

    /// An image block (a screenshot: a PNG, a few KB to a few tens of KB of base64).
    fn image(&mut self) -> Step {
        self.stats.images += 1;
        self.line.begin_object();
        self.line.key("type").string("image");
        self.s2.clear();
        self.s2.push_str("iVBORw0KGgoAAAANSUhEUgAA");
        let len = self
            .rng
            .bucket(&[(70, 2_000, 12_000), (30, 12_000, 40_000)]);
        text::base64(&mut self.rng, &mut self.s2, len as usize);
        self.line.key("data").string(&self.s2);
        self.line.key("mimeType").string("image/png");
        self.line.end_object();
        Ok(())
    }

    /// An assistant message with `calls` tool calls (0: a final answer). Returns the calls,
    /// or `None` when the response was aborted or failed (the turn ends).
    fn assistant(&mut self, calls: usize) -> Result<Option<Vec<Call>>, Halt> {
        let started = self.now + 2;
        self.tick(1_500, 45_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("assistant");
        self.line.key("content").begin_array();
        let content_start = self.line.len();
        let failure = match self.rng.below(1000) {
            0..=6 => Some("aborted"),
            7..=9 => Some("error"),
            _ => None,
        };
        let openai = self.model.openai();
        let mut out_calls = Vec::new();
        if failure.is_none() || self.rng.chance(300) {
            if self.thinking != "off" && self.rng.chance(if calls == 0 { 850 } else { 650 }) {
                self.thinking_block(openai);
            }
            if calls == 0 || self.rng.chance(300) {
                let len = if calls == 0 {
                    self.rng.bucket(&[
                        (30, 20, 200),
                        (40, 200, 1200),
                        (22, 1200, 4000),
                        (8, 4000, 9000),
                    ])
                } else {
                    self.rng.bucket(&[(70, 20, 200), (30, 200, 700)])
                };
                self.s1.clear();
                text::prose(&mut self.rng, &mut self.s1, len as usize);
                self.line.begin_object();
                self.line.key("type").string("text");
                self.line.key("text").string(&self.s1);
                if openai {
                    self.s2.clear();
                    self.s2.push_str("{\"v\":1,\"id\":\"msg_");
                    text::hex(&mut self.rng, &mut self.s2, 50);
                    self.s2.push_str(if calls == 0 {
                        "\",\"phase\":\"final_answer\"}"
                    } else {
                        "\",\"phase\":\"commentary\"}"
                    });
                    self.line.key("textSignature").string(&self.s2);
                }
                self.line.end_object();
            }
            let calls = if failure.is_some() {
                calls.min(1)
            } else {
                calls
            };
            for _ in 0..calls {
                let call = self.tool_call(openai, failure.is_some());
                out_calls.push(call);
            }
        }
        self.line.end_array();
        let output = (self.line.len() - content_start) as u64 / 4 + 1;
        let stop = match failure {
            Some(f) => f,
            None if calls > 0 => "toolUse",
            None => "stop",
        };
        if failure.is_some() {
            // Usage of a failed request is all zeros.
            self.assistant_tail(0, 0, started, stop);
        } else {
            let context = self.context_tokens() + 9_000;
            self.assistant_tail(output, context, started, stop);
        }
        self.finish(id, Item::Assistant)?;
        Ok(if failure.is_some() {
            None
        } else {
            Some(out_calls)
        })
    }

    fn thinking_block(&mut self, openai: bool) {
        let len = self
            .rng
            .bucket(&[(50, 40, 300), (35, 300, 1200), (15, 1200, 4000)]) as usize;
        self.s1.clear();
        if openai {
            self.s1.push_str("**");
            let n = self.rng.urange(2, 6);
            text::title(&mut self.rng, &mut self.s1, n);
            self.s1.push_str("**\n\n");
        }
        text::prose(&mut self.rng, &mut self.s1, len);
        self.s2.clear();
        if openai {
            // JSON.stringify of the Responses API reasoning item.
            self.s2.push_str("{\"id\":\"rs_");
            text::hex(&mut self.rng, &mut self.s2, 50);
            self.s2.push_str(
                "\",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":",
            );
            let mut escaped = JsonWriter::new();
            escaped.string(&self.s1);
            self.s2.push_str(escaped.as_str());
            self.s2.push_str("}],\"encrypted_content\":\"gAAAAAB");
            let enc = self.rng.range(400, 2000) as usize + len / 2;
            text::base64(&mut self.rng, &mut self.s2, enc - enc % 4);
            self.s2.push_str("\"}");
        } else {
            // Anthropic signatures grow with the thinking text.
            let sig = (300 + len + len / 3 + self.rng.below(200) as usize).min(9_000);
            text::base64(&mut self.rng, &mut self.s2, sig - sig % 4);
        }
        self.line.begin_object();
        self.line.key("type").string("thinking");
        self.line.key("thinking").string(&self.s1);
        self.line.key("thinkingSignature").string(&self.s2);
        self.line.end_object();
    }

    fn tool_call(&mut self, openai: bool, partial: bool) -> Call {
        let tool = *self.rng.weighted(TOOLS);
        let mut id = String::new();
        if openai {
            id.push_str("call_");
            text::base62(&mut self.rng, &mut id, 24);
            id.push_str("|fc_");
            text::hex(&mut self.rng, &mut id, 50);
        } else {
            id.push_str("toolu_01");
            text::base62(&mut self.rng, &mut id, 22);
        }
        let mut path = String::new();
        let image = tool == Tool::Read && self.rng.chance(15);
        if image {
            path.push_str("docs/screenshots/");
            text::hex(&mut self.rng, &mut path, 6);
            path.push_str(".png");
        } else {
            text::path(&mut self.rng, &mut path);
        }
        self.line.begin_object();
        self.line.key("type").string("toolCall");
        self.line.key("id").string(&id);
        self.line.key("name").string(tool.name());
        self.line.key("arguments").begin_object();
        self.s1.clear();
        match tool {
            Tool::Read => {
                self.line.key("path").string(&path);
                if self.rng.chance(200) {
                    self.line.key("offset").uint(self.rng.range(1, 2000));
                    self.line.key("limit").uint(self.rng.range(20, 400));
                }
            }
            Tool::Bash => {
                let c = text::command(&mut self.rng);
                self.line.key("command").string(c);
                if self.rng.chance(150) {
                    self.line
                        .key("timeout")
                        .uint(*self.rng.pick(&[30, 60, 120, 600]));
                }
            }
            Tool::Edit => {
                self.line.key("path").string(&path);
                let old = self.rng.bucket(&[(80, 20, 250), (20, 250, 1200)]) as usize;
                text::code(&mut self.rng, &mut self.s1, old);
                self.line.key("oldText").string(&self.s1);
                self.s1.clear();
                let new = self.rng.bucket(&[(80, 20, 300), (20, 300, 1500)]) as usize;
                text::code(&mut self.rng, &mut self.s1, new);
                self.line.key("newText").string(&self.s1);
            }
            Tool::Write => {
                self.line.key("path").string(&path);
                let len = self.rng.bucket(&[(70, 200, 2500), (30, 2500, 8000)]) as usize;
                text::code(&mut self.rng, &mut self.s1, len);
                self.line.key("content").string(&self.s1);
            }
            Tool::Grep => {
                let n = self.rng.urange(1, 3);
                text::title(&mut self.rng, &mut self.s1, n);
                self.line.key("pattern").string(&self.s1);
                self.line.key("path").string("src");
            }
            Tool::Find => {
                self.line.key("pattern").string("*.ts");
                self.line
                    .key("path")
                    .string(self.rng.pick_str(&["src", "packages", "test"]));
            }
        }
        self.line.end_object();
        if partial {
            // A streaming buffer left behind by an aborted call.
            self.line.key("partialJson").string("{\"path\": \"src/");
        }
        self.line.end_object();
        Call {
            id,
            tool,
            path,
            image,
        }
    }

    /// `api, provider, model, usage, stopReason, timestamp, responseId?/errorMessage?` and the
    /// end of the message object.
    fn assistant_tail(&mut self, output: u64, context: u64, started: i64, stop: &str) {
        let m = self.model;
        self.line.key("api").string(m.api);
        self.line.key("provider").string(m.provider);
        self.line.key("model").string(m.id);
        // Cache: everything already billed is read; what is new is written (Anthropic) or
        // sent uncached (OpenAI).
        let (input, cache_read, cache_write) = if context == 0 {
            (0, 0, 0)
        } else {
            let read = self.cached.min(context);
            let new = context - read;
            self.cached = context + output;
            if m.openai() {
                (new, read, 0)
            } else {
                let input = self.rng.range(1, 12);
                (input, read, new.saturating_sub(input))
            }
        };
        self.line.key("usage").begin_object();
        self.line.key("input").uint(input);
        self.line.key("output").uint(output);
        self.line.key("cacheRead").uint(cache_read);
        self.line.key("cacheWrite").uint(cache_write);
        if !self.v1() {
            self.line
                .key("totalTokens")
                .uint(input + output + cache_read + cache_write);
        }
        // pi-ai: cost = (price / 1e6) * tokens, total = the sum in this order.
        let costs = [input, output, cache_read, cache_write]
            .iter()
            .zip(m.price)
            .map(|(&t, p)| p / 1_000_000.0 * t as f64)
            .collect::<Vec<f64>>();
        self.line.key("cost").begin_object();
        self.line.key("input").number(costs[0]);
        self.line.key("output").number(costs[1]);
        self.line.key("cacheRead").number(costs[2]);
        self.line.key("cacheWrite").number(costs[3]);
        self.line
            .key("total")
            .number(costs[0] + costs[1] + costs[2] + costs[3]);
        self.line.end_object();
        self.line.end_object();
        self.line.key("stopReason").string(stop);
        self.line.key("timestamp").uint(started as u64);
        match stop {
            "aborted" => {
                self.line.key("errorMessage").string("Request was aborted");
            }
            "error" => {
                let message = if m.openai() {
                    "Connection error."
                } else {
                    "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
                };
                self.line.key("errorMessage").string(message);
            }
            _ if self.version == FileVersion::V3 => {
                let mut rid = String::new();
                if m.openai() {
                    rid.push_str("resp_");
                    text::hex(&mut self.rng, &mut rid, 50);
                } else {
                    rid.push_str("msg_01");
                    text::base62(&mut self.rng, &mut rid, 22);
                }
                self.line.key("responseId").string(&rid);
            }
            _ => {}
        }
        self.line.end_object();
    }

    fn tool_result(&mut self, call: Call) -> Step {
        self.stats.tool_results += 1;
        let took = self.tick(15, 20_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("toolResult");
        self.line.key("toolCallId").string(&call.id);
        self.line.key("toolName").string(call.tool.name());
        self.line.key("content").begin_array();
        self.s1.clear();
        // details: written after content; kept in s2 as a tiny plan.
        let mut is_error = false;
        enum Details {
            None,
            Empty,
            Diff,
            Truncated {
                total: u64,
                full_path: Option<String>,
            },
        }
        let mut details = Details::None;
        match call.tool {
            Tool::Read if call.image => {
                self.s1.push_str("Read image file [image/png]");
            }
            Tool::Read => {
                let len = self.rng.bucket(&[
                    (45, 100, 1500),
                    (35, 1500, 5000),
                    (15, 5000, 15_000),
                    (5, 15_000, 52_000),
                ]);
                text::code(&mut self.rng, &mut self.s1, len as usize);
                if len >= 50_000 {
                    let total = len + self.rng.range(1_000, 80_000);
                    details = Details::Truncated {
                        total,
                        full_path: None,
                    };
                }
            }
            Tool::Bash => {
                let len = self.rng.bucket(&[
                    (55, 0, 300),
                    (30, 300, 2000),
                    (12, 2000, 8000),
                    (3, 8000, 52_000),
                ]);
                text::output(&mut self.rng, &mut self.s1, len as usize);
                if len >= 30_000 {
                    let mut p = String::from("/tmp/pi-bash-");
                    text::hex(&mut self.rng, &mut p, 16);
                    p.push_str(".log");
                    details = Details::Truncated {
                        total: len * 3,
                        full_path: Some(p),
                    };
                } else if self.rng.chance(350) {
                    details = Details::Empty;
                }
                if self.rng.chance(80) {
                    is_error = true;
                    self.s1.push_str("\n\nCommand exited with code 1");
                }
            }
            Tool::Edit => {
                if self.rng.chance(40) {
                    is_error = true;
                    self.s1.push_str("Could not find the exact text in ");
                    self.s1.push_str(&call.path);
                    self.s1.push_str(
                        ". The old text must match exactly including all whitespace and newlines.",
                    );
                } else {
                    self.s1.push_str("Successfully replaced text in ");
                    self.s1.push_str(&call.path);
                    self.s1.push('.');
                    details = Details::Diff;
                }
            }
            Tool::Write => {
                self.s1.push_str(&format!(
                    "Successfully wrote {} bytes to {}",
                    self.rng.range(200, 12_000),
                    call.path
                ));
            }
            Tool::Grep | Tool::Find => {
                let len = self.rng.bucket(&[(60, 0, 400), (40, 400, 6000)]);
                text::output(&mut self.rng, &mut self.s1, len as usize);
            }
        }
        self.line.begin_object();
        self.line.key("type").string("text");
        self.line.key("text").string(&self.s1);
        self.line.end_object();
        if call.image {
            self.image()?;
        }
        self.line.end_array();
        match details {
            Details::None => {}
            Details::Empty => {
                self.line.key("details").begin_object();
                self.line.end_object();
            }
            Details::Diff => {
                self.s2.clear();
                let len = self.rng.bucket(&[(70, 150, 800), (30, 800, 3000)]);
                text::diff(&mut self.rng, &mut self.s2, len as usize);
                self.line.key("details").begin_object();
                self.line.key("diff").string(&self.s2);
                self.line.end_object();
            }
            Details::Truncated { total, full_path } => {
                // pi's truncation result, which repeats the (truncated) content.
                let lines = self.s1.bytes().filter(|&b| b == b'\n').count() as u64;
                self.line.key("details").begin_object();
                self.line.key("truncation").begin_object();
                self.line.key("content").string(&self.s1);
                self.line.key("truncated").bool(true);
                self.line.key("truncatedBy").string("bytes");
                self.line
                    .key("totalLines")
                    .uint(lines * total / self.s1.len() as u64 + 1);
                self.line.key("totalBytes").uint(total);
                self.line.key("outputLines").uint(lines);
                self.line.key("outputBytes").uint(self.s1.len() as u64);
                self.line.key("lastLinePartial").bool(false);
                self.line.key("firstLineExceedsLimit").bool(false);
                self.line.end_object();
                if let Some(p) = full_path {
                    self.line.key("fullOutputPath").string(&p);
                }
                self.line.end_object();
            }
        }
        self.line.key("isError").bool(is_error);
        self.line.key("timestamp").uint(took as u64);
        self.line.end_object();
        self.now += 2;
        self.finish(id, Item::ToolResult)
    }

    /// A `!`/`!!` command the user ran.
    fn bash_execution(&mut self) -> Step {
        self.tick(3_000, 120_000);
        let id = self.begin("message");
        self.line.key("message").begin_object();
        self.line.key("role").string("bashExecution");
        let c = text::command(&mut self.rng);
        self.line.key("command").string(c);
        self.s1.clear();
        let len = self
            .rng
            .bucket(&[(50, 0, 300), (35, 300, 3000), (15, 3000, 40_000)]);
        text::output(&mut self.rng, &mut self.s1, len as usize);
        self.line.key("output").string(&self.s1);
        let cancelled = self.rng.chance(30);
        if !cancelled {
            self.line
                .key("exitCode")
                .uint(if self.rng.chance(850) { 0 } else { 1 });
        }
        self.line.key("cancelled").bool(cancelled);
        let truncated = len >= 30_000;
        self.line.key("truncated").bool(truncated);
        if truncated {
            self.s2.clear();
            self.s2.push_str("/tmp/pi-bash-");
            text::hex(&mut self.rng, &mut self.s2, 16);
            self.s2.push_str(".log");
            self.line.key("fullOutputPath").string(&self.s2);
        }
        self.line.key("timestamp").uint(self.now as u64);
        if self.rng.chance(200) {
            self.line.key("excludeFromContext").bool(true);
        }
        self.line.end_object();
        self.finish(id, Item::OtherMessage)
    }

    /// An extension message: a `custom_message` entry (v3) or a `hookMessage` message (v2).
    fn custom_message(&mut self) -> Step {
        self.tick(100, 5_000);
        let custom_type = *self
            .rng
            .pick(&["plan-mode", "todo-reminder", "git-status", "review"]);
        self.s1.clear();
        let len = self.rng.bucket(&[(70, 60, 600), (30, 600, 2500)]);
        text::prose(&mut self.rng, &mut self.s1, len as usize);
        let display = self.rng.chance(700);
        let with_details = self.rng.chance(400);
        if self.version == FileVersion::V3 {
            let id = self.begin_bare("custom_message");
            self.line.key("customType").string(custom_type);
            self.line.key("content").string(&self.s1);
            self.line.key("display").bool(display);
            if with_details {
                self.line.key("details").begin_object();
                self.line.key("step").uint(self.rng.range(1, 12));
                self.line.key("auto").bool(self.rng.chance(500));
                self.line.end_object();
            }
            self.base_fields(id);
            self.finish(id, Item::OtherMessage)
        } else {
            let id = self.begin("message");
            self.line.key("message").begin_object();
            self.line.key("role").string("hookMessage");
            self.line.key("customType").string(custom_type);
            self.line.key("content").string(&self.s1);
            self.line.key("display").bool(display);
            if with_details {
                self.line.key("details").begin_object();
                self.line.key("step").uint(self.rng.range(1, 12));
                self.line.end_object();
            }
            self.line.key("timestamp").uint(self.now as u64);
            self.line.end_object();
            self.finish(id, Item::OtherMessage)
        }
    }

    /// Extension state (`appendCustomEntry`): never in the context.
    fn custom(&mut self) -> Step {
        self.tick(10, 2_000);
        let id = self.begin_bare("custom");
        let kind = self.rng.below(3);
        self.line
            .key("customType")
            .string(["todo-state", "plan-mode-state", "permission-gate"][kind as usize]);
        self.line.key("data").begin_object();
        match kind {
            0 => {
                self.line.key("todos").begin_array();
                for i in 0..self.rng.range(1, 12) {
                    self.line.begin_object();
                    self.line.key("id").uint(i + 1);
                    self.s1.clear();
                    let n = self.rng.urange(3, 10);
                    text::title(&mut self.rng, &mut self.s1, n);
                    self.line.key("text").string(&self.s1);
                    self.line.key("done").bool(self.rng.chance(500));
                    self.line.end_object();
                }
                self.line.end_array();
            }
            1 => {
                self.line.key("enabled").bool(self.rng.chance(500));
                self.line.key("plan");
                self.s1.clear();
                let n = self.rng.urange(100, 1500);
                text::prose(&mut self.rng, &mut self.s1, n);
                self.line.string(&self.s1);
            }
            _ => {
                self.line.key("allowed").begin_array();
                for _ in 0..self.rng.range(0, 5) {
                    self.line.string(text::command(&mut self.rng));
                }
                self.line.end_array();
            }
        }
        self.line.end_object();
        self.base_fields(id);
        self.finish(id, Item::Silent)
    }

    fn session_info(&mut self) -> Step {
        self.tick(500, 30_000);
        self.named = true;
        let id = self.begin("session_info");
        self.s1.clear();
        let n = self.rng.urange(2, 7);
        text::title(&mut self.rng, &mut self.s1, n);
        self.line.key("name").string(self.s1.trim());
        self.finish(id, Item::Silent)
    }

    fn label(&mut self) -> Step {
        self.tick(500, 30_000);
        let target = self.path[self.rng.urange(0, self.path.len())].id;
        let id = self.begin("label");
        self.line.key("targetId").string(&format!("{target:08x}"));
        if !self.rng.chance(150) {
            let label = *self.rng.pick(&[
                "checkpoint",
                "wip",
                "bug repro",
                "good state",
                "before refactor",
                "✅ tests pass",
                "ask later",
            ]);
            self.line.key("label").string(label);
        }
        self.stats.labels += 1;
        self.finish(id, Item::Silent)
    }

    /// `/tree` back to an earlier user prompt: the new leaf is the prompt's parent (the prompt
    /// text goes back to the editor), optionally with a summary of the abandoned branch.
    fn branch(&mut self) -> Step {
        let lo = self.compaction_at.map_or(3, |c| c + 2);
        let hi = self.path.len();
        if hi <= lo {
            return Ok(());
        }
        let window = lo.max(hi.saturating_sub(80));
        let candidates: Vec<usize> = (window..hi)
            .filter(|&i| self.path[i].item == Item::User)
            .collect();
        if candidates.is_empty() {
            return Ok(());
        }
        let target = *self.rng.pick(&candidates);
        self.path.truncate(target);
        self.stats.branches += 1;
        // What was cached belongs to the abandoned branch.
        self.cached = self.context_tokens() / 2;
        if self.rng.chance(700) {
            self.tick(5_000, 60_000);
            let from = self.path.last().map(|p| p.id).expect("target > 0");
            let id = self.begin("branch_summary");
            self.line.key("fromId").string(&format!("{from:08x}"));
            self.summary(300, 2500);
            if self.version == FileVersion::V3 {
                self.files_details();
            }
            self.stats.branch_summaries += 1;
            self.finish(id, Item::BranchSummary)?;
        }
        Ok(())
    }

    /// `"summary":"…"`: a structured Markdown summary, as pi's summariser writes.
    fn summary(&mut self, lo: u64, hi: u64) {
        let len = self.rng.range(lo, hi) as usize;
        self.s1.clear();
        let end = len;
        for heading in [
            "## Goal\n",
            "## Progress\n### Done\n",
            "## Key Decisions\n",
            "## Next Steps\n",
        ] {
            self.s1.push_str(heading);
            let part = (end / 4).max(40);
            text::prose(&mut self.rng, &mut self.s1, part);
            self.s1.push_str("\n\n");
        }
        self.s1.push_str("<read-files>\n");
        for _ in 0..self.rng.range(1, 6) {
            text::path(&mut self.rng, &mut self.s1);
            self.s1.push('\n');
        }
        self.s1.push_str("</read-files>");
        self.line.key("summary").string(&self.s1);
    }

    fn files_details(&mut self) {
        self.line.key("details").begin_object();
        for key in ["readFiles", "modifiedFiles"] {
            self.line.key(key).begin_array();
            for _ in 0..self.rng.range(0, 8) {
                self.s2.clear();
                self.s2.push_str(&self.cwd);
                self.s2.push('/');
                text::path(&mut self.rng, &mut self.s2);
                self.line.string(&self.s2);
            }
            self.line.end_array();
        }
        self.line.end_object();
    }

    /// Auto-compaction when the context is nearly full: the summary replaces everything
    /// before a cut point about `KEEP_TOKENS` back.
    fn maybe_compact(&mut self) -> Step {
        let tokens = self.context_tokens();
        if tokens < COMPACT_TOKENS {
            return Ok(());
        }
        let lo = self.compaction_at.map_or(0, |c| c + 1);
        let last = self.path.len() - 1;
        if self.path[last].item == Item::Compaction || last <= lo {
            return Ok(());
        }
        let end_cum = self.path[last].cum_tokens;
        let cum_before = |p: &[PathItem], i: usize| if i == 0 { 0 } else { p[i - 1].cum_tokens };
        // The latest entry that keeps at least KEEP_TOKENS…
        let mut j = last;
        while j > lo && end_cum - cum_before(&self.path, j) < KEEP_TOKENS {
            j -= 1;
        }
        // …moved to a valid cut point (forward first, else backward).
        let cut = (j..=last)
            .find(|&i| self.path[i].item.is_cut_point())
            .or_else(|| (lo..j).rev().find(|&i| self.path[i].item.is_cut_point()));
        let Some(cut) = cut else {
            return Ok(());
        };
        let first_kept_id = self.path[cut].id;
        let first_kept_index = self.path[cut].file_index;
        self.tick(20_000, 90_000);
        let id = self.begin("compaction");
        self.summary(1_500, 6_000);
        let summary_tokens = self.s1.len() as u64 / 4;
        if self.v1() {
            self.line
                .key("firstKeptEntryIndex")
                .uint(u64::from(first_kept_index));
        } else {
            self.line
                .key("firstKeptEntryId")
                .string(&format!("{first_kept_id:08x}"));
        }
        self.line.key("tokensBefore").uint(tokens + 9_000);
        if self.version == FileVersion::V3 {
            self.files_details();
        }
        self.stats.compactions += 1;
        self.ctx_base = cum_before(&self.path, cut);
        self.ctx_extra = summary_tokens;
        self.cached = 0;
        self.compaction_at = Some(self.path.len());
        self.finish(id, Item::Compaction)
    }
}

#[cfg(test)]
mod tests;
