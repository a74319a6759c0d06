"""One staging process per job: the lock names its holder (from the kernel), and a run ends an interrupted run's
process still holding it (#31 item 4: a Ctrl-C left the copy running detached, and the next run was a second
writer on the same .part), but only one of staging's own, and only through a lock file nobody else could use."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_lock import LockError, holder, say, take
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted

HOLD = """
import fcntl, os, signal, sys, time
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


MODULE = "AnsiballZ_model_fetch"


@pytest.fixture()
def leftover(tmp_path):
    """start(kind, name) -> a process holding the lock of tmp_path/inferops-weights/x.lock: an interrupted run's copy
    (its command line names the module, as Ansible's async job does), or any other program."""
    (tmp_path / "inferops-weights").mkdir()
    path = tmp_path / "inferops-weights" / "x.lock"
    started = []

    def start(kind: str = "plain", name: str = MODULE) -> subprocess.Popen:
        script = tmp_path / f"{name}.py"
        script.write_text(HOLD)
        process = subprocess.Popen([sys.executable, str(script), str(path), kind], stdout=subprocess.PIPE, text=True)
        assert process.stdout.readline() == "held\n"
        started.append(process)
        return process

    yield path, start
    for process in started:
        process.kill()
        process.wait()


def test_a_free_lock_is_taken_and_says_what_its_holder_does(leftover):
    path = leftover[0]
    fd, ended = take(str(path), "spark-2", "copy", MODULE)
    try:
        say(fd, "listening abc 198.18.0.10:29510\n")
        assert ended == 0 and path.read_text() == "listening abc 198.18.0.10:29510\n"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    finally:
        os.close(fd)


def test_the_kernel_names_the_holder_and_the_next_run_ends_it(leftover):
    path, start = leftover
    process = start()
    assert holder(str(path)) == process.pid
    fd, ended = take(str(path), "spark-2", "copy", MODULE, grace=5)
    try:
        assert ended == process.pid
        assert process.wait(5) == -signal.SIGTERM
        assert holder(str(path)) == 0 or holder(str(path)) == os.getpid()
    finally:
        os.close(fd)


def test_a_holder_that_ignores_sigterm_is_killed(leftover):
    path, start = leftover
    process = start("stubborn")
    fd, ended = take(str(path), "spark-2", "copy", MODULE, grace=0.5)
    os.close(fd)
    assert ended == process.pid and process.wait(5) == -signal.SIGKILL


def test_a_holder_that_cannot_be_ended_is_named(leftover):
    path, start = leftover
    process = start()
    with pytest.raises(LockError, match=rf"spark-2: process {process.pid} \(an interrupted run's copy\) still holds "
                                        r".*x.lock 0 s after"):
        take(str(path), "spark-2", "copy", MODULE, grace=0.1, kill=lambda fd, pid, sig: None, sleep=lambda s: None)
    assert process.poll() is None


def test_a_process_that_is_not_stagings_own_is_named_never_signalled(leftover):
    path, start = leftover
    process = start(name="backup-agent")
    with pytest.raises(LockError, match=rf"spark-2: .*x.lock is locked by process {process.pid} \(.*python.*, uid 0\), "
                                        r"which is not one of staging's own"):
        take(str(path), "spark-2", "copy", MODULE, grace=0.5)
    assert process.poll() is None


@pytest.mark.parametrize("plant, problem", [
    ("mode", "mode 0666"),
    ("hardlink", "linked 2 times"),
    ("folder", "in a folder of uid 0 with mode 0777"),
])
def test_a_lock_file_others_could_use_is_refused(tmp_path, plant, problem):
    """A user able to lock the file could make staging signal a process of the user's choosing."""
    folder = tmp_path / "inferops-weights"
    folder.mkdir()
    path = folder / "x.lock"
    path.write_text("")
    if plant == "mode":
        path.chmod(0o666)
    elif plant == "hardlink":
        path.chmod(0o600)
        os.link(path, tmp_path / "elsewhere")
    else:
        path.chmod(0o600)
        folder.chmod(0o777)
    with pytest.raises(LockError, match=rf"spark-2: .*x.lock is {problem}; staging's lock files are root's alone"):
        take(str(path), "spark-2", "copy", MODULE)


def test_a_link_where_the_lock_goes_is_refused(tmp_path):
    (tmp_path / "inferops-weights").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / "inferops-weights" / "x.lock").symlink_to(victim)
    with pytest.raises(Untrusted, match="x.lock is a symbolic link"):
        take(str(tmp_path / "inferops-weights" / "x.lock"), "spark-2", "copy", MODULE)
    assert victim.read_text() == "untouched"


def test_without_pidfd_the_holder_is_still_ended(leftover, monkeypatch):
    """Python before 3.9, a kernel before 5.3 or a seccomp profile without pidfd_open: a plain kill, right after the
    holder was checked again."""
    path, start = leftover
    process = start()
    monkeypatch.delattr(os, "pidfd_open")
    fd, ended = take(str(path), "spark-2", "copy", MODULE, grace=5)
    os.close(fd)
    assert ended == process.pid and process.wait(5) == -signal.SIGTERM


def test_a_filesystem_without_locks_is_named(tmp_path, monkeypatch):
    (tmp_path / "inferops-weights").mkdir()

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "lockf", no_locks)
    with pytest.raises(LockError, match=r"spark-2: .*x.lock cannot be locked \(No locks available\): the hub cache's "
                                        r"filesystem takes no POSIX locks"):
        take(str(tmp_path / "inferops-weights" / "x.lock"), "spark-2", "copy", MODULE)
