/*
 * rdma-sim-server: the control socket (--control PATH) - the device's
 * view (introspect.c) in the small part of QMP that scripts/rdma-sim-top
 * speaks: qmp_capabilities, qom-list, qom-get
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_CONTROL_H
#define RDMA_SIM_SERVER_CONTROL_H

#include "device.h"

/* Clients at once; a request's line, its newline not counted */
#define CONTROL_MAX_CLIENTS     4
#define CONTROL_MAX_LINE        4096

typedef struct ControlClient ControlClient;

typedef struct ServerControl {
    RdmaSimState *s;
    const char *id;             /* the device's under /machine/peripheral */
    int listen_fd;              /* -1: none */
    guint listen_watch;
    ControlClient *clients[CONTROL_MAX_CLIENTS];
} ServerControl;

/*
 * Serve the device s, called id, to the clients of listen_fd (a listening
 * UNIX socket, which becomes the control's; -1: only attached clients)
 * from the default main context
 */
void server_control_init(ServerControl *c, RdmaSimState *s, const char *id,
                         int listen_fd);
/*
 * Serve a connected socket, which becomes the control's: false if it
 * serves CONTROL_MAX_CLIENTS already (the socket then has an error
 * reply, and is closed)
 */
bool server_control_attach(ServerControl *c, int fd);
/* Close every client and the listening socket */
void server_control_cleanup(ServerControl *c);

#endif /* RDMA_SIM_SERVER_CONTROL_H */
