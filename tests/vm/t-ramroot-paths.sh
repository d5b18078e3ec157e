#!/bin/bash
# Harness test (no guest boots): a RAM-root initramfs (vmtest_ramroot_initrd,
# what t-migrate's live-migrated guests run from) does not depend on where
# the checkout lies.  It is made here with the repository entered through a
# symlink under /tmp, as from a clone under /tmp: the guest mounts a tmpfs
# on /tmp (scripts/vm/guest-ramroot-init), which hid a program put at its host
# path there ("can't execute .../tests/vm/progs/atomic-check").  The
# initramfs must hold the programs in /ramroot/bin, where the guest's PATH
# finds them, and nothing under /tmp.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-ramroot-paths
repo=$PWD

link=$(mktemp -u /tmp/rsim-checkout.XXXXXX)
ln -s "$repo" "$link"
out=$(mktemp /tmp/ramroot-paths.XXXXXX)
trap 'rm -f "$link" "$out" "$out.conf"' EXIT
cd "$link"
printf 'RR_IP=10.0.0.1/24\nRR_CMD=%q\nRR_TIMEOUT=10\nRR_CONNECT_WAIT=0\n' \
    'atomic-check -d @DEV@ -g @GID@' >"$out.conf"
vmtest_ramroot_initrd "$out" "$out.conf" "$link/tests/vm/progs/atomic-check" ibv_rc_pingpong
cd "$repo"

# Every name in the two archives the file holds (the base initramfs and
# the one appended), newc format.
files=$(python3 - "$out" <<'EOF'
import sys
# newc cpio archives, one after the other: list every name
data = open(sys.argv[1], 'rb').read()
pos = 0
while pos + 110 <= len(data):
    if data[pos:pos + 6] != b'070701':
        pos += 1
        continue
    namesize = int(data[pos + 94:pos + 102], 16)
    filesize = int(data[pos + 54:pos + 62], 16)
    name = data[pos + 110:pos + 110 + namesize - 1].decode()
    if name != 'TRAILER!!!':
        print(name)
    pos = (pos + 110 + namesize + 3) & ~3
    pos = (pos + filesize + 3) & ~3
EOF
)
rc=0
for want in ramroot/bin/atomic-check ramroot/bin/ibv_rc_pingpong ramroot/conf init; do
    grep -qx "$want" <<<"$files" || { echo "t-ramroot-paths: the initramfs has no $want"; rc=1; }
done
if grep -E '^tmp(/|$)' <<<"$files"; then
    echo "t-ramroot-paths: the initramfs puts the files above under /tmp, which the guest's tmpfs hides"
    rc=1
fi
((rc)) || echo "t-ramroot-paths: made through $link: programs in /ramroot/bin, nothing under /tmp ($(wc -l <<<"$files") files)"
vmtest_done "$rc"
