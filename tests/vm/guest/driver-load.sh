#!/bin/bash
# Guest side of tests/vm/t-driver-load.sh: load rdma_sim, check it binds,
# that `rdma link` shows the port ACTIVE with its netdev, and that
# `ibv_devinfo -v` shows rsim0 with the limits the device advertises.
# The host passes the device's properties as EXPECT_* variables.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_load 10.0.0.1/24

link=$(rdma link show rsim0/1)
gt_log "rdma link: $link"
[[ $link == *"netdev $GT_NETDEV"* ]] || gt_fail "rdma link does not name netdev $GT_NETDEV: $link"
[[ $(readlink -f "/sys/class/net/$GT_NETDEV/device") == $(readlink -f /sys/class/infiniband/rsim0/device) ]] ||
    gt_fail "netdev $GT_NETDEV and rsim0 do not share the PCI function"
drv=$(basename "$(readlink "/sys/class/net/$GT_NETDEV/device/driver")")
[[ $drv == rdma_sim ]] || gt_fail "$GT_NETDEV is driven by '$drv', not rdma_sim"

ibv_devinfo -v >/tmp/devinfo.txt 2>&1 || { cat /tmp/devinfo.txt; gt_fail "ibv_devinfo -v failed"; }
gt_save ibv_devinfo-v.txt </tmp/devinfo.txt
cat /tmp/devinfo.txt

# devinfo_value KEY: the value of "KEY:" in the ibv_devinfo output.
devinfo_value() {
    awk -v k="$1:" '$1 == k { print $2; exit }' /tmp/devinfo.txt
}
check_value() { # check_value KEY EXPECTED
    local got
    got=$(devinfo_value "$1")
    [[ $got == "$2" ]] || gt_fail "ibv_devinfo: $1 is '$got', the device advertises $2"
    gt_log "ok: $1 = $got"
}

[[ $(devinfo_value hca_id) == rsim0 ]] || gt_fail "ibv_devinfo does not show rsim0"
check_value transport InfiniBand
check_value link_layer Ethernet
check_value state PORT_ACTIVE
check_value vendor_id 0x1b36
check_value vendor_part_id 288
check_value max_qp "$EXPECT_MAX_QP"
check_value max_qp_wr "$EXPECT_MAX_QP_WR"
check_value max_sge "$EXPECT_MAX_SGE"
check_value max_cq "$EXPECT_MAX_CQ"
check_value max_cqe "$EXPECT_MAX_CQE"
check_value max_mr "$EXPECT_MAX_MR"
check_value max_pd "$EXPECT_MAX_PD"
check_value max_srq "$EXPECT_MAX_SRQ"
check_value max_ah "$EXPECT_MAX_AH"
check_value gid_tbl_len "$EXPECT_MAX_GID"
check_value max_mr_size 0x400000000
check_value page_size_cap 0x40201000
check_value num_comp_vectors "$(nproc)"
# One EQ per completion vector, each with its own interrupt, spread so that
# every CPU is served by exactly one of them (PCI_IRQ_AFFINITY).
eqs=/sys/kernel/debug/rdma_sim/$(basename "$(readlink -f /sys/class/infiniband/rsim0/device)")/eqs
[[ -r $eqs ]] || mount -t debugfs none /sys/kernel/debug
gt_save eqs.txt <"$eqs"
cat "$eqs"
[[ $(grep -c '^comp_vector ' "$eqs") == "$(nproc)" ]] || gt_fail "debugfs eqs lists $(grep -c '^comp_vector ' "$eqs") EQs for $(nproc) CPUs"
cpus=$(sed -n 's/.* cpus //p' "$eqs" | sort -n | paste -sd' ')
[[ $cpus == "$(seq -s' ' 0 $(($(nproc) - 1)))" ]] || gt_fail "completion vectors' CPUs are '$cpus', not one vector per CPU"
while read -r irq; do
    eff=$(cat "/proc/irq/$irq/smp_affinity_list")
    [[ $eff =~ ^[0-9]+$ ]] || gt_fail "IRQ $irq of a completion vector may run on CPUs $eff, not one CPU"
done < <(sed -n 's/.* irq \([0-9]*\) .*/\1/p' "$eqs")
gt_log "ok: $(nproc) completion vectors, one per CPU: $cpus"
check_value max_mtu 4096
check_value active_mtu 1024
# The node GUID is the EUI-64 of the port MAC.
mac=$(cat "/sys/class/net/$GT_NETDEV/address")
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
guid=$(printf '%02x%s:%s%s:%s%s:%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" ff fe "$m3" "$m4" "$m5")
check_value node_guid "$guid"
grep -q 'GID\[ *[0-9]*\]:.*::ffff:10.0.0.1, RoCE v2' /tmp/devinfo.txt ||
    gt_fail "no RoCE v2 GID ::ffff:10.0.0.1 for the netdev's address"
gt_log "ok: RoCE v2 GID for 10.0.0.1"

# RoCE GIDs follow the netdev's addresses (ADD_GID / DEL_GID).
has_gid() { cat /sys/class/infiniband/rsim0/ports/1/gids/* 2>/dev/null | gt_has ':ffff:0a00:004d$'; }
no_gid() { ! has_gid; }
ip addr add 10.0.0.77/24 dev "$GT_NETDEV"
gt_retry 5 has_gid || gt_fail "no GID for 10.0.0.77 after adding the address"
ip addr del 10.0.0.77/24 dev "$GT_NETDEV"
gt_retry 5 no_gid || gt_fail "the GID of 10.0.0.77 stayed after deleting the address"
dmesg | gt_has 'GID add failed' && gt_fail "the core logged a failed ADD_GID: $(dmesg | grep 'GID add failed' | head -n 1)"
gt_log "ok: GID of an added address appears, and goes with the address"

# The MAD layer's GSI QP (QP1) exists: registration created it.
rdma res show qp 2>/dev/null | gt_has 'lqpn 1 ' ||
    gt_fail "no GSI QP 1 on rsim0: $(rdma res show qp 2>&1 | tr '\n' ';')"
gt_log "ok: GSI QP 1 exists"
# Hardware counters come from QUERY_STATS.
rdma statistic show link rsim0/1 | gt_save rdma-statistic.txt
rdma statistic show link rsim0/1 | gt_has 'tx_frames' ||
    gt_fail "rdma statistic shows no device counters"
gt_log "ok: device counters: $(rdma statistic show link rsim0/1 | head -c 200)"

gt_check_dmesg
echo "driver-load: all checks passed"
