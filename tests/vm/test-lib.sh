# Sourced by the RDMA VM tests (tests/vm/t-*.sh): builds what they need, runs
# guests through tests/vm/vm, keeps the logs of failures, prints PASS/FAIL.
#
#   vmtest_init NAME          cd to the repository root; build rdma_sim.ko
#                             and tests/guest (once per make check)
#   vmtest_pair A B [ARGS..]  two guests on a host UDP link; A and B are the
#                             stacks of guest A and B: "rsim" (-device
#                             rdma-sim, driver loaded; RSIM_PROPS adds device
#                             properties) or "rxe" (virtio-net + Soft-RoCE);
#                             ARGS go to `tests/vm/vm run`
#   vmtest_single ARGS..      one guest with rdma-sim and the driver
#   vmtest_done RC            print the verdict and exit
# After a run, VMTEST_RESULTS[0/1] are the guests' results directories.
# shellcheck shell=bash

vmtest_fail() { echo "FAIL: $VMTEST_NAME: $*"; exit 1; }

vmtest_init() {
    VMTEST_NAME=$1
    cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
    make -s -C guest-driver >/dev/null ||
        vmtest_fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"
    make -s -C tests/guest >/dev/null ||
        vmtest_fail "building tests/guest failed (make -C tests/guest)"
}

vmtest_nic() {
    case $1 in
    rsim) echo "rdma-sim${RSIM_PROPS:+,$RSIM_PROPS}" ;;
    rxe) echo virtio-net-pci ;;
    *) vmtest_fail "unknown stack '$1' (rsim or rxe)" ;;
    esac
}

# vmtest_run ARGS..: run guests, keep the results; sets VMTEST_RC
vmtest_run() {
    local runs=$PWD/build/vm-runs/$VMTEST_NAME.$$ i
    rm -rf "$runs"
    VMTEST_RC=0
    VM_RUNS_DIR=$runs tests/vm/vm run --name "$VMTEST_NAME" --keep \
        -k guest-driver/rdma_sim.ko "$@" || VMTEST_RC=$?
    VMTEST_RUN=$(echo "$runs"/"$VMTEST_NAME".*)
    VMTEST_RESULTS=()
    for i in 0 1; do
        [[ -d $VMTEST_RUN/g$i ]] && VMTEST_RESULTS[i]=$VMTEST_RUN/g$i/results
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

vmtest_done() {
    if (($1 == 0)); then
        rm -rf "$(dirname "$VMTEST_RUN")"
        echo "PASS: $VMTEST_NAME"
        exit 0
    fi
    echo "FAIL: $VMTEST_NAME (logs: $VMTEST_RUN)"
    exit 1
}
