//! Unit tests of the event internals: the id bit set, held atoms, related paths.

use super::*;

mod bits_tests {
    use super::Bits;
    use proptest::prelude::*;

    proptest! {
        /// Bits answer as a set of ids, also for ids past the length it was made for.
        #[test]
        fn bits_are_a_set(len in 0usize..200, ids in proptest::collection::vec(0u32..300, 0..64), probe in 0u32..400) {
            let mut bits = Bits::with_len(len);
            let mut set = std::collections::HashSet::new();
            for id in ids {
                prop_assert_eq!(bits.insert(id), set.insert(id));
            }
            for id in (0..400).chain([probe]) {
                prop_assert_eq!(bits.contains(id), set.contains(&id), "{}", id);
            }
            let mut sorted: Vec<u32> = set.into_iter().collect();
            sorted.sort_unstable();
            prop_assert_eq!(bits.iter().collect::<Vec<_>>(), sorted);
        }
    }
}

mod held_tests {
    use super::{AtomKind, CompactionPoint, HeldAtoms, SessionAtoms, flag};
    use crate::quality::event_tests::arb_message;
    use crate::quality::view::{HeldKeys, Target, TextView};
    use crate::tokens::Chars4;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// A view holding some of the session's atoms by id (observation
        /// masking's P) scores and matches as the view with those atoms'
        /// keys added to it, beside a text of its own (a previous summary)
        /// that may name the same atoms: every row field, and every match of
        /// the session's atoms, their partial forms (a basename under another
        /// directory, a short SHA, a command's first two words) and the
        /// event's targets.
        #[test]
        fn held_atoms_answer_as_added_keys(
            msgs in prop::collection::vec(arb_message(), 0..12),
            cut in (0usize..14, 0usize..14, 0usize..14),
            summary in "[a-zA-Z0-9_/. :#()`'\\-\\n]{0,80}",
            pick in prop::collection::vec(any::<bool>(), 1..8),
            quote in any::<bool>(),
        ) {
            let atoms = SessionAtoms::new(&msgs, Some("/w"));
            let (a, b, c) = cut;
            let p = CompactionPoint::new(0..a, a..b, b..c.max(b));
            let prepared = atoms.prepare(&p, &Chars4);
            // Half the time the summary quotes the session, so that it lists
            // atoms the held ones list too (counted once).
            let mut summary = summary;
            if quote {
                for m in &msgs {
                    m.blocks.iter().for_each(|b| super::visit_block_text(b, &mut |t| summary.push_str(t)));
                }
            }
            let base = TextView::from_text(&summary, Some("/w"), true);
            let mut copied = base.clone();
            let mut named = base.clone();
            let n = atoms.defs.len();
            let mut held = HeldAtoms { atoms: &atoms, keys: super::Bits::with_len(n), listed: super::Bits::with_len(n) };
            let entries = (0..msgs.len()).flat_map(|m| atoms.entries_of(m).iter());
            for (e, take) in entries.zip(pick.iter().cycle()) {
                if *take {
                    let strong = e.flags & flag::STRONG != 0;
                    copied.add_key(atoms.kind_of(e.atom, e.flags), &atoms.defs[e.atom as usize].key, strong);
                    held.add(e.atom, e.flags);
                }
            }
            copied.finish_unordered();
            named.finish_unordered();
            prop_assert_eq!(
                prepared.score_view("m", &named, Some(&held), 7, 9, None),
                prepared.score_view("m", &copied, None, 7, 9, None)
            );
            let mut targets: Vec<Target> = prepared.targets.clone();
            for def in &atoms.defs {
                let kind = AtomKind::of_class(def.class);
                let target = |value: String| Target::new(kind, value, def.keywords.to_vec());
                targets.push(target(def.key.to_string()));
                targets.push(target(format!("elsewhere/{}", def.key)));
                targets.push(target(def.key.chars().take(7).collect()));
                let words: Vec<&str> = def.key.split(' ').collect();
                if words.len() >= 2 {
                    targets.push(target(format!("{} {} zz", words[0], words[1])));
                }
            }
            let held_keys: &dyn HeldKeys = &held;
            for t in &targets {
                prop_assert_eq!(named.match_score_with(t, Some(held_keys)), copied.match_score(t), "{:?}", t);
            }
        }
    }
}

mod related_path_tests {
    use super::{extract, related_path};
    use foldhash::{HashMap, HashSet};
    use proptest::prelude::*;

    /// What `related_path` answered when it read every known path.
    fn over_all(value: &str, known: &[&str]) -> bool {
        let basenames: HashSet<&str> = known.iter().map(|k| extract::basename(k)).collect();
        if !value.contains('/') {
            return basenames.contains(value);
        }
        basenames.contains(extract::basename(value))
            && known.iter().any(|k| {
                (k.len() > value.len() && k.ends_with(value) && k.as_bytes()[k.len() - value.len() - 1] == b'/')
                    || (value.len() > k.len()
                        && value.ends_with(*k)
                        && value.as_bytes()[value.len() - k.len() - 1] == b'/')
            })
    }

    proptest! {
        /// Indexing the known paths by basename changes no answer, for
        /// paths with a prefix, a suffix or a name in common, leading and
        /// trailing slashes, and empty components.
        #[test]
        fn known_paths_by_basename_answer_as_all_of_them(
            known in proptest::collection::vec("/?((a|src|lib|p.rs|q.rs|)/){0,3}(p.rs|q.rs|a|)/?", 0..8),
            value in "/?((a|src|lib|p.rs|q.rs|)/){0,3}(p.rs|q.rs|a|)/?",
        ) {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let mut by_base: HashMap<&str, Vec<&str>> = HashMap::default();
            for k in &known {
                by_base.entry(extract::basename(k)).or_default().push(k);
            }
            let of_base = |b: &str| by_base.get(b).into_iter().flatten().copied();
            prop_assert_eq!(related_path(&value, of_base), over_all(&value, &known));
        }
    }
}
