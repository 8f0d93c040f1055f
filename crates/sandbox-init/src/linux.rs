//! The Linux steps: the proxy's listener handed over, Landlock scoping, then `exec`.

// Raw system calls (landlock, prctl, sendmsg) with no wrapper in std.
#![allow(unsafe_code)]

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::Plan;

/// `struct landlock_ruleset_attr` (Linux 6.12: ABI 6 added `scoped`).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
const LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1;
const LANDLOCK_SCOPE_SIGNAL: u64 = 2;
/// The first Landlock ABI with scopes.
const SCOPED_ABI: libc::c_long = 6;

/// Runs the plan; returns only on failure, with what went wrong.
pub(crate) fn run(plan: Plan) -> String {
    // Listening before the server starts: its first connection is queued for
    // Patchbay; this copy closes on exec (std opens it close-on-exec).
    if let Some((port, socket)) = &plan.proxy {
        let handed = TcpListener::bind((Ipv4Addr::LOCALHOST, *port)).and_then(|listener| hand_over(&listener, socket));
        if let Err(e) = handed {
            return format!("cannot give 127.0.0.1:{port} to the proxy at {}: {e}", socket.display());
        }
    }
    if let Err(e) = scope() {
        return format!("cannot enter the Landlock scope: {e}");
    }
    let error = std::process::Command::new(&plan.command[0]).args(&plan.command[1..]).exec();
    format!("cannot run {:?}: {error}", plan.command[0])
}

/// Sends the listening socket to Patchbay's proxy (`SCM_RIGHTS`, one byte beside it).
fn hand_over(listener: &TcpListener, socket: &Path) -> io::Result<()> {
    let stream = UnixStream::connect(socket)?;
    let byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_ptr().cast_mut().cast(), iov_len: 1 };
    let mut control = [0u64; 4];
    // SAFETY: msghdr is plain data; the control buffer (32 bytes) holds one
    // descriptor's header and data (CMSG_SPACE of an int, 24 bytes); every
    // pointer outlives the call.
    let sent = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as usize;
        libc::CMSG_DATA(cmsg).cast::<libc::c_int>().write_unaligned(listener.as_raw_fd());
        libc::sendmsg(stream.as_raw_fd(), &msg, 0)
    };
    if sent < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Scopes this process and all it starts: no abstract Unix socket and no
/// signal outside the domain. Kernels before 6.12 have no scopes; there a
/// server with its own network namespace has its own abstract sockets anyway,
/// and one sharing the host's is told on its log.
fn scope() -> io::Result<()> {
    // SAFETY: the version query takes no attribute (null, size 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi < SCOPED_ABI {
        eprintln!(
            "patchbay-sandbox-init: no Landlock scopes here (Landlock ABI {abi}; Linux 6.12 has 6): \
             with network \"any\" the server can reach the desktop's abstract Unix sockets"
        );
        return Ok(());
    }
    let attr = RulesetAttr {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped: LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL,
    };
    // SAFETY: attr is a valid ruleset attribute of the size given; the fd is checked and closed.
    unsafe {
        let fd = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = fd as libc::c_int;
        let restricted = if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0
        {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        };
        libc::close(fd);
        restricted
    }
}
