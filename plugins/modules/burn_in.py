#!/usr/bin/python
# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: burn_in
short_description: Sustained concurrent load against vLLM's OpenAI API, and whether the cluster held up (F27)
version_added: 0.4.0
author: inferops engineering (@inferops)
description:
  - Keeps O(concurrency) completion requests in flight against O(url) for O(duration) seconds, each asking for exactly
    O(max_tokens) tokens (vLLM's C(ignore_eos)) from a fixed prompt set, and reports requests, tokens per second,
    latency percentiles and throughput per window.
  - Ends at the first failed request or at the first request without an answer within O(request_timeout) (a stall;
    C(/health) can still answer while a rank is stuck), and judges the throughput of the last full window against the
    median of the first third of the windows (O(max_drop)). The verdict and its F27 message come back; the module itself fails only
    on bad arguments, so that the play can print the figures before it fails.
  - Run it on the head with C(async) for long durations (the burn_in role does).
options:
  url:
    description: vLLM's base URL, without C(/v1).
    type: str
    required: true
  model:
    description: The served model name.
    type: str
    required: true
  api_key:
    description: vLLM's API key; empty when the server has none.
    type: str
    default: ""
  duration:
    description: Seconds to keep the load on.
    type: int
    required: true
  concurrency:
    description: Requests in flight at once.
    type: int
    default: 4
  max_tokens:
    description: Tokens each request asks for.
    type: int
    default: 64
  request_timeout:
    description: Seconds a request may take before it counts as a stall.
    type: int
    default: 120
  window:
    description: Seconds per throughput window.
    type: int
    default: 60
  max_drop:
    description: The largest drop of the last window's throughput against the median of the first third of the windows, 0..1.
    type: float
    default: 0.3
  host:
    description: The node named in the F27 message (the inventory name of the head).
    type: str
    required: true
  guide:
    description: The troubleshooting guide's URL, for the message.
    type: str
    required: true
attributes:
  check_mode:
    support: none
    description: The burn-in sends real requests; the burn_in role skips it in check mode and says what it would run.
  diff_mode:
    support: none
    description: Nothing to diff.
notes:
  - Changes nothing on the node; it loads the serving cluster for O(duration) seconds.
"""

EXAMPLES = r"""
- name: Burn in the cluster for 20 minutes
  inferops.vllm_cluster.burn_in:
    url: http://198.18.0.180:8000
    model: tiny-llama
    api_key: "{{ vllm_server_api_key }}"
    duration: 1200
    host: "{{ inventory_hostname }}"
    guide: "{{ vllm_cluster_troubleshooting_url }}"
  async: 1500
  poll: 0
  register: burn_in_job
  no_log: true
"""

RETURN = r"""
summary:
  description: The figures.
  returned: always
  type: dict
  sample:
    elapsed_s: 120.4
    requests: 236
    answered: 236
    failed: 0
    tokens: 3776
    tokens_per_s: 31.36
    requests_per_s: 1.96
    latency_s: {p50: 1.0, p90: 1.2, p99: 1.5, max: 1.7}
    window_s: 20
    windows_tokens_per_s: [30.4, 31.2, 32.0, 31.6, 31.2, 31.2]
    first_failure: null
verdict:
  description: Whether the cluster held up, the drop of the last window, and the F27 message when it did not.
  returned: always
  type: dict
  sample: {passed: true, drop: -0.013, problem: ""}
table:
  description: The figures as lines to print.
  returned: always
  type: list
  elements: str
began:
  description: When the burn-in began (UTC, ISO 8601).
  returned: always
  type: str
  sample: "2026-12-05T16:40:00Z"
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm_cluster.plugins.module_utils import _burn_in


def main() -> None:
    module = AnsibleModule(argument_spec={"url": {"type": "str", "required": True},
                                          "model": {"type": "str", "required": True},
                                          "api_key": {"type": "str", "default": "", "no_log": True},
                                          "duration": {"type": "int", "required": True},
                                          "concurrency": {"type": "int", "default": 4},
                                          "max_tokens": {"type": "int", "default": 64, "no_log": False},
                                          "request_timeout": {"type": "int", "default": 120},
                                          "window": {"type": "int", "default": 60},
                                          "max_drop": {"type": "float", "default": 0.3},
                                          "host": {"type": "str", "required": True},
                                          "guide": {"type": "str", "required": True}})
    params = module.params
    for name in ("duration", "concurrency", "max_tokens", "request_timeout", "window"):
        if params[name] < 1:
            # the role's names: duration is burn_in_minutes x 60
            setting = "burn_in_minutes (x 60 s)" if name == "duration" else f"burn_in_{name}"
            module.fail_json(msg=f"{params['host']}: the burn-in's {setting} gives {name}={params[name]}; it must be "
                                 f"at least 1")
    if not 0 < params["max_drop"] < 1:
        module.fail_json(msg=f"{params['host']}: burn-in max_drop={params['max_drop']} must lie between 0 and 1")
    started = time.time()
    try:
        send = _burn_in.http_sender(params["url"].rstrip("/"), params["model"], params["api_key"], params["max_tokens"])
    except ValueError as refused:
        module.fail_json(msg=f"{params['host']}: the burn-in's url: {refused}")
    samples, elapsed = _burn_in.run(send, params["concurrency"], params["duration"], params["request_timeout"])
    summary = _burn_in.summarize(samples, elapsed, params["window"], started, params["duration"])
    verdict = _burn_in.verdict(summary, params["host"], params["request_timeout"], params["max_drop"], params["guide"])
    settings = {name: params[name] for name in ("url", "model", "concurrency", "max_tokens")}
    # not "started": async_status reads a result with that key as a job still running
    module.exit_json(changed=False, summary=summary, verdict=verdict, table=_burn_in.table(summary, settings, verdict),
                     began=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)))


if __name__ == "__main__":
    main()
