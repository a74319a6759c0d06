# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test-only: return a JSON file's content as the host's ansible_facts, in place of `setup`."""

from __future__ import annotations

import json

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    module = AnsibleModule(argument_spec={"path": {"type": "path", "required": True}}, supports_check_mode=True)
    with open(module.params["path"], encoding="utf-8") as handle:
        facts = json.load(handle)
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == "__main__":
    main()
