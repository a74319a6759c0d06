#!/bin/sh
# Starts the node's inner Docker engine. The node runs without --privileged (this VM's
# capability bounding set lacks CAP_SYS_RESOURCE), so /sys and the cgroup hierarchies arrive
# read-only and must be re-bound read-write before dockerd can create containers.
set -eu

mount -o remount,bind,rw /sys
for hierarchy in /sys/fs/cgroup/*; do
  # cpu -> cpu,cpuacct and friends are symlinks to a hierarchy remounted on its own.
  [ -L "$hierarchy" ] && continue
  mount -o remount,bind,rw "$hierarchy"
done

dockerd >/var/log/dockerd.log 2>&1 &
dockerd_pid=$!

for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "lab node $(hostname): inner dockerd ready"
    break
  fi
  sleep 1
done

wait "$dockerd_pid"
