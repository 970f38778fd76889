//! What `compactor check` compares besides the metrics: which policies, with
//! which parameters, under which run settings. A baseline compared with a run
//! of other policies or other parameters measures that difference, not a
//! change of compactor, and a policy on one side only is not compared at all.
//! [`coverage`] lists every such difference; the CLI decides which of them are
//! errors (see `compactor check --help`).

use super::Baseline;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Run settings by name (`format`, `llm.model`, …). A key that is absent was
/// not given (the default applies), which is a value like any other.
pub type RunSettings = BTreeMap<String, String>;

/// Policy keys that are not compared: the policy's identity (`name`) and
/// description (`source`), the tolerances of `check` itself (`check.*`: they
/// gate the run, they do not change it, and flags override them), and the name
/// of the variable that holds the API key.
pub fn ignored_key(key: &str) -> bool {
    matches!(key, "name" | "source" | "compact.llm.api_key_env") || key.starts_with("check.")
}

/// Where a [`Change`] is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// A parameter of the policy of this name.
    Policy(String),
    /// A run setting.
    Run,
}

/// A parameter or run setting that differs between the baseline (`old`) and
/// the run (`new`). `None`: that side has no such key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub scope: Scope,
    pub key: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

impl Change {
    /// A policy key that only one side has: the two were written by compactor
    /// versions with different keys. Not a changed value.
    pub fn is_unmatched_key(&self) -> bool {
        matches!(self.scope, Scope::Policy(_)) && (self.old.is_none() || self.new.is_none())
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let absent = match self.scope {
            Scope::Policy(_) => "(no such key)",
            Scope::Run => "(not set)",
        };
        let old = self.old.as_deref().unwrap_or(absent);
        let new = self.new.as_deref().unwrap_or(absent);
        match &self.scope {
            Scope::Policy(p) => write!(f, "policy `{p}`: {} {old} → {new}", self.key),
            Scope::Run => write!(f, "run setting {}: {old} → {new}", self.key),
        }
    }
}

/// How a run lines up with a baseline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Policies of the run that the baseline does not have.
    pub new_policies: Vec<String>,
    /// Policies of the baseline that the run does not replay.
    pub missing_policies: Vec<String>,
    /// Parameters and run settings that differ, policies in run order, then
    /// the run settings.
    pub changes: Vec<Change>,
    /// The baseline records no policy parameters (written before they were
    /// recorded): they cannot be compared.
    pub params_unrecorded: bool,
    /// The baseline records no run settings (a report.json, or written before
    /// they were recorded).
    pub settings_unrecorded: bool,
}

impl Coverage {
    /// Values that changed (policy keys on both sides, and run settings).
    pub fn changed_values(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| !c.is_unmatched_key())
    }

    /// Policy keys only one side has.
    pub fn unmatched_keys(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.is_unmatched_key())
    }
}

/// The name of a policy as JSON.
fn name_of(policy: &Value) -> &str {
    policy.get("name").and_then(Value::as_str).unwrap_or("")
}

/// Leaves of a policy as JSON, as dotted keys (as `--set` spells them) →
/// values (strings bare, everything else as JSON).
pub fn leaves(policy: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    flatten("", policy, &mut out);
    out
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Drop the values nothing reads ([`crate::policy::Policy::effective`]): the
/// trigger sizes of the triggers not used, `compact.keep_recent_tokens` under a
/// ratio. A baseline written before policies took that form then compares
/// equal to the same policy now.
fn drop_unread(map: &mut BTreeMap<String, String>) {
    let trigger = map.get("compact.trigger").cloned().unwrap_or_default();
    let ratio_on = map.get("compact.keep_recent_ratio").is_some_and(|r| !matches!(r.as_str(), "off" | "null"));
    let summarizer = map.get("compact.summarizer").cloned().unwrap_or_default();
    for key in crate::policy::unread_keys(&trigger, ratio_on, &summarizer) {
        map.remove(key);
    }
}

fn diff(
    scope: &Scope,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    skip: fn(&str) -> bool,
) -> Vec<Change> {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|k| !skip(k))
        .filter_map(|k| {
            let (o, n) = (old.get(k), new.get(k));
            (o != n).then(|| Change { scope: scope.clone(), key: k.clone(), old: o.cloned(), new: n.cloned() })
        })
        .collect()
}

/// Compare the run (its policies as JSON, as `compactor presets --json`
/// prints them, and its settings) with what `base` recorded.
pub fn coverage(base: &Baseline, policies: &[Value], settings: &RunSettings) -> Coverage {
    let now_names: Vec<&str> = policies.iter().map(name_of).collect();
    // The agents' own compactions are a row, not a policy.
    let base_names: Vec<&str> = base.presets.iter().filter(|p| !p.recorded).map(|p| p.policy.as_str()).collect();
    let mut out = Coverage {
        new_policies: now_names.iter().filter(|n| !base_names.contains(n)).map(|n| n.to_string()).collect(),
        missing_policies: base_names.iter().filter(|n| !now_names.contains(n)).map(|n| n.to_string()).collect(),
        params_unrecorded: base.policies.is_empty(),
        settings_unrecorded: base.settings.is_none(),
        ..Coverage::default()
    };
    for now in policies {
        let name = name_of(now);
        let Some(old) = base.policies.iter().find(|p| name_of(p) == name) else { continue };
        let (mut o, mut n) = (leaves(old), leaves(now));
        drop_unread(&mut o);
        drop_unread(&mut n);
        out.changes.extend(diff(&Scope::Policy(name.to_string()), &o, &n, ignored_key));
    }
    if let Some(old) = &base.settings {
        out.changes.extend(diff(&Scope::Run, old, settings, |_| false));
    }
    out
}
