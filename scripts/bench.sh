#!/bin/bash
# make bench: rdma-sim against Linux Soft-RoCE, in identical pairs of TCG
# guests on a host UDP link, in the same run: once with the default Ethernet
# MTU (1500, RoCE path MTU 1024) and once with jumbo frames (9000, path MTU
# 4096).  Also measures what the host's UDP stack carries over loopback at
# the size of rdma-sim's frames (the ceiling for any VM-to-VM link here).
#
# Soft-RoCE runs where a user would run it: on Debian's own QEMU package
# (qemu-system-x86, BENCH_DEBIAN_QEMU), not on our build.  Soft-RoCE also
# runs on our build, in the same run: that A/B shows whether our QEMU's
# changes outside the device (patches/qemu) make virtio-net faster or slower.
# rdma-sim also runs on QEMU without those changes (make qemu-plain,
# PLAIN_QEMU_BINARY): how much of its speed they give.
#
# Parts (BENCH_PARTS, default "perftest generations sweep hops nvme
# cluster"):
#  perftest  bandwidth and latency tests; each pair runs BENCH_RUNS times
#            (default 3), the stacks in turn: two cores shared by four busy
#            threads make single runs vary by a third or more, so the table
#            gives the median and the range of the runs.
#  generations  the same tests between rdma-sim guests on each generation
#            of configs/generations, oldest, middle and default (the
#            newest): its own QEMU build (build/qemu-VERSION-build) with its
#            own guest kernel (GUEST_ABI=its series) and the driver built
#            for it; BENCH_RUNS times at each MTU, in the same rounds as
#            perftest's stacks, so that the machine's drift hits all alike.
#            The table, newest against oldest, is how the default is chosen.
#            A generation whose QEMU is not built is skipped (make qemu-all
#            builds them all).
#  sweep     ib_write_bw and ib_write_lat from 2 B to 1 MiB, once per stack
#            and MTU: the plot.
#  hops      ib_send_lat and ib_write_lat at 2 B between rdma-sim guests
#            with the device's trace events on: where the time goes, hop by
#            hop (the doorbell, the wire, delivery, the guest's reply).
#  nvme      NVMe over RDMA (tests/vm/guest/nvme-rdma.sh with NVME_BENCH=1):
#            an nvmet-rdma target on a ramdisk (guest A) and an nvme-rdma
#            host (guest B), each guest with 2 vCPUs, fio on the host: 4 KiB
#            random reads at QD 32 (IOPS) and QD 1 (completion latency p50
#            and p99), 1 MiB sequential reads at QD 16 (MB/s), 1 MiB
#            sequential writes at QD 1 and QD 32 (MiB/s, mean completion
#            latency).  A write is the target's RDMA READ of the host's
#            memory, so the host's NIC answers READs: issue 31's case.
#            Stacks: Soft-RoCE on Debian's QEMU and on ours, rdma-sim, and
#            the mixed pairs on our build: Soft-RoCE target with rdma-sim
#            host, rdma-sim target with Soft-RoCE host.
#  cluster   rdma-sim guests all-to-all: for each
#            count of BENCH_GUESTS (default "2 4 8"; 512 MiB a guest), every
#            pair at once runs ib_write_bw of 64 KiB for
#            BENCH_CLUSTER_SECONDS (default 10): the aggregate bandwidth is
#            the sum of the pairs'; then ib_write_lat of 2 B, every pair at
#            once, then one pair at a time (the others idle): the per-pair
#            latency under load and alone. Then ib_write_bw of 64 KiB with 1 to
#            256 QPs between two guests. The guests' switch is a Linux bridge
#            as root (--link bridge), else the multicast hub, which sends
#            every frame to every guest.
#
# Output, by scripts/bench-report.py: build/bench/bench-DATE.md (the tables,
# printed too), .json (every run's figures) and .png (the sweep's plot,
# with gnuplot), copied to bench-latest.*; the raw outputs stay in
# build/bench/raw-DATE/.
#
# Settings: BENCH_ITERS (bandwidth iterations, default 2000), LAT_ITERS
# (default 2000), BENCH_MTUS (default "1500 9000"), BENCH_RUNS (default 3),
# NVME_BENCH_SECONDS (per fio job, default 20), BENCH_GUESTS and
# BENCH_CLUSTER_SECONDS (the cluster part).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/vm/vmtest.sh
vmtest_init bench

iters=${BENCH_ITERS:-2000}
lat=${LAT_ITERS:-2000}
all_mtus=${BENCH_MTUS:-1500 9000}
runs=${BENCH_RUNS:-3}
parts=" ${BENCH_PARTS:-perftest generations sweep hops nvme cluster} "
debian_qemu=${BENCH_DEBIAN_QEMU:-/usr/bin/qemu-system-x86_64}
# make qemu-plain builds it for the default QEMU (configs/generations,
# sourced here: make exports PLAIN_QEMU_BINARY, a direct run has neither)
# shellcheck source=configs/generations
. configs/generations
plain_qemu=${PLAIN_QEMU_BINARY:-build/qemu-plain-$GEN_DEFAULT_QEMU-build/qemu-system-x86_64}
rsim_stacks="rsim rsim-plain"
if [[ ! -x $plain_qemu ]]; then
    echo "bench: $plain_qemu not found, so no rdma-sim on QEMU without our patches: make qemu-plain (make bench builds it)" >&2
    rsim_stacks=rsim
fi
# rdma-sim out of process (rdma-sim-server, guest memory shared) on the
# same QEMU as rsim: our build has the vfio-user client from QEMU 10.1 on
# (perftest's stacks only: its trace events are the server's, not QEMU's)
oop_stack=''
if "${QEMU:-build/qemu-$GEN_DEFAULT_QEMU-build/qemu-system-x86_64}" -device vfio-user-pci,help >/dev/null 2>&1 &&
    scripts/build-server.sh >/dev/null; then
    oop_stack=rsim-server
else
    echo "bench: no rdma-sim out of process (our QEMU has no vfio-user-pci, or make server failed)" >&2
fi
[[ -x $debian_qemu ]] ||
    vmtest_fail "$debian_qemu not found: Soft-RoCE runs on Debian's QEMU; install qemu-system-x86 (make deps) or set BENCH_DEBIAN_QEMU"
[[ $runs =~ ^[1-9][0-9]*$ ]] || vmtest_fail "BENCH_RUNS must be a positive number of runs, not '$runs'"
cmds="ib_write_bw -s 65536 -n $iters
ib_write_bw -s 1048576 -n $((iters / 8))
ib_send_bw -s 65536 -n $iters
ib_read_bw -s 65536 -n $iters
ib_write_lat -s 2 -n $lat
ib_send_lat -s 2 -n $lat"
# The sweep: ib_write_bw and ib_write_lat from 2 B to 1 MiB, once per stack
# and MTU, each size moving about 32 MiB (bandwidth) or 4 MiB (latency)
# within the iteration counts' bounds.
sweep_cmds=''
for size in 2 8 32 128 512 2048 8192 32768 131072 524288 1048576; do
    n=$(((32 << 20) / size)) l=$(((4 << 20) / size))
    ((n <= iters)) || n=$iters
    ((n >= 64)) || n=64
    ((l <= lat)) || l=$lat
    ((l >= 20)) || l=20
    sweep_cmds+="ib_write_bw -s $size -n $n"$'\n'"ib_write_lat -s $size -n $l"$'\n'
done

# The raw outputs of this run: PART/STACK/[mtuM/]runN/ per pair run, read by
# scripts/bench-report.py (the tables, JSON of every run, the plot).
stamp=$(date +%Y%m%d-%H%M%S)
raw=build/bench/raw-$stamp
mkdir -p "$raw"

# The generations part: a stack per generation of configs/generations,
# named qemuQ-linuxK (its QEMU and kernel series), oldest first.  Each has
# its QEMU build, its guest kernel's ABI and the driver built for it;
# gen_info is what generations/KEY/mtuM/runN/generation.txt records.  A
# generation whose QEMU is not built is skipped, in
# generations/skipped-KEY.txt.
gen_keys=''
declare -A gen_qemu=() gen_qver=() gen_abi=() gen_info=()
if [[ $parts == *" generations "* ]]; then
    for role in oldest middle default; do
        qv=GEN_${role^^}_QEMU kv=GEN_${role^^}_KERNEL
        q=${!qv} k=${!kv}
        key=qemu$q-linux$k bin=build/qemu-$q-build/qemu-system-x86_64
        if [[ ! -x $bin ]]; then
            echo "bench: generations: QEMU $q with Linux $k ($role) skipped: $bin is not built; make QEMU_VERSION=$q builds it (make qemu-all: every generation)" >&2
            mkdir -p "$raw/generations"
            printf 'role=%s\nqemu=%s\nlinux=%s\nmake=make QEMU_VERSION=%s\n' "$role" "$q" "$k" "$q" \
                >"$raw/generations/skipped-$key.txt"
            continue
        fi
        qver=$(scripts/vm/vm qemu-version "$bin") ||
            vmtest_fail "cannot tell the version of $bin (scripts/vm/vm qemu-version $bin)"
        [[ $qver == "$q".* ]] || vmtest_fail "$bin is QEMU '$qver', not $q.x: make QEMU_VERSION=$q"
        abi=$(GUEST_ABI=$k scripts/vm/vm abi) ||
            vmtest_fail "cannot tell the Linux $k ABI (GUEST_ABI=$k scripts/vm/vm abi)"
        make -s -C guest-driver GUEST_ABI="$abi" >/dev/null ||
            vmtest_fail "building rdma_sim.ko for Linux $abi failed (make -C guest-driver GUEST_ABI=$abi)"
        # the kernel fetched and the initramfs built now, not in a pair's time
        GUEST_ABI=$abi scripts/vm/vm build-initramfs >/dev/null ||
            vmtest_fail "building the initramfs of Linux $abi failed (GUEST_ABI=$abi scripts/vm/vm build-initramfs)"
        gen_keys+=" $key" gen_qemu[$key]=$bin gen_qver[$key]=$qver gen_abi[$key]=$abi
        gen_info[$key]="role=$role"$'\n'"qemu=$q"$'\n'"linux=$k"$'\n'"qemu_version=$qver"$'\n'"abi=$abi"
        echo "bench: generations: $key: QEMU $qver ($bin), Linux $abi ($role)"
    done
fi

# keep DIR CMDS WALL: the client's outputs of the pair run just done
keep() {
    mkdir -p "$raw/$1"
    cp "${VMTEST_RESULTS[1]}"/out-*.txt "${VMTEST_RESULTS[1]}"/stats-*.txt "$raw/$1/" 2>/dev/null || true
    cp "${VMTEST_RESULTS[1]}"/bench-*.json "$raw/$1/" 2>/dev/null || true
    printf '%s\n' "$2" >"$raw/$1/cmds.txt"
    echo "$3" >"$raw/$1/wall.txt"
    rm -rf "$(dirname "$VMTEST_RUN")"
}

# pair STACK WHAT TIMEOUT SCRIPT ARGS...: one pair run; pair_wall is its
# duration in seconds (boot, setup, all tests, power off).  A generation's
# pair boots its kernel and loads the driver built for it (GUEST_ABI for
# scripts/vm/vm, VMTEST_ABI for vmtest_run's module); the others, the
# kernel vmtest_init resolved.
pair() {
    local stack=$1 what=$2 limit=$3 script=$4 t0=$SECONDS
    local abi=${gen_abi[$1]:-$VMTEST_ABI} abi_b=${gen_abi[$1]:-$VMTEST_ABI_B}
    shift 4
    echo "bench: $stack pair, $what ..."
    local -a nics
    read -r -a nics <<<"$(stack_nics "$stack")"
    QEMU=$(stack_qemu "$stack") GUEST_ABI=$abi GUEST_ABI_B=$abi_b VMTEST_ABI=$abi VMTEST_ABI_B=$abi_b \
        vmtest_pair "${nics[@]}" -t "$limit" -s "$script" "$@"
    ((VMTEST_RC == 0)) || vmtest_fail "the $stack pair ($what) failed (logs: $VMTEST_RUN)"
    pair_wall=$((SECONDS - t0))
}

# A pair's stack and QEMU: rxe-deb, Soft-RoCE on Debian's QEMU; rxe,
# Soft-RoCE on our build; rsim, rdma-sim (our build); rsim-server, rdma-sim
# out of process (our build's vfio-user client).  stack_nics KEY
# prints guest A's and guest B's NIC (vmtest_pair's rsim or rxe);
# stack_qemu KEY prints the QEMU binary (empty: the harness's default, our
# build).  rsim-plain, rdma-sim on our QEMU without patches/qemu (make
# qemu-plain); a generation's key (gen_keys), rdma-sim on that generation's
# QEMU.  The mixed stacks, for NVMe (A is the target, B the host), run on
# our build, the only QEMU with both NICs: rxe-target, Soft-RoCE target
# and rdma-sim host; rxe-host, the other way round.
stack_nics() {
    local n=${1%-deb}
    case $1 in
    rxe-target) echo rxe rsim; return ;;
    rxe-host) echo rsim rxe; return ;;
    esac
    [[ -z ${gen_qemu[$1]:-} ]] || n=rsim
    n=${n%-plain}
    echo "$n $n"
}
stack_qemu() {
    case $1 in
    *-deb) echo "$debian_qemu" ;;
    *-plain) echo "$plain_qemu" ;;
    *) echo "${gen_qemu[$1]:-}" ;;
    esac
}

# gen_check KEY DIR: both guests of the pair just done ran the kernel and
# the QEMU of generation KEY; DIR/generation.txt records them.
gen_check() {
    local key=$1 i r
    for i in 0 1; do
        r=${VMTEST_RESULTS[i]:-}
        [[ -n $r && $(cat "$r/kernel" 2>/dev/null) == "${gen_abi[$key]}" ]] ||
            vmtest_fail "the $key pair's guest $i ran Linux '$(cat "$r/kernel" 2>/dev/null)', not ${gen_abi[$key]} (logs: $VMTEST_RUN)"
        [[ $(cat "$r/qemu-version" 2>/dev/null) == "${gen_qver[$key]}" ]] ||
            vmtest_fail "the $key pair's guest $i was booted by QEMU '$(cat "$r/qemu-version" 2>/dev/null)', not ${gen_qver[$key]} (logs: $VMTEST_RUN)"
    done
    mkdir -p "$raw/$2"
    { echo "${gen_info[$key]}"; echo "machine=$(cat "$r/machine" 2>/dev/null)"; } >"$raw/$2/generation.txt"
}

# perftest's stacks and the generations, in turn in each round
pair_stacks=''
[[ $parts != *" perftest "* ]] || pair_stacks="rxe-deb rxe $rsim_stacks $oop_stack"
pair_stacks+=$gen_keys

for ((run = 1; run <= runs; run++)); do
    for mtu in $all_mtus; do
        for stack in $pair_stacks; do
            pair "$stack" "run $run of $runs, Ethernet MTU $mtu" \
                1200 tests/vm/guest/pair-cmds.sh -e GT_ETH_MTU="$mtu" -e PAIR_CMDS="$cmds"
            dir=perftest/$stack/mtu$mtu/run$run
            if [[ -n ${gen_qemu[$stack]:-} ]]; then
                dir=generations/$stack/mtu$mtu/run$run
                gen_check "$stack" "$dir"
            fi
            keep "$dir" "$cmds" "$pair_wall"
        done
    done
    [[ $parts == *" nvme "* ]] || continue
    # Soft-RoCE on our build too: the mixed stacks run there, and are
    # weighed against it.  The host's 1 MiB writes are the target's RDMA
    # READs of the host's memory, answered by the host's NIC: rxe-target
    # is issue 31's case, Soft-RoCE reading from rdma-sim.
    for stack in rxe-deb rxe rsim rxe-target rxe-host; do
        VM_SMP=2 pair "$stack" "run $run of $runs, NVMe over RDMA" \
            600 tests/vm/guest/nvme-rdma.sh \
            -e NVME_BENCH=1 -e "NVME_BENCH_SECONDS=${NVME_BENCH_SECONDS:-20}"
        [[ -n $(compgen -G "${VMTEST_RESULTS[1]}/bench-*.json") ]] ||
            vmtest_fail "no fio results from the $stack NVMe pair (logs: $VMTEST_RUN)"
        keep "nvme/$stack/run$run" '' "$pair_wall"
    done
done
if [[ $parts == *" sweep "* ]]; then
    for mtu in $all_mtus; do
        for stack in rxe-deb rsim; do
            pair "$stack" "message sizes 2 B to 1 MiB, Ethernet MTU $mtu" \
                1800 tests/vm/guest/pair-cmds.sh -e GT_ETH_MTU="$mtu" -e PAIR_CMDS="$sweep_cmds"
            keep "sweep/$stack/mtu$mtu/run1" "$sweep_cmds" "$pair_wall"
        done
    done
fi

# Clusters: all-to-all bandwidth, then latency, for each count of guests;
# each pair's output kept as cluster/LINK/nN/KIND/gI/pair-I-J.txt (the
# client, guest J, has the figures); then QPs between two guests.
if [[ $parts == *" cluster "* ]]; then
    link=mcast
    ((EUID != 0)) || link=bridge
    secs=${BENCH_CLUSTER_SECONDS:-10}
    for n in ${BENCH_GUESTS:-2 4 8}; do
        [[ $n =~ ^[2-8]$ ]] || vmtest_fail "BENCH_GUESTS: counts of guests from 2 to 8, not '$n'"
        for kind in bw lat lat-serial; do
            case $kind in
            bw) ccmd="ib_write_bw -s 65536 -D $secs" serial='' how='every pair at once' ;;
            lat) ccmd="ib_write_lat -s 2 -n $lat" serial='' how='every pair at once' ;;
            lat-serial) ccmd="ib_write_lat -s 2 -n $lat" serial=1 how='one pair at a time' ;;
            esac
            echo "bench: $n rdma-sim guests on a $link, $how: $ccmd ..."
            t0=$SECONDS
            VM_MEM=512 vmtest_run -n "$n" --nic "$(vmtest_nic rsim)" --link "$link" -t 1800 \
                -s tests/vm/guest/cluster.sh -e CLUSTER_CMD="$ccmd" -e CLUSTER_SERIAL="$serial"
            ((VMTEST_RC == 0)) || vmtest_fail "$n guests all-to-all ($ccmd) failed (logs: $VMTEST_RUN)"
            dir=$raw/cluster/$link/n$n/$kind
            for ((i = 0; i < n; i++)); do
                mkdir -p "$dir/g$i"
                cp "${VMTEST_RESULTS[i]}"/pair-*.txt "$dir/g$i/" 2>/dev/null || true
            done
            printf '%s\n' "$ccmd" >"$dir/cmds.txt"
            echo $((SECONDS - t0)) >"$dir/wall.txt"
            rm -rf "$(dirname "$VMTEST_RUN")"
        done
    done
    qp_cmds=''
    for q in 1 2 4 8 16 32 64 128 256; do
        qp_cmds+="ib_write_bw -s 65536 -q $q -D $secs"$'\n'
    done
    pair rsim "ib_write_bw with 1 to 256 QPs, Ethernet MTU 1500" \
        1800 tests/vm/guest/pair-cmds.sh -e GT_ETH_MTU=1500 -e PAIR_CMDS="$qp_cmds"
    keep "qps/rsim/mtu1500/run1" "$qp_cmds" "$pair_wall"
fi

# Where a 2-byte message's time goes: rdma-sim's doorbell, tx, rx and CQE
# trace events, stamped by both QEMUs with the host's clock
# (bench-report.py cuts each message into hops).
if [[ $parts == *" hops "* ]]; then
    hop_events=()
    for ev in doorbell tx_packet rx_packet cqe; do
        hop_events+=(-q -trace -q "enable=rdma_sim_$ev")
    done
    hop_cmds="ib_send_lat -s 2 -n $lat
ib_write_lat -s 2 -n $lat"
    for stack in $rsim_stacks; do
        pair "$stack" "2-byte latency with trace events, Ethernet MTU 1500" \
            1200 tests/vm/guest/pair-cmds.sh -e GT_ETH_MTU=1500 -e PAIR_CMDS="$hop_cmds" \
            -q -msg -q timestamp=on "${hop_events[@]}"
        mkdir -p "$raw/hops/$stack/mtu1500/run1"
        cp "$VMTEST_RUN/g0/qemu.log" "$raw/hops/$stack/mtu1500/run1/qemu-a.log"
        cp "$VMTEST_RUN/g1/qemu.log" "$raw/hops/$stack/mtu1500/run1/qemu-b.log"
        keep "hops/$stack/mtu1500/run1" "$hop_cmds" "$pair_wall"
    done
fi

# The host's own UDP over loopback, one stream, at the size of rdma-sim's
# full frame at each MTU's path MTU: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12
# + payload + ICRC 4 bytes (the RETH of a first packet aside).
if command -v iperf3 >/dev/null; then
    mkdir -p "$raw/host-udp"
    for dir in "$raw"/perftest/rsim/mtu* "$raw"/sweep/rsim/mtu*; do
        [[ -d $dir ]] || continue
        mtu=${dir##*/mtu}
        [[ -z $(compgen -G "$raw/host-udp/mtu$mtu-*") ]] || continue
        pmtu=$(sed -n 's/^ *Mtu *: *\([0-9]*\).*/\1/p' "$(compgen -G "$dir/run*/out-1.txt" | head -n1)" | head -n1)
        [[ -n $pmtu ]] || continue
        port=$((20000 + RANDOM % 20000))
        iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
        sleep 0.5
        iperf3 -c 127.0.0.1 -p "$port" -u -b 0 -l $((pmtu + 58)) -t 5 -J \
            >"$raw/host-udp/mtu$mtu-$((pmtu + 58)).json" 2>/dev/null || true
        wait || true
    done
else
    echo "bench: iperf3 not found, so no host UDP figures: install iperf3 (make deps)" >&2
fi

{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cores=$(nproc)"
    echo "abi=$(scripts/vm/vm abi)"
    echo "debian_qemu=$("$debian_qemu" --version | head -n1 | sed 's/QEMU emulator version //')"
    echo "raw=$raw"
} >"$raw/info.txt"
out=build/bench/bench-$stamp
scripts/bench-report.py "$raw" "$out"
for ext in md json png; do
    [[ ! -e $out.$ext ]] || cp "$out.$ext" "build/bench/bench-latest.$ext"
done
