/*
 * rdma-sim-server: the rdma-sim device served over vfio-user, to a QEMU
 * that has a vfio-user client (10.1 and later: -device vfio-user-pci)
 *
 * One process is one device.  It takes the device's properties as options
 * with the same names and ranges as -device rdma-sim (props.c), a netdev
 * with QEMU's socket netdev syntax, and serves one client at a time on a
 * UNIX socket; when the client goes, the device is reset and the next
 * one may come.
 *
 * --control PATH: what the device knows - its port, counters and objects,
 * as -device rdma-sim's read-only QOM properties give them - on a UNIX
 * socket of its own, in the part of QMP scripts/rdma-sim-top speaks
 * (scripts/rdma-sim-top PATH; server/control.c): the device is
 * /machine/peripheral/rsim0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib-unix.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "platform.h"
#include "control.h"
#include "host.h"
#include "transport.h"

/* The device's name on the control socket, as -device rdma-sim,id=... */
#define SERVER_DEVICE_ID "rsim0"

typedef struct Server {
    RdmaSimState *s;
    ServerHost host;
    int listen_fd;
    guint client_watch;
    const char *socket_path;
    const char *control_path;   /* --control: NULL if none */
    ServerControl control;
    bool once;                  /* --once: end with the first client */
    GMainLoop *loop;
} Server;

static void die(const char *fmt, ...) G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN;

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rdma-sim-server: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

/*
 * The BARs: BAR0's registers and BAR2's doorbells take naturally aligned
 * 32-bit accesses, as -device rdma-sim's do; BAR4's MSI-X table is the
 * client's own, and its PBA shows nothing pending (the device never holds
 * a vector back: the client masks)
 */

static bool server_bar_access_ok(Server *sv, unsigned bar, uint64_t offset,
                                 unsigned len)
{
    if (len == 4) {
        return true;
    }
    rdma_sim_guest_error(sv->s, "bar", "BAR%u access of %u bytes at 0x%"
                         PRIx64 ": only 32-bit accesses", bar, len, offset);
    return false;
}

static uint64_t server_bar_read(void *opaque, unsigned bar, uint64_t offset,
                                unsigned len)
{
    Server *sv = opaque;

    if (bar == RSIM_BAR_REGS && server_bar_access_ok(sv, bar, offset, len)) {
        /*
         * While the server waits for a DMA reply the device is in a step
         * (busy), but the read is the driver's: answered from the
         * registers as they are (the BAR writes kept for after the step
         * not yet applied)
         */
        return sv->host.vfu.waiting ? rdma_sim_regs_peek(sv->s, offset) :
               rdma_sim_regs_read(sv->s, offset);
    }
    return 0;
}

static void server_bar_write(void *opaque, unsigned bar, uint64_t offset,
                             uint64_t val, unsigned len)
{
    Server *sv = opaque;

    if (bar == RSIM_BAR_REGS && server_bar_access_ok(sv, bar, offset, len)) {
        rdma_sim_regs_write(sv->s, offset, val);
    } else if (bar == RSIM_BAR_DOORBELL &&
               server_bar_access_ok(sv, bar, offset, len)) {
        rdma_sim_db_write(sv->s, offset, val);
    }
}

static void server_reset(void *opaque)
{
    Server *sv = opaque;

    rdma_sim_reset_state(sv->s);
}

static const VfuDeviceOps server_ops = {
    .bar_read = server_bar_read,
    .bar_write = server_bar_write,
    .reset = server_reset,
};

/*
 * The client's connection
 */

static gboolean server_client_ready(gint fd, GIOCondition cond, gpointer data)
{
    Server *sv = data;

    if (vfu_server_receive(&sv->host.vfu)) {
        return G_SOURCE_CONTINUE;
    }
    vfu_server_detach(&sv->host.vfu);
    rdma_sim_reset_state(sv->s);
    sv->client_watch = 0;
    if (sv->once) {
        fprintf(stderr, "rdma-sim-server: client gone; --once: ending\n");
        g_main_loop_quit(sv->loop);
    } else {
        fprintf(stderr, "rdma-sim-server: client gone; device reset, waiting "
                "for the next on %s\n", sv->socket_path);
    }
    return G_SOURCE_REMOVE;
}

static gboolean server_accept(gint fd, GIOCondition cond, gpointer data)
{
    Server *sv = data;
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

    if (c < 0) {
        return G_SOURCE_CONTINUE;
    }
    if (sv->client_watch) {
        /* one device, one client */
        fprintf(stderr, "rdma-sim-server: a second client refused: the "
                "device has one\n");
        close(c);
        return G_SOURCE_CONTINUE;
    }
    vfu_server_attach(&sv->host.vfu, c);
    sv->client_watch = g_unix_fd_add(c, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                     server_client_ready, sv);
    return G_SOURCE_CONTINUE;
}

/* A listening UNIX socket at path, which option named */
static int server_listen(const char *option, const char *path)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    int fd;

    if (strlen(path) >= sizeof(a.sun_path)) {
        die("--%s %s: longer than a UNIX socket path may be (%zu)", option,
            path, sizeof(a.sun_path) - 1);
    }
    strcpy(a.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
        listen(fd, 1)) {
        die("cannot listen on %s: %s", path, g_strerror(errno));
    }
    return fd;
}

/*
 * The port's network: QEMU's socket netdev syntax,
 * socket,udp=HOST:PORT,localaddr=HOST:PORT or
 * socket,mcast=GROUP:PORT[,localaddr=ADDR]
 */

static void server_parse_addr(const char *what, const char *s,
                              struct sockaddr_in *a, bool need_port)
{
    g_autofree char *host = g_strdup(s);
    char *colon = strrchr(host, ':');
    char *end;
    unsigned long port = 0;

    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    if (colon) {
        *colon = 0;
        port = g_ascii_strtoull(colon + 1, &end, 10);
        if (*end || !colon[1] || port > 65535) {
            die("--netdev %s=%s: the port is not 0..65535", what, s);
        }
    } else if (need_port) {
        die("--netdev %s=%s: HOST:PORT expected", what, s);
    }
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
        die("--netdev %s=%s: an IPv4 address expected", what, s);
    }
    a->sin_port = htons(port);
}

static gboolean server_net_ready(gint fd, GIOCondition cond, gpointer data)
{
    Server *sv = data;
    uint8_t buf[RSIM_MAX_ETH_MTU + RSIM_ETH_FRAME_OVERHEAD + 64];

    /* a bounded burst, then the main loop again */
    for (unsigned i = 0; i < 64; i++) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n <= 0) {
            break;
        }
        rdma_sim_port_receive(sv->s, buf, n);
    }
    return G_SOURCE_CONTINUE;
}

static void server_netdev(Server *sv, const char *spec)
{
    g_auto(GStrv) opts = g_strsplit(spec, ",", -1);
    const char *udp = NULL, *mcast = NULL, *local = NULL;
    struct sockaddr_in la;
    int fd, one = 1;

    if (!opts[0] || strcmp(opts[0], "socket")) {
        die("--netdev %s: only socket,udp=... and socket,mcast=... (as "
            "QEMU's -netdev socket)", spec);
    }
    for (unsigned i = 1; opts[i]; i++) {
        if (g_str_has_prefix(opts[i], "udp=")) {
            udp = opts[i] + 4;
        } else if (g_str_has_prefix(opts[i], "mcast=")) {
            mcast = opts[i] + 6;
        } else if (g_str_has_prefix(opts[i], "localaddr=")) {
            local = opts[i] + 10;
        } else if (!g_str_has_prefix(opts[i], "id=")) {
            die("--netdev: unknown option %s", opts[i]);
        }
    }
    if (!udp == !mcast) {
        die("--netdev %s: one of udp= and mcast=", spec);
    }
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        die("socket: %s", g_strerror(errno));
    }
    if (udp) {
        if (!local) {
            die("--netdev %s: udp= needs localaddr=HOST:PORT", spec);
        }
        server_parse_addr("udp", udp, &sv->host.peer, true);
        server_parse_addr("localaddr", local, &la, true);
    } else {
        struct ip_mreq mreq = { 0 };

        server_parse_addr("mcast", mcast, &sv->host.peer, true);
        if (local) {
            server_parse_addr("localaddr", local, &la, false);
            mreq.imr_interface = la.sin_addr;
            setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &la.sin_addr,
                       sizeof(la.sin_addr));
        }
        mreq.imr_multiaddr = sv->host.peer.sin_addr;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq,
                       sizeof(mreq))) {
            die("--netdev %s: joining the group: %s", spec,
                g_strerror(errno));
        }
        setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one));
        /* bound to the group's port, on any address */
        memset(&la, 0, sizeof(la));
        la.sin_family = AF_INET;
        la.sin_port = sv->host.peer.sin_port;
    }
    if (bind(fd, (struct sockaddr *)&la, sizeof(la))) {
        die("--netdev %s: bind: %s", spec, g_strerror(errno));
    }
    sv->host.net_fd = fd;
    g_unix_fd_add(fd, G_IO_IN, server_net_ready, sv);
}

/*
 * Options
 */

static void server_usage(void)
{
    printf("usage: rdma-sim-server --socket PATH [--netdev SPEC] [--mac MAC]\n"
           "                       [--control PATH] [-d guest_errors]\n"
           "                       [--PROPERTY=VALUE]...\n"
           "\n"
           "Serves one rdma-sim device over vfio-user on the UNIX socket\n"
           "PATH, for QEMU 10.1 or later:\n"
           "  -device '{\"driver\":\"vfio-user-pci\",\"socket\":"
           "{\"type\":\"unix\",\"path\":\"PATH\"}}'\n"
           "Guest memory shared (-object memory-backend-memfd,share=on) is\n"
           "mapped; memory that is not is reached by DMA_READ/DMA_WRITE\n"
           "messages to QEMU (slower; a reply must come within %u ms, else\n"
           "the transfer fails and QEMU is disconnected).\n"
           "\n"
           "  --netdev socket,udp=HOST:PORT,localaddr=HOST:PORT\n"
           "  --netdev socket,mcast=GROUP:PORT[,localaddr=ADDR]\n"
           "                    the port's network, as QEMU's -netdev "
           "socket\n"
           "  --mac MAC         the port's MAC (default 52:54:00:12:34:56)\n"
           "  --control PATH    what the device knows (port, counters, "
           "QPs, CQs, MRs...)\n"
           "                    on a UNIX socket, in the part of QMP that\n"
           "                    scripts/rdma-sim-top PATH reads (qom-list, "
           "qom-get of\n"
           "                    /machine/peripheral/" SERVER_DEVICE_ID
           ", as -device rdma-sim,id=" SERVER_DEVICE_ID "'s)\n"
           "  -d guest_errors   log what the guest does wrong, as QEMU's "
           "-d\n"
           "  --trace PATTERN, --trace=PATTERN  print the trace events whose names match "
           "(QEMU's names,\n"
           "                    e.g. 'rdma_sim_qp_*'), as QEMU's -trace\n"
           "  --once            end when the first client goes (for a "
           "harness)\n"
           "\nThe device's properties, as -device rdma-sim's:\n",
           VFU_DMA_TIMEOUT_MS);
    for (size_t i = 0; i < rdma_sim_nprops; i++) {
        const RdmaSimPropInfo *p = &rdma_sim_props[i];

        printf("  --%s=N  %s; %u..%u (default %u)\n", p->name, p->desc,
               p->min, p->max, p->def);
    }
    printf("  --fault-seed=N  the fault generator's seed (0: from the "
           "clock)\n");
}

static bool server_prop_option(RdmaSimProps *props, const char *arg)
{
    for (size_t i = 0; i < rdma_sim_nprops; i++) {
        const RdmaSimPropInfo *p = &rdma_sim_props[i];
        size_t n = strlen(p->name);
        char *end;
        unsigned long long v;

        if (strncmp(arg, p->name, n) || arg[n] != '=') {
            continue;
        }
        errno = 0;
        v = g_ascii_strtoull(arg + n + 1, &end, 0);
        if (errno || *end || !arg[n + 1] || v < p->min || v > p->max) {
            die("--%s must be %u..%u, not %s", p->name, p->min, p->max,
                arg + n + 1);
        }
        *rdma_sim_prop_ptr(props, p) = v;
        return true;
    }
    if (g_str_has_prefix(arg, "fault-seed=")) {
        char *end;

        errno = 0;
        props->fault_seed = g_ascii_strtoull(arg + 11, &end, 0);
        if (errno || *end || !arg[11]) {
            die("--fault-seed must be a 64-bit number, not %s", arg + 11);
        }
        return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    Server sv = { .listen_fd = -1 };
    const char *netdev = NULL, *mac = "52:54:00:12:34:56";
    RdmaSimState *s = g_new0(RdmaSimState, 1);
    unsigned m[6];
    g_autoptr(GMainLoop) loop = NULL;

    server_host_init();
    sv.s = s;
    sv.host.net_fd = -1;
    s->host = &sv.host;
    rdma_sim_props_default(&s->props);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            server_usage();
            return 0;
        } else if (!strcmp(a, "--socket") && i + 1 < argc) {
            sv.socket_path = argv[++i];
        } else if (!strcmp(a, "--netdev") && i + 1 < argc) {
            netdev = argv[++i];
        } else if (!strcmp(a, "--mac") && i + 1 < argc) {
            mac = argv[++i];
        } else if (!strcmp(a, "--control") && i + 1 < argc) {
            sv.control_path = argv[++i];
        } else if (!strcmp(a, "-d") && i + 1 < argc &&
                   !strcmp(argv[i + 1], "guest_errors")) {
            sv.host.log_guest_errors = true;
            i++;
        } else if ((!strcmp(a, "--trace") && i + 1 < argc) ||
                   g_str_has_prefix(a, "--trace=")) {
            /* (--trace=PATTERN too: the VM harness passes --NAME=VALUE) */
            const char *pat = a[7] == '=' ? a + 8 : argv[++i];

            if (!server_trace_enable(pat)) {
                die("--trace %s: no trace event matches (the names are in "
                    "hw/rdma-sim/trace-events)", pat);
            }
        } else if (!strcmp(a, "--once")) {
            sv.once = true;
        } else if (!g_str_has_prefix(a, "--") ||
                   !server_prop_option(&s->props, a + 2)) {
            die("unknown option %s (--help lists them)", a);
        }
    }
    if (!sv.socket_path) {
        die("--socket PATH is needed: the UNIX socket QEMU's vfio-user-pci "
            "connects to (--help)");
    }
    if (sv.control_path && !strcmp(sv.control_path, sv.socket_path)) {
        die("--control %s: the path of --socket; the control socket needs "
            "one of its own", sv.control_path);
    }
    if (sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3],
               &m[4], &m[5]) != 6 || strlen(mac) != 17 || (m[0] & 1)) {
        die("--mac %s: a unicast MAC such as 52:54:00:12:34:56 expected",
            mac);
    }
    for (int i = 0; i < 6; i++) {
        s->perm_mac[i] = m[i];
    }
    if (netdev) {
        server_netdev(&sv, netdev);
    }
    vfu_server_init(&sv.host.vfu, &server_ops, &sv, s->props.db_pages,
                    s->props.msix_vectors);

    /* what -device rdma-sim's realize does with the device */
    rdma_sim_objects_init(s);
    rdma_sim_admin_init(s);
    rdma_sim_transport_init(s);
    rdma_sim_reset_state(s);

    sv.listen_fd = server_listen("socket", sv.socket_path);
    g_unix_fd_add(sv.listen_fd, G_IO_IN, server_accept, &sv);
    if (sv.control_path) {
        server_control_init(&sv.control, s, SERVER_DEVICE_ID,
                            server_listen("control", sv.control_path));
        fprintf(stderr, "rdma-sim-server: control socket (scripts/"
                "rdma-sim-top) on %s\n", sv.control_path);
    }
    fprintf(stderr, "rdma-sim-server: serving rdma-sim (%s) on %s\n", mac,
            sv.socket_path);
    loop = g_main_loop_new(NULL, false);
    sv.loop = loop;
    g_main_loop_run(loop);
    unlink(sv.socket_path);
    if (sv.control_path) {
        server_control_cleanup(&sv.control);
        unlink(sv.control_path);
    }
    return 0;
}
