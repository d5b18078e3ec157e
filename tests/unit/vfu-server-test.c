/* server: vfu-server.c vfu-msg.c json.c pci.c */
/*
 * Unit tests of rdma-sim-server's vfio-user connection (server/
 * vfu-server.c) with a client of the tests' own on a socket pair: the
 * handshake, the function's regions and configuration space, BAR accesses
 * handed to the device, DMA windows from a shared memfd, MSI-X through an
 * eventfd; and a hostile client: commands before VERSION, a wrong major
 * version, a header larger than any message, a message that stops half
 * way.  Memory the client does not share, through the server's
 * DMA_READ/DMA_WRITE requests answered by a thread of the test: pieces,
 * windows and rights, the fence before an interrupt, the client's messages
 * answered or kept while the server waits, a client that never answers,
 * replies that are not what was asked.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <poll.h>
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

/*
 * DMA by messages: the client's side is a thread of the test that holds
 * the guest's memory and answers the server's requests, as QEMU's main
 * loop does, while the server waits in vfu_server_dma_msg()
 */

enum {
    G_GOOD,                     /* as QEMU */
    G_SHORT,                    /* a DMA_READ reply a byte short */
    G_ADDR,                     /* another address */
    G_ERROR,                    /* refused: EFAULT */
    G_STRAY,                    /* a reply to no request first */
    G_FDS,                      /* a descriptor with the reply */
    G_SILENT,                   /* never answers */
    G_RESET,                    /* a reset while the server waits */
};

typedef struct Guest {
    Conn *c;
    uint8_t mem[0x2000];        /* guest memory from GUEST_BASE */
    unsigned replies;           /* to give, then the thread ends */
    int mode;                   /* G_* */
    int efd;                    /* an interrupt not to see before a fence */
    bool in_wait;               /* messages of its own while the server waits */
    GThread *thread;
    /* what it saw: requests (command, flags, address, count) in order */
    unsigned n;
    struct {
        uint16_t command;
        uint32_t flags;
        uint64_t address, count;
    } seen[16];
    uint32_t reg;               /* a register read during the wait */
    uint32_t config;            /* configuration space read during it */
} Guest;

#define GUEST_BASE      0x100000
#define GUEST_RO        0x200000        /* a read-only window */

/* Read exactly len bytes within a second; false at EOF */
static bool read_full(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n;

        g_assert_cmpint(poll(&pfd, 1, 1000), ==, 1);
        n = read(fd, p, len);
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

/* A message from the server: its header and payload (at most max) */
static bool guest_recv(int fd, struct vfu_header *h, void *buf, size_t max)
{
    if (!read_full(fd, h, sizeof(*h))) {
        return false;
    }
    g_assert_cmpuint(h->size - sizeof(*h), <=, max);
    return read_full(fd, buf, h->size - sizeof(*h));
}

static void guest_send(int fd, const struct vfu_header *h, const void *p,
                       size_t len, int sendfd)
{
    struct iovec iov[2] = {
        { .iov_base = (void *)h, .iov_len = sizeof(*h) },
        { .iov_base = (void *)p, .iov_len = len },
    };
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

    if (sendfd >= 0) {
        struct cmsghdr *cm;

        m.msg_control = ctl.buf;
        m.msg_controllen = sizeof(ctl.buf);
        cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &sendfd, sizeof(int));
    }
    g_assert_cmpint(sendmsg(fd, &m, 0), ==, sizeof(*h) + len);
}

/* A command of the client's own during the server's wait: its reply */
static void guest_call(Guest *g, unsigned command, const void *p, size_t len,
                       void *reply, size_t rlen)
{
    struct vfu_header h = {
        .id = 0x7000 + g->n, .command = command, .size = sizeof(h) + len,
    };
    struct vfu_header r;

    guest_send(g->c->client, &h, p, len, -1);
    /* the server answers it before the client answers the server */
    g_assert_true(guest_recv(g->c->client, &r, reply, rlen));
    g_assert_cmpuint(r.id, ==, h.id);
    g_assert_cmphex(r.flags, ==, VFU_F_TYPE_REPLY);
}

/* While the server waits: config space and a register read, a BAR write */
static void guest_meanwhile(Guest *g)
{
    struct {
        struct vfu_region_access a;
        uint32_t data;
    } rd = { .a = { .region = VFU_PCI_CONFIG, .count = 4 } }, wr = {
        .a = { .region = 0, .offset = 0x10, .count = 4 }, .data = 0x55,
    };
    struct vfu_header h = {
        .id = 0x7100, .command = VFU_REGION_WRITE,
        .size = sizeof(h) + sizeof(wr.a) + 4, .flags = VFU_F_NO_REPLY,
    };

    guest_call(g, VFU_REGION_READ, &rd.a, sizeof(rd.a), &rd, sizeof(rd));
    g->config = rd.data;
    guest_send(g->c->client, &h, &wr, sizeof(wr.a) + 4, -1);
    rd.a = (struct vfu_region_access) { .region = 0, .offset = 0x24,
                                        .count = 4 };
    guest_call(g, VFU_REGION_READ, &rd.a, sizeof(rd.a), &rd, sizeof(rd));
    g->reg = rd.data;
}

static gpointer guest_thread(gpointer opaque)
{
    Guest *g = opaque;
    int fd = g->c->client;

    while (g->replies) {
        struct {
            struct vfu_dma_access a;
            uint8_t data[64];
        } m, r;
        struct vfu_header h;
        uint64_t off;
        uint64_t fired;

        if (!guest_recv(fd, &h, &m, sizeof(m))) {
            break;
        }
        g_assert_cmpuint(g->n, <, G_N_ELEMENTS(g->seen));
        g->seen[g->n].command = h.command;
        g->seen[g->n].flags = h.flags;
        g->seen[g->n].address = m.a.address;
        g->seen[g->n++].count = m.a.count;
        off = m.a.address - (m.a.address >= GUEST_RO ? GUEST_RO - 0x1000 :
                             GUEST_BASE);
        g_assert_cmpuint(off + m.a.count, <=, sizeof(g->mem));
        if (h.command == VFU_DMA_WRITE) {
            g_assert_cmphex(h.flags, ==, VFU_F_NO_REPLY);
            memcpy(g->mem + off, m.data, m.a.count);
            continue;
        }
        g_assert_cmpuint(h.command, ==, VFU_DMA_READ);
        g_assert_cmphex(h.flags, ==, 0);
        if (g->efd >= 0) {
            /* a fence: the interrupt has not gone yet */
            g_assert_cmpint(read(g->efd, &fired, sizeof(fired)), ==, -1);
        }
        if (g->in_wait) {
            guest_meanwhile(g);
        }
        if (g->mode == G_SILENT) {
            g->replies--;
            continue;
        }
        if (g->mode == G_RESET) {
            struct vfu_header rh = {
                .id = 0x7200, .command = VFU_DEVICE_RESET, .size = sizeof(rh),
            };

            guest_send(fd, &rh, NULL, 0, -1);
            g->replies--;
            continue;
        }
        r.a = m.a;
        memcpy(r.data, g->mem + off, m.a.count);
        h.flags = VFU_F_TYPE_REPLY;
        h.size = sizeof(h) + sizeof(r.a) + m.a.count;
        if (g->mode == G_STRAY) {
            struct vfu_header sh = h;

            sh.id++;
            guest_send(fd, &sh, &r, h.size - sizeof(h), -1);
        } else if (g->mode == G_SHORT) {
            h.size--;
        } else if (g->mode == G_ADDR) {
            r.a.address++;
        } else if (g->mode == G_ERROR) {
            h.flags |= VFU_F_ERROR;
            h.error = EFAULT;
            h.size = sizeof(h);
        }
        guest_send(fd, &h, &r, h.size - sizeof(h),
                   g->mode == G_FDS ? g->efd : -1);
        g->replies--;
    }
    return NULL;
}

/* Serve replies replies in a thread until guest_join() */
static void guest_serve(Guest *g, unsigned replies)
{
    g->replies = replies;
    g->thread = g_thread_new("guest", guest_thread, g);
}

static void guest_join(Guest *g)
{
    g_thread_join(g->thread);
    g->thread = NULL;
}

/* A connection whose client maps two windows without descriptors */
static void guest_start(Conn *c, Guest *g, int mode)
{
    static const char caps[] =
        "{\"capabilities\":{\"max_data_xfer_size\":8}}";
    uint8_t buf[4 + sizeof(caps)] = { 0 };
    uint8_t reply[256];
    struct vfu_dma_map map = { .argsz = sizeof(map), .flags = 3,
                               .address = GUEST_BASE, .size = 0x1000 };
    struct vfu_header h;

    memset(g, 0, sizeof(*g));
    g->c = c;
    g->mode = mode;
    g->efd = -1;
    conn_start(c);
    c->v.dma_timeout_ms = 1000;
    memcpy(buf + 4, caps, sizeof(caps));
    g_assert_true(conn_send(c, VFU_VERSION, buf, sizeof(buf), NULL, 0, 0));
    g_assert_true(guest_recv(c->client, &h, reply, sizeof(reply)));
    g_assert_cmpuint(c->v.caps.max_data_xfer_size, ==, 8);
    g_assert_true(conn_send(c, VFU_DMA_MAP, &map, sizeof(map), NULL, 0, 0));
    g_assert_cmpint(conn_reply(c, NULL, 0), ==, 0);
    map.address = GUEST_RO;
    map.flags = VFU_DMA_READ_OK;
    g_assert_true(conn_send(c, VFU_DMA_MAP, &map, sizeof(map), NULL, 0, 0));
    g_assert_cmpint(conn_reply(c, NULL, 0), ==, 0);
    g_assert_cmpuint(c->v.dma->len, ==, 2);
    g_assert_null(g_array_index(c->v.dma, VfuDmaWindow, 0).map);
}

/* Nothing waits in the client's socket */
static void assert_quiet(Conn *c)
{
    uint8_t b;

    g_assert_cmpint(recv(c->client, &b, 1, MSG_DONTWAIT), ==, -1);
    g_assert_cmpint(errno, ==, EAGAIN);
}

/*
 * Reads and writes of memory the client did not share: in pieces of its
 * max_data_xfer_size, writes without a reply asked, reads with their data;
 * nothing outside a window or against its rights; an interrupt after a
 * fence that the posted writes are done
 */
static void test_dma_msg(void)
{
    static const char text[] = "rdma-sim over vfio";    /* 18 bytes */
    struct vfu_irq_set set = { .argsz = sizeof(set), .index = VFU_PCI_MSIX,
                               .flags = VFU_IRQ_DATA_EVENTFD |
                                        VFU_IRQ_ACTION_TRIGGER,
                               .start = 3, .count = 1 };
    struct vfu_dma_unmap unmap = { .argsz = sizeof(unmap),
                                   .address = GUEST_BASE, .size = 0x1000 };
    int efd = eventfd(0, EFD_NONBLOCK);
    uint64_t fired = 0;
    char back[32] = { 0 };
    Conn c;
    Guest g;

    guest_start(&c, &g, G_GOOD);
    g_assert_true(conn_send(&c, VFU_DEVICE_SET_IRQS, &set, sizeof(set), &efd,
                            1, 0));
    g_assert_cmpint(conn_reply(&c, NULL, 0), ==, 0);

    /* posted writes: nothing to wait for, three pieces of 8, 8 and 2 */
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE + 0x100,
                                       (void *)text, 18, true), ==, 0);
    g_assert_true(c.v.posted);
    guest_serve(&g, 3);
    /* a read of the same bytes: the writes are done first, in order */
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE + 0x100, back, 18,
                                       false), ==, 0);
    g_assert_false(c.v.posted);
    guest_join(&g);
    g_assert_cmpmem(g.mem + 0x100, 18, text, 18);
    g_assert_cmpmem(back, 18, text, 18);
    g_assert_cmpuint(g.n, ==, 6);
    g_assert_cmpuint(g.seen[0].command, ==, VFU_DMA_WRITE);
    g_assert_cmphex(g.seen[1].address, ==, GUEST_BASE + 0x108);
    g_assert_cmpuint(g.seen[2].count, ==, 2);
    g_assert_cmpuint(g.seen[3].command, ==, VFU_DMA_READ);
    g_assert_cmpuint(g.seen[3].count, ==, 8);
    g_assert_cmphex(g.seen[5].address, ==, GUEST_BASE + 0x110);
    g_assert_cmpuint(g.seen[5].count, ==, 2);

    /* outside the windows, or against the read-only one's rights: no message */
    g_assert_cmpint(vfu_server_dma_msg(&c.v, 0x300000, back, 4, false), ==,
                    -EFAULT);
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_RO, back, 4, true), ==,
                    -EFAULT);
    assert_quiet(&c);
    /* across a window's end: the part inside, then refused */
    g.n = 0;
    guest_serve(&g, 1);
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE + 0xffc, back, 8,
                                       false), ==, -EFAULT);
    guest_join(&g);
    g_assert_cmpuint(g.n, ==, 1);
    g_assert_cmpuint(g.seen[0].count, ==, 4);
    assert_quiet(&c);

    /* an interrupt after posted writes: a one-byte read fences them */
    g.n = 0;
    g.efd = efd;
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE + 0x200,
                                       (void *)text, 4, true), ==, 0);
    guest_serve(&g, 1);
    vfu_server_msix(&c.v, 3);
    guest_join(&g);
    g_assert_cmpuint(g.n, ==, 2);
    g_assert_cmpuint(g.seen[1].command, ==, VFU_DMA_READ);
    g_assert_cmphex(g.seen[1].address, ==, GUEST_BASE + 0x200);
    g_assert_cmpuint(g.seen[1].count, ==, 1);
    g_assert_cmpint(read(efd, &fired, sizeof(fired)), ==, sizeof(fired));
    g_assert_cmpuint(fired, ==, 1);
    /* no writes since: no fence */
    vfu_server_msix(&c.v, 3);
    assert_quiet(&c);

    /* unmapped: gone */
    g_assert_true(conn_send(&c, VFU_DMA_UNMAP, &unmap, sizeof(unmap), NULL, 0,
                            0));
    g_assert_cmpint(conn_reply(&c, &unmap, sizeof(unmap)), ==, 0);
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, back, 4, false), ==,
                    -EFAULT);
    g_assert_cmpuint(c.v.errors, ==, 0);
    conn_stop(&c);
    close(efd);
}

/*
 * While the server waits for a DMA reply, the client's region reads are
 * answered (before the client answers) and its BAR writes are kept for
 * after the step; a reset ends the wait and is answered when done
 */
static void test_dma_wait(void)
{
    struct vfu_header h;
    int64_t t0;
    uint8_t b[8];
    Conn c;
    Guest g;

    guest_start(&c, &g, G_GOOD);
    memcpy(g.mem + 0x40, "abcd", 4);
    g.in_wait = true;
    guest_serve(&g, 1);
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE + 0x40, b, 4, false),
                    ==, 0);
    guest_join(&g);
    g_assert_cmpmem(b, 4, "abcd", 4);
    g_assert_cmphex(g.config, ==, 0x01201b36);
    g_assert_cmphex(g.reg, ==, 0x24);          /* dev_read(): BAR0 + 0x24 */
    /* the BAR write waits for the end of the step */
    g_assert_cmpuint(c.dev.writes, ==, 0);
    g_assert_cmpuint(c.v.deferred.length, ==, 1);
    vfu_server_run_deferred(&c.v);
    g_assert_cmpuint(c.dev.writes, ==, 1);
    g_assert_cmphex(c.dev.last_write, ==, 0x55);
    g_assert_cmphex(c.dev.last_offset, ==, 0x10);
    /*
     * The main loop's watch fires for messages the wait took already:
     * nothing is there to read, and the connection goes on at once
     * (a read that blocked would time out and end it)
     */
    t0 = g_get_monotonic_time();
    g_assert_true(vfu_server_receive(&c.v));
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 500000);
    g_assert_false(c.v.broken);
    conn_stop(&c);

    guest_start(&c, &g, G_RESET);
    guest_serve(&g, 1);
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, b, 4, false), ==,
                    -ECANCELED);
    guest_join(&g);
    /* the step goes on without DMA until it ends */
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, b, 4, false), ==,
                    -ECANCELED);
    g_assert_cmpuint(c.dev.resets, ==, 0);
    vfu_server_run_deferred(&c.v);
    g_assert_cmpuint(c.dev.resets, ==, 1);
    g_assert_true(guest_recv(c.client, &h, b, sizeof(b)));
    g_assert_cmpuint(h.id, ==, 0x7200);
    g_assert_cmphex(h.flags, ==, VFU_F_TYPE_REPLY);
    g_assert_false(c.v.broken);
    conn_stop(&c);
}

/* A client that never answers: the DMA fails in time, the client goes */
static void test_dma_silent(void)
{
    int64_t t0;
    uint8_t b[4];
    Conn c;
    Guest g;

    guest_start(&c, &g, G_SILENT);
    c.v.dma_timeout_ms = 100;
    guest_serve(&g, 1);
    t0 = g_get_monotonic_time();
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, b, 4, false), ==,
                    -ETIMEDOUT);
    g_assert_cmpint(g_get_monotonic_time() - t0, >=, 100000);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 1000000);
    guest_join(&g);
    g_assert_true(c.v.broken);
    /* no more requests; the connection is over */
    g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, b, 4, false), ==,
                    -ENOTCONN);
    g_assert_false(vfu_server_receive(&c.v));
    g_assert_cmpint(read(c.client, b, 1), ==, 0);
    conn_stop(&c);
}

/* Replies that are not what was asked; a refusal; a stray reply */
static void test_dma_hostile(void)
{
    static const struct {
        int mode, err;
        bool broken;
    } cases[] = {
        { G_SHORT, -EPROTO, true },
        { G_ADDR, -EPROTO, true },
        { G_FDS, -EPROTO, true },
        { G_ERROR, -EFAULT, false },
        { G_STRAY, 0, false },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t b[8] = { 0 };
        Conn c;
        Guest g;

        guest_start(&c, &g, cases[i].mode);
        memcpy(g.mem, "12345678", 8);
        if (cases[i].mode == G_FDS) {
            g.efd = eventfd(0, EFD_NONBLOCK);
        }
        guest_serve(&g, 1);
        g_assert_cmpint(vfu_server_dma_msg(&c.v, GUEST_BASE, b, 8, false), ==,
                        cases[i].err);
        guest_join(&g);
        g_assert_cmpint(c.v.broken, ==, cases[i].broken);
        if (cases[i].err) {
            g_assert_cmpmem(b, 8, "\0\0\0\0\0\0\0\0", 8);
        } else {
            g_assert_cmpmem(b, 8, "12345678", 8);
        }
        /* the stray reply and each bad one are counted */
        g_assert_cmpuint(c.v.errors, ==, cases[i].mode != G_ERROR);
        if (g.efd >= 0) {
            close(g.efd);
        }
        conn_stop(&c);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfu-server/function", test_function);
    g_test_add_func("/vfu-server/device", test_device);
    g_test_add_func("/vfu-server/hostile", test_hostile);
    g_test_add_func("/vfu-server/hostile-hold", test_hostile_hold);
    g_test_add_func("/vfu-server/dma-msg", test_dma_msg);
    g_test_add_func("/vfu-server/dma-wait", test_dma_wait);
    g_test_add_func("/vfu-server/dma-silent", test_dma_silent);
    g_test_add_func("/vfu-server/dma-hostile", test_dma_hostile);
    return g_test_run();
}
