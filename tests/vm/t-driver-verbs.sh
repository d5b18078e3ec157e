#!/bin/bash
# VM test: tests/vm/progs/verbs-test drives the rdma-sim driver through
# stock libibverbs + the rxe provider in a guest: PD, CQ (with resize), QP
# RESET->INIT->RTR->RTS and illegal transitions, UD QP + AH, SRQ (limit,
# resize), MRs with PBL levels 0/1/2 (checked on the device with
# MR_TRANSLATE through the driver's debugfs), and the errno of bad
# requests (too many SGEs, too deep queues, bad access flags), completion
# events and async events (SQ_DRAINED, QP_LAST_WQE_REACHED, CQ_ERR); then
# tests/vm/progs/kverbs_test.ko runs the kernel verbs paths (DMA
# MR, kernel rings, inline sends, fast registration, drain, CQ resize,
# softirq completion events, an AH created in atomic context, a kernel
# SRQ whose ring goes round three times, a QP used again after RESET).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-verbs
vmtest_usernet 52:54:00:5e:02:01 -s tests/vm/guest/driver-verbs.sh
vmtest_done "$VMTEST_RC"
