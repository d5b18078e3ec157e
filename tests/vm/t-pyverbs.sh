#!/bin/bash
# VM test: rdma-core's own test suite (python3-pyverbs) in a guest against
# rdma-sim, whose internal loopback connects the suite's server and client.
# test_device, test_pd, test_mr, test_cq, test_cq_events, test_qp and
# test_atomic must have no failures and no errors; the other modules that
# apply to an RC RoCEv2 device run and are reported.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-pyverbs
required="test_device test_pd test_mr test_cq test_cq_events test_qp test_atomic"
vmtest_single -t 1500 -m 2048 -s tests/vm/guest/pyverbs.sh \
    -e PYVERBS_REQUIRED="$required" \
    -e PYVERBS_MODULES="$required test_addr test_relaxed_ordering test_fork test_cqex test_qpex test_odp test_parent_domain test_shared_pd test_rdmacm"
if [[ -f ${VMTEST_RESULTS[0]:-}/pyverbs-summary.txt ]]; then
    echo "---- rdma-core test suite on rdma-sim ----"
    cat "${VMTEST_RESULTS[0]}/pyverbs-summary.txt"
    awk '{r+=$3; p+=$5; s+=$7; f+=$9; e+=$11} END {printf "total: run %d passed %d skipped %d failed %d errors %d\n", r, p, s, f, e}' \
        "${VMTEST_RESULTS[0]}/pyverbs-summary.txt"
fi
vmtest_done "$VMTEST_RC"
