# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/run.sh - the run loop: guests booted, watched and ended, their
# devices read when one fails; vm_run, which does it all.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

vm_show_tail() { # vm_show_tail FILE LABEL
    echo "---- last 30 lines of $2 ($1) ----" >&2
    tail -n 30 "$1" 2>/dev/null | tr -d '\r' >&2
    echo "----" >&2
}

# vm_run_guests: boots the prepared guests of VM_RUN_DIR with serial consoles
# in gN/serial.log, waits for all with the VM_TIMEOUT limit and returns 0 if
# every guest script exited 0. A guest that fails ends the others after a
# short grace period. Logs are kept on failure, removed on success.
vm_run_guests() {
    local n=$VM_NGUESTS i g start now deadline rc=0 letter
    local -a exited=() tails=() killed=() adopted=()
    local p succ
    VM_PIDS=()
    # The guests' QMP sockets, unless --qmp asked for RUN/gN/qmp.sock: a
    # short path (a run dir's is often past the 107 bytes of a socket's).
    VM_QMP_DIR=
    if [[ $VM_QMP != 1 ]]; then VM_QMP_DIR=$(mktemp -d /tmp/rsim-qmp.XXXXXX); fi
    # Ends what we started if we are interrupted.
    trap 'for p in "${VM_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; vm_fabric_down; rm -rf "$VM_QMP_DIR"' EXIT
    trap 'exit 130' INT TERM
    start=$(date +%s.%N)
    deadline=$(($(date +%s) + VM_TIMEOUT))
    for ((i = 0; i < n; i++)); do
        g=$VM_RUN_DIR/g$i
        : >"$g/serial.log"
        "$g/qemu.sh" -serial "file:$g/serial.log" -qmp "unix:$(vm_qmp_socket "$i"),server=on,wait=off" \
            </dev/null >"$g/qemu.log" 2>&1 &
        VM_PIDS[i]=$!
        exited[i]=
        if [[ $VM_VERBOSE == 1 ]]; then
            # Follows the console until that QEMU exits.
            letter=$(vm_guest_letter "$i")
            tail -n +1 -F --pid="${VM_PIDS[i]}" "$g/serial.log" 2>/dev/null |
                sed -u "s/\r\$//; s/^/$letter| /" >&2 &
            tails+=($!)
        fi
    done

    local remaining=$n fail_at='' failed_first='' timed_out=0 st saved=''
    while ((remaining > 0)); do
        for ((i = 0; i < n; i++)); do
            [[ -n ${exited[i]} ]] && continue
            # A guest that failed waits for this before it powers off. Its
            # status file is read only once it exists: no subshell per guest
            # on every round of this loop.
            if [[ -z $saved && -s $VM_RUN_DIR/g$i/results/status &&
                $(<"$VM_RUN_DIR/g$i/results/status") != 0 ]]; then
                vm_save_devices "guest $(vm_guest_letter "$i") failed"
                saved=1
            fi
            if ! kill -0 "${VM_PIDS[i]}" 2>/dev/null; then
                if [[ -n ${adopted[i]:-} ]]; then
                    exited[i]=0 # not our child: its status is results/status
                elif wait "${VM_PIDS[i]}"; then exited[i]=0; else exited[i]=$?; fi
                # A live migration moved the guest to another QEMU, which
                # whoever started it named in gN/successor.pid before the
                # source QEMU quit: the guest lives on there (t-migrate.sh).
                succ=$(cat "$VM_RUN_DIR/g$i/successor.pid" 2>/dev/null || true)
                if [[ -n $succ && $succ != "${adopted[i]:-}" ]] && kill -0 "$succ" 2>/dev/null; then
                    vm_log "guest $(vm_guest_letter "$i") goes on in QEMU PID $succ (migrated)"
                    VM_PIDS[i]=$succ adopted[i]=$succ exited[i]=
                    if [[ $VM_VERBOSE == 1 ]]; then # the console goes on in the same file
                        letter=$(vm_guest_letter "$i")
                        tail -n 0 -F --pid="$succ" "$VM_RUN_DIR/g$i/serial.log" 2>/dev/null |
                            sed -u "s/\r\$//; s/^/$letter| /" >&2 &
                        tails+=($!)
                    fi
                    continue
                fi
                remaining=$((remaining - 1))
                st=$(cat "$VM_RUN_DIR/g$i/results/status" 2>/dev/null || echo none)
                if [[ $st != 0 && -z $fail_at ]]; then
                    fail_at=$(($(date +%s) + 10)) # grace for the others, then stop them
                    failed_first=$(vm_guest_letter "$i")
                fi
            fi
        done
        ((remaining == 0)) && break
        now=$(date +%s)
        if ((now >= deadline)) || { [[ -n $fail_at ]] && ((now >= fail_at)); }; then
            if ((now >= deadline)); then timed_out=1; else timed_out=2; fi
            if [[ -z $saved ]]; then
                vm_save_devices "$(if ((timed_out == 1)); then echo "the run timed out"; else echo "guest $failed_first failed"; fi)"
                saved=1
            fi
            for ((i = 0; i < n; i++)); do
                [[ -n ${exited[i]} ]] && continue
                killed[i]=1
                : >"$VM_RUN_DIR/g$i/killed" # for vm_guests_never_up
                kill "${VM_PIDS[i]}" 2>/dev/null || true
            done
            sleep 1
            for ((i = 0; i < n; i++)); do
                [[ -n ${exited[i]} ]] || kill -9 "${VM_PIDS[i]}" 2>/dev/null || true
            done
            fail_at=$((now + 3600)) deadline=$((now + 3600)) # kill only once
        fi
        sleep 0.2
    done
    trap - EXIT INT TERM
    vm_fabric_down
    rm -rf "$VM_QMP_DIR"
    for p in "${tails[@]}"; do wait "$p" || true; done # they end with their QEMU
    local end
    end=$(date +%s.%N)

    local summary=() t_script
    for ((i = 0; i < n; i++)); do
        g=$VM_RUN_DIR/g$i
        letter=$(vm_guest_letter "$i")
        st=$(cat "$g/results/status" 2>/dev/null || true)
        t_script=
        if [[ -f $g/results/started ]]; then
            t_script=$(awk -v a="$start" -v b="$(stat -c %.3Y "$g/results/started")" 'BEGIN { printf "%.1f", b - a }')
        fi
        if [[ $st == 0 ]]; then
            summary+=("guest $letter: passed${t_script:+ (script started ${t_script}s after launch)}")
        else
            rc=1
            if [[ -z $st ]]; then
                if [[ -n ${killed[i]:-} ]] && ((timed_out == 1)); then
                    summary+=("guest $letter: TIMEOUT: killed after ${VM_TIMEOUT}s (VM_TIMEOUT)")
                elif [[ -n ${killed[i]:-} ]]; then
                    summary+=("guest $letter: STOPPED: still running 10s after guest $failed_first failed")
                else
                    summary+=("guest $letter: FAILED: no status reported (QEMU exit ${exited[i]}; guest crashed, failed to boot or was stopped)")
                fi
            elif [[ -s $g/results/error ]]; then
                summary+=("guest $letter: FAILED: $(cat "$g/results/error")")
            elif [[ $st == 124 ]]; then
                summary+=("guest $letter: FAILED: guest script timed out")
            else
                summary+=("guest $letter: FAILED: guest script exit status $st")
            fi
        fi
    done
    VM_RUN_SECONDS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    for ((i = 0; i < n; i++)); do vm_log "${summary[i]}"; done
    if ((rc != 0)); then
        for ((i = 0; i < n; i++)); do
            g=$VM_RUN_DIR/g$i
            [[ $(cat "$g/results/status" 2>/dev/null) == 0 ]] && continue
            vm_show_tail "$g/serial.log" "guest $(vm_guest_letter "$i") serial console"
            if [[ -s $g/qemu.log ]]; then
                vm_show_tail "$g/qemu.log" "guest $(vm_guest_letter "$i") QEMU messages"
            fi
        done
        vm_log "run FAILED after ${VM_RUN_SECONDS}s; logs kept in $VM_RUN_DIR"
        vm_log "  gN/serial.log: console; gN/results/output.log: script output;"
        vm_log "  'gN/qemu.sh -serial mon:stdio' boots that guest again on your terminal"
    elif [[ $VM_KEEP == 1 ]]; then
        vm_log "run passed in ${VM_RUN_SECONDS}s; logs kept in $VM_RUN_DIR"
    else
        vm_log "run passed in ${VM_RUN_SECONDS}s"
        rm -rf "$VM_RUN_DIR"
    fi
    return "$rc"
}

# vm_qmp_socket INDEX: prints the path of guest INDEX's QMP socket.
vm_qmp_socket() {
    if [[ $VM_QMP == 1 ]]; then
        echo "$VM_RUN_DIR/g$1/qmp.sock"
    else
        echo "$VM_QMP_DIR/g$1.sock"
    fi
}

# vm_save_devices WHY: when a run fails, what the rdma-sim device of every
# guest whose QEMU still runs says of itself (scripts/rdma-sim-top over
# QMP): first a few lines each in the log ("vm: device B: ..."), then it
# tells every guest that it is done (results/device-saved: a guest whose
# script failed waits for that before it powers off, so its device is
# seen as the failure left it), then the whole views, in
# gN/device-at-failure.txt. 30 s at most in all: a QEMU that does not
# answer (stuck, or its QMP socket held by another client such as
# tests/vm/qmp-migrate: a socket serves one at a time) is not waited for.
vm_save_devices() {
    local i g sock letter out line start=$SECONDS top=$VM_REPO/scripts/rdma-sim-top
    local -a answered=()
    vm_log "the devices' state when $1 (scripts/rdma-sim-top --brief):"
    for ((i = 0; i < VM_NGUESTS; i++)); do
        sock=$(vm_qmp_socket "$i")
        letter=$(vm_guest_letter "$i")
        if [[ ! -S $sock ]] || ! kill -0 "${VM_PIDS[i]}" 2>/dev/null; then continue; fi
        if ((SECONDS - start >= 30)); then
            vm_log "device $letter: not read: the report's 30 s are spent"
        elif out=$(timeout 10 python3 "$top" --brief --timeout 3 --rows 6 "$sock" 2>&1); then
            while IFS= read -r line; do vm_log "device $letter: $line"; done <<<"$out"
            answered[i]=1
        elif [[ $out != *"no rdma-sim device"* ]]; then
            vm_log "device $letter: not read: ${out#rdma-sim-top: }"
        fi
    done
    for ((i = 0; i < VM_NGUESTS; i++)); do
        : >"$VM_RUN_DIR/g$i/results/device-saved" 2>/dev/null || true
    done
    for i in "${!answered[@]}"; do
        ((SECONDS - start < 30)) || break
        g=$VM_RUN_DIR/g$i
        timeout 10 python3 "$top" --once --timeout 3 --rows 1000 "$(vm_qmp_socket "$i")" \
            >"$g/device-at-failure.txt" 2>&1 || true
    done
}

# vm_run NAME: prepare everything and run the guests (N = number of scripts,
# at least 1, unless VM_NGUESTS (-n) says how many).
vm_run() {
    local name=${1:-run} n=${VM_NGUESTS:-}
    [[ -n $n ]] || n=${#VM_SCRIPTS[@]}
    ((n >= 1)) || vm_die "vm run: no guest script given (-s PATH)"
    vm_prepare
    vm_setup_run "$name" "$n"
    vm_log "booting $n guest(s) with $(basename "$QEMU") -accel $ACCEL (limit ${VM_TIMEOUT}s); run dir $VM_RUN_DIR"
    local i
    for ((i = 0; i < n; i++)); do
        vm_log "guest $(vm_guest_letter "$i"): QEMU $(cat "$VM_RUN_DIR/g$i/results/qemu-version") ($(vm_guest_qemu "$i")), Linux $(vm_guest_abi "$i")"
    done
    local rc=0 hung old
    vm_run_guests || rc=$?
    ((rc != 0)) || return 0
    # A guest whose console never shows the guest runner hung in its kernel
    # or initramfs, before any step of the test and before our driver
    # loads: CI once saw a TCG guest print nothing in 80 s while its peer
    # booted in 10 s. That says nothing about what the run tests, so the
    # run boots again, once, in a new run dir that keeps the first one's
    # logs in boot-hang/. A second hang fails the run. Only a guest that
    # the harness had to kill counts, after a run of at least 60 s (a boot
    # takes 10): a QEMU that exited by itself (the device model aborting,
    # say) or a peer stopped 10 s after a guest failed quickly is a
    # failure of the run, not a hang.
    hung=$(vm_guests_never_up)
    [[ -n $hung && ${VM_BOOT_RETRY:-1} == 1 ]] || return "$rc"
    vm_log "guest(s) $hung never reached the guest runner (no \"rsim: \" line on the console; an \"rsim-init:\" line there says the kernel at least booted): a hang before any test step; booting the run again, once (VM_BOOT_RETRY=0: not)"
    old=$VM_RUN_DIR
    vm_setup_run "$name" "$n"
    mv "$old" "$VM_RUN_DIR/boot-hang"
    vm_log "run dir $VM_RUN_DIR (the hung run's logs: boot-hang/)"
    vm_run_guests
}

# vm_guests_never_up: prints the letters of the guests of VM_RUN_DIR that
# the harness killed and whose console has no line of scripts/vm/guest-runner
# ("rsim: ..."), if the run lasted 60 s or more; else nothing.
vm_guests_never_up() {
    local i letters=()
    ((${VM_RUN_SECONDS%.*} >= 60)) || return 0
    for ((i = 0; i < VM_NGUESTS; i++)); do
        [[ -f $VM_RUN_DIR/g$i/killed ]] || continue
        grep -q '^rsim: ' "$VM_RUN_DIR/g$i/serial.log" 2>/dev/null ||
            letters+=("$(vm_guest_letter "$i")")
    done
    echo "${letters[*]}"
}
