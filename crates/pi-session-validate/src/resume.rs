//! Whether pi resumes the conversation the file holds: the context pi builds when it opens the
//! file (from its leaf, the file's last entry) against the context of the file's own last entry
//! with an id (what its writer appended last). They differ when the last line is an entry
//! without an id (pi's leaf is then `undefined` and the context empty), when the last entry is
//! not an object, or when shared ids or broken parents send pi down another path.

use crate::{Code, Diagnostic, Options, PiEffect};
use pi_session_format::context::build_context;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::{Key, Session};
use pi_session_format::tree::{Index, Leaf};

/// The codes after which pi's leaf or path can differ from the file's own.
const SUSPECT: [Code; 7] = [
    Code::NonObjectLine,
    Code::IdMissing,
    Code::DuplicateId,
    Code::ParentIdMissing,
    Code::DanglingParent,
    Code::ParentCycle,
    Code::SelfParent,
];

/// The `conversation-not-resumed` diagnostic when pi, opening the file, does not resume the
/// conversation its last entry ends; `None` when it does, or when pi does not open the file
/// at all (other diagnostics say so).
pub(crate) fn check(
    bytes: &[u8],
    options: &Options<'_>,
    diagnostics: &[Diagnostic],
) -> Option<Diagnostic> {
    let pi = options.pi;
    if !diagnostics.iter().any(|d| SUSPECT.contains(&d.code))
        || diagnostics.iter().any(|d| d.pi >= PiEffect::Truncated)
    {
        return None;
    }
    let mut ids = SequentialIds::default();
    let mut loader = Session::loader(pi).dialect(options.dialect).ids(&mut ids);
    // Read in small copies where the caller can (a mapped file's pages then stay out, even
    // where the page cache holds them in large folios, which letting go behind does not
    // undo), else let go behind.
    if let Some(crate::Reading(read_at)) = options.read_at {
        loader = loader.reading(read_at);
    } else if let Some(crate::Release(release)) = options.release {
        loader = loader.releasing(release);
    }
    let session = loader.load(bytes).ok()?;
    let index = Index::build(&session);
    let own = session
        .entry_records()
        .filter_map(|r| match &r.id {
            Key::String(id) => Some((r.line, String::from_utf8_lossy(id).into_owned())),
            _ => None,
        })
        .last()?;
    let own_leaf = Leaf::Id(own.1.clone());
    // The same entry to start from is the same context (not built twice and compared: for a
    // large session, two copies of the conversation).
    if index.leaf_record(&session, &Leaf::Current) == index.leaf_record(&session, &own_leaf) {
        return None;
    }
    let resumed = build_context(&session, &index, &Leaf::Current, pi).ok()?;
    let meant = build_context(&session, &index, &own_leaf, pi).ok()?;
    let text =
        |c: &pi_session_format::Context<'_>| pi_session_format::json::to_string(&c.to_json());
    if text(&resumed) == text(&meant) {
        return None;
    }
    Some(Diagnostic::new(
        Code::ConversationNotResumed,
        None,
        format!(
            "pi resumes a conversation of {} message{}, but the file's last entry with an id (line {}, {:?}) ends one of {}: the rest is not sent to the model",
            resumed.messages.len(),
            if resumed.messages.len() == 1 { "" } else { "s" },
            own.0,
            own.1,
            meant.messages.len()
        ),
    ))
}
