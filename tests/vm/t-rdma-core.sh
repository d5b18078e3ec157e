#!/bin/bash
# VM test: a newer Debian's rdma-core drives rdma-sim.  A pass per version
# (RDMA_CORE_VERSIONS, default "56 65": Debian 13's rdma-core 56 and Debian
# unstable's 65, each with perftest 25.01): guest A runs that rdma-core
# (scripts/rdma-core.sh fetches it into build/rdma-core-N once and runs it
# through its suite's own loader), guest B the host's rdma-core 44 and
# perftest 4.5 (tests/vm/guest/rdma-core.sh).
#
# Both check ibv_devinfo -v; guest A's must print what 44's prints, and
# shows which librxe its rdma-core takes without the wrappers' preload
# (56: the host's 44 one; 65: none).  ibv_rc_pingpong (data checked; the
# second with completion events and the extended send API, -e -N) runs in
# both directions, then ibv_ud_pingpong, ib_write_bw and rping (rdma_cm)
# both ways; each guest checks that its servers ran with its own libibverbs
# and librxe (/proc/PID/maps).  Guest A also runs flush-probe (tests/vm/progs,
# built against N's headers): FLUSH, the verb rxe's provider gained after
# rdma-core 44, which rdma-sim does not implement; the extended send API's
# data lists; 65's new verbs.
#
# A version whose packages cannot be fetched because the archive cannot be
# reached is skipped (said in the log); exits 77 (skip) when all are.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-rdma-core

ran=0 skipped=''
for v in ${RDMA_CORE_VERSIONS:-56 65}; do
    rc=0
    scripts/rdma-core.sh "$v" || rc=$?
    if ((rc == 3)); then
        echo "== pass rc$v: SKIP: the Debian archive cannot be reached (above)"
        skipped+=" $v"
        continue
    fi
    ((rc == 0)) || vmtest_fail "scripts/rdma-core.sh $v failed (above)"
    make -s -C tests/vm/progs "flush-probe-$v" ||
        vmtest_fail "building tests/vm/progs/flush-probe-$v against rdma-core $v failed (make -C tests/vm/progs flush-probe-$v)"
    vmtest_pass "rc$v" "rdma-core $v against 44"
    vmtest_pair rsim rsim -t 600 -s tests/vm/guest/rdma-core.sh \
        -e RC_DIR="$PWD/build/rdma-core-$v" -e RC_VERSION="$v" \
        -e PAIR_CMDS="ibv_rc_pingpong -s 4096 -n 100 -c
rev ibv_rc_pingpong -s 3000 -n 100 -c -e -N
ibv_ud_pingpong -s 512 -n 100 -c
ib_write_bw -s 65536 -n 200
rev ib_write_bw -s 65536 -n 200
rping -C 10 -V
rev rping -C 10 -V"
    vmtest_show flush-probe.txt "flush-probe (rdma-core $v) on guest A"
    vmtest_pass_done
    ran=$((ran + 1))
done
if ((ran == 0)) && [[ -n $skipped ]]; then
    echo "SKIP: t-rdma-core: the Debian archive cannot be reached: rdma-core$skipped not fetched"
    exit 77
fi
if [[ -n $skipped ]]; then
    echo "NOTE: t-rdma-core: rdma-core$skipped skipped: the Debian archive cannot be reached"
fi
vmtest_passes_done
