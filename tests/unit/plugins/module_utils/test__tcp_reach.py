"""diagnose's probe of the other nodes' ports: every probe at once, each answer named by why it did not open."""

from __future__ import annotations

import errno
import socket
import threading

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _tcp_reach


@pytest.fixture()
def listening():
    """A real listener on loopback: the port a probe finds open."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


@pytest.fixture()
def closed():
    """A loopback port nothing listens on (bound for a moment to learn a free one, then closed): refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_real_sockets_open_and_refused_in_the_order_given(listening, closed):
    items = [{"target": "spark-2", "address": "127.0.0.1", "port": closed, "name": "mp rendezvous"},
             {"target": "spark-1", "address": "127.0.0.1", "port": listening, "name": "Ray GCS"}]
    results = _tcp_reach.reach(items, 2)
    assert [r["name"] for r in results] == ["mp rendezvous", "Ray GCS"]
    assert results[0] == dict(items[0], open=False, error=_tcp_reach.REFUSED)
    assert results[1] == dict(items[1], open=True, error="")


def raising(error):
    def opener(address, port, timeout):
        raise error
    return opener


@pytest.mark.parametrize("case, opener, expected", [
    ("filtered: the connect timed out", raising(socket.timeout("timed out")),
     "no answer within 2 s: filtered, or the address is not on the network"),
    ("the builtin TimeoutError", raising(TimeoutError()), "no answer within 2 s: filtered, or the address is not on the network"),
    ("refused by errno", raising(OSError(errno.ECONNREFUSED, "Connection refused")), _tcp_reach.REFUSED),
    ("no route", raising(OSError(errno.EHOSTUNREACH, "No route to host")), "no route to the address (No route to host)"),
    ("a name that does not resolve", raising(socket.gaierror(-2, "Name or service not known")),
     "the name does not resolve (Name or service not known)"),
    ("an address Python cannot encode", raising(UnicodeError("label empty or too long")),
     "not an address to connect to (label empty or too long)"),
])
def test_why_a_port_did_not_open(case, opener, expected):
    [result] = _tcp_reach.reach([{"address": "198.18.1.13", "port": 6380}], 2, opener)
    assert result["open"] is False and result["error"] == expected, case


def test_a_node_without_an_address_is_not_probed():
    calls = []
    [result] = _tcp_reach.reach([{"target": "spark-9", "address": "", "port": 6380}], 2,
                                lambda *args: calls.append(args))
    assert calls == [] and result == {"target": "spark-9", "address": "", "port": 6380, "open": False,
                                      "error": _tcp_reach.NO_ADDRESS}


def test_every_probe_waits_at_once():
    """Six probes that each wait for all six to be connecting: run one after another, the barrier breaks."""
    barrier = threading.Barrier(6, timeout=10)

    def opener(address, port, timeout):
        barrier.wait()
        raise socket.timeout("timed out")

    results = _tcp_reach.reach([{"address": "198.18.1.13", "port": 6380 + n} for n in range(6)], 2, opener)
    assert [r["port"] for r in results] == [6380 + n for n in range(6)]
    assert all(r["error"].startswith("no answer within 2 s") for r in results)


def test_a_malformed_address_is_one_row_and_the_others_stand(listening):
    """A typo in an inventory's address (an empty label) makes the socket library raise UnicodeError, not OSError:
    it is that probe's answer, not the end of every node's table."""
    results = _tcp_reach.reach([{"address": "198.18.1..12", "port": 6379},
                                {"address": "127.0.0.1", "port": listening}], 2)
    assert results[0]["open"] is False and results[0]["error"].startswith("not an address to connect to (")
    assert results[1]["open"] is True


def test_nothing_to_probe():
    assert _tcp_reach.reach([], 2) == []
