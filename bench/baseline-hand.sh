#!/usr/bin/env bash
# The usual hand procedure, as the baseline of `make bench`: on each lab node, `docker run ... ray
# start` (head pinned by hand to its interconnect address, workers joining it), then poll until every
# node appears in `ray status`. No preflight, no validation, no auth, no waiting bounds.
# Usage: baseline-hand.sh IMAGE HEAD_IC_IP NODE [NODE...]   (first NODE is the head)
set -euo pipefail
image=$1 head_ip=$2 head=$3
shift 2
nodes=("$@")

docker exec "inferops-lab-$head" docker run -d --name bench-ray-head --network host --ipc host --init "$image" \
  ray start --head --node-ip-address="$head_ip" --port=6379 --num-gpus=1 \
  --object-store-memory=268435456 --disable-usage-stats --block >/dev/null
for node in "${nodes[@]:1}"; do
  docker exec "inferops-lab-$node" docker run -d --name bench-ray-worker --network host --ipc host --init "$image" \
    ray start --address="$head_ip:6379" --num-gpus=1 --object-store-memory=268435456 --disable-usage-stats --block >/dev/null
done
until docker exec "inferops-lab-$head" docker exec bench-ray-head ray status --address="$head_ip:6379" 2>/dev/null \
  | grep -c '^ [0-9]* node_' | grep -qx "${#nodes[@]}"; do
  sleep 1
done
