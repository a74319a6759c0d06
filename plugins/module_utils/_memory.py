# Copyright (c) inferops.vllm_cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a unified-memory node (GB10) has the memory vLLM will ask for at start (F18). Private to the collection.

On unified memory the GPU's free memory is the host's free memory, and vLLM refuses to start when it is below
gpu_memory_utilization x total ("Free memory on device (61.05/119.7 GiB) on startup is less than desired GPU
memory utilization"). Page cache (the weights just read) is not free to it: MemFree is the figure, not MemAvailable.
"""

from __future__ import annotations

import base64

GIB = 1024 * 1024 * 1024


def meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo as bytes by field name."""
    fields = {}
    for line in (text or "").splitlines():
        name, _colon, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[name.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1)
    return fields


def free_memory_problem(text: str, utilization: float, host: str) -> str:
    """The F18 sentence when the node has less free memory than vLLM will ask for; '' when it has enough."""
    fields = meminfo(text)
    total, free = fields.get("MemTotal", 0), fields.get("MemFree", 0)
    if not total:
        return f"[F18] {host}: /proc/meminfo gave no MemTotal; cannot check the memory vLLM will ask for."
    wanted = float(utilization) * total
    if free >= wanted:
        return ""
    cached = fields.get("Cached", 0)
    fits = int(free / total * 20) / 20  # the largest ratio in steps of 0.05 that fits now
    return (f"[F18] {host}: {free / GIB:.1f} of {total / GIB:.1f} GiB free, but vllm_server_gpu_memory_utilization="
            f"{utilization} asks for {wanted / GIB:.1f} GiB of this unified memory; vLLM would refuse to start "
            f"(\"Free memory on device ... is less than desired GPU memory utilization\"). Page cache holds "
            f"{cached / GIB:.1f} GiB. Fix: lower vllm_server_gpu_memory_utilization (at most {fits:.2f} fits now), "
            "stop what else holds memory on the node, or set vllm_server_drop_page_cache=true to drop the page "
            "cache before vLLM starts.")


def free_memory_problems(slurp_results: list, utilization: float) -> list[str]:
    """The F18 sentences of every node, from the results of a slurp of /proc/meminfo delegated to each (item = host)."""
    problems = []
    for result in slurp_results or []:
        text = base64.b64decode(result.get("content") or "").decode(errors="replace")
        problem = free_memory_problem(text, utilization, str(result.get("item")))
        if problem:
            problems.append(problem)
    return problems
