//! `compactor presets`: the built-in policies, one line each with what sets
//! them apart; `presets NAME` one with every parameter, as TOML (the format
//! `--policy FILE` reads); `--json` every parameter of each.

use super::args::PresetsArgs;
use anyhow::Context;
use compactor::presets;

pub fn run(args: PresetsArgs) -> anyhow::Result<u8> {
    let PresetsArgs { json, name } = args;
    let all = presets::all();
    let chosen: Vec<_> = match &name {
        Some(n) => {
            let p =
                all.into_iter().find(|p| p.name == n.as_str()).with_context(|| super::suggest::unknown_preset(n))?;
            vec![p]
        }
        None if !json => return super::print_stdout(&listing(&all)),
        None => all,
    };
    let mut out = String::new();
    if json {
        let policies: Vec<_> = chosen.iter().map(|p| p.policy()).collect();
        out = serde_json::to_string_pretty(&policies).context("cannot serialize the presets")?;
        out.push('\n');
    } else {
        for p in &chosen {
            out.push_str(&format!("# ── preset `{}`: {}\n", p.name, p.summary));
            out.push_str(&presets::render_toml(&p.policy()).context("cannot render a preset")?);
            out.push('\n');
        }
        out.push_str("# Use one with --preset NAME; save one to a file, edit it, and use --policy FILE.toml;\n");
        out.push_str(
            "# override any key with --set KEY=VALUE (dotted keys as above, e.g. compact.keep_recent_tokens).\n",
        );
    }
    super::print_stdout(&out)
}

/// One line per preset: when it compacts, what it keeps, its summarizer,
/// whether it prunes tool outputs, and where it comes from.
fn listing(all: &[presets::Preset]) -> String {
    let header = ["preset", "compacts at", "keeps", "summarizer", "prunes", "from"].map(str::to_string);
    let rows: Vec<[String; 6]> = all
        .iter()
        .map(|p| {
            let policy = p.policy();
            [
                p.name.to_string(),
                policy.trigger_words(),
                if policy.compact.enabled { policy.keeps_words() } else { "–".to_string() },
                policy.compact.summarizer.name().to_string(),
                if policy.prune.enabled { "yes" } else { "no" }.to_string(),
                p.summary.to_string(),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String; 6]| -> String {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            l.push_str(c);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(w.saturating_sub(c.chars().count()) + 2));
            }
        }
        l + "\n"
    };
    let mut out = line(&header);
    for r in &rows {
        out.push_str(&line(r));
    }
    out.push_str(
        "\n`compactor presets NAME` prints one with every key, as TOML (save it, edit it, use it with --policy \
         FILE.toml); --json prints every key of each. Windows are each session's own (`auto`).\n",
    );
    out
}
