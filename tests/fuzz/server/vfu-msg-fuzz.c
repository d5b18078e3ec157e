/*
 * libFuzzer target vfu-msg: rdma-sim-server's checks of a vfio-user
 * client's messages (server/vfu-msg.c), fed what a hostile client may
 * send.  An input is a message as it arrives: the 16-byte header, then
 * the payload; its first byte, before them, is the number of descriptors
 * that came with it.  A message the checks pass is read as the server
 * reads it: a VERSION's capabilities parsed, a SET_IRQS's data and a
 * region write's bytes touched to their end (ASan sees a read past what
 * arrived).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <string.h>
#include "vfu-msg.h"

/* what the reads of the payload add up to: kept, so they are not dropped */
static volatile unsigned vfu_fuzz_sum;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vfu_header h;
    const char *why;
    uint8_t *payload;
    size_t n;
    unsigned sum = 0;
    VfuCaps caps;

    if (size < 1 + sizeof(h)) {
        return 0;
    }
    memcpy(&h, data + 1, sizeof(h));
    n = size - 1 - sizeof(h);
    /* a copy of exactly what arrived, so that ASan sees reads beyond it */
    payload = g_memdup2(data + 1 + sizeof(h), n);
    if (!vfu_msg_check(&h, payload, n, data[0], &why)) {
        if (h.command == VFU_VERSION) {
            vfu_version_parse(payload, n, &caps, &why);
        } else if (h.command == VFU_DEVICE_SET_IRQS) {
            const struct vfu_irq_set *s = (const void *)payload;

            for (size_t i = sizeof(*s); i < s->argsz; i++) {
                sum += payload[i];
            }
        } else if (h.command == VFU_REGION_WRITE) {
            const struct vfu_region_access *a = (const void *)payload;

            for (size_t i = 0; i < a->count; i++) {
                sum += payload[sizeof(*a) + i];
            }
        }
    }
    g_free(payload);
    vfu_fuzz_sum += sum;
    return 0;
}
