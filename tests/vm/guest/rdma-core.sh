#!/bin/bash
# Runs in both guests of tests/vm/t-rdma-core.sh.  Guest A runs rdma-core
# RC_VERSION (56 or 65: the wrappers of scripts/rdma-core.sh first in PATH),
# guest B the host's, Debian 12's rdma-core 44.  Each guest checks that its
# ibv_devinfo shows the device (guest A: that it loaded its own rdma-core's
# librxe, LD_DEBUG=files, and printed what 44's prints), guest A runs
# flush-probe; then both run PAIR_CMDS between them (guest/pair-cmds.sh,
# with the servers' /proc/PID/maps kept), and each checks that its servers
# ran with its own rdma-core's libibverbs and librxe and no other.
# RC_DIR, RC_VERSION (environment): what scripts/rdma-core.sh RC_VERSION
# made (build/rdma-core-RC_VERSION), and the version.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

rc_dir=${RC_DIR:?RC_DIR is not set: run tests/vm/t-rdma-core.sh}
rc_version=${RC_VERSION:?RC_VERSION is not set: run tests/vm/t-rdma-core.sh}
if [[ $RSIM_NAME == A ]]; then
    [[ -x $rc_dir/bin/ibv_devinfo ]] ||
        gt_fail "$rc_dir/bin/ibv_devinfo missing: run scripts/rdma-core.sh $rc_version on the host"
    PATH=$rc_dir/bin:$PATH
    libdir=$rc_dir/root/usr/lib/x86_64-linux-gnu
    major=$(awk '$1 == "libibverbs1" { print $2 }' "$rc_dir/versions.txt")
else
    libdir=/usr/lib/x86_64-linux-gnu
    major=$(dpkg-query -W -f '${Version}' libibverbs1)
fi
major=${major%%.*}
export PATH
# This rdma-core's librxe: its file name has the provider ABI (34 in 44 and
# 56, 65 in 65), which scripts/rdma-core.sh checked is one.
rxe=$(echo "$libdir"/libibverbs/librxe-rdmav*.so)
[[ -f $rxe ]] || gt_fail "no single librxe-rdmavN.so in $libdir/libibverbs: $rxe"

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
    init=$(grep -Eo "calling init: [^ ]*/librxe-rdmav[0-9]+\.so" "$RSIM_RESULTS/ld-devinfo.txt" || true)
    [[ $init == "calling init: $rxe" ]] ||
        gt_fail "ibv_devinfo (rdma-core $major) did not initialize $rxe but '$init' (ld-devinfo.txt)"
    ! grep -q "file=/usr/lib/x86_64-linux-gnu/libibverbs" "$RSIM_RESULTS/ld-devinfo.txt" ||
        gt_fail "ibv_devinfo (rdma-core $major) loaded a host provider: $(grep "file=/usr/lib/x86_64-linux-gnu/libibverbs" "$RSIM_RESULTS/ld-devinfo.txt" | head -n 3)"
    /usr/bin/ibv_devinfo -v -d "$GT_DEV" >"$RSIM_RESULTS/devinfo-host.txt" 2>&1 ||
        gt_fail "the host's ibv_devinfo failed: $(cat "$RSIM_RESULTS/devinfo-host.txt")"
    # What 56 and 65 print that 44 does not (ODP FLUSH and ATOMIC_WRITE,
    # completion counters, a port's effective speed, ...) rdma-sim does not
    # offer: they print the same.
    diff "$RSIM_RESULTS/devinfo-host.txt" "$out" >"$RSIM_RESULTS/devinfo-diff.txt" ||
        gt_fail "ibv_devinfo -v of rdma-core 44 (<) and $major (>) differ: $(head -c 1500 "$RSIM_RESULTS/devinfo-diff.txt")"
else
    ibv_devinfo -v -d "$GT_DEV" >"$out" 2>&1 ||
        gt_fail "ibv_devinfo (rdma-core $major) failed: $(cat "$out")"
fi
gt_devinfo_check "$out"
gt_log "ibv_devinfo -v of rdma-core $major shows $GT_DEV, port ACTIVE, GID $GT_GID ::ffff:$ip"

# Why the wrappers preload the suite's librxe: without it, libibverbs reads
# the host's /etc/libibverbs.d and looks for lib<driver>-rdmav<provider
# ABI>.so in the host's /usr/lib/x86_64-linux-gnu/libibverbs.  56 (provider
# ABI 34, as 44) takes the host's rdma-core 44 librxe there; 65 (provider
# ABI 65) finds no provider for the device at all.
if [[ $RSIM_NAME == A ]]; then
    f=$RSIM_RESULTS/devices-nopreload.txt
    LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/ld-nopreload \
        "$rc_dir/root/usr/lib64/ld-linux-x86-64.so.2" --inhibit-cache \
        --library-path "$libdir" "$rc_dir/root/usr/bin/ibv_devices" >"$f" 2>&1 ||
        gt_fail "ibv_devices of rdma-core $major without the preload failed: $(cat "$f")"
    grep -q 'node GUID' "$f" ||
        gt_fail "ibv_devices of rdma-core $major without the preload printed no list: $(cat "$f")"
    init=$(cat /tmp/ld-nopreload.* | grep -Eo "calling init: [^ ]*/librxe-rdmav[0-9]+\.so" || true)
    if [[ $rxe == */librxe-rdmav34.so ]]; then
        [[ $init == "calling init: /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so" ]] ||
            gt_fail "ibv_devices of rdma-core $major without the preload initialized '$init', not the host's librxe-rdmav34.so: $(cat "$f")"
        grep -qw "$GT_DEV" "$f" || gt_fail "ibv_devices of rdma-core $major without the preload does not list $GT_DEV: $(cat "$f")"
        gt_log "without the preload, rdma-core $major drives $GT_DEV with the host's rdma-core 44 librxe"
    else
        [[ -z $init ]] || gt_fail "ibv_devices of rdma-core $major without the preload initialized '$init': $(cat "$f")"
        ! grep -qw "$GT_DEV" "$f" || gt_fail "ibv_devices of rdma-core $major without the preload lists $GT_DEV: $(cat "$f")"
        gt_log "without the preload, rdma-core $major finds no provider for $GT_DEV: $(tr '\n' ' ' <"$f")"
    fi
fi

# flush-probe (tests/vm/progs/flush-probe.c).  FLUSH, which rxe's provider
# offers since rdma-core 45: rdma-sim does not implement it, and says so (no
# FLUSH capability); an MR with FLUSH access is refused, and a FLUSH work
# request completes with an error, which puts the QP in ERR, while the QP
# works otherwise (a WRITE through the same extended API).  The kernel's
# core refuses the MR: Linux 6.1 knows no FLUSH access bit (EINVAL), 6.2 and
# later check the device's FLUSH capability (EOPNOTSUPP; 7.3 too).
if [[ $RSIM_NAME == A ]]; then
    probe=$RSIM_REPO/tests/vm/progs/flush-probe-$rc_version
    f=$RSIM_RESULTS/flush-probe.txt
    IFS=.- read -r kmaj kmin _ <<<"$(uname -r)"
    mr_err=EOPNOTSUPP
    if ((kmaj < 6 || (kmaj == 6 && kmin < 2))); then mr_err=EINVAL; fi
    wants=('cap_flush_global: no' 'cap_flush_persistent: no'
        "reg_mr_flush_global: $mr_err" 'create_qp_with_flush: ok'
        'write_status: success' 'write_data: ok'
        'sge_list_status: send success, receive success' 'sge_list_len: 8'
        'sge_list_data: ok'
        'inline_list_status: send success, receive success'
        'flush_post: ok' 'flush_status: local QP operation error'
        'flush_wr_id: 2' 'qp_state_after: ERR')
    if ((rc_version >= 65)); then
        wants+=('inline_list_len: 8' 'inline_list_data: ok'
            'reg_mr_ex: ok' 'alloc_dmah: EOPNOTSUPP'
            'query_port_speed: EOPNOTSUPP' 'create_comp_cntr: EOPNOTSUPP')
    else
        # librxe before 65 (the fix is between 56.1 and 65.0) never adds
        # the buffers' lengths up in ibv_wr_set_inline_data_list(): the
        # WQE says 0 bytes, and rdma-sim sends what the WQE says.
        wants+=('inline_list_len: 0' 'inline_list_data: wrong')
    fi
    "$rc_dir/bin/rdma-core-$rc_version-run" "$probe" -d "$GT_DEV" -g "$GT_GID" >"$f" 2>&1 ||
        gt_fail "flush-probe-$rc_version failed: $(cat "$f")"
    for want in "${wants[@]}"; do
        grep -qx "$want" "$f" ||
            gt_fail "flush-probe-$rc_version: expected '$want': $(tr '\n' ';' <"$f")"
    done
    gt_log "flush-probe through rdma-core $rc_version: $(tr '\n' ';' <"$f")"
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
    grep -qx "$rxe" <<<"$libs" ||
        gt_fail "${m##*/}: $rxe not mapped: $libs"
    other=$(grep -Ev "^$libdir/(libibverbs/|libibverbs\.so\.1\.[0-9]+\.$major\.|librdmacm\.so\.1\.[0-9]+\.$major\.)" <<<"$libs" || true)
    [[ -z $other ]] || gt_fail "${m##*/}: also mapped: $other"
done
((n > 0)) || gt_fail "guest $RSIM_NAME was the server of no command: nothing shows what it ran with"
gt_log "the $n servers of guest $RSIM_NAME ran with rdma-core $major's libibverbs and ${rxe##*/} ($libdir)"
