/*
 * rdma-sim-server: the device core's host outside QEMU - what
 * platform.h asks of a host, given by the server: guest memory through
 * the vfio-user client's DMA windows, MSI-X through its eventfds, timers
 * and deferred work on glib's main loop, frames over a UDP socket
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_HOST_H
#define RDMA_SIM_SERVER_HOST_H

#include <netinet/in.h>
#include "device.h"
#include "vfu-server.h"

typedef struct ServerHost {
    VfuServer vfu;
    int net_fd;                 /* the port's socket, -1: no network */
    struct sockaddr_in peer;    /* where frames go: the peer or the group */
    bool log_guest_errors;      /* -d guest_errors */
} ServerHost;

/* Before the first DMA: a window's lost pages fail a copy, not the server */
void server_host_init(void);

/* Turn on the trace events whose names match pattern (* and ?): any? */
bool server_trace_enable(const char *pattern);

static inline ServerHost *server_host(RdmaSimState *s)
{
    return s->host;
}

#endif /* RDMA_SIM_SERVER_HOST_H */
