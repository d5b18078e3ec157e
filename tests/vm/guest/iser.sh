#!/bin/bash
# Guest side of tests/vm/t-iser.sh: iSCSI over RDMA (iSER) between the two
# guests' rdma-sim devices.  Guest A is a LIO target set up through configfs
# (what targetcli writes): a brd ramdisk as an iblock backstore, LUN 0 of
# an iSCSI target whose portal on A's address has iSER enabled (ib_isert).
# Guest B is the initiator: open-iscsi's iscsid with ib_iser, discovery and
# login on the "iser" iface.  B runs fio with crc32c verification at 4 KiB
# and 1 MiB, queue depths 1 and 32; logs out, logs in again and verifies
# what it wrote before; logs out.  Checked: the session's transport is
# iser, and after the logout A has no session left.
#
# Environment (from the host side):
#   ISER_SCALE      MiB written by each 4 KiB job; 1 MiB jobs write 4x that
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"
# shellcheck source=tests/vm/guest/fio.sh
. "$(dirname "${BASH_SOURCE[0]}")/fio.sh"

IQN=iqn.2026-12.org.rdma-sim:iser-target
INITIATOR=iqn.2026-12.org.rdma-sim:initiator
SVC=3260
DISK_MB=256
SCALE=${ISER_SCALE:-8}
LIO=/sys/kernel/config/target

gt_rdma_setup
gt_wait_peer 60

# --- guest A: the target -------------------------------------------------------

target_setup() {
    local tpg=$LIO/iscsi/$IQN/tpgt_1 np
    modprobe brd rd_nr=1 rd_size=$((DISK_MB * 1024)) max_part=0 || gt_fail "modprobe brd failed"
    modprobe iscsi_target_mod || gt_fail "modprobe iscsi_target_mod failed"
    modprobe ib_isert || gt_fail "modprobe ib_isert failed (the kernel's iSER target)"
    mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
    [[ -d $LIO ]] || gt_fail "no $LIO after loading target_core_mod"
    mkdir -p "$LIO/core/iblock_0/ram0"
    echo udev_path=/dev/ram0 >"$LIO/core/iblock_0/ram0/control"
    echo 1 >"$LIO/core/iblock_0/ram0/enable"
    mkdir -p "$tpg/lun/lun_0"
    ln -s "$LIO/core/iblock_0/ram0" "$tpg/lun/lun_0/ram0"
    np=$tpg/np/${RSIM_IP%/*}:$SVC
    mkdir "$np"
    echo 1 >"$np/iser" || gt_fail "the portal refused iSER: $(dmesg | grep -i isert | tail -n 3 | tr '\n' ';')"
    [[ $(<"$np/iser") == 1 ]] || gt_fail "iSER is not enabled on portal ${np##*/}"
    # Any initiator, no CHAP, writable.
    echo 0 >"$tpg/attrib/authentication"
    echo 1 >"$tpg/attrib/generate_node_acls"
    echo 1 >"$tpg/attrib/cache_dynamic_acls"
    echo 0 >"$tpg/attrib/demo_mode_write_protect"
    echo 1 >"$tpg/enable"
    gt_log "target: $IQN, LUN 0 = /dev/ram0 (${DISK_MB} MiB), iSER portal ${np##*/}"
}

# logged_in: the initiator has a session (LIO lists them by initiator name).
logged_in() {
    grep -q "$INITIATOR" "$LIO/iscsi/$IQN/tpgt_1/dynamic_sessions"
}
not_logged_in() { ! logged_in; }

if [[ $RSIM_ROLE == server ]]; then
    target_setup
    gt_barrier target-ready
    gt_barrier logged-in 300
    logged_in || gt_fail "target: no session of $INITIATOR while it is logged in"
    gt_log "target: sessions: $(tr '\n' ' ' <"$LIO/iscsi/$IQN/tpgt_1/dynamic_sessions")"
    gt_barrier finished 600
    gt_retry 30 not_logged_in ||
        gt_fail "target: sessions left after the initiator logged out: $(cat "$LIO/iscsi/$IQN/tpgt_1/dynamic_sessions")"
    gt_save_counters
    gt_check_dmesg
    echo "iser: target checks passed"
    exit 0
fi

# --- guest B: the initiator ----------------------------------------------------

# iser_disk: the block device of the logged-in session's LUN 0.
iser_disk() {
    first_disk /sys/class/iscsi_session/session*/device/target*/*:0:0:0/block/*
}

login() {
    local out t0=$SECONDS bytes
    out=$(timeout 120 iscsiadm -m node -T "$IQN" -p "$RSIM_PEER:$SVC" -I iser --login 2>&1) ||
        gt_fail "iscsiadm login over iser failed: $out; $(dmesg | grep -iE 'iser|iscsi' | tail -n 6 | tr '\n' ';')"
    gt_retry 30 iser_disk >/dev/null || gt_fail "no disk for $IQN LUN 0 after login ($out)"
    DEV=$(iser_disk)
    out=$(iscsiadm -m session 2>&1)
    [[ $out == iser:* ]] || gt_fail "the session's transport is not iser: $out"
    bytes=$(blockdev --getsize64 "$DEV")
    ((bytes == DISK_MB * 1024 * 1024)) || gt_fail "$DEV has $bytes bytes, the LUN $((DISK_MB * 1024 * 1024))"
    gt_log "logged in in $((SECONDS - t0))s: $out, $DEV"
}

logout() {
    local out
    out=$(timeout 120 iscsiadm -m node -T "$IQN" -p "$RSIM_PEER:$SVC" -I iser --logout 2>&1) ||
        gt_fail "iscsiadm logout failed: $out"
    gt_retry 30 sh -c '! iscsiadm -m session >/dev/null 2>&1' ||
        gt_fail "sessions left after logout: $(iscsiadm -m session 2>&1)"
    gt_log "logged out"
}

modprobe ib_iser || gt_fail "modprobe ib_iser failed (the kernel's iSER initiator)"
modprobe sd_mod || gt_fail "modprobe sd_mod failed" # no udev here to load it for the LUN
mkdir -p /etc/iscsi /run/lock/iscsi /var/lib/iscsi
echo "InitiatorName=$INITIATOR" >/etc/iscsi/initiatorname.iscsi
iscsid || gt_fail "iscsid did not start"
gt_barrier target-ready
# SendTargets discovery over iSER, with iscsiadm's debug messages (-d 4):
# they say which step failed (connection, login, text exchange).
#
# open-iscsi 2.1.8 (and its master of 2026) loses the SendTargets reply
# when it arrives before the kernel's answer to the send of the request:
# __kipc_call (usr/netlink.c) takes the RECV_PDU event off the netlink
# socket while it waits for SEND_PDU's reply and parks it, and the
# discovery loop (usr/discovery.c) then polls that socket for a reply that
# already came, until its active_timeout (30 s); reconnecting in the same
# process after that can crash it. Over RDMA the target answers fast enough
# for this to happen now and then (about 1 in 30 runs here). The debug log
# shows it as "expecting event 19, got 101" (ISCSI_UEVENT_SEND_PDU,
# ISCSI_KEVENT_RECV_PDU). So the discovery record has a 10 s timeout and no
# reconnect in the process, and a discovery that failed that way, and only
# that way, is run again by a new iscsiadm, up to 3 times; the log says so.
disc=(iscsiadm -m discoverydb -t sendtargets -p "$RSIM_PEER:$SVC" -I iser)
"${disc[@]}" -o new >/dev/null || gt_fail "iscsiadm could not create the discovery record"
for setting in reopen_max=0 timeo.active_timeout=10; do
    "${disc[@]}" -o update -n "discovery.sendtargets.${setting%=*}" -v "${setting#*=}" ||
        gt_fail "iscsiadm could not set discovery.sendtargets.$setting"
done
for attempt in 1 2 3; do
    log=$RSIM_RESULTS/iscsiadm-discovery.$attempt.log
    timeout 120 "${disc[@]}" -d 4 --discover >"$log" 2>&1 && break
    why="$(grep -iE 'timed out|fail|error|giving up|exceeded|terminat|hangup' "$log" |
        tail -n 4 | tr '\n' ';' || true) $(dmesg | grep -iE 'iser|iscsi' | tail -n 4 | tr '\n' ';' || true)"
    if ! grep -q 'expecting event 19, got 101' "$log" || ((attempt == 3)); then
        gt_fail "iSER discovery failed (attempt $attempt): $why (iscsiadm's log: results/${log##*/})"
    fi
    gt_log "discovery attempt $attempt lost the SendTargets reply to open-iscsi's race (RECV_PDU before SEND_PDU's answer; see iser.sh): $why; running it again"
done
out=$(grep -v '^iscsiadm: ' "$log" || true)
[[ $out == *"$IQN"* ]] || gt_fail "discovery over iSER did not find $IQN: $out"
gt_log "discovery over iSER: $out"
login
gt_barrier logged-in
fio_matrix "$SCALE"
# Log out and in: what was written before is still there.
logout
login
fio_reverify "$SCALE"
logout
gt_save_counters
gt_barrier finished
gt_check_dmesg
echo "iser: initiator checks passed"
