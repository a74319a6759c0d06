# Watches the vLLM server for up to <seconds>, then prints "healthy", "exited <code>" or "waiting <why>".
# Run on the head by the vllm_server role, once per retry of its bounded wait: polling here twice a
# second answers within half a second of the server becoming ready, without an Ansible task (and
# its overhead) per poll. Container state comes first, so a server that died while loading ends the
# wait at once instead of after the full timeout.
import json
import subprocess
import sys
import time
import urllib.request


def poll(container, url):
    inspect = subprocess.run(["docker", "inspect", container], capture_output=True, text=True, check=False)
    if inspect.returncode != 0:
        return "exited: container missing"
    state = json.loads(inspect.stdout)[0]["State"]
    if not state.get("Running"):
        return "exited %s" % state.get("ExitCode")
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return "healthy" if response.status == 200 else "waiting HTTP %s" % response.status
    except Exception as exc:  # connection refused while the model loads
        return "waiting %s" % type(exc).__name__


container, url, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + seconds
status = poll(container, url)
while status.startswith("waiting") and time.monotonic() < deadline:
    time.sleep(0.5)
    status = poll(container, url)
print(status)
