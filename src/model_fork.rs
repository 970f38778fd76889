//! A session's history copied from another (forks): what its calls are once
//! the batch is known, and what a policy replaying it sees.

use super::Session;

impl Session {
    /// Settle the history this fork copied from its parent, once it is known
    /// whether the batch read the parent too. If it did, the calls and API
    /// errors of that history are the parent's, counted there, and leave this
    /// session, which starts from the history as context. If not, this log is
    /// the only record of them here: the session is read whole, as its own.
    pub fn settle_fork(&mut self, parent_read: bool) {
        if self.forked_from.is_none() || self.inherited == 0 {
            return;
        }
        if !parent_read {
            self.inherited = 0;
            return;
        }
        let k = self.inherited;
        self.calls.retain(|c| c.message_index >= k);
        let first_own_line = self.messages.get(k).map_or(u64::MAX, |m| m.source_line);
        // Outputs the other session cleared were cleared by its process; this
        // one starts with them whole (a record after the copied history is its own).
        let last_copied_line = k.checked_sub(1).and_then(|i| self.messages.get(i)).map_or(0, |m| m.source_line);
        self.recorded_clearings.retain(|c| c.source_line > last_copied_line);
        self.errors.retain(|e| e.source_line >= first_own_line);
    }

    /// The messages a policy replay does not see (`true`): those the agent
    /// never sent ([`super::Message::unsent`]), those the agent's
    /// own compactions inserted, and, in the history the session inherited
    /// ([`Session::inherited`]), what the agent had already dropped when this
    /// session began. A policy takes that history as the agent had it then
    /// (with the summary and the kept part of its last compaction there): it
    /// starts from it, as the session did.
    pub fn hidden_from_policy(&self) -> Vec<bool> {
        let n = self.messages.len();
        let mut hidden = self.inserted_mask();
        let inherited = self.inherited.min(n);
        let last =
            self.recorded_compactions.iter().filter(|c| c.inserted.start < inherited).max_by_key(|c| c.inserted.start);
        if let Some(c) = last {
            for (i, h) in hidden[..inherited].iter_mut().enumerate() {
                *h = !(c.keeps(i) || i >= c.inserted.start);
            }
        }
        for (h, m) in hidden.iter_mut().zip(&self.messages) {
            *h |= m.unsent;
        }
        hidden
    }

    /// The indices of the messages the agent never sent ([`super::Message::unsent`]),
    /// in order.
    pub fn unsent_indices(&self) -> Vec<usize> {
        self.messages.iter().enumerate().filter(|(_, m)| m.unsent).map(|(i, _)| i).collect()
    }

    /// Per message: whether one of the agent's own compactions inserted it
    /// ([`Session::is_inserted`], for every message at once).
    pub fn inserted_mask(&self) -> Vec<bool> {
        let n = self.messages.len();
        let mut inserted = vec![false; n];
        for rc in &self.recorded_compactions {
            // Clamped first: an out-of-range `inserted` (a hand-built or
            // corrupt session) would otherwise index past the end.
            let a = rc.inserted.start.min(n);
            inserted[a..rc.inserted.end.clamp(a, n)].fill(true);
        }
        inserted
    }

    /// Whether the log records a compaction of this session's own, past the
    /// history it inherited ([`Session::inherited`]).
    pub fn has_own_compactions(&self) -> bool {
        self.recorded_compactions.iter().any(|c| c.inserted.start >= self.inherited)
    }
}
