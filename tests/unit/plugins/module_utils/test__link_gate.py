"""The link gate's decisions: what each rank runs, whether a run measures, the verdict over the ranks' answers (F25),
and the arithmetic of the measuring program (as nccl-tests computes bus bandwidth)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_gate
from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _link_probe_program as program

MIB = 1 << 20
SETTINGS = {"hosts": ["spark-1", "spark-2"], "address": "198.18.1.12", "port": 29520, "backend": "gloo",
            "max_bytes": 16 * MIB, "iterations": 3, "budget": 30, "connect_timeout": 60, "min_bus_bandwidth": 0.1,
            "rdma": False, "image": "lab/runtime:1", "guide": "GUIDE"}
NODE = {"machine_id": "m1", "image_id": "sha256:aa", "interface": "eth1", "address": "198.18.1.12", "mtu": "1500",
        "env_sha256": "e1"}
INPUTS = {"spark-1": NODE, "spark-2": dict(NODE, machine_id="m2", interface="ic0", address="198.18.1.13")}
PRESENT = ["spark-1", "spark-2"]


def rows(busbw_reduce, busbw_gather, size=16 * MIB):
    return [{"op": "all_reduce", "bytes": MIB, "time_us": 1.0, "algbw": 9.0, "busbw": 9.0, "ranks": 2},
            {"op": "all_reduce", "bytes": size, "time_us": 1.0, "algbw": busbw_reduce, "busbw": busbw_reduce,
             "ranks": 2},
            {"op": "all_gather", "bytes": size, "time_us": 1.0, "algbw": busbw_gather * 2, "busbw": busbw_gather,
             "ranks": 2}]


def answer(host, busbw_reduce=0.6, busbw_gather=0.5, **extra):
    base = {"ok": True, "host": host, "rows": rows(busbw_reduce, busbw_gather), "pairs": [], "skipped": [],
            "link": {"transport": "Socket", "devices": ["eth1"]}, "torch": "2.13"}
    return dict(base, **extra)


def passed_record(passed=True):
    judged = _link_gate.verdict({h: answer(h) for h in SETTINGS["hosts"]}, SETTINGS)
    kept = _link_gate.record(judged, SETTINGS, INPUTS, "2026-12-05T12:00:00Z", "lab")
    return dict(kept, passed=passed)


# --- what a rank runs ------------------------------------------------------------------------------------------

def test_each_rank_runs_the_program_with_its_place_and_the_heads_rendezvous():
    ran = _link_gate.container(1, SETTINGS)
    assert ran["entrypoint"] == ["python3"]
    assert ran["command"][:2] == ["-c", _link_gate.PROGRAM_SOURCE]
    params = json.loads(ran["command"][2])
    assert (params["rank"], params["world"], params["host"]) == (1, 2, "spark-2")
    assert (params["address"], params["port"], params["backend"]) == ("198.18.1.12", 29520, "gloo")
    # the program ends itself a grace period after its budget: a hung collective is an answer, not a hang
    assert params["limit"] == SETTINGS["budget"] + _link_gate.GRACE
    assert params["marker"] == _link_gate.MARKER


@pytest.mark.parametrize("backend, env", [
    ("gloo", {}),
    ("nccl", {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_DEBUG_FILE": _link_gate.NCCL_LOG}),
])
def test_only_nccl_is_asked_for_its_account_of_the_transport(backend, env):
    assert _link_gate.container(0, dict(SETTINGS, backend=backend))["env"] == env


def test_the_log_nccl_writes_is_the_one_the_program_reads():
    import fnmatch
    assert fnmatch.fnmatch(_link_gate.NCCL_LOG.replace("%h", "spark-1").replace("%p", "42"), _link_gate.NCCL_LOG_GLOB)


def test_a_rank_outside_the_cluster_is_refused():
    with pytest.raises(IndexError):
        _link_gate.container(2, SETTINGS)


# --- whether a run measures ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case, inputs, record, mode, present, measure, reason", [
    ("first run", INPUTS, "none", "auto", PRESENT, True, "no gate has measured"),
    ("nothing changed: a no-op run reads the record", INPUTS, "passed", "auto", PRESENT, False, "passed on"),
    ("always", INPUTS, "passed", "always", PRESENT, True, "always"),
    ("off", INPUTS, "none", "off", PRESENT, False, "off"),
    ("the image changed on one node", {**INPUTS, "spark-2": dict(INPUTS["spark-2"], image_id="sha256:bb")},
     "passed", "auto", PRESENT, True, "spark-2: image_id sha256:aa -> sha256:bb"),
    ("an MTU changed", {**INPUTS, "spark-2": dict(INPUTS["spark-2"], mtu="1400")}, "passed", "auto", PRESENT, True,
     "spark-2: mtu 1500 -> 1400"),
    ("a node was replaced (another machine id)", {**INPUTS, "spark-1": dict(NODE, machine_id="m9")}, "passed",
     "auto", PRESENT, True, "spark-1: machine_id"),
    ("the pinned environment changed", {**INPUTS, "spark-1": dict(NODE, env_sha256="e9")}, "passed", "auto",
     PRESENT, True, "spark-1: env_sha256"),
    ("the last gate failed", INPUTS, "failed", "auto", PRESENT, True, "failed"),
    ("the last gate failed, whatever else changed", {**INPUTS, "spark-2": dict(INPUTS["spark-2"], mtu="9000")},
     "failed", "auto", PRESENT, True, "the last gate (2026-12-05T12:00:00Z) failed"),
    ("a node left out of the run", INPUTS, "none", "always", ["spark-1"], False, "spark-2 take(s) no part"),
])
def test_whether_a_run_measures(case, inputs, record, mode, present, measure, reason):
    record = {"none": {}, "passed": passed_record(), "failed": passed_record(passed=False)}[record]
    planned = _link_gate.plan(inputs, SETTINGS, record, mode, present)
    assert planned["measure"] is measure, case
    assert reason in planned["reason"], (case, planned["reason"])
    assert planned["problems"] == []


def test_a_new_node_is_named():
    three = dict(SETTINGS, hosts=["spark-1", "spark-2", "spark-3"])
    inputs = dict(INPUTS, **{"spark-3": dict(NODE, machine_id="m3")})
    planned = _link_gate.plan(inputs, three, passed_record(), "auto", three["hosts"])
    assert planned["measure"] and "spark-3 is new to the gate" in planned["reason"]


def test_a_raised_threshold_judges_the_record_again_without_measuring_again():
    # the threshold is not among what the figures depend on: the kept figures (0.6, 0.5 GB/s) fail 0.55
    planned = _link_gate.plan(INPUTS, dict(SETTINGS, min_bus_bandwidth=0.55), passed_record(), "auto", PRESENT)
    assert planned["measure"] is False
    assert planned["problems"] == [_link_gate.MESSAGES["SLOW"].format(
        pair="spark-1 <-> spark-2", figures="0.5 GB/s in all_gather at 16 MiB", threshold=0.55, transport="Socket",
        doc="GUIDE")]
    assert "judged again under vllm_cluster_min_bus_bandwidth=0.55" in planned["reason"]


def test_the_port_is_not_among_what_the_figures_depend_on():
    planned = _link_gate.plan(INPUTS, dict(SETTINGS, port=29521), passed_record(), "auto", PRESENT)
    assert planned["measure"] is False and planned["problems"] == []


def test_another_version_of_the_program_measures_again(monkeypatch):
    record = passed_record()
    monkeypatch.setattr(_link_gate, "PROGRAM_SHA256", "0" * 64)
    planned = _link_gate.plan(INPUTS, SETTINGS, record, "auto", PRESENT)
    assert planned["measure"] and "the gate's settings changed" in planned["reason"]


@pytest.mark.parametrize("mode, present", [("off", PRESENT), ("auto", ["spark-1"]), ("always", ["spark-1"])])
def test_off_or_a_node_left_out_needs_no_inputs_and_refuses_nothing(mode, present):
    # neither reads the nodes' inputs (off reads none; --limit leaves the absent host's unread)
    inputs = {"spark-1": INPUTS["spark-1"]} if mode != "off" else {}
    planned = _link_gate.plan(inputs, SETTINGS, {}, mode, present)
    assert planned["measure"] is False and planned["problems"] == [], planned


def test_a_node_without_the_serving_image_is_refused_before_any_rank_starts():
    inputs = {**INPUTS, "spark-2": dict(INPUTS["spark-2"], image_id="")}
    planned = _link_gate.plan(inputs, SETTINGS, {}, "auto", PRESENT)
    assert planned["measure"] is False
    assert planned["problems"] == [_link_gate.MESSAGES["NO_IMAGE"].format(host="spark-2", image="lab/runtime:1",
                                                                          doc="GUIDE")]


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="vllm_cluster_link_gate='sometimes'"):
        _link_gate.plan(INPUTS, SETTINGS, {}, "sometimes", PRESENT)


@pytest.mark.parametrize("case, before, after, same", [
    ("the order of lines", "NCCL_IB_HCA=a\nGLOO_SOCKET_IFNAME=eth1\n", "GLOO_SOCKET_IFNAME=eth1\nNCCL_IB_HCA=a\n", True),
    ("a name the collective does not read", "NCCL_IB_HCA=a\nHF_TOKEN_PATH=/x\n", "NCCL_IB_HCA=a\nHF_TOKEN_PATH=/y\n",
     True),
    ("a comment", "# one\nNCCL_IB_HCA=a\n", "# two\nNCCL_IB_HCA=a\n", True),
    ("NCCL's HCAs", "NCCL_IB_HCA=a\n", "NCCL_IB_HCA=b\n", False),
    ("Gloo's interface", "GLOO_SOCKET_IFNAME=eth1\n", "GLOO_SOCKET_IFNAME=ic0\n", False),
    ("an NCCL setting added by extra env", "NCCL_IB_HCA=a\n", "NCCL_IB_HCA=a\nNCCL_ALGO=Ring\n", False),
    ("UCX's devices", "UCX_NET_DEVICES=eth1\n", "UCX_NET_DEVICES=eth2\n", False),
])
def test_only_what_the_collective_reads_of_the_env_file_measures_again(case, before, after, same):
    assert (_link_gate.transport_env_digest(before) == _link_gate.transport_env_digest(after)) is same, case


def test_a_reboot_measures_again():
    rebooted = {**INPUTS, "spark-2": dict(INPUTS["spark-2"], boot_id="b2")}
    planned = _link_gate.plan(rebooted, SETTINGS, passed_record(), "auto", PRESENT)
    assert planned["measure"] and "spark-2: boot_id (none) -> b2" in planned["reason"]


def test_the_record_keeps_no_machine_id_as_it_is():
    kept = passed_record()
    assert kept["measured_with"]["nodes"]["spark-1"]["machine_id"] not in ("", "m1")
    assert kept["measured_with"]["nodes"]["spark-1"]["machine_id"] != kept["measured_with"]["nodes"]["spark-2"][
        "machine_id"]


@pytest.mark.parametrize("case, change", [
    ("not a dict", lambda r: [r]),
    ("another version", lambda r: dict(r, version=99)),
    ("nodes not a mapping", lambda r: dict(r, measured_with={"nodes": ["spark-1"]})),
    ("a row without a figure", lambda r: dict(r, rows=[{"op": "all_reduce", "bytes": 1}])),
    ("a pair's row a string", lambda r: dict(r, pairs=[{"ranks": [0, 1], "row": "fast"}])),
    ("passed as a string", lambda r: dict(r, passed="yes")),
])
def test_a_record_not_of_the_gates_form_reads_as_none(case, change):
    assert _link_gate.valid_record(passed_record()) == passed_record()
    assert _link_gate.valid_record(change(passed_record())) == {}, case


# --- the verdict ---------------------------------------------------------------------------------------------------

def test_a_healthy_link_passes():
    judged = _link_gate.verdict({h: answer(h) for h in PRESENT}, SETTINGS)
    assert judged["passed"] and judged["problems"] == []
    assert judged["transport"] == "Socket"


def test_a_slow_link_names_the_pair_every_figure_below_and_the_threshold():
    judged = _link_gate.verdict({h: answer(h, 0.012, 0.5) for h in PRESENT}, SETTINGS)
    assert judged["problems"] == [_link_gate.MESSAGES["SLOW"].format(
        pair="spark-1 <-> spark-2", figures="0.012 GB/s in all_reduce at 16 MiB", threshold=0.1, transport="Socket",
        doc="GUIDE")]


def test_both_collectives_slow_make_one_finding():
    judged = _link_gate.verdict({h: answer(h, 0.012, 0.011) for h in PRESENT}, SETTINGS)
    assert len(judged["problems"]) == 1
    assert "0.012 GB/s in all_reduce at 16 MiB, 0.011 GB/s in all_gather at 16 MiB" in judged["problems"][0]


def test_only_the_largest_size_counts():
    # small messages are latency-bound everywhere; the link's figure is the large message's
    slow_small = [dict(row, busbw=0.001) if row["bytes"] == MIB else row for row in rows(0.6, 0.5)]
    judged = _link_gate.verdict({h: answer(h, rows=slow_small) for h in PRESENT}, SETTINGS)
    assert judged["passed"]


def test_a_threshold_of_zero_measures_without_refusing():
    judged = _link_gate.verdict({h: answer(h, 0.001, 0.001) for h in PRESENT}, dict(SETTINGS, min_bus_bandwidth=0))
    assert judged["passed"]


def test_with_more_nodes_the_slow_pair_is_named():
    three = dict(SETTINGS, hosts=["spark-1", "spark-2", "spark-3"])
    pairs = [{"ranks": [0, 1], "row": rows(0.6, 0.5)[2]}, {"ranks": [0, 2], "row": dict(rows(0.6, 0.02)[2])}]
    judged = _link_gate.verdict({h: answer(h, pairs=pairs) for h in three["hosts"]}, three)
    assert len(judged["problems"]) == 1
    assert judged["problems"][0].startswith("[F25] spark-1 <-> spark-3: bus bandwidth 0.02 GB/s in all_gather")
    assert "(these two nodes alone)" in judged["problems"][0]


@pytest.mark.parametrize("case, answers, hint", [
    ("no answer at all", {"spark-2": None}, _link_gate.HINTS["output"]),
    ("the rendezvous failed", {"spark-2": {"ok": False, "error": "DistStoreError: Timed out after 61 seconds "
                                                                 "waiting for clients"}}, "198.18.1.12:29520"),
    ("a client that never reached the store",
     {"spark-2": {"ok": False, "error": "DistNetworkError: The client socket has timed out after 60000ms while "
                                        "trying to connect to (198.18.1.12, 29520)."}}, "198.18.1.12:29520"),
    ("past its deadline", {"spark-2": {"ok": False, "error": "deadline: the gate took longer than 120 s"}},
     _link_gate.HINTS["deadline"]),
    ("NCCL's watchdog", {"spark-2": {"ok": False, "error": "DistBackendError: [Rank 1] Watchdog caught collective "
                                                           "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLGATHER)"}},
     _link_gate.HINTS["deadline"]),
    ("the peer went first", {"spark-2": {"ok": False, "error": "RuntimeError: [../gloo/transport/tcp/pair.cc:534] "
                                                               "Connection closed by peer [198.18.1.12]:29520"}},
     _link_gate.HINTS["peer"]),
    ("no room on the other node", {"spark-2": {"ok": False, "error": "another rank had no room for the buffers (its "
                                                                     "own answer says why)"}},
     _link_gate.HINTS["peer"]),
])
def test_a_rank_without_figures_is_named_with_the_likely_cause(case, answers, hint):
    judged = _link_gate.verdict({"spark-1": answer("spark-1"), **answers}, SETTINGS)
    assert not judged["passed"], case
    assert judged["problems"][0].startswith("[F25] spark-2: the link gate's rank gave no result"), case
    assert hint in judged["problems"][0], case
    assert ". ." not in judged["problems"][0] and ".. " not in judged["problems"][0], case


def test_without_the_heads_answer_only_the_missing_rank_is_reported():
    # every rank holds the same figures, but the record is the head's: no bandwidth verdict from a worker's alone
    judged = _link_gate.verdict({"spark-1": None, "spark-2": answer("spark-2", 0.001, 0.001)}, SETTINGS)
    assert [p.split(":")[0] for p in judged["problems"]] == ["[F25] spark-1"]


NCCL = dict(SETTINGS, backend="nccl", rdma=True)
BUILD = {"version": "2.27.7", "path": "/usr/lib/libnccl.so.2", "sha256": "a" * 64}


@pytest.mark.parametrize("case, links, builds, expected", [
    ("RDMA over IB, one build", [("IB", ["rocep1s0f1"])] * 2, [BUILD, BUILD], []),
    ("sockets where RDMA is asked", [("IB", ["rocep1s0f1"]), ("Socket", ["enp1s0f1np1"])], [BUILD, BUILD],
     ["SOCKETS"]),
    ("two builds of one version", [("IB", ["rocep1s0f1"])] * 2,
     [BUILD, dict(BUILD, path="/venv/nvidia/nccl/lib/libnccl.so.2", sha256="b" * 64)], ["NCCL_BUILDS"]),
    ("no transport in NCCL's log", [("IB", ["x"]), ("", [])], [BUILD, BUILD], ["NO_TRANSPORT"]),
])
def test_what_nccl_says_it_used(case, links, builds, expected):
    answers = {host: answer(host, 30, 30, link={"transport": t, "devices": d}, nccl=b)
               for host, (t, d), b in zip(PRESENT, links, builds)}
    judged = _link_gate.verdict(answers, NCCL)
    marks = {"SOCKETS": "where vllm_cluster_rdma=true asks", "NCCL_BUILDS": "load different NCCL builds",
             "NO_TRANSPORT": "names no network transport"}
    found = [key for problem in judged["problems"] for key, mark in marks.items() if mark in problem]
    assert found == expected, (case, judged["problems"])


def test_sockets_are_fine_where_rdma_is_not_asked():
    answers = {h: answer(h, 30, 30, link={"transport": "Socket", "devices": ["eth1"]}, nccl=BUILD) for h in PRESENT}
    assert _link_gate.verdict(answers, dict(NCCL, rdma=False))["passed"]


# --- the record, the table, the answer's parsing ----------------------------------------------------------------------

def test_the_record_says_what_was_measured_with_and_the_next_run_reads_it_back():
    kept = passed_record()
    assert kept["version"] == _link_gate.RECORD_VERSION and kept["passed"]
    assert kept["measured_with"]["nodes"]["spark-2"]["interface"] == "ic0"
    assert kept["fingerprint"] == _link_gate.fingerprint(INPUTS, SETTINGS)
    assert json.loads(json.dumps(kept)) == kept


def test_the_table_reads_as_nccl_tests_prints():
    judged = _link_gate.verdict({h: answer(h) for h in PRESENT}, SETTINGS)
    lines = _link_gate.table(dict(judged, skipped=[{"op": "all_gather", "bytes": 64 * MIB}]), SETTINGS)
    assert lines[0].startswith("2 ranks over gloo (Socket: spark-1 eth1, spark-2 eth1); threshold 0.1 GB/s")
    assert lines[1].split() == ["op", "size", "time(us)", "algbw(GB/s)", "busbw(GB/s)"]
    assert lines[3].split() == ["all_reduce", "16", "MiB", "1.0", "0.6", "0.6"]
    assert lines[-1] == "all_gather 64 MiB and larger: not measured, they would outlast the gate's budget"


@pytest.mark.parametrize("output, expected", [
    ("noise\n" + _link_gate.MARKER + '{"ok": true}\n', {"ok": True}),
    (_link_gate.MARKER + '{"ok": false}\nlater noise\n' + _link_gate.MARKER + '{"ok": true}', {"ok": True}),
    (_link_gate.MARKER + "{broken", None),
    (_link_gate.MARKER + "[1, 2]", None),
    ("", None),
    (None, None),
])
def test_a_ranks_answer_is_its_last_marker_line(output, expected):
    assert _link_gate.parse(output) == expected


# --- the program's arithmetic (it runs in the serving image; tests/integration/test_link_gate.py runs it) ---------

@pytest.mark.parametrize("op, world, factor", [
    ("all_reduce", 2, 1.0), ("all_reduce", 4, 1.5), ("all_gather", 2, 0.5), ("all_gather", 4, 0.75),
])
def test_bus_bandwidth_as_nccl_tests_computes_it(op, world, factor):
    assert program.bus_factor(op, world) == factor


@pytest.mark.parametrize("max_bytes, sizes", [
    (16 * MIB, [MIB, 4 * MIB, 16 * MIB]),
    (1 << 30, [MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, 1 << 30]),
    (10 * MIB, [MIB, 4 * MIB, 10 * MIB]),
    (MIB // 2, [MIB // 2]),
])
def test_the_sizes_end_at_the_bound(max_bytes, sizes):
    assert program.sizes_up_to(max_bytes) == sizes


@pytest.mark.parametrize("seconds, left, fits", [(0.01, 30, True), (1.0, 30, True), (2.0, 30, False)])
def test_a_size_is_left_out_when_it_would_outlast_the_budget(seconds, left, fits):
    # the next size is 4x: 4 x seconds x (3 iterations + 1 warm-up)
    assert program.next_fits(seconds, MIB, 4 * MIB, 3, left) is fits


@pytest.mark.parametrize("log, transport, devices", [
    ("NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:192.168.200.12<0>\n"
     "NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/IB/0", "IB", ["roceP2p1s0f1", "rocep1s0f1"]),
    ("NCCL INFO NET/Socket : Using [0]enp1s0f1np1:192.168.200.12<0>\n"
     "NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0", "Socket", ["enp1s0f1np1"]),
    ("NCCL INFO Bootstrap : Using enp1s0f1np1:192.168.200.12<0>", "", []),
])
def test_the_transport_nccl_chose_read_from_its_log(log, transport, devices):
    assert program.transport_from_log(log) == {"transport": transport, "devices": devices}


@pytest.mark.parametrize("maps, expected", [
    # NCCL's net plugin, loaded after NCCL, listed first: NCCL itself is the answer
    (["7f00-7f10 r-xp 0 08:01 1 /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so.0",
      "7f20-7f30 r-xp 0 08:01 2 /usr/lib/aarch64-linux-gnu/libnccl.so.2.27.7"],
     "/usr/lib/aarch64-linux-gnu/libnccl.so.2.27.7"),
    (["7f20-7f30 r-xp 0 08:01 2 /venv/lib/nvidia/nccl/lib/libnccl.so.2 (deleted)"],
     "/venv/lib/nvidia/nccl/lib/libnccl.so.2"),
    (["7f20-7f30 r-xp 0 08:01 2 /venv/lib/torch/lib/libtorch_cuda.so", "7f40-7f50 rw-p 0 00:00 0"], ""),
])
def test_the_nccl_library_among_the_processs_mappings(maps, expected):
    assert program.nccl_path(maps) == expected
