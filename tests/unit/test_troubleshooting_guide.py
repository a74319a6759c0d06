"""The guide quotes what the checks really print: a message changed in code must change here too."""

from __future__ import annotations

import ast
import pathlib
import shutil
import re

import yaml

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._bench import MESSAGES as BENCH_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._burn_in import MESSAGES as BURN_IN_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._engine import MESSAGES as ENGINE_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._env import MESSAGES as ENV_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import MESSAGES as IMAGE_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._inventory import MESSAGES as INVENTORY_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._link_gate import MESSAGES as LINK_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._logind import MESSAGES as LOGIND_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._mp_launcher import MESSAGES as MP_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rank_env import MESSAGES as RANK_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._settings import MESSAGES as SETTINGS_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import MESSAGES as RAY_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._guide import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_token import MESSAGES as TOKEN_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._supervisor import MESSAGES as SUPERVISOR_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._upgrade import MESSAGES as UPGRADE_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import MESSAGES as SERVING_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights import MESSAGES as WEIGHTS_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_fetch import MESSAGES as FETCH_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_lock import MESSAGES as LOCK_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_paths import MESSAGES as TRUST_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._weights_server import MESSAGES as SERVER_MESSAGES

REPO = pathlib.Path(__file__).resolve().parents[2]
GUIDE = (REPO / "docs" / "troubleshooting.md").read_text()
# the head's download script runs inside the runtime image (huggingface_hub): its table is read, not imported
DOWNLOAD_MESSAGES = ast.literal_eval(re.search(r"^MESSAGES = (\{.*?^\})", (REPO / "roles" / "model_stage" / "files" /
                                                                           "download.py").read_text(),
                                               re.S | re.M).group(1))


def test_every_module_message_is_quoted_verbatim():
    # table by table: two tables may use one key (F20_RANK, NO_RECORD) for two messages
    for table in (RAY_MESSAGES, SERVING_MESSAGES, TOKEN_MESSAGES, MP_MESSAGES, WEIGHTS_MESSAGES, TRUST_MESSAGES,
                  FETCH_MESSAGES, LOCK_MESSAGES, SERVER_MESSAGES, DOWNLOAD_MESSAGES, RANK_MESSAGES, LINK_MESSAGES,
                  ENGINE_MESSAGES, BURN_IN_MESSAGES, BENCH_MESSAGES, UPGRADE_MESSAGES, IMAGE_MESSAGES,
                  INVENTORY_MESSAGES, ENV_MESSAGES, LOGIND_MESSAGES,
                  {key: SUPERVISOR_MESSAGES[key] for key in ("GAVE_UP", "STALE")},
                  # what an operator meets; the other two are a maintainer's (a role without `settings`, a name twice)
                  {"refused": SETTINGS_MESSAGES["refused"]}):
        for key, template in table.items():
            assert template.replace("{doc}", TROUBLESHOOTING) in GUIDE, f"{key} differs between code and guide"


def test_every_failure_mode_has_its_anchor():
    for number in range(1, 31):
        assert f'<a id="f{number}"></a>' in GUIDE


def roles_and_playbooks_own_codes(paths, root=REPO):
    """The failure-mode codes ([F<n>]) the roles' and playbooks' YAML writes itself (in a message, not a comment)."""
    codes = {}
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.lstrip().startswith("#"):
                for code in re.findall(r"\[(F\d+)\]", line.split(" # ")[0]):
                    codes.setdefault(code, []).append(f"{path.relative_to(root)}:{number}")
    return codes


def test_no_role_or_playbook_writes_a_failure_message_of_its_own():
    """Every message with a failure mode is a sentence of a Python table (compared with the guide above); a task only
    names the filter or module that says it."""
    own = roles_and_playbooks_own_codes(sorted((REPO / "roles").rglob("*.yml")) + sorted((REPO / "playbooks").rglob("*.yml")))
    assert own == {}, own


def test_the_check_finds_a_message_written_in_yaml(tmp_path):
    # the check itself must be able to fail: a message as the roles once wrote them
    role = tmp_path / "tasks.yml"
    role.write_text("# [F6] in a comment is fine\n- ansible.builtin.fail:\n    msg: >-\n      [F6] {{ inventory_hostname }}: x\n")
    assert roles_and_playbooks_own_codes([role], tmp_path) == {"F6": ["tasks.yml:4"]}


def test_the_guide_quotes_the_preflight_decisions_verbatim(tmp_path):
    """F18, F23 and F24 as their functions print them for the guide's own examples."""
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import vllm_version_problem
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._memory import free_memory_problem
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import (
        hca_problems,
        link_problems,
        read_devices,
        read_links,
    )

    gib_kb = 1024 * 1024
    meminfo = f"MemTotal: {int(119.7 * gib_kb)} kB\nMemFree: {int(61.05 * gib_kb)} kB\nCached: {int(40 * gib_kb)} kB\n"
    spark_1 = read_devices(str(REPO / "tests" / "fixtures" / "sparks" / "infiniband" / "spark-1"))
    # the guide's cable in the other port: spark-1's devices with f0 up and f1 down
    shutil.copytree(REPO / "tests" / "fixtures" / "sparks" / "infiniband" / "spark-1", tmp_path / "ib")
    for state in (tmp_path / "ib").glob("*/ports/1/state"):
        state.write_text("4: ACTIVE\n" if state.parts[-4].endswith("f0") else "1: DOWN\n")
    for message in [
        vllm_version_problem("0.10.1.1", "0.17.0", "spark-1", "nvcr.io/nvidia/vllm:25.09-py3"),
        free_memory_problem(meminfo, 0.85, "spark-1"),
        *hca_problems(spark_1, "rocep1s0f1,roceP2p1s0f1", "3", "spark-1"),
        *hca_problems(spark_1, "rocep1s0f9", "", "spark-1"),
        *link_problems(read_links(str(tmp_path / "ib")), "rocep1s0f1,roceP2p1s0f1", "enp1s0f0np0", "spark-1"),
    ]:
        assert message and message in GUIDE, message


def test_the_guide_quotes_preflight_wiring_messages_verbatim():
    """F5, F7, F8, F9 and F12 as preflight's functions print them for the lab-like examples of the guide."""
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _preflight

    def node(*ifaces):
        facts = {"interfaces": [i[0] for i in ifaces], "default_ipv4": {"interface": "eth0", "address": "198.18.0.180"},
                 "all_ipv4_addresses": [a for i in ifaces for a in i[1:]]}
        for name, *addresses in ifaces:
            facts[name] = {"device": name, "ipv4": {"address": addresses[0]} if addresses else {},
                           "ipv4_secondaries": [{"address": a} for a in addresses[1:]]}
        return facts

    lab = node(("docker0",), ("eth0", "198.18.0.180"), ("eth1", "198.18.1.12"), ("lo",))
    messages = [
        *_preflight.wiring_problems(node(("eth0", "198.18.0.180"), ("eth1", "198.18.1.13")), "198.18.1.0/24",
                                    "198.18.1.99", "eth1", True, "", "spark-2")[:1],
        *_preflight.wiring_problems(lab, "198.18.7.0/24", "", "", False, "", "spark-1"),
        *_preflight.wiring_problems(node(("eth0", "198.18.0.180"), ("eth1", "198.18.1.12", "198.18.1.50")),
                                    "198.18.1.0/24", "", "", False, "", "spark-1"),
        *_preflight.wiring_problems(lab, "198.18.0.0/23", "198.18.1.12", "eth1", True, "", "spark-1"),
        *_preflight.wiring_problems(lab, "198.18.1.0/24", "198.18.1.12", "enp1s0f1np1", False, "", "spark-1"),
        _preflight.shared_addresses({"spark-1": "198.18.1.50", "spark-2": "198.18.1.50"}, "198.18.1.0/24"),
        _preflight.mtu_mismatch([("spark-1", "eth1", 1500), ("spark-2", "eth1", 1400)]),
        _preflight.parallelism_problem(4, 1, 2, 1),
    ]
    for message in messages:
        assert message and message in GUIDE, message


def test_the_guides_address_is_written_once_for_python_and_once_for_the_playbooks():
    # module_utils/_guide.py for the modules' messages; vllm_cluster_troubleshooting_url for the roles and playbooks
    variables = yaml.safe_load((REPO / "roles" / "vllm_cluster" / "vars" / "main.yml").read_text())
    assert variables["vllm_cluster_troubleshooting_url"] == TROUBLESHOOTING
    written = sorted(str(path.relative_to(REPO)) for folder in ("plugins", "roles", "playbooks")
                     for path in (REPO / folder).rglob("*") if path.is_file() and path.suffix in (".py", ".yml", ".j2")
                     and TROUBLESHOOTING in path.read_text())
    assert written == ["plugins/module_utils/_guide.py", "plugins/modules/ray_cluster_check.py",
                       "roles/vllm_cluster/vars/main.yml"]
