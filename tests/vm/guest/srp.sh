#!/bin/bash
# Guest side of tests/vm/t-srp.sh: SCSI RDMA Protocol (SRP) between the two
# guests' rdma-sim devices, logging in through the RDMA/CM as blktests'
# srp group does over Soft-RoCE.  Guest A is a LIO SRP target set up through
# configfs (no targetcli): a brd ramdisk as an iblock backstore, LUN 0 of
# the ib_srpt target port named after A's port GUID, ACLs (see
# target_setup for why two), and ib_srpt's RDMA/CM listener on port
# SRP_PORT (srpt/discovery_auth/rdma_cm_port).  Guest B is the initiator
# (ib_srp): it writes a target description (id_ext and ioc_guid = A's
# srpt_service_guid, which A hands over on TCP port XCHG_PORT;
# dest=A:SRP_PORT) to /sys/class/infiniband_srp/srp-DEV-1/add_target and
# gets a SCSI host whose LUN 0 is an sd disk.  B runs fio with crc32c
# verification at 4 KiB and 1 MiB, queue depths 1 and 32; logs out
# (deletes the SRP remote port: the SCSI host goes away), logs in again and
# verifies what it wrote before; logs out.  Checked: the SCSI host is
# ib_srp's on rdma-sim's device, the disk is LIO's with the ramdisk's size,
# A has an RDMA/CM connection of ib_srpt from B while B is logged in and
# none after each logout, LIO counted at least the MiB fio wrote and read
# on the LUN of one ACL (whose name goes to session-acl.txt), and no oops,
# WARN, BUG or hung task in either guest.
#
# Environment (from the host side):
#   SRP_SCALE       MiB written by each 4 KiB job; 1 MiB jobs write 4x that
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"
# shellcheck source=tests/vm/guest/fio.sh
. "$(dirname "${BASH_SOURCE[0]}")/fio.sh"

SRP_PORT=5555  # ib_srpt's RDMA/CM port (blktests' srp_rdma_cm_port)
XCHG_PORT=7471 # A tells B its srpt_service_guid here
DISK_MB=256
SCALE=${SRP_SCALE:-8}
LIO=/sys/kernel/config/target
SRPT=$LIO/srpt

gt_rdma_setup
gt_wait_peer 60

# srp_log N: the last N kernel messages of SRP, for error messages (one line).
srp_log() {
    dmesg | grep -E 'ib_srp|rdma_sim|RDMA/CM' | tail -n "$1" | tr '\n' ';'
}

# srpt_connections: A's RDMA/CM IDs of ib_srpt connected to B (one a line).
srpt_connections() {
    rdma res show cm_id 2>/dev/null | grep 'comm \[ib_srpt\]' | grep -F "dst-addr $RSIM_PEER:" || true
}
logged_in() { [[ -n $(srpt_connections) ]]; }
not_logged_in() { [[ -z $(srpt_connections) ]]; }

# --- guest A: the target -------------------------------------------------------

target_setup() {
    local gid0 tport acl
    modprobe brd rd_nr=1 rd_size=$((DISK_MB * 1024)) max_part=0 || gt_fail "modprobe brd failed"
    [[ -b /dev/ram0 ]] || gt_fail "brd made no /dev/ram0"
    modprobe -a target_core_mod target_core_iblock || gt_fail "modprobe target_core_mod target_core_iblock failed"
    # As blktests: SRP_CMD IUs of up to 8 KiB of immediate data plus the
    # header (ib_srp asks for immediate data by default).
    modprobe ib_srpt srp_max_req_size=8260 || gt_fail "modprobe ib_srpt failed (the kernel's SRP target)"
    mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
    [[ -d $LIO ]] || gt_fail "no $LIO after loading target_core_mod"
    mkdir -p "$LIO/core/iblock_0/ram0"
    echo udev_path=/dev/ram0 >"$LIO/core/iblock_0/ram0/control"
    echo 1 >"$LIO/core/iblock_0/ram0/enable"
    mkdir -p "$SRPT" || gt_fail "cannot create $SRPT (LIO does not know ib_srpt's fabric)"
    # The RDMA/CM listener (a configfs attribute: Linux 6.1 and 6.12's
    # ib_srpt have no rdma_cm_port module parameter).
    [[ -f $SRPT/discovery_auth/rdma_cm_port ]] || gt_fail "ib_srpt has no $SRPT/discovery_auth/rdma_cm_port"
    echo "$SRP_PORT" >"$SRPT/discovery_auth/rdma_cm_port" ||
        gt_fail "ib_srpt cannot listen on RDMA/CM port $SRP_PORT: $(srp_log 3)"
    [[ $(<"$SRPT/discovery_auth/rdma_cm_port") == "$SRP_PORT" ]] ||
        gt_fail "rdma_cm_port is $(<"$SRPT/discovery_auth/rdma_cm_port"), not $SRP_PORT"
    # ib_srpt names a port by the interface ID of its GID 0 (the port GUID,
    # xxxx:xxxx:xxxx:xxxx) or by the whole GID (0x + 32 hex digits).  With
    # the GUID name, an RDMA/CM login's initiator name is an IP address.
    gid0=$(<"/sys/class/infiniband/$GT_DEV/ports/1/gids/0")
    [[ $gid0 == fe80:0000:0000:0000:* ]] || gt_fail "GID 0 of $GT_DEV/1 is $gid0, not a link-local one"
    tport=${gid0#fe80:0000:0000:0000:}
    mkdir "$SRPT/$tport" || gt_fail "ib_srpt has no port $tport (GID 0 $gid0 of $GT_DEV)"
    TPG=$SRPT/$tport/$tport
    mkdir "$TPG" || gt_fail "cannot create the TPG of ib_srpt port $tport"
    mkdir "$TPG/lun/lun_0"
    ln -s "$LIO/core/iblock_0/ram0" "$TPG/lun/lun_0/ram0"
    # ib_srpt has no demo mode: the initiator needs an ACL.  On a port with
    # the GUID name, ib_srpt names an RDMA/CM login by the source address of
    # its RDMA/CM ID (%pIS of route.addr.src_addr), which on the passive
    # side is the address the request came to: A's own ("Rejected login for
    # initiator 10.0.0.1" with an ACL for B's address only, Linux 6.1).  So
    # ACLs for both addresses: A's, and B's in case a kernel names it by
    # the initiator's.
    for acl in "${RSIM_IP%/*}" "$RSIM_PEER"; do
        mkdir "$TPG/acls/$acl" || gt_fail "ib_srpt refused initiator name $acl: $(srp_log 2)"
        mkdir "$TPG/acls/$acl/lun_0"
        ln -s "$TPG/lun/lun_0" "$TPG/acls/$acl/lun_0/lun_0"
    done
    echo 1 >"$TPG/enable"
    [[ $(<"$TPG/enable") == 1 ]] || gt_fail "ib_srpt port $tport is not enabled"
    SERVICE_GUID=$(</sys/module/ib_srpt/parameters/srpt_service_guid)
    gt_log "target: ib_srpt port $tport, LUN 0 = /dev/ram0 (${DISK_MB} MiB), RDMA/CM port $SRP_PORT, service GUID $SERVICE_GUID"
    rdma res show cm_id 2>/dev/null | grep 'comm \[ib_srpt\]' | gt_has "state LISTEN .*:$SRP_PORT" ||
        gt_fail "ib_srpt does not listen on RDMA/CM port $SRP_PORT: $(rdma res show cm_id 2>&1 | tr '\n' ';')"
}

# acl_stats: per ACL, the SCSI commands, MiB read and MiB written through
# its LUN 0 (LIO's scsi_auth_intr statistics; they outlive sessions) in
# ACL_STATS, and in ACL_USED the ACLs the initiator's commands came through.
acl_stats() {
    local d acl n
    ACL_STATS=''
    ACL_USED=''
    for d in "$TPG"/acls/*/lun_0/statistics/scsi_auth_intr; do
        acl=${d#"$TPG"/acls/}
        acl=${acl%%/*}
        n=$(<"$d/num_cmds")
        ACL_STATS+="$acl: $n commands, $(<"$d/read_mbytes") MiB read, $(<"$d/write_mbytes") MiB written; "
        if ((n > 0)); then ACL_USED+="$acl "; fi
    done
}

# publish VALUE: serves VALUE (one line) to every TCP connection on
# XCHG_PORT, in the background (PUBLISHER is its PID).
publish() {
    python3 - "$XCHG_PORT" "$1" <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(4)
while True:
    c, _ = s.accept()
    c.sendall((sys.argv[2] + "\n").encode())
    c.close()
EOF
    PUBLISHER=$!
    gt_wait_listen "$XCHG_PORT"
}

if [[ $RSIM_ROLE == server ]]; then
    target_setup
    publish "$SERVICE_GUID"
    gt_barrier target-ready
    gt_barrier logged-in 300
    logged_in || gt_fail "target: no RDMA/CM connection of ib_srpt from $RSIM_PEER while it is logged in: $(rdma res show cm_id 2>&1 | tr '\n' ';')"
    gt_log "target: connections: $(srpt_connections | tr '\n' ';')"
    gt_barrier logged-out 600
    gt_retry 30 not_logged_in ||
        gt_fail "target: ib_srpt connections left after the initiator logged out: $(srpt_connections | tr '\n' ';')"
    gt_log "target: no connection left after the logout"
    gt_barrier target-checked
    gt_barrier logged-in-again 300
    logged_in || gt_fail "target: no RDMA/CM connection of ib_srpt from $RSIM_PEER after the second login"
    gt_barrier finished 600
    gt_retry 30 not_logged_in ||
        gt_fail "target: ib_srpt connections left after the final logout: $(srpt_connections | tr '\n' ';')"
    acl_stats
    gt_log "target: $ACL_STATS"
    [[ -n $ACL_USED ]] || gt_fail "target: no SCSI command counted on LUN 0 of any ACL: $ACL_STATS"
    [[ $ACL_USED != *' '?* ]] || gt_fail "target: commands counted on the LUN 0 of more than one ACL: $ACL_STATS"
    gt_log "target: the initiator's session was named ${ACL_USED% } (its ACL)"
    # B wrote 10 * SCALE MiB and read it back, then read 5 * SCALE again.
    d=$TPG/acls/${ACL_USED% }/lun_0/statistics/scsi_auth_intr
    (($(<"$d/write_mbytes") >= 10 * SCALE && $(<"$d/read_mbytes") >= 15 * SCALE)) ||
        gt_fail "target: LUN 0 counted less than the $((10 * SCALE)) MiB written and $((15 * SCALE)) MiB read by fio: $ACL_STATS"
    echo "${ACL_USED% }" | gt_save session-acl.txt
    kill "$PUBLISHER" 2>/dev/null || true
    dmesg | grep -iE 'srp' | gt_save dmesg-srp.txt || true
    gt_save_counters
    gt_check_dmesg
    echo "srp: target checks passed"
    exit 0
fi

# --- guest B: the initiator ----------------------------------------------------

# fetch_published: what A publishes on XCHG_PORT.
fetch_published() {
    local v
    exec 3<>"/dev/tcp/$RSIM_PEER/$XCHG_PORT" || return 1
    read -r -t 10 v <&3 || { exec 3<&-; return 1; }
    exec 3<&-
    echo "$v"
}

# srp_host: the number of the SCSI host of the SRP remote port (one login).
srp_host() {
    local p h
    for p in /sys/class/srp_remote_ports/port-*; do
        [[ -e $p ]] || continue
        h=${p##*/port-}
        echo "${h%%:*}"
        return 0
    done
    return 1
}

# srp_disk HOST: the block device of LUN 0 of SCSI host HOST.
srp_disk() {
    first_disk /sys/class/scsi_device/"$1":*:*:0/device/block/*
}

no_srp_host() {
    local h
    [[ -z $(ls /sys/class/srp_remote_ports 2>/dev/null) ]] || return 1
    for h in /sys/class/scsi_host/host*; do
        [[ ! -e $h/orig_dgid ]] || return 1 # an attribute of ib_srp's hosts
    done
}

login() {
    local t0=$SECONDS out bytes attrs a sh
    local desc="id_ext=$GUID,ioc_guid=$GUID,dest=$RSIM_PEER:$SRP_PORT"
    out=$( { echo "$desc" >"$ADD_TARGET"; } 2>&1) ||
        gt_fail "SRP login ($desc > $ADD_TARGET) failed: ${out##*: }; $(srp_log 6)"
    gt_retry 10 srp_host >/dev/null || gt_fail "no SRP remote port after the login: $(srp_log 6)"
    HOST=$(srp_host)
    sh=/sys/class/scsi_host/host$HOST
    [[ $(<"$sh/proc_name") == ib_srp ]] || gt_fail "SCSI host $HOST is $(<"$sh/proc_name")'s, not ib_srp's"
    [[ $(<"$sh/local_ib_device") == "$GT_DEV" ]] ||
        gt_fail "SCSI host $HOST is on $(<"$sh/local_ib_device"), not $GT_DEV"
    gt_retry 30 srp_disk "$HOST" >/dev/null ||
        gt_fail "SCSI host $HOST has no disk for LUN 0: $(cd /sys/class/scsi_device && echo *); $(srp_log 6)"
    DEV=$(srp_disk "$HOST")
    a=$(cat "/sys/class/scsi_device/$HOST:0:0:0/device/vendor" 2>/dev/null || true)
    [[ $a == LIO-ORG* ]] || gt_fail "LUN 0 of SCSI host $HOST is not LIO's (vendor '$a')"
    bytes=$(blockdev --getsize64 "$DEV")
    ((bytes == DISK_MB * 1024 * 1024)) || gt_fail "$DEV has $bytes bytes, the LUN $((DISK_MB * 1024 * 1024))"
    attrs=''
    for a in id_ext ioc_guid sgid local_ib_port ch_count req_lim cmd_sg_entries; do
        attrs+=" $a=$(cat "$sh/$a" 2>/dev/null || echo '?')"
    done
    gt_log "logged in in $((SECONDS - t0))s: SCSI host $HOST,$attrs, $DEV"
}

logout() {
    local p
    p=/sys/class/srp_remote_ports/port-$HOST:1
    [[ -e $p/delete ]] || gt_fail "no $p/delete: $(ls /sys/class/srp_remote_ports 2>&1)"
    echo 1 >"$p/delete" || gt_fail "writing $p/delete failed"
    gt_retry 60 no_srp_host ||
        gt_fail "SCSI host $HOST still there 60 s after deleting its SRP remote port: $(ls /sys/class/srp_remote_ports 2>&1); $(srp_log 6)"
    gt_log "logged out: SCSI host $HOST removed"
}

modprobe sd_mod || gt_fail "modprobe sd_mod failed" # no udev here to load it for the LUN
modprobe ib_srp || gt_fail "modprobe ib_srp failed (the kernel's SRP initiator)"
ADD_TARGET=/sys/class/infiniband_srp/srp-$GT_DEV-1/add_target
gt_retry 10 test -e "$ADD_TARGET" ||
    gt_fail "ib_srp made no $ADD_TARGET: $(cd /sys/class/infiniband_srp 2>/dev/null && echo *)"
gt_barrier target-ready
GUID=$(gt_retry 10 fetch_published) || gt_fail "the target's service GUID did not come on $RSIM_PEER:$XCHG_PORT"
[[ $GUID =~ ^0x[0-9a-f]{16}$ ]] || gt_fail "the target's service GUID is '$GUID', not 0x + 16 hex digits"
GUID=${GUID#0x} # ib_srp wants exactly 16 hex digits
login
gt_barrier logged-in
fio_matrix "$SCALE"
# Log out and in: what was written before is still there.
logout
gt_barrier logged-out
gt_barrier target-checked # A saw the connection go before B logs in again
login
gt_barrier logged-in-again
fio_reverify "$SCALE"
logout
dmesg | grep -iE 'srp' | gt_save dmesg-srp.txt || true
gt_save_counters
gt_barrier finished
gt_check_dmesg
echo "srp: initiator checks passed"
