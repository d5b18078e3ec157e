#!/bin/bash
# make bench: rdma-sim against Linux Soft-RoCE, in identical pairs of TCG
# guests on a host UDP link, in the same run: once with the default Ethernet
# MTU (1500, RoCE path MTU 1024) and once with jumbo frames (9000, path MTU
# 4096).  Also measures what the host's UDP stack carries over loopback (the
# ceiling for any VM-to-VM link here).  Prints a table with the ratios and
# writes it to build/bench/bench-DATE.md (and bench-latest.md).
#
# Soft-RoCE runs where a user would run it: on Debian's own QEMU package
# (qemu-system-x86, BENCH_DEBIAN_QEMU), not on our build.  Soft-RoCE also
# runs on our build, in the same run: that A/B shows whether our QEMU's
# changes outside the device (patches/qemu) make virtio-net faster or slower.
#
# Each pair runs BENCH_RUNS times (default 3), rdma-sim and Soft-RoCE in
# turn: two cores shared by four busy threads make single runs vary by a
# third or more, so the table gives the median and the range of the runs.
#
# Then NVMe over RDMA (tests/vm/guest/nvme-rdma.sh with NVME_BENCH=1): an
# nvmet-rdma target on a ramdisk and an nvme-rdma host, each guest with
# 2 vCPUs, fio on the host: 4 KiB random reads at QD 32 (IOPS) and QD 1
# (completion latency p50 and p99), 1 MiB sequential reads at QD 16 (MB/s).
#
# Settings: BENCH_PARTS (default "perftest nvme"), BENCH_ITERS (bandwidth
# iterations, default 2000), LAT_ITERS (default 2000), BENCH_MTUS (default
# "1500 9000"), BENCH_RUNS (default 3), NVME_BENCH_SECONDS (per fio job,
# default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/vm/test-lib.sh
vmtest_init bench

iters=${BENCH_ITERS:-2000}
lat=${LAT_ITERS:-2000}
mtus=${BENCH_MTUS:-1500 9000}
runs=${BENCH_RUNS:-3}
parts=" ${BENCH_PARTS:-perftest nvme} "
debian_qemu=${BENCH_DEBIAN_QEMU:-/usr/bin/qemu-system-x86_64}
[[ -x $debian_qemu ]] ||
    vmtest_fail "$debian_qemu not found: Soft-RoCE runs on Debian's QEMU; install qemu-system-x86 (make deps) or set BENCH_DEBIAN_QEMU"
[[ $parts == *" perftest "* ]] || mtus=''
[[ $runs =~ ^[1-9][0-9]*$ ]] || vmtest_fail "BENCH_RUNS must be a positive number of runs, not '$runs'"
cmds="ib_write_bw -s 65536 -n $iters
ib_write_bw -s 1048576 -n $((iters / 8))
ib_send_bw -s 65536 -n $iters
ib_read_bw -s 65536 -n $iters
ib_write_lat -s 2 -n $lat
ib_send_lat -s 2 -n $lat"
names=("ib_write_bw 64 KiB" "ib_write_bw 1 MiB" "ib_send_bw 64 KiB"
    "ib_read_bw 64 KiB" "ib_write_lat 2 B" "ib_send_lat 2 B")
ntests=${#names[@]}

# The figure perftest's client printed: BW average (MB/s), or the typical
# and average latency (us); one space-separated value per run, "?" for a
# run that printed none.
declare -A res
add_value() {
    local v
    v=$(awk -v f="$3" '{ print $f }' <<<"$2")
    res[$1]+=" ${v:-?}"
}
collect() {
    local key=$1 dir=$2 i line
    for ((i = 1; i <= ntests; i++)); do
        line=$(grep -A1 -E '^ *#bytes' "$dir/out-$i.txt" 2>/dev/null | tail -n1 || true)
        if [[ ${names[i - 1]} == *_bw* ]]; then
            add_value "$key,$i" "$line" 4
        else
            add_value "$key,$i" "$line" 5
            add_value "$key,avg$i" "$line" 6
        fi
    done
}

# ratio A B [WHAT]: rdma-sim's median B against Soft-RoCE's A: "N.Nx WHAT"
# (a throughput), or without WHAT "N.NN of the latency"; "?" if either is
# missing.
ratio() {
    awk -v a="$1" -v b="$2" -v w="${3:-}" 'BEGIN {
        if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || a + 0 <= 0) print "?"
        else if (w != "") printf "%.1fx %s", b / a, w
        else printf "%.2f of the latency", b / a }'
}

# table A B NAME-A NAME-B NAME-RATIO: the perftest rows of pairs A and B
# (res keys, e.g. rxe-deb1500), B against A.
table() {
    local a b ra rb i
    echo "| test | $3 | $4 | $5 |"
    echo "|---|---|---|---|"
    for ((i = 1; i <= ntests; i++)); do
        a=$(median "${res[$1,$i]}") b=$(median "${res[$2,$i]}")
        ra=$(spread "${res[$1,$i]}") rb=$(spread "${res[$2,$i]}")
        if [[ ${names[i - 1]} == *_bw* ]]; then
            echo "| ${names[i - 1]} | $a$ra MB/s | $b$rb MB/s | $(ratio "$a" "$b" 'the bandwidth') |"
        else
            echo "| ${names[i - 1]}: typical; average | $a$ra us; $(median "${res[$1,avg$i]}") us | $b$rb us; $(median "${res[$2,avg$i]}") us | $(ratio "$a" "$b") |"
        fi
    done
}

# The runs' values of a cell, one per line, in numeric order.
sorted_values() {
    tr ' ' '\n' <<<"$1" | awk 'NF' | sort -g
}

# The median of the runs' values ("?" when any run has none).
median() {
    sorted_values "$1" |
        awk '$1 !~ /^[0-9.]+$/ { bad = 1 } { v[NR] = $1 }
             END { if (bad || !NR) print "?"; else if (NR % 2) print v[(NR + 1) / 2];
                   else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# " (min-max)" of the runs' values; nothing for a single run or when any
# run has none.
spread() {
    ((runs > 1)) || return 0
    sorted_values "$1" |
        awk '$1 !~ /^[0-9.]+$/ { bad = 1 } NR == 1 { lo = $1 } { hi = $1 }
             END { if (!bad && NR) printf " (%s-%s)", lo, hi }'
}

# A pair's stack and QEMU: rxe-deb, Soft-RoCE on Debian's QEMU; rxe,
# Soft-RoCE on our build; rsim, rdma-sim (our build).  stack_qemu KEY
# prints the QEMU binary (empty: the harness's default, our build).
stack_nic() { echo "${1%-deb}"; }
stack_qemu() { [[ $1 != *-deb ]] || echo "$debian_qemu"; }

for ((run = 1; run <= runs; run++)); do
    for mtu in $mtus; do
        for stack in rxe-deb rxe rsim; do
            echo "bench: run $run of $runs: $stack pair, Ethernet MTU $mtu ..."
            start=$SECONDS
            QEMU=$(stack_qemu "$stack") vmtest_pair "$(stack_nic "$stack")" "$(stack_nic "$stack")" \
                -t 1200 -s tests/vm/guest/pair-cmds.sh -e GT_ETH_MTU="$mtu" -e PAIR_CMDS="$cmds"
            ((VMTEST_RC == 0)) || vmtest_fail "the $stack pair (MTU $mtu) failed (logs: $VMTEST_RUN)"
            collect "$stack$mtu" "${VMTEST_RESULTS[1]}"
            res[$stack$mtu,pmtu]=$(sed -n 's/^ *Mtu *: *\([0-9]*\).*/\1/p' "${VMTEST_RESULTS[1]}/out-1.txt" | head -n1)
            res[$stack$mtu,wall]+=" $((SECONDS - start))"
            rm -rf "$(dirname "$VMTEST_RUN")"
        done
    done
    [[ $parts == *" nvme "* ]] || continue
    for stack in rxe-deb rsim; do
        echo "bench: run $run of $runs: $stack pair, NVMe over RDMA ..."
        QEMU=$(stack_qemu "$stack") VM_SMP=2 vmtest_pair "$(stack_nic "$stack")" "$(stack_nic "$stack")" \
            -t 600 -s tests/vm/guest/nvme-rdma.sh \
            -e NVME_BENCH=1 -e "NVME_BENCH_SECONDS=${NVME_BENCH_SECONDS:-20}"
        ((VMTEST_RC == 0)) || vmtest_fail "the $stack NVMe pair failed (logs: $VMTEST_RUN)"
        # IOPS at QD 32, p50 and p99 at QD 1 (us), MB/s of the 1 MiB reads
        read -r iops p50 p99 bw < <(python3 - "${VMTEST_RESULTS[1]}" <<'EOF'
import json, sys
def job(name):
    with open(f"{sys.argv[1]}/bench-{name}.json") as f:
        t = f.read()
    return json.loads(t[t.index("{"):])["jobs"][0]["read"]
pct = job("4k-randread-qd1")["clat_ns"]["percentile"]
print(round(job("4k-randread-qd32")["iops"]), round(pct["50.000000"] / 1000),
      round(pct["99.000000"] / 1000), round(job("1m-read-qd16")["bw_bytes"] / 1e6))
EOF
        ) || vmtest_fail "no fio results from the $stack NVMe pair (logs: $VMTEST_RUN)"
        [[ -n ${bw:-} ]] || vmtest_fail "no fio results from the $stack NVMe pair (logs: $VMTEST_RUN)"
        res[nvme$stack,iops]+=" $iops" res[nvme$stack,p50]+=" $p50"
        res[nvme$stack,p99]+=" $p99" res[nvme$stack,bw]+=" $bw"
        rm -rf "$(dirname "$VMTEST_RUN")"
    done
done

# The host's own UDP over loopback, 4200-byte datagrams, one stream.
udp='?'
if command -v iperf3 >/dev/null; then
    port=$((20000 + RANDOM % 20000))
    iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
    sleep 0.5
    udp=$(iperf3 -c 127.0.0.1 -p "$port" -u -b 0 -l 4200 -t 5 -f m 2>/dev/null |
          awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print int($(i - 1) / 8) }')
    wait || true
fi

mkdir -p build/bench
out=build/bench/bench-$(date +%Y%m%d-%H%M%S).md
{
    echo "# rdma-sim vs Soft-RoCE ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "Pairs of TCG guests (1 vCPU, 1 GiB each) on $(nproc) host cores, Debian $(tests/vm/vm abi)"
    echo "kernel, host UDP link (-netdev socket,udp=), stock perftest; figures from the client."
    echo "Soft-RoCE = rdma_rxe over virtio-net in the guest, on Debian's QEMU package ($("$debian_qemu" --version | head -n1 | sed 's/QEMU emulator version //'));"
    echo "rdma-sim = this device and driver, on our QEMU build (with patches/qemu)."
    if ((runs > 1)); then
        echo "Each pair ran $runs times: medians, with the range of the runs in brackets;"
        echo "the ratio is of the medians."
    fi
    echo
    for mtu in $mtus; do
        echo "## Ethernet MTU $mtu (RoCE path MTU: Soft-RoCE ${res[rxe-deb$mtu,pmtu]:-?}, rdma-sim ${res[rsim$mtu,pmtu]:-?})"
        echo
        table "rxe-deb$mtu" "rsim$mtu" "Soft-RoCE" "rdma-sim" "rdma-sim vs Soft-RoCE"
        echo
        echo "Whole run of a pair (boot, setup, all tests, power off), median: Soft-RoCE $(median "${res[rxe-deb$mtu,wall]}") s, rdma-sim $(median "${res[rsim$mtu,wall]}") s."
        echo
        echo "### virtio-net on our QEMU build against Debian's QEMU (Soft-RoCE both times, same run)"
        echo
        table "rxe-deb$mtu" "rxe$mtu" "Debian's QEMU" "our QEMU" "ours vs Debian's"
        echo
    done
    if [[ $parts == *" nvme "* ]]; then
        echo "## NVMe over RDMA (fio on the nvme-rdma host, nvmet-rdma ramdisk target, 2 vCPUs per guest, MTU 1500)"
        echo
        echo "| fio job | Soft-RoCE | rdma-sim | rdma-sim vs Soft-RoCE |"
        echo "|---|---|---|---|"
        for row in "iops:4 KiB random read, QD 32:IOPS:the IOPS" "p50:4 KiB random read, QD 1, latency p50:us:" \
            "p99:4 KiB random read, QD 1, latency p99:us:" "bw:1 MiB sequential read, QD 16:MB/s:the bandwidth"; do
            IFS=: read -r key name unit what <<<"$row"
            a=$(median "${res[nvmerxe-deb,$key]}") b=$(median "${res[nvmersim,$key]}")
            ra=$(spread "${res[nvmerxe-deb,$key]}") rb=$(spread "${res[nvmersim,$key]}")
            echo "| $name | $a$ra $unit | $b$rb $unit | $(ratio "$a" "$b" "$what") |"
        done
        echo
    fi
    echo "Host UDP over loopback (iperf3, 4200-byte datagrams, one stream): $udp MB/s."
} >"$out"
cp "$out" build/bench/bench-latest.md
cat "$out"
