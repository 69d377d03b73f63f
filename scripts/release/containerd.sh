# shellcheck shell=bash
# containerd.sh — sourced, not run: the configuration of a standalone containerd that touches
# nothing of the machine's, for the image checks (scripts/release/image.sh runs the image in it;
# tests/release/dockerfile.sh gives it to its own dockerd).
#
#   . scripts/release/containerd.sh
#   containerd_config DIR > DIR/containerd.toml
#       root DIR/root, state DIR/state, socket DIR/containerd.sock, opt DIR/opt; no TCP or
#       debug or metrics listener, no ttrpc socket; the CRI plugin and the snapshotters this
#       machine cannot use (aufs, btrfs, zfs, devmapper) disabled, so it logs no error for them.
containerd_config() {
  local d=$1
  cat <<TOML
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
TOML
}
