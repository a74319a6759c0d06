# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Copies the files a node lacks from the head's throwaway HTTP server (bound to the head's interconnect
address), one at a time, each into `<name>.part`, resumed with a Range request after an interruption, checked
against the head's sha256 before it replaces the file. Progress goes to a small JSON file the play polls.
Private to the collection."""

from __future__ import annotations

import json
import os
import time
import typing as t
import urllib.parse

from ansible.module_utils.urls import open_url

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_manifest import sha256_of

CHUNK = 8 * 1024 * 1024


class FetchError(Exception):
    """A file could not be copied or did not verify; the message names it."""


def _write_progress(progress_file: str, state: t.Mapping[str, t.Any]) -> None:
    if not progress_file:
        return
    os.makedirs(os.path.dirname(progress_file) or ".", exist_ok=True)
    tmp = progress_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(dict(state), handle)
    os.replace(tmp, progress_file)


def fetch_one(base_url: str, relative: str, entry: t.Mapping[str, t.Any], dest: str, timeout: float,
              on_bytes: t.Callable[[int], None]) -> int:
    """Copies one file; returns the bytes transferred this time (a resumed file counts only the rest)."""
    target = os.path.join(dest, relative)
    part = target + ".part"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    have = os.path.getsize(part) if os.path.exists(part) else 0
    size = int(entry["size"])
    if have > size:
        os.remove(part)
        have = 0
    transferred = 0
    if have < size:
        url = base_url.rstrip("/") + "/" + urllib.parse.quote(relative)
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with open_url(url, headers=headers, timeout=timeout, use_proxy=False) as response:
                if have and response.status != 206:
                    have = 0  # the server ignored the range: start over
                with open(part, "ab" if have else "wb") as handle:
                    for block in iter(lambda: response.read(CHUNK), b""):
                        handle.write(block)
                        transferred += len(block)
                        on_bytes(len(block))
        except OSError as exc:
            raise FetchError(f"{relative}: {exc} (after {have + transferred} of {size} bytes; a re-run resumes)") from exc
    digest, got = sha256_of(part), os.path.getsize(part)
    if got != size or digest != entry["sha256"]:
        os.remove(part)
        raise FetchError(f"{relative}: {got} bytes, sha256 {digest[:12]}, but the head's has {size} bytes, sha256 "
                         f"{str(entry['sha256'])[:12]}; removed, a re-run copies it again")
    os.replace(part, target)
    return transferred


def fetch_files(base_url: str, files: t.Mapping[str, t.Mapping[str, t.Any]], dest: str, timeout: float = 60,
                progress_file: str = "", clock: t.Callable[[], float] = time.monotonic) -> dict[str, t.Any]:
    """Copies every file of `files` (relative path -> {size, sha256}) into dest; returns what it did."""
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
            fetch_one(base_url, relative, files[relative], dest, timeout, on_bytes)
        except FetchError as exc:
            _write_progress(progress_file, {**state, "error": str(exc), "finished": True})
            raise
        state["done"] += 1
    state.update(current="", seconds=round(clock() - state["started"], 2), finished=True)
    _write_progress(progress_file, state)
    return {"copied": sorted(files), "bytes": state["bytes"], "seconds": state["seconds"]}
