"""The guide quotes what the checks really print: a message changed in code must change here too."""

from __future__ import annotations

import pathlib
import re

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import MESSAGES as RAY_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_checks import TROUBLESHOOTING
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._ray_token import MESSAGES as TOKEN_MESSAGES
from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import MESSAGES as SERVING_MESSAGES

REPO = pathlib.Path(__file__).resolve().parents[2]
GUIDE = (REPO / "docs" / "troubleshooting.md").read_text()


def test_every_module_message_is_quoted_verbatim():
    for key, template in {**RAY_MESSAGES, **SERVING_MESSAGES, **TOKEN_MESSAGES}.items():
        assert template.replace("{doc}", TROUBLESHOOTING) in GUIDE, f"{key} differs between code and guide"


def test_every_failure_mode_has_its_anchor():
    for number in [*range(1, 17), 18, 20, 21, 22, 23, 24]:
        assert f'<a id="f{number}"></a>' in GUIDE


def test_every_check_code_in_the_roles_is_documented():
    codes = set()
    for path in (REPO / "roles").rglob("*.yml"):
        codes.update(re.findall(r"\[(F\d+)\]", path.read_text()))
    assert codes, "the roles print no [Fn] codes?"
    for code in codes:
        assert f'<a id="{code.lower()}"></a>' in GUIDE
        assert f"[{code}]" in GUIDE


def test_the_guide_quotes_the_preflight_decisions_verbatim():
    """F18, F23 and F24 as their functions print them for the guide's own examples."""
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._images import vllm_version_problem
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._memory import free_memory_problem
    from ansible_collections.inferops.vllm_cluster.plugins.module_utils._rdma import hca_problems, read_devices

    gib_kb = 1024 * 1024
    meminfo = f"MemTotal: {int(119.7 * gib_kb)} kB\nMemFree: {int(61.05 * gib_kb)} kB\nCached: {int(40 * gib_kb)} kB\n"
    spark_1 = read_devices(str(REPO / "tests" / "fixtures" / "sparks" / "infiniband" / "spark-1"))
    for message in [
        vllm_version_problem("0.10.1.1", "0.17.0", "spark-1", "nvcr.io/nvidia/vllm:25.09-py3"),
        free_memory_problem(meminfo, 0.85, "spark-1"),
        *hca_problems(spark_1, "rocep1s0f1,roceP2p1s0f1", "3", "spark-1"),
        *hca_problems(spark_1, "rocep1s0f9", "", "spark-1"),
    ]:
        assert message and message in GUIDE, message
