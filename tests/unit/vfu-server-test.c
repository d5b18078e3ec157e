/* server: vfu-server.c vfu-msg.c json.c pci.c */
/*
 * Unit tests of rdma-sim-server's vfio-user connection (server/
 * vfu-server.c) with a client of the tests' own on a socket pair: the
 * handshake, the function's regions and configuration space, BAR accesses
 * handed to the device, DMA windows from a shared memfd, MSI-X through an
 * eventfd; and a hostile client: commands before VERSION, a wrong major
 * version, a header larger than any message, a message that stops half
 * way.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "platform.h"
#include "vfu-server.h"

typedef struct Dev {
    uint64_t last_write, last_offset;
    unsigned last_bar, writes, resets;
} Dev;

static uint64_t dev_read(void *opaque, unsigned bar, uint64_t offset,
                         unsigned len)
{
    return 0x1000 * bar + offset;
}

static void dev_write(void *opaque, unsigned bar, uint64_t offset,
                      uint64_t val, unsigned len)
{
    Dev *d = opaque;

    d->last_bar = bar;
    d->last_offset = offset;
    d->last_write = val;
    d->writes++;
}

static void dev_reset(void *opaque)
{
    ((Dev *)opaque)->resets++;
}

static const VfuDeviceOps dev_ops = {
    .bar_read = dev_read, .bar_write = dev_write, .reset = dev_reset,
};

typedef struct Conn {
    VfuServer v;
    Dev dev;
    int client;
    uint16_t id;
} Conn;

static void conn_start(Conn *c)
{
    int sv[2];

    memset(c, 0, sizeof(*c));
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    vfu_server_init(&c->v, &dev_ops, &c->dev, 64, 9);
    c->v.recv_timeout_ms = 100;
    vfu_server_attach(&c->v, sv[0]);
    c->client = sv[1];
}

static void conn_stop(Conn *c)
{
    vfu_server_detach(&c->v);
    g_array_unref(c->v.dma);
    close(c->client);
}

/* Send a command (with fds), let the server take it: its verdict */
static bool conn_send(Conn *c, unsigned command, const void *p, size_t len,
                      const int *fds, unsigned nfds, uint32_t flags)
{
    struct vfu_header h = {
        .id = ++c->id, .command = command, .size = sizeof(h) + len,
        .flags = flags,
    };
    struct iovec iov[2] = {
        { .iov_base = &h, .iov_len = sizeof(h) },
        { .iov_base = (void *)p, .iov_len = len },
    };
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(8 * sizeof(int))];
    } ctl;
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

    if (nfds) {
        struct cmsghdr *cm;

        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    }
    g_assert_cmpint(sendmsg(c->client, &m, 0), ==, sizeof(h) + len);
    return vfu_server_receive(&c->v);
}

/* The reply to the last command: its error (0: none), payload in buf */
static int conn_reply(Conn *c, void *buf, size_t len)
{
    struct vfu_header h;

    g_assert_cmpint(read(c->client, &h, sizeof(h)), ==, sizeof(h));
    g_assert_cmpuint(h.id, ==, c->id);
    g_assert_cmphex(h.flags & VFU_F_TYPE_MASK, ==, VFU_F_TYPE_REPLY);
    if (h.flags & VFU_F_ERROR) {
        g_assert_cmpuint(h.size, ==, sizeof(h));
        return h.error;
    }
    g_assert_cmpuint(h.size, ==, sizeof(h) + len);
    if (len) {
        g_assert_cmpint(read(c->client, buf, len), ==, len);
    }
    return 0;
}

static void conn_version(Conn *c)
{
    static const char caps[] = "{\"capabilities\":{\"max_msg_fds\":16}}";
    uint8_t buf[4 + sizeof(caps)] = { 0 };
    uint8_t reply[256];
    struct vfu_header h;

    memcpy(buf + 4, caps, sizeof(caps));
    g_assert_true(conn_send(c, VFU_VERSION, buf, sizeof(buf), NULL, 0, 0));
    g_assert_cmpint(read(c->client, &h, sizeof(h)), ==, sizeof(h));
    g_assert_cmphex(h.flags, ==, VFU_F_TYPE_REPLY);
    g_assert_cmpuint(h.size - sizeof(h), <=, sizeof(reply));
    g_assert_cmpint(read(c->client, reply, h.size - sizeof(h)), ==,
                    h.size - sizeof(h));
    g_assert_cmpuint(((struct vfu_version *)reply)->minor, ==, 0);
    g_assert_cmpuint(c->v.caps.max_msg_fds, ==, 16);
}

/*
 * The function as QEMU's vfio-user-pci reads it: device info, regions,
 * the configuration space's identity and MSI-X capability, interrupts
 */
static void test_function(void)
{
    struct vfu_device_info info = { .argsz = sizeof(info) };
    struct vfu_region_info ri = { .argsz = sizeof(ri) };
    struct vfu_irq_info ii = { .argsz = sizeof(ii) };
    struct {
        struct vfu_region_access a;
        uint8_t data[64];
    } rd = { .a = { .region = VFU_PCI_CONFIG, .count = 64 } };
    static const uint64_t sizes[VFU_PCI_NUM_REGIONS] = {
        4096, 0, 64 * 4096, 0, 4096, 0, 0, 256, 0,
    };
    Conn c;

    conn_start(&c);
    conn_version(&c);
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_INFO, &info, sizeof(info),
                            NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, &info, sizeof(info)), ==, 0);
    g_assert_cmphex(info.flags, ==, VFU_DEVICE_RESET_OK | VFU_DEVICE_PCI);
    g_assert_cmpuint(info.num_regions, ==, 9);
    g_assert_cmpuint(info.num_irqs, ==, 5);
    for (uint32_t i = 0; i < VFU_PCI_NUM_REGIONS; i++) {
        ri = (struct vfu_region_info) { .argsz = sizeof(ri), .index = i };
        g_assert_true(conn_send(&c, VFU_DEVICE_GET_REGION_INFO, &ri,
                                sizeof(ri), NULL, 0, 0));
        g_assert_cmpint(conn_reply(&c, &ri, sizeof(ri)), ==, 0);
        g_assert_cmpuint(ri.size, ==, sizes[i]);
        g_assert_cmphex(ri.flags, ==, sizes[i] ? 3 : 0);
    }
    ri.index = 9;
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_REGION_INFO, &ri, sizeof(ri),
                            NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);

    g_assert_true(conn_send(&c, VFU_REGION_READ, &rd.a, sizeof(rd.a), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, &rd, sizeof(rd)), ==, 0);
    g_assert_cmphex(ldl_le_p(rd.data), ==, 0x01201b36);  /* device, vendor */
    g_assert_cmphex(rd.data[0x0b], ==, 0x02);             /* network */
    g_assert_cmphex(ldl_le_p(rd.data + 0x2c), ==, 0x00011b36);
    g_assert_cmphex(rd.data[0x34], ==, 0x40);             /* capabilities */
    g_assert_cmphex(rd.data[0x3d], ==, 0);                /* no INTx */

    rd.a.offset = 0x40;
    rd.a.count = 12;
    g_assert_true(conn_send(&c, VFU_REGION_READ, &rd.a, sizeof(rd.a), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, &rd, sizeof(rd.a) + 12), ==, 0);
    g_assert_cmphex(rd.data[0], ==, 0x11);                /* MSI-X */
    g_assert_cmphex(rd.data[2] | rd.data[3] << 8, ==, 8); /* 9 vectors */
    g_assert_cmphex(ldl_le_p(rd.data + 4), ==, 4);        /* table: BAR4 */
    g_assert_cmphex(ldl_le_p(rd.data + 8), ==, 2048 | 4); /* PBA */

    ii.index = VFU_PCI_MSIX;
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_IRQ_INFO, &ii, sizeof(ii),
                            NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, &ii, sizeof(ii)), ==, 0);
    g_assert_cmpuint(ii.count, ==, 9);
    g_assert_cmphex(ii.flags, ==, VFU_IRQ_INFO_EVENTFD |
                    VFU_IRQ_INFO_NORESIZE);
    ii = (struct vfu_irq_info) { .argsz = sizeof(ii), .index = VFU_PCI_INTX };
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_IRQ_INFO, &ii, sizeof(ii),
                            NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, &ii, sizeof(ii)), ==, 0);
    g_assert_cmpuint(ii.count, ==, 0);
    g_assert_cmpuint(c.v.errors, ==, 0);
    conn_stop(&c);
}

/*
 * BAR accesses reach the device (posted writes need no reply); DMA
 * windows map the client's memory; a vector's eventfd fires; a reset
 * reaches the device
 */
static void test_device(void)
{
    struct {
        struct vfu_region_access a;
        uint32_t data;
    } wr = { .a = { .region = 0, .offset = 0x10, .count = 4 },
             .data = 0xabcd };
    struct {
        struct vfu_region_access a;
        uint32_t data;
    } rd = { .a = { .region = 2, .offset = 0x2008, .count = 4 } };
    struct vfu_dma_map map = { .argsz = sizeof(map), .flags = 3,
                               .address = 0x100000, .size = 0x4000 };
    struct vfu_dma_unmap unmap = { .argsz = sizeof(unmap),
                                   .address = 0x100000, .size = 0x4000 };
    struct vfu_irq_set set = { .argsz = sizeof(set), .index = VFU_PCI_MSIX,
                               .flags = VFU_IRQ_DATA_EVENTFD |
                                        VFU_IRQ_ACTION_TRIGGER,
                               .start = 3, .count = 1 };
    int mfd = memfd_create("guest", 0), efd = eventfd(0, EFD_NONBLOCK);
    uint64_t fired = 0;
    uint8_t *mem;
    Conn c;

    g_assert_cmpint(ftruncate(mfd, 0x4000), ==, 0);
    mem = mmap(NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    conn_start(&c);
    conn_version(&c);

    g_assert_true(conn_send(&c, VFU_REGION_WRITE, &wr, sizeof(wr.a) + 4, NULL,
                            0, VFU_F_NO_REPLY));
    g_assert_cmpuint(c.dev.writes, ==, 1);
    g_assert_cmphex(c.dev.last_write, ==, 0xabcd);
    g_assert_cmphex(c.dev.last_offset, ==, 0x10);
    g_assert_true(conn_send(&c, VFU_REGION_READ, &rd.a, sizeof(rd.a), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, &rd, sizeof(rd.a) + 4), ==, 0);
    g_assert_cmphex(rd.data, ==, 0x2000 + 0x2008);
    /* a BAR access that is not naturally aligned, or beyond the BAR */
    rd.a.offset = 0x2002;
    g_assert_true(conn_send(&c, VFU_REGION_READ, &rd.a, sizeof(rd.a), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    rd.a.offset = 64 * 4096;
    g_assert_true(conn_send(&c, VFU_REGION_READ, &rd.a, sizeof(rd.a), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);

    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);
    g_assert_cmpuint(c.v.dma->len, ==, 1);
    memcpy(g_array_index(c.v.dma, VfuDmaWindow, 0).map + 0x100, "hello", 5);
    g_assert_cmpmem(mem + 0x100, 5, "hello", 5);
    /* overlapping the window: EEXIST */
    map.address += 0x1000;
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EEXIST);

    g_assert_true(conn_send(&c, VFU_DEVICE_SET_IRQS, &set, sizeof(set), &efd,
                            1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);
    vfu_server_msix(&c.v, 3);
    vfu_server_msix(&c.v, 4);           /* no eventfd: nothing */
    g_assert_cmpint(read(efd, &fired, sizeof(fired)), ==, sizeof(fired));
    g_assert_cmpuint(fired, ==, 1);
    set.start = 8;
    set.count = 2;                      /* vectors 8 and 9 of 9 */
    g_assert_true(conn_send(&c, VFU_DEVICE_SET_IRQS, &set, sizeof(set), NULL,
                            0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);

    g_assert_true(conn_send(&c, VFU_DMA_UNMAP, &unmap, sizeof(unmap), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, &unmap, sizeof(unmap)), ==, 0);
    g_assert_cmpuint(c.v.dma->len, ==, 0);
    g_assert_true(conn_send(&c, VFU_DEVICE_RESET, NULL, 0, NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);
    g_assert_cmpuint(c.dev.resets, ==, 1);
    conn_stop(&c);
    munmap(mem, 0x4000);
    close(mfd);
    close(efd);
}

/* What a hostile client may do, and what it gets */
static void test_hostile(void)
{
    struct vfu_device_info info = { .argsz = sizeof(info) };
    struct vfu_version v1 = { .major = 1 };
    struct vfu_header h = { .id = 1, .command = VFU_DEVICE_RESET };
    int efd = eventfd(0, 0);
    Conn c;

    /* a command before VERSION: refused, the connection goes on */
    conn_start(&c);
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_INFO, &info, sizeof(info),
                            NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    /* a descriptor where none belongs: closed, refused */
    conn_version(&c);
    g_assert_true(conn_send(&c, VFU_DEVICE_GET_INFO, &info, sizeof(info),
                            &efd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    g_assert_cmpuint(c.v.errors, ==, 2);
    conn_stop(&c);

    /* a major version other than 0: refused, and the connection ends */
    conn_start(&c);
    g_assert_false(conn_send(&c, VFU_VERSION, &v1, sizeof(v1), NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, ENOTSUP);
    conn_stop(&c);

    /* a header larger than any message: the connection ends unread */
    conn_start(&c);
    h.size = VFU_MAX_MESSAGE + 1;
    g_assert_cmpint(write(c.client, &h, sizeof(h)), ==, sizeof(h));
    g_assert_false(vfu_server_receive(&c.v));
    conn_stop(&c);

    /* a message that stops half way: the server waits 100 ms, no more */
    conn_start(&c);
    h.size = sizeof(h) + 8;
    g_assert_cmpint(write(c.client, &h, sizeof(h)), ==, sizeof(h));
    g_assert_false(vfu_server_receive(&c.v));
    conn_stop(&c);

    /* the client goes */
    conn_start(&c);
    shutdown(c.client, SHUT_WR);
    g_assert_false(vfu_server_receive(&c.v));
    conn_stop(&c);
    close(efd);
}

/*
 * Clients that would hold the server: a non-eventfd as an interrupt's
 * descriptor, memory that is not a shared file or lies past its end, a
 * message trickled a byte at a time, replies never read
 */
static void test_hostile_hold(void)
{
    struct vfu_irq_set set = { .argsz = sizeof(set), .index = VFU_PCI_MSIX,
                               .flags = VFU_IRQ_DATA_EVENTFD |
                                        VFU_IRQ_ACTION_TRIGGER,
                               .start = 0, .count = 1 };
    struct vfu_dma_map map = { .argsz = sizeof(map), .flags = 3,
                               .address = 0x100000, .size = 0x4000 };
    struct vfu_dma_unmap all = { .argsz = sizeof(all),
                                 .flags = VFU_DMA_UNMAP_ALL };
    struct vfu_region_access rd = { .region = VFU_PCI_CONFIG, .count = 256 };
    struct vfu_header h = { .id = 1, .command = VFU_DEVICE_GET_INFO,
                            .size = sizeof(h) + 16 };
    int pipefd[2], mfd = memfd_create("guest", 0);
    int64_t t0;
    unsigned i;
    Conn c;

    g_assert_cmpint(pipe(pipefd), ==, 0);
    g_assert_cmpint(ftruncate(mfd, 0x4000), ==, 0);
    conn_start(&c);
    conn_version(&c);
    /* a pipe is no eventfd: it could fill and block the server */
    g_assert_true(conn_send(&c, VFU_DEVICE_SET_IRQS, &set, sizeof(set),
                            &pipefd[1], 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    g_assert_cmpint(c.v.msix_fd[0], ==, -1);
    /* memory that is a pipe, or a window past the memfd's end */
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &pipefd[0],
                            1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    map.size = 0x5000;
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    map.size = 0x1000;
    map.offset = 0x4000;
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    /* two windows, then QEMU's "unmap all" */
    map.offset = 0;
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);
    map.address = 0x200000;
    g_assert_true(conn_send(&c, VFU_DMA_MAP, &map, sizeof(map), &mfd, 1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);
    g_assert_cmpuint(c.v.dma->len, ==, 2);
    g_assert_true(conn_send(&c, VFU_DMA_UNMAP, &all, sizeof(all), NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, &all, sizeof(all)), ==, 0);
    g_assert_cmpuint(c.v.dma->len, ==, 0);
    all.flags = 1u << 5;
    g_assert_true(conn_send(&c, VFU_DMA_UNMAP, &all, sizeof(all), NULL, 0, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, EINVAL);
    /* replies never read: the server gives up instead of blocking */
    for (i = 0; i < 100000; i++) {
        if (!conn_send(&c, VFU_REGION_READ, &rd, sizeof(rd), NULL, 0, 0)) {
            break;
        }
    }
    g_assert_cmpuint(i, <, 100000);
    conn_stop(&c);

    /* a message trickled a byte every 40 ms: 100 ms for all of it */
    conn_start(&c);
    conn_version(&c);
    g_assert_cmpint(write(c.client, &h, sizeof(h)), ==, sizeof(h));
    if (fork() == 0) {
        for (i = 0; i < 16; i++) {
            g_usleep(40000);
            if (write(c.client, "", 1) != 1) {
                break;
            }
        }
        _exit(0);
    }
    t0 = g_get_monotonic_time();
    g_assert_false(vfu_server_receive(&c.v));
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 400000);
    conn_stop(&c);
    close(pipefd[0]);
    close(pipefd[1]);
    close(mfd);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfu-server/function", test_function);
    g_test_add_func("/vfu-server/device", test_device);
    g_test_add_func("/vfu-server/hostile", test_hostile);
    g_test_add_func("/vfu-server/hostile-hold", test_hostile_hold);
    return g_test_run();
}
