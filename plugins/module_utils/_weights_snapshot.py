# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One model's folder in a hub cache, as huggingface_hub lays it out and vLLM reads it offline:
`models--ORG--NAME/refs/<ref>` holds a commit, `snapshots/<commit>/` its files. Which commit a ref names, where
an operator's own copy of the model is (an HF_HOME, its hub folder or the model's folder), bringing that copy
into the head's cache, and pointing a node's ref at the staged commit. Everything read from a cache is checked
and every file is opened without following links (_weights_paths). Private to the collection."""

from __future__ import annotations

import os
import shutil

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import repo_folder
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    is_commit,
    open_below,
    open_entry,
    read_commit,
    replace_below,
    sidecar_below,
    snapshot_files,
    unlink_below,
    write_below,
)


def repo_dir(cache_root: str, model: str) -> str:
    """The model's folder in the cache under an HF_HOME (the hub cache is HF_HOME/hub)."""
    return os.path.join(str(cache_root).rstrip("/"), "hub", repo_folder(model))


def snapshot_path(cache_root: str, model: str, commit: str) -> str:
    """Where the files of one revision live under HF_HOME."""
    return os.path.join(repo_dir(cache_root, model), "snapshots", commit)


def _from(root: str, path: str) -> tuple[str, str]:
    """(where to start, what lies below it): from root (a cache root, taken as it is) when given, so no folder
    between it and path is followed if it is a link; else from path itself."""
    return (root, os.path.relpath(path, root) + "/") if root else (path, "")


def read_ref(repo: str, ref: str, host: str = "", root: str = "") -> str:
    """The commit a ref names in a model folder ('' when none); a commit given as the ref names itself when
    its snapshot is there. The ref file is read as data, never through a link (from root down, when given), and
    must hold a commit (Untrusted otherwise): its content becomes a path."""
    if is_commit(ref):
        return ref if os.path.isdir(os.path.join(repo, "snapshots", ref)) else ""
    if not os.path.isdir(repo):
        return ""
    start, below = _from(root, repo)
    return read_commit(start, f"{below}refs/{ref}", host)


def write_ref(repo: str, ref: str, commit: str, host: str = "", root: str = "") -> bool:
    """Points refs/<ref> at commit (what vLLM resolves with HF_HUB_OFFLINE=1); True when that changed it."""
    if is_commit(ref) or read_ref(repo, ref, host, root) == commit:
        return False
    start, below = _from(root, repo)
    write_below(start, f"{below}refs/{ref}", commit, host)
    return True


def find_repo(source: str, model: str) -> str:
    """The model's folder inside an operator's directory: an HF_HOME (hub/models--ORG--NAME), its hub folder
    (models--ORG--NAME) or the model's folder itself; '' when none of them holds snapshots."""
    folder = repo_folder(model)
    source = os.path.normpath(str(source))
    for path in (os.path.join(source, "hub", folder), os.path.join(source, folder), source):
        if os.path.basename(path) == folder and os.path.isdir(os.path.join(path, "snapshots")):
            return path
    return ""


def import_snapshot(source_repo: str, commit: str, target_dir: str, host: str = "", root: str = "") -> list[str]:
    """Copies into target_dir (the head's snapshot, below root, its cache root, when given) every file of the source's
    snapshot that is missing there or has another size, as a regular file; returns what it copied. The source's
    entries must be files or links into its own blobs/ (snapshot_files); each is written to a fresh `.part` and
    renamed, never through a link, every folder from root down opened without following one. Sizes decide, not
    hashes: the operator's copy is read once, and the head's manifest, taken afterwards, hashes what the nodes
    will receive."""
    names = snapshot_files(source_repo, commit, host)  # all of it checked before anything is written
    if not root:
        os.makedirs(target_dir, exist_ok=True)
    start, below = _from(root, target_dir)
    copied = []
    for relative in names:
        with os.fdopen(open_entry(source_repo, commit, relative, host), "rb") as src:
            size = os.fstat(src.fileno()).st_size
            target = os.path.join(target_dir, relative)
            if os.path.isfile(target) and not os.path.islink(target) and os.path.getsize(target) == size:
                continue
            out = open_below(start, f"{below}{relative}.part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, host=host,
                             make_dirs=True)
            with os.fdopen(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 8 * 1024 * 1024)
        replace_below(start, f"{below}{relative}.part", f"{below}{relative}", host)
        copied.append(relative)
    return copied


def hash_cache_file(cache_root: str, model: str, commit: str) -> str:
    """Where a node keeps the sha256 of one snapshot's files: beside the hub cache, not inside it, so that
    huggingface_hub's own tools never see a file they do not know."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}--{commit}.sha256.json")


def progress_file(cache_root: str, model: str) -> str:
    """Where a node's copy reports its progress (the play polls it; an operator can read it)."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}.progress.json")


def download_marker(cache_root: str, model: str) -> str:
    """Present while the head's download of a model runs (files/download.py writes it first and removes it once
    snapshot_download returned): huggingface_hub writes refs/<revision> before the files, so a download interrupted
    halfway leaves a snapshot that looks whole."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}.downloading")


def clear_download_marker(cache_root: str, model: str, host: str = "") -> None:
    """Removes the marker of an interrupted download once the model's snapshot came whole from elsewhere (the
    operator's directory or archive); removed without following a link."""
    unlink_below(*sidecar_below(download_marker(cache_root, model)), host)


def server_lock_file(cache_root: str) -> str:
    """The head's staging server holds this while it serves, and says in it where it listens (the play waits for
    that line); the next run ends a server an interrupted run left behind through it."""
    return os.path.join(str(cache_root), "inferops-weights", "server.lock")


def copy_lock_file(cache_root: str, model: str) -> str:
    """A worker's copy of one model holds this while it writes: one writer per `.part`."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}.lock")
