//! [`ServerKey`]: the server's secret key and what it authenticates. HMAC-SHA256 (RFC 2104)
//! over a domain name and length-prefixed parts, so a seal made for one purpose (a hold's
//! stored request, say) never verifies for another. The key's bytes come from the server's
//! state directory (`codespace-server`), generated once; this module only computes.

use sha2::{Digest, Sha256};

/// The length of a key, in bytes.
pub const KEY_BYTES: usize = 32;

/// The text form of a seal: `hmac-sha256:` then 64 lowercase hex digits.
const PREFIX: &str = "hmac-sha256:";

const BLOCK: usize = 64;

/// The server's secret key. Its bytes are never printed.
#[derive(Clone)]
pub struct ServerKey([u8; KEY_BYTES]);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerKey(..)")
    }
}

impl ServerKey {
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> ServerKey {
        ServerKey(bytes)
    }

    /// The seal of `parts` under `domain`: `hmac-sha256:<hex>`.
    pub fn seal(&self, domain: &str, parts: &[&[u8]]) -> String {
        format!("{PREFIX}{}", hex::encode(self.mac(domain, parts)))
    }

    /// Whether `seal` is the seal of `parts` under `domain`, compared in constant time.
    pub fn verify(&self, domain: &str, parts: &[&[u8]], seal: &str) -> bool {
        let Some(given) = seal.strip_prefix(PREFIX).and_then(|h| hex::decode(h).ok()) else {
            return false;
        };
        let want = self.mac(domain, parts);
        given.len() == want.len()
            && given.iter().zip(want.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    fn mac(&self, domain: &str, parts: &[&[u8]]) -> [u8; 32] {
        let mut message = Vec::new();
        for part in std::iter::once(domain.as_bytes()).chain(parts.iter().copied()) {
            message.extend_from_slice(&(part.len() as u64).to_be_bytes());
            message.extend_from_slice(part);
        }
        hmac_sha256(&self.0, &message)
    }
}

/// HMAC-SHA256 of `message` under `key` (a key of at most one block, as here).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

#[cfg(test)]
mod tests;
