#!/bin/bash
# tests/dkms/check-dkms.sh - the guest driver as a DKMS module, for each
# kernel the project supports, without a VM and without touching the
# host's DKMS: dkms adds, builds and installs it in private trees in a
# temporary directory (--sourcetree, --dkmstree, --installtree), and the
# installed module must be rdma_sim with a vermagic naming that kernel.
#
#   tests/dkms/check-dkms.sh [--keep DIR] [ABI|SERIES]...
#
# Kernels: the arguments (an ABI, e.g. 6.1.0-57-amd64, or a series, 6.12:
# its newest ABI in apt's lists or Debian's newer suites); default: the
# kernel series of every generation (configs/generations).  Each needs
# its linux-headers installed, or (Linux 7.x) the tree
# scripts/guest-kernel.sh kdir prepares (given to dkms as its
# --kernelsourcedir).
# --keep DIR: the trees go in DIR and stay (DIR/modules/ABI/updates/dkms/
# then holds the installed modules, e.g. to boot them: VMTEST_KO=...).
#
# Output: one line per kernel on stdout, "PASS dkms/ABI" or
# "FAIL dkms/ABI (why)"; dkms's own output goes to the log directory
# ($RDMA_SIM_LOGDIR, else build/logs/dkms), ABI.log each, and the end of a
# failing one to stderr.  Exit status 0 if every kernel passed, else 1.
#
# What stays untouched, and is checked to be: /var/lib/dkms (dkms's tree,
# and where it would create its module signing key), /usr/src and
# /lib/modules/ABI (no depmod: --no-depmod).  The signing key is the one
# thing dkms has no option for: it takes sign_file, mok_signing_key and
# mok_certificate from /etc/dkms/framework.conf or, failing that, from its
# environment, so they are given in the environment, in the private tree.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
keep=
if [[ ${1:-} == --keep ]]; then
    keep=${2:?--keep needs a directory}
    shift 2
fi
specs=("$@")
# shellcheck source=configs/generations
. "$REPO/configs/generations"
((${#specs[@]})) || specs=("$GEN_DEFAULT_KERNEL" "$GEN_MIDDLE_KERNEL" "$GEN_OLDEST_KERNEL")
logdir=${RDMA_SIM_LOGDIR:-$REPO/build/logs/dkms}
mkdir -p "$logdir"

conf=$REPO/guest-driver/dkms.conf
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$conf")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$conf")
if [[ -z $name || -z $version ]]; then
    echo "FAIL dkms (no PACKAGE_NAME or PACKAGE_VERSION in $conf)"
    exit 1
fi

if [[ -n $keep ]]; then
    rm -rf "$keep"
    mkdir -p "$keep"
    top=$(cd "$keep" && pwd)
else
    top=$(mktemp -d /tmp/check-dkms.XXXXXX)
    trap 'rm -rf "$top"' EXIT
fi
mkdir -p "$top/src" "$top/dkms" "$top/modules" "$top/tmp"
trees=(--sourcetree "$top/src" --dkmstree "$top/dkms" --installtree "$top/modules")
export TMPDIR=$top/tmp
export mok_signing_key=$top/mok.key mok_certificate=$top/mok.pub

passed=0 failed=0
fail() { # fail ABI WHY [LOG]
    echo "FAIL dkms/$1 ($2)"
    if [[ -n ${3:-} ]]; then
        echo "---- last 20 lines of $3 ----" >&2
        tail -n 20 "$3" >&2
        echo "----" >&2
    fi
    failed=$((failed + 1))
}

# Every kernel fails alike without dkms or the sources' tree.
setup_error=
if ! command -v dkms >/dev/null; then
    setup_error="dkms is not installed: apt-get install --no-install-recommends dkms (make deps)"
elif ! make -s -C "$REPO/guest-driver" dkms-source DKMS_DIR="$top/src/$name-$version" \
    >"$logdir/dkms-source.log" 2>&1; then
    setup_error="make -C guest-driver dkms-source failed: $logdir/dkms-source.log"
elif ! dkms add -m "$name" -v "$version" "${trees[@]}" >"$logdir/dkms-add.log" 2>&1; then
    setup_error="dkms add failed: $logdir/dkms-add.log"
fi

for spec in "${specs[@]}"; do
    if ! abi=$(GUEST_ABI=$spec "$REPO/scripts/vm/vm" abi 2>&1); then
        fail "${spec:-default}" "cannot resolve the kernel: $abi"
        continue
    fi
    if [[ -n $setup_error ]]; then
        fail "$abi" "$setup_error"
        continue
    fi
    # Debian 12's kernels have their headers installed; a newer Debian's
    # (Linux 7.x) a tree of its own in build/kernel (scripts/guest-kernel.sh)
    if ! kdir=$("$REPO/scripts/guest-kernel.sh" kdir "$abi" 2>"$logdir/$abi.kdir.log"); then
        fail "$abi" "no kernel build tree for $abi: $(tail -n 1 "$logdir/$abi.kdir.log")"
        continue
    fi
    ksrc=()
    [[ $kdir == "/lib/modules/$abi/build" ]] || ksrc=(--kernelsourcedir "$kdir")
    log=$logdir/$abi.log
    stamp=$top/tmp/stamp-$abi
    touch "$stamp"
    sleep 1 # mtimes one second apart: -newer is certain
    mkdir -p "$top/modules/$abi"
    if ! { dkms build -m "$name" -v "$version" -k "$abi" "${ksrc[@]}" "${trees[@]}" &&
        dkms install -m "$name" -v "$version" -k "$abi" --no-depmod "${trees[@]}"; } >"$log" 2>&1; then
        # dkms keeps kbuild's output in its tree: the compiler's words.
        cat "$top/dkms/$name/$version/build/make.log" >>"$log" 2>/dev/null
        fail "$abi" "dkms build or install failed: $log" "$log"
        continue
    fi
    mapfile -t kos < <(find "$top/modules/$abi" -name "$name.ko*" -type f)
    if ((${#kos[@]} != 1)); then
        fail "$abi" "expected one installed $name.ko* under $top/modules/$abi, found ${#kos[@]}: ${kos[*]}"
        continue
    fi
    ko=${kos[0]}
    vermagic=$(modinfo -F vermagic "$ko" 2>>"$log")
    modname=$(modinfo -F name "$ko" 2>>"$log")
    status=$(dkms status -m "$name" -v "$version" -k "$abi" "${trees[@]}" 2>>"$log")
    touched=$(find /var/lib/dkms "/lib/modules/$abi" /usr/src -maxdepth 4 -newer "$stamp" \
        \( -path '/usr/src/linux-*' -prune -o -print \) 2>/dev/null | head -n 5)
    if [[ ${vermagic%% *} != "$abi" ]]; then
        fail "$abi" "$ko has vermagic '$vermagic', not for $abi"
    elif [[ $modname != "$name" ]]; then
        fail "$abi" "$ko is module '$modname', not $name"
    elif [[ $status != *": installed"* ]]; then
        fail "$abi" "dkms status says '$status', not installed"
    elif [[ -n $touched ]]; then
        fail "$abi" "the host's trees changed during the run: $(echo "$touched" | tr '\n' ' ')"
    else
        echo "PASS dkms/$abi"
        echo "dkms/$abi: ${ko#"$top"/}, vermagic $vermagic" >>"$log"
        passed=$((passed + 1))
    fi
done
((failed == 0))
