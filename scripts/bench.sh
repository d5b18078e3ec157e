#!/bin/bash
# make bench: rdma-sim against Linux Soft-RoCE, in identical pairs of TCG
# guests on a host UDP link, in the same run.  Prints a table with the
# ratios and writes it to build/bench/bench-DATE.md (and bench-latest.md).
#
# Settings: BENCH_ITERS (bandwidth iterations, default 2000), LAT_ITERS
# (default 2000), BENCH_MTU (path MTU for both stacks, default: each port's).
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/vm/test-lib.sh
vmtest_init bench

iters=${BENCH_ITERS:-2000}
lat=${LAT_ITERS:-2000}
cmds="ib_write_bw -s 65536 -n $iters
ib_write_bw -s 1048576 -n $((iters / 8))
ib_send_bw -s 65536 -n $iters
ib_read_bw -s 65536 -n $iters
ib_write_lat -s 2 -n $lat
ib_send_lat -s 2 -n $lat"
names=("ib_write_bw 64 KiB" "ib_write_bw 1 MiB" "ib_send_bw 64 KiB"
    "ib_read_bw 64 KiB" "ib_write_lat 2 B" "ib_send_lat 2 B")
units=(MB/s MB/s MB/s MB/s us us)

# result STACK INDEX: the figure perftest's client printed (BW average or
# typical latency)
declare -A res
collect() {
    local stack=$1 dir=$2 i f line
    for i in 1 2 3 4 5 6; do
        f=$dir/out-$i.txt
        line=$(grep -A1 -E '^ *#bytes' "$f" 2>/dev/null | tail -n1 || true)
        if ((i <= 4)); then
            res[$stack,$i]=$(awk '{print $4}' <<<"$line")
        else
            res[$stack,$i]=$(awk '{print $5}' <<<"$line")
            res[$stack,avg$i]=$(awk '{print $6}' <<<"$line")
        fi
    done
}

for stack in rxe rsim; do
    echo "bench: $stack pair ..."
    start=$SECONDS
    vmtest_pair "$stack" "$stack" -t 1200 -s tests/vm/in-guest/perftest-pair.sh \
        -e PERF_CMDS="$cmds"
    ((VMTEST_RC == 0)) || vmtest_fail "the $stack pair failed (logs: $VMTEST_RUN)"
    collect "$stack" "${VMTEST_RESULTS[1]}"
    res[$stack,wall]=$((SECONDS - start))
done

mkdir -p build/bench
out=build/bench/bench-$(date +%Y%m%d-%H%M%S).md
{
    echo "# rdma-sim vs Soft-RoCE ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    echo
    echo "Two TCG guests per stack ($(nproc) host cores), Debian $(tests/vm/vm abi) kernel,"
    echo "host UDP link (-netdev socket,udp=); perftest client side; each stack's default path MTU."
    echo
    echo "| test | Soft-RoCE | rdma-sim | ratio |"
    echo "|---|---|---|---|"
    for i in 1 2 3 4 5 6; do
        a=${res[rxe,$i]:-?} b=${res[rsim,$i]:-?}
        if ((i <= 4)); then
            ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.1fx faster", b / a; else print "?" }')
            echo "| ${names[i - 1]} | $a ${units[i - 1]} | $b ${units[i - 1]} | $ratio |"
        else
            ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f of it", b / a; else print "?" }')
            echo "| ${names[i - 1]} (typical; avg) | $a; ${res[rxe,avg$i]:-?} us | $b; ${res[rsim,avg$i]:-?} us | $ratio |"
        fi
    done
    echo
    echo "Whole run per stack (boot, setup, all tests, power off): Soft-RoCE ${res[rxe,wall]} s, rdma-sim ${res[rsim,wall]} s."
} >"$out"
cp "$out" build/bench/bench-latest.md
cat "$out"
rm -rf "$(dirname "$VMTEST_RUN")"
