"""The lab's vLLM platform: vLLM's CPU platform, made to accept Ray as its executor.

Lab only. Real GPU images never carry it: on CUDA, vLLM's own platform already asks Ray for
"GPU" bundles. vLLM loads out-of-tree platform plugins (entry point group
``vllm.platform_plugins``) ahead of its built-in ones, so installing this package is the whole
change: no vLLM file is patched, and the collection's roles do not know it exists.
"""

from __future__ import annotations

import os


def register() -> str:
    """vLLM's entry point: called in every vLLM process that resolves its platform.

    Ray starts vLLM's workers on other nodes without the driver's environment, so what they need
    is set here rather than in a container's environment: with tensor parallelism vLLM compiles
    VocabParallelEmbedding's masking with torch.compile (inductor) even with --enforce-eager, and
    the lab image has no C++ compiler for inductor.
    """
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    return "inferops_lab_vllm_platform.platform.LabCpuRayPlatform"
