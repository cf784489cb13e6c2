#!/bin/sh
# Builds (up) or removes (down) one filesystem per type under ROOT for
# examples/filesystems.toml: a sparse image file each, on the same disk, attached as a
# direct-I/O loop device (so the host's page cache does not cache it twice), formatted,
# mounted at ROOT/FS, with an iogauge PostgreSQL cluster loaded in ROOT/FS/pg.
# Run by `iogauge campaign` (it sets $IOGAUGE and $IOGAUGE_SMOKE); needs root.
set -eu
action=$1
root=$2
fss="ext4 xfs btrfs"
if [ "$action" = up ]; then
  if [ "${IOGAUGE_SMOKE:-0}" = 1 ]; then scale=16m; schemas=2; else scale=512m; schemas=4; fi
  mkdir -p "$root"
  for fs in $fss; do
    if mountpoint -q "$root/$fs"; then continue; fi
    command -v "mkfs.$fs" >/dev/null || { echo "fs-loop.sh: mkfs.$fs missing (apt-get install -y xfsprogs btrfs-progs)" >&2; exit 1; }
    truncate -s 8G "$root/$fs.img"
    dev=$(losetup --find --show --direct-io=on "$root/$fs.img")
    echo "$dev" > "$root/$fs.loop"
    case $fs in
      ext4) mkfs.ext4 -q -F "$dev" ;;
      xfs) mkfs.xfs -q -f "$dev" ;;
      btrfs) mkfs.btrfs -q -f "$dev" >/dev/null ;;
    esac
    mkdir -p "$root/$fs"
    mount "$dev" "$root/$fs"
    "$IOGAUGE" db setup --dir "$root/$fs/pg" --schemas "$schemas" --scale "$scale" >/dev/null
  done
elif [ "$action" = down ]; then
  for fs in $fss; do
    if [ -d "$root/$fs/pg" ] && mountpoint -q "$root/$fs"; then
      "$IOGAUGE" db drop --dir "$root/$fs/pg" >/dev/null || true
    fi
    if mountpoint -q "$root/$fs"; then umount "$root/$fs"; fi
    if [ -f "$root/$fs.loop" ]; then losetup -d "$(cat "$root/$fs.loop")" || true; rm -f "$root/$fs.loop"; fi
    rm -f "$root/$fs.img"
    rmdir "$root/$fs" 2>/dev/null || true
  done
  rmdir "$root" 2>/dev/null || true
else
  echo "usage: fs-loop.sh up|down ROOT" >&2
  exit 2
fi
