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
 * Memory the client maps without a descriptor is reached by the server's
 * own DMA_READ/DMA_WRITE requests.  QEMU answers them in its main loop,
 * under the lock its vCPUs hold while they wait for the reply to a region
 * read or a non-posted write: so while the server waits for a DMA reply it
 * keeps answering the messages that need not the device's engine (which
 * is in the middle of a step), and keeps the others for after the step
 * (vfu_server_run_deferred()).  DMA writes go without a reply asked (the
 * client handles requests in order, so a later read or reply sees them);
 * an interrupt first waits for a reply, so that it cannot overtake them
 * (its eventfd does not go through the socket).
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

/* A message received whole: header, payload, descriptors */
typedef struct VfuMsg {
    struct vfu_header h;
    uint8_t *p;                 /* g_malloc'ed, one byte more than len */
    size_t len;
    int fds[VFU_MAX_FDS + 1];
    unsigned nfds;
} VfuMsg;

/*
 * A client's command kept during a DMA wait: a BAR write (already
 * answered), or a reset (answered when done)
 */
typedef struct VfuDeferred {
    struct vfu_header h;
    uint32_t region;
    unsigned len;
    uint64_t offset, val;
} VfuDeferred;

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
    v->dma_timeout_ms = VFU_DMA_TIMEOUT_MS;
    g_queue_init(&v->deferred);
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
    v->waiting = v->abort_wait = v->broken = v->posted = false;
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
    g_queue_clear_full(&v->deferred, g_free);
    if (v->deferred_src) {
        g_source_remove(v->deferred_src);
        v->deferred_src = 0;
    }
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

static void vfu_dma_fence(VfuServer *v);

void vfu_server_msix(VfuServer *v, unsigned vector)
{
    uint64_t one = 1;

    /*
     * During a wait the fence cannot wait too (only a client's SET_IRQS
     * triggers then, not the device)
     */
    if (v->posted && !v->waiting) {
        vfu_dma_fence(v);
    }
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

/*
 * What arrives during a DMA wait and needs the device's engine is kept,
 * in order, for after the step; the main loop applies it (an idle source)
 * before it reads the next message
 */

static gboolean vfu_deferred_idle(gpointer opaque)
{
    VfuServer *v = opaque;

    v->deferred_src = 0;
    vfu_server_run_deferred(v);
    return G_SOURCE_REMOVE;
}

static void vfu_defer(VfuServer *v, const VfuDeferred *d)
{
    g_queue_push_tail(&v->deferred, g_memdup2(d, sizeof(*d)));
    if (v->deferred.length >= VFU_MAX_DEFERRED) {
        /* no room for more: end the wait, so that the step ends too */
        v->abort_wait = true;
    }
    if (!v->deferred_src) {
        /*
         * Before the main loop's other sources: until it runs, a wait
         * that was ended leaves every DMA by message failing
         */
        v->deferred_src = g_idle_add_full(G_PRIORITY_HIGH, vfu_deferred_idle,
                                          v, NULL);
    }
}

static bool vfu_reply(VfuServer *v, const struct vfu_header *req, int err,
                      const void *payload, size_t len);

void vfu_server_run_deferred(VfuServer *v)
{
    /* what is kept now: a wait in one of them may keep more, for next time */
    guint n = g_queue_get_length(&v->deferred);
    VfuDeferred *d;

    g_assert(!v->waiting);
    if (v->deferred_src) {
        g_source_remove(v->deferred_src);
        v->deferred_src = 0;
    }
    while (n-- && (d = g_queue_pop_head(&v->deferred))) {
        /* a wait ended early ended only the step it was in */
        v->abort_wait = false;
        if (v->fd >= 0 && !v->broken) {
            if (d->h.command == VFU_DEVICE_RESET) {
                v->ops->reset(v->opaque);
                vfu_reply(v, &d->h, 0, NULL, 0);
            } else {
                v->ops->bar_write(v->opaque, d->region, d->offset, d->val,
                                  d->len);
            }
        }
        g_free(d);
    }
    v->abort_wait = false;
    if (!g_queue_is_empty(&v->deferred) && !v->deferred_src) {
        v->deferred_src = g_idle_add_full(G_PRIORITY_HIGH, vfu_deferred_idle,
                                          v, NULL);
    }
}

/* A region access: config space here, BARs to the device */
static int vfu_region_access(VfuServer *v, const struct vfu_header *h,
                             const struct vfu_region_access *a,
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
        if (v->waiting) {
            VfuDeferred d = {
                .h = *h, .region = a->region, .offset = a->offset,
                .val = le64_to_cpu(val), .len = a->count,
            };

            vfu_defer(v, &d);
        } else {
            v->ops->bar_write(v->opaque, a->region, a->offset,
                              le64_to_cpu(val), a->count);
        }
    } else {
        /* reading a register has no side effect: answered even in a wait */
        val = cpu_to_le64(v->ops->bar_read(v->opaque, a->region, a->offset,
                                           a->count));
        memcpy(data, &val, a->count);
    }
    return 0;
}

/* A reply that is not the one a wait awaits */
static void vfu_stray_reply(VfuServer *v, const struct vfu_header *h)
{
    v->errors++;
    if (h->command == VFU_DMA_WRITE && (h->flags & VFU_F_ERROR)) {
        /* the client says so even when no reply was asked */
        vfu_log(v, "a DMA write sent without a reply failed in the client "
                "(request %u): %s", h->id, g_strerror(h->error));
    } else {
        vfu_log(v, "a reply to no pending request (id %u): dropped", h->id);
    }
}

static bool vfu_dispatch(VfuServer *v, const VfuMsg *m)
{
    const struct vfu_header *h = &m->h;
    uint8_t *p = m->p;
    size_t len = m->len;
    const int *fds = m->fds;
    unsigned nfds = m->nfds;
    const char *why = NULL;
    int err;

    if ((h->flags & VFU_F_TYPE_MASK) == VFU_F_TYPE_REPLY) {
        vfu_stray_reply(v, h);
        return true;
    }
    err = vfu_msg_check(h, p, len, nfds, &why);

    if (!err && !v->negotiated && h->command != VFU_VERSION) {
        err = EINVAL;
        why = "a command before VERSION";
    }
    if (!err && v->waiting && h->command == VFU_VERSION) {
        err = EINVAL;
        why = "VERSION again";
    }
    if (err) {
        v->errors++;
        vfu_log(v, "message %u (command %u) refused: %s",
                  h->id, h->command, why);
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
        return vfu_reply(v, h, err, NULL, 0);
    case VFU_REGION_READ: {
        const struct vfu_region_access *a = (const void *)p;
        g_autofree uint8_t *r = g_malloc0(sizeof(*a) + a->count);

        memcpy(r, a, sizeof(*a));
        err = -vfu_region_access(v, h, a, r + sizeof(*a), false);
        return vfu_reply(v, h, err, r, sizeof(*a) + a->count);
    }
    case VFU_REGION_WRITE:
        err = -vfu_region_access(v, h, (const void *)p,
                                p + sizeof(struct vfu_region_access), true);
        return vfu_reply(v, h, err, p, sizeof(struct vfu_region_access));
    case VFU_DEVICE_RESET:
        if (v->waiting) {
            VfuDeferred d = { .h = *h };

            /*
             * The reset ends the step that waits, then is done and
             * answered (QEMU waits for this reply under the lock that
             * keeps it from answering the DMA request)
             */
            vfu_defer(v, &d);
            v->abort_wait = true;
            return true;
        }
        v->ops->reset(v->opaque);
        return vfu_reply(v, h, 0, NULL, 0);
    }
    g_assert_not_reached();     /* vfu_msg_check() refused the rest */
}

static void vfu_msg_free(VfuMsg *m)
{
    vfu_close_fds(m->fds, m->nfds);
    m->nfds = 0;
    g_free(m->p);
    m->p = NULL;
}

/*
 * Receive one message whole, header and payload (within recv_timeout_ms of
 * each other), with its descriptors: false when the connection ends
 */
static bool vfu_recv(VfuServer *v, VfuMsg *msg)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE((VFU_MAX_FDS + 1) * sizeof(int))];
    } ctl;
    struct iovec iov = { .iov_base = &msg->h, .iov_len = sizeof(msg->h) };
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
    };
    struct vfu_header *h = &msg->h;
    ssize_t n;

    memset(&ctl, 0, sizeof(ctl));
    msg->nfds = 0;
    msg->p = NULL;
    msg->len = 0;
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
                if (msg->nfds < G_N_ELEMENTS(msg->fds)) {
                    msg->fds[msg->nfds++] = fd;
                } else {
                    close(fd);
                }
            }
        }
    }
    if (n != sizeof(*h) || (m.msg_flags & MSG_CTRUNC) ||
        h->size < sizeof(*h) || h->size > VFU_MAX_MESSAGE) {
        /* the end, or a header that cannot say where the next one starts */
        vfu_log(v, "a message header the server cannot read past (%zd "
                "bytes, size %u): disconnecting", n,
                n == sizeof(*h) ? h->size : 0);
        vfu_msg_free(msg);
        return false;
    }
    msg->len = h->size - sizeof(*h);
    msg->p = g_malloc(msg->len + 1);
    if (!vfu_read_all(v->fd, msg->p, msg->len, v->recv_timeout_ms)) {
        vfu_log(v, "message %u's payload did not arrive "
                  "within %u ms: disconnecting", h->id, v->recv_timeout_ms);
        vfu_msg_free(msg);
        return false;
    }
    return true;
}

bool vfu_server_receive(VfuServer *v)
{
    struct pollfd pfd = { .events = POLLIN };
    VfuMsg m;
    bool ok;
    int ready;

    if (v->broken) {
        return false;           /* it failed a DMA request: it goes */
    }
    /* what came before this message first */
    vfu_server_run_deferred(v);
    if (v->broken) {
        return false;
    }
    /*
     * Only what is there: the message that woke the main loop may have been
     * read and answered already, by a DMA wait of the work just done (or of
     * a device step that ran before this watch), and a read that blocks
     * would wait for the client's next message, or time out and end it
     */
    pfd.fd = v->fd;
    ready = poll(&pfd, 1, 0);
    if (ready == 0 || (ready < 0 && errno == EINTR)) {
        return true;
    }
    if (!vfu_recv(v, &m)) {
        return false;
    }
    ok = vfu_dispatch(v, &m);
    vfu_msg_free(&m);
    return ok;
}

/*
 * DMA by messages
 */

const VfuDmaWindow *vfu_server_dma_window(VfuServer *v, uint64_t addr)
{
    for (guint i = 0; i < v->dma->len; i++) {
        const VfuDmaWindow *w = &g_array_index(v->dma, VfuDmaWindow, i);

        if (addr >= w->address && addr - w->address < w->size) {
            return w;
        }
    }
    return NULL;
}

/* The client cannot be trusted with another request: the connection ends */
static void vfu_break(VfuServer *v)
{
    v->broken = true;
    if (v->fd >= 0) {
        /* the main loop sees the end, and vfu_server_receive() says so */
        shutdown(v->fd, SHUT_RDWR);
    }
}

/* Send a DMA request with data after its fixed part: its id, or -1 */
static int vfu_request(VfuServer *v, uint16_t command, uint32_t flags,
                       uint64_t addr, uint64_t count, const void *data,
                       size_t len)
{
    struct vfu_dma_access a = { .address = addr, .count = count };
    struct vfu_header h = {
        .id = ++v->next_id, .command = command,
        .size = sizeof(h) + sizeof(a) + len, .flags = flags,
    };
    struct iovec iov[3] = {
        { .iov_base = &h, .iov_len = sizeof(h) },
        { .iov_base = &a, .iov_len = sizeof(a) },
        { .iov_base = (void *)data, .iov_len = len },
    };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 3 : 2 };

    if (sendmsg(v->fd, &m, MSG_NOSIGNAL) != (ssize_t)h.size) {
        /* nothing, or part of it (the stream is lost), went */
        vfu_log(v, "a DMA request could not be sent: disconnecting");
        vfu_break(v);
        return -1;
    }
    return h.id;
}

/*
 * Wait for the reply to request id (*r: to free), answering or keeping
 * what else arrives meanwhile: 0 or -errno
 */
static int vfu_await(VfuServer *v, uint16_t id, VfuMsg *r)
{
    int64_t deadline = g_get_monotonic_time() + v->dma_timeout_ms * 1000ll;
    int err = 0;

    g_assert(!v->waiting);
    v->waiting = true;
    for (;;) {
        int64_t left = deadline - g_get_monotonic_time();
        struct pollfd pfd = { .fd = v->fd, .events = POLLIN };
        int n;

        if (v->abort_wait) {
            err = -ECANCELED;
            break;
        }
        if (left <= 0) {
            vfu_log(v, "no reply to DMA request %u within %u ms: "
                    "disconnecting", id, v->dma_timeout_ms);
            err = -ETIMEDOUT;
            break;
        }
        n = poll(&pfd, 1, DIV_ROUND_UP(left, 1000));
        if (n < 0 && errno != EINTR) {
            err = -errno;
            break;
        }
        if (n <= 0) {
            continue;
        }
        if (!vfu_recv(v, r)) {
            err = -EPIPE;
            break;
        }
        if ((r->h.flags & VFU_F_TYPE_MASK) == VFU_F_TYPE_REPLY &&
            r->h.id == id) {
            v->waiting = false;
            return 0;
        }
        n = vfu_dispatch(v, r);
        vfu_msg_free(r);
        if (!n) {
            err = -EPIPE;
            break;
        }
    }
    v->waiting = false;
    if (err != -ECANCELED) {
        vfu_break(v);
    }
    return err;
}

/*
 * The reply r to a DMA request for count bytes at addr: 0 if it is the
 * reply, -errno if the client refused; a reply that is not what was asked
 * says the client is broken (the connection ends)
 */
static int vfu_dma_reply_check(VfuServer *v, const VfuMsg *r,
                               uint16_t command, uint64_t addr,
                               uint64_t count)
{
    const struct vfu_dma_access *a = (const void *)r->p;
    const char *why = NULL;
    uint32_t count32;

    if (r->nfds) {
        why = "descriptors with it";
    } else if (r->h.command != command) {
        why = "another command's";
    } else if (r->h.flags & ~(VFU_F_TYPE_MASK | VFU_F_ERROR)) {
        why = "unknown flags";
    } else if (r->h.flags & VFU_F_ERROR) {
        if (r->len || !r->h.error) {
            why = "an error with a payload, or error 0";
        } else {
            vfu_log(v, "DMA %s of %" PRIu64 " bytes at 0x%" PRIx64
                    " refused by the client: %s", command == VFU_DMA_READ ?
                    "read" : "write", count, addr, g_strerror(r->h.error));
            return r->h.error < 4096 ? -(int)r->h.error : -EIO;
        }
    } else if (command == VFU_DMA_READ) {
        if (r->len != sizeof(*a) + count || a->address != addr ||
            a->count != count) {
            why = "not the data asked for";
        }
    } else if (r->len) {
        /*
         * The specification's reply is the address and a 32-bit count;
         * QEMU's is empty
         */
        if (r->len != 12 && r->len != sizeof(*a)) {
            why = "not the size of a DMA_WRITE reply";
        } else {
            memcpy(&count32, r->p + 8, sizeof(count32));
            if (a->address != addr || count32 != (uint32_t)count) {
                why = "not the transfer asked for";
            }
        }
    }
    if (why) {
        v->errors++;
        vfu_log(v, "reply %u to a DMA request: %s: disconnecting", r->h.id,
                why);
        vfu_break(v);
        return -EPROTO;
    }
    return 0;
}

/* Send a request and check its reply; *r holds it then (to free) */
static int vfu_dma_call(VfuServer *v, uint16_t command, uint64_t addr,
                        uint64_t count, const void *data, size_t len,
                        VfuMsg *r)
{
    int id = vfu_request(v, command, 0, addr, count, data, len);
    int err;

    if (id < 0) {
        return -EPIPE;
    }
    err = vfu_await(v, id, r);
    if (err) {
        return err;
    }
    /* the client handles requests in order: the DMA writes before are done */
    v->posted = false;
    err = vfu_dma_reply_check(v, r, command, addr, count);
    if (err) {
        vfu_msg_free(r);
    }
    return err;
}

static void vfu_dma_fence(VfuServer *v)
{
    VfuMsg r;

    /* any reply will do, even a refusal: a read of one byte asks for one */
    if (v->fd >= 0 && !v->broken &&
        vfu_dma_call(v, VFU_DMA_READ, v->fence_addr, 1, NULL, 0, &r) == 0) {
        vfu_msg_free(&r);
    }
    v->posted = false;
}

int vfu_server_dma_msg(VfuServer *v, uint64_t addr, void *buf, uint64_t len,
                       bool write)
{
    uint64_t max = MIN(v->caps.max_data_xfer_size, VFU_MAX_XFER);
    uint8_t *p = buf;

    if (v->fd < 0 || v->broken || !v->negotiated) {
        return -ENOTCONN;
    }
    if (v->waiting || v->abort_wait) {
        /* a step already ending (a reset, or too much kept) */
        return -ECANCELED;
    }
    while (len) {
        /* again for every piece: a wait may have changed the windows */
        const VfuDmaWindow *w = vfu_server_dma_window(v, addr);
        uint64_t n;
        VfuMsg r;
        int err;

        if (!w || w->map ||
            !(w->prot & (write ? VFU_DMA_WRITE_OK : VFU_DMA_READ_OK))) {
            return -EFAULT;
        }
        n = MIN(MIN(len, max), w->size - (addr - w->address));
        if (write) {
            if (vfu_request(v, VFU_DMA_WRITE, VFU_F_NO_REPLY, addr, n, p,
                            n) < 0) {
                return -EPIPE;
            }
            v->posted = true;
            v->fence_addr = addr;
        } else {
            err = vfu_dma_call(v, VFU_DMA_READ, addr, n, NULL, 0, &r);
            if (err) {
                return err;
            }
            memcpy(p, r.p + sizeof(struct vfu_dma_access), n);
            vfu_msg_free(&r);
        }
        addr += n;
        p += n;
        len -= n;
    }
    return 0;
}
