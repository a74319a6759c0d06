# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The head's throwaway HTTP server for staging weights (model_serve): serves the files of one snapshot's manifest,
read-only, on the head's interconnect address, with byte ranges so an interrupted copy resumes.

What it trusts: nothing a request names beyond the manifest (each file reached from the model's folder without
following a link, except a snapshot entry's own link into its blobs/: _weights_paths.open_entry; a regular file of
the manifest's size), and no request that does not carry this run's HMAC (_weights_auth): anyone else gets 403, and
an unauthenticated connection neither keeps it alive nor holds it past the request timeout.

How long it lives: until every worker that copies has said it is done (POST /done), or, should one die without
saying so, until no authenticated request has been in flight for `idle` seconds (`startup` before the first). A
worker hashing a resumed `.part` before asking for the rest is covered by `idle`.

How it sends: os.sendfile from the file to the socket (no copy through Python), then drops the file's pages from
the page cache, so serving 120 GB does not push the head's free memory below what vLLM asks for (F18).
Private to the collection."""

from __future__ import annotations

import http.server
import os
import threading
import time
import typing as t
import urllib.parse

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_auth import (
    NONCE,
    PROOF,
    REQUEST,
    matches,
    sign,
)
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import Untrusted, drop_cache, open_entry

DONE = "/done"

MESSAGES = {
    "CANNOT_LISTEN": "[F17] {host}: the staging server could not listen on {address}:{port}: {error}. Nothing was "
                     "copied. Fix: free port {port} there (ss -ltnp names the process), or set "
                     "vllm_cluster_weights_port to a free port.",
}


class Staging:
    """One run's snapshot, secret and workers, and what the server saw of them."""

    def __init__(self, repo: str, commit: str, files: t.Mapping[str, t.Mapping[str, t.Any]], secret: str,
                 workers: int, host: str = "", clock: t.Callable[[], float] = time.monotonic) -> None:
        self.repo, self.commit, self.secret, self.workers, self.host = repo, commit, secret, workers, host
        self.sizes = {name: int(entry["size"]) for name, entry in files.items()}
        self.clock = clock
        self.lock = threading.Lock()
        self.nonces: set[str] = set()
        self.done: set[str] = set()
        self.in_flight = 0
        self.last: t.Optional[float] = None
        self.requests = self.refused = self.sent = 0

    def open(self, name: str) -> t.Optional[int]:
        """A descriptor of the manifest's file `name`, or None (not in the manifest, a link elsewhere, not a regular
        file of the manifest's size)."""
        size = self.sizes.get(name)
        if size is None:
            return None
        try:
            fd = open_entry(self.repo, self.commit, name, self.host)
        except (OSError, Untrusted):
            return None
        if os.fstat(fd).st_size != size:
            os.close(fd)
            return None
        return fd

    def admit(self, method: str, path: str, headers: t.Any) -> str:
        """The nonce of a request signed with this run's secret, seen for the first time; "" otherwise."""
        nonce = str(headers.get(NONCE) or "")
        if not nonce or not matches(sign(self.secret, "worker", nonce, method, path), headers.get(REQUEST)):
            with self.lock:
                self.refused += 1
            return ""
        with self.lock:
            if nonce in self.nonces:
                self.refused += 1
                return ""
            self.nonces.add(nonce)
            self.requests += 1
        return nonce

    def begin(self) -> None:
        with self.lock:
            self.in_flight += 1

    def end(self, sent: int = 0) -> None:
        with self.lock:
            self.in_flight -= 1
            self.sent += sent
            self.last = self.clock()

    def finished(self, worker: str) -> None:
        with self.lock:
            self.done.add(worker)
            self.last = self.clock()

    def why_stop(self, began: float, idle: float, startup: float) -> str:
        """Why the server should stop now, or "" to go on."""
        with self.lock:
            if self.workers and len(self.done) >= self.workers:
                return "every worker is done"
            if self.in_flight:
                return ""
            if self.last is None:
                return f"no worker asked within {startup:.0f} s" if self.clock() - began >= startup else ""
            return f"no request for {idle:.0f} s" if self.clock() - self.last >= idle else ""


class Handler(http.server.BaseHTTPRequestHandler):
    staging: Staging
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: t.Any) -> None:
        pass

    def _admit(self, method: str) -> tuple[str, str]:
        path = urllib.parse.urlsplit(self.path).path
        nonce = self.staging.admit(method, path, self.headers)
        if not nonce:
            self.send_error(403, "not this run's staging request")
        return nonce, path

    def _proof(self, nonce: str, method: str, path: str) -> None:
        self.send_header(PROOF, sign(self.staging.secret, "server", nonce, method, path))

    def do_POST(self) -> None:
        nonce, path = self._admit("POST")
        if not nonce:
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if path != DONE or not 0 <= length <= 1024:  # a worker's name, nothing more
            self.close_connection = True
            self.send_error(404 if path != DONE else 400)
            return
        worker = self.rfile.read(length).decode("utf-8", "replace")
        self.staging.finished(worker)
        self.send_response(204)
        self._proof(nonce, "POST", path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        nonce, path = self._admit("GET")
        if not nonce:
            return
        self.staging.begin()
        sent = 0
        try:
            name = urllib.parse.unquote(path).lstrip("/")
            fd = self.staging.open(name)
            if fd is None:
                self.send_error(404)
                return
            try:
                sent = self._send(fd, self.staging.sizes[name], nonce, path)
            finally:
                drop_cache(fd)
                os.close(fd)
        finally:
            self.staging.end(sent)

    def _send(self, fd: int, size: int, nonce: str, path: str) -> int:
        wanted = self.headers.get("Range", "")
        start = 0
        if wanted.startswith("bytes="):
            try:  # a worker resumes with "bytes=N-"; nothing else (suffixes, lists) is asked for
                start = int(wanted[6:].split("-")[0])
            except ValueError:
                start = -1
            if not 0 <= start < size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return 0
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{max(size - 1, start)}/{size}")
        else:
            self.send_response(200)
        self._proof(nonce, "GET", path)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        self.wfile.flush()
        if size > start:
            with os.fdopen(os.dup(fd), "rb") as handle:
                return self.connection.sendfile(handle, start, size - start)
        return 0


def serve(address: str, port: int, staging: Staging, idle: float, startup: float, request_timeout: float,
          on_listening: t.Callable[[], None] = lambda: None, poll: float = 0.2) -> dict[str, t.Any]:
    """Serves until why_stop() says so; returns what happened. Raises OSError when it cannot listen."""
    handler = type("BoundHandler", (Handler,), {"staging": staging, "timeout": request_timeout})
    server = http.server.ThreadingHTTPServer((address, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    on_listening()
    began = staging.clock()
    try:
        while True:
            reason = staging.why_stop(began, idle, startup)
            if reason:
                break
            time.sleep(poll)
    finally:
        server.shutdown()
        server.server_close()
    return {"reason": reason, "requests": staging.requests, "refused": staging.refused, "bytes": staging.sent,
            "done": sorted(staging.done), "seconds": round(staging.clock() - began, 2)}
