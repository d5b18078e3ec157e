#!/bin/bash
# VM test: NVMe over RDMA between two guests with rdma-sim
# (tests/vm/guest/nvme-rdma.sh).  Guest A is an nvmet-rdma target with a
# 256 MiB ramdisk namespace, guest B connects with nvme-rdma and runs fio
# with crc32c verification (random writes, then read back and checked) at
# 4 KiB and 1 MiB, queue depths 1 and 32; disconnects, reconnects and
# verifies the data again; then A unlinks the subsystem from its port
# while B has I/O queued and links it back: B reconnects and the I/O
# completes.  No oops, WARN, BUG or hung task in either guest.
#
# Two passes: the kernel's defaults, then ib_core.force_mr=1, with which
# rdma_rw (the target's RDMA READ/WRITE) registers a fast-registration MR
# for every transfer.  The first pass ends with a disconnect, the second
# by unloading rdma_sim under running I/O (the target's, then the host's).  NVME_PASSES="plain force_mr" selects them;
# NVME_SCALE (MiB per 4 KiB job, default 8) and NVME_OUTAGE (seconds the
# port is away, default 6) go to the guests.  The guests have NVME_SMP
# vCPUs (default 2): the host makes an I/O queue per CPU, and the test
# checks that each completion vector's interrupt fires.
set -euo pipefail
# shellcheck source=tests/vm/test-lib.sh
. "$(dirname "$0")/test-lib.sh"
vmtest_init t-nvme-rdma

for tool in nvme fio; do
    command -v "$tool" >/dev/null || vmtest_fail "$tool is not installed (make deps: nvme-cli, fio)"
done

top_runs=$VMTEST_RUNS
top_logdir=${RDMA_SIM_LOGDIR:-}
rc=0
failed=''
for pass in ${NVME_PASSES:-plain force_mr}; do
    envs=(-e "NVME_SCALE=${NVME_SCALE:-8}" -e "NVME_OUTAGE=${NVME_OUTAGE:-6}")
    for v in NVME_TARGET_ARGS NVME_INLINE NVME_CONNECT_ARGS; do
        if [[ -n ${!v:-} ]]; then envs+=(-e "$v=${!v}"); fi
    done
    case $pass in
    plain) append='' ;;
    force_mr) append='ib_core.force_mr=1'; envs+=(-e NVME_FORCE_MR=1 -e NVME_UNLOAD=1) ;;
    *) vmtest_fail "unknown pass '$pass' (plain, force_mr)" ;;
    esac
    VMTEST_RUNS=$top_runs/$pass
    if [[ -n $top_logdir ]]; then RDMA_SIM_LOGDIR=$top_logdir/$pass; fi
    echo "== pass $pass${append:+ ($append)}"
    start=$SECONDS
    VM_SMP=${NVME_SMP:-2} VM_APPEND="${VM_APPEND:-}${append:+ $append}" \
        vmtest_pair rsim rsim -t 420 -s tests/vm/guest/nvme-rdma.sh "${envs[@]}"
    echo "== pass $pass: exit $VMTEST_RC after $((SECONDS - start))s"
    if [[ -f ${VMTEST_RESULTS[1]:-}/fio-summary.txt ]]; then
        sed "s/^/   /" "${VMTEST_RESULTS[1]}/fio-summary.txt"
    fi
    if [[ -f ${VMTEST_RESULTS[1]:-}/controller-states.txt ]]; then
        echo "   host controller while the port was away (seconds, state): $(tr '\n' ' ' <"${VMTEST_RESULTS[1]}/controller-states.txt")"
    fi
    if [[ -f ${VMTEST_RESULTS[0]:-}/target-fast-reg-mrs ]]; then
        echo "   target fast-registration MRs while connected: $(<"${VMTEST_RESULTS[0]}/target-fast-reg-mrs")"
    fi
    for i in 0 1; do
        f=${VMTEST_RESULTS[i]:-}/rdma-statistic.txt
        [[ -f $f ]] || continue
        echo "   guest $i device counters: $(grep -oE '(tx_roce_packets|rx_roce_packets|retransmits|retry_timeouts|seq_nak_sent|duplicate_requests|fault_dropped) [0-9]+' "$f" | tr '\n' ' ')"
    done
    if ((VMTEST_RC != 0)); then
        rc=1
        failed+=" $VMTEST_RUN"
    fi
done
VMTEST_RUNS=$top_runs
if ((rc != 0)); then
    echo "FAIL: $VMTEST_NAME (logs:$failed)"
    exit 1
fi
vmtest_done 0
