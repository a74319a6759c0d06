# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One staging process per job on a node: the head's server, and each worker's copy of a model, hold an exclusive
POSIX lock on a file of staging's own (0600, root's, in the inferops-weights/ folder beside the hub cache, which only
root may write). A run that was interrupted (Ctrl-C during "Wait for the copies") leaves its Ansible async jobs
running detached; the next run finds the lock held, asks the kernel which process holds it (F_GETLK: not a pid
someone wrote into a file), checks that it is root's and one of staging's own modules, ends it (through a pidfd,
so a pid reused meanwhile is never signalled) and takes the lock, so two writers never append to the same `.part`
and no old server keeps the port. Anything else holding the lock is named, never signalled.
Private to the collection."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import struct
import time
import typing as t

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import open_below, sidecar_below

# struct flock on 64-bit Linux (x86_64, aarch64): short l_type, short l_whence, off_t l_start, off_t l_len,
# pid_t l_pid, padded to 32 bytes
_FLOCK = "@hhqqi4x"

MESSAGES = {
    "FOREIGN": "[F17] {host}: {path} is locked by a process outside this PID namespace (a container?) or through an "
               "open file description; staging cannot tell who it is and ends nothing. Fix: find the process holding "
               "it (grep :{inode} /proc/locks on {host}), stop it, and run site.yml again.",
    "STRANGER": "[F17] {host}: {path} is locked by process {pid} ({command}, uid {uid}), which is not one of staging's "
                "own (an interrupted run's {what} is root's {module}); staging ends nothing it did not start. Fix: "
                "look at it on {host} (ps -o pid,user,cmd -p {pid}), stop it, and run site.yml again.",
    "NO_LOCKS": "[F17] {host}: {path} cannot be locked ({error}): the hub cache's filesystem takes no POSIX locks "
                "(NFS without lockd?), so staging cannot keep two copies from writing the same file. Fix: put "
                "vllm_cluster_hf_cache_dir on a local filesystem.",
    "UNSAFE": "[F17] {host}: {path} is {problem}; staging's lock files are root's alone (0600, in a folder only root "
              "may write), or any user could make staging end a process. Fix: remove {path} (and find out who made "
              "it), make its folder root's with mode 0755, and run site.yml again.",
    "STUCK": "[F17] {host}: process {pid} (an interrupted run's {what}) still holds {path} {seconds:.0f} s after it "
             "was told to end (SIGTERM, then SIGKILL). Fix: look at it on {host} (ps -o pid,stat,cmd -p {pid}), "
             "end it, and run site.yml again.",
}


class LockError(Exception):
    """The lock could not be taken; the message names the host, the file and the process."""


def _open(path: str, host: str, create: bool) -> int:
    """The lock file (created 0600 when `create`), refused unless it and its folder are root's alone."""
    root, relative = sidecar_below(path)
    flags = (os.O_RDWR | os.O_CREAT) if create else os.O_RDONLY
    fd = open_below(root, relative, flags, 0o600, host=host, make_dirs=create)
    problem = _unsafe(os.fstat(fd), os.lstat(os.path.dirname(path)))
    if problem:
        os.close(fd)
        raise LockError(MESSAGES["UNSAFE"].format(host=host, path=path, problem=problem))
    return fd


def _unsafe(lock: os.stat_result, folder: os.stat_result) -> str:
    """Why a lock file (and its folder) could be used by someone else than root; "" when it cannot."""
    owner = os.geteuid()
    if lock.st_uid != owner:
        return f"owned by uid {lock.st_uid}"
    if lock.st_mode & 0o077:
        return f"mode {stat.S_IMODE(lock.st_mode):04o}"
    if lock.st_nlink != 1:
        return f"linked {lock.st_nlink} times"
    if folder.st_uid != owner or folder.st_mode & 0o022:
        return f"in a folder of uid {folder.st_uid} with mode {stat.S_IMODE(folder.st_mode):04o}"
    return ""


def _process(pid: int) -> tuple[int, str]:
    """(real uid, command line) of a process, from /proc; (-1, "") when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            uid = next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except (OSError, StopIteration, ValueError):
        return -1, ""
    return uid, command


def _signal(fd: int, pid: int, number: int) -> None:
    """Signals pid through a pidfd opened first, then checked to still hold the lock: a pid that ended and was
    reused meanwhile is never signalled. Where there is no pidfd (Python before 3.9, a kernel before 5.3, a seccomp
    profile that denies it), the holder is checked again right before a plain kill."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        if holder_of(fd) == pid:
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass
        return
    try:
        if holder_of(fd) == pid:
            signal.pidfd_send_signal(pidfd, number)
    except ProcessLookupError:
        pass
    finally:
        os.close(pidfd)


def holder_of(fd: int) -> int:
    """The pid holding a conflicting lock on fd's file: 0 when none, -1 when its holder is outside this PID
    namespace (the kernel reports pid 0 for it)."""
    query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    kind, _whence, _start, _length, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    if kind == fcntl.F_UNLCK:
        return 0
    return pid if pid > 0 else -1


def holder(path: str, host: str = "") -> int:
    """Who holds the lock of `path` now (see holder_of); 0 when the file does not exist. Read-only: a user without
    root gets PermissionError."""
    try:
        fd = _open(path, host, create=False)
    except FileNotFoundError:
        return 0
    try:
        return holder_of(fd)
    finally:
        os.close(fd)


def holder_seen(path: str, host: str = "", euid: int | None = None) -> tuple[int, str]:
    """(holder(path), ""), or (0, why) where this user may not look (a login user without root: preflight, a check
    run); LockError and Untrusted go to the caller."""
    try:
        return holder(path, host), ""
    except PermissionError:
        return 0, f"not checked: uid {os.geteuid() if euid is None else euid} may not read {path}"


def _try(fd: int) -> bool:
    """True once the lock is taken, False while another process holds it; any other error (ENOLCK: a filesystem
    without locks) is raised."""
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise


def take(path: str, host: str, what: str, module: str, grace: float = 10.0,
         kill: t.Optional[t.Callable[[int, int, int], None]] = None,
         sleep: t.Callable[[float], None] = time.sleep) -> tuple[int, int]:
    """Takes the lock of `path` (created 0600), ending an interrupted run's process that holds it when it is root's
    and its command line names `module` (e.g. AnsiballZ_model_fetch): SIGTERM, then SIGKILL after `grace` seconds.
    Returns (descriptor, pid ended or 0); the lock lasts while the descriptor is open (close it, or exit, to
    release). Raises LockError when the holder is not staging's own or cannot be ended."""
    fd = _open(path, host, create=True)
    signal_pid = kill or _signal
    try:
        return _take(fd, path, host, what, module, grace, signal_pid, sleep)
    except OSError as exc:
        os.close(fd)
        raise LockError(MESSAGES["NO_LOCKS"].format(host=host, path=path, error=exc.strerror or exc)) from exc
    except BaseException:
        os.close(fd)
        raise


def _take(fd: int, path: str, host: str, what: str, module: str, grace: float,
          signal_pid: t.Callable[[int, int, int], None], sleep: t.Callable[[float], None]) -> tuple[int, int]:
    """take()'s rounds: try; SIGTERM the holder and wait `grace`; SIGKILL it and wait `grace`."""
    ended = 0
    for signal_number in (None, signal.SIGTERM, signal.SIGKILL):
        if signal_number is not None:
            pid = holder_of(fd)
            if pid == -1:
                raise LockError(MESSAGES["FOREIGN"].format(host=host, path=path, inode=os.fstat(fd).st_ino))
            if pid > 1:
                uid, command = _process(pid)
                if uid != -1 and (uid != os.geteuid() or module not in command):
                    raise LockError(MESSAGES["STRANGER"].format(host=host, path=path, pid=pid, uid=uid,
                                                                command=command[:120] or "?", what=what,
                                                                module=module))
                signal_pid(fd, pid, signal_number)
                ended = pid
        deadline = time.monotonic() + (grace if signal_number is not None else 0)
        while True:
            if _try(fd):
                return fd, ended
            if time.monotonic() >= deadline:
                break
            sleep(0.2)
    raise LockError(MESSAGES["STUCK"].format(host=host, pid=ended, what=what, path=path, seconds=2 * grace))


def say(fd: int, text: str) -> None:
    """Replaces the lock file's text (what the holder is doing: an operator, and the play's wait, read it)."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode("utf-8"), 0)
