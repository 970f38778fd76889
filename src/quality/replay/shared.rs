//! Scores shared across policies: a compaction point that several policies reach with
//! the same history is prepared and scored once.

use super::*;
use crate::quality::RowScore;

/// Text views and policy-row scores of one session, shared by many replays of
/// it (the grid points of a sweep). Points that compact at the same place with
/// the same summary ask the same question: on the corpus's 72-point grid, 1,812
/// applied compactions hold 462 distinct events and 435 distinct summaries, so
/// each is read and scored once. Keys hold everything the score depends on,
/// compared exactly (each text is interned once, so an event's key is a few
/// numbers); values are exactly what a fresh computation gives, so results do
/// not depend on which point came first (nor on `--jobs`).
#[derive(Default)]
pub struct SharedScores {
    texts: Mutex<Texts>,
    rows: Mutex<foldhash::HashMap<EventKey, RowScore>>,
}

/// The texts of one session's events (summaries, replaced and kept summary
/// texts), each with an id and, once read, its view.
#[derive(Default)]
struct Texts {
    ids: foldhash::HashMap<Box<str>, u32>,
    views: Vec<Option<Arc<TextView>>>,
}

/// Everything the policy row of one event depends on: the estimator, the
/// point (P, T, F and their extra texts) and the summary; texts by id.
#[derive(PartialEq, Eq, Hash)]
struct EventKey {
    estimator: &'static str,
    replaced: Vec<Range<usize>>,
    replaced_text: Vec<u32>,
    kept: Vec<Range<usize>>,
    kept_text: Vec<u32>,
    future: Range<usize>,
    replaced_tokens: Option<u64>,
    kept_tokens: Option<u64>,
    summary: u32,
}

impl SharedScores {
    /// Forget everything (the session's last replay is done).
    pub fn clear(&self) {
        if let Ok(mut t) = self.texts.lock() {
            *t = Texts::default();
        }
        if let Ok(mut r) = self.rows.lock() {
            *r = Default::default();
        }
    }

    /// The id of `text` (the same for equal texts); `None` if a panic
    /// elsewhere poisoned the lock (the caller then scores afresh).
    fn id(&self, text: &str) -> Option<u32> {
        let mut t = self.texts.lock().ok()?;
        if let Some(&id) = t.ids.get(text) {
            return Some(id);
        }
        let id = u32::try_from(t.views.len()).ok()?;
        t.ids.insert(text.into(), id);
        t.views.push(None);
        Some(id)
    }

    /// The view of text `id`, read once; without an id (a poisoned lock)
    /// read afresh.
    fn view(&self, atoms: &SessionAtoms<'_>, id: Option<u32>, text: &str) -> Arc<TextView> {
        let Some(i) = id.map(|id| id as usize) else { return Arc::new(atoms.text_view(text)) };
        if let Some(v) = self.texts.lock().ok().and_then(|t| t.views.get(i).cloned().flatten()) {
            return v;
        }
        // Built outside the lock: another thread may build the same view; both
        // are equal, and the first one stored wins.
        let v = Arc::new(atoms.text_view(text));
        let Ok(mut t) = self.texts.lock() else { return v };
        match t.views.get_mut(i) {
            Some(Some(first)) => first.clone(),
            Some(slot) => slot.insert(v).clone(),
            None => v,
        }
    }
}

impl EventKey {
    /// The key of an event, or `None` if a text could not be interned.
    fn of(
        shared: &SharedScores,
        estimator: &dyn Estimator,
        point: &CompactionPoint,
        summary: &str,
    ) -> Option<EventKey> {
        let ids = |texts: &[String]| texts.iter().map(|t| shared.id(t)).collect::<Option<Vec<u32>>>();
        Some(EventKey {
            estimator: crate::replay::estimator_name(estimator.kind()),
            replaced: point.replaced.clone(),
            replaced_text: ids(&point.replaced_text)?,
            kept: point.kept.clone(),
            kept_text: ids(&point.kept_text)?,
            future: point.future.clone(),
            replaced_tokens: point.replaced_tokens,
            kept_tokens: point.kept_tokens,
            summary: shared.id(summary)?,
        })
    }
}

/// The sums of [`SessionQuality::score`] for `trace`, without references or
/// pruning loss, reading and scoring each distinct view and event once per
/// `shared` (see [`SharedScores`]). Equal to
/// `evaluate_trace(.., QualityOptions { references and pruning off }).score()`.
pub fn score_trace_shared(
    session: &Session,
    trace: &SessionTrace,
    atoms: &SessionAtoms<'_>,
    estimator: &dyn Estimator,
    cumulative_file_ops: bool,
    shared: &SharedScores,
) -> QualityScore {
    let (points, _) = walk(session, trace, cumulative_file_ops);
    let mut score = QualityScore::default();
    for tp in points {
        let summary = &trace.compactions[tp.compaction].summary;
        let key = EventKey::of(shared, estimator, &tp.point, summary);
        let cached = key.as_ref().and_then(|k| shared.rows.lock().ok().and_then(|m| m.get(k).copied()));
        let row = match cached {
            Some(r) => r,
            None => {
                let views = |texts: &[String], ids: Option<&Vec<u32>>| -> Vec<Arc<TextView>> {
                    let id = |i: usize| ids.and_then(|ids| ids.get(i).copied());
                    texts.iter().enumerate().map(|(i, t)| shared.view(atoms, id(i), t)).collect()
                };
                let replaced = views(&tp.point.replaced_text, key.as_ref().map(|k| &k.replaced_text));
                let kept = views(&tp.point.kept_text, key.as_ref().map(|k| &k.kept_text));
                let prepared =
                    atoms.prepare_views(&tp.point, estimator, borrowed_views(&replaced), borrowed_views(&kept));
                let own = shared.view(atoms, key.as_ref().map(|k| k.summary), summary);
                let q = prepared.score_text_view(CANDIDATE_POLICY, summary, &own);
                let r = RowScore::of(&q);
                if let (Some(key), Ok(mut m)) = (key, shared.rows.lock()) {
                    m.insert(key, r);
                }
                r
            }
        };
        score.add_row(row);
    }
    score
}

fn borrowed_views(views: &[Arc<TextView>]) -> Vec<Cow<'_, TextView>> {
    views.iter().map(|a| Cow::Borrowed(&**a)).collect()
}
