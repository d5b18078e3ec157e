#!/bin/bash
# VM test: the bring-up tutorial (tutorial/, docs/bring-up.md).  Builds
# rsim_bringup.ko for the guest kernel (W=1, no warning allowed), and once
# more for each exercise with its solution (tutorial/solutions/EX.patch,
# applied to a copy in build/tutorial/ABI/EX, never to the tree); then one
# guest, whose rdma-sim no driver owns, loads them in turn
# (tests/vm/guest/bringup.sh): the shipped driver must print every step and
# "data matches" and tear down on rmmod; with exercise=EX it must say "not
# done" (the learner's test fails) and the solution "ok"; each mistake of
# the tutorial must get the status the tutorial says.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-bringup --no-build

abi=$(scripts/vm/vm abi) || vmtest_fail "cannot tell the guest kernel ABI (scripts/vm/vm abi)"
export GUEST_ABI=$abi
kdir=${KDIR:-$(scripts/guest-kernel.sh kdir "$abi")} ||
    vmtest_fail "no kernel build tree for $abi (scripts/guest-kernel.sh kdir $abi, above)"
[[ -f $kdir/Makefile ]] || vmtest_fail "no kernel build tree at $kdir (linux-headers-$abi)"
out=$PWD/build/tutorial/$abi
exercises=(read write_imm)

# build NAME [PATCH]: tutorial/ (with PATCH applied) built in $out/NAME.
# Files are replaced only when they change, so that make rebuilds only
# what did.
build() {
    local dir=$out/$1 f
    rm -rf "$dir.new"
    mkdir -p "$dir" "$dir.new"
    cp tutorial/rsim_bringup.c tutorial/Kbuild "$dir.new/"
    if [[ -n ${2:-} ]]; then
        patch -s -p2 -d "$dir.new" <"$2" || vmtest_fail "$2 does not apply to tutorial/"
    fi
    for f in rsim_bringup.c Kbuild; do
        cmp -s "$dir.new/$f" "$dir/$f" || cp "$dir.new/$f" "$dir/$f"
    done
    rm -rf "$dir.new"
    # kbuild takes seconds to find nothing to do: skip it when the module
    # is newer than its sources (its build.log is still checked below).
    if ! [[ -f $dir/build.log && $dir/rsim_bringup.ko -nt $dir/rsim_bringup.c &&
        $dir/rsim_bringup.ko -nt $dir/Kbuild && $dir/rsim_bringup.ko -nt include/rdma-sim/rdma_sim_hw.h ]]; then
        make -s -C "$kdir" M="$dir" RSIM_INCLUDE="$PWD/include" W=1 modules >"$dir/build.log" 2>&1 ||
            { cat "$dir/build.log"; vmtest_fail "building $1 failed"; }
    fi
    if grep -E 'warning:|error:' "$dir/build.log"; then
        vmtest_fail "building $1 with W=1: warnings"
    fi
}

build base
for ex in "${exercises[@]}"; do build "$ex" "tutorial/solutions/$ex.patch"; done
echo "built rsim_bringup.ko for Linux $abi: base ${exercises[*]} in $out"

vmtest_usernet 52:54:00:5e:0e:01 -e BRINGUP_DIR="$out" -e BRINGUP_EXERCISES="${exercises[*]}" \
    -s tests/vm/guest/bringup.sh
vmtest_show bringup-base.txt "what the shipped driver printed"
vmtest_done "$VMTEST_RC"
