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
    for number in [*range(1, 16), 20, 21, 22]:
        assert f'<a id="f{number}"></a>' in GUIDE


def test_every_check_code_in_the_roles_is_documented():
    codes = set()
    for path in (REPO / "roles").rglob("*.yml"):
        codes.update(re.findall(r"\[(F\d+)\]", path.read_text()))
    assert codes, "the roles print no [Fn] codes?"
    for code in codes:
        assert f'<a id="{code.lower()}"></a>' in GUIDE
        assert f"[{code}]" in GUIDE
