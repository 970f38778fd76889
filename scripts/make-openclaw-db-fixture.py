#!/usr/bin/env python3
"""Build fixtures/pi/openclaw/agents/main/agent/openclaw-agent.sqlite: an OpenClaw
2026.9 agent database (schema 23: `transcript_events` with `event_json` or a
zstd-compressed `event_zstd`), holding two pi sessions, and its session store
(`session_nodes`, each key's current session with its entry as JSON: the first
session's records the context window it ran under). Needs the `zstd` tool.

    python3 scripts/make-openclaw-db-fixture.py
"""
import json
import os
import sqlite3
import subprocess

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "pi", "openclaw", "agents", "main", "agent",
                   "openclaw-agent.sqlite")

SCHEMA = """
CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, created_at INTEGER NOT NULL) STRICT;
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
  event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE) STRICT;
CREATE TABLE session_nodes (
  session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL,
  entry_valid INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL) STRICT;
"""


def usage(inp, out, read=0, write=0):
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write,
            "totalTokens": inp + out + read + write,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def msg(i, parent, ts, message):
    return {"type": "message", "id": i, "parentId": parent, "timestamp": ts, "message": message}


def assistant(content, u, stop="stop"):
    return {"role": "assistant", "content": content, "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": u, "stopReason": stop}


LOG = "\n".join(f"2026-09-20T08:{m:02d}:00Z worker-3 retry queue=payments attempt={m % 4} status=timeout"
                for m in range(60))

A = "9f1c2d3e-0a4b-4c5d-8e6f-7a8b9c0d1e2f"
session_a = [
    {"type": "session", "version": 3, "id": A, "timestamp": "2026-09-20T09:00:00.000Z", "cwd": "/srv/payments"},
    msg("e1", None, "2026-09-20T09:00:01.000Z",
        {"role": "user", "content": "Find why the payments worker keeps timing out; do not touch config/prod.toml"}),
    msg("e2", "e1", "2026-09-20T09:00:05.000Z",
        assistant([{"type": "toolCall", "id": "call_a1", "name": "read", "arguments": {"path": "logs/worker.log"}}],
                  usage(2400, 40, 0, 2400), "toolUse")),
    msg("e3", "e2", "2026-09-20T09:00:06.000Z",
        {"role": "toolResult", "toolCallId": "call_a1", "toolName": "read",
         "content": [{"type": "text", "text": LOG}], "isError": False}),
    msg("e4", "e3", "2026-09-20T09:00:12.000Z",
        assistant([{"type": "toolCall", "id": "call_a2", "name": "bash",
                    "arguments": {"command": "grep -n timeout_ms src/worker/queue.rs"}}],
                  usage(30, 60, 2400, 1500), "toolUse")),
    msg("e5", "e4", "2026-09-20T09:00:13.000Z",
        {"role": "toolResult", "toolCallId": "call_a2", "toolName": "bash",
         "content": [{"type": "text", "text": "41:    let timeout_ms = 250; // RetryPolicy::default"}],
         "isError": False}),
    {"type": "compaction", "id": "e6", "parentId": "e5", "timestamp": "2026-09-20T09:00:20.000Z",
     "summary": "The payments worker times out: src/worker/queue.rs line 41 sets timeout_ms = 250 "
                "(RetryPolicy::default). Do not touch config/prod.toml.",
     "firstKeptEntryId": "e4", "tokensBefore": 3990, "details": {"readFiles": ["logs/worker.log"],
                                                                 "modifiedFiles": []}},
    msg("e7", "e6", "2026-09-20T09:00:25.000Z",
        assistant([{"type": "toolCall", "id": "call_a3", "name": "edit",
                    "arguments": {"path": "src/worker/queue.rs", "oldText": "let timeout_ms = 250;",
                                  "newText": "let timeout_ms = 2_000;"}}],
                  usage(20, 80, 0, 900), "toolUse")),
    msg("e8", "e7", "2026-09-20T09:00:26.000Z",
        {"role": "toolResult", "toolCallId": "call_a3", "toolName": "edit",
         "content": [{"type": "text", "text": "Edited src/worker/queue.rs"}], "isError": False}),
    msg("e9", "e8", "2026-09-20T09:00:30.000Z",
        assistant([{"type": "text", "text": "Raised timeout_ms in src/worker/queue.rs to 2 s; "
                                            "config/prod.toml untouched."}],
                  usage(10, 40, 900, 120))),
]

B = "1b2c3d4e-5f60-4718-9a0b-c1d2e3f40516"
session_b = [
    {"type": "session", "version": 3, "id": B, "timestamp": "2026-09-21T14:00:00.000Z", "cwd": "/srv/payments"},
    msg("f1", None, "2026-09-21T14:00:01.000Z", {"role": "user", "content": "Summarize the worker log"}),
    msg("f2", "f1", "2026-09-21T14:00:04.000Z",
        assistant([{"type": "toolCall", "id": "call_b1", "name": "read", "arguments": {"path": "logs/worker.log"}}],
                  usage(2300, 30, 0, 2300), "toolUse")),
    # Stored compressed: at least 1 KiB, and the frame is smaller.
    msg("f3", "f2", "2026-09-21T14:00:05.000Z",
        {"role": "toolResult", "toolCallId": "call_b1", "toolName": "read",
         "content": [{"type": "text", "text": LOG}], "isError": False}),
    msg("f4", "f3", "2026-09-21T14:00:09.000Z",
        assistant([{"type": "text", "text": "Sixty timeouts on queue=payments, attempts 0-3."}],
                  usage(25, 50, 2300, 1200))),
]


def zstd(data):
    return subprocess.run(["zstd", "-1", "-q", "--check", "-c"], input=data, capture_output=True,
                          check=True).stdout


def main():
    if os.path.exists(OUT):
        os.remove(OUT)
    db = sqlite3.connect(OUT)
    db.executescript(SCHEMA)
    for sid, events in [(A, session_a), (B, session_b)]:
        db.execute("INSERT INTO session_windows VALUES (?, ?)", (sid, 0))
        for seq, e in enumerate(events):
            text = json.dumps(e, separators=(",", ":"))
            raw = text.encode()
            if sid == B and len(raw) >= 1024:
                db.execute("INSERT INTO transcript_events VALUES (?, ?, NULL, ?, ?, ?, ?)",
                           (sid, seq, seq, zstd(raw), len(raw), json.dumps({"version": 1})))
            else:
                db.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, NULL, NULL, NULL)",
                           (sid, seq, text, seq))
    # The store: session A ran under a configured cap of 160K; B's entry records no window.
    for key, sid, window in [("agent:main:main", A, 160000), ("agent:main:cron:digest", B, None)]:
        entry = {"sessionId": sid, "updatedAt": 1758358830000}
        if window:
            entry["contextTokens"] = window
        db.execute("INSERT INTO session_nodes VALUES (?, ?, ?, 1, ?)",
                   (key, sid, json.dumps(entry, separators=(",", ":")), 1758358830000))
    db.execute("PRAGMA user_version = 23")
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
