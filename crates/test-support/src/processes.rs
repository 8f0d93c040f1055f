//! Which processes are alive, for tests that check no server outlives its host
//! (Linux `/proc`).

/// Live (not zombie) processes in process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return pids };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // Fields after the command (which may contain spaces) start after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // rest: state ppid pgrp ...; zombies are already dead.
        if fields.len() > 2 && fields[0] != "Z" && fields[2].parse::<u32>() == Ok(pgid) {
            pids.push(pid);
        }
    }
    pids
}
