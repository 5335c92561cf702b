//! The stats cache's unit tests: its format read back, kept and refused.

use super::*;

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pi-session-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_range_outside_a_kept_file_is_answered_from_the_index_alone() {
    let dir = scratch("stats-cache-index");
    let file = dir.join("stats.bin");
    let session = dir.join("s.jsonl");
    std::fs::write(
        &session,
        concat!(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2020-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2020-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":5,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"stop","timestamp":1577836801000}}"#,
            "\n"
        ),
    )
    .unwrap();
    let (pi, target) = (PiVersion::V1_5, Target::File(session.clone()));
    let counted = Counted::read_target(&target, pi, None).unwrap();
    let entry = encode(&counted, None).unwrap();
    assert_eq!(
        entry.times,
        Times {
            oldest: 1577836801000.0,
            newest: 1577836801000.0
        }
    );
    let key = cache::key(&session).unwrap();
    let stamp = Stamp::of_file(&session).unwrap();
    StatsCache::at(Some(file.clone()), &[]).save(vec![Keep::New(key, stamp, entry)]);
    let since_2021 = Some(1609459200000.0)..None;
    let none = LedgerCache::none();

    // Intact: taken from the cache either way.
    let cache = StatsCache::at(Some(file.clone()), &[]);
    let read = cache.read(&target, pi, None, since_2021.clone(), &none);
    assert!(read.result.is_none() && matches!(read.keep, Keep::Old(0)));
    let read = cache.read(&target, pi, None, None..None, &none);
    let total = |read: &Read| match &read.result {
        Some(Ok(c)) => c.facts.pi_stats().usage.cost,
        _ => f64::NAN,
    };
    assert_eq!(total(&read), 0.5);
    assert!(matches!(read.keep, Keep::Old(0)));

    // The entry's last byte changed: the index still checks out.
    let mut bytes = std::fs::read(&file).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let cache = StatsCache::at(Some(file.clone()), &[]);
    assert_eq!(cache.slots.len(), 1, "the index checks out");
    let read = cache.read(&target, pi, None, since_2021, &none);
    assert!(read.result.is_none(), "answered from the index");
    assert!(matches!(read.keep, Keep::Old(0)));
    let read = cache.read(&target, pi, None, None..None, &none);
    assert_eq!(total(&read), 0.5, "the file read whole");
    // Just written (racy): nothing new to keep, and the bad entry is not kept.
    assert!(matches!(read.keep, Keep::Nothing));

    // A byte of the index changed (the key's last): the whole cache is ignored.
    let key_end = header_bytes().len() + 8 + 8 + session.as_os_str().len();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[key_end - 1] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let cache = StatsCache::at(Some(file.clone()), &[]);
    assert_eq!(
        cache.slots.len(),
        0,
        "an index that does not check out is ignored"
    );
    assert!(cache.data.is_none());
    // And one cut short by a byte: the entries are not all there.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[key_end - 1] ^= 1;
    bytes.pop();
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(StatsCache::at(Some(file.clone()), &[]).slots.len(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cache file truncated by another program while a run reads it through its mapping:
/// the run finds it out (`intact`), and writes nothing made from what it read.
#[test]
fn a_cache_file_truncated_while_mapped_is_not_trusted_or_rewritten() {
    let dir = scratch("stats-cache");
    let file = dir.join("stats.bin");
    let session = dir.join("s.jsonl");
    std::fs::write(&session, "{}\n").unwrap();
    let stamp = Stamp::of_file(&session).unwrap();
    let key = session.to_str().unwrap().to_owned();
    // An entry larger than what `Input` reads into memory, so that the file is mapped.
    let big = vec![7u8; (pi_session_fs::input::READ_LIMIT as usize) + (1 << 20)];
    let times = Times {
        oldest: 0.0,
        newest: 0.0,
    };
    let big = Entry { bytes: big, times };
    StatsCache::at(Some(file.clone()), &[]).save(vec![Keep::New(key.clone(), stamp, big)]);
    let cache = StatsCache::at(Some(file.clone()), &[]);
    assert!(cache.data.as_ref().is_some_and(Input::is_mapped), "mapped");
    assert_eq!(cache.slots.len(), 1, "the entry checks out");
    assert!(cache.intact());

    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let entry = cache
        .slots
        .find(cache.bytes(), &key)
        .unwrap()
        .1
        .entry
        .clone();
    // Read past the new end: zeros, not the 7s that were there, and no fault.
    assert_eq!(cache.bytes()[entry.end - 1], 0);
    assert!(!cache.intact());
    // Something new to keep, so that a save that trusted the file would write one.
    let other = format!("{key}.new");
    let small = Entry {
        bytes: vec![1],
        times,
    };
    cache.save(vec![Keep::Old(0), Keep::New(other, stamp, small)]);
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        len / 2,
        "not rewritten"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
