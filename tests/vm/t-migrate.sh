#!/bin/bash
# VM test: live migration of a guest with RDMA traffic in flight.
#
# Guests A and B (rdma-sim each) run ibv_rc_pingpong -c (received buffers
# validated) against each other; while it runs the host live-migrates A over
# QMP to a new QEMU on this host (the same gN/qemu.sh with -incoming
# unix:...), waits for query-migrate's "completed", quits the source and the
# destination carries on; 5 s later, A moves on to a third QEMU the same way
# (MIG_HOPS=2). Passes when both pingpong ends exit 0, every
# migration completed, and neither device showed a QP in ERR or SQE after
# the switch-over (tests/vm/qmp-migrate watches both over QMP). The log gets
# query-migrate's downtime, total-time and RAM transferred, and the size of
# the device's section in the stream (the source migrates through a relay
# that keeps a copy: exec:qmp-migrate --relay, into the destination's
# unix socket).
#
# Why guest A is a "RAM-root" guest (vmtest_ramroot_initrd,
# tests/vm/guest-ramroot-init): virtio-9p blocks migration while a share is
# mounted, and the normal guests run from the host root over 9p. A runs from
# its initramfs and mounts `results` only after the pingpong. B is a normal
# guest (it is not migrated).
# Why the multicast link: the default two-guest UDP link binds fixed ports,
# which the destination QEMU cannot bind while the source lives; on a
# multicast group both hear B (the destination drops what arrives before it
# runs, and RC retransmits it).
set -euo pipefail
# shellcheck source=tests/vm/test-lib.sh
. "$(dirname "$0")/test-lib.sh"
vmtest_init t-migrate

# ~28 s of traffic under TCG here (700 us an iteration), so that it flows
# before, during and well after the migration, which starts ~4 s into it and
# takes ~1 s (MIG_PINGPONG overrides, e.g. for KVM).
pingpong=${MIG_PINGPONG:-"-s 4096 -n 40000 -c"}
# Two hops: A to a second QEMU, 5 s later from there to a third.
hops=${MIG_HOPS:-2}

rm -rf "$VMTEST_RUNS"
mkdir -p "$VMTEST_RUNS"
conf=$VMTEST_RUNS/ramroot.conf
initrd=$VMTEST_RUNS/initrd-a.cpio
# shellcheck disable=SC2016  # @DEV@, @GID@ are the init's to fill in
printf 'RR_IP=%q\nRR_CMD=%q\nRR_TIMEOUT=%q\n' 10.0.0.1/24 \
    "ibv_rc_pingpong -d @DEV@ -g @GID@ $pingpong" 200 >"$conf"
vmtest_ramroot_initrd "$initrd" "$conf" ibv_rc_pingpong
# vmtest_run empties VMTEST_RUNS: the initrd waits beside it (and is
# removed at the end: the test builds it every time).
mv "$initrd" "$VMTEST_RUNS.initrd-a.cpio"
initrd=$VMTEST_RUNS.initrd-a.cpio

mig_pid='' dest_pids=()
# start_migration: called while the guests run; once guest A's QEMU has its
# QMP socket, starts the destination QEMUs (waiting for their stream), one
# per hop, and tests/vm/qmp-migrate, which migrates when the traffic flows.
# The second hop migrates a device that was itself restored from a stream.
# shellcheck disable=SC2317  # called through VMTEST_POLL
start_migration() {
    [[ -z $mig_pid ]] || return 0
    local g k
    g=$(echo "$VMTEST_RUNS"/*/g0)
    [[ -S $g/qmp.sock && -S ${g%/g0}/g1/qmp.sock ]] || return 0
    for ((k = 1; k <= hops; k++)); do
        # The console goes on in the same serial.log (append=on). timeout:
        # a QEMU that nothing ends (a killed test) does not outlive the run.
        timeout -k 5 "$((limit + 30))" "$g/qemu.sh" -chardev "file,id=ser0,path=$g/serial.log,append=on" -serial chardev:ser0 \
            -qmp "unix:$g/qmp-dest$k.sock,server=on,wait=off" -incoming "unix:$g/migrate$k.sock" \
            </dev/null >"$g/qemu-dest$k.log" 2>&1 &
        dest_pids+=($!)
    done
    tests/vm/qmp-migrate "$g" "${dest_pids[@]}" --peer "${g%/g0}/g1" --json "$g/migration.json" \
        --stream "$g/stream.bin" >"$g/migration.log" 2>&1 &
    mig_pid=$!
}
cleanup() {
    local p
    for p in $mig_pid "${dest_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -f "$initrd"
}
trap cleanup EXIT

start=$SECONDS
limit=240
VMTEST_POLL=start_migration VMTEST_CLEANUP=cleanup vmtest_pair rsim rsim -t "$limit" --link mcast --qmp \
    --qemu-arg-a -initrd --qemu-arg-a "$initrd" \
    -s tests/vm/guest/migrate.sh -e "MIG_PINGPONG=$pingpong"
mig_rc=0
if [[ -n $mig_pid ]]; then
    wait "$mig_pid" || mig_rc=$?
else
    mig_rc=1
fi
trap - EXIT
cleanup
g=$VMTEST_RUN/g0
# make check's copy of the run (vmtest_run) may predate qmp-migrate's end.
if [[ -n ${RDMA_SIM_LOGDIR:-} ]]; then
    cp "$g"/migration.* "$RDMA_SIM_LOGDIR/g0/" 2>/dev/null || true
fi
echo "---- migration (host, $g/migration.log) ----"
cat "$g/migration.log" 2>/dev/null || echo "(none: the migration never started)"
echo "----"
echo "---- guest A (RAM root) ----"
cat "${VMTEST_RESULTS[0]}/output.log" 2>/dev/null || echo "(no output.log)"
echo "----"
echo "---- guest B ----"
cat "${VMTEST_RESULTS[1]}/pingpong.txt" 2>/dev/null || echo "(no pingpong.txt)"
echo "----"
vmtest_counters migrate
# What the driver said, and no kernel warning, oops or BUG in either guest
# (guest B's runner and guest A's init save the kernel log at power off).
for i in 0 1; do
    f=${VMTEST_RESULTS[i]:-}/dmesg.log
    [[ -f $f ]] || continue
    echo "---- guest $i kernel messages of rdma_sim ----"
    grep -E 'rdma_sim|rsim0' "$f" | tail -n 20
    echo "----"
    if grep -qE 'WARNING:|BUG:|Oops|Call Trace' "$f"; then
        echo "FAIL: guest $i's kernel log has a warning or an oops ($f):"
        grep -E -A5 'WARNING:|BUG:|Oops' "$f" | head -n 40
        VMTEST_RC=1
    fi
done
if ((mig_rc != 0)); then
    echo "FAIL: the migration did not complete (tests/vm/qmp-migrate exit $mig_rc)"
    VMTEST_RC=1
fi
if ! python3 - "$g/migration.json" "$hops" <<'PY'; then
import json, sys
try:
    m = json.load(open(sys.argv[1]))
except OSError:
    sys.exit("FAIL: no migration record (tests/vm/qmp-migrate stopped before migrating: "
             "see its log above)")
fail = []
for h in m["hops"]:
    q = h.get("query-migrate", {})
    ram = q.get("ram", {})
    print(f"migration hop {h['hop']}: status {h.get('status')}, downtime {q.get('downtime')} ms, "
          f"total-time {q.get('total-time')} ms, setup-time {q.get('setup-time')} ms, "
          f"RAM transferred {ram.get('transferred')} bytes of {ram.get('total')} "
          f"({ram.get('normal')} normal pages, {ram.get('duplicate')} zero pages)")
    sec = h.get("device-section")
    if sec:
        print(f"migration hop {h['hop']}: rdma-sim device section {sec['bytes']} bytes "
              f"({sec['idstr']}, version {sec['version']}; stream {sec['stream-bytes']} bytes)")
    else:
        print(f"migration hop {h['hop']}: rdma-sim device section not measured (see migration.log)")
    if h.get("status") != "completed":
        fail.append(f"hop {h['hop']}: query-migrate ended {h.get('status')}, not completed")
if len(m["hops"]) != int(sys.argv[2]):
    fail.append(f"{len(m['hops'])} hops of {sys.argv[2]} were tried")
if m.get("qp-errors"):
    fail.append(f"QPs in error after the switch-over: {m['qp-errors']}")
if not any(k.startswith("A QP") and "RTS" in v for k, v in m.get("qp-states-after", {}).items()):
    fail.append("the destination device never showed guest A's QP in RTS: "
                "did the traffic go on after the switch-over?")
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
    VMTEST_RC=1
fi
echo "test wall time: $((SECONDS - start))s"
vmtest_done "$VMTEST_RC"
