#!/bin/bash
# Runs in both guests of tests/vm/t-rdma-core-56.sh.  Guest A runs Debian
# 13's rdma-core 56 (the wrappers of scripts/rdma-core-56.sh first in PATH),
# guest B the host's, Debian 12's rdma-core 44.  Each guest checks that its
# ibv_devinfo shows the device (guest A: and that it loaded trixie's librxe,
# LD_DEBUG=files), guest A runs flush-probe; then both run PAIR_CMDS between
# them (guest/pair-cmds.sh, with the servers' /proc/PID/maps kept), and
# each checks that its servers ran with its own rdma-core's libibverbs and
# librxe and no other.
# RC56_DIR (environment): what scripts/rdma-core-56.sh made (build/rdma-core-56).
set -euo pipefail
# shellcheck source=tests/vm/guest/lib.sh
. "$RSIM_LIB"

rc56=${RC56_DIR:?RC56_DIR is not set: run tests/vm/t-rdma-core-56.sh}
if [[ $RSIM_NAME == A ]]; then
    [[ -x $rc56/bin/ibv_devinfo ]] ||
        gt_fail "$rc56/bin/ibv_devinfo missing: run scripts/rdma-core-56.sh on the host"
    PATH=$rc56/bin:$PATH
    libdir=$rc56/root/usr/lib/x86_64-linux-gnu
    major=$(awk '$1 == "libibverbs1" { print $2 }' "$rc56/versions.txt")
else
    libdir=/usr/lib/x86_64-linux-gnu
    major=$(dpkg-query -W -f '${Version}' libibverbs1)
fi
major=${major%%.*}
export PATH

gt_rdma_setup
ip=${RSIM_IP%/*}

# gt_devinfo_check FILE: FILE, the output of ibv_devinfo -v, shows the
# device with its RoCE port up and the RoCE v2 GID of this guest's address.
gt_devinfo_check() {
    local f=$1 want
    for want in "^hca_id:[[:space:]]+$GT_DEV\$" \
        '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$' \
        '^[[:space:]]+vendor_id:[[:space:]]+0x1b36$' \
        '^[[:space:]]+vendor_part_id:[[:space:]]+288$' \
        '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$' \
        '^[[:space:]]+link_layer:[[:space:]]+Ethernet$' \
        "GID\\[ *$GT_GID\\]:[[:space:]]+::ffff:${ip//./\\.}, RoCE v2\$"; do
        grep -Eq "$want" "$f" ||
            gt_fail "ibv_devinfo -v ($f) has no line matching '$want': $(head -c 1500 "$f")"
    done
}

# ibv_devinfo of this guest's rdma-core; in guest A also with the loader's
# record of the files it loaded, and the host's ibv_devinfo for comparison.
out=$RSIM_RESULTS/devinfo-$major.txt
if [[ $RSIM_NAME == A ]]; then
    LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/ld-devinfo ibv_devinfo -v -d "$GT_DEV" >"$out" 2>&1 ||
        gt_fail "ibv_devinfo (rdma-core $major) failed: $(cat "$out")"
    cat /tmp/ld-devinfo.* >"$RSIM_RESULTS/ld-devinfo.txt"
    rxe=$(grep -Eo "calling init: [^ ]*/librxe-rdmav[0-9]+\.so" "$RSIM_RESULTS/ld-devinfo.txt" || true)
    [[ $rxe == "calling init: $libdir/libibverbs/librxe-rdmav"* ]] ||
        gt_fail "ibv_devinfo (rdma-core $major) did not initialize $libdir/libibverbs/librxe-*.so but '$rxe' (ld-devinfo.txt)"
    ! grep -q "file=/usr/lib/x86_64-linux-gnu/libibverbs" "$RSIM_RESULTS/ld-devinfo.txt" ||
        gt_fail "ibv_devinfo (rdma-core $major) loaded a host provider: $(grep "file=/usr/lib/x86_64-linux-gnu/libibverbs" "$RSIM_RESULTS/ld-devinfo.txt" | head -n 3)"
    /usr/bin/ibv_devinfo -v -d "$GT_DEV" >"$RSIM_RESULTS/devinfo-host.txt" 2>&1 ||
        gt_fail "the host's ibv_devinfo failed: $(cat "$RSIM_RESULTS/devinfo-host.txt")"
    diff "$RSIM_RESULTS/devinfo-host.txt" "$out" >"$RSIM_RESULTS/devinfo-diff.txt" || true
else
    ibv_devinfo -v -d "$GT_DEV" >"$out" 2>&1 ||
        gt_fail "ibv_devinfo (rdma-core $major) failed: $(cat "$out")"
fi
gt_devinfo_check "$out"
gt_log "ibv_devinfo -v of rdma-core $major shows $GT_DEV, port ACTIVE, GID $GT_GID ::ffff:$ip"

# FLUSH, which rxe's provider offers since rdma-core 45: rdma-sim does not
# implement it, and says so (no FLUSH capability); an MR with FLUSH access
# is refused, and a FLUSH work request completes with an error, which puts
# the QP in ERR, while the QP works otherwise (a WRITE through the same
# extended API).  The kernel's core refuses the MR: Linux 6.1 knows no
# FLUSH access bit (EINVAL), 6.2 and later check the device's FLUSH
# capability (EOPNOTSUPP).
if [[ $RSIM_NAME == A ]]; then
    probe=$RSIM_REPO/tests/vm/progs/flush-probe
    f=$RSIM_RESULTS/flush-probe.txt
    IFS=.- read -r kmaj kmin _ <<<"$(uname -r)"
    mr_err=EOPNOTSUPP
    if ((kmaj < 6 || (kmaj == 6 && kmin < 2))); then mr_err=EINVAL; fi
    "$rc56/bin/rdma-core-56-run" "$probe" -d "$GT_DEV" -g "$GT_GID" >"$f" 2>&1 ||
        gt_fail "flush-probe failed: $(cat "$f")"
    for want in 'cap_flush_global: no' 'cap_flush_persistent: no' \
        "reg_mr_flush_global: $mr_err" 'create_qp_with_flush: ok' \
        'write_status: success' 'write_data: ok' 'flush_post: ok' \
        'flush_status: local QP operation error' 'flush_wr_id: 2' \
        'qp_state_after: ERR'; do
        grep -qx "$want" "$f" ||
            gt_fail "flush-probe: expected '$want': $(tr '\n' ';' <"$f")"
    done
    gt_log "FLUSH through rdma-core 56: $(tr '\n' ';' <"$f")"
fi

PAIR_MAPS=1 bash "$RSIM_REPO/tests/vm/guest/pair-cmds.sh"

# Every server this guest ran mapped its own rdma-core's libibverbs and
# librxe (and librdmacm, if any), and no libibverbs, provider or librdmacm
# from anywhere else.
n=0
for m in "$RSIM_RESULTS"/maps-*.txt; do
    [[ -f $m ]] || continue
    n=$((n + 1))
    libs=$(awk '$6 ~ /libibverbs|librxe|librdmacm/ { print $6 }' "$m" | sort -u)
    grep -Eq "^$libdir/libibverbs\.so\.1\.[0-9]+\.$major\.[0-9]+\$" <<<"$libs" ||
        gt_fail "${m##*/}: no libibverbs $major from $libdir mapped: $libs"
    grep -qx "$libdir/libibverbs/librxe-rdmav34.so" <<<"$libs" ||
        gt_fail "${m##*/}: $libdir/libibverbs/librxe-rdmav34.so not mapped: $libs"
    other=$(grep -Ev "^$libdir/(libibverbs/|libibverbs\.so\.1\.[0-9]+\.$major\.|librdmacm\.so\.1\.[0-9]+\.$major\.)" <<<"$libs" || true)
    [[ -z $other ]] || gt_fail "${m##*/}: also mapped: $other"
done
((n > 0)) || gt_fail "guest $RSIM_NAME was the server of no command: nothing shows what it ran with"
gt_log "the $n servers of guest $RSIM_NAME ran with rdma-core $major's libibverbs and librxe ($libdir)"
