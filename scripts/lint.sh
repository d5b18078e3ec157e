#!/usr/bin/env bash
# make lint: the style checkers of the project, over the files of the
# repository (those git tracks or would add; build outputs are ignored):
#   the kernel's checkpatch --strict on the C of the kernel modules (what
#     each Kbuild file builds, and the headers beside it), through
#     scripts/kernel-checkpatch.sh;
#   QEMU's checkpatch --strict, from QEMU_SRC, on the C of the device, the
#     shared header, rdma-sim-server, the qtests, unit tests and fuzz
#     targets;
#   `shellcheck -x` on the shell scripts: *.sh, and the files whose first
#     line is a sh/bash #! or a shellcheck directive;
#   patches/qemu: the hunks kept per QEMU version agree with the common
#     series, and each version's series applies to its tree (QEMU_SRC and
#     those in build/), through scripts/qemu-patches.py check;
#   no call cycle between the files of the guest driver, nor between the
#     device's (scripts/call-cycles.py);
#   layers: nothing users run (scripts/, the Makefiles outside tests/)
#     sources or includes a file of tests/.
# Prints each finding, then every file with findings and the tool that
# found them; exits 1 if there is any.
#
#   scripts/lint.sh QEMU_SRC
set -euo pipefail

die() { echo "lint.sh: error: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: scripts/lint.sh QEMU_SRC"
qemu_src=$1
[ -f "$qemu_src/scripts/checkpatch.pl" ] || die "$qemu_src/scripts/checkpatch.pl not found: make qemu-source first"
command -v shellcheck >/dev/null || die "shellcheck not found: apt-get install shellcheck (make deps)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# QEMU-style C (git pathspecs: * also matches /)
qemu_style=('hw/*.[ch]' 'include/*.h' 'server/*.[ch]' 'tests/qtest/*.[ch]' 'tests/unit/*.[ch]' 'tests/fuzz/*.[ch]')

# files PATHSPEC...: the files of the repository that match.
files() {
    local f
    git ls-files --cached --others --exclude-standard -- "$@" | sort -u |
        while read -r f; do
            if [ -f "$f" ]; then echo "$f"; fi
        done
}

is_shell() {
    case $1 in
    *.sh) return 0 ;;
    esac
    head -n1 "$1" | grep -Eq '^#!.*\b(ba)?sh\b|^# shellcheck shell='
}

# kernel_sources KBUILD: the C files kbuild compiles for the modules of one
# Kbuild file (every x.o it names is x.c beside it) and the headers beside
# them that they include ("x.h"), directly or through one another.
kernel_sources() {
    local dir o h i
    local -a srcs=()
    dir=$(dirname "$1")
    while read -r o; do
        if [ -f "$dir/${o%.o}.c" ]; then srcs+=("$dir/${o%.o}.c"); fi
    done < <(grep -o '[A-Za-z0-9_-]*\.o\b' "$1" | sort -u)
    for ((i = 0; i < ${#srcs[@]}; i++)); do
        while read -r h; do
            if [ -f "$dir/$h" ] && [[ " ${srcs[*]} " != *" $dir/$h "* ]]; then
                srcs+=("$dir/$h")
            fi
        done < <(sed -n 's/^#include "\([^"/]*\)".*/\1/p' "${srcs[i]}")
    done
    printf '%s\n' "${srcs[@]}"
}

mapfile -t kbuilds < <(files '*Kbuild')
[ ${#kbuilds[@]} -gt 0 ] || die "no Kbuild file: where is the guest driver?"
mapfile -t kernel_files < <(for k in "${kbuilds[@]}"; do kernel_sources "$k"; done | sort -u)
mapfile -t qemu_files < <(files "${qemu_style[@]}")
mapfile -t shell_files < <(files | while read -r f; do
    if is_shell "$f"; then echo "$f"; fi
done)

findings=()
checked=0

# check TOOL FILE COMMAND...: COMMAND FILE; its failure is a finding of TOOL.
check() {
    local tool=$1 file=$2
    shift 2
    checked=$((checked + 1))
    "$@" "$file" || findings+=("$tool: $file")
}

# First the fetch, so that its message does not land among the findings.
scripts/kernel-checkpatch.sh --version >/dev/null
# MACRO_ARG_REUSE takes a macro argument used twice for a possible side
# effect; ours are type and field names (RSIM_SAME) and string literals.
# A compat header (*_compat.h) is where the version checks of an
# out-of-tree module belong: LINUX_VERSION_CODE is meant for in-tree code,
# and CONSTANT_COMPARISON reads "LINUX_VERSION_CODE >= KERNEL_VERSION()"
# as a constant on the left.
for f in "${kernel_files[@]}"; do
    ignore=MACRO_ARG_REUSE
    case $f in
    *_compat.h) ignore+=,LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
    esac
    check "kernel checkpatch" "$f" scripts/kernel-checkpatch.sh --strict --no-tree \
        --terse --show-types --ignore "$ignore" -f
done
# qemu_checkpatch FILE: QEMU's checkpatch on FILE.  QEMU 10.2's asks a
# patch that adds a file licensed other than GPL-2.0-or-later to explain
# the choice in its commit message: the shared hardware header is
# GPL-2.0-or-later OR BSD-2-Clause on purpose (the driver and user-space
# code under other licenses include it), so that one
# warning alone is not a finding.
# shellcheck disable=SC2317  # called through check
qemu_checkpatch() {
    local out rc=0
    out=$(perl "$qemu_src/scripts/checkpatch.pl" --strict --no-tree --terse --color=never -f "$1" 2>&1) || rc=$?
    [ "$rc" -ne 0 ] || return 0
    if ! grep -E '(ERROR|WARNING):' <<<"$out" | grep -vq "Saw acceptable license 'GPL-2.0-or-later OR BSD-2-Clause '"; then
        return 0
    fi
    echo "$out"
    return "$rc"
}
for f in "${qemu_files[@]}"; do
    check "QEMU checkpatch" "$f" qemu_checkpatch
done
for f in "${shell_files[@]}"; do
    check shellcheck "$f" shellcheck -x --source-path=SCRIPTDIR -f gcc
done

# patches/qemu: its findings are its FAIL lines
checked=$((checked + 1))
if ! out=$(python3 scripts/qemu-patches.py check patches/qemu --trees-in build "$qemu_src" 2>&1); then
    grep -v '^PASS ' <<< "$out" || true
    findings+=("qemu-patches: patches/qemu")
fi

# Calls go one way between the driver's files (guest-driver/README.md) and
# between the device's (docs/architecture.md).
check "call cycles" guest-driver scripts/call-cycles.py
check "call cycles" hw/rdma-sim scripts/call-cycles.py

# Scripts above tests: the tests are built on scripts/ (scripts/vm, the
# harness), never the other way.  upward FILE: FILE's lines that source or
# include a path into tests/.
# shellcheck disable=SC2317  # called through check
upward() {
    ! grep -nE '^[[:space:]]*(\.|source|-?include)[[:space:]]+[^#]*tests/' "$1"
}
mapfile -t user_files < <(files 'scripts/*' '*Makefile' '*.mk' | grep -v '^tests/')
for f in "${user_files[@]}"; do
    check "layers" "$f" upward
done

# One name, one place: no function is defined in two of the parts (device,
# driver, qtests, guest test programs), so grepping a name finds one thing.
# defined_names FILES...: names of the functions defined at column 0.
defined_names() {
    grep -hoP '^(?!static inline)[A-Za-z_][\w \*]*?\b\K[a-z_]\w*(?=\((?!.*;\s*$))' "$@" |
        grep -vxE '__attribute__|__section|__printf|main' | sort -u
}
parts=("hw/rdma-sim/*.[ch]" "guest-driver/*.[ch]" "tests/qtest/*.[ch]" "tests/vm/progs/*.c")
for ((i = 0; i < ${#parts[@]}; i++)); do
    for ((j = i + 1; j < ${#parts[@]}; j++)); do
        mapfile -t a < <(files "${parts[i]}")
        mapfile -t b < <(files "${parts[j]}")
        if [ ${#a[@]} -eq 0 ] || [ ${#b[@]} -eq 0 ]; then continue; fi
        checked=$((checked + 1))
        both=$(comm -12 <(defined_names "${a[@]}") <(defined_names "${b[@]}") | tr '\n' ' ')
        if [ -n "$both" ]; then
            echo "defined in both ${parts[i]} and ${parts[j]}: $both"
            findings+=("names: ${parts[i]} and ${parts[j]}")
        fi
    done
done

if [ ${#findings[@]} -eq 0 ]; then
    echo "lint: $checked checks, no findings"
    exit 0
fi
echo "lint: findings in ${#findings[@]} of $checked checks:"
printf '  %s\n' "${findings[@]}"
exit 1
