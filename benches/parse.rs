//! Micro-benchmarks of reading one synthetic Claude Code session: the real reader
//! (`compactor::read::claude::read`) next to the raw parse floor over the same
//! bytes. `cargo bench --bench parse`; under `cargo test` each runs once.

use compactor::synth::{self, SessionSpec, floor};
use divan::counter::BytesCount;
use std::path::Path;
use std::sync::LazyLock;

/// About 2 MB: big enough to dwarf per-call overhead, small enough that the
/// once-through run under `cargo test` stays quick in debug builds.
static SESSION: LazyLock<Vec<u8>> = LazyLock::new(|| synth::generate_session(&SessionSpec::bytes(7, 2_000_000)).data);

fn main() {
    divan::main();
}

#[divan::bench]
fn claude_reader(b: divan::Bencher) {
    let data = SESSION.as_slice();
    b.counter(BytesCount::of_slice(data))
        .bench(|| compactor::read::claude::read(Path::new("synthetic.jsonl"), divan::black_box(data)));
}

#[divan::bench]
fn parse_floor(b: divan::Bencher) {
    let data = SESSION.as_slice();
    b.counter(BytesCount::of_slice(data)).bench(|| floor::parse(divan::black_box(data)));
}
