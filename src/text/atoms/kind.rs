//! [`AtomKind`]: the types of atoms (quality.md §c.2) and their lookup classes,
//! named here so the summarizer and the metric extract one set of types.

use serde::{Deserialize, Serialize};

/// The types of atoms (quality.md §c.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtomKind {
    /// A file the agent edited, wrote, patched or deleted (tool-call arguments).
    ModifiedPath,
    /// Any other file or directory path.
    Path,
    /// An error fingerprint, error code or non-zero exit code.
    Error,
    /// A hash, UUID, URL, issue number, version, host:port or long number.
    Id,
    /// A user sentence with must/never/always/don't/only…, as a keyword set.
    Constraint,
    /// A shell command the agent ran (`argv[0]` + subcommands + flags + paths).
    Command,
    /// A code identifier (`foo(`, `Foo.bar`, `snake_case`, `CamelCase`).
    Symbol,
    /// The pending user request. Scored by ask coverage, never part of N.
    Ask,
}

impl AtomKind {
    pub fn name(self) -> &'static str {
        match self {
            AtomKind::ModifiedPath => "modified_path",
            AtomKind::Path => "path",
            AtomKind::Error => "error",
            AtomKind::Id => "id",
            AtomKind::Constraint => "constraint",
            AtomKind::Command => "command",
            AtomKind::Symbol => "symbol",
            AtomKind::Ask => "ask",
        }
    }

    /// Index of the lookup class: a modified path and a path are the same file,
    /// so they share one key space (the modified flag is a property of where it
    /// occurs, not of the atom).
    pub(crate) fn class(self) -> Option<usize> {
        match self {
            AtomKind::ModifiedPath | AtomKind::Path => Some(0),
            AtomKind::Symbol => Some(1),
            AtomKind::Error => Some(2),
            AtomKind::Command => Some(3),
            AtomKind::Id => Some(4),
            AtomKind::Constraint => Some(5),
            AtomKind::Ask => None,
        }
    }

    /// The kind that names a lookup class (modified paths are stored as paths).
    pub(crate) fn of_class(class: usize) -> AtomKind {
        match class {
            0 => AtomKind::Path,
            1 => AtomKind::Symbol,
            2 => AtomKind::Error,
            3 => AtomKind::Command,
            4 => AtomKind::Id,
            _ => AtomKind::Constraint,
        }
    }
}

/// Number of lookup classes (see [`AtomKind::class`]).
pub(crate) const CLASSES: usize = 6;

impl std::fmt::Display for AtomKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
