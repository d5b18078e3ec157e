/*
 * rdma-sim-server: checking vfio-user messages as they arrive, and the
 * VERSION handshake's capabilities
 *
 * A client is as untrusted as a guest: every size, count and descriptor
 * count of a message is checked here, before any of it is used, against
 * the command's layout (docs/interop/vfio-user.rst) and the server's limits
 * (vfio-user.h).  The capabilities are a JSON object, read with json.h's
 * bounded reader (to a bounded depth, never past the bytes it was given):
 * the counts the protocol defines, the rest passed over.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <string.h>
#include "json.h"
#include "vfu-msg.h"

/* The fixed part of each command's payload; 0: a command not served */
static size_t vfu_fixed_size(unsigned command)
{
    switch (command) {
    case VFU_VERSION:
        return sizeof(struct vfu_version);
    case VFU_DMA_MAP:
        return sizeof(struct vfu_dma_map);
    case VFU_DMA_UNMAP:
        return sizeof(struct vfu_dma_unmap);
    case VFU_DEVICE_GET_INFO:
        return sizeof(struct vfu_device_info);
    case VFU_DEVICE_GET_REGION_INFO:
        return sizeof(struct vfu_region_info);
    case VFU_DEVICE_GET_IRQ_INFO:
        return sizeof(struct vfu_irq_info);
    case VFU_DEVICE_SET_IRQS:
        return sizeof(struct vfu_irq_set);
    case VFU_REGION_READ:
    case VFU_REGION_WRITE:
        return sizeof(struct vfu_region_access);
    default:
        return 0;
    }
}

static int vfu_refuse(const char **why, const char *what, int err)
{
    *why = what;
    return err;
}

int vfu_msg_check(const struct vfu_header *h, const void *payload,
                  size_t payload_len, unsigned nfds, const char **why)
{
    size_t fixed = vfu_fixed_size(h->command);
    unsigned fds_max = 0;

    if ((h->flags & VFU_F_TYPE_MASK) != VFU_F_TYPE_COMMAND) {
        return vfu_refuse(why, "not a command", EINVAL);
    }
    if (h->flags & ~(VFU_F_TYPE_MASK | VFU_F_NO_REPLY)) {
        return vfu_refuse(why, "unknown header flags", EINVAL);
    }
    if (h->size != VFU_HEADER_SIZE + payload_len ||
        h->size > VFU_MAX_MESSAGE) {
        return vfu_refuse(why, "message size not what arrived, or too big",
                          EINVAL);
    }
    if (h->command == VFU_DEVICE_RESET) {
        return payload_len || nfds ?
               vfu_refuse(why, "DEVICE_RESET with a payload", EINVAL) : 0;
    }
    if (!fixed) {
        return vfu_refuse(why, "command not served", ENOTSUP);
    }
    if (payload_len < fixed) {
        return vfu_refuse(why, "payload shorter than the command's", EINVAL);
    }
    switch (h->command) {
    case VFU_VERSION:
        break;                  /* vfu_version_parse() reads the rest */
    case VFU_DMA_MAP:
        fds_max = 1;
        /* fall through */
    case VFU_DMA_UNMAP:
    case VFU_DEVICE_GET_INFO:
    case VFU_DEVICE_GET_REGION_INFO:
    case VFU_DEVICE_GET_IRQ_INFO:
        if (payload_len != fixed) {
            return vfu_refuse(why, "payload longer than the command's",
                              EINVAL);
        }
        break;
    case VFU_DEVICE_SET_IRQS: {
        const struct vfu_irq_set *s = payload;
        unsigned data = s->flags & VFU_IRQ_DATA_MASK;
        unsigned action = s->flags & VFU_IRQ_ACTION_ALL;
        size_t want = fixed;

        if ((s->flags & ~(VFU_IRQ_DATA_MASK | VFU_IRQ_ACTION_ALL)) ||
            !data || (data & (data - 1)) || !action ||
            (action & (action - 1))) {
            return vfu_refuse(why, "SET_IRQS flags not one data kind and one "
                              "action", EINVAL);
        }
        if (s->argsz != payload_len) {
            return vfu_refuse(why, "SET_IRQS argsz not its size", EINVAL);
        }
        if (s->count > VFU_MAX_XFER) {
            return vfu_refuse(why, "SET_IRQS count too big", EINVAL);
        }
        if (data == VFU_IRQ_DATA_BOOL) {
            want += s->count;
        } else if (data == VFU_IRQ_DATA_EVENTFD) {
            fds_max = MIN(s->count, VFU_MAX_FDS);
            if (nfds && nfds != s->count) {
                return vfu_refuse(why, "SET_IRQS eventfds not one per "
                                  "interrupt", EINVAL);
            }
        }
        if (payload_len != want) {
            return vfu_refuse(why, "SET_IRQS data not what its flags say",
                              EINVAL);
        }
        break;
    }
    case VFU_REGION_READ:
    case VFU_REGION_WRITE: {
        const struct vfu_region_access *a = payload;

        if (!a->count || a->count > VFU_MAX_XFER) {
            return vfu_refuse(why, "region access count 0 or above "
                              "max_data_xfer_size", EINVAL);
        }
        if (payload_len != fixed +
            (h->command == VFU_REGION_WRITE ? a->count : 0)) {
            return vfu_refuse(why, "region access data not its count",
                              EINVAL);
        }
        break;
    }
    }
    if (nfds > fds_max) {
        return vfu_refuse(why, "file descriptors the command does not take",
                          EINVAL);
    }
    return 0;
}

/*
 * The capabilities JSON
 */

#define VFU_JSON_DEPTH  8

/* A member of "capabilities" that the protocol gives a count */
static uint64_t *vfu_caps_field(VfuCaps *caps, const char *name)
{
    if (!strcmp(name, "max_msg_fds")) {
        return &caps->max_msg_fds;
    }
    if (!strcmp(name, "max_data_xfer_size")) {
        return &caps->max_data_xfer_size;
    }
    if (!strcmp(name, "pgsizes")) {
        return &caps->pgsizes;
    }
    if (!strcmp(name, "max_dma_maps")) {
        return &caps->max_dma_maps;
    }
    return NULL;
}

/* A member of "capabilities": a count the protocol defines, or passed over */
static bool vfu_caps_member(JsonReader *j, const char *key, void *opaque)
{
    uint64_t *field = vfu_caps_field(opaque, key);
    uint64_t v;
    bool is_uint;

    if (!field) {
        return json_value(j);
    }
    if (j->p == j->end || (*j->p != '-' && !g_ascii_isdigit(*j->p))) {
        return json_fail(j, "capabilities: a count that is not a number");
    }
    if (!json_number(j, &v, &is_uint)) {
        return false;
    }
    if (!is_uint) {
        return json_fail(j, "capabilities: a count that is not a "
                         "non-negative integer");
    }
    *field = v;
    return true;
}

/* A member of the top object: "capabilities" read, the others passed over */
static bool vfu_top_member(JsonReader *j, const char *key, void *opaque)
{
    if (strcmp(key, "capabilities")) {
        return json_value(j);
    }
    if (j->p == j->end || *j->p != '{') {
        return json_fail(j, "capabilities: \"capabilities\" is not an "
                         "object");
    }
    return json_object(j, vfu_caps_member, opaque);
}

int vfu_version_parse(const void *payload, size_t len, VfuCaps *caps,
                      const char **why)
{
    const struct vfu_version *v = payload;
    const char *json = (const char *)payload + sizeof(*v);
    size_t json_len;
    JsonReader j = { .max_depth = VFU_JSON_DEPTH };

    /* the protocol's defaults */
    *caps = (VfuCaps) {
        .max_msg_fds = 1,
        .max_data_xfer_size = VFU_MAX_XFER,
        .pgsizes = VFU_PAGE_SIZE,
        .max_dma_maps = 65535,
    };
    if (len < sizeof(*v)) {
        return vfu_refuse(why, "VERSION shorter than its version", EINVAL);
    }
    if (v->major != VFU_MAJOR) {
        return vfu_refuse(why, "VERSION: a major version other than 0",
                          ENOTSUP);
    }
    caps->minor = v->minor;
    json_len = len - sizeof(*v);
    if (!json_len) {
        return 0;
    }
    if (json_len > VFU_MAX_CAPS || strnlen(json, json_len) != json_len - 1) {
        return vfu_refuse(why, "VERSION: capabilities not one NUL-terminated "
                          "string of at most 4 KiB", EINVAL);
    }
    j.p = json;
    j.end = json + json_len - 1;
    json_ws(&j);
    if (j.p == j.end || *j.p != '{') {
        return vfu_refuse(why, "VERSION: capabilities not a JSON object",
                          EINVAL);
    }
    if (!json_object(&j, vfu_top_member, caps)) {
        return vfu_refuse(why, j.why, EINVAL);
    }
    json_ws(&j);
    if (j.p != j.end) {
        return vfu_refuse(why, "VERSION: bytes after the capabilities",
                          EINVAL);
    }
    if (!caps->max_msg_fds || !caps->max_data_xfer_size ||
        !(caps->pgsizes & VFU_PAGE_SIZE)) {
        return vfu_refuse(why, "VERSION: no descriptor, no transfer, or no "
                          "4 KiB pages", EINVAL);
    }
    return 0;
}

GByteArray *vfu_version_reply(uint16_t minor)
{
    struct vfu_version v = {
        .major = VFU_MAJOR, .minor = MIN(minor, VFU_MINOR),
    };
    g_autofree char *json = g_strdup_printf(
        "{\"capabilities\":{\"max_msg_fds\":%u,\"max_data_xfer_size\":%u,"
        "\"pgsizes\":%u,\"max_dma_maps\":%u}}", VFU_MAX_FDS, VFU_MAX_XFER,
        VFU_PAGE_SIZE, VFU_MAX_DMA_MAPS);
    GByteArray *b = g_byte_array_new();

    g_byte_array_append(b, (const guint8 *)&v, sizeof(v));
    g_byte_array_append(b, (const guint8 *)json, strlen(json) + 1);
    return b;
}
