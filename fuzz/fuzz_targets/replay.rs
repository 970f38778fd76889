//! libFuzzer target: `replay` — arbitrary sessions through every preset at two
//! windows, with the invariant checks (see `tests/it/fuzz_support/replay.rs`).
#![no_main]

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod fuzz_support;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz_support::replay::check(&fuzz_support::replay::build(data));
});
