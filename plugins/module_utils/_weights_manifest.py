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

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import drop_cache, read_sidecar, write_sidecar

CHUNK = 8 * 1024 * 1024


def sha256_of(path: str) -> str:
    with open(path, "rb") as handle:
        return _sha256_of_handle(handle)


def _sha256_of_handle(handle: t.BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(CHUNK), b""):
        digest.update(block)
    drop_cache(handle.fileno())
    return digest.hexdigest()


def _load(cache_file: str) -> dict[str, t.Any]:
    try:
        data = json.loads(read_sidecar(cache_file))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(cache_file: str, cache: t.Mapping[str, t.Any]) -> None:
    write_sidecar(cache_file, json.dumps(dict(cache)))


def read_manifest(root: str, cache_file: str = "", hash_file: t.Callable[[str], str] = sha256_of,
                  keep: bool = True, names: t.Optional[t.Iterable[str]] = None,
                  opener: t.Optional[t.Callable[[str], int]] = None, full: bool = False) -> dict[str, t.Any]:
    """{relative path: {size, sha256}} of every regular file under root (symlinks followed), or of `names` when
    given (what _weights_paths.snapshot_files accepted); {} when root does not exist. With `opener` (relative path
    -> descriptor, _weights_paths.open_entry), each file's size, time and hash come from the descriptor it gives,
    never from its path again. Hashes are reused from cache_file while a file's size and mtime are unchanged (what
    the fast path trusts: that nothing rewrote a file and set its time back), unless `full` (model_stage_verify:
    full) re-hashes every file; unless keep is false (check mode), the cache is rewritten with what was read. Returns the manifest and how
    many files were hashed this time."""
    files: dict[str, dict[str, t.Any]] = {}
    cache = _load(cache_file) if cache_file and not full else {}
    hashed = 0
    if not os.path.isdir(root):
        return {"files": files, "hashed": 0}
    for relative in sorted(names) if names is not None else _walk(root):
        known = cache.get(relative) or {}
        if opener is None:
            path = os.path.join(root, relative)
            stat = os.stat(path)
            key = f"{stat.st_size}:{stat.st_mtime_ns}"
            reuse = known.get("key") == key and known.get("sha256")
            digest = known["sha256"] if reuse else hash_file(path)
        else:
            with os.fdopen(opener(relative), "rb") as handle:
                stat = os.fstat(handle.fileno())
                key = f"{stat.st_size}:{stat.st_mtime_ns}"
                reuse = known.get("key") == key and known.get("sha256")
                digest = known["sha256"] if reuse else _sha256_of_handle(handle)
        hashed += 0 if reuse else 1
        files[relative] = {"size": stat.st_size, "sha256": digest, "key": key}
    if cache_file and keep:
        _save(cache_file, {path: {"key": entry["key"], "sha256": entry["sha256"]} for path, entry in files.items()})
    return {"files": {path: {"size": entry["size"], "sha256": entry["sha256"]} for path, entry in files.items()},
            "hashed": hashed}


def _walk(root: str) -> t.Iterator[str]:
    for folder, dirs, names in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".part"):
                yield os.path.relpath(os.path.join(folder, name), root)


def remember(root: str, cache_file: str, digests: t.Mapping[str, str],
             opener: t.Optional[t.Callable[[str], int]] = None) -> None:
    """Records the sha256 of files just written and verified (a worker's copies), keyed by their size and
    mtime now (read through `opener`'s descriptor when given), so the manifest read after the copy does not hash
    them a second time."""
    cache = _load(cache_file)
    for relative, digest in digests.items():
        if opener is None:
            stat = os.stat(os.path.join(root, relative))
        else:
            fd = opener(relative)
            try:
                stat = os.fstat(fd)
            finally:
                os.close(fd)
        cache[relative] = {"key": f"{stat.st_size}:{stat.st_mtime_ns}", "sha256": digest}
    _save(cache_file, cache)
