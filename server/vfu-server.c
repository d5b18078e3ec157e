/*
 * rdma-sim-server: one vfio-user connection
 *
 * A message is read whole before anything of it is used: its header and
 * the descriptors that came with it, then its payload (at most
 * VFU_MAX_MESSAGE, within recv_timeout_ms: a client that stops in the
 * middle of a message is disconnected, it cannot stall the device), then
 * vfu_msg_check().  A message that fails the check gets an error reply and
 * its descriptors are closed; one whose header cannot be trusted to say
 * where the next message starts ends the connection.  Every reply goes
 * out before the next message is read.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "platform.h"
#include "vfu-server.h"

/* A message's payload must arrive within this after its header */
#define VFU_RECV_TIMEOUT_MS     5000

void vfu_server_init(VfuServer *v, const VfuDeviceOps *ops, void *opaque,
                     unsigned db_pages, unsigned msix_vectors)
{
    memset(v, 0, sizeof(*v));
    v->fd = -1;
    v->ops = ops;
    v->opaque = opaque;
    v->dma = g_array_new(false, true, sizeof(VfuDmaWindow));
    for (unsigned i = 0; i < RDMA_SIM_MAX_MSIX; i++) {
        v->msix_fd[i] = -1;
    }
    v->err_fd = -1;
    v->recv_timeout_ms = VFU_RECV_TIMEOUT_MS;
    vfu_pci_init(&v->pci, db_pages, msix_vectors);
}

void vfu_server_attach(VfuServer *v, int fd)
{
    struct timeval tv = {
        .tv_sec = v->recv_timeout_ms / 1000,
        .tv_usec = v->recv_timeout_ms % 1000 * 1000,
    };

    /*
     * Neither a header nor a reply waits longer than this for the client:
     * one that neither sends nor reads cannot hold the main loop
     */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    v->fd = fd;
    v->negotiated = false;
}

static void vfu_dma_unmap_window(VfuDmaWindow *w)
{
    if (w->map) {
        munmap(w->map, w->size);
        w->map = NULL;
    }
}

static void vfu_fd_clear(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void vfu_msix_clear(VfuServer *v)
{
    for (unsigned i = 0; i < RDMA_SIM_MAX_MSIX; i++) {
        vfu_fd_clear(&v->msix_fd[i]);
    }
}

void vfu_server_detach(VfuServer *v)
{
    for (guint i = 0; i < v->dma->len; i++) {
        vfu_dma_unmap_window(&g_array_index(v->dma, VfuDmaWindow, i));
    }
    g_array_set_size(v->dma, 0);
    vfu_msix_clear(v);
    vfu_fd_clear(&v->err_fd);
    vfu_fd_clear(&v->fd);
}

/*
 * What a client did wrong, on stderr: at most VFU_LOG_PER_SEC lines a
 * second, so that a client sending garbage cannot flood the log
 */
#define VFU_LOG_PER_SEC         20

static void G_GNUC_PRINTF(2, 3) vfu_log(VfuServer *v, const char *fmt, ...)
{
    int64_t sec = g_get_monotonic_time() / G_USEC_PER_SEC;
    va_list ap;

    if (sec != v->log_sec) {
        v->log_sec = sec;
        v->log_count = 0;
    }
    if (v->log_count++ >= VFU_LOG_PER_SEC) {
        return;
    }
    fprintf(stderr, "rdma-sim-server: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void vfu_server_msix(VfuServer *v, unsigned vector)
{
    uint64_t one = 1;

    if (vector < RDMA_SIM_MAX_MSIX && v->msix_fd[vector] >= 0 &&
        write(v->msix_fd[vector], &one, sizeof(one)) != sizeof(one) &&
        errno != EAGAIN) {
        vfu_log(v, "MSI-X vector %u's eventfd: %s", vector,
                  g_strerror(errno));
    }
}

/*
 * Sending
 */

static bool vfu_send(VfuServer *v, const struct vfu_header *h,
                     const void *payload, size_t len)
{
    struct iovec iov[2] = {
        { .iov_base = (void *)h, .iov_len = sizeof(*h) },
        { .iov_base = (void *)payload, .iov_len = len },
    };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
    size_t want = sizeof(*h) + len;
    ssize_t n = sendmsg(v->fd, &m, MSG_NOSIGNAL);

    return n == (ssize_t)want;
}

static bool vfu_reply(VfuServer *v, const struct vfu_header *req, int err,
                      const void *payload, size_t len)
{
    struct vfu_header h = {
        .id = req->id, .command = req->command,
        .flags = VFU_F_TYPE_REPLY | (err ? VFU_F_ERROR : 0),
        .error = err,
    };

    if (req->flags & VFU_F_NO_REPLY) {
        return true;
    }
    if (err) {
        len = 0;
    }
    h.size = sizeof(h) + len;
    return vfu_send(v, &h, payload, len);
}

/*
 * Receiving
 */

/*
 * Read exactly len bytes (the rest of a message) within timeout_ms all
 * told (a client that trickles bytes does not restart the clock); false
 * on EOF, an error or the deadline
 */
static bool vfu_read_all(int fd, void *buf, size_t len, unsigned timeout_ms)
{
    int64_t deadline = g_get_monotonic_time() + timeout_ms * 1000ll;
    uint8_t *p = buf;

    while (len) {
        int64_t left = deadline - g_get_monotonic_time();
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n;

        if (left <= 0 || poll(&pfd, 1, DIV_ROUND_UP(left, 1000)) <= 0) {
            return false;
        }
        n = read(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

static void vfu_close_fds(int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        close(fds[i]);
    }
}

/*
 * The commands
 */

static int vfu_dma_map(VfuServer *v, const struct vfu_dma_map *m, int fd)
{
    VfuDmaWindow w = {
        .address = m->address, .size = m->size,
        .prot = m->flags & (VFU_DMA_READ_OK | VFU_DMA_WRITE_OK),
    };

    if (!m->size || m->address + m->size - 1 < m->address ||
        (m->flags & ~(VFU_DMA_READ_OK | VFU_DMA_WRITE_OK))) {
        return -EINVAL;
    }
    if (v->dma->len >= VFU_MAX_DMA_MAPS) {
        return -ENOSPC;
    }
    for (guint i = 0; i < v->dma->len; i++) {
        const VfuDmaWindow *o = &g_array_index(v->dma, VfuDmaWindow, i);

        if (w.address <= o->address + o->size - 1 &&
            o->address <= w.address + w.size - 1) {
            return -EEXIST;
        }
    }
    if (fd >= 0) {
        int prot = (w.prot & VFU_DMA_READ_OK ? PROT_READ : 0) |
                   (w.prot & VFU_DMA_WRITE_OK ? PROT_WRITE : 0);
        struct statfs fs;
        struct stat st;
        void *p;

        /*
         * Memory the server can touch without waiting on anyone: a file of
         * tmpfs or hugetlbfs (a memfd is one), with the window inside it.
         * (It may still shrink under the mapping: host.c's DMA copies
         * survive that.)
         */
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fstatfs(fd, &fs) ||
            (fs.f_type != 0x01021994 && fs.f_type != 0x958458f6)) {
            vfu_log(v, "DMA_MAP of memory that is not a memfd, tmpfs or "
                    "hugetlbfs file: refused (share the guest's memory with "
                    "memory-backend-memfd)");
            return -EINVAL;
        }
        if (m->size > SIZE_MAX || m->offset > (uint64_t)st.st_size ||
            m->size > (uint64_t)st.st_size - m->offset) {
            return -EINVAL;
        }
        p = mmap(NULL, w.size, prot ? prot : PROT_NONE, MAP_SHARED, fd,
                 m->offset);
        if (p == MAP_FAILED) {
            return -errno;
        }
        w.map = p;
    }
    g_array_append_val(v->dma, w);
    return 0;
}

static int vfu_dma_unmap(VfuServer *v, const struct vfu_dma_unmap *m)
{
    if (m->flags == VFU_DMA_UNMAP_ALL && !m->address && !m->size) {
        for (guint i = 0; i < v->dma->len; i++) {
            vfu_dma_unmap_window(&g_array_index(v->dma, VfuDmaWindow, i));
        }
        g_array_set_size(v->dma, 0);
        return 0;
    }
    if (m->flags) {
        return -EINVAL;
    }
    for (guint i = 0; i < v->dma->len; i++) {
        VfuDmaWindow *w = &g_array_index(v->dma, VfuDmaWindow, i);

        if (w->address == m->address && w->size == m->size) {
            vfu_dma_unmap_window(w);
            g_array_remove_index_fast(v->dma, i);
            return 0;
        }
    }
    return -ENOENT;
}

static void vfu_irq_info(VfuServer *v, const struct vfu_irq_info *req,
                         struct vfu_irq_info *r)
{
    *r = (struct vfu_irq_info) { .argsz = sizeof(*r), .index = req->index };
    if (req->index == VFU_PCI_MSIX) {
        r->flags = VFU_IRQ_INFO_EVENTFD | VFU_IRQ_INFO_NORESIZE;
        r->count = v->pci.msix_vectors;
    } else if (req->index == VFU_PCI_ERR) {
        /*
         * An error interrupt QEMU can wire up (it warns that it "could
         * not enable error recovery" without one), never signalled: the
         * device reports its errors to its driver (DEV_STATUS.FATAL and an
         * async event), not as PCI errors that would stop the VM
         */
        r->flags = VFU_IRQ_INFO_EVENTFD;
        r->count = 1;
    }
}

/*
 * An interrupt's descriptor from the client, kept: it must be an eventfd
 * (a pipe or a file could block the server or grow), and the server's
 * copy never blocks (an eventfd's counter that is full drops the signal)
 */
static int vfu_take_eventfd(int fd)
{
    g_autofree char *path = g_strdup_printf("/proc/self/fd/%d", fd);
    g_autofree char *link = g_file_read_link(path, NULL);
    int copy;

    if (!link || strcmp(link, "anon_inode:[eventfd]")) {
        return -EINVAL;
    }
    copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
        return -errno;
    }
    fcntl(copy, F_SETFL, fcntl(copy, F_GETFL) | O_NONBLOCK);
    return copy;
}

/* The eventfds of a SET_IRQS, taken all or none: -errno if one is bad */
static int vfu_take_eventfds(const int *fds, unsigned nfds, int *out)
{
    for (unsigned i = 0; i < nfds; i++) {
        out[i] = vfu_take_eventfd(fds[i]);
        if (out[i] < 0) {
            int err = out[i];

            while (i--) {
                close(out[i]);
            }
            return err;
        }
    }
    return 0;
}

static int vfu_set_irqs(VfuServer *v, const struct vfu_irq_set *s,
                        const int *fds, unsigned nfds)
{
    unsigned data = s->flags & VFU_IRQ_DATA_MASK;
    int taken[VFU_MAX_FDS];
    int err;

    if (s->index == VFU_PCI_ERR) {
        if (s->start || s->count > 1 || !(s->flags & VFU_IRQ_ACTION_TRIGGER)) {
            return -EINVAL;
        }
        err = vfu_take_eventfds(fds, nfds, taken);
        if (err) {
            return err;
        }
        vfu_fd_clear(&v->err_fd);
        if (data == VFU_IRQ_DATA_EVENTFD && s->count && nfds) {
            v->err_fd = taken[0];
        }
        return 0;
    }
    if (s->index != VFU_PCI_MSIX) {
        /* no INTx, MSI or request interrupts: they have count 0 */
        return s->count ? -EINVAL : 0;
    }
    if (!(s->flags & VFU_IRQ_ACTION_TRIGGER)) {
        return -EINVAL;          /* MSI-X is not maskable here */
    }
    if (data == VFU_IRQ_DATA_NONE && !s->count && !s->start) {
        vfu_msix_clear(v);
        return 0;
    }
    if ((uint64_t)s->start + s->count > v->pci.msix_vectors) {
        return -EINVAL;
    }
    err = vfu_take_eventfds(fds, nfds, taken);
    if (err) {
        return err;
    }
    for (uint32_t i = 0; i < s->count; i++) {
        unsigned vec = s->start + i;

        if (data == VFU_IRQ_DATA_EVENTFD) {
            vfu_fd_clear(&v->msix_fd[vec]);
            v->msix_fd[vec] = nfds ? taken[i] : -1;
        } else if (data == VFU_IRQ_DATA_NONE ||
                   ((const uint8_t *)(s + 1))[i]) {
            vfu_server_msix(v, vec);
        }
    }
    return 0;
}

/* A region access: config space here, BARs to the device */
static int vfu_region_access(VfuServer *v, const struct vfu_region_access *a,
                             uint8_t *data, bool write)
{
    struct vfu_region_info info;
    uint64_t val = 0;

    if (!vfu_pci_region_info(&v->pci, a->region, &info) || !info.size ||
        a->offset >= info.size || a->count > info.size - a->offset) {
        return -EINVAL;
    }
    if (a->region == VFU_PCI_CONFIG) {
        if (write) {
            vfu_pci_config_write(&v->pci, a->offset, data, a->count);
        } else {
            vfu_pci_config_read(&v->pci, a->offset, data, a->count);
        }
        return 0;
    }
    /* BARs: naturally aligned 1, 2, 4 or 8 bytes, as a CPU accesses them */
    if (!is_power_of_2(a->count) || a->count > 8 ||
        (a->offset & (a->count - 1))) {
        return -EINVAL;
    }
    if (write) {
        memcpy(&val, data, a->count);
        v->ops->bar_write(v->opaque, a->region, a->offset, le64_to_cpu(val),
                          a->count);
    } else {
        val = cpu_to_le64(v->ops->bar_read(v->opaque, a->region, a->offset,
                                           a->count));
        memcpy(data, &val, a->count);
    }
    return 0;
}

static bool vfu_dispatch(VfuServer *v, const struct vfu_header *h,
                         uint8_t *p, size_t len, int *fds, unsigned nfds)
{
    const char *why = NULL;
    int err;

    if ((h->flags & VFU_F_TYPE_MASK) == VFU_F_TYPE_REPLY) {
        /* the server sends no commands, so it awaits no reply */
        v->errors++;
        vfu_log(v, "a reply to no command (id %u): dropped",
                  h->id);
        vfu_close_fds(fds, nfds);
        return true;
    }
    err = vfu_msg_check(h, p, len, nfds, &why);

    if (!err && !v->negotiated && h->command != VFU_VERSION) {
        err = EINVAL;
        why = "a command before VERSION";
    }
    if (err) {
        v->errors++;
        vfu_log(v, "message %u (command %u) refused: %s",
                  h->id, h->command, why);
        vfu_close_fds(fds, nfds);
        return vfu_reply(v, h, err, NULL, 0) &&
               !(h->command == VFU_VERSION && !v->negotiated);
    }
    switch (h->command) {
    case VFU_VERSION: {
        g_autoptr(GByteArray) r = NULL;

        err = vfu_version_parse(p, len, &v->caps, &why);
        if (err) {
            vfu_log(v, "VERSION refused: %s", why);
            vfu_reply(v, h, err, NULL, 0);
            return false;       /* the protocol: the connection ends */
        }
        r = vfu_version_reply(v->caps.minor);
        v->negotiated = true;
        return vfu_reply(v, h, 0, r->data, r->len);
    }
    case VFU_DMA_MAP:
        err = -vfu_dma_map(v, (const void *)p, nfds ? fds[0] : -1);
        vfu_close_fds(fds, nfds);
        return vfu_reply(v, h, err, NULL, 0);
    case VFU_DMA_UNMAP:
        err = -vfu_dma_unmap(v, (const void *)p);
        return vfu_reply(v, h, err, p, len);
    case VFU_DEVICE_GET_INFO: {
        struct vfu_device_info r = {
            .argsz = sizeof(r), .flags = VFU_DEVICE_RESET_OK | VFU_DEVICE_PCI,
            .num_regions = VFU_PCI_NUM_REGIONS, .num_irqs = VFU_PCI_NUM_IRQS,
        };

        return vfu_reply(v, h, 0, &r, sizeof(r));
    }
    case VFU_DEVICE_GET_REGION_INFO: {
        const struct vfu_region_info *req = (const void *)p;
        struct vfu_region_info r;

        if (!vfu_pci_region_info(&v->pci, req->index, &r)) {
            return vfu_reply(v, h, EINVAL, NULL, 0);
        }
        return vfu_reply(v, h, 0, &r, sizeof(r));
    }
    case VFU_DEVICE_GET_IRQ_INFO: {
        struct vfu_irq_info r;

        if (((const struct vfu_irq_info *)p)->index >= VFU_PCI_NUM_IRQS) {
            return vfu_reply(v, h, EINVAL, NULL, 0);
        }
        vfu_irq_info(v, (const void *)p, &r);
        return vfu_reply(v, h, 0, &r, sizeof(r));
    }
    case VFU_DEVICE_SET_IRQS:
        err = -vfu_set_irqs(v, (const void *)p, fds, nfds);
        vfu_close_fds(fds, nfds);
        return vfu_reply(v, h, err, NULL, 0);
    case VFU_REGION_READ: {
        const struct vfu_region_access *a = (const void *)p;
        g_autofree uint8_t *r = g_malloc0(sizeof(*a) + a->count);

        memcpy(r, a, sizeof(*a));
        err = -vfu_region_access(v, a, r + sizeof(*a), false);
        return vfu_reply(v, h, err, r, sizeof(*a) + a->count);
    }
    case VFU_REGION_WRITE:
        err = -vfu_region_access(v, (const void *)p,
                                p + sizeof(struct vfu_region_access), true);
        return vfu_reply(v, h, err, p, sizeof(struct vfu_region_access));
    case VFU_DEVICE_RESET:
        v->ops->reset(v->opaque);
        return vfu_reply(v, h, 0, NULL, 0);
    }
    g_assert_not_reached();     /* vfu_msg_check() refused the rest */
}

bool vfu_server_receive(VfuServer *v)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE((VFU_MAX_FDS + 1) * sizeof(int))];
    } ctl;
    struct vfu_header h;
    struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
    };
    int fds[VFU_MAX_FDS + 1];
    unsigned nfds = 0;
    g_autofree uint8_t *payload = NULL;
    ssize_t n;
    bool ok;

    memset(&ctl, 0, sizeof(ctl));
    n = recvmsg(v->fd, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    if (n <= 0) {
        return false;           /* the end, an error, or a header not sent */
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            unsigned k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

            for (unsigned i = 0; i < k; i++) {
                int fd;

                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                if (nfds < G_N_ELEMENTS(fds)) {
                    fds[nfds++] = fd;
                } else {
                    close(fd);
                }
            }
        }
    }
    if (n != sizeof(h) || (m.msg_flags & MSG_CTRUNC) ||
        h.size < sizeof(h) || h.size > VFU_MAX_MESSAGE) {
        /* the end, or a header that cannot say where the next one starts */
        if (n > 0) {
            vfu_log(v, "a message header the server cannot "
                      "read past (%zd bytes, size %u): disconnecting", n,
                      n == sizeof(h) ? h.size : 0);
        }
        vfu_close_fds(fds, nfds);
        return false;
    }
    payload = g_malloc(h.size - sizeof(h) + 1);
    if (!vfu_read_all(v->fd, payload, h.size - sizeof(h), v->recv_timeout_ms)) {
        vfu_log(v, "message %u's payload did not arrive "
                  "within %u ms: disconnecting", h.id, v->recv_timeout_ms);
        vfu_close_fds(fds, nfds);
        return false;
    }
    ok = vfu_dispatch(v, &h, payload, h.size - sizeof(h), fds, nfds);
    return ok;
}
