//! A shard's results (`--shard K/N`), written as `partial.json` beside the
//! shard's own reports: everything the whole run's reports are built from, so
//! that `compactor merge` writes what one process would have. And the rules
//! for which partials belong together.

use super::html::KeptCharts;
use crate::cost::CostSettings;
use crate::model::Diagnostic;
use crate::pipeline::results::{LlmSummaries, SessionSummary};
use crate::pipeline::{InputList, SessionKey, Shard};
use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file a partial output is known by.
pub const PARTIAL_FILE: &str = "partial.json";

/// Bumped whenever a partial's fields change: a merge reads one version only.
pub const PARTIAL_VERSION: u32 = 1;

/// What a partial was made by and from: partials merge only when every field
/// but the shard is the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub partial_version: u32,
    /// The compactor version that wrote it.
    pub version: String,
    /// `replay`, `compare`, `check` or `sweep`.
    pub command: String,
    pub shard: Shard,
    /// A sweep split by grid point (`--shard-points`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Shard>,
    /// The paths as given.
    pub inputs: Vec<String>,
    /// Every input found under them, before the split.
    pub input_list: InputList,
    /// What changes the results besides the policies (flags, by name).
    pub settings: BTreeMap<String, String>,
    /// Every policy, with all parameters.
    pub policies: Vec<Policy>,
}

impl Header {
    pub fn new(command: &str, shard: Shard, inputs: &[String], input_list: InputList, policies: &[Policy]) -> Header {
        Header {
            partial_version: PARTIAL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_string(),
            command: command.to_string(),
            shard,
            points: None,
            inputs: inputs.to_vec(),
            input_list,
            settings: BTreeMap::new(),
            policies: policies.to_vec(),
        }
    }
}

/// Where a session's own files are in its partial's folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFiles {
    /// Its transcripts: (policy index, path under the folder, `/`-separated).
    pub transcripts: Vec<(usize, String)>,
    /// Its rows of the folder's calls.csv: (byte offset, length).
    pub calls: (u64, u64),
}

/// One session of a replay's partial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartialSession {
    pub key: SessionKey,
    pub summary: SessionSummary,
    /// Its calls (for the check that a forced `--format` fits).
    pub calls: usize,
    #[serde(default)]
    pub files: SessionFiles,
    /// Per row, what its cost keeps unshown ([`crate::cost::CheckDetail`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_details: Vec<Option<crate::cost::CheckDetail>>,
}

impl PartialSession {
    pub fn new(key: SessionKey, summary: SessionSummary, calls: usize) -> PartialSession {
        let details: Vec<Option<crate::cost::CheckDetail>> =
            summary.rows.iter().map(|r| r.cost.as_ref().and_then(crate::cost::SessionCost::detail)).collect();
        let cost_details = if details.iter().all(Option::is_none) { Vec::new() } else { details };
        PartialSession { key, summary, calls, files: SessionFiles::default(), cost_details }
    }

    /// The summary, with what its costs keep unshown put back, taken out:
    /// only its warnings stay.
    fn take_restored(&mut self) -> SessionSummary {
        let mut summary = SessionSummary {
            rows: std::mem::take(&mut self.summary.rows),
            warnings: self.summary.warnings.clone(),
            unlisted_warnings: self.summary.unlisted_warnings,
            bad_lines: self.summary.bad_lines,
            recorded: self.summary.recorded.take(),
        };
        for (row, d) in summary.rows.iter_mut().zip(std::mem::take(&mut self.cost_details)) {
            if let (Some(c), Some(d)) = (&mut row.cost, d) {
                c.restore(d);
            }
        }
        summary
    }
}

/// What the summarizers of a shard did, as the report counts it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummarizerCounts {
    #[serde(default)]
    pub fallbacks: Vec<String>,
    #[serde(default)]
    pub llm: Option<LlmSummaries>,
    #[serde(default)]
    pub command: Option<crate::summarize::command::CommandStats>,
}

/// A shard of `replay`, `compare` or `check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayPartial {
    pub header: Header,
    pub check_invariants: bool,
    pub cost: CostSettings,
    pub redact: bool,
    /// Inputs of this shard read, and those that could not be.
    pub inputs_read: usize,
    pub failures: Vec<Diagnostic>,
    /// In report order.
    pub sessions: Vec<PartialSession>,
    pub charts: KeptCharts<SessionKey>,
    pub summarizers: SummarizerCounts,
    /// What `check` compares the merged run with (its own business).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<serde_json::Value>,
}

/// A partial as read, with the folder it came from.
pub struct Read<T> {
    pub dir: PathBuf,
    pub partial: T,
}

/// Partials of `replay`, `compare` or `check` merged: the whole run's report
/// and charts, and its sessions in report order with the partial (an index
/// into the list merged) that holds their files; their summaries keep only
/// their warnings (the rows are in the report).
pub struct MergedReplay {
    pub report: super::Report,
    pub charts: super::html::Charts,
    pub sessions: Vec<(usize, PartialSession)>,
    /// Inputs that could not be read, over every shard.
    pub failures: Vec<Diagnostic>,
}

/// Merge partials that [`refuse`] accepts into what one process would have
/// built: rows in report order, totals, diagnostics, costs and charts.
pub fn merge_replay(parts: &mut [Read<ReplayPartial>]) -> Result<MergedReplay, String> {
    let Some(first) = parts.first() else { return Err("no partial to merge".into()) };
    let first = first.partial.clone_settings();
    let mut sessions: Vec<(usize, PartialSession)> = Vec::new();
    let mut failures = Vec::new();
    let mut inputs_read = 0;
    let mut keeper = super::html::ChartKeeper::new(first.charts_max);
    let mut counts = SummarizerCounts::default();
    for (i, part) in parts.iter_mut().enumerate() {
        let p = &mut part.partial;
        sessions.extend(std::mem::take(&mut p.sessions).into_iter().map(|s| (i, s)));
        failures.append(&mut p.failures);
        inputs_read += p.inputs_read;
        keeper.absorb(std::mem::replace(&mut p.charts, KeptCharts::empty(first.charts_max)));
        counts.absorb(std::mem::take(&mut p.summarizers));
    }
    sessions.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    if let Some(w) = sessions.windows(2).find(|w| w[0].1.key == w[1].1.key) {
        return Err(format!(
            "session {} of {} is in two partials: each input must be in one shard",
            w[0].1.key.session_id,
            w[0].1.key.source_path.display()
        ));
    }
    failures.sort();
    // The summaries move out (the report copies their rows), their warnings
    // stay for printing.
    let summaries: Vec<SessionSummary> = sessions.iter_mut().map(|(_, s)| s.take_restored()).collect();
    let h = &first.header;
    let mut report = crate::pipeline::results::build_from_summaries(
        &h.inputs,
        inputs_read,
        &failures,
        &h.policies,
        &summaries,
        first.check_invariants,
    );
    drop(summaries);
    report.run.meter = crate::pipeline::results::MeterInfo::of(first.cost.meter, &report.sessions);
    counts.fallbacks.sort();
    report.diagnostics.summarizer_fallbacks = counts.fallbacks;
    report.diagnostics.llm_summaries = counts.llm;
    report.diagnostics.command_summaries = counts.command;
    report.total_costs(&first.cost);
    if first.redact {
        report = crate::redact::redact_serde(&report).ok_or("cannot redact the merged report")?;
    }
    Ok(MergedReplay { report, charts: keeper.finish(), sessions, failures })
}

/// What every partial of a run shares, taken from the first.
struct Shared {
    header: Header,
    check_invariants: bool,
    cost: CostSettings,
    redact: bool,
    charts_max: usize,
}

impl ReplayPartial {
    fn clone_settings(&self) -> Shared {
        Shared {
            header: self.header.clone(),
            check_invariants: self.check_invariants,
            cost: self.cost.clone(),
            redact: self.redact,
            charts_max: self.charts.max,
        }
    }
}

impl SummarizerCounts {
    fn absorb(&mut self, other: SummarizerCounts) {
        self.fallbacks.extend(other.fallbacks);
        if let Some(o) = other.llm {
            self.llm.get_or_insert_with(LlmSummaries::default).add(&o);
        }
        if let Some(o) = other.command {
            self.command.get_or_insert_with(Default::default).add(&o);
        }
    }
}

/// A shard of `sweep`: its sessions' replays at its grid points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPartial {
    pub header: Header,
    pub min_frr: Option<f64>,
    /// This shard's sessions in the order it read them: (source path, id).
    pub sessions: Vec<(PathBuf, String)>,
    /// Every point, the cells of other shards' points skipped.
    pub table: crate::sweep::SweepTable,
    /// Per cell, what its cost keeps unshown ([`crate::cost::CheckDetail`]).
    pub details: Vec<Vec<Option<crate::cost::CheckDetail>>>,
    pub summarizers: SummarizerCounts,
}

impl SweepPartial {
    /// The details of `table`'s cells, taken apart for writing.
    pub fn details_of(table: &crate::sweep::SweepTable) -> Vec<Vec<Option<crate::cost::CheckDetail>>> {
        let of = |c: &crate::sweep::Cell| match c {
            crate::sweep::Cell::Done(o) => o.cost.detail(),
            _ => None,
        };
        table.cells.iter().map(|row| row.iter().map(of).collect()).collect()
    }

    fn restore(&mut self) {
        for (row, details) in self.table.cells.iter_mut().zip(std::mem::take(&mut self.details)) {
            for (cell, d) in row.iter_mut().zip(details) {
                if let (crate::sweep::Cell::Done(o), Some(d)) = (cell, d) {
                    o.cost.restore(d);
                }
            }
        }
    }
}

/// Merge a sweep's partials (accepted by [`refuse`]): the sessions of every
/// session shard in the order one process reads them, each point's cells
/// from the partial that ran it. Returns the table, `--min-frr` and what the
/// summarizers did.
pub fn merge_sweep(
    mut parts: Vec<Read<SweepPartial>>,
) -> Result<(crate::sweep::SweepTable, Option<f64>, SummarizerCounts), String> {
    use crate::sweep::Cell;
    for r in &mut parts {
        r.partial.restore();
    }
    let Some(first) = parts.first() else { return Err("no partial to merge".into()) };
    let (min_frr, mut table) = (first.partial.min_frr, first.partial.table.clone());
    let n_points = table.points.len();
    // Per session shard, its sessions and, per point, the partial that ran it.
    let mut groups: BTreeMap<u32, (usize, Vec<Option<usize>>)> = BTreeMap::new();
    for (i, r) in parts.iter().enumerate() {
        let p = &r.partial;
        if p.table.points.len() != n_points || p.table.cells.len() != n_points {
            return Err(format!("{}: its grid has another number of points", r.dir.display()));
        }
        let g = groups.entry(p.header.shard.index).or_insert_with(|| (i, vec![None; n_points]));
        if g.0 != i && parts[g.0].partial.sessions != p.sessions {
            return Err(format!(
                "{} and {} are the same shard of sessions but read other sessions",
                parts[g.0].dir.display(),
                r.dir.display()
            ));
        }
        let points = p.header.points.unwrap_or(crate::pipeline::Shard::ALL);
        for (pi, owner) in g.1.iter_mut().enumerate() {
            if points.holds_point(pi) {
                *owner = Some(i);
            }
        }
    }
    // One process reads every file, then sorts its sessions by (path, id),
    // ties in reading order: within a shard, its own order.
    let mut order: Vec<(&PathBuf, &String, u32, usize)> = Vec::new();
    for (&g, (rep, _)) in &groups {
        order.extend(parts[*rep].partial.sessions.iter().enumerate().map(|(i, (p, id))| (p, id, g, i)));
    }
    order.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    table.windows = Vec::with_capacity(order.len());
    table.cells = vec![Vec::with_capacity(order.len()); n_points];
    for &(_, _, g, i) in &order {
        let (rep, owners) = &groups[&g];
        table.windows.push(parts[*rep].partial.table.windows.get(i).copied().flatten());
        for (pi, owner) in owners.iter().enumerate() {
            let cell =
                owner.and_then(|o| parts[o].partial.table.cells.get(pi)?.get(i).cloned()).unwrap_or(Cell::Skipped);
            table.cells[pi].push(cell);
        }
    }
    let mut counts = SummarizerCounts::default();
    for r in parts {
        counts.absorb(r.partial.summarizers);
    }
    counts.fallbacks.sort();
    Ok((table, min_frr, counts))
}

/// Just the header of a partial, to tell its command before reading it whole.
#[derive(Deserialize)]
struct HeaderOnly {
    header: Header,
}

/// The folder a partial is in, from the path given (the folder or its
/// `partial.json`).
pub fn partial_dir(path: &Path) -> PathBuf {
    if path.file_name().is_some_and(|n| n == PARTIAL_FILE) && path.is_file() {
        return path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    }
    path.to_path_buf()
}

/// Read the header of the partial in `dir` (the rest is read by [`parse`],
/// one partial at a time, so a merge never holds every partial's text).
/// Errors name the file.
pub fn read_header(dir: &Path) -> Result<Header, String> {
    use serde::Deserialize as _;
    use std::io::Read as _;
    let file = dir.join(PARTIAL_FILE);
    let bad = |e: serde_json::Error| format!("{}: not a partial output: {e}", file.display());
    // A shard writes the header first (`{"header":{…},…}`): read just that,
    // not the rest of the file, which the merge reads once, later. A partial
    // rewritten another way is read whole.
    const START: &[u8] = b"{\"header\":";
    let mut r = std::io::BufReader::new(open(dir)?);
    let mut start = [0u8; START.len()];
    let header = if r.read_exact(&mut start).is_ok() && start == START {
        Header::deserialize(&mut serde_json::Deserializer::from_reader(r)).map_err(bad)?
    } else {
        serde_json::from_reader::<_, HeaderOnly>(std::io::BufReader::new(open(dir)?)).map_err(bad)?.header
    };
    if header.partial_version != PARTIAL_VERSION {
        return Err(format!(
            "{}: partial format {} (this compactor reads {PARTIAL_VERSION}): merge with the compactor that wrote it",
            file.display(),
            header.partial_version
        ));
    }
    Ok(header)
}

fn open(dir: &Path) -> Result<std::fs::File, String> {
    let file = dir.join(PARTIAL_FILE);
    std::fs::File::open(&file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{}: no {PARTIAL_FILE}: not a partial output (write one with --shard K/N --out DIR)", dir.display())
        } else {
            format!("cannot read {}: {e}", file.display())
        }
    })
}

/// Read the partial in `dir` whole.
pub fn parse<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<T, String> {
    let bytes = std::fs::read(dir.join(PARTIAL_FILE)).map_err(|e| format!("{}: {e}", dir.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", dir.join(PARTIAL_FILE).display()))
}

/// Why `headers` (with their folders) cannot be merged into one run, if they
/// cannot: made by another compactor version or command, over other inputs,
/// with other policies or settings, split another way, or not covering every
/// shard exactly once.
pub fn refuse(headers: &[(&Path, &Header)]) -> Option<String> {
    let (first_dir, first) = headers.first()?;
    let me = env!("CARGO_PKG_VERSION");
    if first.version != me {
        return Some(format!(
            "{} was written by compactor {}; this is {me}: merge with the version that wrote the partials",
            first_dir.display(),
            first.version
        ));
    }
    for (dir, h) in &headers[1..] {
        let (a, b) = (first_dir.display(), dir.display());
        let differ = |what: &str, x: &str, y: &str| Some(format!("{a} and {b} {what}: {x} vs {y}"));
        if h.version != first.version {
            return differ("were written by other compactor versions", &first.version, &h.version);
        }
        if h.command != first.command {
            return differ("are partials of other commands", &first.command, &h.command);
        }
        if h.shard.count != first.shard.count {
            return differ(
                "split the run into other numbers of shards",
                &first.shard.to_string(),
                &h.shard.to_string(),
            );
        }
        let points = |s: &Option<Shard>| s.map_or_else(|| "none".to_string(), |s| s.to_string());
        if h.points.map(|s| s.count) != first.points.map(|s| s.count) {
            return differ("split the grid points another way", &points(&first.points), &points(&h.points));
        }
        if h.inputs != first.inputs {
            return differ("were given other paths", &first.inputs.join(" "), &h.inputs.join(" "));
        }
        if h.input_list != first.input_list {
            return Some(format!(
                "{a} and {b} found other inputs under the same paths ({} vs {} files, or other names): shards must \
                 see the same files",
                first.input_list.count, h.input_list.count
            ));
        }
        for key in first.settings.keys().chain(h.settings.keys()) {
            let (x, y) = (first.settings.get(key), h.settings.get(key));
            if x != y {
                let show = |v: Option<&String>| v.map_or_else(|| "(not set)".to_string(), Clone::clone);
                return differ(&format!("were run with other settings: `{key}`"), &show(x), &show(y));
            }
        }
        if let Some(why) = policies_differ(&first.policies, &h.policies) {
            return Some(format!("{a} and {b} were run with other policies: {why}"));
        }
    }
    coverage(headers)
}

/// The first difference between two lists of policies, in words.
fn policies_differ(a: &[Policy], b: &[Policy]) -> Option<String> {
    let names = |ps: &[Policy]| ps.iter().map(|p| p.name.clone()).collect::<Vec<_>>().join(", ");
    if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.name != y.name) {
        return Some(format!("{} vs {}", names(a), names(b)));
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            let flat = |p: &Policy| crate::check::params::leaves(&serde_json::to_value(p).unwrap_or_default());
            let (fx, fy) = (flat(x), flat(y));
            let key = fx.keys().chain(fy.keys()).find(|k| fx.get(*k) != fy.get(*k)).cloned().unwrap_or_default();
            let show = |m: &BTreeMap<String, String>| m.get(&key).cloned().unwrap_or_else(|| "(not set)".into());
            return Some(format!("policy `{}`: `{key}` is {} vs {}", x.name, show(&fx), show(&fy)));
        }
    }
    None
}

/// Every shard (and grid-point shard) exactly once.
fn coverage(headers: &[(&Path, &Header)]) -> Option<String> {
    let (_, first) = headers.first()?;
    let points = first.points.map_or(1, |p| p.count);
    let mut seen: BTreeMap<(u32, u32), &Path> = BTreeMap::new();
    for (dir, h) in headers {
        let cell = (h.shard.index, h.points.map_or(1, |p| p.index));
        if let Some(other) = seen.insert(cell, dir) {
            return Some(format!(
                "{} and {} are the same shard ({}): each shard is merged once",
                other.display(),
                dir.display(),
                cell_name(h.shard, h.points)
            ));
        }
    }
    let total = u64::from(first.shard.count) * u64::from(points);
    let missing = total - seen.len() as u64;
    if missing == 0 {
        return None;
    }
    // The first few missing, found in at most `seen` + 8 steps.
    let cells = (1..=first.shard.count).flat_map(|k| (1..=points).map(move |j| (k, j)));
    let shown: Vec<String> = cells
        .filter(|c| !seen.contains_key(c))
        .take(8)
        .map(|(k, j)| {
            let p = first.points.map(|p| Shard { index: j, count: p.count });
            cell_name(Shard { index: k, count: first.shard.count }, p)
        })
        .collect();
    let more = if missing > shown.len() as u64 {
        format!(" and {} more", missing - shown.len() as u64)
    } else {
        String::new()
    };
    Some(format!("missing {missing} of {total} shard(s): {}{more}; merge every shard of the run", shown.join(", ")))
}

fn cell_name(shard: Shard, points: Option<Shard>) -> String {
    match points {
        Some(p) if shard.count > 1 => format!("shard {shard}, points {p}"),
        Some(p) => format!("points {p}"),
        None => format!("shard {shard}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(k: u32, n: u32) -> Header {
        let list = InputList { count: 3, hash: 7 };
        Header::new("replay", Shard { index: k, count: n }, &["logs".into()], list, &[Policy::default()])
    }

    fn refused(hs: &[Header]) -> Option<String> {
        let dirs: Vec<PathBuf> = (0..hs.len()).map(|i| PathBuf::from(format!("p{i}"))).collect();
        let pairs: Vec<(&Path, &Header)> = dirs.iter().map(PathBuf::as_path).zip(hs).collect();
        refuse(&pairs)
    }

    #[test]
    fn every_shard_once() {
        assert_eq!(refused(&[header(2, 2), header(1, 2)]), None);
        let missing = refused(&[header(1, 3), header(3, 3)]).unwrap();
        assert!(missing.contains("missing 1 of 3") && missing.contains("shard 2/3"), "{missing}");
        let twice = refused(&[header(1, 2), header(1, 2), header(2, 2)]).unwrap();
        assert!(twice.contains("p0 and p1 are the same shard (shard 1/2)"), "{twice}");
        // Naming what is missing takes a few steps, however many shards.
        let many = refused(&[header(1, 100_000)]).unwrap();
        assert!(many.contains("missing 99999 of 100000 shard(s): shard 2/100000, "), "{many}");
        assert!(many.contains("and 99991 more"), "{many}");
        let counts = refused(&[header(1, 2), header(1, 3)]).unwrap();
        assert!(counts.contains("other numbers of shards: 1/2 vs 1/3"), "{counts}");
    }

    /// The header is read from the start of a partial as a shard writes it,
    /// and from anywhere in one rewritten (pretty-printed, keys reordered).
    #[test]
    fn reads_the_header_of_any_layout() {
        let h = header(2, 3);
        let compact = serde_json::json!({"header": &h, "sessions": [1, 2, 3]});
        let mut reordered = serde_json::Map::new();
        reordered.insert("sessions".into(), serde_json::json!([]));
        reordered.insert("header".into(), serde_json::to_value(&h).unwrap());
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("compact", serde_json::to_string(&compact).unwrap()),
            ("pretty", serde_json::to_string_pretty(&compact).unwrap()),
            ("reordered", serde_json::to_string(&reordered).unwrap()),
        ] {
            let d = dir.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(PARTIAL_FILE), text).unwrap();
            assert_eq!(read_header(&d).as_ref(), Ok(&h), "{name}");
        }
        // A shard out of range is no partial's.
        let d = dir.path().join("bad");
        std::fs::create_dir_all(&d).unwrap();
        let text = serde_json::to_string(&compact).unwrap().replace(r#""index":2,"count":3"#, r#""index":4,"count":3"#);
        std::fs::write(d.join(PARTIAL_FILE), text).unwrap();
        assert!(read_header(&d).unwrap_err().contains("not a partial output: shard 4/3"));
    }

    #[test]
    fn names_what_differs() {
        let mut b = header(2, 2);
        b.settings.insert("meter".into(), "chars4".into());
        let why = refused(&[header(1, 2), b]).unwrap();
        assert!(why.contains("`meter`: (not set) vs chars4"), "{why}");
        let mut b = header(2, 2);
        b.policies[0].compact.reserve_tokens += 1;
        let why = refused(&[header(1, 2), b]).unwrap();
        assert!(why.contains("policy `default`: `compact.reserve_tokens`"), "{why}");
        let mut b = header(2, 2);
        b.input_list.count = 4;
        assert!(refused(&[header(1, 2), b]).unwrap().contains("3 vs 4 files"));
        let mut b = header(2, 2);
        b.version = "0.0.1".into();
        assert!(refused(&[header(1, 2), b]).unwrap().contains("other compactor versions"));
        let mut a = header(1, 1);
        a.version = "0.0.1".into();
        assert!(refused(&[a]).unwrap().contains("written by compactor 0.0.1"));
    }
}
