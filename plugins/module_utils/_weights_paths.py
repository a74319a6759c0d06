# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What weights staging accepts from a hub cache, and how it touches one. Staging runs as root, but a hub cache is
written by others: every container of the cluster mounts the nodes' cache, and `model_stage_source` is often a
user's own ~/.cache/huggingface. So nothing read from a cache is used as a path before it is checked (a ref names a
commit: 40 hex digits, nothing else), a snapshot's entries are regular files or links into the same model's
`blobs/` (as huggingface_hub writes them), and every file staging opens under a cache is opened component by
component without following a link, so a link planted by a container cannot turn a root write into a write
elsewhere. Refusals raise Untrusted with an F17 message naming the host, the path and what was found.
Private to the collection."""

from __future__ import annotations

import os
import re
import stat
import typing as t

MESSAGES = {
    "F17_REF_NAME": "[F17] {host}: model_stage_ref={ref!r} is not a revision name staging accepts (letters, digits, "
                    "'.', '_', '-', separated by '/', no '..'), or a commit (40 hex digits). Fix: name a branch, a "
                    "tag or a commit.",
    "F17_REF_CONTENT": "[F17] {host}: {path} holds {content!r}, not a commit (40 hex digits); a ref that names "
                       "anything else would be used as a path by root. Nothing was staged. Fix: find out who wrote "
                       "it (the hub cache is mounted into the cluster's containers), then remove the file and run "
                       "site.yml (staging points a worker's ref at the head's commit; on the head, download the "
                       "revision again or point the ref at its commit).",
    "F17_LINK": "[F17] {host}: {path} is a symbolic link ({target}); staging reads and writes a hub cache without "
                "following links, except a snapshot's links into its model's blobs/. Staging stopped there. Fix: "
                "remove the link (and find out who made it), then run site.yml; a hub cache of yours moved to a "
                "larger disk: point vllm_cluster_hf_cache_dir at the folder itself.",
    "F17_ENTRY_OUTSIDE": "[F17] {host}: {path} in the snapshot points to {target}, outside {blobs}; huggingface_hub "
                         "links a snapshot's files into its own model's blobs/ only. Staging stopped there. Fix: "
                         "remove the entry (and find out who wrote it), then run site.yml.",
    "F17_ENTRY_KIND": "[F17] {host}: {path} is a {kind} where staging reads or writes a file (a snapshot's entry, a "
                      "ref, a .part, its own hash or progress file). Staging stopped there. Fix: remove it (and find "
                      "out who made it), then run site.yml.",
    "F17_FILE_NAME": "[F17] {host}: the head's manifest names {path!r}, which is not a plain relative path inside a "
                     "snapshot. Nothing was copied. Fix: look at the head's snapshot of the model for what put it "
                     "there.",
    "F17_SOURCE_OWNER": "[F17] {host}: {path} in model_stage_source is owned by {owner} (uid {uid}), not root; "
                        "staging runs as root and copies it to every node. Fix: set model_stage_source_trusted_owners: "
                        "['{owner}'] if that user's copy is the one to serve, or point model_stage_source at a "
                        "root-owned copy.",
}

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# huggingface_hub's revisions: branch and tag names, refs/pr/N; staging takes the safe subset of git's rule
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")
_MAX_REF_CONTENT = 200


class Untrusted(Exception):
    """A hub cache holds something staging will not use; the message is the operator's F17 line."""


def is_commit(text: t.Any) -> bool:
    return bool(_COMMIT.fullmatch(str(text)))


def ref_name_problem(host: str, ref: t.Any) -> str:
    """F17: a revision name that would not stay one path component chain under refs/ ('' when it is fine)."""
    text = str(ref)
    if is_commit(text) or (_REF.fullmatch(text) and ".." not in text and len(text) <= 255):
        return ""
    return MESSAGES["F17_REF_NAME"].format(host=host, ref=text)


def relative_problem(host: str, relative: t.Any) -> str:
    """F17: a file name from a manifest that is not a plain relative path below the snapshot ('' when it is)."""
    text = str(relative)
    parts = text.split("/")
    if (not text or text.startswith("/") or "\\" in text or "\x00" in text or text.endswith(".part")
            or any(part in ("", ".", "..") for part in parts)):
        return MESSAGES["F17_FILE_NAME"].format(host=host, path=text)
    return ""


def _components(relative: str) -> list[str]:
    return [part for part in relative.split("/") if part]


def _open_parent(root: str, relative: str, host: str, make_dirs: bool) -> tuple[int, str]:
    """A descriptor of the folder that holds root/relative, reached without following a link below root (each
    folder opened with O_NOFOLLOW relative to the one before it, so a link swapped in between two checks is not
    followed either), and the last component's name. root itself is the operator's (a configured path)."""
    parts = _components(relative)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for index, part in enumerate(parts[:-1]):
        try:
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                _refuse_link(exc, fd, part, os.path.join(root, *parts[:index + 1]), host)
                raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        fd = child
    return fd, parts[-1]


def open_below(root: str, relative: str, flags: int, mode: int = 0o644, host: str = "", make_dirs: bool = False) -> int:
    """os.open of root/relative where no component below root may be a symbolic link, and what is opened must be a
    regular file: a device node or a pipe planted where staging reads or writes (a container may hold CAP_MKNOD)
    is refused, never read, written or waited on (O_NONBLOCK until fstat has said what it is). Returns a
    descriptor."""
    fd, name = _open_parent(root, relative, host, make_dirs)
    path = os.path.join(root, relative)
    try:
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            info = None
        if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            raise Untrusted(MESSAGES["F17_ENTRY_KIND"].format(host=host, path=path, kind=_kind(info.st_mode)))
        try:
            out = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=fd)
        except OSError as exc:
            _refuse_link(exc, fd, name, path, host)
            raise
        opened = os.fstat(out)
        if not stat.S_ISREG(opened.st_mode):
            os.close(out)
            raise Untrusted(MESSAGES["F17_ENTRY_KIND"].format(host=host, path=path, kind=_kind(opened.st_mode)))
        return out
    finally:
        os.close(fd)


def _refuse_link(exc: OSError, dir_fd: int, name: str, path: str, host: str) -> None:
    """Turns the errors O_NOFOLLOW gives on a link (ELOOP, or ENOTDIR for a link where a folder was asked) into
    an F17 refusal; other errors pass through."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise Untrusted(MESSAGES["F17_LINK"].format(host=host, path=path, target=os.readlink(name, dir_fd=dir_fd))) from exc


def read_below(root: str, relative: str, limit: int, host: str = "") -> str:
    """The text of root/relative, opened without following a link, at most `limit` characters."""
    fd = open_below(root, relative, os.O_RDONLY, host=host)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read(limit)


def write_below(root: str, relative: str, text: str, host: str = "", mode: int = 0o644) -> None:
    """Replaces root/relative with text, through a fresh `.tmp` beside it (created exclusively, in the folder
    reached without following links) renamed over it; folders on the way are made when missing."""
    fd, name = _open_parent(root, relative, host, make_dirs=True)
    tmp = name + ".tmp"
    try:
        try:
            os.unlink(tmp, dir_fd=fd)  # a leftover of an interrupted run, or something planted there
        except FileNotFoundError:
            pass
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
        with os.fdopen(out, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def replace_below(root: str, source: str, target: str, host: str = "") -> None:
    """Renames root/source over root/target, both in one folder reached without following links."""
    fd, name = _open_parent(root, target, host, make_dirs=False)
    try:
        os.replace(os.path.basename(source), name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def unlink_below(root: str, relative: str, host: str = "") -> None:
    """Removes root/relative (a link is removed itself, never what it points to); absent is fine."""
    try:
        fd, name = _open_parent(root, relative, host, make_dirs=False)
    except FileNotFoundError:
        return
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


def make_dirs_below(root: str, relative: str, host: str = "") -> None:
    """Makes root/relative and the folders on its way, none of them reached through a link."""
    fd, name = _open_parent(root, f"{relative}/.", host, make_dirs=True)
    os.close(fd)


def sidecar_below(path: str) -> tuple[str, str]:
    """(cache root, 'folder/name') of one of staging's own files (hashes, progress, locks, markers) kept in a folder
    of the cache root: what the *_below functions take, so the folder and the file are opened without following a
    link, below the cache root (the folder's parent)."""
    folder = os.path.dirname(path)
    return os.path.dirname(folder), f"{os.path.basename(folder)}/{os.path.basename(path)}"


def read_sidecar(path: str, limit: int = 64 * 1024 * 1024, host: str = "") -> str:
    """The text of one of staging's own files (see sidecar_below)."""
    return read_below(*sidecar_below(path), limit, host)


def write_sidecar(path: str, text: str, host: str = "") -> None:
    """Replaces one of staging's own files (see sidecar_below) the way write_below does."""
    write_below(*sidecar_below(path), text, host)


def read_commit(root: str, relative: str, host: str = "") -> str:
    """The commit a ref file names ('' when there is none); refused when it is a link or holds anything but a
    commit. The content is quoted in the refusal, cut short: it is never followed, so it is the file's own."""
    try:
        content = read_below(root, relative, _MAX_REF_CONTENT + 1, host=host).strip()
    except FileNotFoundError:
        return ""
    except NotADirectoryError:
        return ""
    if not is_commit(content):
        shown = content if len(content) <= _MAX_REF_CONTENT else content[:_MAX_REF_CONTENT] + "..."
        raise Untrusted(MESSAGES["F17_REF_CONTENT"].format(host=host, path=os.path.join(root, relative), content=shown))
    return content


def check_tree(root: str, relative: str, host: str = "") -> None:
    """Refuses when any component of root/relative below root is a link (the path staging will read or write)."""
    path = root
    for part in _components(relative):
        path = os.path.join(path, part)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise Untrusted(MESSAGES["F17_LINK"].format(host=host, path=path, target=os.readlink(path)))


def snapshot_files(repo: str, commit: str, host: str = "") -> list[str]:
    """Every file of snapshots/<commit> under a model's folder (relative paths, sorted): a regular file, or a
    link that resolves to a regular file inside the same model's blobs/. Anything else is refused: a link
    elsewhere, a linked folder, a device or a pipe; and so is a link anywhere on the way from repo to the
    snapshot or to blobs/."""
    if not is_commit(commit):
        raise Untrusted(MESSAGES["F17_REF_CONTENT"].format(host=host, path=os.path.join(repo, "snapshots"),
                                                           content=str(commit)[:_MAX_REF_CONTENT]))
    check_tree(repo, f"snapshots/{commit}", host)
    check_tree(repo, "blobs", host)
    root = os.path.join(repo, "snapshots", commit)
    blobs = os.path.realpath(os.path.join(repo, "blobs"))
    files = []
    for folder, dirs, names in os.walk(root):  # links to folders are listed in dirs, and not entered
        for name in sorted(dirs):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                raise Untrusted(MESSAGES["F17_LINK"].format(host=host, path=path, target=os.readlink(path)))
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if name.endswith((".part", ".tmp")):
                continue
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                target = os.path.realpath(path)
                if os.path.commonpath([target, blobs]) != blobs or not os.path.isfile(target):
                    raise Untrusted(MESSAGES["F17_ENTRY_OUTSIDE"].format(host=host, path=path, target=os.readlink(path),
                                                                         blobs=os.path.join(repo, "blobs")))
            elif not stat.S_ISREG(info.st_mode):
                raise Untrusted(MESSAGES["F17_ENTRY_KIND"].format(host=host, path=path, kind=_kind(info.st_mode)))
            files.append(relative)
    return files


def open_entry(repo: str, commit: str, relative: str, host: str = "") -> int:
    """A descriptor of one snapshot entry, for reading: walked from the model's folder without following a link,
    except the entry's own link into the model's blobs/, resolved here by hand (`../` up to the model's folder, then
    `blobs/<name>`, as huggingface_hub writes it); what is opened must be a regular file. Sizes, times and hashes are
    read from this descriptor, so nothing swapped in after snapshot_files() looked is followed."""
    entry = f"snapshots/{commit}/{relative}"
    fd, name = _open_parent(repo, entry, host, make_dirs=False)
    try:
        info = os.lstat(name, dir_fd=fd)
        target = os.readlink(name, dir_fd=fd) if stat.S_ISLNK(info.st_mode) else ""
    finally:
        os.close(fd)
    if not target:
        return open_below(repo, entry, os.O_RDONLY, host=host)
    prefix = "../" * (len(relative.split("/")) + 1) + "blobs/"
    blob = target[len(prefix):]
    if not target.startswith(prefix) or not blob or "/" in blob or blob in (".", ".."):
        raise Untrusted(MESSAGES["F17_ENTRY_OUTSIDE"].format(host=host, path=os.path.join(repo, entry), target=target,
                                                             blobs=os.path.join(repo, "blobs")))
    return open_below(repo, f"blobs/{blob}", os.O_RDONLY, host=host)


def drop_cache(fd: int) -> None:
    """Drops a file's clean pages from the page cache once staging has hashed, sent or written it: on unified memory
    (GB10) the page cache is the memory vLLM asks for, and 120 GB read through it leaves MemFree too low (F18)."""
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "pipe"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def owner_problem(host: str, path: str, trusted_owners: t.Iterable[str], owner_name: t.Callable[[int], str]) -> str:
    """F17: a source tree (the model's folder and everything in it, links not followed; the folder itself no link)
    with anything owned by someone other than root and the operator's trusted owners ('' when fine)."""
    trusted = set(trusted_owners)
    if os.path.islink(path):
        return MESSAGES["F17_LINK"].format(host=host, path=path, target=os.readlink(path))
    for folder, dirs, names in os.walk(path):
        for name in [""] + sorted(dirs) + sorted(names):
            entry = os.path.join(folder, name) if name else folder
            uid = os.lstat(entry).st_uid
            owner = owner_name(uid)
            if uid != 0 and owner not in trusted:
                return MESSAGES["F17_SOURCE_OWNER"].format(host=host, path=entry, owner=owner, uid=uid)
    return ""
