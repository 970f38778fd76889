//! libFuzzer target: `pi` (see `tests/it/fuzz_support` for the generator and checks).
#![no_main]

#[path = "../../tests/it/fuzz_support/mod.rs"]
mod fuzz_support;

use compactor::model::Format;
use fuzz_support::{Seed, Target, build_case, check, load_seeds};
use std::sync::OnceLock;

const TARGET: Target = Target::Reader(Format::Pi);

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| load_seeds(&compactor::testing::fixtures_dir(), TARGET))
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check(TARGET, &build_case(seeds(), data));
});
