#!/bin/bash
# Sourced by the guest scripts that test block storage over RDMA
# (nvme-rdma.sh, iser.sh): fio jobs that write with crc32c verification and
# fail on any error, verify failure or byte not written or read back.  Each
# job's JSON and a line in fio-summary.txt go to the results directory.

# fio_run NAME BS QD SIZE_MB OFFSET_MB [FIO-ARGS..]: random writes of
# SIZE_MB at OFFSET_MB of the block device $DEV, with crc32c verification
# of every block afterwards (or, with --verify_only, only the verification
# of what an earlier run of the same job wrote); fails unless all of it was
# written and verified.
fio_run() {
    local name=$1 bs=$2 qd=$3 mb=$4 off=$5 rc=0
    shift 5
    local json=$RSIM_RESULTS/fio-$name.json
    gt_log "fio $name: bs=$bs iodepth=$qd ${mb} MiB at ${off} MiB $*"
    timeout 300 fio --name=verify-"$bs"-"$qd" --filename="$DEV" --ioengine=libaio --direct=1 \
        --rw=randwrite --bs="$bs" --iodepth="$qd" --size="${mb}M" --offset="${off}M" \
        --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=1 \
        --output-format=json --output="$json" "$@" || rc=$?
    fio_check "$name" "$json" "$mb" "$rc" "$*"
}

# fio_check NAME JSON SIZE_MB RC ARGS: prints a summary of fio's JSON; fails
# on an error, a verify failure or bytes not written/read.
fio_check() {
    local line
    line=$(python3 - "$@" <<'EOF'
import json, sys
name, path, mb, rc, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    with open(path) as f:
        text = f.read()
    doc = json.loads(text[text.index("{"):])
except (OSError, ValueError) as e:
    sys.exit(f"fio {name}: exit {rc}, no JSON result ({e})")
job = doc["jobs"][0]
w, r = job["write"], job["read"]
want = mb << 20
wrote = w["io_bytes"]
if "--verify_only" in args:
    wmsg = "verify only"
else:
    wmsg = (f"wrote {wrote >> 20} MiB ({w['bw'] / 1024:.2f} MiB/s, {w['iops']:.0f} IOPS, "
            f"clat mean {w['clat_ns']['mean'] / 1000:.0f} us)")
msg = (f"fio {name}: exit {rc}, error {job['error']}, {wmsg}, "
       f"verified {r['io_bytes'] >> 20} MiB ({r['bw'] / 1024:.2f} MiB/s, {r['iops']:.0f} IOPS)")
print(msg)
bad = []
if rc != 0 or job["error"] != 0:
    bad.append("fio failed")
# With --verify_only fio counts the writes it only replays as written.
if wrote != want:
    bad.append(f"wrote {wrote} bytes, expected {want}")
if r["io_bytes"] != want:
    bad.append(f"verified {r['io_bytes']} bytes, expected {want}")
if bad:
    sys.exit(msg + ": " + "; ".join(bad))
EOF
    ) || gt_fail "$line"
    gt_log "$line"
    echo "$line" >>"$RSIM_RESULTS/fio-summary.txt"
}

# fio_matrix SCALE: the storage tests' verified writes: 4 KiB and 1 MiB at
# queue depths 1 and 32, SCALE MiB per 4 KiB job and 4 x SCALE per 1 MiB
# job, each in its own region of the first 256 MiB.
fio_matrix() {
    local scale=$1 t0=$SECONDS
    fio_run 4k-qd1 4k 1 "$scale" 0
    fio_run 4k-qd32 4k 32 "$scale" 32
    fio_run 1m-qd1 1m 1 $((scale * 4)) 64
    fio_run 1m-qd32 1m 32 $((scale * 4)) 128
    gt_log "fio verify jobs took $((SECONDS - t0))s"
}

# fio_reverify SCALE: what fio_matrix's QD 32 jobs wrote is still there.
fio_reverify() {
    fio_run 4k-qd32-reread 4k 32 "$1" 32 --verify_only
    fio_run 1m-qd32-reread 1m 32 $(($1 * 4)) 128 --verify_only
}

# first_disk SYSFS-DIR...: /dev/NAME of the first of the block devices
# given by their sysfs directories (a glob's expansion) that has a node.
first_disk() {
    local b
    for b in "$@"; do
        [[ -b /dev/${b##*/} ]] || continue
        echo "/dev/${b##*/}"
        return 0
    done
    return 1
}
