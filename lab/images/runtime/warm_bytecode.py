"""Write the bytecode of what the lab's containers run, into the image.

The image is built without __pycache__ (the venv's full bytecode would add ~400 MB), so each new
container compiled every module it imported, again: ~10 s of each vLLM start and a few seconds of
each Ray node start on 2 cores. This compiles Ray, vLLM and the small packages their processes
import lazily, then imports each process's entry module and runs one generation with the tiny
model, so that what they reach in torch and transformers gets its bytecode too (~+130 MB).
"""

from __future__ import annotations

import compileall
import importlib
import os
import sys
import sysconfig

# Ray's Python processes (CLI, dashboard, dashboard and runtime-env agents, log monitor,
# autoscaler monitor, client server, task workers) and vLLM's OpenAI server.
ENTRY_MODULES = (
    "ray.scripts.scripts",
    "ray.dashboard.dashboard",
    "ray.dashboard.agent",
    "ray._private.runtime_env.agent.main",
    "ray._private.log_monitor",
    "ray.autoscaler._private.monitor",
    "ray.util.client.server.server",
    "ray._private.workers.default_worker",
    "ray.util.placement_group",
    "vllm.entrypoints.openai.api_server",
)


# Packages those processes import only once running (found with `docker diff` on the lab's Ray
# and vLLM containers): small, so compiled whole.
RUNTIME_PACKAGES = (
    "ray",
    "vllm",
    "aiohttp_cors",
    "httptools",
    "jmespath",
    "model_hosting_container_standards",
    "opencensus",
    "prometheus_client",
    "prometheus_fastapi_instrumentator",
    "pydantic",
    "uvicorn",
    "websockets",
)


def main(model: str) -> None:
    site_packages = sysconfig.get_paths()["purelib"]
    for package in RUNTIME_PACKAGES:
        if not compileall.compile_dir(os.path.join(site_packages, package), quiet=1, workers=0):
            sys.exit(f"warm_bytecode: compiling {package} failed")
    for module in ENTRY_MODULES:
        importlib.import_module(module)
    from vllm import LLM, SamplingParams  # noqa: PLC0415  (after the entry modules, as the server does)

    engine = LLM(model=model, dtype="float32", max_model_len=256, enforce_eager=True)
    outputs = engine.generate(["warm"], SamplingParams(max_tokens=2))
    if not outputs or not outputs[0].outputs[0].token_ids:
        sys.exit("warm_bytecode: the tiny model generated no token")


if __name__ == "__main__":
    main(sys.argv[1])
