#!/bin/bash
# Guest side of tests/vm/t-nfs-rdma.sh: NFS over RDMA between the two
# guests' rdma-sim devices.  Guest A is the server: an ext4 file system on
# a brd ramdisk exported by the kernel's nfsd, which listens for RDMA on
# port 20049 (/proc/fs/nfsd/portlist) besides TCP.  Guest B mounts the
# export twice with proto=rdma, as NFSv4.2 and as NFSv3, and through each
# writes a large file and many small ones; then it unmounts, mounts again
# and reads everything back through the other version, compared with what
# was written (sha256).  Both mounts must really use RDMA: the transport in
# /proc/self/mountstats is "rdma", and the device's RoCE packet counters
# grow with the data.
#
# Environment (from the host side):
#   NFS_BIG_MB      size of the large file (default 32)
#   NFS_SMALL       number of small files (default 200, 1-32 KiB each)
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

PORT=20049
EXPORT=/srv/nfs
DISK_MB=256
BIG_MB=${NFS_BIG_MB:-32}
SMALL=${NFS_SMALL:-200}

gt_rdma_setup
gt_wait_peer 60

# --- guest A: the server -------------------------------------------------------

server_setup() {
    local portlist
    modprobe brd rd_nr=1 rd_size=$((DISK_MB * 1024)) max_part=0 || gt_fail "modprobe brd failed"
    mkfs.ext4 -q -F /dev/ram0 || gt_fail "mkfs.ext4 /dev/ram0 failed"
    mkdir -p "$EXPORT"
    mount /dev/ram0 "$EXPORT" || gt_fail "cannot mount /dev/ram0 on $EXPORT"
    chmod 0777 "$EXPORT"
    # fsid=0: the export is NFSv4's root (the guest's / is an overlayfs,
    # which nfsd cannot make a pseudo root of); NFSv3 mounts it by path.
    echo "$EXPORT *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" >/etc/exports
    mkdir -p /var/lib/nfs/v4recovery /run/rpcbind
    rpcbind -w || gt_fail "rpcbind did not start"
    modprobe nfsd || gt_fail "modprobe nfsd failed"
    modprobe rpcrdma || gt_fail "modprobe rpcrdma failed (the kernel's NFS/RDMA transport)"
    mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
        gt_fail "cannot mount the nfsd file system"
    # A short grace period: NFSv4 OPENs wait for it after nfsd starts.
    echo 10 >/proc/fs/nfsd/nfsv4gracetime
    echo 10 >/proc/fs/nfsd/nfsv4leasetime
    exportfs -ra || gt_fail "exportfs -ra failed"
    rpc.mountd || gt_fail "rpc.mountd did not start"
    rpc.nfsd 4 || gt_fail "rpc.nfsd 4 failed"
    echo "rdma $PORT" >/proc/fs/nfsd/portlist ||
        gt_fail "nfsd refused an RDMA listener on port $PORT: $(dmesg | grep -iE 'svcrdma|rpcrdma' | tail -n 3 | tr '\n' ';')"
    portlist=$(tr '\n' ' ' </proc/fs/nfsd/portlist)
    [[ $portlist == *"rdma $PORT"* ]] || gt_fail "nfsd's portlist has no 'rdma $PORT': $portlist"
    gt_log "server: nfsd exports $EXPORT (ext4 on a ${DISK_MB} MiB ramdisk), listeners: $portlist, versions: $(cat /proc/fs/nfsd/versions)"
}

if [[ $RSIM_ROLE == server ]]; then
    server_setup
    gt_barrier server-ready
    gt_barrier finished 600
    # What the client wrote is on the server's file system too.
    n=$(find "$EXPORT/v4/small" "$EXPORT/v3/small" -type f | wc -l)
    ((n == 2 * SMALL)) || gt_fail "server: $n small files in $EXPORT, the client wrote $((2 * SMALL))"
    gt_save_counters
    gt_check_dmesg
    echo "nfs-rdma: server checks passed"
    exit 0
fi

# --- guest B: the client -------------------------------------------------------

# nfs_mount VERS DIR: mounts the export over RDMA and checks the transport.
nfs_mount() {
    local vers=$1 dir=$2 opts out xprt path=/
    opts=vers=$vers,proto=rdma,port=$PORT
    [[ $vers == 3 ]] && opts+=,nolock && path=$EXPORT
    mkdir -p "$dir"
    out=$(mount -t nfs -o "$opts" "$RSIM_PEER:$path" "$dir" 2>&1) ||
        gt_fail "mount -t nfs -o $opts $RSIM_PEER:$path failed: $out; $(dmesg | grep -iE 'rpcrdma|nfs' | tail -n 5 | tr '\n' ';')"
    xprt=$(awk -v d="$dir" '$1 == "device" && $5 == d { m = 1; next }
        m && $1 == "xprt:" { print $2; exit }' /proc/self/mountstats)
    [[ $xprt == rdma ]] || gt_fail "$dir: the NFS transport is '$xprt', not rdma"
    grep -q " $dir nfs[4]* .*proto=rdma" /proc/mounts ||
        gt_fail "$dir: /proc/mounts does not say proto=rdma: $(grep " $dir " /proc/mounts)"
    gt_log "mounted $RSIM_PEER:$path on $dir: $(grep " $dir " /proc/mounts | cut -d' ' -f3-4)"
}

nfs_umount() {
    timeout 60 umount "$1" || gt_fail "umount $1 failed or hung"
}

# write_tree DIR: a BIG_MB file and SMALL files of 1-32 KiB, made in /tmp
# first, copied into DIR, their sums kept in /tmp/sums-<name of DIR>.
write_tree() {
    local dir=$1 name src i
    name=$(basename "$dir")
    src=/tmp/src-$name
    mkdir -p "$src/small"
    head -c "$((BIG_MB << 20))" /dev/urandom >"$src/big"
    for ((i = 0; i < SMALL; i++)); do
        head -c "$(((RANDOM % 32 + 1) * 1024 - RANDOM % 1000))" /dev/urandom >"$src/small/f$i"
    done
    (cd "$src" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"/tmp/sums-$name"
    cp -r "$src/big" "$src/small" "$dir/" || gt_fail "copying into $dir failed"
    sync -f "$dir"
    rm -rf "$src"
}

# check_tree DIR NAME: DIR holds exactly what write_tree wrote for NAME.
check_tree() {
    local dir=$1 name=$2 out
    out=$(cd "$dir" && sha256sum --quiet -c "/tmp/sums-$name" 2>&1) ||
        gt_fail "$dir differs from what was written: $(head -n 5 <<<"$out" | tr '\n' ';')"
    [[ $(cd "$dir" && find . -type f | wc -l) == "$(wc -l <"/tmp/sums-$name")" ]] ||
        gt_fail "$dir has $(cd "$dir" && find . -type f | wc -l) files, $(wc -l <"/tmp/sums-$name") were written"
    gt_log "ok: $dir: $(wc -l <"/tmp/sums-$name") files read back and equal to what was written"
}

gt_barrier server-ready
modprobe rpcrdma || gt_fail "modprobe rpcrdma failed"
p0=$(gt_counter rx_roce_packets tx_roce_packets)
t0=$SECONDS
nfs_mount 4.2 /mnt/v4
nfs_mount 3 /mnt/v3
mkdir /mnt/v4/v4 /mnt/v3/v3
write_tree /mnt/v4/v4
write_tree /mnt/v3/v3
gt_log "wrote $((2 * BIG_MB)) MiB and $((2 * SMALL)) small files in $((SECONDS - t0))s"
nfs_umount /mnt/v4
nfs_umount /mnt/v3
# Read back through fresh mounts (no client cache), each version reading
# what the other wrote.
nfs_mount 3 /mnt/v3
nfs_mount 4.2 /mnt/v4
check_tree /mnt/v3/v4 v4
check_tree /mnt/v4/v3 v3
p1=$(gt_counter rx_roce_packets tx_roce_packets)
# Far more RoCE packets than the data's 1 KiB MTU frames: it went over RDMA.
((p1 - p0 > 2 * BIG_MB * 1024)) ||
    gt_fail "rsim0 sent and received $((p1 - p0)) RoCE packets for $((4 * BIG_MB)) MiB: the data did not go over RDMA"
gt_log "rsim0: $((p1 - p0)) RoCE packets for the test, $((SECONDS - t0))s"
grep -A 40 ' /mnt/v4 ' /proc/self/mountstats | sed -n '/xprt:/p;/RPC iostats/,/^$/p' | gt_save mountstats-v4.txt || true
nfs_umount /mnt/v4
nfs_umount /mnt/v3
gt_save_counters
gt_barrier finished
gt_check_dmesg
echo "nfs-rdma: client checks passed"
