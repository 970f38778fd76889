//! report.html in a real browser: Debian's headless Chromium renders the page
//! `compactor replay` writes, a screenshot is taken, and a session whose id is
//! `<script>alert(1)</script>` shows up as text — no script element in the DOM.
//!
//! Chromium is installed by `.ci/run` when missing. Outside CI the test skips
//! with a printed reason when `/usr/bin/chromium` is absent; under `CI=true` it
//! fails instead.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stderr)] // test code

use assert_cmd::cargo::cargo_bin_cmd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const HOSTILE: &str = "<script>alert(1)</script>";

fn chromium() -> Option<PathBuf> {
    let p = PathBuf::from(CHROMIUM);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{CHROMIUM} is missing under CI=true (.ci/run installs it with apt-get install -y chromium)");
    }
    eprintln!("skipping: {CHROMIUM} is not installed (apt-get install -y chromium)");
    None
}

/// Run headless Chromium on `page` with extra args; returns stdout. Killed after
/// a minute so a hung browser fails the test instead of hanging it.
fn run_chromium(bin: &Path, profile: &Path, args: &[String], page: &Path) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().expect("reader")
}

/// A Claude Code log (the long tool-loop fixture) whose session id and model
/// name are HTML.
fn hostile_session(dir: &Path) {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/long-tool-loop.jsonl"),
    )
    .expect("fixture");
    let text = src
        .replace("044c3cd7-f43c-461c-a698-4080bab12a02", HOSTILE)
        .replace("claude-sonnet-4-5-20250929", "<img src=x onerror=alert(2)>");
    assert!(text.contains(HOSTILE));
    std::fs::write(dir.join("hostile.jsonl"), text).unwrap();
    // A compaction the agent recorded, with markup in its summary.
    let recorded =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/compaction-v1.jsonl"))
            .expect("fixture")
            .replace("4. Pending: make", "4. <img src=x onerror=alert(7)> Pending: make");
    assert!(recorded.contains("alert(7)"));
    std::fs::write(dir.join("recorded.jsonl"), recorded).unwrap();
}

#[test]
fn report_html_renders_charts_and_log_strings_as_text() {
    let Some(bin) = chromium() else { return };
    let input = tempfile::tempdir().unwrap();
    hostile_session(input.path());
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .args(["replay", "--quiet", "--preset", "default", "--preset", "opal", "--set", "context_window=20000"])
        .arg(input.path())
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let page = out.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The file itself: the hostile strings only escaped, nothing fetched.
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.to_ascii_lowercase().contains("<script"), "a script element in report.html");
    assert!(!html.contains("<img"));
    // Self-contained: no URL but the SVG namespace.
    assert!(!html.replace("http://www.w3.org/2000/svg", "").contains("http://"));
    assert!(!html.contains("https://"));

    let profile = tempfile::tempdir().unwrap();
    let dom = run_chromium(&bin, profile.path(), &["--dump-dom".to_string()], &page);
    assert!(dom.contains("<svg"), "the DOM has no SVG: {}", &dom[..dom.len().min(500)]);
    assert!(dom.matches("<polyline").count() >= 3, "context lines missing");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the session id is not shown as text");
    assert!(!dom.to_ascii_lowercase().contains("<script"), "the browser built a script element");
    assert!(!dom.contains("<img"), "the browser built an img element");
    // The agent's own compaction: its summary in a <details>, as text.
    assert!(dom.contains("<details>"), "no recorded compaction shown");
    assert!(dom.contains("&lt;img src=x onerror=alert(7)&gt;"), "the recorded summary is not shown as text");
    // Charts first, for the sessions where something happened; the baseline
    // drawn last, dashed, over the policies' lines.
    let at = |h: &str| dom.find(h).unwrap_or_else(|| panic!("no {h}"));
    assert!(
        at("<h2>Context size per call</h2>") < at("<h2>Savings across sessions</h2>"),
        "charts after the distributions"
    );
    assert!(dom.contains("Sessions where a policy compacted, a call went over the window, or the agent compacted"));
    let chart = &dom[at("<h2>Context size per call</h2>")..];
    let last_line = chart[..chart.find("</svg>").unwrap()].rfind("<polyline").unwrap();
    assert!(
        chart[last_line..].starts_with("<polyline") && chart[last_line..].contains("stroke-dasharray=\"7 5\""),
        "the baseline is not on top"
    );
    // The policies' compactions too, each with what it lost.
    assert!(
        dom.contains("What each compaction lost") && dom.contains("<summary>opal, compaction 0 (call "),
        "no policy compaction shown"
    );

    let shot = out.path().join("report.png");
    run_chromium(
        &bin,
        profile.path(),
        &[format!("--screenshot={}", shot.display()), "--window-size=1280,2000".to_string()],
        &page,
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A blank page compresses to a few KB; charts and tables do not.
    assert!(png.len() > 30_000, "screenshot of {} bytes looks empty", png.len());
    if let Ok(dir) = std::env::var("COMPACTOR_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, Path::new(&dir).join("report.png")).unwrap();
    }
}

/// Markup in a session id, a model name, a cwd, a source path and a policy name
/// (so in every series label): each lands in report.html as escaped text, in
/// each place it is shown. Needs no browser.
#[test]
fn every_log_string_lands_escaped_in_report_html() {
    const ID: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>&amp;";
    const POLICY: &str = "<script>alert(3)</script>\"><img src=x onerror=alert(4)>&amp;";
    const DIR: &str = "\"><img src=x onerror=alert(5)>&amp;";
    // Control characters (HTML forbids them) in a second session's id.
    const CONTROLS: &str = "ctl\u{1}\u{1b}[31m\u{7f}\u{85}end";
    let json = |s: &str| serde_json::to_string(s).unwrap().trim_matches('"').to_string();
    let esc = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");

    let input = tempfile::tempdir().unwrap();
    let dir = input.path().join(DIR);
    std::fs::create_dir(&dir).unwrap();
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/long-tool-loop.jsonl"),
    )
    .expect("fixture");
    let text = src
        .replace("044c3cd7-f43c-461c-a698-4080bab12a02", &json(ID))
        .replace("/home/dev/src/api-server", &json(&format!("/home/{ID}")))
        .replace("claude-sonnet-4-5-20250929", &json(DIR));
    std::fs::write(dir.join("hostile.jsonl"), text).unwrap();
    // Its responses under ids of its own: the same ids would make it a copy
    // of the first, its calls counted there.
    let controls = src.replace("044c3cd7-f43c-461c-a698-4080bab12a02", &json(CONTROLS)).replace("\"msg_", "\"msg_ctl");
    std::fs::write(dir.join("controls.jsonl"), controls).unwrap();
    // A compaction the agent recorded, its summary and a needed path hostile.
    const SUMMARY_HOSTILE: &str = "<script>alert(6)</script>";
    let recorded =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-code/compaction-v1.jsonl"))
            .expect("fixture")
            .replace("4. Pending: make", &json(&format!("{SUMMARY_HOSTILE} Pending: make")));
    std::fs::write(dir.join("recorded.jsonl"), recorded).unwrap();
    let policy = input.path().join("hostile.toml");
    // A TOML basic string takes JSON's escapes.
    let toml = format!("base = \"opal\"\nname = {}\n", serde_json::to_string(POLICY).unwrap());
    std::fs::write(&policy, toml).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = cargo_bin_cmd!("compactor")
        .args(["replay", "--quiet", "--preset", "default", "--set", "context_window=20000", "--policy"])
        .arg(&policy)
        .arg(&dir)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();

    assert!(!html.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')), "a control character");
    assert!(html.contains("<h3>ctl\u{FFFD}\u{FFFD}[31m\u{FFFD}\u{FFFD}end</h3>"), "the id, its controls replaced");
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script") && !lower.contains("<img"), "markup reached the page");
    assert!(html.contains("<h2>The agent's own compactions</h2>") && html.contains("<details>"), "no recorded section");
    assert!(html.contains(&esc(SUMMARY_HOSTILE)), "the recorded summary, escaped");
    // Each policy compaction in its own <details>, named by the (hostile) policy.
    assert!(html.contains("<h2>What each compaction lost</h2>"), "no policy compactions section");
    let (id, policy) = (esc(ID), esc(POLICY));
    assert!(id.contains("&amp;amp;") && id.contains("&quot;&gt;&lt;img"));
    for shown in [
        // The session: its heading, its chart's label, its source path.
        format!("<h3>{id}</h3>"),
        format!("aria-label=\"context size per call of session {id}\""),
        format!("{}/hostile.jsonl · ", esc(&dir.display().to_string())),
        // The policy: the run line, the compare table, the legends, the bars'
        // and compaction markers' tooltips, the FRR series.
        format!("<code>{policy}</code>"),
        format!("<th>{policy}</th>"),
        format!("</i>{policy}</span>"),
        format!("<title>{policy}: "),
        format!(" ({policy})</title>"),
        format!("</i>{policy} FRR</span>"),
        // A policy compaction's <details>.
        format!("<summary>{policy}, compaction 0 (call "),
    ] {
        assert!(html.contains(&shown), "not in report.html: {shown}");
    }
}
