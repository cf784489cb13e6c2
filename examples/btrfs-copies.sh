#!/bin/sh
# Builds (up) or removes (down) the storage of the database redundancy study under ROOT: three
# members, a btrfs filesystem over them with PROFILE for its data (raid0: striped, one copy, as
# ASM's external redundancy; raid1: two copies, normal; raid1c3: three, high) and three copies
# of its metadata in every case (small; on every member, it leaves their free space equal, so
# the data's chunks rotate evenly over them), mounted
# nodatacow (PostgreSQL's pages are overwritten in place, as on ASM, not copied on write), each
# member limited by the kernel's block throttle to IOPS reads and IOPS writes a second so the
# members, not what holds them, are the limit; then an iogauge PostgreSQL cluster loaded at
# ROOT/fs/pg.
#
#   btrfs-copies.sh up ROOT PROFILE IOPS      btrfs-copies.sh down ROOT
#
# The members are loop devices over images in a tmpfs at ROOT/mem (memory: the throttle is the
# only limit), or the devices in $MEMBERS ("/dev/sdb /dev/sdc /dev/sdd": wiped!). The throttle
# is cgroup v1's blkio.throttle.* in the root cgroup (it catches write-back too). $PG_BIN picks
# the PostgreSQL binaries (16 or newer for debug_io_direct). Run by `iogauge campaign` (it sets
# $IOGAUGE and $IOGAUGE_SMOKE); needs root, btrfs-progs.
set -eu
usage() {
  echo "usage: btrfs-copies.sh up ROOT raid0|raid1|raid1c3 IOPS | down ROOT" >&2
  exit 2
}
case "${1:-} $#" in "up 4" | "down 2") ;; *) usage ;; esac
action=$1
root=$2
blkio=/sys/fs/cgroup/blkio
throttle() { # throttle MAJ:MIN IOPS (0: none)
  for f in read_iops_device write_iops_device; do echo "$1 $2" > "$blkio/blkio.throttle.$f"; done
}
members() {
  if [ -n "${MEMBERS:-}" ]; then echo "$MEMBERS"; else cat "$root"/m*.loop 2>/dev/null || true; fi
}
if [ "$action" = up ]; then
  profile=$3
  iops=$4
  case $profile in raid0|raid1|raid1c3) ;; *) echo "btrfs-copies.sh: PROFILE is raid0, raid1 or raid1c3, not $profile" >&2; exit 2 ;; esac
  case $iops in ''|*[!0-9]*) echo "btrfs-copies.sh: IOPS is a whole number of reads and of writes a second per member (0: no throttle), not $iops" >&2; exit 2 ;; esac
  command -v mkfs.btrfs >/dev/null || { echo "btrfs-copies.sh: mkfs.btrfs missing (apt-get install -y btrfs-progs)" >&2; exit 1; }
  [ -w "$blkio/blkio.throttle.write_iops_device" ] ||
    { echo "btrfs-copies.sh: $blkio/blkio.throttle.write_iops_device is not writable: needs root and cgroup v1's blkio" >&2; exit 1; }
  # Images are sparse: memory holds what is written (the data once per copy), not their size.
  if [ "${IOGAUGE_SMOKE:-0}" = 1 ]; then size=1g; scale=16m; schemas=2; else size=6g; scale=256m; schemas=6; fi
  trap 'sh "$0" down "$root"' EXIT
  mkdir -p "$root/fs"
  if [ -z "${MEMBERS:-}" ]; then
    mkdir -p "$root/mem"
    mountpoint -q "$root/mem" || mount -t tmpfs -o size=16g iogauge-members "$root/mem"
    for i in 1 2 3; do
      truncate -s "$size" "$root/mem/m$i.img"
      losetup --find --show "$root/mem/m$i.img" > "$root/m$i.loop"
      # A loop device keeps its queue settings from its last attachment: start from the
      # kernel's defaults.
      q=/sys/block/$(basename "$(cat "$root/m$i.loop")")/queue
      echo none > "$q/scheduler" 2>/dev/null || true
      echo 128 > "$q/nr_requests" 2>/dev/null || true
      echo "write back" > "$q/write_cache" 2>/dev/null || true
    done
  fi
  # shellcheck disable=SC2046
  mkfs.btrfs -q -f -d "$profile" -m raid1c3 $(members) >/dev/null
  first=$(members | awk '{print $1; exit}')
  mount -o nodatacow "$first" "$root/fs"
  # Data chunks of 256 MiB (the kernel's smallest; by default 10% of the members, up to
  # 1 GiB), mkfs's first one (1 GiB on two members) traded for one of those while the
  # filesystem is empty, so the 1.5 GiB data set sits in 6 chunks, 2 on each pair of members
  # under raid1: every member holds its share (otherwise two members would hold most of it,
  # their writes the limit, the third idle). Balancing after the load would not do: btrfs
  # then copies every block on its first write, nodatacow or not (relocation snapshots the
  # data). Under --smoke the members are too small for the chunk size (at most 10% of them),
  # and it is left alone.
  fsid=$(findmnt -no UUID "$root/fs")
  if echo $((256 << 20)) 2>/dev/null > "/sys/fs/btrfs/$fsid/allocation/data/chunk_size"; then
    btrfs balance start -d "$root/fs" >/dev/null
  fi
  "$IOGAUGE" db setup --dir "$root/fs/pg" --schemas "$schemas" --scale "$scale" ${PG_BIN:+--pg-bin "$PG_BIN"} >/dev/null
  # After the load, which would crawl at the throttle's pace.
  sync
  for m in $(members); do throttle "$(lsblk -dno MAJ:MIN "$m" | tr -d ' ')" "$iops"; done
  trap - EXIT
elif [ "$action" = down ]; then
  if [ -d "$root/fs/pg" ] && mountpoint -q "$root/fs"; then
    "$IOGAUGE" db drop --dir "$root/fs/pg" >/dev/null || true
  fi
  for m in $(members); do
    [ -b "$m" ] && throttle "$(lsblk -dno MAJ:MIN "$m" | tr -d ' ')" 0 || true
  done
  if mountpoint -q "$root/fs" 2>/dev/null; then umount "$root/fs"; fi
  for l in "$root"/m*.loop; do
    [ -f "$l" ] || continue
    losetup -d "$(cat "$l")" || true
    rm -f "$l"
  done
  if mountpoint -q "$root/mem" 2>/dev/null; then umount "$root/mem"; fi
  rmdir "$root/fs" "$root/mem" "$root" 2>/dev/null || true
fi
