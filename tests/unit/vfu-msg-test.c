/* server: vfu-msg.c json.c */
/*
 * Unit tests of rdma-sim-server's checks of what a vfio-user client sends
 * (server/vfu-msg.c): message headers and payloads, and the VERSION
 * handshake's capabilities, sound and hostile.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <string.h>
#include "vfu-msg.h"

/* Check a command with payload p of n bytes and nfds descriptors */
static int check(unsigned command, const void *p, size_t n, unsigned nfds)
{
    struct vfu_header h = {
        .id = 7, .command = command, .size = VFU_HEADER_SIZE + n,
    };
    const char *why = NULL;
    int err = vfu_msg_check(&h, p, n, nfds, &why);

    g_assert_true(!err == !why);
    return err;
}

/* Every command the server serves, as QEMU's client sends it */
static void test_sound(void)
{
    struct vfu_dma_map map = { .argsz = sizeof(map), .flags = 3,
                               .address = 0x100000, .size = 0x200000 };
    struct vfu_dma_unmap unmap = { .argsz = sizeof(unmap) };
    struct vfu_device_info info = { .argsz = sizeof(info) };
    struct vfu_region_info region = { .argsz = sizeof(region), .index = 7 };
    struct vfu_irq_info irq = { .argsz = sizeof(irq), .index = 2 };
    struct {
        struct vfu_irq_set s;
        uint8_t data[4];
    } set = { .s = { .flags = VFU_IRQ_DATA_BOOL | VFU_IRQ_ACTION_MASK,
                     .index = VFU_PCI_MSIX, .count = 4 } };
    struct {
        struct vfu_region_access a;
        uint32_t data;
    } wr = { .a = { .offset = 0x14, .region = 0, .count = 4 } };
    struct vfu_version ver = { .major = 0, .minor = 1 };

    set.s.argsz = sizeof(set);
    g_assert_cmpint(check(VFU_VERSION, &ver, sizeof(ver), 0), ==, 0);
    g_assert_cmpint(check(VFU_DMA_MAP, &map, sizeof(map), 1), ==, 0);
    g_assert_cmpint(check(VFU_DMA_MAP, &map, sizeof(map), 0), ==, 0);
    g_assert_cmpint(check(VFU_DMA_UNMAP, &unmap, sizeof(unmap), 0), ==, 0);
    g_assert_cmpint(check(VFU_DEVICE_GET_INFO, &info, sizeof(info), 0), ==, 0);
    g_assert_cmpint(check(VFU_DEVICE_GET_REGION_INFO, &region,
                          sizeof(region), 0), ==, 0);
    g_assert_cmpint(check(VFU_DEVICE_GET_IRQ_INFO, &irq, sizeof(irq), 0), ==,
                    0);
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set), 0), ==, 0);
    g_assert_cmpint(check(VFU_REGION_WRITE, &wr, sizeof(wr.a) + 4, 0), ==, 0);
    g_assert_cmpint(check(VFU_REGION_READ, &wr.a, sizeof(wr.a), 0), ==, 0);
    g_assert_cmpint(check(VFU_DEVICE_RESET, NULL, 0, 0), ==, 0);

    /* MSI-X eventfds: one per vector, or none (de-assign) */
    set.s.flags = VFU_IRQ_DATA_EVENTFD | VFU_IRQ_ACTION_TRIGGER;
    set.s.argsz = sizeof(set.s);
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set.s, sizeof(set.s), 4), ==,
                    0);
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set.s, sizeof(set.s), 0), ==,
                    0);
}

/* What a hostile or broken client may send: each refused with its errno */
static void test_hostile(void)
{
    struct vfu_header h = { .command = VFU_DEVICE_RESET, .size = 16 };
    struct vfu_dma_map map = { .argsz = sizeof(map) };
    struct {
        struct vfu_irq_set s;
        uint8_t data[8];
    } set = { .s = { .flags = VFU_IRQ_DATA_BOOL | VFU_IRQ_ACTION_MASK,
                     .count = 4 } };
    struct {
        struct vfu_region_access a;
        uint8_t data[8];
    } wr = { .a = { .count = 4 } };
    const char *why;

    /* a reply, unknown flags, a size that is not what arrived */
    h.flags = VFU_F_TYPE_REPLY;
    g_assert_cmpint(vfu_msg_check(&h, NULL, 0, 0, &why), ==, EINVAL);
    h.flags = 1u << 7;
    g_assert_cmpint(vfu_msg_check(&h, NULL, 0, 0, &why), ==, EINVAL);
    h.flags = VFU_F_NO_REPLY;
    g_assert_cmpint(vfu_msg_check(&h, NULL, 0, 0, &why), ==, 0);
    h.size = 17;
    g_assert_cmpint(vfu_msg_check(&h, NULL, 0, 0, &why), ==, EINVAL);
    h.size = UINT32_MAX;
    g_assert_cmpint(vfu_msg_check(&h, NULL, UINT32_MAX - 16, 0, &why), ==,
                    EINVAL);

    /* commands not served, and unknown ones */
    g_assert_cmpint(check(VFU_DEVICE_GET_REGION_IO_FDS, &map, 16, 0), ==,
                    ENOTSUP);
    g_assert_cmpint(check(VFU_REGION_WRITE_MULTI, &map, 16, 0), ==, ENOTSUP);
    g_assert_cmpint(check(VFU_DMA_READ, &map, 16, 0), ==, ENOTSUP);
    g_assert_cmpint(check(0, NULL, 0, 0), ==, ENOTSUP);
    g_assert_cmpint(check(0xffff, NULL, 0, 0), ==, ENOTSUP);

    /* short or long payloads; descriptors where none belong */
    g_assert_cmpint(check(VFU_DMA_MAP, &map, sizeof(map) - 1, 0), ==, EINVAL);
    g_assert_cmpint(check(VFU_DMA_MAP, &set, sizeof(map) + 1, 0), ==, EINVAL);
    g_assert_cmpint(check(VFU_DMA_MAP, &map, sizeof(map), 2), ==, EINVAL);
    g_assert_cmpint(check(VFU_DMA_UNMAP, &map, 24, 1), ==, EINVAL);
    g_assert_cmpint(check(VFU_DEVICE_RESET, &map, 8, 0), ==, EINVAL);
    g_assert_cmpint(check(VFU_DEVICE_RESET, NULL, 0, 1), ==, EINVAL);
    g_assert_cmpint(check(VFU_VERSION, &map, 3, 0), ==, EINVAL);

    /* SET_IRQS: two data kinds, no action, data not what flags say */
    set.s.argsz = sizeof(set.s) + 4;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 4, 0), ==,
                    0);
    set.s.flags |= VFU_IRQ_DATA_NONE;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 4, 0), ==,
                    EINVAL);
    set.s.flags = VFU_IRQ_DATA_BOOL;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 4, 0), ==,
                    EINVAL);
    set.s.flags = VFU_IRQ_DATA_BOOL | VFU_IRQ_ACTION_MASK |
                  VFU_IRQ_ACTION_UNMASK;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 4, 0), ==,
                    EINVAL);
    set.s.flags = VFU_IRQ_DATA_BOOL | VFU_IRQ_ACTION_MASK;
    set.s.argsz = sizeof(set.s) + 3;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 3, 0), ==,
                    EINVAL);
    set.s.count = UINT32_MAX;
    set.s.argsz = sizeof(set.s) + 4;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s) + 4, 0), ==,
                    EINVAL);
    /* eventfds: not one per interrupt, or more than the server takes */
    set.s.flags = VFU_IRQ_DATA_EVENTFD | VFU_IRQ_ACTION_TRIGGER;
    set.s.argsz = sizeof(set.s);
    set.s.count = 4;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s), 3), ==,
                    EINVAL);
    set.s.count = VFU_MAX_FDS + 1;
    g_assert_cmpint(check(VFU_DEVICE_SET_IRQS, &set, sizeof(set.s),
                          VFU_MAX_FDS + 1), ==, EINVAL);

    /* region accesses: count 0, above the transfer size, data not count */
    wr.a.count = 0;
    g_assert_cmpint(check(VFU_REGION_READ, &wr.a, sizeof(wr.a), 0), ==,
                    EINVAL);
    wr.a.count = VFU_MAX_XFER + 1;
    g_assert_cmpint(check(VFU_REGION_READ, &wr.a, sizeof(wr.a), 0), ==,
                    EINVAL);
    wr.a.count = 8;
    g_assert_cmpint(check(VFU_REGION_WRITE, &wr, sizeof(wr.a) + 4, 0), ==,
                    EINVAL);
    g_assert_cmpint(check(VFU_REGION_WRITE, &wr, sizeof(wr), 0), ==, 0);
    g_assert_cmpint(check(VFU_REGION_READ, &wr, sizeof(wr), 0), ==, EINVAL);
}

/* A VERSION payload: the version, then json with its NUL (json_len < 0) */
static int version(uint16_t major, const char *json, int json_len,
                   VfuCaps *caps)
{
    g_autofree uint8_t *buf = g_malloc0(4 + 8192);
    struct vfu_version v = { .major = major, .minor = 1 };
    size_t n = json ? (json_len < 0 ? strlen(json) + 1 : (size_t)json_len) : 0;
    const char *why = NULL;
    int err;

    g_assert_cmpuint(n, <=, 8192);
    memcpy(buf, &v, sizeof(v));
    if (json) {
        memcpy(buf + 4, json, MIN(n, strlen(json) + 1));
    }
    err = vfu_version_parse(buf, 4 + n, caps, &why);
    g_assert_true(!err == !why);
    return err;
}

/* QEMU 10.1+'s capabilities, what it needs to know of ours */
static void test_version(void)
{
    static const char qemu[] =
        "{\"capabilities\":{\"migration\":{\"pgsize\":4096,"
        "\"max_bitmap_size\":268435456},\"max_msg_fds\":16,"
        "\"max_data_xfer_size\":1048576,\"pgsizes\":4096,"
        "\"max_dma_maps\":65535,\"write_multiple\":true}}";
    g_autoptr(GByteArray) reply = vfu_version_reply(1);
    g_autoptr(GByteArray) reply0 = vfu_version_reply(0);
    VfuCaps caps;

    g_assert_cmpint(version(0, qemu, -1, &caps), ==, 0);
    g_assert_cmpuint(caps.minor, ==, 1);
    g_assert_cmpuint(caps.max_msg_fds, ==, 16);
    g_assert_cmpuint(caps.max_data_xfer_size, ==, 1048576);
    g_assert_cmpuint(caps.pgsizes, ==, 4096);
    g_assert_cmpuint(caps.max_dma_maps, ==, 65535);

    /* no capabilities: the protocol's defaults */
    g_assert_cmpint(version(0, NULL, 0, &caps), ==, 0);
    g_assert_cmpuint(caps.max_msg_fds, ==, 1);
    g_assert_cmpuint(caps.max_data_xfer_size, ==, VFU_MAX_XFER);
    g_assert_cmpint(version(0, " { } ", -1, &caps), ==, 0);
    g_assert_cmpuint(caps.max_msg_fds, ==, 1);
    /* counts outside "capabilities", and unknown members, are passed over */
    g_assert_cmpint(version(0, "{\"max_msg_fds\":0,\"x\":[1,-2.5e3,\"a\\\"\","
                            "null,{\"y\":[]}],\"capabilities\":{\"z\":"
                            "\"\\u00e9\",\"max_msg_fds\":3}}", -1, &caps), ==,
                    0);
    g_assert_cmpuint(caps.max_msg_fds, ==, 3);

    /*
     * ours: 0.1, or 0.0 to a client that proposed it (QEMU 10.1 to 11.1:
     * a higher minor than it proposed makes it disconnect)
     */
    g_assert_cmpuint(((struct vfu_version *)reply0->data)->minor, ==, 0);
    g_assert_cmpuint(reply->len, >, 4);
    g_assert_cmpuint(((struct vfu_version *)reply->data)->major, ==, 0);
    g_assert_cmpuint(((struct vfu_version *)reply->data)->minor, ==, 1);
    g_assert_cmpuint(reply->data[reply->len - 1], ==, 0);
    g_assert_cmpstr((char *)reply->data + 4, ==,
                    "{\"capabilities\":{\"max_msg_fds\":8,"
                    "\"max_data_xfer_size\":1048576,\"pgsizes\":4096,"
                    "\"max_dma_maps\":1024}}");
    g_assert_cmpint(version(0, (char *)reply->data + 4, -1, &caps), ==, 0);
    g_assert_cmpuint(caps.max_msg_fds, ==, VFU_MAX_FDS);
}

/* Capabilities a hostile client may send */
static void test_version_hostile(void)
{
    static const char *const bad[] = {
        "", "[]", "{", "{\"capabilities\"}", "{\"capabilities\":}",
        "{\"capabilities\":3}", "{\"capabilities\":{\"max_msg_fds\":-1}}",
        "{\"capabilities\":{\"max_msg_fds\":1.5}}",
        "{\"capabilities\":{\"max_msg_fds\":\"8\"}}",
        "{\"capabilities\":{\"max_msg_fds\":18446744073709551616}}",
        "{\"capabilities\":{\"max_msg_fds\":0}}",
        "{\"capabilities\":{\"pgsizes\":8192}}",
        "{\"capabilities\":{\"max_data_xfer_size\":0}}",
        "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\t\"}",
        "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{\"a\":1}x", "{\"a\":-}",
        "{\"a\":\"unterminated}",
        "{\"a\":[[[[[[[[[[1]]]]]]]]]]}",
    };
    g_autofree char *big = g_strnfill(VFU_MAX_CAPS, ' ');
    VfuCaps caps;

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_test_message("%s", bad[i]);
        g_assert_cmpint(version(0, bad[i], -1, &caps), ==, EINVAL);
    }
    /* a major version other than 0 */
    g_assert_cmpint(version(1, "{}", -1, &caps), ==, ENOTSUP);
    /* no NUL, a NUL before the end, too long */
    g_assert_cmpint(version(0, "{}", 2, &caps), ==, EINVAL);
    g_assert_cmpint(version(0, "{}", 4, &caps), ==, EINVAL);
    big[0] = '{';
    big[VFU_MAX_CAPS - 2] = '}';
    g_assert_cmpint(version(0, big, -1, &caps), ==, EINVAL);
    big[VFU_MAX_CAPS - 2] = ' ';
    big[VFU_MAX_CAPS - 3] = '}';
    big[VFU_MAX_CAPS - 1] = 0;
    g_assert_cmpint(version(0, big, -1, &caps), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfu-msg/sound", test_sound);
    g_test_add_func("/vfu-msg/hostile", test_hostile);
    g_test_add_func("/vfu-msg/version", test_version);
    g_test_add_func("/vfu-msg/version-hostile", test_version_hostile);
    return g_test_run();
}
