/*
 * rdma-sim: the port's QEMU side - the NIC on QEMU's net layer
 *
 * QEMU hands received frames and link changes to the core's port
 * (port.c), which filters and dispatches them; the port's frames leave
 * through platform.c's rdma_sim_net_send().
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "device.h"

/*
 * Frames are accepted even without RX buffers: RoCE needs no buffers.
 * While the device is not ready rdma_sim_port_receive() drops them:
 * refusing them here would queue them in the backend, which then stops
 * delivering frames until a flush, and would hand stale frames over later.
 */
static bool rdma_sim_can_receive(NetClientState *nc)
{
    return true;
}

static ssize_t rdma_sim_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    rdma_sim_port_receive(qemu_get_nic_opaque(nc), buf, size);
    return size;
}

/* A backend link event: the port reports it */
static void rdma_sim_link_status_changed(NetClientState *nc)
{
    rdma_sim_port_link_changed(qemu_get_nic_opaque(nc));
}

#ifndef RDMA_SIM_UNPATCHED_QEMU
/*
 * The transport sends its frames from bottom halves, a window's worth at a
 * time: a UDP backend may send them together (patches/qemu/0002).  The
 * frames of a doorbell's own turn go at once (patches/qemu/0003).
 */
static bool rdma_sim_net_burst_tx(NetClientState *nc)
{
    RdmaSimState *s = qemu_get_nic_opaque(nc);

    return !s->xmit_at_once;
}
#endif

static NetClientInfo rdma_sim_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = rdma_sim_can_receive,
    .receive = rdma_sim_receive,
    .link_status_changed = rdma_sim_link_status_changed,
    /* make qemu-plain builds QEMU without our patches, which add the field */
#ifndef RDMA_SIM_UNPATCHED_QEMU
    .burst_tx = rdma_sim_net_burst_tx,
#endif
};

void rdma_sim_net_init(RdmaSimState *s, Error **errp)
{
    DeviceState *dev = DEVICE(s);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&rdma_sim_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
}

void rdma_sim_net_cleanup(RdmaSimState *s)
{
    if (s->nic) {
        qemu_del_nic(s->nic);
        s->nic = NULL;
    }
}
