//! Persistence (`state_dir` / `--state-dir`): the switch's flows, groups,
//! meters and configuration survive a restart and a crash.
//!
//! # File
//!
//! One file, `STATE_DIR/state.oxf`, in the `ofp::snapshot` format (the
//! OpenFlow messages that re-create the state, with a length header and a
//! CRC-32 trailer). It is replaced whole: written to `state.oxf.tmp`,
//! `fsync`ed, renamed over `state.oxf`, and the directory `fsync`ed. A
//! crash at any point leaves either the old or the new file; a torn or
//! corrupt file fails the checksum and is refused as a whole.
//!
//! # When it is written (durability)
//!
//! After a change (flow-, group-, meter-, port-mod, set-config, committed
//! bundle, expired flows) the state is *dirty*. A dirty state is written
//! - before the reply to every BARRIER_REQUEST and before every bundle
//!   COMMIT_REPLY: everything a barrier reply or a commit reply
//!   acknowledges is on disk;
//! - otherwise at most [`WRITE_INTERVAL`] after the change (coalesced:
//!   one write for any number of changes);
//! - on a clean shutdown.
//!
//! Each write is a full snapshot (O(flows)): a controller that sends a
//! barrier after every flow-mod pays one snapshot per barrier.
//!
//! # Restore
//!
//! At start, before any controller or management connection is accepted,
//! the file is loaded and applied as one atomic commit (all or nothing,
//! `Datapath::restore`). Timeouts start again at the restore; counters
//! start at zero. If the file is refused (not an oxflow state file, torn,
//! corrupt, or a message the switch no longer accepts, e.g. an output to a
//! port it no longer has), `state_corrupt` decides:
//! - `"refuse"` (default): the switch does not start, and says why;
//! - `"empty"`: the switch logs the reason, moves the file aside to
//!   `state.oxf.corrupt` (kept for inspection) and starts with no flows.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::datapath::Datapath;

/// The state file's name in the state directory.
pub const STATE_FILE: &str = "state.oxf";
/// Longest time a change waits before it is written (module comment).
pub const WRITE_INTERVAL: Duration = Duration::from_secs(1);

/// What to do with a state file that cannot be restored (`state_corrupt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnCorrupt {
    /// Do not start.
    #[default]
    Refuse,
    /// Start with no state (the file is moved aside).
    Empty,
}

impl FromStr for OnCorrupt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "refuse" => Ok(OnCorrupt::Refuse),
            "empty" => Ok(OnCorrupt::Empty),
            _ => Err(format!(
                "unknown state_corrupt \"{s}\" (expected refuse or empty)"
            )),
        }
    }
}

/// Writes the state file (module comment); owned by the datapath.
#[derive(Debug)]
pub struct Persister {
    dir: PathBuf,
    /// Changes not yet written.
    pub dirty: bool,
    /// When the file was last written (or the persister made).
    pub last_write: Instant,
    /// Snapshots written.
    pub writes: u64,
}

impl Persister {
    /// A persister for `dir`, created if missing.
    pub fn new(dir: &Path) -> Result<Persister, String> {
        fs::create_dir_all(dir).map_err(|e| format!("state_dir {}: {e}", dir.display()))?;
        Ok(Persister {
            dir: dir.to_path_buf(),
            dirty: false,
            last_write: Instant::now(),
            writes: 0,
        })
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    /// Replaces the state file with `bytes` (module comment "File").
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.dir.join(format!("{STATE_FILE}.tmp"));
        {
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, self.path())?;
        File::open(&self.dir)?.sync_all()?;
        self.dirty = false;
        self.last_write = Instant::now();
        self.writes += 1;
        Ok(())
    }
}

/// Loads `dir`'s state file into `dp` (module comment "Restore"), then
/// hands `dp` the persister. `Err` only when the switch must not start.
pub fn restore(dp: &mut Datapath, dir: &Path, on_corrupt: OnCorrupt) -> Result<(), String> {
    let p = Persister::new(dir)?;
    let path = p.path();
    let result = match fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::info!("state: no {} yet, starting empty", path.display());
            Ok(None)
        }
        Err(e) => Err(format!("cannot read: {e}")),
        Ok(bytes) => ofp::snapshot::decode(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|msgs| dp.restore(msgs).map(Some)),
    };
    match result {
        Ok(Some(n)) => tracing::info!(
            "state: restored {n} messages from {} ({} flows)",
            path.display(),
            dp.pipeline.tables().iter().map(|t| t.len()).sum::<usize>()
        ),
        Ok(None) => {}
        Err(why) => {
            let why = format!("state file {}: {why}", path.display());
            match on_corrupt {
                OnCorrupt::Refuse => {
                    return Err(format!(
                        "{why}; not starting (state_corrupt = \"refuse\"): move the file \
                         away, or set state_corrupt = \"empty\" to start without it"
                    ))
                }
                OnCorrupt::Empty => {
                    let aside = dir.join(format!("{STATE_FILE}.corrupt"));
                    let moved = fs::rename(&path, &aside);
                    tracing::error!(
                        "{why}; starting with no flows (state_corrupt = \"empty\"){}",
                        match moved {
                            Ok(()) => format!(", the file moved to {}", aside.display()),
                            Err(e) => format!(" (could not move it aside: {e})"),
                        }
                    );
                }
            }
        }
    }
    dp.set_persister(p);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::{Clock, DpConfig};
    use ofp::message::{Message, SwitchConfig};

    fn dp() -> Datapath {
        Datapath::start(DpConfig::default(), Vec::new(), Clock::real())
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("oxflow-persist-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn state_survives_a_restart_and_corruption_is_refused_or_set_aside() {
        let dir = tmpdir("restart");
        let mut a = dp();
        restore(&mut a, &dir, OnCorrupt::Refuse).unwrap();
        let set = Message::SetConfig(SwitchConfig {
            flags: 0,
            miss_send_len: 77,
        });
        let m = ofp::OfpMessage::new(1, set);
        let raw = m.encode();
        a.handle_message(m, &raw);
        a.mark_dirty_for_tests();
        a.save_if_dirty();
        assert_eq!(a.state_writes(), 1);
        a.save_if_dirty();
        assert_eq!(a.state_writes(), 1, "nothing changed, nothing written");
        a.shutdown();

        let mut b = dp();
        restore(&mut b, &dir, OnCorrupt::Refuse).unwrap();
        assert_eq!(b.switch_config.miss_send_len, 77);
        b.shutdown();

        // A torn file (the last byte missing) is refused as a whole...
        let path = dir.join(STATE_FILE);
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let mut c = dp();
        let e = restore(&mut c, &dir, OnCorrupt::Refuse).unwrap_err();
        assert!(e.contains("truncated") && e.contains("not starting"), "{e}");
        assert_eq!(c.switch_config.miss_send_len, 128);
        c.shutdown();
        // ... or set aside, and the switch starts empty.
        let mut d = dp();
        restore(&mut d, &dir, OnCorrupt::Empty).unwrap();
        assert_eq!(d.switch_config.miss_send_len, 128);
        assert!(!path.exists());
        assert!(dir.join(format!("{STATE_FILE}.corrupt")).exists());
        d.shutdown();
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn config_keys() {
        let c = crate::config::Config::parse(
            "state_dir = \"st\"\nstate_corrupt = \"empty\"\n",
            "/etc/oxflow/x.toml",
        )
        .unwrap();
        assert_eq!(c.state_dir, Some(PathBuf::from("/etc/oxflow/st")));
        assert_eq!(c.state_corrupt, OnCorrupt::Empty);
        let e = crate::config::Config::parse("state_corrupt = \"maybe\"\n", "x.toml").unwrap_err();
        assert!(
            e.0.contains("x.toml:1:17") && e.0.contains("refuse or empty"),
            "{e}"
        );
    }
}
