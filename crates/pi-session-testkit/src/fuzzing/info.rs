//! The `info` target: the streamed listing entry ([`pi_session_format::info::write_session_info`]) on
//! any bytes or on a generated session ([`SessionSpec`]), with pieces of every size, equals
//! the former whole-file implementation ([`pi_session_format::info::oracle`]) byte for byte, never
//! panics, and writes at most a fixed multiple of the input.

use super::{PIS, SessionSpec};
use arbitrary::{Arbitrary, Unstructured};
use pi_session_format::info::{self, oracle};
use pi_session_format::json;

/// The piece sizes the first byte of the input chooses from.
const PIECES: [usize; 8] = [1, 2, 3, 7, 64, 4096, 65536, 1 << 20];

/// The `--mtime` given to both implementations.
const MTIME: f64 = 946_684_800_000.0;

/// The first byte: bit 0 chooses raw bytes (0) or a generated session (1) from the rest,
/// bits 1–3 the piece size. Then [`check_info`].
pub fn info(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let piece = PIECES[usize::from(mode >> 1) % PIECES.len()];
    if mode & 1 == 0 {
        check_info(rest, piece);
    } else if let Ok(spec) = SessionSpec::arbitrary_take_rest(Unstructured::new(rest)) {
        check_info(spec.to_jsonl().as_bytes(), piece);
    }
}

/// The streamed entry of `bytes`, read in pieces of `piece` bytes, equals the whole-file
/// one with both pi versions' rules, and is at most 20 times the input plus 256 bytes (a
/// text can grow: `{}` in a text array is `[object Object]`, an invalid byte U+FFFD).
pub fn check_info(bytes: &[u8], piece: usize) {
    for pi in PIS {
        let got = info::write_with_piece(bytes, piece, MTIME, pi);
        let want = oracle::session_info(bytes, MTIME, pi)
            .map_or_else(|| b"null".to_vec(), |v| json::to_string(&v).into_bytes());
        assert!(
            got == want,
            "{pi:?}, pieces of {piece}: streamed\n{}\nwhole file\n{}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        assert!(
            got.len() <= 20 * bytes.len() + 256,
            "{pi:?}: {} bytes of output for {} of input",
            got.len(),
            bytes.len()
        );
    }
}
