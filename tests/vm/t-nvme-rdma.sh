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
# Three passes: the kernel's defaults, then ib_core.force_mr=1, with which
# rdma_rw (the target's RDMA READ/WRITE) registers a fast-registration MR
# for every transfer.  The first pass ends with a disconnect, the second
# by unloading rdma_sim under running I/O (the target's, then the host's).
# A third pass, lossy, runs the first again (half the data) with 2% of the
# RoCE frames each device sends dropped and 2% reordered: RC recovers them
# and fio's verification holds.  NVME_PASSES="plain force_mr lossy"
# selects them.  Two more passes, run by t-interop-nvme.sh, put Linux's
# Soft-RoCE on one side: rxe-target (A is a virtio-net guest with rdma_rxe)
# and rxe-host (B is).  NVME_SCALE (MiB per 4 KiB job, default 8) and
# NVME_OUTAGE (seconds the port is away, default 6) go to the guests.  The
# guests have NVME_SMP vCPUs (default 2): the host makes an I/O queue per
# CPU, and the test checks that each completion vector's interrupt fires.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init "${NVME_TEST_NAME:-t-nvme-rdma}"

for tool in nvme fio; do
    command -v "$tool" >/dev/null || vmtest_fail "$tool is not installed (make deps: nvme-cli, fio)"
done

for pass in ${NVME_PASSES:-plain force_mr lossy}; do
    scale=${NVME_SCALE:-8}
    if [[ $pass == lossy ]]; then scale=${NVME_SCALE:-4}; fi
    envs=(-e "NVME_OUTAGE=${NVME_OUTAGE:-6}" -e "NVME_SCALE=$scale")
    for v in NVME_TARGET_ARGS NVME_INLINE NVME_CONNECT_ARGS; do
        if [[ -n ${!v:-} ]]; then envs+=(-e "$v=${!v}"); fi
    done
    props='' stacks=(rsim rsim)
    case $pass in
    plain) append='' ;;
    force_mr) append='ib_core.force_mr=1'; envs+=(-e NVME_FORCE_MR=1 -e NVME_UNLOAD=1) ;;
    # Under loss a lost connection request costs rdma_cm seconds; while the
    # host connects its I/O queues it sends no keep-alive, and the target
    # dropped the controller after the default 5 s (stop 23's CI: "Connect
    # Invalid Data Parameter", 13 s into a reconnection): 30 s here.
    lossy) append='' props=$VMTEST_LOSSY,fault-seed=7
        envs+=(-e "NVME_CONNECT_ARGS=${NVME_CONNECT_ARGS:-} --keep-alive-tmo=30") ;;
    rxe-target) append='' stacks=(rxe rsim) ;;
    rxe-host) append='' stacks=(rsim rxe) ;;
    *) vmtest_fail "unknown pass '$pass' (plain, force_mr, lossy, rxe-target, rxe-host)" ;;
    esac
    vmtest_pass "$pass" "$append$props"
    RSIM_PROPS=$props VM_SMP=${NVME_SMP:-2} VM_APPEND="${VM_APPEND:-}${append:+ $append}" \
        vmtest_pair "${stacks[@]}" -t 420 -s tests/vm/guest/nvme-rdma.sh "${envs[@]}"
    vmtest_pass_done
    if [[ -f ${VMTEST_RESULTS[1]:-}/fio-summary.txt ]]; then
        sed "s/^/   /" "${VMTEST_RESULTS[1]}/fio-summary.txt"
    fi
    if [[ -f ${VMTEST_RESULTS[1]:-}/controller-states.txt ]]; then
        echo "   host controller while the port was away (seconds, state): $(tr '\n' ' ' <"${VMTEST_RESULTS[1]}/controller-states.txt")"
    fi
    if [[ -f ${VMTEST_RESULTS[0]:-}/target-fast-reg-mrs ]]; then
        echo "   target fast-registration MRs while connected: $(<"${VMTEST_RESULTS[0]}/target-fast-reg-mrs")"
    fi
done
vmtest_passes_done
