/*
 * rdma-sim-server: checking vfio-user messages as they arrive, and the
 * VERSION handshake's capabilities - pure functions of the bytes, so that
 * the unit tests and the fuzz target run them as the server does
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_VFU_MSG_H
#define RDMA_SIM_SERVER_VFU_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <glib.h>
#include "vfio-user.h"

/*
 * A client's message as received: its header is sound, its size is what
 * arrived, its payload holds the command's fixed part and what that says
 * follows, and it came with the descriptors the command may carry.
 * Returns 0, or the errno its error reply carries; *why says what was
 * wrong, for the log.
 */
int vfu_msg_check(const struct vfu_header *h, const void *payload,
                  size_t payload_len, unsigned nfds, const char **why);

/*
 * What the client proposed: its minor version, and what it can take (the
 * protocol's defaults if unsaid)
 */
typedef struct VfuCaps {
    uint16_t minor;
    uint64_t max_msg_fds;
    uint64_t max_data_xfer_size;
    uint64_t pgsizes;
    uint64_t max_dma_maps;
} VfuCaps;

/*
 * The client's VERSION message: its version and capabilities (the
 * payload after the fixed part, a NUL-terminated JSON object).  Returns
 * 0 and *caps, or an errno; the server then closes the connection.
 */
int vfu_version_parse(const void *payload, size_t len, VfuCaps *caps,
                      const char **why);

/*
 * This server's VERSION reply to a client that proposed minor version
 * minor: its payload (the version - the lower minor of the two, as the
 * protocol wants - then the JSON)
 */
GByteArray *vfu_version_reply(uint16_t minor);

#endif /* RDMA_SIM_SERVER_VFU_MSG_H */
