//! Where each agent keeps its logs, looked in when no path is given: the home
//! directory, the environment variables that move an agent's folders, and the
//! OS. Each format names its own places ([`LogFormat::default_locations`]);
//! docs/discovery.md gives the sources each one was checked against.
//!
//! [`LogFormat::default_locations`]: super::format::LogFormat::default_locations

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The operating system whose conventions place an agent's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    /// The OS this binary runs on (other Unixes follow Linux's conventions).
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// A user's home directory, environment and OS: what the default locations
/// are computed from (a test builds one with a fake home).
#[derive(Debug, Clone)]
pub struct Home {
    dir: PathBuf,
    vars: BTreeMap<String, String>,
    os: Os,
}

impl Home {
    /// The running user's: `$HOME` (`%USERPROFILE%` on Windows) and the
    /// process environment. `None` without a home directory.
    pub fn from_env() -> Option<Home> {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        let os = Os::current();
        let dir = vars
            .get("HOME")
            .or_else(|| if os == Os::Windows { vars.get("USERPROFILE") } else { None })
            .filter(|d| !d.trim().is_empty())?;
        Some(Home { dir: PathBuf::from(dir), vars, os })
    }

    /// A home at `dir` with no environment variable set.
    pub fn new(dir: impl Into<PathBuf>, os: Os) -> Home {
        Home { dir: dir.into(), vars: BTreeMap::new(), os }
    }

    /// The same home with `name` set to `value`.
    pub fn with_var(mut self, name: &str, value: &str) -> Home {
        self.vars.insert(name.to_string(), value.to_string());
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn os(&self) -> Os {
        self.os
    }

    /// `dir` under the home directory.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The environment variable `name` as a path, when set and not empty; a
    /// leading `~` is the home directory (as the agents expand it).
    pub fn var(&self, name: &str) -> Option<PathBuf> {
        let v = self.vars.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())?;
        Some(match v.strip_prefix('~') {
            Some("") => self.dir.clone(),
            Some(rest) if rest.starts_with(['/', '\\']) => self.dir.join(&rest[1..]),
            _ => PathBuf::from(v),
        })
    }

    /// `$name` when set, else `default` under the home directory.
    pub fn var_or(&self, name: &str, default: &str) -> PathBuf {
        self.var(name).unwrap_or_else(|| self.join(default))
    }

    /// Where applications keep per-user settings and data: `$XDG_CONFIG_HOME`
    /// or `~/.config` on Linux, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows.
    pub fn app_config(&self) -> PathBuf {
        match self.os {
            Os::Linux => self.var_or("XDG_CONFIG_HOME", ".config"),
            Os::MacOs => self.join("Library/Application Support"),
            Os::Windows => self.var_or("APPDATA", "AppData/Roaming"),
        }
    }
}

/// One place where an agent keeps its logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The agent, as people call it (`Claude Code`, `OpenClaw`…).
    pub agent: &'static str,
    pub path: PathBuf,
}

impl Location {
    pub fn new(agent: &'static str, path: PathBuf) -> Location {
        Location { agent, path }
    }
}

/// Every default location of every format, existing or not, in registry order.
pub fn all(home: &Home) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    for f in super::format::FORMATS {
        for l in f.default_locations(home) {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_move_folders_and_tilde_is_home() {
        let home = Home::new("/h", Os::Linux).with_var("A", "~/x").with_var("B", "  ").with_var("C", "/abs");
        assert_eq!(home.var("A"), Some(PathBuf::from("/h/x")));
        assert_eq!(home.var("B"), None, "an empty variable is unset");
        assert_eq!(home.var_or("B", ".b"), PathBuf::from("/h/.b"));
        assert_eq!(home.var_or("C", ".c"), PathBuf::from("/abs"));
        assert_eq!(home.app_config(), PathBuf::from("/h/.config"));
        assert_eq!(Home::new("/h", Os::MacOs).app_config(), PathBuf::from("/h/Library/Application Support"));
        let win = Home::new("C:/Users/u", Os::Windows).with_var("APPDATA", "C:/Users/u/AppData/Roaming");
        assert_eq!(win.app_config(), PathBuf::from("C:/Users/u/AppData/Roaming"));
    }

    /// Cline's tasks live in the editor's global storage, whose place is the
    /// OS's: each OS gets its own, and the home-relative ones on every OS.
    #[test]
    fn each_os_has_its_own_editor_storage() {
        let cline = |home: &Home| -> Vec<PathBuf> {
            all(home).into_iter().filter(|l| l.agent == "Cline").map(|l| l.path).collect()
        };
        let tasks = "User/globalStorage/saoudrizwan.claude-dev/tasks";
        let mac = cline(&Home::new("/Users/u", Os::MacOs));
        assert_eq!(mac[0], Path::new("/Users/u/Library/Application Support/Code").join(tasks));
        let win = cline(&Home::new("C:/Users/u", Os::Windows).with_var("APPDATA", "C:/Users/u/AppData/Roaming"));
        assert_eq!(win[0], Path::new("C:/Users/u/AppData/Roaming/Code").join(tasks));
        let linux = cline(&Home::new("/home/u", Os::Linux));
        assert_eq!(linux[0], Path::new("/home/u/.config/Code").join(tasks));
        for v in [&mac, &win, &linux] {
            assert!(v.iter().any(|p| p.ends_with(".cline/data/tasks")), "{v:?}");
            assert!(v.iter().any(|p| p.to_string_lossy().contains("Cursor")), "{v:?}");
        }
        // Every agent has a place on every OS.
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            let agents: Vec<&str> = all(&Home::new("/h", os)).iter().map(|l| l.agent).collect();
            for a in ["Claude Code", "Codex CLI", "pi", "OpenClaw", "Gemini CLI", "Cline", "Roo Code", "Kilo Code"] {
                assert!(agents.contains(&a), "{os:?}: {a}");
            }
        }
    }
}
