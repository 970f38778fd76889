//! Logs kept compressed (`.zst`, `.zstd`: the rollouts Codex archives, the
//! sessions pi-based agents store that way): read as the file they were, under
//! that name, so every reader's name rules still apply.

use ruzstd::decoding::StreamingDecoder;
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Most bytes one compressed log may expand to: a small hostile file must not
/// take the machine's memory.
pub const MAX_DECOMPRESSED: usize = 2 << 30;

const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Whether `data` starts with a Zstandard frame.
pub fn is_zstd(data: &[u8]) -> bool {
    data.starts_with(&MAGIC)
}

/// A file name without `.zst` or `.zstd`, if it has one.
pub fn strip_suffix(name: &str) -> Option<&str> {
    name.strip_suffix(".zst").or_else(|| name.strip_suffix(".zstd"))
}

/// The name a compressed log had before it was compressed: its path without
/// `.zst` or `.zstd`.
pub fn inner_path(path: &Path) -> Option<PathBuf> {
    let inner = strip_suffix(path.file_name()?.to_str()?)?;
    (!inner.is_empty()).then(|| path.with_file_name(inner))
}

/// Every frame of `data`, decompressed and concatenated; skippable frames
/// (a seekable archive's index) are passed over. At most `cap` bytes.
pub fn decompress(data: &[u8], cap: usize) -> Result<Vec<u8>, String> {
    // One byte past the cap tells a file that fills it from one that overflows it.
    let (out, read) = decode(data, cap.saturating_add(1));
    read?;
    if out.len() > cap {
        return Err(format!("decompresses to more than {} MiB", cap >> 20));
    }
    Ok(out)
}

/// The first `cap` bytes `data` decompresses to, or fewer: as many as its
/// frames give before they end, break off (a file's head, cut mid-frame) or
/// turn out bad. For a look at a log's first records, never for reading it.
pub fn decompress_head(data: &[u8], cap: usize) -> Vec<u8> {
    decode(data, cap).0
}

/// The frames of `data` decoded until they end or `limit` bytes are out,
/// and why decoding stopped early, if it did (what was decoded before the
/// error is kept).
fn decode(data: &[u8], limit: usize) -> (Vec<u8>, Result<(), String>) {
    let mut src = data;
    let mut out = Vec::new();
    while !src.is_empty() && out.len() < limit {
        match StreamingDecoder::new(&mut src) {
            Ok(decoder) => {
                let room = (limit - out.len()) as u64;
                if let Err(e) = decoder.take(room).read_to_end(&mut out) {
                    return (out, Err(format!("bad zstd data: {e}")));
                }
            }
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                match src.get(length as usize..) {
                    Some(rest) => src = rest,
                    None => return (out, Err("a skippable zstd frame runs past the end".to_string())),
                }
            }
            Err(e) => return (out, Err(format!("bad zstd data: {e}"))),
        }
    }
    (out, Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};

    fn zst(data: &[u8]) -> Vec<u8> {
        compress_to_vec(data, CompressionLevel::Fastest)
    }

    #[test]
    fn frames_are_concatenated_and_skippable_ones_passed_over() {
        let mut data = zst(b"{\"a\":1}\n");
        // A skippable frame (magic 0x184D2A5E, little-endian), 3 bytes long.
        data.extend_from_slice(&[0x5E, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        data.extend(zst(b"{\"b\":2}\n"));
        assert!(is_zstd(&data));
        assert_eq!(decompress(&data, 1 << 20).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn more_than_the_cap_is_refused_and_garbage_is_an_error() {
        let data = zst(&vec![b'x'; 1 << 16]);
        assert!(decompress(&data, 1 << 16).is_ok());
        let e = decompress(&data, (1 << 16) - 1).unwrap_err();
        assert!(e.starts_with("decompresses to more than"), "{e}");
        let mut bad = MAGIC.to_vec();
        bad.extend_from_slice(b"not a frame at all");
        assert!(decompress(&bad, 1 << 20).unwrap_err().starts_with("bad zstd data"));
        let mut cut = zst(b"{\"a\":1}\n");
        cut.truncate(cut.len() - 3);
        assert!(decompress(&cut, 1 << 20).is_err());
        // A skippable frame that claims more than there is.
        assert!(decompress(&[0x5E, 0x2A, 0x4D, 0x18, 200, 0, 0, 0, 1], 1 << 20).is_err());
    }

    /// A head gives what its frames give up to the cap, even cut mid-frame.
    #[test]
    fn a_head_is_what_the_frames_give_up_to_the_cap() {
        let text: Vec<u8> = (0..4000).flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes()).collect();
        let mut data = zst(&text);
        data.extend(zst(b"tail\n"));
        assert_eq!(decompress_head(&data, 100), text[..100]);
        let mut whole = text.clone();
        whole.extend_from_slice(b"tail\n");
        assert_eq!(decompress_head(&data, 1 << 20), whole);
        // Cut mid-frame: a prefix of the text, not an error.
        let cut = &data[..data.len() / 3];
        let head = decompress_head(cut, 1 << 20);
        assert!(text.starts_with(&head), "not a prefix");
        assert!(decompress_head(b"\x28\xB5\x2F\xFDnot a frame", 1 << 20).is_empty());
    }

    /// A Codex rollout archived compressed reads as its plain form: the id
    /// from its name, every message, and its own path in what is reported.
    #[test]
    fn a_compressed_rollout_reads_as_its_plain_form() {
        use crate::read::discover::{Input, InputKind};
        const NAME: &str = "rollout-2026-09-01T08-00-00-019e7c00-0151-7000-8000-00000000a5c1.jsonl";
        let dir = crate::testing::fixtures_dir().join("codex");
        let path = dir.join(format!("{NAME}.zst"));
        let read = crate::read::read_input(&Input { path: path.clone(), kind: InputKind::File }, None).unwrap();
        assert_eq!(read.len(), 1);
        let s = &read[0];
        assert_eq!(s.id, "019e7c00-0151-7000-8000-00000000a5c1");
        assert_eq!(s.source_path, path);
        let data = std::fs::read(&path).unwrap();
        let plain = decompress(&data, MAX_DECOMPRESSED).unwrap();
        let mut expected = crate::read::read_bytes(&dir.join(NAME), &plain, None).unwrap().remove(0);
        expected.source_path = path.clone();
        assert_eq!(s.messages, expected.messages);
        assert_eq!(s.calls, expected.calls);
        assert!(s.messages.len() > 5 && s.calls.len() > 2);
        // Found by a directory walk, and named by its session id for forks.
        let (inputs, _) = crate::read::discover::discover(std::slice::from_ref(&dir));
        assert!(inputs.iter().any(|i| i.path == path));
        let mut keys = Vec::new();
        crate::read::format::path_keys(&path, &mut keys);
        assert!(keys.contains(&"session:019e7c00-0151-7000-8000-00000000a5c1".to_string()), "{keys:?}");
        assert!(keys.contains(&format!("file:{NAME}")), "{keys:?}");
    }

    /// A compressed file that does not decompress is reported by its path.
    #[test]
    fn a_broken_compressed_file_is_an_error_naming_it() {
        use crate::read::discover::{Input, InputKind};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl.zst");
        let mut data = zst(b"{\"type\":\"session\"}\n");
        data.truncate(data.len() - 2);
        std::fs::write(&path, &data).unwrap();
        let e = crate::read::read_input(&Input { path: path.clone(), kind: InputKind::File }, None).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.message.starts_with("cannot decompress: bad zstd data"), "{}", e.message);
    }

    #[test]
    fn the_inner_name_drops_the_suffix_only() {
        let p = |s: &str| inner_path(Path::new(s)).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(p("/s/rollout-x.jsonl.zst").as_deref(), Some("/s/rollout-x.jsonl"));
        assert_eq!(p("session.v4.jsonl.zstd").as_deref(), Some("session.v4.jsonl"));
        assert_eq!(p("a.jsonl"), None);
        assert_eq!(p(".zst"), None);
    }
}
