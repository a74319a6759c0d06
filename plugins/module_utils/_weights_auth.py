# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a worker and the head's staging server know each other: both hold this run's secret (made on the
controller, passed to each as a no_log module option, never on a command line), and neither sends it. Each request
carries a fresh nonce and the worker's HMAC of it; the server answers only a request it can verify, once per nonce,
and signs its answer with the same nonce, so a process that took the port first (a user's `python3 -m http.server
29510`) can neither read a file nor pass for the server. Private to the collection."""

from __future__ import annotations

import hashlib
import hmac
import secrets

NONCE = "X-Inferops-Nonce"
REQUEST = "X-Inferops-Request"
PROOF = "X-Inferops-Proof"


def sign(secret: str, side: str, nonce: str, method: str, path: str) -> str:
    """The HMAC-SHA256 of one request (side 'worker') or of the server's answer to it (side 'server')."""
    message = "\0".join((side, nonce, method, path)).encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def request_headers(secret: str, method: str, path: str) -> dict[str, str]:
    """A worker's headers for one request, and the nonce the server must sign its answer with."""
    nonce = secrets.token_hex(16)
    return {NONCE: nonce, REQUEST: sign(secret, "worker", nonce, method, path)}


def matches(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode("utf-8"), str(given or "").encode("utf-8"))
