//! What is on disk under the watched directories, as a comparable [`Snapshot`]: a content hash
//! per file, the target of every symbolic link (never followed), and, while the tree is small,
//! the files' bytes, so a snapshot can put the tree back ([`Snapshot::restore`]) before a call
//! is tried again. Bounded: past [`MAX_ENTRIES`] entries or [`MAX_BYTES`] of files the walk stops
//! and says so ([`Snapshot::over`]).

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most entries one snapshot walks.
///
/// Why: a tool that writes thousands of files has already shown what it does; hashing more
/// only costs time between tools.
pub const MAX_ENTRIES: usize = 20_000;
/// The most bytes of files one snapshot reads (a tool that writes gigabytes is reported, not
/// hashed to the end).
pub const MAX_BYTES: u64 = 256 << 20;
/// The most bytes of files a snapshot keeps to put the tree back; past it, a call that wrote is
/// found without putting the tree back between tries (and not shrunk).
pub const KEEP_BYTES: u64 = 16 << 20;

/// One entry of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory.
    Dir,
    /// A regular file: its length and content hash, and its bytes while the tree is small.
    File {
        /// Bytes.
        len: u64,
        /// When it was last written: a file of the same length and time is not read again.
        modified: Option<std::time::SystemTime>,
        /// A hash of the content.
        hash: u64,
        /// The content, kept for [`Snapshot::restore`] (not compared).
        bytes: Option<Arc<[u8]>>,
    },
    /// A symbolic link and where it points (never followed).
    Link(PathBuf),
    /// A file that could not be read, with the reason.
    Unreadable(String),
    /// A socket, FIFO or device.
    Special,
}

impl Entry {
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::File { len: a, hash: h, .. }, Self::File { len: b, hash: g, .. }) => {
                a == b && h == g
            }
            (a, b) => a == b,
        }
    }
}

/// The watched tree at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    entries: BTreeMap<PathBuf, Entry>,
    /// Why the walk stopped early, if it did (the tree is too big to compare).
    pub over: Option<String>,
    /// Whether every file's bytes were kept.
    complete: bool,
    /// When the walk began.
    taken: Option<std::time::SystemTime>,
}

/// How long before a walk a file must have been written for its time to be trusted by the
/// next walk.
///
/// Why: file times are as coarse as the kernel's clock tick (4 ms and more), so a file
/// rewritten with the same length just after a walk may keep its time ("racy git").
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// What changed between two snapshots, by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// New entries.
    pub created: Vec<PathBuf>,
    /// Entries whose content (or link target, or type) changed.
    pub changed: Vec<PathBuf>,
    /// Entries gone.
    pub removed: Vec<PathBuf>,
}

impl Changes {
    /// Nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// "created notes/a.txt; changed db.json", each path as `name` writes it, at most `max` of
    /// them named per verb.
    #[must_use]
    pub fn words(&self, name: impl Fn(&Path) -> String, max: usize) -> String {
        let mut parts = Vec::new();
        for (verb, paths) in
            [("created", &self.created), ("changed", &self.changed), ("removed", &self.removed)]
        {
            if paths.is_empty() {
                continue;
            }
            let shown: Vec<String> = paths.iter().take(max).map(|p| name(p)).collect();
            let more = paths.len().saturating_sub(max);
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            parts.push(format!("{verb} {}{tail}", shown.join(", ")));
        }
        parts.join("; ")
    }

    /// Every path, created, changed then removed, as `name` writes it.
    #[must_use]
    pub fn paths(&self, name: impl Fn(&Path) -> String) -> Vec<String> {
        self.created.iter().chain(&self.changed).chain(&self.removed).map(|p| name(p)).collect()
    }
}

impl Snapshot {
    /// Walks `dirs` (each absent one is an empty tree); a file whose length and modification
    /// time are those it had in `since` is not read again.
    #[must_use]
    pub fn take(dirs: &[PathBuf], since: Option<&Self>) -> Self {
        let mut snap =
            Self { complete: true, taken: Some(std::time::SystemTime::now()), ..Self::default() };
        let settled = since.and_then(|s| s.taken).and_then(|t| t.checked_sub(SETTLED));
        let (mut bytes, mut kept) = (0u64, 0u64);
        let mut stack: Vec<PathBuf> = dirs.iter().rev().cloned().collect();
        while let Some(dir) = stack.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else { continue };
            let mut names: Vec<_> = listing.filter_map(Result::ok).collect();
            names.sort_by_key(std::fs::DirEntry::file_name);
            for e in names {
                if snap.entries.len() >= MAX_ENTRIES {
                    snap.over = Some(format!("more than {MAX_ENTRIES} files"));
                    return snap;
                }
                let path = e.path();
                let Ok(kind) = e.file_type() else { continue };
                let entry = if kind.is_symlink() {
                    Entry::Link(std::fs::read_link(&path).unwrap_or_default())
                } else if kind.is_dir() {
                    stack.push(path.clone());
                    Entry::Dir
                } else if kind.is_file() {
                    let meta = e.metadata().ok();
                    let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
                    let modified = meta.and_then(|m| m.modified().ok());
                    bytes += len;
                    if bytes > MAX_BYTES {
                        snap.over = Some(format!("more than {} MiB of files", MAX_BYTES >> 20));
                        return snap;
                    }
                    let keep = kept + len <= KEEP_BYTES;
                    kept += if keep { len } else { 0 };
                    snap.complete &= keep;
                    let known = since.and_then(|s| s.entries.get(&path)).filter(|e| match e {
                        Entry::File { len: l, modified: m, bytes, .. } => {
                            let old_enough = settled.zip(*m).is_some_and(|(s, m)| m < s);
                            *l == len && *m == modified && old_enough && (!keep || bytes.is_some())
                        }
                        _ => false,
                    });
                    known.cloned().unwrap_or_else(|| file_entry(&path, keep, modified))
                } else {
                    Entry::Special
                };
                snap.entries.insert(path, entry);
            }
        }
        snap
    }

    /// What changed from `self` to `after`; nothing when either walk stopped early.
    #[must_use]
    pub fn changes(&self, after: &Self) -> Changes {
        let mut c = Changes::default();
        if self.over.is_some() || after.over.is_some() {
            return c;
        }
        for (path, entry) in &after.entries {
            match self.entries.get(path) {
                None => c.created.push(path.clone()),
                Some(old) if !old.same(entry) && !stat_cache_only(path, old, entry) => {
                    c.changed.push(path.clone());
                }
                Some(_) => {}
            }
        }
        c.removed =
            self.entries.keys().filter(|p| !after.entries.contains_key(*p)).cloned().collect();
        c
    }

    /// Symbolic links that point out of `root` (absolute, or climbing out with `..`), as
    /// (link, target): reported, never followed.
    #[must_use]
    pub fn escapes(&self, root: &Path) -> Vec<(PathBuf, PathBuf)> {
        self.entries
            .iter()
            .filter_map(|(path, e)| match e {
                Entry::Link(target) => {
                    let at = path.parent().unwrap_or(root).join(target);
                    (!normal(&at).starts_with(root)).then(|| (path.clone(), target.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The content of the file at `path`, when the snapshot kept it.
    #[must_use]
    pub fn bytes(&self, path: &Path) -> Option<&[u8]> {
        match self.entries.get(path)? {
            Entry::File { bytes: Some(b), .. } => Some(b),
            _ => None,
        }
    }

    /// Whether [`Snapshot::restore`] can put the tree back.
    #[must_use]
    pub fn restorable(&self) -> bool {
        self.complete && self.over.is_none()
    }

    /// Puts the tree back as it was in `self`, given it is now `now`: what was created is
    /// removed, what changed or was removed is written back. Only when [`Self::restorable`].
    ///
    /// # Errors
    /// The first file that could not be put back.
    pub fn restore(&self, now: &Self) -> std::io::Result<()> {
        let changes = self.changes(now);
        for path in changes.created.iter().rev() {
            let gone = match now.entries.get(path) {
                Some(Entry::Dir) => std::fs::remove_dir_all(path),
                _ => std::fs::remove_file(path),
            };
            gone.or_else(
                |e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) },
            )?;
        }
        for path in changes.changed.iter().chain(&changes.removed) {
            match self.entries.get(path) {
                Some(Entry::Dir) => std::fs::create_dir_all(path)?,
                Some(Entry::File { bytes: Some(b), .. }) => {
                    if now.entries.get(path).is_some_and(|e| matches!(e, Entry::Dir)) {
                        std::fs::remove_dir_all(path)?;
                    }
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(path, b)?;
                }
                Some(Entry::Link(target)) => {
                    let _ = std::fs::remove_file(path);
                    std::os::unix::fs::symlink(target, path)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether `path` is a Git index (`.git/index`, or a submodule's or worktree's under `.git/`)
/// whose entries (mode, object id, stage and path) are the same in both: what changed is only
/// the stat data Git caches there, which `git status` and `git diff` refresh (a read-only
/// command writing no state of the repository).
fn stat_cache_only(path: &Path, old: &Entry, new: &Entry) -> bool {
    let in_git = path.components().any(|c| c.as_os_str() == ".git");
    if !in_git || path.file_name().is_none_or(|n| n != "index") {
        return false;
    }
    match (old, new) {
        (Entry::File { bytes: Some(a), .. }, Entry::File { bytes: Some(b), .. }) => {
            index_entries(a).is_some_and(|x| index_entries(b).is_some_and(|y| x == y))
        }
        _ => false,
    }
}

/// One entry of a Git index without its stat data: mode, object id, stage bits, path.
type IndexEntry<'b> = (&'b [u8], &'b [u8], u16, &'b [u8]);

/// The entries of a Git index of version 2 or 3 with SHA-1 object ids, without their stat data:
/// (mode, object id, stage, path) each. `None` for anything else (version 4 compresses paths;
/// a SHA-256 repository's ids are longer): such a change counts as a change.
fn index_entries(b: &[u8]) -> Option<Vec<IndexEntry<'_>>> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    if b.get(..4)? != b"DIRC" || !(2..=3).contains(&word(4)?) {
        return None;
    }
    let (version, count) = (word(4)?, word(8)?);
    let mut at = 12usize;
    let mut out = Vec::new();
    for _ in 0..count {
        // 40 bytes of stat data, a 20-byte id, 2 bytes of flags, (v3) 2 more, the path, NULs.
        let flags = u16::from_be_bytes(b.get(at + 60..at + 62)?.try_into().ok()?);
        let mut name = at + 62;
        if version == 3 && flags & 0x4000 != 0 {
            name += 2;
        }
        let len = b.get(name..)?.iter().position(|&c| c == 0)?;
        out.push((
            b.get(at + 24..at + 28)?,
            b.get(at + 40..at + 60)?,
            flags & 0x3000,
            &b[name..name + len],
        ));
        // The entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
        at += (name - at + len + 8) & !7;
    }
    Some(out)
}

fn file_entry(path: &Path, keep: bool, modified: Option<std::time::SystemTime>) -> Entry {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Entry::Unreadable(e.to_string()),
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut len = 0u64;
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.write(&buf[..n]);
                len += n as u64;
                if keep {
                    kept.extend_from_slice(&buf[..n]);
                }
            }
            Err(e) => return Entry::Unreadable(e.to_string()),
        }
    }
    Entry::File { len, modified, hash: hasher.finish(), bytes: keep.then(|| Arc::from(kept)) }
}

/// `path` with `.` and `..` taken out, without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Gives the owner write permission on every directory under `root` (a server may have made
/// one read-only), so the tree can be removed. Links are not followed.
pub(crate) fn make_removable(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let meta = std::fs::symlink_metadata(&dir)?;
        if !meta.is_dir() {
            continue;
        }
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(listing) = std::fs::read_dir(&dir) {
            stack.extend(listing.filter_map(Result::ok).filter_map(|e| {
                e.file_type().ok().filter(std::fs::FileType::is_dir).map(|_| e.path())
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Sandbox, SandboxOptions};

    /// A Git index (version 2) of one entry: `mtime`, the object id's first byte, `path`.
    fn index(mtime: u8, id: u8, path: &str) -> Vec<u8> {
        let mut b = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
        let mut stat = [0u8; 40];
        stat[8] = mtime;
        stat[24..28].copy_from_slice(&0o100_644u32.to_be_bytes());
        b.extend(stat);
        b.extend([id; 20]);
        b.extend(u16::try_from(path.len()).expect("short").to_be_bytes());
        b.extend(path.as_bytes());
        let entry = 62 + path.len();
        b.extend(vec![0u8; (entry + 8) / 8 * 8 - entry]);
        b.extend(b"TREE\0\0\0\0");
        b
    }

    #[test]
    fn a_git_index_whose_stat_data_alone_changed_is_unchanged() {
        let entry = |b: Vec<u8>| Entry::File {
            len: b.len() as u64,
            modified: None,
            hash: b.len() as u64 + u64::from(b[20]) + u64::from(b[52]),
            bytes: Some(b.into()),
        };
        let at = Path::new("/s/work/.git/index");
        let was = entry(index(1, 7, "a.txt"));
        assert_eq!(index_entries(&index(1, 7, "a.txt")).map(|e| e.len()), Some(1));
        assert!(stat_cache_only(at, &was, &entry(index(2, 7, "a.txt"))), "a refresh");
        assert!(!stat_cache_only(at, &was, &entry(index(1, 8, "a.txt"))), "a new object: staged");
        assert!(!stat_cache_only(at, &was, &entry(index(1, 7, "b.txt"))), "another path");
        assert!(!stat_cache_only(Path::new("/s/work/index"), &was, &entry(index(2, 7, "a.txt"))));
        assert!(index_entries(b"DIRC\0\0\0\x04\0\0\0\0").is_none(), "version 4 is not read");
        assert!(index_entries(&index(1, 7, "a.txt")[..70]).is_none(), "cut short");
    }

    #[test]
    fn changes_are_seen_and_put_back() {
        let sandbox = Sandbox::create(&SandboxOptions::default()).expect("made");
        let w = sandbox.work();
        std::fs::write(w.join("keep.txt"), "1").expect("write");
        std::fs::write(w.join("edit.txt"), "old").expect("write");
        let dirs = [w.clone()];
        let before = Snapshot::take(&dirs, None);
        assert!(before.changes(&Snapshot::take(&dirs, None)).is_empty(), "a re-walk: no change");
        std::fs::write(w.join("edit.txt"), "new").expect("write");
        std::fs::create_dir(w.join("d")).expect("dir");
        std::fs::write(w.join("d/new.txt"), "x").expect("write");
        std::fs::remove_file(w.join("keep.txt")).expect("rm");
        let after = Snapshot::take(&dirs, Some(&before));
        let c = before.changes(&after);
        assert_eq!(c.created, vec![w.join("d"), w.join("d/new.txt")]);
        assert_eq!(c.changed, vec![w.join("edit.txt")]);
        assert_eq!(c.removed, vec![w.join("keep.txt")]);
        let name = |p: &Path| p.strip_prefix(&w).expect("under work").display().to_string();
        assert_eq!(c.words(name, 1), "created d and 1 more; changed edit.txt; removed keep.txt");
        assert!(before.restorable());
        before.restore(&after).expect("put back");
        assert!(before.changes(&Snapshot::take(&dirs, None)).is_empty(), "the tree is as before");
        assert_eq!(std::fs::read_to_string(w.join("edit.txt")).expect("read"), "old");
    }

    #[test]
    fn links_out_of_the_tree_are_named_not_followed() {
        let sandbox = Sandbox::create(&SandboxOptions::default()).expect("made");
        let w = sandbox.work();
        std::os::unix::fs::symlink("/etc", w.join("etc")).expect("link");
        std::os::unix::fs::symlink("../../..", w.join("up")).expect("link");
        std::os::unix::fs::symlink("inside.txt", w.join("ok")).expect("link");
        let snap = Snapshot::take(std::slice::from_ref(&w), None);
        let out: Vec<PathBuf> = snap.escapes(sandbox.root()).into_iter().map(|(l, _)| l).collect();
        assert_eq!(out, vec![w.join("etc"), w.join("up")]);
        assert_eq!(snap.entries.len(), 3, "/etc was not walked");
    }
}
