#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_api_check
short_description: Whether a healthy vLLM server serves its API as deployed, in one call
version_added: 0.5.0
author: inferops engineering (@inferops)
description:
  - After C(/health) answered, asks the server what the vllm_server role proves on every run, in one call on the node
    instead of a task each, and stops at the first it does not do, naming what it saw.
  - C(/v1/models) must list O(model).
  - With a key in O(api_key_file), C(/v1/models) asked without it must answer HTTP 401.
  - One chat completion of O(prompt) must return at least one token.
  - The key is read on the node from its root-only file; it is in no argument, result or message.
  - Changes nothing.
options:
  url:
    description: The server's base URL, without C(/v1).
    type: str
    required: true
  model:
    description: The served model's name (what C(/v1/models) lists and requests name).
    type: str
    required: true
  api_key_file:
    description:
      - The root-only file holding the API key; empty means no key is wanted.
      - Named, it must hold a key (a regular file, not a link); a missing or empty one fails.
    type: path
    default: ""
  prompt:
    description: The smoke chat completion's prompt.
    type: str
    default: Say hello.
  max_tokens:
    description: Tokens the smoke completion asks for.
    type: int
    default: 8
  host:
    description: The inventory host the messages name.
    type: str
    required: true
  container:
    description: The server's container, whose log the messages point to.
    type: str
    required: true
extends_documentation_fragment:
  - inferops.vllm_cluster.read_only
"""

EXAMPLES = r"""
- name: Check the served model is listed, a keyless request refused and one completion answered
  inferops.vllm_cluster.vllm_api_check:
    url: http://198.18.0.180:8000
    model: tiny-llama
    api_key_file: /etc/inferops-vllm-cluster/vllm_api_key
    host: "{{ inventory_hostname }}"
    container: vllm-cluster-vllm
  register: api
"""

RETURN = r"""
api:
  description: What the server answered; C(keyless_status) is null where no key is set.
  returned: always
  type: dict
  sample: {"url": "http://198.18.0.180:8000", "model": "tiny-llama", "models": ["tiny-llama"], "keyless_status": 401,
           "completion_tokens": 8, "problem": ""}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils._vllm_serving import MESSAGES, prove_api, read_key


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "url": {"type": "str", "required": True},
            "model": {"type": "str", "required": True},
            "api_key_file": {"type": "path", "default": ""},
            "prompt": {"type": "str", "default": "Say hello."},
            # a count of tokens, not a token
            "max_tokens": {"type": "int", "default": 8, "no_log": False},
            "host": {"type": "str", "required": True},
            "container": {"type": "str", "required": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    key = read_key(p["api_key_file"])
    if p["api_key_file"] and not key:
        # a key is wanted: without it the keyless request proves nothing and the API may be open
        module.fail_json(msg=MESSAGES["KEY_MISSING"].format(host=p["host"], path=p["api_key_file"]))
    if key:
        # the key is a secret of the node: never in the output, whatever a server echoes back
        module.no_log_values.add(key)
    outcome = prove_api(p["url"].rstrip("/"), p["model"], key, p["prompt"], p["max_tokens"], p["host"],
                        p["container"])
    if outcome["problem"]:
        module.fail_json(msg=outcome["problem"], api=outcome)
    module.exit_json(changed=False, api=outcome)


if __name__ == "__main__":
    main()
