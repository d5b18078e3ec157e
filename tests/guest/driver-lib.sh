# shellcheck shell=bash disable=SC2034  # variables are for the scripts that source it
# tests/guest/driver-lib.sh - guest-side helpers of the driver VM tests
# (tests/vm/t-driver-*.sh).  Sourced by the tests/guest/vm-*.sh scripts,
# which run inside a test guest (tests/vm/guest-runner) from the repository
# root; tests/vm/guest-lib.sh is sourced first for rsim_log/rsim_fail.

DRV_KO=${DRV_KO:-$RSIM_REPO/guest-driver/rdma_sim.ko}
DRV_PCI_ID=1b36:0120
VERBS_TEST=$RSIM_REPO/tests/vm/progs/verbs-test

# drv_pci_dev: prints the PCI address of the (first) rdma-sim function.
drv_pci_dev() {
    local d
    for d in /sys/bus/pci/devices/*; do
        if [[ $(<"$d/vendor") == 0x1b36 && $(<"$d/device") == 0x0120 ]]; then
            echo "${d##*/}"
            return 0
        fi
    done
    return 1
}

# drv_load: modprobes the RDMA core modules the driver needs, insmods it and
# waits until it is bound to the device and rsim0 exists.
drv_load() {
    local bdf i
    bdf=$(drv_pci_dev) || rsim_fail "no rdma-sim PCI function ($DRV_PCI_ID) in the guest: lspci: $(lspci -n 2>&1 | tr '\n' ';')"
    [[ -f $DRV_KO ]] || rsim_fail "$DRV_KO not built (make -C guest-driver)"
    modprobe -a ib_core ib_uverbs || rsim_fail "modprobe ib_core ib_uverbs failed"
    insmod "$DRV_KO" || rsim_fail "insmod $DRV_KO failed: $(dmesg | tail -n 5 | tr '\n' ';')"
    for ((i = 0; i < 100; i++)); do
        [[ -e /sys/bus/pci/drivers/rdma_sim/$bdf && -e /sys/class/infiniband/rsim0 ]] && break
        sleep 0.1
    done
    [[ -e /sys/bus/pci/drivers/rdma_sim/$bdf ]] ||
        rsim_fail "rdma_sim did not bind $bdf: $(dmesg | grep -i rdma_sim | tail -n 5 | tr '\n' ';')"
    [[ -e /sys/class/infiniband/rsim0 ]] ||
        rsim_fail "rdma_sim bound $bdf but registered no rsim0 (infiniband: $(ls /sys/class/infiniband 2>&1))"
    DRV_BDF=$bdf
    rsim_log "rdma_sim bound to $bdf, RDMA device rsim0"
}

# drv_unload: rmmod within a time limit (a hang is a failure, not a stall).
drv_unload() {
    local limit=${1:-60} t0
    t0=$SECONDS
    timeout "$limit" rmmod rdma_sim ||
        rsim_fail "rmmod rdma_sim failed or hung for ${limit}s: $(dmesg | tail -n 8 | tr '\n' ';')"
    [[ ! -e /sys/module/rdma_sim ]] || rsim_fail "rdma_sim still loaded after rmmod"
    [[ ! -e /sys/class/infiniband/rsim0 ]] || rsim_fail "rsim0 still exists after rmmod"
    rsim_log "rmmod rdma_sim took $((SECONDS - t0))s"
}

# drv_netdev: prints the net_device of rsim0 (the one sharing its PCI parent).
drv_netdev() {
    local n
    for n in /sys/class/infiniband/rsim0/device/net/*; do
        [[ -e $n ]] && { echo "${n##*/}"; return 0; }
    done
    return 1
}

# drv_net_up ADDR/LEN: brings rsim0's netdev up with that address and waits
# until the RDMA port is ACTIVE and has a RoCE v2 GID for it.
drv_net_up() {
    local addr=$1 nd i
    nd=$(drv_netdev) || rsim_fail "rsim0 has no net_device under /sys/class/infiniband/rsim0/device/net"
    ip link set "$nd" up || rsim_fail "ip link set $nd up"
    ip addr add "$addr" dev "$nd" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        rdma link show rsim0/1 2>/dev/null | grep -q 'state ACTIVE' &&
            grep -qs "0000:0000:0000:0000:0000:ffff:" /sys/class/infiniband/rsim0/ports/1/gids/* && break
        sleep 0.1
    done
    rdma link show rsim0/1 | grep -q 'state ACTIVE' ||
        rsim_fail "port rsim0/1 not ACTIVE after $nd up: $(rdma link show rsim0/1)"
    DRV_NETDEV=$nd
    rsim_log "$nd is up as $addr; $(rdma link show rsim0/1)"
}

# drv_check_dmesg: fails on an oops, a WARN, a BUG, a lockdep or KASAN report.
drv_check_dmesg() {
    local bad
    bad=$(dmesg | grep -E 'Oops|BUG:|WARNING:|Call Trace|general protection|kernel NULL pointer|UBSAN|KASAN|refcount_t:|possible circular locking|INFO: task .* blocked' || true)
    if [[ -n $bad ]]; then
        dmesg | tail -n 80
        rsim_fail "kernel log has errors: $(head -n 3 <<<"$bad" | tr '\n' ';')"
    fi
    rsim_log "kernel log: no oops, WARN or BUG"
}

# drv_save NAME: copies stdin to the results share (kept in the test's log).
drv_save() {
    tee "$RSIM_RESULTS/$1" >/dev/null
}
