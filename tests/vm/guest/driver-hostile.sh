#!/bin/bash
# Guest side of tests/vm/t-driver-hostile.sh: rdma-sim functions that damage
# a share of what they tell the driver (HOSTILE_DEVICES="BDF=PPM ...";
# PPM 0 is a well-behaved function).
#   1. insmod binds each function or refuses it cleanly, in bounded time;
#   2. on each bound function, with time limits: verbs-test (every verb:
#      admin commands, completion and async events) and ibv_rc_pingpong
#      with completion events (looped back inside the device); then the
#      kernel verbs test on all of them (kernel CQs, drain); the
#      well-behaved function passes them all;
#   3. the driver reported what it refused, rate-limited;
#   4. rmmod works; after a reload the well-behaved function passes
#      verbs-test again; rmmod again;
# and the kernel log has no oops, WARN, BUG or lockup.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

read -r -a FUNCS <<<"$HOSTILE_DEVICES"
KVERBS=$RSIM_REPO/build/progs/$(uname -r)/kverbs_test.ko
# More lines than this from the driver: its reports are not rate-limited.
MAX_DRIVER_LINES=2000

report() {
    gt_log "$*"
    echo "$*" >>"$RSIM_RESULTS/driver-hostile.txt"
}

# ibdev_of BDF, netdev_of BDF: the RDMA and net device of a bound function.
ibdev_of() {
    local d=(/sys/bus/pci/devices/"$1"/infiniband/*)
    [[ -e ${d[0]} ]] && echo "${d[0]##*/}"
}
netdev_of() {
    local d=(/sys/bus/pci/devices/"$1"/net/*)
    [[ -e ${d[0]} ]] && echo "${d[0]##*/}"
}
port_active() { rdma link show "$1/1" 2>/dev/null | gt_has 'state ACTIVE '; }
listening() { ss -Hltn "sport = :$1" | gt_has .; }

load() {
    local t0=$SECONDS
    modprobe -a ib_core ib_uverbs rdma_ucm || gt_fail "modprobe of the RDMA core failed"
    timeout 120 insmod "$GT_KO" ||
        gt_fail "insmod rdma_sim failed or took over 120s: $(dmesg | tail -n 5 | tr '\n' ';')"
    gt_log "insmod took $((SECONDS - t0))s"
}

# traffic N BDF SECONDS: verbs-test and ibv_rc_pingpong on function N
# (address 10.0.N.1), each within SECONDS (a process waiting for an event
# the device damaged waits for ever); returns 1 if any of them failed.
traffic() {
    local n=$1 bdf=$2 limit=$3 dev nd ip=10.0.$1.1 port=$((18515 + $1)) gid
    local rc=0 src=0 crc=0 spid
    dev=$(ibdev_of "$bdf") || { report "$bdf: not bound"; return 1; }
    nd=$(netdev_of "$bdf") || { report "$bdf ($dev): no net_device"; return 1; }
    ip link set "$nd" up
    ip addr add "$ip/24" dev "$nd"
    gt_retry 20 port_active "$dev" || { report "$bdf ($dev): port not ACTIVE"; return 1; }
    gid=$(gt_retry 10 gt_gid_index "$dev" "$ip") || { report "$bdf ($dev): no GID for $ip"; return 1; }

    timeout -k 5 "$limit" "$GT_VERBS_TEST" -d "$dev" check >"/tmp/verbs-$n.out" 2>&1 || rc=$?
    report "$bdf ($dev): verbs-test exit $rc: $(tail -n 1 "/tmp/verbs-$n.out")"

    timeout -k 5 "$limit" ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -n 200 -e \
        >"/tmp/pp-server-$n.out" 2>&1 &
    spid=$!
    if gt_retry 20 listening "$port"; then
        timeout -k 5 "$limit" ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -n 200 -e "$ip" \
            >"/tmp/pp-client-$n.out" 2>&1 || crc=$?
    else
        crc=255
    fi
    wait "$spid" || src=$?
    report "$bdf ($dev): ibv_rc_pingpong exit $src/$crc: $(tail -n 1 "/tmp/pp-client-$n.out" 2>/dev/null)"
    ((rc == 0 && src == 0 && crc == 0))
}

# driver_lines BDF: the driver's messages about the function (they name
# it, and its RDMA device once there is one).
driver_lines() {
    dmesg | grep -E "rdma_sim $1[: ]" || true
}

gt_log "--- load: $HOSTILE_DEVICES"
load
for f in "${FUNCS[@]}"; do
    bdf=${f%=*}
    if dev=$(ibdev_of "$bdf"); then
        report "$bdf (fault-driver=${f#*=}): bound as $dev"
    else
        report "$bdf (fault-driver=${f#*=}): refused: $(dmesg | grep "rdma_sim $bdf: " | tail -n 1)"
    fi
done

gt_log "--- traffic, the damaging functions first"
good=''
for i in "${!FUNCS[@]}"; do
    f=${FUNCS[i]}
    if [[ ${f#*=} == 0 ]]; then
        good=$i
        continue
    fi
    traffic "$i" "${f%=*}" 30 || true
done
[[ -n $good ]] || gt_fail "no well-behaved function (fault-driver=0) in HOSTILE_DEVICES"
good_bdf=${FUNCS[good]%=*}
traffic "$good" "$good_bdf" 120 || gt_fail "traffic fails on the well-behaved function $good_bdf"

gt_log "--- kernel verbs on every function"
rc=0
timeout -k 5 180 insmod "$KVERBS" || rc=$?
((rc != 124 && rc != 137)) || gt_fail "the kernel verbs test did not finish within 180s"
dmesg | grep 'kverbs_test' | gt_save kverbs_test.txt
good_dev=$(ibdev_of "$good_bdf")
# the well-behaved function's part: from "testing DEV" to the next device
bad=$(dmesg | sed -n "/kverbs_test: testing $good_dev\$/,/kverbs_test: \(testing\|[0-9]* checks\)/p" | grep 'FAIL' || true)
[[ -z $bad ]] || gt_fail "kernel verbs fail on the well-behaved function: $(head -n 3 <<<"$bad" | tr '\n' ';')"
report "kernel verbs test: insmod exit $rc, $(dmesg | grep -c 'kverbs_test: FAIL' || true) failed checks, none on $good_dev"
[[ ! -e /sys/module/kverbs_test ]] || rmmod kverbs_test

gt_log "--- what the driver refused"
for f in "${FUNCS[@]}"; do
    bdf=${f%=*}
    n=$(driver_lines "$bdf" | wc -l)
    report "$bdf (fault-driver=${f#*=}): $n driver messages; the last: $(driver_lines "$bdf" | tail -n 1)"
    if ((${f#*=} >= 100000 && n == 0)); then
        gt_fail "the driver reported nothing about $bdf, which damages ${f#*=} ppm of its entries"
    fi
done
refused='damaged|lost the completion|dropped|ignored|failing the command|unknown'
bad=$(driver_lines "$good_bdf" | grep -E "$refused" || true)
[[ -z $bad ]] || gt_fail "the driver refused what the well-behaved function said: $(head -n 3 <<<"$bad" | tr '\n' ';')"
n=$(dmesg | grep -cE 'rdma_sim |infiniband rsim' || true)
((n <= MAX_DRIVER_LINES)) || gt_fail "$n driver messages: not rate-limited"
report "driver messages in all: $n"

gt_log "--- rmmod, reload, rmmod"
gt_unload 60
load
traffic "$good" "$good_bdf" 120 || gt_fail "the well-behaved function fails after the reload"
gt_unload 60

if [[ -w /sys/kernel/debug/kmemleak ]]; then
    echo scan >/sys/kernel/debug/kmemleak
    leaks=$(cat /sys/kernel/debug/kmemleak)
    [[ -z $leaks ]] || gt_fail "kmemleak: $(head -n 5 <<<"$leaks" | tr '\n' ';')"
    report "kmemleak: nothing leaked"
else
    report "kmemleak: not in this kernel (leaks of RDMA objects show as restrack BUGs)"
fi
gt_check_dmesg
echo "driver-hostile: all checks passed"
