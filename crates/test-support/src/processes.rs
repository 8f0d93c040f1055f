//! Which processes are alive, for tests that check no server outlives its host
//! (Linux `/proc`), and programs written in place of real ones.

/// Live (not zombie) processes as (pid, parent, process group).
fn live() -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return out };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // Fields after the command (which may contain spaces) start after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // rest: state ppid pgrp ...; zombies are already dead.
        if let [state, ppid, pgrp, ..] = fields[..]
            && state != "Z"
            && let (Ok(ppid), Ok(pgrp)) = (ppid.parse(), pgrp.parse())
        {
            out.push((pid, ppid, pgrp));
        }
    }
    out
}

/// Live (not zombie) processes in process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    live().into_iter().filter(|(_, _, group)| *group == pgid).map(|(pid, _, _)| pid).collect()
}

/// `pid` and every live process below it (children, their children, …),
/// whatever their process group or session: a sandbox starts its own.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let all = live();
    let mut tree: Vec<u32> = all.iter().filter(|(p, _, _)| *p == pid).map(|(p, _, _)| *p).collect();
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(all.iter().filter(|(_, pp, _)| *pp == parent).map(|(p, _, _)| *p));
        i += 1;
    }
    tree
}

/// Those of `pids` still alive.
pub fn still_alive(pids: &[u32]) -> Vec<u32> {
    live().into_iter().map(|(pid, _, _)| pid).filter(|pid| pids.contains(pid)).collect()
}

/// Writes `body`, a shell script, to `path` as a program (mode 0755): a stand-in for a real one.
#[cfg(unix)]
pub fn write_program(path: &std::path::Path, body: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
