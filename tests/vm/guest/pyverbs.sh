#!/bin/bash
# Guest side of tests/vm/t-pyverbs.sh: rdma-core's own test suite
# (python3-pyverbs) against the RDMA device of the test interface.  Writes a
# summary per module to $RSIM_RESULTS/pyverbs-summary.txt and fails if a
# module of PYVERBS_REQUIRED has a failure or an error.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_rdma_setup
work=/tmp/pyverbs
rm -rf "$work"
mkdir -p "$work"
cp -r /usr/share/doc/rdma-core/tests "$work/"
gunzip -f "$work"/tests/*.gz
summary=$RSIM_RESULTS/pyverbs-summary.txt
: >"$summary"
bad=0
for mod in $PYVERBS_MODULES; do
    log=$RSIM_RESULTS/pyverbs-$mod.txt
    rc=0
    (cd "$work" && timeout 900 /usr/bin/python3 tests/run_tests.py \
        --dev "$GT_DEV" --gid "$GT_GID" -v "tests.$mod") >"$log" 2>&1 || rc=$?
    ran=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
    last=$(grep -E '^(OK|FAILED)' "$log" | tail -n1)
    skipped=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$last")
    failures=$(sed -n 's/.*failures=\([0-9]*\).*/\1/p' <<<"$last")
    errors=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<<"$last")
    ran=${ran:-0} skipped=${skipped:-0} failures=${failures:-0} errors=${errors:-0}
    if [[ -z $last ]]; then errors=$((errors + 1)); fi
    passed=$((ran - skipped - failures - errors))
    printf '%-22s run %3d passed %3d skipped %3d failed %3d errors %3d (exit %d)\n' \
        "$mod" "$ran" "$passed" "$skipped" "$failures" "$errors" "$rc" | tee -a "$summary"
    if [[ " $PYVERBS_REQUIRED " == *" $mod "* ]] && ((failures + errors > 0)); then
        grep -E '^(FAIL|ERROR):' "$log" | head -n 20
        bad=1
    fi
done
cat "$summary"
((bad == 0)) || gt_fail "a required module of rdma-core's test suite failed"
echo "pyverbs: required modules passed"
