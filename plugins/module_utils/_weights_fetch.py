# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Copies the files a node lacks from the head's throwaway HTTP server (model_serve, bound to the head's
interconnect address), one at a time, each into `<name>.part`, resumed with a Range request after an interruption.
Each file is hashed while its bytes arrive (a resumed `.part` is hashed once, before the rest is asked for), so
every byte is read from disk at most once and the next request follows at once; it is synced, its pages dropped
from the page cache (F18 on unified memory), and checked against the head's sha256 before it replaces the file.
Every request is signed with this run's secret and every answer must carry the server's proof (_weights_auth):
nothing is written from a process that only took the port. Progress goes to a small JSON file the play polls. Each
name from the head's manifest is checked, and every `.part`, rename and progress file is opened without following
a link (_weights_paths). Private to the collection."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import threading
import time
import typing as t
import urllib.parse

from ansible.module_utils.urls import open_url

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_auth import PROOF, matches, request_headers, sign
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_server import DONE

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import (
    Untrusted,
    drop_cache,
    make_dirs_below,
    open_below,
    relative_problem,
    replace_below,
    unlink_below,
    write_sidecar,
)

CHUNK = 8 * 1024 * 1024

MESSAGES = {
    "NO_PROOF": "{url} answered without this run's proof (HTTP {status}): another process holds the port on the head, "
                "or an older run's server does. Nothing was written. Fix: free that port on the head (ss -ltnp names "
                "the process), or set vllm_cluster_weights_port, and run site.yml again.",
}


class FetchError(Exception):
    """A file could not be copied or did not verify; the message names it."""


def _write_progress(progress_file: str, state: t.Mapping[str, t.Any]) -> None:
    if progress_file:
        write_sidecar(progress_file, json.dumps(dict(state)))


def _hash_existing(fd: int, digest: t.Any) -> int:
    """Hashes what a `.part` already holds (an interrupted copy's bytes), once; returns its size."""
    size = 0
    os.lseek(fd, 0, os.SEEK_SET)
    for block in iter(lambda: os.read(fd, CHUNK), b""):
        digest.update(block)
        size += len(block)
    return size


def signed(secret: str, method: str, url: str, headers: t.Optional[dict[str, str]] = None) -> tuple[dict[str, str], str]:
    """The headers of one signed request to `url`, and the proof its answer must carry."""
    path = urllib.parse.urlsplit(url).path
    ask = request_headers(secret, method, path)
    return {**(headers or {}), **ask}, sign(secret, "server", ask["X-Inferops-Nonce"], method, path)


def _check_proof(response: t.Any, proof: str, url: str) -> None:
    if not matches(proof, response.headers.get(PROOF)):
        raise FetchError(MESSAGES["NO_PROOF"].format(url=url, status=getattr(response, "status", "?")))


def _below(root: str, dest: str) -> tuple[str, str]:
    """Where dest's files are opened from: walked from root (the node's cache root, taken as it is) without following
    a link, so a folder on the way swapped for a link during a long copy turns no write into one elsewhere. Without
    a root, from dest itself."""
    if not root:
        return dest, ""
    return root, os.path.relpath(dest, root) + "/"


def fetch_one(base_url: str, relative: str, entry: t.Mapping[str, t.Any], dest: str, timeout: float,
              on_bytes: t.Callable[[int], None], root: str = "", secret: str = "") -> int:
    """Copies one file; returns the bytes transferred this time (a resumed file counts only the rest)."""
    problem = relative_problem("", relative)
    if problem:
        raise FetchError(problem)
    start, base = _below(root, dest)
    part, relative_target = base + relative + ".part", base + relative
    size = int(entry["size"])
    try:
        fd = open_below(start, part, os.O_RDWR | os.O_CREAT, make_dirs=True)
        try:
            digest = hashlib.sha256()
            have = _hash_existing(fd, digest)
            if have > size:
                os.ftruncate(fd, 0)
                digest, have = hashlib.sha256(), 0
            transferred = 0
            if have < size:
                transferred, digest = _receive(base_url, relative, fd, have, size, digest, timeout, on_bytes, secret)
            got = os.fstat(fd).st_size
            os.fdatasync(fd)
            drop_cache(fd)
        finally:
            os.close(fd)
        if got < size:  # the answer ended early (the server was stopped): what arrived is kept for the next run
            raise FetchError(f"{relative}: the head's server ended its answer after {got} of {size} bytes (was it "
                             "stopped?); kept, a re-run resumes")
        if got != size or digest.hexdigest() != entry["sha256"]:
            unlink_below(start, part)
            raise FetchError(f"{relative}: {got} bytes, sha256 {digest.hexdigest()[:12]}, but the head's has {size} "
                             f"bytes, sha256 {str(entry['sha256'])[:12]}; removed, a re-run copies it again")
        replace_below(start, part, relative_target)
    except Untrusted as exc:
        raise FetchError(str(exc)) from exc
    return transferred


def _receive(base_url: str, relative: str, fd: int, have: int, size: int, digest: t.Any, timeout: float,
             on_bytes: t.Callable[[int], None], secret: str) -> tuple[int, t.Any]:
    """Appends the rest of one file to its `.part` (fd), hashing each block as it arrives; returns the bytes
    received and the file's digest (a new one when the server ignored the range and the file starts over)."""
    url = base_url.rstrip("/") + "/" + urllib.parse.quote(relative)
    headers, proof = signed(secret, "GET", url, {"Range": f"bytes={have}-"} if have else {})
    transferred = 0
    try:
        with open_url(url, headers=headers, timeout=timeout, use_proxy=False) as response:
            _check_proof(response, proof, url)
            if have and response.status != 206:  # the server ignored the range: start over
                os.ftruncate(fd, 0)
                digest, have = hashlib.sha256(), 0
            os.lseek(fd, have, os.SEEK_SET)
            for block in iter(lambda: response.read(CHUNK), b""):
                if have + transferred + len(block) > size:
                    raise FetchError(f"{relative}: the head's server sent more than the {size} bytes of its manifest; "
                                     "stopped there. Fix: run site.yml again (a file that does not hash right is "
                                     "removed and copied anew)")
                digest.update(block)
                view = memoryview(block)
                while view:
                    view = view[os.write(fd, view):]
                transferred += len(block)
                on_bytes(len(block))
    except FetchError:
        raise
    except OSError as exc:
        if getattr(exc, "code", None) == 403:
            raise FetchError(MESSAGES["NO_PROOF"].format(url=url, status=403)) from exc
        if getattr(exc, "code", None) == 404:
            raise FetchError(f"{relative}: the head's server does not serve it (404): the head's copy changed since "
                             "this run read its manifest. Fix: run site.yml again (the manifest is read anew)") from exc
        raise FetchError(f"{relative}: {exc} (after {have + transferred} of {size} bytes; a re-run resumes)") from exc
    return transferred, digest


def say_done(base_url: str, secret: str, worker: str, timeout: float = 10) -> bool:
    """Tells the server this worker needs nothing more (it exits once every worker has); False if it did not hear."""
    url = base_url.rstrip("/") + DONE
    headers, proof = signed(secret, "POST", url, {"Content-Type": "text/plain"})
    try:
        with open_url(url, data=worker.encode("utf-8"), headers=headers, method="POST", timeout=timeout,
                      use_proxy=False) as response:
            return matches(proof, response.headers.get(PROOF))
    except OSError:
        return False


def fetch_files(base_url: str, files: t.Mapping[str, t.Mapping[str, t.Any]], dest: str, timeout: float = 60,
                progress_file: str = "", clock: t.Callable[[], float] = time.monotonic, root: str = "",
                secret: str = "", worker: str = "", streams: int = 1) -> dict[str, t.Any]:
    """Copies every file of `files` (relative path -> {size, sha256}) into dest (a folder below root, the node's cache
    root: every folder from root down is opened without following a link), `streams` files at a time, the largest
    first (one stream is bounded by one core receiving, hashing and writing; a fast link needs several); returns what
    it did. After the first failure no further file is started; the files in flight finish (each `.part` kept for a
    re-run) and the first failure is raised. Whether it copied everything or failed, it then tells the server this
    worker is done (`heard`: whether the server answered)."""
    total = sum(int(entry["size"]) for entry in files.values())
    state: dict[str, t.Any] = {"files": len(files), "done": 0, "bytes": 0, "total": total, "started": clock(),
                               "current": "", "wall": time.time()}
    lock = threading.Lock()
    in_flight: list[str] = []
    failures: list[FetchError] = []

    def on_bytes(count: int) -> None:
        with lock:
            state["bytes"] += count
            if state["bytes"] % (256 * 1024 * 1024) < count:
                _write_progress(progress_file, state)

    def copy(relative: str) -> None:
        with lock:
            if failures:
                return
            in_flight.append(relative)
            state["current"] = ", ".join(in_flight)
            _write_progress(progress_file, state)
        try:
            fetch_one(base_url, relative, files[relative], dest, timeout, on_bytes, root, secret)
        # a full disk or an I/O error as much as a FetchError: no new file starts after it
        except Exception as exc:  # pylint: disable=broad-exception-caught
            failure = exc if isinstance(exc, FetchError) else FetchError(f"{relative}: {exc}")
            with lock:
                failures.append(failure)
                state.setdefault("error", str(failure))
                _write_progress(progress_file, state)
            return
        finally:
            with lock:
                in_flight.remove(relative)
                state["current"] = ", ".join(in_flight)
        with lock:
            state["done"] += 1

    order = sorted(files, key=lambda name: (-int(files[name]["size"]), name))
    try:
        if root:
            make_dirs_below(root, os.path.relpath(dest, root))
        else:
            os.makedirs(dest, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, streams)) as pool:
            for future in [pool.submit(copy, relative) for relative in order]:
                future.result()
        if failures:
            raise failures[0]
    finally:
        heard = say_done(base_url, secret, worker)
        # the last word in the progress file, an error included (a stream still copying may have written after it)
        state.update(current="", seconds=round(clock() - state["started"], 2), finished=True)
        _write_progress(progress_file, state)
    return {"copied": sorted(files), "bytes": state["bytes"], "seconds": state["seconds"], "heard": heard}
