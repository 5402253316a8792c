//! The hub's channel on Windows: a named pipe only its user may open.
//!
//! The pipe's name is derived from the user (their SID) and the socket path the relay
//! computes for the config and build, as the Unix socket is. Four locks on the door:
//! - the pipe is created with a protected DACL granting the user's SID alone
//!   (`D:P(A;;GA;;;<SID>)`): no other account may open it or add an instance to it;
//! - the hub's first instance is made with `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a pipe of
//!   that name made before (another hub, or another user squatting the name) fails the bind
//!   instead of being shared;
//! - remote clients are rejected (`PIPE_REJECT_REMOTE_CLIENTS`): the hub is local only;
//! - each end reads the other process's token user through the pipe
//!   (`GetNamedPipeClientProcessId` / `GetNamedPipeServerProcessId`) and refuses another
//!   user, as `SO_PEERCRED` does on Unix; a session never talks to a squatter's pipe.
//!
//! The hub's directory (`%LOCALAPPDATA%\mcp-defer\hub`) holds the start lock (`LockFileEx`),
//! the lock that says a hub runs, its log, and a marker file at the socket path naming the
//! pipe (so a session sees the hubs of other builds, as on Unix).

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::MetadataExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::Digest;
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_LOCK_VIOLATION, ERROR_PIPE_BUSY, HANDLE, LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW,
    GetNamedSecurityInfoW, SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx,
};
use windows_sys::Win32::System::IO::OVERLAPPED;
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::{Channel, ChannelError, io_at};

/// A Windows user: the SID of their account, as text (`S-1-5-21-...`).
pub(crate) type User = String;

/// `BUILTIN\Administrators`: what an elevated process of the user makes files owned by.
const ADMINISTRATORS: &str = "S-1-5-32-544";

/// How long a session waits for a free pipe instance: the hub makes the next one right
/// after a session connects, so every instance is busy only for that moment.
const BUSY_WAIT: Duration = Duration::from_secs(5);
/// How often it looks again meanwhile.
const BUSY_POLL: Duration = Duration::from_millis(10);

/// The SID of the user this process runs as (text); empty when the token cannot be read,
/// which only names a fallback folder: every check reads it again and fails on that error.
pub(crate) fn user_id() -> User {
    current_user().unwrap_or_default()
}

/// The hub's folder: `%LOCALAPPDATA%\mcp-defer\hub`, beside the data (the user's local
/// application data, private to them by the profile's ACL).
pub(super) fn default_hub_dir() -> Option<PathBuf> {
    super::super::dirs::data_dir().map(|d| d.join("hub"))
}

/// Creates `dir` when missing; checks it is a folder, not a link (a junction or symbolic
/// link planted there is refused, not followed), and owned by the user (or by
/// Administrators, the owner of what an elevated process of the user creates).
pub(super) fn private_dir(dir: &Path) -> Result<(), ChannelError> {
    std::fs::create_dir_all(dir).map_err(io_at(dir))?;
    let open = |why: String| ChannelError::OpenDir {
        path: dir.to_path_buf(),
        why,
    };
    let meta = std::fs::symlink_metadata(dir).map_err(io_at(dir))?;
    if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(open("a link (reparse point)".to_owned()));
    }
    if !meta.is_dir() {
        return Err(open("not a directory".to_owned()));
    }
    let you = current_user().map_err(io_at(dir))?;
    let owner = file_owner(dir).map_err(io_at(dir))?;
    if owner == you || owner == ADMINISTRATORS {
        Ok(())
    } else {
        Err(open(format!("owned by {owner}")))
    }
}

/// The pipe a hub at `path` listens on, for user `user`:
/// `\\.\pipe\mcp-defer-<SID>-<socket file stem>-<hash of the path>`.
pub(super) fn pipe_name(path: &Path, user: &str) -> String {
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    format!(r"\\.\pipe\mcp-defer-{user}-{stem}-{hash}")
}

/// Connects to the hub at `path` (its pipe), and checks the process that answers runs as
/// this user.
///
/// # Errors
/// [`ChannelError::NotListening`] when no hub is there (`stale` when its marker file is
/// left by one that is gone); [`ChannelError::ForeignPipe`] when the pipe refuses this user;
/// [`ChannelError::ForeignPeer`]; I/O errors.
pub(crate) async fn connect(path: &Path) -> Result<Channel, ChannelError> {
    let you = current_user().map_err(io_at(path))?;
    let name = pipe_name(path, &you);
    let deadline = tokio::time::Instant::now() + BUSY_WAIT;
    let client = loop {
        match ClientOptions::new().open(&name) {
            Ok(client) => break client,
            Err(err) if is(&err, ERROR_PIPE_BUSY) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(BUSY_POLL).await;
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(ChannelError::NotListening {
                    path: path.to_path_buf(),
                    stale: path.exists(),
                });
            }
            Err(err) if is(&err, ERROR_ACCESS_DENIED) => {
                return Err(ChannelError::ForeignPipe {
                    path: path.to_path_buf(),
                    name,
                });
            }
            Err(err) => return Err(io_at(path)(err)),
        }
    };
    check_peer(client.as_raw_handle(), Side::Server, path, you)?;
    Ok(channel(client))
}

/// Which end of the pipe the peer is.
#[derive(Clone, Copy)]
enum Side {
    Server,
    Client,
}

/// Refuses a peer process of another user (or one whose user cannot be read).
fn check_peer(pipe: RawHandle, side: Side, path: &Path, you: User) -> Result<(), ChannelError> {
    let mut pid = 0u32;
    // SAFETY: `pipe` is an open pipe handle this process owns; `pid` outlives the call.
    let ok = unsafe {
        match side {
            Side::Server => GetNamedPipeServerProcessId(pipe, &mut pid),
            Side::Client => GetNamedPipeClientProcessId(pipe, &mut pid),
        }
    };
    if ok == 0 {
        return Err(io_at(path)(io::Error::last_os_error()));
    }
    let peer = process_user(pid).map_err(|err| {
        io_at(path)(io::Error::new(
            err.kind(),
            format!("cannot read the user of process {pid} at the hub's pipe: {err}"),
        ))
    })?;
    if peer == you {
        Ok(())
    } else {
        Err(ChannelError::ForeignPeer {
            path: path.to_path_buf(),
            peer,
            you,
        })
    }
}

fn channel<T>(pipe: T) -> Channel
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
{
    let (reader, writer) = tokio::io::split(pipe);
    Channel {
        reader: Box::new(reader),
        writer: Box::new(writer),
    }
}

/// The hub's pipe: one instance waits for the next session at any time. The marker file at
/// the socket path is removed when this is dropped; the pipe goes with its last handle.
pub(crate) struct Listener {
    name: String,
    path: PathBuf,
    you: User,
    descriptor: Descriptor,
    /// The instance the next session connects to.
    pending: tokio::sync::Mutex<NamedPipeServer>,
    /// Held for the hub's life: one hub per socket path, as on Unix.
    _alive: std::fs::File,
}

impl Listener {
    /// Creates the pipe for `path`, owner-only, refusing a name that exists already.
    ///
    /// # Errors
    /// `AddrInUse` when a hub (or anyone) holds that pipe name; I/O errors.
    pub(crate) async fn bind(path: &Path) -> Result<Listener, ChannelError> {
        let in_use = |why: &str| io_at(path)(io::Error::new(io::ErrorKind::AddrInUse, why));
        let alive = super::hold_alive(path, &mut std::fs::OpenOptions::new())?;
        let you = current_user().map_err(io_at(path))?;
        let descriptor = Descriptor::owner_only(&you).map_err(io_at(path))?;
        let name = pipe_name(path, &you);
        let first = match create(&name, &descriptor, true) {
            Ok(first) => first,
            Err(err) if is(&err, ERROR_ACCESS_DENIED) => {
                return Err(in_use(
                    "a pipe of that name exists already (another hub, or another user's)",
                ));
            }
            Err(err) => return Err(io_at(path)(err)),
        };
        std::fs::write(path, &name).map_err(io_at(path))?;
        Ok(Listener {
            name,
            path: path.to_path_buf(),
            you,
            descriptor,
            pending: tokio::sync::Mutex::new(first),
            _alive: alive,
        })
    }

    /// The next connection of a process of this user. A process of another user is
    /// refused (closed at once) and reported as [`ChannelError::ForeignPeer`].
    ///
    /// # Errors
    /// The refusal; the pipe's I/O errors.
    pub(crate) async fn accept(&self) -> Result<Channel, ChannelError> {
        let mut pending = self.pending.lock().await;
        // Cancel-safe: dropped while waiting, the instance stays for the next call.
        if let Err(err) = pending.connect().await {
            // A client that came and went before we answered: this instance is spent.
            *pending = create(&self.name, &self.descriptor, false).map_err(io_at(&self.path))?;
            return Err(io_at(&self.path)(err));
        }
        let next = create(&self.name, &self.descriptor, false).map_err(io_at(&self.path))?;
        let connected = std::mem::replace(&mut *pending, next);
        drop(pending);
        check_peer(
            connected.as_raw_handle(),
            Side::Client,
            &self.path,
            self.you.clone(),
        )?;
        Ok(channel(connected))
    }

    /// The pipe's name (tests read its ACL back).
    #[cfg(test)]
    pub(super) fn pipe(&self) -> &str {
        &self.name
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// An instance of the pipe `name`, with `descriptor`'s DACL, local clients only.
fn create(name: &str, descriptor: &Descriptor, first: bool) -> io::Result<NamedPipeServer> {
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: descriptor.0,
        bInheritHandle: 0,
    };
    // SAFETY: `attributes` is a valid SECURITY_ATTRIBUTES whose descriptor lives in
    // `descriptor`, borrowed for the call; CreateNamedPipeW copies what it needs.
    unsafe {
        ServerOptions::new()
            .first_pipe_instance(first)
            .reject_remote_clients(true)
            .create_with_security_attributes_raw(name, (&raw mut attributes).cast())
    }
}

/// A self-relative security descriptor from SDDL, freed when dropped.
struct Descriptor(PSECURITY_DESCRIPTOR);

// SAFETY: the descriptor is memory this value alone owns; it is only read (by
// CreateNamedPipeW), never written, after it is made.
unsafe impl Send for Descriptor {}
// SAFETY: as for Send: shared reads only.
unsafe impl Sync for Descriptor {}

impl Descriptor {
    /// A protected DACL with one entry: all access for `sid`, nobody else (not even
    /// inherited entries: `P`).
    fn owner_only(sid: &str) -> io::Result<Descriptor> {
        let sddl = wide(OsStr::new(&format!("D:P(A;;GA;;;{sid})")));
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated and outlives the call; the descriptor it
        // allocates is ours to free (LocalFree, in Drop).
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Descriptor(descriptor))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.0) };
    }
}

/// The user this process runs as.
fn current_user() -> io::Result<User> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing; `token`
    // receives a handle we own.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just opened for us, closed once.
    let token = unsafe { OwnedHandle::from_raw_handle(token) };
    token_user(&token)
}

/// The user process `pid` runs as.
fn process_user(pid: u32) -> io::Result<User> {
    // SAFETY: OpenProcess has no memory preconditions; a null handle is its error.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a handle just opened for us, closed once.
    let process = unsafe { OwnedHandle::from_raw_handle(process) };
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is open with query rights; `token` receives a handle we own.
    if unsafe { OpenProcessToken(process.as_raw_handle(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    let token = unsafe { OwnedHandle::from_raw_handle(token) };
    token_user(&token)
}

/// The SID of a token's user, as text.
fn token_user(token: &OwnedHandle) -> io::Result<User> {
    let handle = token.as_raw_handle();
    let mut len = 0u32;
    // SAFETY: a size query (null buffer, length 0); it fails with the size needed.
    unsafe { GetTokenInformation(handle, TokenUser, std::ptr::null_mut(), 0, &mut len) };
    if len == 0 {
        return Err(io::Error::last_os_error());
    }
    // u64s: TOKEN_USER holds pointers, so the buffer must be pointer-aligned.
    let mut buf = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: `buf` holds at least `len` bytes and outlives the call.
    let ok =
        unsafe { GetTokenInformation(handle, TokenUser, buf.as_mut_ptr().cast(), len, &mut len) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: GetTokenInformation(TokenUser) filled `buf` with a TOKEN_USER whose SID
    // points inside `buf`, which lives until we are done with it.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    sid_text(sid)
}

/// `sid` as text (`S-1-...`).
fn sid_text(sid: PSID) -> io::Result<User> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is a valid SID; the string it allocates is ours to LocalFree.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a NUL-terminated string from ConvertSidToStringSidW, freed once after.
    let owned = unsafe { from_wide(text) };
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(text.cast()) };
    Ok(owned)
}

/// The owner of the file or folder at `path`, as text.
fn file_owner(path: &Path) -> io::Result<User> {
    let name = wide(path.as_os_str());
    let mut owner: PSID = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `name` is NUL-terminated; `owner` points into `descriptor`, which we free
    // after reading it.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut descriptor,
        )
    };
    if status != 0 {
        return Err(io::Error::from_raw_os_error(status as i32));
    }
    let text = sid_text(owner);
    // SAFETY: allocated by GetNamedSecurityInfoW.
    unsafe { LocalFree(descriptor) };
    text
}

/// Reads a NUL-terminated UTF-16 string.
///
/// # Safety
/// `text` points to a NUL-terminated UTF-16 string.
unsafe fn from_wide(text: *const u16) -> String {
    let mut len = 0;
    // SAFETY: the caller promises a terminating NUL.
    while unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: `len` units are readable, per the loop above.
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) })
}

/// `text` as NUL-terminated UTF-16.
fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain(std::iter::once(0)).collect()
}

fn is(err: &io::Error, code: u32) -> bool {
    err.raw_os_error() == Some(code as i32)
}

/// A process of its own console group, so the session's Ctrl-C does not reach it.
pub(crate) fn detach(command: &mut std::process::Command) {
    use std::os::windows::process::CommandExt;
    /// `CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS`.
    const FLAGS: u32 = 0x0000_0200 | 0x0000_0008;
    command.creation_flags(FLAGS);
}

/// Takes an exclusive lock on `file` (all of it), waiting for whoever holds it; released
/// when the handle is closed, or the process dies (`LockFileEx`). With `wait` false,
/// `WouldBlock` when another holds it.
///
/// # Errors
/// The system call's error.
pub(crate) fn lock_exclusive(file: &std::fs::File, wait: bool) -> io::Result<()> {
    let flags = if wait {
        LOCKFILE_EXCLUSIVE_LOCK
    } else {
        LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY
    };
    // SAFETY: a zeroed OVERLAPPED is the documented "from offset 0" for a synchronous handle.
    let mut overlapped: OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: `file` is an open handle we own; `overlapped` outlives the (synchronous) call.
    let ok = unsafe {
        LockFileEx(
            file.as_raw_handle(),
            flags,
            0,
            u32::MAX,
            u32::MAX,
            &mut overlapped,
        )
    };
    if ok != 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if is(&err, ERROR_LOCK_VIOLATION) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    Err(err)
}

#[cfg(test)]
mod tests {
    // A test panics on broken setup; the crate-wide denial is for the library.
    #![allow(clippy::unwrap_used)]

    use super::*;
    use windows_sys::Win32::Security::Authorization::{
        ConvertSecurityDescriptorToStringSecurityDescriptorW, GetSecurityInfo, SE_KERNEL_OBJECT,
    };
    use windows_sys::Win32::Security::DACL_SECURITY_INFORMATION;

    /// The DACL of the pipe `name` as SDDL, read through a client handle.
    fn pipe_dacl(name: &str) -> String {
        let client = ClientOptions::new().open(name).unwrap();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: an open pipe handle; the descriptor is freed below.
        let status = unsafe {
            GetSecurityInfo(
                client.as_raw_handle(),
                SE_KERNEL_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut descriptor,
            )
        };
        assert_eq!(status, 0, "GetSecurityInfo on {name}");
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid descriptor; the string is freed below.
        let ok = unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                descriptor,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(ok, 0, "{}", io::Error::last_os_error());
        // SAFETY: as in sid_text.
        let sddl = unsafe { from_wide(text) };
        // SAFETY: both allocated by the calls above.
        unsafe {
            LocalFree(text.cast());
            LocalFree(descriptor);
        }
        sddl
    }

    #[tokio::test]
    async fn the_pipe_admits_its_user_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub-acl.sock");
        let listener = Listener::bind(&path).await.unwrap();
        let you = current_user().unwrap();
        assert!(you.starts_with("S-1-"), "{you}");
        let sddl = pipe_dacl(listener.pipe());
        // Protected (nothing inherited), one entry, allowing this user.
        assert!(sddl.starts_with("D:P"), "{sddl}");
        assert_eq!(sddl.matches('(').count(), 1, "{sddl}");
        assert!(
            sddl.starts_with("D:P(A;;") && sddl.ends_with(&format!(";;;{you})")),
            "{sddl}"
        );
    }

    /// A pipe of the hub's name made before it (here by us; on a shared machine possibly
    /// by another user, to catch the sessions) makes the bind fail: it is never shared.
    #[tokio::test]
    async fn a_pipe_made_before_the_hub_is_not_shared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub-squat.sock");
        let name = pipe_name(&path, &current_user().unwrap());
        let squatter = ServerOptions::new().create(&name).unwrap();
        // Windows refuses a first instance of a name that exists; Wine 8.0 ignores the
        // flag (a second "first" instance is made). There the sessions' check of the
        // pipe's server process is what keeps another user's pipe out.
        if let Ok(_second) = ServerOptions::new().first_pipe_instance(true).create(&name) {
            eprintln!("this system ignores FILE_FLAG_FIRST_PIPE_INSTANCE (Wine does); not checked");
            return;
        }
        match Listener::bind(&path).await {
            Err(ChannelError::Io { source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::AddrInUse, "{source}");
            }
            Err(other) => panic!("refused for the wrong reason: {other}"),
            Ok(_) => panic!("the hub shared a pipe it did not make"),
        }
        drop(squatter);
        let _hub = Listener::bind(&path).await.unwrap();
    }

    #[test]
    fn the_pipe_name_is_the_users_and_the_paths() {
        let a = pipe_name(Path::new(r"C:\x\hub-1.sock"), "S-1-5-21-1");
        assert_eq!(a, pipe_name(Path::new(r"C:\x\hub-1.sock"), "S-1-5-21-1"));
        assert_ne!(a, pipe_name(Path::new(r"C:\y\hub-1.sock"), "S-1-5-21-1"));
        assert_ne!(a, pipe_name(Path::new(r"C:\x\hub-1.sock"), "S-1-5-21-2"));
        assert!(
            a.starts_with(r"\\.\pipe\mcp-defer-S-1-5-21-1-hub-1-"),
            "{a}"
        );
    }
}
