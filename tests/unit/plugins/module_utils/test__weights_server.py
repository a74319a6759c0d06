"""The head's staging server (_weights_server.serve, as model_serve runs it) on loopback: what it serves and to
whom, how long it lives, and that it cannot be made to serve anything but the manifest's files (#31)."""

from __future__ import annotations

import hashlib
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_auth import PROOF, matches
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import fetch_files, signed
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_server import Staging, serve

COMMIT = "c1899de289a04d12100db370d81485cdf75e47ca"


def get(url, secret="s3cret", headers=None, replay=None):
    """(status, body, proof valid) of one GET signed with `secret` (unsigned when None)."""
    wanted, proof = signed(secret, "GET", url) if secret is not None else ({}, "")
    wanted = {**(replay or wanted), **(headers or {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=wanted), timeout=10) as response:
            return response.status, response.read(), matches(proof, response.headers.get(PROOF))
    except urllib.error.HTTPError as exc:
        return exc.code, b"", False


def test_a_node_copies_through_it_resumed_and_it_stops_once_every_worker_is_done(staging_head, tmp_path):
    head, manifest, contents = staging_head({"model.safetensors": b"weights" * 50000}, workers=2, idle=30)
    for worker in ("spark-2", "spark-3"):
        node = tmp_path / worker
        node.mkdir()
        (node / "model.safetensors.part").write_bytes(contents["model.safetensors"][:1234])
        result = fetch_files(head.url, manifest, str(node), secret="s3cret", worker=worker)
        assert result["bytes"] == len(contents["model.safetensors"]) - 1234
        assert (node / "model.safetensors").read_bytes() == contents["model.safetensors"]
    started = time.monotonic()
    served = head.wait(5)
    assert time.monotonic() - started < 5  # not the 30 s idle time: both workers said they were done
    assert served["reason"] == "every worker is done" and served["done"] == ["spark-2", "spark-3"]
    assert served["bytes"] == 2 * (len(contents["model.safetensors"]) - 1234) and served["refused"] == 0


def test_it_stays_up_for_a_worker_busy_between_two_requests(staging_head):
    """#31 item 7: a worker that hashes a multi-GB shard between two requests must find the server still there.
    Before, it exited 5 s after the last request; now it waits for every worker's done (idle only for one that
    died)."""
    head, manifest = staging_head(workers=1, idle=2)[:2]
    assert get(f"{head.url}/config.json")[0] == 200
    time.sleep(1)  # a worker busy between two requests, shorter than idle
    assert get(f"{head.url}/sub/model.safetensors")[0] == 200
    assert head.thread.is_alive()
    assert head.wait(10)["reason"] == "no request for 2 s"  # the backstop, for a worker that died


def test_it_refuses_an_address_it_cannot_bind(tmp_path):
    staging = Staging(str(tmp_path), COMMIT, {}, "s3cret", 1)
    with pytest.raises(OSError):
        serve("192.0.2.1", 29510, staging, 1, 1, 1)


def test_it_refuses_a_port_another_process_listens_on(tmp_path):
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("0.0.0.0", 0))  # a user's `python3 -m http.server`, on every address
        squatter.listen()
        staging = Staging(str(tmp_path), COMMIT, {}, "s3cret", 1)
        with pytest.raises(OSError, match="Address already in use"):
            serve("127.0.0.1", squatter.getsockname()[1], staging, 1, 1, 1)


def test_a_slow_transfer_keeps_it_up_past_the_idle_time(staging_head):
    head, contents = staging_head({"big.safetensors": bytes(range(256)) * (64 * 1024)}, idle=1)[::2]  # 16 MiB
    url = f"{head.url}/big.safetensors"
    headers, proof = signed("s3cret", "GET", url)
    received = bytearray()
    started = time.monotonic()
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
        assert matches(proof, response.headers.get(PROOF))
        for block in iter(lambda: response.read(1024 * 1024), b""):
            received += block
            time.sleep(0.25)
    assert time.monotonic() - started > 3  # three idle periods passed while it streamed
    assert bytes(received) == contents["big.safetensors"]
    assert head.wait(10)["reason"] == "no request for 1 s"


def test_an_idle_connection_neither_keeps_it_up_nor_holds_it(staging_head):
    """#31 item 4: one idle TCP connection kept the old server alive for hours."""
    head = staging_head(workers=1, idle=1, startup=1, timeout=1)[0]
    with socket.create_connection(("127.0.0.1", head.port)) as idle:
        assert head.wait(5)["reason"] == "no worker asked within 1 s"
        assert idle.recv(1) == b""  # dropped after the request timeout, not held open


def test_unsigned_wrongly_signed_and_replayed_requests_are_refused(staging_head):
    head = staging_head()[0]
    url = f"{head.url}/config.json"
    assert get(url, secret=None)[0] == 403
    assert get(url, secret="another run's")[0] == 403
    headers = signed("s3cret", "GET", url)[0]
    assert get(url, replay=headers)[:2] == (200, b"{}")
    assert get(url, replay=headers)[0] == 403  # the same nonce twice: a recorded request replayed
    assert get(f"{head.url}/sub/model.safetensors", replay=headers)[0] == 403  # signed for another path
    assert head.staging.refused == 4 and head.staging.requests == 1


def test_it_serves_the_manifests_files_and_nothing_else(staging_head, tmp_path):
    head = staging_head()[0]
    snapshot = head.staging.repo + f"/snapshots/{COMMIT}"
    secret = tmp_path / "vllm_api_key"
    secret.write_text("root-only-secret")
    os.symlink(secret, f"{snapshot}/leak.json")                     # a link out of the model
    os.symlink(secret, f"{head.staging.repo}/blobs/evil")           # a blob that is itself a link
    os.symlink("../../blobs/evil", f"{snapshot}/evil.json")
    with open(f"{snapshot}/unlisted.json", "w", encoding="utf-8") as handle:  # a file the manifest does not name
        handle.write("{}")
    os.mkfifo(f"{snapshot}/pipe.json")
    with open(f"{snapshot}/short.json", "w", encoding="utf-8") as handle:     # not the manifest's size
        handle.write("{}")
    head.staging.sizes.update({"leak.json": 16, "evil.json": 16, "pipe.json": 0, "short.json": 5})
    assert get(f"{head.url}/config.json")[:3] == (200, b"{}", True)
    assert get(f"{head.url}/sub/model.safetensors")[:3] == (200, b"w" * 1000, True)
    for name in ("leak.json", "evil.json", "unlisted.json", "pipe.json", "short.json", "../vllm_api_key",
                 "%2e%2e/%2e%2e/blobs/evil", "sub/../config.json", ""):
        status, body = get(f"{head.url}/{name}")[:2]
        assert status == 404 and b"root-only-secret" not in body, name


def test_a_range_resumes_and_each_answer_proves_the_server(staging_head):
    head, contents = staging_head({"w.safetensors": hashlib.sha256(b"x").digest() * 100})[::2]
    status, body, proven = get(f"{head.url}/w.safetensors", headers={"Range": "bytes=3000-"})
    assert (status, body, proven) == (206, contents["w.safetensors"][3000:], True)
    for wanted in ("bytes=3200-", "bytes=99999-", "bytes=-5", "bytes=x-"):
        assert get(f"{head.url}/w.safetensors", headers={"Range": wanted})[0] == 416, wanted


@pytest.mark.parametrize("length", ["-5", "2000", "x"])
def test_a_done_with_a_body_that_is_not_a_workers_name_is_refused(staging_head, length):
    head = staging_head(workers=1)[0]
    url = f"{head.url}/done"
    headers = {**signed("s3cret", "POST", url)[0], "Content-Length": length}
    request = urllib.request.Request(url, data=b"spark-2", headers=headers, method="POST")
    with pytest.raises(urllib.error.HTTPError, match="400"):
        urllib.request.urlopen(request, timeout=10)  # pylint: disable=consider-using-with
    assert head.thread.is_alive() and head.staging.done == set()
