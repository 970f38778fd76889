//! Streaming replay (DESIGN.md §1: "never hold more than the sessions being
//! replayed in memory"). Each worker reads one input, replays its sessions
//! through every policy, hands each result to a sink (which writes transcripts
//! and keeps a small summary) and drops the session before taking the next
//! input. Peak memory is the inputs in flight, not the corpus.
//!
//! One feature needs more than one file: a linked session (a sub-agent) may
//! replay what a top-level session of another file owns (`/btw` asides), which
//! is dropped from it against the keys every top-level session owns; the format
//! says which files and sessions are linked ([`crate::read::format`]). So the
//! work runs in two phases: first every input that is not a linked file,
//! keeping only the owned keys of top-level sessions; then the linked files,
//! and the linked sessions of the first phase's files, which are read again
//! (an old layout; modern logs keep sub-agents in their own files). Sessions
//! come out sorted by [`SessionKey`], so what is built from them
//! is byte-identical at any thread count and identical to reading everything
//! first ([`crate::read::read_all`] + [`super::replay_many`]).

use super::many::{Prepared, SessionResults};
use crate::model::{Diagnostic, Format, Session};
use crate::policy::Policy;
use crate::quality::QualityPlan;
use crate::read::copies::{self, Families};
use crate::read::{self, Input, InputKind, format};
use crate::replay::{ReplayOptions, Resolver};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where a session comes from, and its place in every output: sorted by session
/// id, then source path, then input position and position in the file (the
/// order [`super::replay_many`] gives).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SessionKey {
    pub session_id: String,
    pub source_path: PathBuf,
    /// Index of the input in the list given.
    pub input: usize,
    /// Index of the session among those its input holds.
    pub index: usize,
}

/// Reported after each input is done.
#[derive(Debug, Clone, Copy)]
pub struct StreamProgress {
    pub inputs_done: usize,
    pub inputs_total: usize,
    pub sessions_done: usize,
}

/// What a streaming replay kept: the sink's value per session, sorted by key.
#[derive(Debug)]
pub struct Streamed<S> {
    pub sessions: Vec<(SessionKey, S)>,
    /// Inputs that could not be read at all, in input order.
    pub failures: Vec<Diagnostic>,
    pub inputs_read: usize,
}

/// Which sessions of an input a pass replays.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// First phase: everything but linked sessions.
    TopLevel,
    /// First phase, the inputs of a family that share responses
    /// ([`read::copies`]), the item's input first: read together, their
    /// copies settled, then as [`Pass::TopLevel`]; or one thread's streams,
    /// read as one ([`read::threads`]).
    Family,
    /// Second phase, a linked file: all its sessions.
    AgentFile,
    /// Second phase, a first-phase file read again: only its linked sessions.
    Sidechains,
}

struct InputDone<S> {
    input: usize,
    read: bool,
    failure: Option<Diagnostic>,
    sessions: Vec<(SessionKey, S)>,
    /// Keys its top-level sessions own (first phase).
    owned: Vec<String>,
    /// It held linked sessions, left for the second phase.
    deferred: bool,
    /// Those sessions themselves, when the input cannot be read twice (stdin).
    held: Vec<(usize, Session)>,
}

/// Changes a session gets after reading, before its replay (`--redact`).
pub type Prepare<'a> = &'a (dyn Fn(&mut Session) + Sync);

/// What a streaming replay does with each session: `prepare` it after reading
/// (optional), then hand its results to `sink` (on the worker thread, with the
/// session still alive) and keep what the sink returns. With `quality`, each
/// session's traces are scored right after its replays, in the same task
/// ([`SessionResults::quality`]), as `replay_many_scored` does.
pub struct Stages<'a, S> {
    pub prepare: Option<Prepare<'a>>,
    pub quality: Option<&'a QualityPlan>,
    pub sink: &'a (dyn Fn(&SessionKey, &Session, SessionResults) -> S + Sync),
    /// Per input, whether this run reads it (a shard's, [`super::shard`]);
    /// `None`: every input. Keys keep the inputs' places in the whole list.
    pub select: Option<&'a [bool]>,
    /// The inputs that share responses ([`read::copies::families`]), when
    /// already found (a shard found them to choose its inputs); `None`: found
    /// here, among the inputs this run reads.
    pub families: Option<&'a Families>,
}

/// Read and replay every input on `pool`. After Ctrl-C
/// ([`crate::interrupt`]) no further input is read; what was kept is returned.
#[allow(clippy::too_many_arguments)]
pub fn replay_stream<S: Send>(
    inputs: &[Input],
    format: Option<Format>,
    policies: &[Policy],
    resolver: &dyn Resolver,
    options: ReplayOptions,
    pool: &rayon::ThreadPool,
    progress: Option<&(dyn Fn(StreamProgress) + Sync)>,
    stages: &Stages<'_, S>,
) -> Streamed<S> {
    let prepared = Prepared::new(policies, resolver);
    let is_agent = |i: usize| inputs[i].kind == InputKind::File && format::is_linked_file(&inputs[i].path);
    let selected = |i: &usize| stages.select.is_none_or(|s| s.get(*i).copied().unwrap_or(false));
    let (agents, tops): (Vec<usize>, Vec<usize>) = (0..inputs.len()).filter(selected).partition(|&i| is_agent(i));
    let inputs_total = agents.len() + tops.len();
    let found;
    let families = match stages.families {
        Some(f) => f,
        None => {
            found = pool.install(|| copies::families_where(inputs, format, &|i| selected(&i)));
            &found
        }
    };
    let groups = families.by_first();
    let inputs_done = AtomicUsize::new(0);
    let sessions_done = AtomicUsize::new(0);
    let no_owned = HashSet::new();

    let run = |order: Vec<(usize, Pass)>, owned: &HashSet<String>| -> Vec<InputDone<S>> {
        let order = largest_first(inputs, order);
        pool.install(|| {
            order
                .par_iter()
                .with_max_len(1)
                .map(|&(i, pass)| {
                    let members = groups.get(&i).map_or(&[][..], |g| &g[..]);
                    let done = match pass {
                        Pass::Family if families.joined(i) => {
                            process_thread(inputs, members, &prepared, options, stages)
                        }
                        Pass::Family => process_family(inputs, members, format, &prepared, options, stages),
                        _ => vec![process(inputs, i, pass, format, owned, &prepared, options, stages)],
                    };
                    let sessions: usize = done.iter().map(|d| d.sessions.len()).sum();
                    sessions_done.fetch_add(sessions, Ordering::Relaxed);
                    if pass != Pass::Sidechains {
                        let n = inputs_done.fetch_add(done.len(), Ordering::Relaxed) + done.len();
                        if let Some(cb) = progress {
                            cb(StreamProgress {
                                inputs_done: n,
                                inputs_total,
                                sessions_done: sessions_done.load(Ordering::Relaxed),
                            });
                        }
                    }
                    done
                })
                .flatten()
                .collect()
        })
    };

    // An input of a family is read with the others of its family, as one item.
    let first: Vec<(usize, Pass)> = tops
        .iter()
        .filter_map(|&i| match families.of(i) {
            None => Some((i, Pass::TopLevel)),
            Some(f) if f == i && groups.contains_key(&i) => Some((i, Pass::Family)),
            Some(_) => None,
        })
        .collect();
    let mut done = run(first, &no_owned);
    let mut owned: HashSet<String> = done.iter_mut().flat_map(|d| std::mem::take(&mut d.owned)).collect();
    // A fork is settled by whether its parent is in the run: what the paths of
    // every input say counts too, so that a shard settles it as the whole run
    // does when the parent's file is in another shard.
    let mut keys = Vec::new();
    for input in inputs.iter().enumerate().filter(|&(i, x)| x.kind == InputKind::File && !is_agent(i)).map(|(_, x)| x) {
        format::path_keys(&input.path, &mut keys);
    }
    owned.extend(keys);
    let mut second: Vec<(usize, Pass)> = agents.iter().map(|&i| (i, Pass::AgentFile)).collect();
    second.extend(done.iter().filter(|d| d.deferred && d.held.is_empty()).map(|d| (d.input, Pass::Sidechains)));
    let held: Vec<(usize, Vec<(usize, Session)>)> =
        done.iter_mut().filter(|d| !d.held.is_empty()).map(|d| (d.input, std::mem::take(&mut d.held))).collect();
    done.extend(run(second, &owned));
    for (i, sessions) in held {
        let mut d = InputDone::new(i);
        pool.install(|| {
            for (index, s) in sessions {
                replay_one(&mut d, i, index, s, Pass::Sidechains, &owned, &prepared, options, stages);
            }
        });
        done.push(d);
    }

    done.sort_by_key(|d| d.input);
    let mut out = Streamed { sessions: Vec::new(), failures: Vec::new(), inputs_read: 0 };
    for d in done {
        out.inputs_read += usize::from(d.read);
        out.failures.extend(d.failure);
        out.sessions.extend(d.sessions);
    }
    out.sessions.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Largest inputs first, so a long session does not start last and hold the
/// batch (ties in input order).
fn largest_first(inputs: &[Input], mut order: Vec<(usize, Pass)>) -> Vec<(usize, Pass)> {
    let size = |i: usize| match inputs[i].kind {
        InputKind::File => std::fs::metadata(&inputs[i].path).map_or(0, |m| m.len()),
        _ => 0,
    };
    let mut keyed: Vec<(u64, (usize, Pass))> = order.drain(..).map(|o| (size(o.0), o)).collect();
    keyed.sort_by_key(|&(sz, (i, _))| (std::cmp::Reverse(sz), i));
    keyed.into_iter().map(|(_, o)| o).collect()
}

#[allow(clippy::too_many_arguments)]
fn process<S>(
    inputs: &[Input],
    i: usize,
    pass: Pass,
    format: Option<Format>,
    owned: &HashSet<String>,
    prepared: &Prepared<'_>,
    options: ReplayOptions,
    stages: &Stages<'_, S>,
) -> InputDone<S> {
    let mut done = InputDone::new(i);
    let Some(sessions) = read_into(&mut done, inputs, i, pass, format) else { return done };
    let linked: Vec<bool> = sessions.iter().map(format::is_linked_session).collect();
    handle(&mut done, inputs, i, pass, sessions, &linked, owned, prepared, options, stages);
    done
}

/// Read input `i` for `pass`: its sessions, or `None` (nothing to do, or it
/// could not be read: `done` then says why).
fn read_into<S>(
    done: &mut InputDone<S>,
    inputs: &[Input],
    i: usize,
    pass: Pass,
    format: Option<Format>,
) -> Option<Vec<Session>> {
    // After Ctrl-C the inputs not started yet cost nothing.
    if crate::interrupt::requested() {
        return None;
    }
    match read::read_input(&inputs[i], format) {
        Ok(s) => {
            done.read = pass != Pass::Sidechains;
            Some(s)
        }
        Err(d) => {
            // A file read again in the second phase was counted the first time.
            if pass != Pass::Sidechains {
                done.failure = Some(d);
            }
            None
        }
    }
}

/// The inputs of a family, read twice: first for what finding its copies
/// needs ([`copies::facts`], one input's sessions in memory at a time), then
/// each input as [`Pass::TopLevel`] reads it, its copies settled as reading
/// everything first settles them. Whether a session is linked is decided as
/// read, before a copy is settled as a fork.
fn process_family<S>(
    inputs: &[Input],
    members: &[usize],
    format: Option<Format>,
    prepared: &Prepared<'_>,
    options: ReplayOptions,
    stages: &Stages<'_, S>,
) -> Vec<InputDone<S>> {
    let mut done: Vec<InputDone<S>> = members.iter().map(|&i| InputDone::new(i)).collect();
    let mut facts = Vec::new();
    let mut counts = Vec::new();
    for d in &mut done {
        let sessions = read_into(d, inputs, d.input, Pass::TopLevel, format).unwrap_or_default();
        counts.push(sessions.len());
        facts.extend(sessions.iter().map(copies::facts));
    }
    let mut found = copies::find(&facts).into_iter();
    let no_owned = HashSet::new();
    for (d, n) in done.iter_mut().zip(counts) {
        let mine: Vec<Option<copies::Copy>> = found.by_ref().take(n).collect();
        if !d.read {
            continue;
        }
        let i = d.input;
        let Some(mut sessions) = read_into(d, inputs, i, Pass::TopLevel, format) else { continue };
        let linked: Vec<bool> = sessions.iter().map(format::is_linked_session).collect();
        for (s, copy) in sessions.iter_mut().zip(&mine) {
            if let Some(c) = copy {
                copies::settle(s, c);
            }
        }
        handle(d, inputs, i, Pass::TopLevel, sessions, &linked, &no_owned, prepared, options, stages);
    }
    done
}

/// The streams of one `codex exec` thread ([`read::threads`]), read as one:
/// its sessions are replayed as the first stream's.
fn process_thread<S>(
    inputs: &[Input],
    members: &[usize],
    prepared: &Prepared<'_>,
    options: ReplayOptions,
    stages: &Stages<'_, S>,
) -> Vec<InputDone<S>> {
    let mut done: Vec<InputDone<S>> = members.iter().map(|&i| InputDone::new(i)).collect();
    // After Ctrl-C the inputs not started yet cost nothing.
    if crate::interrupt::requested() {
        return done;
    }
    let no_owned = HashSet::new();
    for (d, (i, read)) in done.iter_mut().zip(read::threads::read_thread(inputs, members)) {
        match read {
            Ok(sessions) => {
                d.read = true;
                let linked: Vec<bool> = sessions.iter().map(format::is_linked_session).collect();
                handle(d, inputs, i, Pass::TopLevel, sessions, &linked, &no_owned, prepared, options, stages);
            }
            Err(e) => d.failure = Some(e),
        }
    }
    done
}

/// Replay (or defer) the sessions `pass` takes of input `i`; `linked` says
/// which are linked sessions.
#[allow(clippy::too_many_arguments)]
fn handle<S>(
    done: &mut InputDone<S>,
    inputs: &[Input],
    i: usize,
    pass: Pass,
    sessions: Vec<Session>,
    linked: &[bool],
    owned: &HashSet<String>,
    prepared: &Prepared<'_>,
    options: ReplayOptions,
    stages: &Stages<'_, S>,
) {
    // Standard input cannot be read again: its sub-agents wait in memory.
    let rereadable = inputs[i].kind != InputKind::Stdin;
    for (index, s) in sessions.into_iter().enumerate() {
        let linked = linked.get(index).copied().unwrap_or(false);
        match pass {
            Pass::TopLevel | Pass::Family if linked => {
                // A fork's parent may itself be a fork, deferred too.
                format::owned_keys(&s, &mut done.owned);
                done.deferred = true;
                if !rereadable {
                    done.held.push((index, s));
                }
            }
            Pass::Sidechains if !linked => {}
            _ => replay_one(done, i, index, s, pass, owned, prepared, options, stages),
        }
    }
}

impl<S> InputDone<S> {
    fn new(input: usize) -> InputDone<S> {
        InputDone {
            input,
            read: false,
            failure: None,
            sessions: Vec::new(),
            owned: Vec::new(),
            deferred: false,
            held: Vec::new(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn replay_one<S>(
    done: &mut InputDone<S>,
    input: usize,
    index: usize,
    mut s: Session,
    pass: Pass,
    owned: &HashSet<String>,
    prepared: &Prepared<'_>,
    options: ReplayOptions,
    stages: &Stages<'_, S>,
) {
    match pass {
        Pass::TopLevel | Pass::Family => format::owned_keys(&s, &mut done.owned),
        Pass::AgentFile | Pass::Sidechains => format::drop_replayed(&mut s, owned),
    }
    // As reading everything first does: responses are dropped (above) before
    // the session is prepared.
    if let Some(prepare) = stages.prepare {
        prepare(&mut s);
    }
    let key = SessionKey { session_id: s.id.clone(), source_path: s.source_path.clone(), input, index };
    let results = prepared.replay_scored(&s, options, stages.quality);
    let kept = (stages.sink)(&key, &s, results);
    done.sessions.push((key, kept));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::replay_many;
    use crate::replay::BuiltinResolver;
    use crate::report::{self, csv_out, transcript_jsonl};
    use crate::testing::{corpus_dir, fixtures_dir};
    use std::sync::Mutex;

    fn policies() -> Vec<Policy> {
        let mut ps = Vec::new();
        for name in ["default", "opal", "spec008"] {
            let mut p = crate::presets::require(name).unwrap();
            // Small enough that the fixtures compact and prune.
            for kv in ["context_window=6000", "compact.reserve_tokens=1000"] {
                p.apply_assignment(kv).unwrap();
            }
            ps.push(p);
        }
        ps
    }

    /// Everything written from one replay: report.json, calls.csv and every
    /// transcript by (session key, policy).
    type Outputs = (Vec<u8>, Vec<u8>, Vec<(String, PathBuf, usize, Vec<u8>)>);

    fn read_everything_first(inputs: &[Input], policies: &[Policy], jobs: usize) -> Outputs {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().unwrap();
        let batch = pool.install(|| read::read_all(inputs, None));
        let results = replay_many(&batch.sessions, policies, &BuiltinResolver, ReplayOptions::default(), &pool, None);
        let report = report::build(
            &["in".to_string()],
            batch.inputs_read,
            &batch.sessions,
            &batch.failures,
            policies,
            &results,
            false,
        );
        let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
        let mut transcripts = Vec::new();
        for r in &results {
            for (pi, t) in r.traces.iter().enumerate() {
                if let Ok(t) = t {
                    transcripts.push((r.session_id.clone(), r.source_path.clone(), pi, transcript_jsonl(t)));
                }
            }
        }
        (report::to_json(&report), csv_out::calls_csv(&results, &names), transcripts)
    }

    fn streamed(inputs: &[Input], policies: &[Policy], jobs: usize) -> Outputs {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().unwrap();
        let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
        let seen = Mutex::new(Vec::new());
        let sink = |_: &SessionKey, s: &Session, r: SessionResults| {
            let mut t = Vec::new();
            for (pi, tr) in r.traces.iter().enumerate() {
                if let Ok(tr) = tr {
                    t.push((r.session_id.clone(), r.source_path.clone(), pi, transcript_jsonl(tr)));
                }
            }
            seen.lock().unwrap().push(s.id.clone());
            (report::summarize(s, policies, &r, None), csv_out::session_call_rows(&r, &names), t)
        };
        let stages = Stages { prepare: None, quality: None, sink: &sink, select: None, families: None };
        let out =
            replay_stream(inputs, None, policies, &BuiltinResolver, ReplayOptions::default(), &pool, None, &stages);
        // Each session went through the sink once.
        assert_eq!(seen.lock().unwrap().len(), out.sessions.len());
        let summaries: Vec<_> = out.sessions.iter().map(|(_, (s, _, _))| s.clone()).collect();
        let report = report::build_from_summaries(
            &["in".to_string()],
            out.inputs_read,
            &out.failures,
            policies,
            &summaries,
            false,
        );
        let mut calls = csv_out::calls_csv(&[], &names);
        let mut transcripts = Vec::new();
        for (_, (_, rows, t)) in out.sessions {
            calls.extend(rows);
            transcripts.extend(t);
        }
        (report::to_json(&report), calls, transcripts)
    }

    /// Streaming changes nothing: the report, calls.csv and every transcript are
    /// byte-identical to reading every session first, at one and two threads, on
    /// the fixtures (every format, sub-agent files, a `/btw` aside, inline
    /// sidechains, bad lines) and on the real corpus.
    #[test]
    fn streaming_matches_reading_everything_first() {
        let policies = policies();
        let mut dirs = vec![fixtures_dir()];
        dirs.extend(corpus_dir());
        for dir in dirs {
            let (inputs, _) = read::discover(std::slice::from_ref(&dir));
            assert!(inputs.len() > 5, "{}", dir.display());
            let reference = read_everything_first(&inputs, &policies, 1);
            for jobs in [1, 2] {
                let got = streamed(&inputs, &policies, jobs);
                assert!(got.0 == reference.0, "{}: report.json differs at --jobs {jobs}", dir.display());
                assert!(got.1 == reference.1, "{}: calls.csv differs at --jobs {jobs}", dir.display());
                assert!(got.2 == reference.2, "{}: transcripts differ at --jobs {jobs}", dir.display());
            }
        }
    }
}
