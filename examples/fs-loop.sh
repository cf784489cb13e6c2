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
# Run by `iogauge campaign` (it sets $IOGAUGE and $IOGAUGE_SMOKE); needs root.
set -eu
action=$1
root=$2
shift 2
db=0
if [ "${1:-}" = --db ]; then db=1; shift; fi
# A loop device keeps its queue settings from its last attachment (another tool's
# nr_requests, write cache or scheduler): every case starts from the kernel's defaults.
loop_defaults() {
  q=/sys/block/${1#/dev/}/queue
  echo none > "$q/scheduler" 2>/dev/null || true
  echo 128 > "$q/nr_requests" 2>/dev/null || true
  echo "write back" > "$q/write_cache" 2>/dev/null || true
}
if [ "$action" = up ]; then
  # The raw device's first FILL MiB (the span the campaign tests) get incompressible data:
  # a sparse image's holes would answer reads without any I/O.
  if [ "${IOGAUGE_SMOKE:-0}" = 1 ]; then scale=16m; schemas=2; fill=64; else scale=512m; schemas=4; fill=1024; fi
  mkdir -p "$root"
  if [ $db = 1 ] && [ ! -f "$root/wal.loop" ]; then
    truncate -s 8G "$root/wal.img"
    dev=$(losetup --find --show --direct-io=on "$root/wal.img")
    echo "$dev" > "$root/wal.loop"
    loop_defaults "$dev"
    mkfs.ext4 -q -F "$dev"
    mkdir -p "$root/wal"
    mount "$dev" "$root/wal"
    truncate -s 64M "$root/wal/raw.log"
    ln -sfn wal/raw.log "$root/apart-log"
  fi
  for fs in "$@"; do
    if [ -f "$root/$fs.loop" ]; then continue; fi
    [ "$fs" = raw ] || command -v "mkfs.$fs" >/dev/null ||
      { echo "fs-loop.sh: mkfs.$fs missing (apt-get install -y xfsprogs btrfs-progs)" >&2; exit 1; }
    truncate -s 8G "$root/$fs.img"
    dev=$(losetup --find --show --direct-io=on "$root/$fs.img")
    echo "$dev" > "$root/$fs.loop"
    loop_defaults "$dev"
    case $fs in
      raw)
        dd if=/dev/urandom of="$dev" bs=1M count=$fill oflag=direct status=none
        mkdir -p "$root/raw"
        ln -sfn "$dev" "$root/raw/data"
        if [ $db = 1 ]; then ln -sfn "$dev" "$root/data-log"; fi
        continue ;;
      ext4) mkfs.ext4 -q -F "$dev" ;;
      xfs) mkfs.xfs -q -f "$dev" ;;
      btrfs) mkfs.btrfs -q -f "$dev" >/dev/null ;;
      *) echo "fs-loop.sh: unknown kind $fs (raw, ext4, xfs, btrfs)" >&2; exit 2 ;;
    esac
    mkdir -p "$root/$fs"
    mount "$dev" "$root/$fs"
    if [ $db = 1 ]; then
      "$IOGAUGE" db setup --dir "$root/$fs/pg-data" --schemas "$schemas" --scale "$scale" >/dev/null
      "$IOGAUGE" db setup --dir "$root/$fs/pg-apart" --wal-dir "$root/wal/$fs" \
        --schemas "$schemas" --scale "$scale" >/dev/null
    fi
  done
elif [ "$action" = down ]; then
  for fs in "$@"; do
    for pg in pg-data pg-apart; do
      if [ -d "$root/$fs/$pg" ] && mountpoint -q "$root/$fs"; then
        "$IOGAUGE" db drop --dir "$root/$fs/$pg" >/dev/null || true
      fi
    done
    if mountpoint -q "$root/$fs" 2>/dev/null; then umount "$root/$fs"; fi
    if [ -f "$root/$fs.loop" ]; then losetup -d "$(cat "$root/$fs.loop")" || true; rm -f "$root/$fs.loop"; fi
    rm -f "$root/$fs.img"
    if [ -L "$root/$fs/data" ]; then rm -f "$root/$fs/data"; fi
    rmdir "$root/$fs" 2>/dev/null || true
  done
  rm -f "$root/data-log" "$root/apart-log"
  if [ -f "$root/wal.loop" ]; then
    if mountpoint -q "$root/wal"; then umount "$root/wal"; fi
    losetup -d "$(cat "$root/wal.loop")" || true
    rm -f "$root/wal.loop" "$root/wal.img"
    rmdir "$root/wal" 2>/dev/null || true
  fi
  rmdir "$root" 2>/dev/null || true
else
  echo "usage: fs-loop.sh up ROOT [--db] KIND... | down ROOT KIND..." >&2
  exit 2
fi
