# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One model's folder in a hub cache, as huggingface_hub lays it out and vLLM reads it offline:
`models--ORG--NAME/refs/<ref>` holds a commit, `snapshots/<commit>/` its files. Which commit a ref names, where
an operator's own copy of the model is (an HF_HOME, its hub folder or the model's folder), bringing that copy
into the head's cache, and pointing a node's ref at the staged commit. Private to the collection."""

from __future__ import annotations

import os
import re
import shutil

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import repo_folder

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def repo_dir(cache_root: str, model: str) -> str:
    """The model's folder in the cache under an HF_HOME (the hub cache is HF_HOME/hub)."""
    return os.path.join(str(cache_root).rstrip("/"), "hub", repo_folder(model))


def snapshot_path(cache_root: str, model: str, commit: str) -> str:
    """Where the files of one revision live under HF_HOME."""
    return os.path.join(repo_dir(cache_root, model), "snapshots", commit)


def read_ref(repo: str, ref: str) -> str:
    """The commit a ref names in a model folder ('' when none); a commit given as the ref names itself when
    its snapshot is there."""
    if _COMMIT.match(ref):
        return ref if os.path.isdir(os.path.join(repo, "snapshots", ref)) else ""
    try:
        with open(os.path.join(repo, "refs", ref), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def write_ref(repo: str, ref: str, commit: str) -> bool:
    """Points refs/<ref> at commit (what vLLM resolves with HF_HUB_OFFLINE=1); True when that changed it."""
    if _COMMIT.match(ref) or read_ref(repo, ref) == commit:
        return False
    path = os.path.join(repo, "refs", ref)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(commit)
    os.replace(path + ".tmp", path)
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


def file_sizes(root: str) -> dict[str, int]:
    """Every regular file under root (symlinks into blobs followed) and its size; .part files left out."""
    sizes = {}
    for folder, dirs, names in os.walk(root, followlinks=True):
        dirs.sort()
        for name in names:
            if not name.endswith(".part"):
                path = os.path.join(folder, name)
                sizes[os.path.relpath(path, root)] = os.path.getsize(path)
    return sizes


def import_snapshot(source_dir: str, target_dir: str) -> list[str]:
    """Copies into target_dir (the head's snapshot) every file of source_dir that is missing there or has
    another size, as a regular file; returns what it copied. Sizes decide, not hashes: the operator's copy is
    read once, and the head's manifest, taken afterwards, hashes what the nodes will receive."""
    copied = []
    for relative, size in sorted(file_sizes(source_dir).items()):
        target = os.path.join(target_dir, relative)
        if os.path.isfile(target) and os.path.getsize(target) == size:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(source_dir, relative), target + ".part")
        os.replace(target + ".part", target)
        copied.append(relative)
    return copied


def hash_cache_file(cache_root: str, model: str, commit: str) -> str:
    """Where a node keeps the sha256 of one snapshot's files: beside the hub cache, not inside it, so that
    huggingface_hub's own tools never see a file they do not know."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}--{commit}.sha256.json")


def progress_file(cache_root: str, model: str) -> str:
    """Where a node's copy reports its progress (the play polls it; an operator can read it)."""
    return os.path.join(str(cache_root), "inferops-weights", f"{repo_folder(model)}.progress.json")
