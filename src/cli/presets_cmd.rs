//! `compactor presets`: every built-in policy with every parameter, as TOML (the
//! format `--policy FILE` reads) or JSON.

use super::args::PresetsArgs;
use anyhow::Context;
use compactor::presets;

pub fn run(args: PresetsArgs) -> anyhow::Result<u8> {
    let PresetsArgs { json, name } = args;
    let all = presets::all();
    let chosen: Vec<_> = match &name {
        Some(n) => {
            let p = all
                .into_iter()
                .find(|p| p.name == n.as_str())
                .with_context(|| format!("unknown preset `{n}` (known: {})", presets::names().join(", ")))?;
            vec![p]
        }
        None => all,
    };
    let mut out = String::new();
    if json {
        let policies: Vec<_> = chosen.iter().map(|p| (p.build)()).collect();
        out = serde_json::to_string_pretty(&policies).context("cannot serialize the presets")?;
        out.push('\n');
    } else {
        for p in &chosen {
            out.push_str(&format!("# ── preset `{}`: {}\n", p.name, p.summary));
            out.push_str(&presets::render_toml(&(p.build)()).context("cannot render a preset")?);
            out.push('\n');
        }
        out.push_str("# Use one with --preset NAME; save one to a file, edit it, and use --policy FILE.toml;\n");
        out.push_str(
            "# override any key with --set KEY=VALUE (dotted keys as above, e.g. compact.keep_recent_tokens).\n",
        );
    }
    super::print_stdout(&out)
}
