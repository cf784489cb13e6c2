#!/bin/sh
# Builds (up) or removes (down) the storage of the filesystem campaigns under ROOT: one sparse
# image file per kind, all on the same disk, each attached as a direct-I/O loop device (so the
# host's page cache does not cache it twice). "raw" stays a bare device, reachable as the
# symlink ROOT/raw/data; ext4, xfs and btrfs are formatted and mounted at ROOT/FS. With --db two
# iogauge PostgreSQL clusters are loaded per filesystem (small under --smoke): ROOT/FS/pg-data
# with its WAL beside the data, and ROOT/FS/pg-apart with its WAL on a device of its own (one
# more image, ext4 at ROOT/wal, shared by every filesystem's pg-apart); ROOT/data-log and
# ROOT/apart-log are where the raw stand-in's log writer goes for each (the raw device itself,
# a file on the WAL's device).
#
#   fs-loop.sh up ROOT [--db] KIND...      fs-loop.sh down ROOT KIND...
#
# A kind is done (ROOT/KIND.done) only once everything of it is made: `up` skips done kinds
# and makes an unfinished one again from the start. A step that fails takes down what this
# `up` made of the kind (or the WAL's device) it was making, and leaves the done ones.
#
# Run by `iogauge campaign` (it sets $IOGAUGE and $IOGAUGE_SMOKE); needs root.
set -eu
usage() {
  echo "usage: fs-loop.sh up ROOT [--db] KIND... | down ROOT KIND...  (KIND: raw, ext4, xfs, btrfs)"
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  up|down) ;;
  *) usage >&2; exit 2 ;;
esac
if [ $# -lt 3 ]; then usage >&2; exit 2; fi
action=$1
root=$2
shift 2
db=0
if [ "$1" = --db ]; then
  if [ "$action" != up ]; then usage >&2; exit 2; fi
  db=1
  shift
fi
if [ $# -eq 0 ]; then usage >&2; exit 2; fi
# Every kind is checked before anything is made: an unknown one attached nothing.
for fs in "$@"; do
  case $fs in
    raw) ;;
    ext4|xfs|btrfs)
      command -v "mkfs.$fs" >/dev/null ||
        { echo "fs-loop.sh: mkfs.$fs missing (apt-get install -y xfsprogs btrfs-progs)" >&2; exit 1; } ;;
    *) echo "fs-loop.sh: unknown kind $fs; give raw, ext4, xfs or btrfs" >&2; exit 2 ;;
  esac
done
iogauge=${IOGAUGE:-iogauge}

# A loop device keeps its queue settings from its last attachment (another tool's
# nr_requests, write cache or scheduler): every case starts from the kernel's defaults.
loop_defaults() {
  q=/sys/block/${1#/dev/}/queue
  echo none > "$q/scheduler" 2>/dev/null || true
  echo 128 > "$q/nr_requests" 2>/dev/null || true
  echo "write back" > "$q/write_cache" 2>/dev/null || true
}

# Everything of kind $1: its clusters, mount, loop device, image and marks.
down_kind() {
  for pg in pg-data pg-apart; do
    if [ -d "$root/$1/$pg" ] && mountpoint -q "$root/$1"; then
      "$iogauge" db drop --dir "$root/$1/$pg" >/dev/null 2>&1 || true
    fi
  done
  if mountpoint -q "$root/$1" 2>/dev/null; then umount "$root/$1"; fi
  if [ -f "$root/$1.loop" ]; then losetup -d "$(cat "$root/$1.loop")" 2>/dev/null || true; fi
  rm -f "$root/$1.loop" "$root/$1.done" "$root/$1.img"
  if [ -L "$root/$1/data" ]; then rm -f "$root/$1/data"; fi
  rmdir "$root/$1" 2>/dev/null || true
}

# The WAL's device of --db, and the log files beside it.
down_wal() {
  rm -f "$root/data-log" "$root/apart-log"
  if mountpoint -q "$root/wal" 2>/dev/null; then umount "$root/wal"; fi
  if [ -f "$root/wal.loop" ]; then losetup -d "$(cat "$root/wal.loop")" 2>/dev/null || true; fi
  rm -f "$root/wal.loop" "$root/wal.done" "$root/wal.img"
  rmdir "$root/wal" 2>/dev/null || true
}

# A sparse image of 8 GiB at $1, attached: the loop device, also written to $2.
attach() {
  truncate -s 8G "$1"
  dev=$(losetup --find --show --direct-io=on "$1")
  echo "$dev" > "$2"
  loop_defaults "$dev"
}

# What this `up` is making ("wal" or a kind), taken down if it stops before it is done.
making=
on_exit() {
  st=$?
  trap - EXIT INT TERM
  # Take down all it can: one step failing here must not leave the rest.
  set +e
  if [ "$st" -ne 0 ] && [ -n "$making" ]; then
    echo "fs-loop.sh: $making failed (exit $st); taking down what was made of it" >&2
    if [ "$making" = wal ]; then down_wal; else down_kind "$making"; fi
  fi
  exit "$st"
}

up_wal() {
  if [ -f "$root/wal.done" ]; then return 0; fi
  down_wal
  making=wal
  attach "$root/wal.img" "$root/wal.loop"
  mkfs.ext4 -q -F "$dev"
  mkdir -p "$root/wal"
  mount "$dev" "$root/wal"
  truncate -s 64M "$root/wal/raw.log"
  ln -sfn wal/raw.log "$root/apart-log"
  touch "$root/wal.done"
  making=
}

up_kind() {
  fs=$1
  if [ -f "$root/$fs.done" ]; then return 0; fi
  # An unfinished kind (a failed or killed `up`, or one made before the marks): from the start.
  down_kind "$fs"
  making=$fs
  attach "$root/$fs.img" "$root/$fs.loop"
  case $fs in
    raw)
      dd if=/dev/urandom of="$dev" bs=1M count=$fill oflag=direct status=none
      mkdir -p "$root/raw"
      ln -sfn "$dev" "$root/raw/data"
      if [ $db = 1 ]; then ln -sfn "$dev" "$root/data-log"; fi ;;
    *)
      case $fs in
        ext4) mkfs.ext4 -q -F "$dev" ;;
        xfs) mkfs.xfs -q -f "$dev" ;;
        btrfs) mkfs.btrfs -q -f "$dev" >/dev/null ;;
      esac
      mkdir -p "$root/$fs"
      mount "$dev" "$root/$fs"
      if [ $db = 1 ]; then
        "$iogauge" db setup --dir "$root/$fs/pg-data" --schemas "$schemas" --scale "$scale" >/dev/null
        "$iogauge" db setup --dir "$root/$fs/pg-apart" --wal-dir "$root/wal/$fs" \
          --schemas "$schemas" --scale "$scale" >/dev/null
      fi ;;
  esac
  touch "$root/$fs.done"
  making=
}

if [ "$action" = up ]; then
  # The raw device's first FILL MiB (the span the campaign tests) get incompressible data:
  # a sparse image's holes would answer reads without any I/O.
  if [ "${IOGAUGE_SMOKE:-0}" = 1 ]; then scale=16m; schemas=2; fill=64; else scale=512m; schemas=4; fill=1024; fi
  mkdir -p "$root"
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if [ $db = 1 ]; then up_wal; fi
  for fs in "$@"; do up_kind "$fs"; done
else
  for fs in "$@"; do down_kind "$fs"; done
  down_wal
  rmdir "$root" 2>/dev/null || true
fi
