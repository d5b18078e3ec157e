# Sourced by the VM tests (tests/vm/t-*.sh, scripts/demo.sh, bench.sh): builds
# what they need, runs guests through scripts/vm/vm, keeps the logs of
# failures, prints PASS/FAIL.
#
#   vmtest_init NAME [--no-build]  cd to the repository root; resolve the
#                             guests' kernel ABIs (GUEST_ABI, and guest B's
#                             GUEST_ABI_B if set: VMTEST_ABI, VMTEST_ABI_B);
#                             build rdma_sim.ko for each of them
#                             (build/driver/ABI/) and tests/vm/progs for
#                             GUEST_ABI's (make: nothing to do when they are
#                             up to date), unless --no-build (the smoke
#                             tests need neither)
#   vmtest_pair A B [ARGS..]  two guests on a host UDP link; A and B are the
#                             stacks of guest A and B: "rsim" (-device
#                             rdma-sim, driver loaded; RSIM_PROPS adds device
#                             properties) or "rxe" (virtio-net + Soft-RoCE);
#                             ARGS go to `scripts/vm/vm run`
#   vmtest_single ARGS..      one guest with rdma-sim and the driver
#   vmtest_cluster N ARGS..   N guests (3 to 8) with rdma-sim and the
#                             driver on one Ethernet segment (VM_LINK=mcast:
#                             a QEMU multicast socket group, a hub)
#   vmtest_usernet MAC ARGS.. one guest whose rdma-sim (RSIM_PROPS adds
#                             properties) has its own user-mode netdev
#                             "rsimnet" and MAC, and no host link; the driver
#                             is not loaded: the guest script loads it
#   vmtest_plain ARGS..       guests as ARGS say, without the driver
#   vmtest_ramroot_initrd OUT CONF PROG..  a "RAM-root" initramfs in OUT
#                             for a guest (--qemu-arg-a or -b -initrd OUT): it
#                             runs without 9p, so it can be live-migrated
#                             (scripts/vm/guest-ramroot-init; CONF: its
#                             /ramroot/conf; PROGs: the programs it needs)
#   vmtest_show FILE TITLE    print guest A's results file FILE, if any
#   vmtest_pass NAME [WHAT]   a test of several runs (passes): the next
#                             run and its logs go in subdirectory NAME
#   vmtest_pass_done          after a pass's run: how it ended, the device
#                             counters (vmtest_counters NAME), a failure noted
#   vmtest_passes_done        after the last pass: PASS, or FAIL naming the
#                             failed passes' logs; exits
#   vmtest_counters PASS      print the device counters each guest saved
#                             (rdma-statistic.txt); PASS "lossy": the run
#                             had fault-drop set, and a device that dropped
#                             no frame fails it (VMTEST_RC=1)
#   vmtest_done RC            print the verdict and exit
# After a run, VMTEST_RESULTS[i] is guest i's results directory (0 = A).
# VMTEST_RUNS is the directory the run goes in (it is emptied when the run
# starts; a test may put sockets there).  While the guests run, the function
# named by VMTEST_POLL, if any, is called every 0.2 s; the one named by
# VMTEST_CLEANUP, if any, when the test exits while they run (it ends what
# VMTEST_POLL started).
# shellcheck shell=bash disable=SC2034  # VMTEST_* are for the scripts that source it

vmtest_fail() { echo "FAIL: $VMTEST_NAME: $*"; exit 1; }

# The lossy tests' device properties: each device drops 2% of the RoCE
# frames it sends and delays another 2% behind later ones (a test adds its
# own fault-seed).
VMTEST_LOSSY=fault-drop=20000,fault-reorder=20000

vmtest_init() {
    VMTEST_NAME=$1
    # A module given by the user (e.g. one DKMS built) is also the one the
    # guest scripts that load the driver themselves use (GT_KO, gt_load).
    if [[ -n ${VMTEST_KO:-} ]]; then
        VMTEST_KO=$(realpath -e "$VMTEST_KO") || vmtest_fail "VMTEST_KO=$VMTEST_KO: no such file"
        VMTEST_GT_KO=$VMTEST_KO
    fi
    cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
    VMTEST_RUNS=$PWD/build/vm-runs/$VMTEST_NAME.$$
    [[ ${2:-} != --no-build ]] || return 0
    # Resolved once here (a series needs apt-cache) and handed on resolved,
    # so that the driver is built for the kernels the harness boots.
    VMTEST_ABI=$(scripts/vm/vm abi) || vmtest_fail "cannot tell the guest kernel ABI (scripts/vm/vm abi)"
    VMTEST_ABI_B=$VMTEST_ABI
    if [[ -n ${GUEST_ABI_B:-} ]]; then
        VMTEST_ABI_B=$(GUEST_ABI=$GUEST_ABI_B scripts/vm/vm abi) ||
            vmtest_fail "cannot tell guest B's kernel ABI (GUEST_ABI_B=$GUEST_ABI_B)"
    fi
    export GUEST_ABI=$VMTEST_ABI GUEST_ABI_B=$VMTEST_ABI_B
    local abi
    for abi in $(printf '%s\n' "$VMTEST_ABI" "$VMTEST_ABI_B" | sort -u); do
        make -s -C guest-driver GUEST_ABI="$abi" >/dev/null ||
            vmtest_fail "building rdma_sim.ko for Linux $abi failed (make -C guest-driver GUEST_ABI=$abi)"
    done
    make -s -C tests/vm/progs GUEST_ABI="$VMTEST_ABI" >/dev/null ||
        vmtest_fail "building tests/vm/progs failed (make -C tests/vm/progs GUEST_ABI=$VMTEST_ABI)"
}

# vmtest_ko ABI: the driver built for ABI (make -C guest-driver GUEST_ABI=ABI).
vmtest_ko() {
    echo "build/driver/$1/rdma_sim.ko"
}

vmtest_nic() {
    case $1 in
    rsim) echo "rdma-sim${RSIM_PROPS:+,$RSIM_PROPS}" ;;
    rsim-server) echo "rdma-sim-server${RSIM_PROPS:+,$RSIM_PROPS}" ;;
    rxe) echo virtio-net-pci ;;
    *) vmtest_fail "unknown stack '$1' (rsim, rsim-server or rxe)" ;;
    esac
}

# vmtest_run ARGS..: run guests, keep the results; sets VMTEST_RC.
# VMTEST_KO: the module the harness loads in the guests (default: the driver
# built for the guests' kernel, build/driver/ABI/rdma_sim.ko; "" for none);
# VMTEST_KO_B: guest B's (default: VMTEST_KO if set, else the driver built
# for guest B's kernel). A VMTEST_KO set when vmtest_init ran is also the
# guests' GT_KO, even in runs that do not load it (vmtest_plain).
vmtest_run() {
    local runs=$VMTEST_RUNS i
    local ko=${VMTEST_KO-$(vmtest_ko "${VMTEST_ABI:-}")}
    local kob=${VMTEST_KO_B-${VMTEST_KO-$(vmtest_ko "${VMTEST_ABI_B:-}")}}
    local cmd=(scripts/vm/vm run --name "$VMTEST_NAME" --keep)
    if [[ -n $ko ]]; then
        [[ -n ${VMTEST_ABI:-} || -n ${VMTEST_KO:-} ]] ||
            vmtest_fail "no driver: vmtest_init ran with --no-build and VMTEST_KO is not set"
        cmd+=(-k "$ko")
        if [[ -n $kob && $kob != "$ko" ]]; then cmd+=(--module-b "$kob"); fi
    fi
    if [[ -n ${VMTEST_GT_KO:-} ]]; then cmd+=(-e "GT_KO=$VMTEST_GT_KO"); fi
    cmd+=("$@")
    rm -rf "$runs"
    mkdir -p "$runs"
    VMTEST_RC=0
    if [[ -z ${VMTEST_POLL:-} ]]; then
        VM_RUNS_DIR=$runs "${cmd[@]}" || VMTEST_RC=$?
    else
        VM_RUNS_DIR=$runs "${cmd[@]}" &
        VMTEST_PID=$!
        # A test that fails in its VMTEST_POLL function leaves no QEMU
        # behind; the caller's own EXIT trap is back after the run.
        local caller_trap
        caller_trap=$(trap -p EXIT)
        trap 'kill "$VMTEST_PID" 2>/dev/null || true; ${VMTEST_CLEANUP:+"$VMTEST_CLEANUP"}' EXIT
        while kill -0 "$VMTEST_PID" 2>/dev/null; do
            "$VMTEST_POLL"
            sleep 0.2
        done
        wait "$VMTEST_PID" || VMTEST_RC=$?
        eval "${caller_trap:-trap - EXIT}"
    fi
    VMTEST_RUN=$(echo "$runs"/"$VMTEST_NAME".*)
    VMTEST_RESULTS=()
    for i in "$VMTEST_RUN"/g[0-9]; do
        [[ -d $i ]] && VMTEST_RESULTS[${i##*/g}]=$i/results
    done
    if [[ -n ${RDMA_SIM_LOGDIR:-} ]]; then
        mkdir -p "$RDMA_SIM_LOGDIR"
        cp -r "$VMTEST_RUN"/. "$RDMA_SIM_LOGDIR/" 2>/dev/null || true
    fi
}

vmtest_pair() {
    local a=$1 b=$2
    shift 2
    vmtest_run -n 2 --nic "$(vmtest_nic "$a")" --nic-b "$(vmtest_nic "$b")" "$@"
}

vmtest_single() {
    vmtest_run -n 1 --nic "$(vmtest_nic rsim)" "$@"
}

vmtest_cluster() {
    local n=$1
    shift
    vmtest_run -n "$n" --nic "$(vmtest_nic rsim)" --link mcast "$@"
}

vmtest_usernet() {
    local mac=$1
    shift
    vmtest_plain -n 1 --nic none -q -netdev -q user,id=rsimnet \
        -d "rdma-sim,netdev=rsimnet,mac=$mac${RSIM_PROPS:+,$RSIM_PROPS}" "$@"
}

vmtest_plain() {
    VMTEST_KO='' vmtest_run "$@"
}

# vmtest_ramroot_initrd OUT CONF PROG..: the normal initramfs of GUEST_ABI
# (busybox, the 9p modules) with a cpio appended: the kernel unpacks both,
# the second one's files win. It brings scripts/vm/guest-ramroot-init as
# /init, CONF as /ramroot/conf, the RDMA core modules and the driver
# (VMTEST_KO or build/driver/ABI/rdma_sim.ko) in load order, each PROG in
# /ramroot/bin (first in the guest's PATH: RR_CMD names it by its name) and
# the shared libraries ldd names at their host paths, plus libibverbs'
# providers that rdma_sim needs (rxe's, the ABI the driver speaks). A PROG
# without a slash is one of tests/vm/progs, else a program in PATH. The
# programs are not at their host paths: the checkout may lie anywhere, under
# /tmp too, where the guest mounts a tmpfs.  Files are copied (symlinks
# followed): /lib is usr/lib on the host, not in the initramfs.
vmtest_ramroot_initrd() {
    local out=$1 conf=$2 abi=${VMTEST_ABI:-} root tmp f lib m
    shift 2
    [[ -n $abi ]] || vmtest_fail "vmtest_ramroot_initrd: no guest ABI (vmtest_init ran with --no-build?)"
    local ko=${VMTEST_KO-$(vmtest_ko "$abi")}
    root=$PWD/build/guest/$abi/root
    scripts/vm/vm build-initramfs "$abi" >/dev/null ||
        vmtest_fail "building the initramfs for $abi failed (scripts/vm/vm build-initramfs $abi)"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/ramroot.XXXXXX")
    mkdir -p "$tmp/ramroot/modules" "$tmp/ramroot/bin" "$tmp/etc/libibverbs.d"
    install -m 0755 scripts/vm/guest-ramroot-init "$tmp/init"
    cp "$conf" "$tmp/ramroot/conf"
    : >"$tmp/ramroot/modules/load-order"
    for m in $(modprobe -d "$root" -S "$abi" --show-depends ib_uverbs | awk '$1 == "insmod" { print $2 }') "$ko"; do
        [[ -f $m ]] || vmtest_fail "module $m not found (built for $abi?)"
        # busybox insmod cannot read compressed modules (as vm_build_initramfs)
        f=$(basename "$m")
        case $m in
        *.ko) cp "$m" "$tmp/ramroot/modules/" ;;
        *.ko.xz) f=${f%.xz}; xz -dc "$m" >"$tmp/ramroot/modules/$f" ;;
        *.ko.zst) f=${f%.zst}; zstd -qdc "$m" >"$tmp/ramroot/modules/$f" ;;
        *.ko.gz) f=${f%.gz}; gzip -dc "$m" >"$tmp/ramroot/modules/$f" ;;
        *) vmtest_fail "unknown module file type: $m" ;;
        esac || vmtest_fail "cannot decompress $m"
        echo "$f" >>"$tmp/ramroot/modules/load-order"
    done
    local provider=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
    [[ -f $provider ]] || vmtest_fail "$provider missing: install ibverbs-providers"
    cp /etc/libibverbs.d/rxe.driver "$tmp/etc/libibverbs.d/"
    local path
    for f in "$@" "$provider"; do
        path=$f
        if [[ $f != */* && -x tests/vm/progs/$f ]]; then
            path=$PWD/tests/vm/progs/$f
        elif [[ $f != */* ]]; then
            path=$(command -v "$f") || { rm -rf "$tmp"; vmtest_fail "vmtest_ramroot_initrd: program $f not found"; }
        fi
        [[ $f == "$provider" ]] || cp -L "$path" "$tmp/ramroot/bin/"
        for lib in $(ldd "$path" | grep -oE '/[^ ]+'); do
            mkdir -p "$tmp$(dirname "$lib")"
            cp -L "$lib" "$tmp$lib"
        done
    done
    mkdir -p "$tmp$(dirname "$provider")"
    cp -L "$provider" "$tmp$provider"
    # ldd names libraries under /lib and /lib64, which are usr/ on the host
    # (merged /usr); the copies are where ldd says, so no links are needed.
    { cat "build/guest/$abi/initramfs.cpio" &&
        (cd "$tmp" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0); } >"$out" ||
        vmtest_fail "cannot write the RAM-root initramfs $out"
    rm -rf "$tmp"
}

vmtest_show() {
    local f=${VMTEST_RESULTS[0]:-}/$1
    [[ -f $f ]] || return 0
    echo "---- $2 ----"
    cat "$f"
    echo "----"
}

vmtest_pass() {
    : "${VMTEST_TOP_RUNS:=$VMTEST_RUNS}"
    VMTEST_TOP_LOGDIR=${VMTEST_TOP_LOGDIR-${RDMA_SIM_LOGDIR:-}}
    VMTEST_PASS=$1
    VMTEST_RUNS=$VMTEST_TOP_RUNS/$1
    if [[ -n $VMTEST_TOP_LOGDIR ]]; then RDMA_SIM_LOGDIR=$VMTEST_TOP_LOGDIR/$1; fi
    VMTEST_PASS_START=$SECONDS
    echo "== pass $1${2:+ ($2)}"
}

vmtest_pass_done() {
    echo "== pass $VMTEST_PASS: exit $VMTEST_RC after $((SECONDS - VMTEST_PASS_START))s"
    vmtest_counters "$VMTEST_PASS"
    if ((VMTEST_RC != 0)); then VMTEST_FAILED+=" $VMTEST_RUN"; fi
}

vmtest_passes_done() {
    VMTEST_RUNS=${VMTEST_TOP_RUNS:-$VMTEST_RUNS}
    if [[ -n ${VMTEST_FAILED:-} ]]; then
        echo "FAIL: $VMTEST_NAME (logs:$VMTEST_FAILED)"
        exit 1
    fi
    vmtest_done 0
}

vmtest_counters() {
    local i f
    for i in "${!VMTEST_RESULTS[@]}"; do
        f=${VMTEST_RESULTS[i]}/rdma-statistic.txt
        [[ -f $f ]] || continue
        echo "   guest $i device counters: $(grep -oE '(tx_roce_packets|rx_roce_packets|retransmits|retry_timeouts|loss_probes|seq_nak_sent|duplicate_requests|fault_dropped) [0-9]+' "$f" | tr '\n' ' ')"
        if [[ $1 == lossy ]] && ! grep -qE 'fault_dropped [1-9]' "$f"; then
            echo "FAIL: guest $i's device dropped no frame: the fault injection did not work"
            VMTEST_RC=1
        fi
    done
}

vmtest_done() {
    if (($1 == 0)); then
        rm -rf "$VMTEST_RUNS"
        echo "PASS: $VMTEST_NAME"
        exit 0
    fi
    echo "FAIL: $VMTEST_NAME${VMTEST_RUN:+ (logs: $VMTEST_RUN)}"
    exit 1
}

# (vmtest_check_pair_cmds's: a wrong result, said, and its ok set to 1)
vmtest_bad() { echo "$1: $2"; ok=1; }

# vmtest_check_pair_cmds NAME CMDS: after a run of tests/vm/guest/pair-cmds.sh
# with PAIR_CMDS=CMDS, what the programs said, on both sides:
# ibv_rc_pingpong counts 2 x size x iterations bytes on each; perftest's
# client prints one result line "size iterations peak average rate" with
# an average above zero (or 0 with its clock calibration's failure,
# below); rping's client shows COUNT pings' data.  Prints each figure; returns 1 if anything is wrong.
vmtest_check_pair_cmds() {
    local name=$1 cmds=$2 n=0 line size iters client i f bw ok=0
    local -a w letters=(A B)
    while IFS= read -r line; do
        n=$((n + 1))
        read -r -a w <<<"${line#rev }"
        size=${w[2]} iters=${w[4]}
        client=1
        [[ $line == rev\ * ]] && client=0
        case ${w[0]} in
        ibv_rc_pingpong)
            for i in 0 1; do
                f=${VMTEST_RESULTS[i]:-}/out-$n.txt
                grep -q "^$((2 * size * iters)) bytes in " "$f" 2>/dev/null ||
                    vmtest_bad "$name" "[$n] '$line': guest ${letters[i]} did not report $((2 * size * iters)) bytes moved ($f)"
            done
            ;;
        ib_*)
            # The result line comes once every iteration completed.  Its
            # bandwidth is perftest's own estimate from the CPU's cycle counter:
            # when perftest cannot calibrate that clock (a TCG guest on busy
            # cores; "Correlation coefficient r^2: ... < 0.9") it prints 0, and
            # the completed run is all there is to check.
            f=${VMTEST_RESULTS[client]:-}/out-$n.txt
            # (a latency test's line: size, iterations, t_min, t_max, t_typical...)
            bw=$(awk -v s="$size" -v n="$iters" '$1 == s && $2 == n && NF >= 5 { print $4 }' "$f" 2>/dev/null)
            if [[ -z $bw ]]; then
                vmtest_bad "$name" "[$n] '$line': no result line for $iters iterations of $size bytes from the client ($f)"
            elif awk -v b="$bw" 'BEGIN { exit !(b > 0) }'; then
                if [[ ${w[0]} == *_lat ]]; then
                    echo "$name: [$n] $line: typical $(awk -v s="$size" '$1 == s && NF >= 5 { print $5 }' "$f") us"
                else
                    echo "$name: [$n] $line: $bw MB/s"
                fi
            elif grep -q '^Correlation coefficient r^2: .* < 0\.9' "$f"; then
                echo "$name: [$n] $line: completed; no bandwidth figure (perftest could not calibrate the guest's clock)"
            else
                vmtest_bad "$name" "[$n] '$line': the client's result line has a bandwidth of $bw ($f)"
            fi
            ;;
        rping)
            # "rping -C COUNT -v ...": the client shows each ping's data
            # (with -V it exits non-zero on a mismatch, which the guest fails)
            iters=${w[2]}
            f=${VMTEST_RESULTS[client]:-}/out-$n.txt
            i=$(grep -c 'ping data: rdma-ping-' "$f" 2>/dev/null) || true
            if [[ ${w[1]} != -C || $line != *" -v"* ]]; then
                vmtest_bad "$name" "[$n] '$line': an rping line is 'rping -C COUNT -v ...'"
            elif [[ $i != "$iters" ]]; then
                vmtest_bad "$name" "[$n] '$line': the client showed ${i:-no} pings' data, not $iters ($f)"
            else
                echo "$name: [$n] $line: $iters pings, data shown by the client"
            fi
            ;;
        esac
    done <<<"$cmds"
    return $ok
}
