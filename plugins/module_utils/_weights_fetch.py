# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Copies the files a node lacks from the head's throwaway HTTP server (bound to the head's interconnect
address), one at a time, each into `<name>.part`, resumed with a Range request after an interruption, checked
against the head's sha256 before it replaces the file. Progress goes to a small JSON file the play polls. The
cache is writable by the cluster's containers: each name from the head's manifest is checked, and every `.part`,
rename and progress file is opened without following a link (_weights_paths). Private to the collection."""

from __future__ import annotations

import hashlib
import json
import os
import time
import typing as t
import urllib.parse

from ansible.module_utils.urls import open_url

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    Untrusted,
    make_dirs_below,
    open_below,
    relative_problem,
    replace_below,
    unlink_below,
    write_sidecar,
)

CHUNK = 8 * 1024 * 1024


class FetchError(Exception):
    """A file could not be copied or did not verify; the message names it."""


def _write_progress(progress_file: str, state: t.Mapping[str, t.Any]) -> None:
    if progress_file:
        write_sidecar(progress_file, json.dumps(dict(state)))


def _part_size(dest: str, part: str) -> int:
    try:
        fd = open_below(dest, part, os.O_RDONLY)
    except FileNotFoundError:
        return 0
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _part_digest(dest: str, part: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with os.fdopen(open_below(dest, part, os.O_RDONLY), "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _below(root: str, dest: str) -> tuple[str, str]:
    """Where dest's files are opened from: walked from root (the node's cache root, taken as it is) without following
    a link, so a folder on the way swapped for a link during a long copy turns no write into one elsewhere. Without
    a root, from dest itself."""
    if not root:
        return dest, ""
    return root, os.path.relpath(dest, root) + "/"


def fetch_one(base_url: str, relative: str, entry: t.Mapping[str, t.Any], dest: str, timeout: float,
              on_bytes: t.Callable[[int], None], root: str = "") -> int:
    """Copies one file; returns the bytes transferred this time (a resumed file counts only the rest)."""
    problem = relative_problem("", relative)
    if problem:
        raise FetchError(problem)
    start, base = _below(root, dest)
    part, relative_target = base + relative + ".part", base + relative
    try:
        have = _part_size(start, part)
        size = int(entry["size"])
        if have > size:
            unlink_below(start, part)
            have = 0
        transferred = 0
        if have < size:
            url = base_url.rstrip("/") + "/" + urllib.parse.quote(relative)
            headers = {"Range": f"bytes={have}-"} if have else {}
            try:
                with open_url(url, headers=headers, timeout=timeout, use_proxy=False) as response:
                    if have and response.status != 206:
                        have = 0  # the server ignored the range: start over
                    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if have else os.O_TRUNC)
                    with os.fdopen(open_below(start, part, flags, make_dirs=True), "wb") as handle:
                        for block in iter(lambda: response.read(CHUNK), b""):
                            handle.write(block)
                            transferred += len(block)
                            on_bytes(len(block))
            except Untrusted:
                raise
            except OSError as exc:
                raise FetchError(f"{relative}: {exc} (after {have + transferred} of {size} bytes; a re-run resumes)") from exc
        digest, got = _part_digest(start, part)
        if got != size or digest != entry["sha256"]:
            unlink_below(start, part)
            raise FetchError(f"{relative}: {got} bytes, sha256 {digest[:12]}, but the head's has {size} bytes, sha256 "
                             f"{str(entry['sha256'])[:12]}; removed, a re-run copies it again")
        replace_below(start, part, relative_target)
    except Untrusted as exc:
        raise FetchError(str(exc)) from exc
    return transferred


def fetch_files(base_url: str, files: t.Mapping[str, t.Mapping[str, t.Any]], dest: str, timeout: float = 60,
                progress_file: str = "", clock: t.Callable[[], float] = time.monotonic, root: str = "") -> dict[str, t.Any]:
    """Copies every file of `files` (relative path -> {size, sha256}) into dest (a folder below root, the node's cache
    root: every folder from root down is opened without following a link); returns what it did."""
    if root:
        make_dirs_below(root, os.path.relpath(dest, root))
    else:
        os.makedirs(dest, exist_ok=True)
    total = sum(int(entry["size"]) for entry in files.values())
    state = {"files": len(files), "done": 0, "bytes": 0, "total": total, "started": clock(), "current": "",
             "wall": time.time()}

    def on_bytes(count: int) -> None:
        state["bytes"] += count
        if state["bytes"] % (256 * 1024 * 1024) < count:
            _write_progress(progress_file, state)

    for relative in sorted(files):
        state["current"] = relative
        _write_progress(progress_file, state)
        try:
            fetch_one(base_url, relative, files[relative], dest, timeout, on_bytes, root)
        except FetchError as exc:
            _write_progress(progress_file, {**state, "error": str(exc), "finished": True})
            raise
        state["done"] += 1
    state.update(current="", seconds=round(clock() - state["started"], 2), finished=True)
    _write_progress(progress_file, state)
    return {"copied": sorted(files), "bytes": state["bytes"], "seconds": state["seconds"]}
