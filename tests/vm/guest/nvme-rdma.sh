#!/bin/bash
# Guest side of tests/vm/t-nvme-rdma.sh and of make bench's nvme part: NVMe
# over RDMA between the two guests' RDMA devices (rdma-sim, or Soft-RoCE on
# either side or both).  Guest A is the target (nvmet-rdma: a subsystem
# whose namespace is a brd ramdisk, any host allowed, an rdma port on A's
# address, trsvcid 4420); guest B is the host (nvme-rdma).  B runs fio with
# data verification (random writes, then every block read back and its
# crc32c checked) at 4 KiB and 1 MiB, queue depths 1 and 32; disconnects,
# reconnects and verifies again what it wrote before (fio --verify_only);
# then A unlinks the subsystem from its port while B has I/O queued, and
# links it again: B's controller reconnects and the I/O completes, checked.
# The end: B disconnects (A's queues and MRs go away); or, with
# NVME_UNLOAD=1, A unloads rdma_sim under B's running I/O, then B does: B's
# controller leaves "live", keeps reconnecting until ctrl-loss-tmo (20 s)
# and fails fio's I/O with EIO; neither rmmod nor fio hangs.
#
# Environment (from the host side):
#   NVME_FORCE_MR   1: the guests booted with ib_core.force_mr=1, so that
#                   the target's rdma_rw registers an MR for every transfer;
#                   checked (A has fast-registration MRs while B is
#                   connected, and none without it)
#   NVME_SCALE      MiB written by each 4 KiB job; 1 MiB jobs write 4x that
#   NVME_OUTAGE     seconds the subsystem stays unlinked from the port
#   NVME_UNLOAD     1: end by unloading the driver under I/O (above)
#   NVME_TARGET_ARGS  nvmet-rdma module parameters (e.g. use_srq=1)
#   NVME_INLINE     the port's inline data size (param_inline_data_size)
#   NVME_CONNECT_ARGS more nvme connect options (e.g. --nr-poll-queues=1)
#   NVME_BENCH      1: instead of the checks, B runs make bench's jobs
#                   (reads: 4 KiB random QD 32 and QD 1, 1 MiB sequential
#                   QD 16; writes: 1 MiB sequential QD 1 and QD 32, which
#                   A's nvmet fetches with RDMA READs of B's memory, so B's
#                   NIC is the READ responder; NVME_BENCH_SECONDS each,
#                   default 20) and disconnects
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"
# shellcheck source=tests/vm/guest/fio.sh
. "$(dirname "${BASH_SOURCE[0]}")/fio.sh"

NQN=nqn.2026-12.org.rdma-sim:nvme-rdma-test
SVC=4420
NS_MB=256
SCALE=${NVME_SCALE:-8}
OUTAGE=${NVME_OUTAGE:-6}
FORCE_MR=${NVME_FORCE_MR:-0}
NVMET=/sys/kernel/config/nvmet

if [[ $FORCE_MR == 1 ]]; then
    grep -qw 'ib_core.force_mr=1' /proc/cmdline ||
        gt_fail "NVME_FORCE_MR=1 but the kernel command line has no ib_core.force_mr=1: $(cat /proc/cmdline)"
    [[ $(modprobe -c) == *$'\noptions ib_core force_mr=1'* ]] ||
        gt_fail "modprobe does not pass force_mr=1 to ib_core"
fi

gt_rdma_setup
gt_wait_peer 60

# rsim0's debugfs "mrs", and the number of fast-registration MRs in it.
fast_reg_file() {
    echo "/sys/kernel/debug/rdma_sim/$(basename "$(readlink -f /sys/class/infiniband/rsim0/device)")/mrs"
}
fast_reg_mrs() {
    grep -c 'kind=fast_reg' "$(fast_reg_file)" || true
}

# --- guest A: the target -------------------------------------------------------

target_link() {
    ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN" ||
        gt_fail "cannot link subsystem $NQN to port 1"
}

target_unlink() {
    rm "$NVMET/ports/1/subsystems/$NQN" || gt_fail "cannot unlink subsystem $NQN from port 1"
}

target_setup() {
    local ns
    modprobe brd rd_nr=1 rd_size=$((NS_MB * 1024)) max_part=0 || gt_fail "modprobe brd failed"
    [[ -b /dev/ram0 ]] || gt_fail "brd made no /dev/ram0"
    modprobe nvmet || gt_fail "modprobe nvmet failed"
    # shellcheck disable=SC2086 # NVME_TARGET_ARGS: module parameters
    modprobe nvmet-rdma ${NVME_TARGET_ARGS:-} || gt_fail "modprobe nvmet-rdma ${NVME_TARGET_ARGS:-} failed"
    mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
    [[ -d $NVMET ]] || gt_fail "no $NVMET after loading nvmet"
    mkdir "$NVMET/subsystems/$NQN"
    echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host"
    ns=$NVMET/subsystems/$NQN/namespaces/1
    mkdir "$ns"
    echo /dev/ram0 >"$ns/device_path"
    echo 1 >"$ns/enable"
    [[ $(<"$ns/enable") == 1 ]] || gt_fail "namespace 1 (/dev/ram0) not enabled"
    mkdir "$NVMET/ports/1"
    echo rdma >"$NVMET/ports/1/addr_trtype"
    echo ipv4 >"$NVMET/ports/1/addr_adrfam"
    echo "${RSIM_IP%/*}" >"$NVMET/ports/1/addr_traddr"
    echo "$SVC" >"$NVMET/ports/1/addr_trsvcid"
    if [[ -n ${NVME_INLINE:-} ]]; then
        echo "$NVME_INLINE" >"$NVMET/ports/1/param_inline_data_size"
    fi
    target_link
    gt_retry 10 sh -c "dmesg | grep -q 'enabling port 1 (${RSIM_IP%/*}:$SVC)'" ||
        gt_fail "nvmet_rdma did not enable port 1: $(dmesg | grep -i nvmet | tail -n 5 | tr '\n' ';')"
    gt_log "target: $NQN, namespace 1 = /dev/ram0 (${NS_MB} MiB), rdma port ${RSIM_IP%/*}:$SVC"
}

if [[ $RSIM_ROLE == server ]]; then
    target_setup
    gt_barrier target-ready
    gt_barrier connected 300
    if [[ $GT_DEV == rsim0 ]]; then # (Soft-RoCE has no list of its MRs)
        n=$(fast_reg_mrs)
        echo "$n" | gt_save target-fast-reg-mrs
        gt_log "target: $n fast-registration MRs while the host is connected (force_mr=$FORCE_MR)"
        if [[ $FORCE_MR == 1 ]]; then
            ((n > 0)) || gt_fail "force_mr=1 but the target's queues have no MR pool"
        else
            ((n == 0)) || gt_fail "force_mr=0 but the target has $n fast-registration MRs"
        fi
    fi
    if [[ ${NVME_BENCH:-0} == 1 ]]; then
        gt_barrier finished 600
        gt_save_counters
        echo "nvme-rdma: target served the benchmark"
        exit 0
    fi
    # B runs its fio jobs, disconnects and reconnects; then it starts I/O
    # and A takes the port away under it.
    gt_barrier io-running 600
    target_unlink
    gt_log "target: subsystem unlinked from port 1; back in ${OUTAGE}s"
    sleep "$OUTAGE"
    target_link
    gt_log "target: subsystem linked to port 1 again"
    gt_barrier port-back 400
    if [[ ${NVME_UNLOAD:-0} == 1 ]]; then
        # The target's RDMA device goes away under connected queues with
        # the host's I/O running (the host's side: below).
        gt_save_counters
        gt_barrier unload
        # (time for the host to make this address unreachable, below)
        sleep 5
        gt_unload 120
        gt_check_dmesg
        echo "nvme-rdma: target checks passed (unloaded under I/O)"
        exit 0
    fi
    gt_barrier finished 300
    # The host has disconnected: the target's queues and their MRs are gone.
    if [[ $GT_DEV == rsim0 ]]; then
        gt_retry 30 sh -c "[ \$(grep -c kind=fast_reg $(fast_reg_file)) -eq 0 ]" ||
            gt_fail "$(fast_reg_mrs) fast-registration MRs left after the host disconnected"
    fi
    gt_save_counters
    gt_check_dmesg
    echo "nvme-rdma: target checks passed"
    exit 0
fi

# ctrl_klog: the NVMe host's and target's last kernel messages, for a
# failure message (a reconnection that failed says why only there).
ctrl_klog() {
    echo "kernel: $(dmesg | grep 'nvme' | grep -v 'requeuing I/O' | tail -n 10 | tr -s ' ' | tr '\n' ';')"
}

# --- guest B: the host ---------------------------------------------------------

modprobe nvme-rdma || gt_fail "modprobe nvme-rdma failed"

# nvme_dev: prints the block device of subsystem NQN's namespace 1.
nvme_dev() {
    local b
    for b in /sys/block/nvme*; do
        [[ ${b##*/} =~ ^nvme[0-9]+n1$ ]] || continue
        [[ $(cat "$b/device/subsysnqn" 2>/dev/null) == "$NQN" ]] || continue
        [[ -b /dev/${b##*/} ]] || continue
        echo "/dev/${b##*/}"
        return 0
    done
    return 1
}

# nvme_ctrl: prints the controller (nvmeN) connected to NQN.
nvme_ctrl() {
    local c
    for c in /sys/class/nvme/nvme*; do
        [[ $(cat "$c/subsysnqn" 2>/dev/null) == "$NQN" ]] || continue
        echo "${c##*/}"
        return 0
    done
    return 1
}

# ctrl_down: the controller is not (or no longer) live.
ctrl_down() {
    [[ $(cat "/sys/class/nvme/$CTRL/state" 2>/dev/null) != live ]]
}

host_connect() {
    local t0=$SECONDS out extra
    read -r -a extra <<<"${NVME_CONNECT_ARGS:-}"
    out=$(nvme connect -t rdma -a "$RSIM_PEER" -s "$SVC" -n "$NQN" \
        --reconnect-delay=1 --ctrl-loss-tmo=20 "${extra[@]}" 2>&1) ||
        gt_fail "nvme connect failed: $out; $(dmesg | grep -E 'nvme|rdma' | tail -n 8 | tr '\n' ';')"
    gt_retry 30 nvme_dev >/dev/null ||
        gt_fail "no namespace block device for $NQN after nvme connect ($out)"
    DEV=$(nvme_dev)
    CTRL=$(nvme_ctrl)
    gt_log "connected in $((SECONDS - t0))s: $CTRL ($(cat "/sys/class/nvme/$CTRL/transport") $(cat "/sys/class/nvme/$CTRL/address")), $DEV"
    [[ $(cat "/sys/class/nvme/$CTRL/transport") == rdma ]] || gt_fail "$CTRL is not an rdma controller"
    local bytes
    bytes=$(blockdev --getsize64 "$DEV")
    ((bytes == NS_MB * 1024 * 1024)) || gt_fail "$DEV has $bytes bytes, the namespace $((NS_MB * 1024 * 1024))"
}

host_disconnect() {
    local out
    out=$(timeout 60 nvme disconnect -n "$NQN" 2>&1) || gt_fail "nvme disconnect failed: $out"
    [[ $out == *"disconnected 1 controller"* ]] || gt_fail "nvme disconnect: $out"
    gt_retry 30 sh -c "! ls /sys/class/nvme/ 2>/dev/null | grep -q ." ||
        gt_fail "controllers left after nvme disconnect: $(ls /sys/class/nvme/)"
    gt_log "disconnected: $out"
}

# bench NAME FIO-ARGS..: a timed job (make bench); its JSON is kept as
# bench-NAME.json.
bench() {
    local name=$1 json=$RSIM_RESULTS/bench-$1.json
    shift
    timeout 120 fio --name="$name" --filename="$DEV" --ioengine=libaio --direct=1 \
        --time_based --runtime="${NVME_BENCH_SECONDS:-20}" --ramp_time=2 \
        --output-format=json --output="$json" "$@" ||
        gt_fail "fio $name failed: $(tail -n 3 "$json" 2>/dev/null | tr '\n' ';')"
    gt_log "bench $name done"
}

gt_barrier target-ready
host_connect
gt_barrier connected
if [[ ${NVME_BENCH:-0} == 1 ]]; then
    bench 4k-randread-qd32 --rw=randread --bs=4k --iodepth=32
    bench 4k-randread-qd1 --rw=randread --bs=4k --iodepth=1
    bench 1m-read-qd16 --rw=read --bs=1m --iodepth=16
    # Writes: the target pulls each 1 MiB with RDMA READs from this
    # guest's memory (this NIC answers them); QD 1 is one READ stream's
    # pace, QD 32 many at once.
    bench 1m-write-qd1 --rw=write --bs=1m --iodepth=1
    bench 1m-write-qd32 --rw=write --bs=1m --iodepth=32
    host_disconnect
    gt_barrier finished
    echo "nvme-rdma: benchmark done"
    exit 0
fi
fio_matrix "$SCALE"

# nvme-rdma makes one I/O queue per CPU, their CQs spread over the
# completion vectors: with more than one CPU, each vector's interrupt fired.
ncpu=$(nproc)
queues=$(dmesg | sed -n "s/.*$CTRL: creating \([0-9]*\) I\/O queues.*/\1/p" | tail -n 1)
[[ $queues == "$ncpu" ]] || gt_fail "$CTRL created '$queues' I/O queues for $ncpu CPUs"
if ((ncpu > 1)) && [[ $GT_DEV == rsim0 ]]; then
    grep rdma_sim-eq /proc/interrupts >"$RSIM_RESULTS/eq-interrupts.txt"
    while read -r irq counts; do
        ((counts > 0)) || gt_fail "completion vector IRQ $irq never fired: $(grep rdma_sim-eq /proc/interrupts | tr '\n' ';')"
        gt_log "completion vector IRQ $irq: $counts interrupts"
    done < <(awk -v n="$ncpu" '{ s = 0; for (i = 2; i <= n + 1; i++) s += $i; print $1, s }' \
        "$RSIM_RESULTS/eq-interrupts.txt")
    (($(wc -l <"$RSIM_RESULTS/eq-interrupts.txt") == ncpu)) ||
        gt_fail "$(wc -l <"$RSIM_RESULTS/eq-interrupts.txt") completion vector IRQs for $ncpu CPUs"
fi

# Disconnect and reconnect: what was written before is still there, and
# new writes verify.
host_disconnect
host_connect
fio_reverify "$SCALE"
fio_run 4k-qd32-again 4k 32 "$SCALE" 32
# The check can fail: verifying a region nothing was written to does.
if fio --name=verify-4k-32 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite \
    --bs=4k --iodepth=32 --size=1M --offset=240M --verify=crc32c --verify_only \
    --verify_fatal=1 --randrepeat=1 >/tmp/fio-unwritten.out 2>&1; then
    gt_fail "fio --verify_only passed on a region never written: $(tail -n 3 /tmp/fio-unwritten.out)"
fi
grep -q 'verify: bad magic' /tmp/fio-unwritten.out ||
    gt_fail "fio --verify_only on a region never written: $(tail -n 3 /tmp/fio-unwritten.out)"
gt_log "ok: fio --verify_only fails on a region never written"

# The target's port goes away under queued I/O and comes back: the
# controller leaves "live", reconnects, and the I/O completes.
# The writes are paced (256 a second, 8 s) so that they outlast the
# moment the port goes away: then up to 32 requests wait for the path.
json=$RSIM_RESULTS/fio-port-removal.json
fio --name=port-removal --filename="$DEV" --ioengine=libaio --direct=1 \
    --rw=randwrite --bs=4k --iodepth=32 --size=8M --offset=192M --rate_iops=256 \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=1 \
    --output-format=json --output="$json" &
fio_pid=$!
sleep 1
kill -0 "$fio_pid" 2>/dev/null || gt_fail "fio ended before the port removal: $(cat "$json")"
gt_barrier io-running
: >/tmp/states
port_t0=$SECONDS
# From here a failure says what the kernel said of the controller.
GT_FAIL_CONTEXT=ctrl_klog
# The controller's states while the port is away and until fio ends.
while kill -0 "$fio_pid" 2>/dev/null; do
    echo "$((SECONDS - port_t0)) $(cat "/sys/class/nvme/$CTRL/state" 2>/dev/null || echo gone)" >>/tmp/states
    ((SECONDS - port_t0 < 300)) || { kill "$fio_pid"; gt_fail "fio still running 300s after the port removal"; }
    sleep 0.2
done
rc=0
wait "$fio_pid" || rc=$?
gt_log "fio ended $((SECONDS - port_t0))s after the port removal (exit $rc)"
uniq -f 1 /tmp/states | gt_save controller-states.txt
gt_log "controller states: $(uniq -f 1 /tmp/states | awk '{printf "%ss %s; ", $1, $2}')"
grep -qv ' live$' /tmp/states ||
    gt_fail "$CTRL never left 'live' while the port was away: $(sort -u -k2 /tmp/states | tr '\n' ';')"
[[ $(cat "/sys/class/nvme/$CTRL/state") == live ]] ||
    gt_fail "$CTRL is $(cat "/sys/class/nvme/$CTRL/state") after the port came back"
# (grep -q would end the pipe early: with pipefail, dmesg's SIGPIPE fails it)
klog=$(dmesg)
[[ $klog == *"$CTRL: Successfully reconnected"* ]] ||
    gt_fail "no 'Successfully reconnected' for $CTRL: $(dmesg | grep "$CTRL" | tail -n 8 | tr '\n' ';')"
fio_check port-removal "$json" 8 "$rc" ""
# Some request waited out the outage (queued, then completed after the
# reconnection), and the multipath head requeued requests for want of a path.
stall=$(python3 -c 'import json, sys; t = open(sys.argv[1]).read(); j = json.loads(t[t.index("{"):])["jobs"][0]
print(max(j["write"]["clat_ns"]["max"], j["read"]["clat_ns"]["max"]) // 1000000)' "$json")
gt_log "longest fio request across the port removal: $stall ms"
((stall >= (OUTAGE - 1) * 1000)) ||
    gt_fail "no fio request waited out the ${OUTAGE}s outage (longest: $stall ms)"
[[ $klog == *'no usable path - requeuing I/O'* ]] ||
    gt_fail "the host requeued no I/O while the port was away"
gt_barrier port-back

if [[ ${NVME_UNLOAD:-0} == 1 ]]; then
    # The target's RDMA device goes away under running I/O, then the
    # host's: the controller leaves "live" (the target's queues sent a
    # disconnect) and has no queues on rsim0 when rmmod runs, so it keeps
    # trying to reconnect until ctrl-loss-tmo; then fio's I/O fails with EIO.
    gt_save_counters
    fio --name=unload --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite \
        --bs=4k --iodepth=32 --size=64M --offset=0 --time_based --runtime=300 \
        >/tmp/fio-unload.out 2>&1 &
    fio_pid=$!
    sleep 2
    kill -0 "$fio_pid" 2>/dev/null || gt_fail "fio ended before the unload: $(tail -n 5 /tmp/fio-unload.out)"
    gt_barrier unload
    # From here the target's address is unreachable, so that the host's
    # reconnection attempts fail at address resolution. Otherwise one may
    # have a connection request out to the silent target when rmmod runs,
    # and Linux (6.1 and 6.12) then deadlocks: rdma_cm, removing the
    # device, ignores the request's timeout, and nvme-rdma waits for its
    # outcome without a limit, holding the cm_id that rdma_cm waits for.
    # rmmod hung past the guest's time limit in stop 23's CI; a 2 s pause
    # before rmmod reproduces it. (The route comes after the barrier, which
    # talks to the target: the target waits 5 s before it unloads.)
    ip route add unreachable "$RSIM_PEER/32" || gt_fail "cannot add an unreachable route to $RSIM_PEER"
    t0=$SECONDS
    gt_retry 120 ctrl_down || gt_fail "$CTRL still live 120s after the target unloaded its driver"
    gt_log "$CTRL is $(cat "/sys/class/nvme/$CTRL/state") $((SECONDS - t0))s after the target's unload"
    # (With no connection request in flight, see the route above, rmmod
    # takes a second or two.)
    gt_unload 60
    t0=$SECONDS
    while kill -0 "$fio_pid" 2>/dev/null && ((SECONDS - t0 < 120)); do sleep 0.5; done
    kill -0 "$fio_pid" 2>/dev/null && gt_fail "fio still running 120s after rmmod rdma_sim"
    rc=0
    wait "$fio_pid" || rc=$?
    gt_log "fio ended $((SECONDS - t0))s after rmmod (exit $rc): $(grep -m1 -E 'error' /tmp/fio-unload.out || true)"
    ((rc != 0)) || gt_fail "fio reported no error although its device went away"
    gt_retry 30 sh -c "! ls /sys/class/nvme/ 2>/dev/null | grep -q ." ||
        gt_fail "controllers left after rmmod rdma_sim: $(ls /sys/class/nvme/)"
    dmesg | grep -E 'nvme|nvmet|rdma' | gt_save dmesg-nvme.txt || true
    gt_check_dmesg
    echo "nvme-rdma: host checks passed (force_mr=$FORCE_MR, both drivers unloaded under I/O)"
    exit 0
fi
host_disconnect
dmesg | grep -E 'nvme|nvmet|rdma' | gt_save dmesg-nvme.txt || true
gt_barrier finished
gt_save_counters
gt_check_dmesg
echo "nvme-rdma: host checks passed (force_mr=$FORCE_MR)"
