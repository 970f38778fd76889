//! The Claude Code versions the generator imitates, each with its on-disk habits.

/// Agent versions the generator imitates, with the on-disk habits of each.
#[derive(Debug, Clone, Copy)]
pub(super) struct Style {
    pub(super) version: &'static str,
    pub(super) model: &'static str,
    /// Thinking text is written out (≤ 2.1.1) or left empty with only the
    /// signature (2.1.9x with Claude 4.6).
    pub(super) thinking_text: bool,
    /// `stop_reason` repeated on every block-line (2.1.x) rather than only on the last.
    pub(super) stop_every_line: bool,
    /// 2.1.x extras: `promptId`, `permissionMode`, the longer usage object,
    /// `turn_duration` records, `caller` on tool_use.
    pub(super) v21: bool,
}

pub(super) const STYLES: &[Style] = &[
    Style {
        version: "1.0.98",
        model: "claude-sonnet-4-20250514",
        thinking_text: true,
        stop_every_line: false,
        v21: false,
    },
    Style {
        version: "2.0.28",
        model: "claude-sonnet-4-5-20250929",
        thinking_text: true,
        stop_every_line: false,
        v21: false,
    },
    Style {
        version: "2.1.1",
        model: "claude-opus-4-5-20251101",
        thinking_text: true,
        stop_every_line: true,
        v21: true,
    },
    Style { version: "2.1.97", model: "claude-sonnet-4-6", thinking_text: false, stop_every_line: true, v21: true },
    Style { version: "2.1.97", model: "claude-opus-4-6", thinking_text: false, stop_every_line: true, v21: true },
];
