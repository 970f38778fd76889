//! "Did you mean …": the closest known name to a mistyped one, for the flags
//! whose values are names from a fixed list (`--model`, `--preset`).

use anyhow::bail;
use compactor::cost::{PriceTable, normalize_model};
use compactor::text::suggest::closest;

/// The error for a preset name no preset has: the closest one, and every one.
pub fn unknown_preset(name: &str) -> String {
    let names = compactor::presets::names();
    let hint =
        closest(name, names.iter().map(|k| (*k, *k))).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    format!("unknown preset `{name}` ({hint}known: {}; see `compactor presets`)", names.join(", "))
}

/// `--model NAME` must name a family of the price table: a family name, or a
/// model name that holds one of a family's fragments. Otherwise every call
/// would silently be priced as the fallback family.
pub fn require_model(table: &PriceTable, model: &str) -> anyhow::Result<()> {
    if table.find(model).is_some() {
        return Ok(());
    }
    let norm = normalize_model(model);
    // Family names and their fragments (`claude-3-5-sonnet` is a fragment of
    // `claude-sonnet-4`): the suggestion is the family.
    let spelled = table.families.iter().flat_map(|f| {
        std::iter::once((f.name.as_str(), f.name.as_str()))
            .chain(f.patterns.iter().map(|p| (p.as_str(), f.name.as_str())))
    });
    let hint = closest(&norm, spelled).map(|f| format!("; did you mean `{f}`?")).unwrap_or_default();
    let names: Vec<&str> = table.families.iter().map(|f| f.name.as_str()).collect();
    bail!(
        "unknown --model `{model}`{hint} (known model families: {}; a model name matches a family when it \
         contains the family's name, e.g. claude-sonnet-4-5-20250929 → claude-sonnet-4; add a family with \
         --prices FILE.toml)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_model_names_the_families_and_the_closest() {
        let table = PriceTable::builtin();
        assert!(require_model(&table, "claude-sonnet-4-5-20250929").is_ok());
        let e = require_model(&table, "claude-sonet-4-5").map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("unknown --model `claude-sonet-4-5`; did you mean `claude-sonnet-4`?"), "{e}");
        assert!(e.contains("gpt-5") && e.contains("claude-haiku-4-5"), "{e}");
    }
}
