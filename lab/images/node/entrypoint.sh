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

# An installed host has a machine id of its own, kept across reboots: made once, at this node's first start (the
# image leaves /etc/machine-id empty; a restart keeps the container's file).
if [ ! -s /etc/machine-id ]; then
  tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
fi

# Real servers name their ports by slot (enp1s0f1np1 on one, enP2p1s0f1np1 on another): a lab node given
# LAB_INTERCONNECT_NAME carries its interconnect address on an interface of that name, not Docker's ethN,
# so the nodes of one lab disagree on the name as such hosts do. Again at every start: Docker names it anew.
if [ -n "${LAB_INTERCONNECT_NAME:-}" ] && [ -n "${LAB_INTERCONNECT_IP:-}" ]; then
  given=$(ip -o -4 addr show | awk -v ip="$LAB_INTERCONNECT_IP" 'index($4, ip "/") == 1 { print $2; exit }')
  if [ -z "$given" ]; then
    echo "lab node $(hostname): no interface carries $LAB_INTERCONNECT_IP to rename to $LAB_INTERCONNECT_NAME" >&2
    exit 1
  fi
  if [ "$given" != "$LAB_INTERCONNECT_NAME" ]; then
    ip link set dev "$given" down
    ip link set dev "$given" name "$LAB_INTERCONNECT_NAME"
    ip link set dev "$LAB_INTERCONNECT_NAME" up
  fi
fi

# Ansible reaches the lab's nodes through `docker exec`, never over their network; a real node's controller
# comes in over SSH on port 22. This stands in for sshd there (accepts and closes), so the firewall's
# confirmation probe (ray_firewall_confirm_port) meets what it meets on a real host.
python3 -c '
import socket
listener = socket.socket(socket.AF_INET6)
listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("::", 22))
listener.listen(16)
while True:
    listener.accept()[0].close()
' >/var/log/lab-sshd-stand-in.log 2>&1 &

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
