"""The lab's vLLM platform: vLLM's CPU platform, made to accept Ray as its executor.

Lab only. Real GPU images never carry it: on CUDA, vLLM's own platform already asks Ray for
"GPU" bundles. vLLM loads out-of-tree platform plugins (entry point group
``vllm.platform_plugins``) ahead of its built-in ones, so installing this package is the whole
change: no vLLM file is patched, and the collection's roles do not know it exists.
"""

from __future__ import annotations

import os
import sys


def register() -> str:
    """vLLM's entry point: called in every vLLM process that resolves its platform.

    Ray starts vLLM's workers on other nodes without the driver's environment, so what they need
    is set here rather than in a container's environment: with tensor parallelism vLLM compiles
    VocabParallelEmbedding's masking with torch.compile (inductor) even with --enforce-eager, and
    the lab image has no C++ compiler for inductor.
    """
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    _exit_if_asked()
    return "inferops_lab_vllm_platform.platform.LabCpuRayPlatform"


def _exit_if_asked() -> None:
    """The lab's broken release (tests of playbooks/upgrade.yml): an image built FROM this one with
    INFEROPS_LAB_EXIT_AT_START=1 has a vLLM server that exits as it starts, as a release with a bad
    kernel or a missing dependency does. vLLM's benchmark client (`vllm bench`) still runs."""
    if os.environ.get("INFEROPS_LAB_EXIT_AT_START") != "1":
        return
    argv = " ".join(sys.argv)
    if "bench" in sys.argv or ("api_server" not in argv and "serve" not in sys.argv):
        return
    print("inferops lab: INFEROPS_LAB_EXIT_AT_START=1, this release's vLLM exits at start", file=sys.stderr,
          flush=True)
    os._exit(3)
