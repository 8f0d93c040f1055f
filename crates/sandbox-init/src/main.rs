//! `patchbay-sandbox-init`: the first process inside a local MCP server's bubblewrap sandbox
//! (`patchbay_core::mcp::launch::sandbox` starts it); it then becomes the server.
//!
//! - It enters a Landlock domain scoped for abstract Unix sockets and signals (Linux 6.12+), so a
//!   server sharing the host's network (network "any") cannot reach the desktop's abstract sockets
//!   (X11, a `dbus-launch` bus), which bubblewrap alone leaves open.
//! - With `--proxy PORT SOCKET` (allowed domains) it listens on `127.0.0.1:PORT` and hands the
//!   listening socket to Patchbay's filtering proxy before the server starts, so Patchbay accepts the
//!   connections itself (`socat`, a process per connection, cost 2.5 ms a fetch).
//!
//! Usage: `patchbay-sandbox-init [--proxy PORT SOCKET] -- PROGRAM [ARGS…]`.

#[cfg(target_os = "linux")]
mod linux;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    proxy: Option<(u16, PathBuf)>,
    command: Vec<OsString>,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Plan, String> {
    let mut args = args.into_iter();
    let mut proxy = None;
    loop {
        let arg = args.next().ok_or("expected `--` and the server's command")?;
        match arg.to_str() {
            Some("--") => break,
            Some("--proxy") => {
                let port = args.next().and_then(|p| p.to_str()?.parse::<u16>().ok());
                let socket = args.next().map(PathBuf::from);
                let (Some(port), Some(socket)) = (port, socket) else {
                    return Err("--proxy takes a port and the proxy's socket".into());
                };
                proxy = Some((port, socket));
            }
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    let command: Vec<OsString> = args.collect();
    if command.is_empty() {
        return Err("no server command after `--`".into());
    }
    Ok(Plan { proxy, command })
}

fn main() -> ExitCode {
    let plan = match parse(std::env::args_os().skip(1)) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("patchbay-sandbox-init: {e}");
            return ExitCode::from(2);
        }
    };
    #[cfg(target_os = "linux")]
    let error = linux::run(plan);
    #[cfg(not(target_os = "linux"))]
    let error = format!("only Linux sandboxes its servers this way (asked to run {:?})", plan.command);
    eprintln!("patchbay-sandbox-init: {error}");
    ExitCode::from(127)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn reads_the_proxy_and_the_command() {
        let plan = parse(args(&["--proxy", "3128", "/run/x/proxy.sock", "--", "node", "--", "a"])).unwrap();
        assert_eq!(plan.proxy, Some((3128, PathBuf::from("/run/x/proxy.sock"))));
        assert_eq!(plan.command, args(&["node", "--", "a"]));
        assert_eq!(parse(args(&["--", "uvx"])).unwrap(), Plan { proxy: None, command: args(&["uvx"]) });
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert_eq!(parse(args(&["--"])).unwrap_err(), "no server command after `--`");
        assert_eq!(parse(args(&["node"])).unwrap_err(), "unknown argument \"node\"");
        assert_eq!(
            parse(args(&["--proxy", "x", "/s", "--", "a"])).unwrap_err(),
            "--proxy takes a port and the proxy's socket"
        );
        assert_eq!(parse(args(&[])).unwrap_err(), "expected `--` and the server's command");
    }
}
