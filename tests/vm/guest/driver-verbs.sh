#!/bin/bash
# Guest side of tests/vm/t-driver-verbs.sh: tests/vm/progs/verbs-test
# creates and destroys every verbs object through libibverbs and the rxe
# provider, checks the errno of bad requests, completion and async events,
# and checks on the device side (debugfs "mrs": MR_TRANSLATE) that MRs with
# PBL levels 0, 1 and 2 work; then the kernel verbs test module
# (tests/vm/progs/kverbs_test.c) runs the kernel paths.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_load 10.0.0.1/24
# Two 2 MiB huge pages: the test registers one (a level 0 MR).
echo 2 >/proc/sys/vm/nr_hugepages || true
gt_log "huge pages: $(cat /proc/sys/vm/nr_hugepages)"

mrs=/sys/kernel/debug/rdma_sim/$GT_BDF/mrs
[[ -r $mrs ]] || gt_fail "no debugfs file $mrs (debugfs mounted at /sys/kernel/debug?)"
rc=0
"$GT_VERBS_TEST" -d rsim0 -D "$mrs" check 2>&1 | tee /tmp/verbs.out || rc=$?
gt_save verbs-test.txt </tmp/verbs.out
((rc == 0)) || gt_fail "verbs-test failed (exit $rc): $(grep -E '^(FAIL|FATAL)' /tmp/verbs.out | head -n 5 | tr '\n' ';')"
grep -q ' 0 failed$' /tmp/verbs.out || gt_fail "verbs-test did not report its summary"
for level in 0 1 2; do
    grep -q "^ok: debugfs: MR .* level $level, device translation ok" /tmp/verbs.out ||
        gt_fail "no MR with PBL level $level checked on the device side"
done
gt_log "ok: PBL levels 0, 1, 2 verified with MR_TRANSLATE"

# Kernel verbs, as kernel ULPs use them (tests/vm/progs/kverbs_test.c).
kmod=$RSIM_REPO/build/progs/$(uname -r)/kverbs_test.ko
[[ -f $kmod ]] || gt_fail "$kmod not built (make -C tests/vm/progs)"
rc=0
timeout 120 insmod "$kmod" || rc=$?
dmesg | grep 'kverbs_test' | gt_save kverbs_test.txt
dmesg | grep 'kverbs_test'
((rc == 0)) || gt_fail "kernel verbs test failed (insmod $rc): $(dmesg | grep 'kverbs_test: FAIL' | head -n 5 | tr '\n' ';')"
dmesg | gt_has 'kverbs_test: PASS' || gt_fail "kernel verbs test did not report PASS"
rmmod kverbs_test
gt_log "ok: kernel verbs test passed"

# Nothing leaked on the device: only the kernel's own objects remain.
res=$(rdma res show rsim0)
gt_log "resources after the test: $res"
[[ $res =~ \ mr\ 0\  && $res =~ \ srq\ 0\  && $res =~ \ ctx\ 0\  ]] ||
    gt_fail "objects left after the test program ended: $res"
gt_check_dmesg
echo "driver-verbs: all checks passed"
