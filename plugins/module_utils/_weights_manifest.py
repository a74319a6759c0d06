# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The manifest of one snapshot folder: every file's relative path, size and sha256 (symlinks into the hub
cache's blobs followed, as vLLM reads them). Hashing 120 GB takes minutes, so a node keeps the hashes it
computed in a sidecar file keyed by each file's size and modification time: a no-op run reads metadata only.
Private to the collection."""

from __future__ import annotations

import hashlib
import json
import os
import typing as t

CHUNK = 8 * 1024 * 1024


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _load(cache_file: str) -> dict[str, t.Any]:
    try:
        with open(cache_file, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def read_manifest(root: str, cache_file: str = "", hash_file: t.Callable[[str], str] = sha256_of) -> dict[str, t.Any]:
    """{relative path: {size, sha256}} of every regular file under root (symlinks followed); {} when root does
    not exist. Hashes are reused from cache_file while a file's size and mtime are unchanged; the cache is
    rewritten with what was read. Returns the manifest and how many files were hashed this time."""
    files: dict[str, dict[str, t.Any]] = {}
    cache = _load(cache_file) if cache_file else {}
    hashed = 0
    if not os.path.isdir(root):
        return {"files": files, "hashed": 0}
    for folder, dirs, names in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".part"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            stat = os.stat(path)
            key = f"{stat.st_size}:{stat.st_mtime_ns}"
            known = cache.get(relative) or {}
            if known.get("key") == key and known.get("sha256"):
                digest = known["sha256"]
            else:
                digest = hash_file(path)
                hashed += 1
            files[relative] = {"size": stat.st_size, "sha256": digest, "key": key}
    if cache_file:
        tmp = cache_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({path: {"key": entry["key"], "sha256": entry["sha256"]} for path, entry in files.items()}, handle)
        os.replace(tmp, cache_file)
    return {"files": {path: {"size": entry["size"], "sha256": entry["sha256"]} for path, entry in files.items()},
            "hashed": hashed}
