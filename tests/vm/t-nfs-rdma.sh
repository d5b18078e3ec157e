#!/bin/bash
# VM test: NFS over RDMA between two guests with rdma-sim
# (tests/vm/guest/nfs-rdma.sh).  Guest A runs nfsd with an RDMA listener on
# port 20049 exporting an ext4 ramdisk; guest B mounts it with proto=rdma
# as NFSv4.2 and as NFSv3, writes a large file and many small ones through
# each, remounts, and reads everything back through the other version,
# compared with what was written.  No oops, WARN, BUG or hung task.
#
# Two passes: plain, then lossy (half the data) with 2% of the RoCE frames
# each device sends dropped and 2% reordered.  NFS_PASSES="plain lossy"
# selects them; NFS_BIG_MB and NFS_SMALL (sizes, see the guest script) go
# to the guests.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-nfs-rdma

for tool in rpc.nfsd exportfs rpc.mountd rpcbind mount.nfs mkfs.ext4; do
    command -v "$tool" >/dev/null || vmtest_fail "$tool is not installed (make deps: nfs-kernel-server, nfs-common, e2fsprogs)"
done
for pass in ${NFS_PASSES:-plain lossy}; do
    case $pass in
    plain) props='' big=${NFS_BIG_MB:-32} small=${NFS_SMALL:-200} ;;
    lossy) props=$VMTEST_LOSSY,fault-seed=5 big=${NFS_BIG_MB:-16} small=${NFS_SMALL:-100} ;;
    *) vmtest_fail "unknown pass '$pass' (plain, lossy)" ;;
    esac
    vmtest_pass "$pass" "$props"
    RSIM_PROPS=$props vmtest_pair rsim rsim -t 600 -s tests/vm/guest/nfs-rdma.sh \
        -e "NFS_BIG_MB=$big" -e "NFS_SMALL=$small"
    vmtest_pass_done
done
vmtest_passes_done
