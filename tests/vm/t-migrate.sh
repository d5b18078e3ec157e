#!/bin/bash
# VM test: live migration and snapshots of guests with RDMA traffic in
# flight. Passes (MIG_PASSES, default all of them):
#   pingpong   guest A runs the ibv_rc_pingpong -c server (received buffers
#              validated) against guest B; the host live-migrates A over QMP
#              to a new QEMU on this host (the same gN/qemu.sh with
#              -incoming unix:...), and 5 s later from there to a third;
#              over a lossy link (2% of the frames dropped, 2% reordered),
#              so that the retransmissions cross the switch-overs too
#   write-bw, read-bw   ib_write_bw / ib_read_bw -D: A (the server, the
#              responder) is migrated once
#   atomic     tests/vm/progs/atomic-check: every atomic's result checked,
#              so one executed twice or lost across the switch-over fails
#   both       A and B both run from RAM and both are migrated, B a few
#              seconds after A: the requester side moves too
#   snapshot   both saved at one moment (savevm as QMP snapshot-save), the
#              traffic goes on 5 s, both loaded (loadvm): the QPs go on
#              from the snapshot's PSNs and the pingpong ends validated
# A pass passes when both ends of the traffic exit 0 (guest B's client, in
# a normal guest, with its result line too), every migration or snapshot
# completed, neither device showed a QP in ERR or SQE afterwards and the
# moved device received at a quarter of its rate before at least
# (tests/vm/qmp-migrate watches them over QMP), and no kernel warning or
# oops. The log gets query-migrate's downtime,
# total-time and RAM transferred, the size of the device's section in the
# stream (pingpong: the source migrates through a relay that keeps a copy,
# exec:qmp-migrate --relay), and the snapshots' sizes and times.
#
# Why guest A is a "RAM-root" guest (vmtest_ramroot_initrd,
# scripts/vm/guest-ramroot-init): virtio-9p blocks migration and snapshots
# while a share is mounted, and the normal guests run from the host root
# over 9p. A runs from its initramfs and mounts `results` only at the end.
# B is a normal guest (tests/vm/guest/migrate.sh) unless it moves too.
# Why the multicast link: the default two-guest UDP link binds fixed ports,
# which the destination QEMU cannot bind while the source lives; on a
# multicast group both hear B. A QEMU that does not run (the destination
# waiting for its stream, the source once stopped) reads one frame and
# stops reading: its socket keeps the oldest of B's frames up to its
# buffer's size and drops the rest; the device gets them after the
# switch-over, stale duplicates that RC answers or drops, and RC resends
# what was dropped.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-migrate

# A run booted again after a boot hang (vm_run) would not be migrated:
# start_migration follows the first run only. A hang fails the pass.
export VM_BOOT_RETRY=0

atomic=$PWD/tests/vm/progs/atomic-check
[[ -x $atomic ]] || vmtest_fail "$atomic is not built (make -C tests/vm/progs atomic-check)"
limit=240
letters=(A B)

# ramroot_initrd OUT IP CMD [CONNECT_WAIT]: a RAM-root initrd that runs CMD
# (@DEV@, @GID@ filled in by the guest; its first word is the program, by
# its name: tests/vm/progs' or one in PATH).
ramroot_initrd() {
    local out=$1 conf=$1.conf prog
    prog=${3%% *}
    printf 'RR_IP=%q\nRR_CMD=%q\nRR_TIMEOUT=%q\nRR_CONNECT_WAIT=%q\n' "$2" "$3" 200 "${4:-0}" >"$conf"
    vmtest_ramroot_initrd "$out" "$conf" "$prog"
    rm -f "$conf"
}

mig_pids=() dest_pids=() initrds=()
# start_migration: called while the guests run (VMTEST_POLL); once the
# QEMUs have their QMP sockets, starts per migrated guest the destination
# QEMUs (waiting for their stream), one per hop, and tests/vm/qmp-migrate,
# which migrates when the traffic flows (or, snapshot, saves and loads).
# shellcheck disable=SC2317  # called through VMTEST_POLL
start_migration() {
    ((${#mig_pids[@]} == 0)) || return 0
    local run g k i settle peer=() stream=()
    run=$(echo "$VMTEST_RUNS"/*)
    [[ -S $run/g0/qmp.sock && -S $run/g1/qmp.sock ]] || return 0
    if [[ $mode == snapshot ]]; then
        tests/vm/qmp-migrate "$run/g0" --snapshot --peer "$run/g1" --json "$run/g0/migration.json" \
            >"$run/g0/migration.log" 2>&1 &
        mig_pids+=($!)
        return 0
    fi
    for i in $movers; do
        g=$run/g$i
        for ((k = 1; k <= hops; k++)); do
            # The console goes on in the same serial.log (append=on). timeout:
            # a QEMU that nothing ends (a killed test) does not outlive the run.
            # The pidfile names QEMU itself, not timeout, to the harness.
            timeout -k 5 "$((limit + 30))" "$g/qemu.sh" -chardev "file,id=ser0,path=$g/serial.log,append=on" -serial chardev:ser0 \
                -qmp "unix:$g/qmp-dest$k.sock,server=on,wait=off" -incoming "unix:$g/migrate$k.sock" \
                -pidfile "$g/qemu-dest$k.pid" </dev/null >"$g/qemu-dest$k.log" 2>&1 &
            dest_pids+=($!)
        done
        # B moves 4 s after A; only one client at a time can use a QMP
        # socket, so with two movers each watches its own QPs only.
        settle=$((2 + 4 * i)) peer=() stream=()
        [[ $movers == *" "* ]] || peer=(--peer "$run/g$((1 - i))")
        [[ $mode != pingpong ]] || stream=(--stream "$g/stream.bin")
        tests/vm/qmp-migrate "$g" "${dest_pids[@]: -hops}" --guest "${letters[i]}" --settle "$settle" "${peer[@]}" \
            "${stream[@]}" --json "$g/migration.json" >"$g/migration.log" 2>&1 &
        mig_pids+=($!)
    done
}
# shellcheck disable=SC2317  # called through VMTEST_CLEANUP and at the end
cleanup() {
    local p
    for p in "${mig_pids[@]}" "${dest_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -f "${initrds[@]}"
    mig_pids=() dest_pids=() initrds=() # empty for the next pass
}
trap cleanup EXIT

# check_record JSON HOPS GUEST [NEED_RATE]: the migrations' or the
# snapshot's record. The guest's device must receive after the switch-over
# at a quarter of its rate before, at least (NEED_RATE=1: and the traffic
# must have lasted to be measured, 5 s after the switch-over).
check_record() {
    python3 - "$@" <<'PY'
import json, sys
path, hops, guest = sys.argv[1], int(sys.argv[2]), sys.argv[3]
need_rate = len(sys.argv) > 4 and sys.argv[4] == "1"
try:
    m = json.load(open(path))
except OSError:
    sys.exit(f"FAIL: guest {guest}: no migration record (tests/vm/qmp-migrate stopped before "
             "migrating: see its log above)")
fail = []
for h in m["hops"]:
    q = h.get("query-migrate", {})
    ram = q.get("ram", {})
    print(f"guest {guest} hop {h['hop']}: status {h.get('status')}, downtime {q.get('downtime')} ms, "
          f"total-time {q.get('total-time')} ms, setup-time {q.get('setup-time')} ms, "
          f"RAM transferred {ram.get('transferred')} bytes of {ram.get('total')} "
          f"({ram.get('normal')} normal pages, {ram.get('duplicate')} zero pages)")
    sec = h.get("device-section")
    if sec:
        print(f"guest {guest} hop {h['hop']}: rdma-sim device section {sec['bytes']} bytes "
              f"({sec['idstr']}, version {sec['version']}; stream {sec['stream-bytes']} bytes)")
    if h.get("status") != "completed":
        fail.append(f"hop {h['hop']}: query-migrate ended {h.get('status')}, not completed")
if len(m["hops"]) != hops:
    fail.append(f"{len(m['hops'])} hops of {hops} were tried")
if hops == 0:
    for step in ("save", "load"):
        if step not in m:
            fail.append(f"no snapshot {step}")
        else:
            print(f"snapshot {step}: {m[step]}")
    print(f"snapshot VM state sizes (bytes): {m.get('vm-state-size')}")
    if m.get("status") != "completed":
        fail.append(f"snapshot: {m.get('status')}")
before, after = m.get("rx-rate-before"), m.get("rx-rates-after", [])
print(f"guest {guest}: RoCE packets received per second: {before and round(before)} before, "
      f"{after} after (every 5 s)")
if need_rate and not after:
    fail.append("no receive rate after the switch-over: the traffic ended within 5 s of it")
if after and before and max(after) < before / 4:
    fail.append(f"after the switch-over its device received at most {max(after)} RoCE packets/s, "
                f"under a quarter of the {round(before)} before: the traffic did not go on")
if m.get("qp-errors"):
    fail.append(f"QPs in error after the switch-over: {m['qp-errors']}")
if not any(k.startswith(f"{guest} QP") and "RTS" in v for k, v in m.get("qp-states-after", {}).items()):
    fail.append("its device never showed its QP in RTS after the switch-over: "
                "did the traffic go on?")
for f in fail:
    print(f"FAIL: guest {guest}: {f}")
sys.exit(1 if fail else 0)
PY
}

for pass in ${MIG_PASSES:-pingpong write-bw read-bw atomic both snapshot}; do
    # server: guest A's command (RAM root); client: B's, without A's address
    hops=1 movers=0 props='' mode=$pass need_rate=0
    case $pass in
    pingpong | both | snapshot)
        # Under TCG here an iteration takes 700 us (900 with loss; 2.4 ms
        # beside make check's other work): 20000 are 18 s of lossy traffic
        # or more, which flows before, during and after two hops (the
        # first 5 s in, the second 5 s after it: 12 s with their
        # switch-overs); a snapshot (saved, 5 s, loaded) needs fewer
        # (MIG_PINGPONG overrides, e.g. for KVM).  (30000 and 25000 until
        # make check neared its hour: their last 40 s tested nothing more.)
        n=20000
        case $pass in snapshot) n=15000 ;; esac
        args=${MIG_PINGPONG:-"-s 4096 -n $n -c"}
        server="ibv_rc_pingpong -d @DEV@ -g @GID@ $args" client="ibv_rc_pingpong $args"
        ;;
    write-bw | read-bw)
        tool=ib_${pass%-bw}_bw
        server="$tool -d @DEV@ -x @GID@ -F -s 65536 -D 12" client="$tool -s 65536 -D 12"
        need_rate=1 # -D: it ends 0 even if nothing moved after the switch-over
        ;;
    atomic)
        # for 12 s, as many as the host manages (24000 a second here)
        server="atomic-check -d @DEV@ -g @GID@" client="atomic-check -D ${MIG_ATOMIC_SECONDS:-12}"
        need_rate=1
        ;;
    *) vmtest_fail "unknown pass '$pass' (pingpong, write-bw, read-bw, atomic, both, snapshot)" ;;
    esac
    case $pass in
    pingpong) hops=2 props=$VMTEST_LOSSY,fault-seed=11 ;;
    both) movers="0 1" ;;
    snapshot) hops=0 ;;
    esac
    vmtest_pass "$pass" "$server"
    mkdir -p "$VMTEST_RUNS"
    # vmtest_run empties VMTEST_RUNS: the initrds wait beside it
    initrds=("$VMTEST_RUNS.a.cpio")
    ramroot_initrd "${initrds[0]}" 10.0.0.1/24 "$server"
    qargs=(--qemu-arg-a -initrd --qemu-arg-a "${initrds[0]}")
    if [[ $pass == both || $pass == snapshot ]]; then
        # B runs from RAM too (no 9p share may be mounted), as the client
        initrds+=("$VMTEST_RUNS.b.cpio")
        ramroot_initrd "${initrds[1]}" 10.0.0.2/24 "$server 10.0.0.1" 60
        qargs+=(--qemu-arg-b -initrd --qemu-arg-b "${initrds[1]}")
    fi
    RSIM_PROPS=$props VMTEST_POLL=start_migration VMTEST_CLEANUP=cleanup \
        vmtest_pair rsim rsim -t "$limit" --link mcast --qmp "${qargs[@]}" \
        -s tests/vm/guest/migrate.sh -e "MIG_CLIENT=$client"
    for p in "${mig_pids[@]}"; do
        wait "$p" || { echo "FAIL: tests/vm/qmp-migrate ended with an error (its log below)"; VMTEST_RC=1; }
    done
    ((${#mig_pids[@]} > 0)) || { echo "FAIL: the migration never started"; VMTEST_RC=1; }
    cleanup
    # the snapshots' images (~100 MB each) stay out of the logs
    rm -f "$VMTEST_RUN"/g[01]/snap.qcow2 "${RDMA_SIM_LOGDIR:-/nonexistent}"/g[01]/snap.qcow2
    # make check's copy of the run (vmtest_run) may predate qmp-migrate's end
    for i in 0 1; do
        g=$VMTEST_RUN/g$i
        [[ -z ${RDMA_SIM_LOGDIR:-} ]] || cp "$g"/migration.* "$RDMA_SIM_LOGDIR/g$i/" 2>/dev/null || true
        [[ -f $g/migration.log ]] || continue
        echo "---- guest $i: migration (host, $g/migration.log) ----"
        cat "$g/migration.log"
        echo "----"
    done
    for i in 0 1; do
        f=${VMTEST_RESULTS[i]:-}/output.log
        [[ -f $f ]] || continue
        echo "---- guest $i output ----"
        cat "$f"
        echo "----"
    done
    cat "${VMTEST_RESULTS[1]:-}/client.txt" 2>/dev/null || true
    # What the driver said, and no kernel warning, oops or BUG in either
    # guest (the runner and the RAM-root init save the kernel log).
    for i in 0 1; do
        f=${VMTEST_RESULTS[i]:-}/dmesg.log
        [[ -f $f ]] || continue
        if grep -qE 'WARNING:|BUG:|Oops|Call Trace' "$f"; then
            echo "FAIL: guest $i's kernel log has a warning or an oops ($f):"
            grep -E -A5 'WARNING:|BUG:|Oops' "$f" | head -n 40
            VMTEST_RC=1
        fi
    done
    if [[ $mode == snapshot ]]; then
        check_record "$VMTEST_RUN/g0/migration.json" 0 A || VMTEST_RC=1
    else
        for i in $movers; do
            check_record "$VMTEST_RUN/g$i/migration.json" "$hops" "${letters[i]}" "$need_rate" ||
                VMTEST_RC=1
        done
    fi
    vmtest_pass_done
done
trap - EXIT
vmtest_passes_done
