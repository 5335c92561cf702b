//! The placeholder a secret becomes: `[REDACTED:rule:h8]`, where `h8` is the first eight hex
//! digits of HMAC-SHA-256 of the secret under a key. The same secret gives the same
//! placeholder everywhere the key is the same (correlation survives, the value does not); a
//! key random for each run (the default) means placeholders of two runs cannot be compared,
//! and a key kept in a file (`Key::from_bytes`) means they can.

use hmac::{KeyInit, Mac};

/// The key placeholders are made with.
#[derive(Clone)]
pub struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

/// Why a key could not be made.
#[derive(Debug)]
pub struct KeyError(pub String);

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

/// The fewest bytes a key file must hold.
pub const MIN_KEY_BYTES: usize = 16;

impl Key {
    /// A new random key (the operating system's random source).
    pub fn random() -> Result<Key, KeyError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| KeyError(format!("no random key: {e}")))?;
        Ok(Key(key))
    }

    /// A key from a key file's bytes (at least 16; any length, hashed to 32 bytes), so that
    /// runs that share the file give the same placeholders.
    pub fn from_bytes(bytes: &[u8]) -> Result<Key, KeyError> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(KeyError(format!(
                "a key needs at least {MIN_KEY_BYTES} bytes, this one has {} (make one with \
                 `head -c 32 /dev/urandom > FILE`)",
                bytes.len()
            )));
        }
        use sha2::Digest;
        Ok(Key(sha2::Sha256::digest(bytes).into()))
    }

    /// `[REDACTED:rule:h8]` for `secret` found by `rule`.
    pub fn placeholder(&self, rule: &str, secret: &[u8]) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(secret);
        let digest = mac.finalize().into_bytes();
        let mut out = format!("[REDACTED:{rule}:");
        for b in &digest[..4] {
            out.push_str(&format!("{b:02x}"));
        }
        out.push(']');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_stable_under_one_key_and_differ_under_another() {
        let key = Key::from_bytes(b"0123456789abcdef0123").unwrap();
        let a = key.placeholder("github-pat", b"ghp_secret");
        assert_eq!(a, key.placeholder("github-pat", b"ghp_secret"));
        assert_ne!(a, key.placeholder("github-pat", b"ghp_other"));
        assert!(
            a.starts_with("[REDACTED:github-pat:") && a.len() == "[REDACTED:github-pat:]".len() + 8
        );
        let other = Key::from_bytes(b"fedcba9876543210fedc").unwrap();
        assert_ne!(a, other.placeholder("github-pat", b"ghp_secret"));
        assert_ne!(
            Key::random().unwrap().placeholder("r", b"s"),
            Key::random().unwrap().placeholder("r", b"s")
        );
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(Key::from_bytes(b"short").is_err());
    }
}
