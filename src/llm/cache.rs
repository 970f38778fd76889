//! On-disk cache of summarizer answers, so reruns and sweeps do not pay twice
//! (DESIGN.md §5).
//!
//! One file per request under `<cache_dir>/llm/v1/<2 hex>/<64 hex>.json`. The key is
//! the blake3 hash of (API kind, endpoint without credentials, model,
//! [`PROMPT_VERSION`], exact request body); the body already holds the model,
//! prompts, transcript, output limit and temperature, so any change to what would
//! be sent is a different entry. The API key is never part of the key or the file.
//! Each request of a multi-stage summarization is cached on its own, so a rerun
//! after a partial failure resumes where it stopped.
//!
//! Writes are atomic (`output::fsutil::atomic_write`): concurrent runs sharing a
//! cache directory can only ever see whole entries. Unreadable or corrupt entries
//! are misses.

use super::config::ApiKind;
use super::prompt::PROMPT_VERSION;
use crate::model::Usage;
use crate::output::fsutil::atomic_write;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped when the layout or the entry format changes.
const LAYOUT: &str = "v1";

/// What is stored per request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub text: String,
    pub usage: Usage,
    pub stop_reason: Option<String>,
    /// For people reading the cache; not used on lookup.
    pub model: String,
    pub prompt_version: String,
}

#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(root: &Path) -> Cache {
        Cache { dir: root.join("llm").join(LAYOUT) }
    }

    /// The cache key of one request.
    pub fn key(api: ApiKind, endpoint: &str, model: &str, body: &str) -> String {
        let mut h = blake3::Hasher::new();
        for part in [api.name(), endpoint, model, PROMPT_VERSION] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(body.as_bytes());
        h.finalize().to_hex().to_string()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2.min(key.len())]).join(format!("{key}.json"))
    }

    pub fn get(&self, key: &str) -> Option<Entry> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn put(&self, key: &str, entry: &Entry) -> std::io::Result<()> {
        let path = self.path(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let bytes = serde_json::to_vec_pretty(entry).map_err(std::io::Error::other)?;
        atomic_write(&path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UsageProvenance;

    #[test]
    fn roundtrip_and_key_sensitivity() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path());
        let k = Cache::key(ApiKind::OpenAi, "http://h/v1/chat/completions", "m", "{}");
        assert_eq!(k.len(), 64);
        assert_ne!(k, Cache::key(ApiKind::Anthropic, "http://h/v1/chat/completions", "m", "{}"));
        assert_ne!(k, Cache::key(ApiKind::OpenAi, "http://h2/v1/chat/completions", "m", "{}"));
        assert_ne!(k, Cache::key(ApiKind::OpenAi, "http://h/v1/chat/completions", "m2", "{}"));
        assert_ne!(k, Cache::key(ApiKind::OpenAi, "http://h/v1/chat/completions", "m", "{ }"));
        assert!(c.get(&k).is_none());
        let e = Entry {
            text: "sum".into(),
            usage: Usage {
                uncached_input: 1,
                cache_read: 0,
                cache_write: 0,
                output: 2,
                reasoning: 0,
                provenance: UsageProvenance::OpenAi,
            },
            stop_reason: Some("stop".into()),
            model: "m".into(),
            prompt_version: PROMPT_VERSION.into(),
        };
        c.put(&k, &e).unwrap();
        assert_eq!(c.get(&k), Some(e));
        std::fs::write(c.path(&k), b"{corrupt").unwrap();
        assert!(c.get(&k).is_none());
    }
}
