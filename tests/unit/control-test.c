/* core: all control.c json.c */
/*
 * Unit tests of rdma-sim-server's control socket (server/control.c) and
 * the device's read-out behind it (hw/rdma-sim/introspect.c's JSON): a
 * client of the tests' own on a socket pair, the main context run until
 * each reply is whole.  QMP as scripts/rdma-sim-top speaks it, on a
 * device at power-on and on one a driver started, with a PD; and what a
 * careless or hostile client sends: commands before qmp_capabilities,
 * unknown ones, JSON that is not, a line longer than the limit, one
 * client too many.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "control.h"
#include "driver.h"
#include "introspect.h"
#include "json.h"

#define MEM_SIZE        (1 * MiB)

typedef struct Client {
    ServerControl c;
    int fd;                     /* the client's end */
} Client;

/* A client of the control of s, attached */
static void client_start(Client *t, RdmaSimState *s)
{
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    server_control_init(&t->c, s, "rsim0", -1);
    g_assert_true(server_control_attach(&t->c, sv[0]));
    t->fd = sv[1];
}

static void client_stop(Client *t)
{
    server_control_cleanup(&t->c);
    close(t->fd);
}

/* Dispatch what is ready in the main context: the control's work */
static void run_ready(void)
{
    bool more;

    do {
        more = g_main_context_iteration(NULL, false);
    } while (more);
}

/*
 * The next line from fd, its newline dropped, the main context run while
 * it comes; NULL: the control closed the connection
 */
static char *read_line(int fd)
{
    GString *line = g_string_new(NULL);

    for (int i = 0; i < 2000; i++) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char ch;

        run_ready();
        if (poll(&p, 1, 1) != 1) {
            continue;
        }
        /* byte by byte: the next line stays in the socket */
        while (recv(fd, &ch, 1, MSG_DONTWAIT) == 1) {
            if (ch == '\n') {
                return g_string_free(line, false);
            }
            g_string_append_c(line, ch);
        }
        if (recv(fd, &ch, 1, MSG_DONTWAIT | MSG_PEEK) == 0) {
            g_assert_cmpuint(line->len, ==, 0);
            g_string_free(line, true);
            return NULL;
        }
    }
    g_assert_not_reached();
}

/* Send a request (its newline added): the reply */
static char *rpc(Client *t, const char *request)
{
    g_autofree char *line = g_strdup_printf("%s\n", request);

    g_assert_cmpint(send(t->fd, line, strlen(line), 0), ==, strlen(line));
    return read_line(t->fd);
}

static void assert_rpc(Client *t, const char *request, const char *reply)
{
    g_autofree char *r = rpc(t, request);

    g_assert_cmpstr(r, ==, reply);
}

static void assert_rpc_error(Client *t, const char *request,
                             const char *desc_start)
{
    g_autofree char *r = rpc(t, request);
    g_autofree char *start = g_strdup_printf("{\"error\": {\"class\": "
                                             "\"GenericError\", \"desc\": "
                                             "\"%s", desc_start);

    g_assert_nonnull(r);
    if (!g_str_has_prefix(r, start)) {
        g_error("%s: %s, not %s...", request, r, start);
    }
}

/* The reply is {"return": ...}, whole JSON, and has each of the texts */
static void assert_return_has(Client *t, const char *request, ...)
    G_GNUC_NULL_TERMINATED;

static void assert_return_has(Client *t, const char *request, ...)
{
    g_autofree char *r = rpc(t, request);
    JsonReader j = { .max_depth = 16 };
    const char *text;
    va_list ap;

    g_assert_nonnull(r);
    g_assert_true(g_str_has_prefix(r, "{\"return\": "));
    j.p = r;
    j.end = r + strlen(r);
    g_assert_true(json_value(&j));
    g_assert_true(j.p == j.end);
    va_start(ap, request);
    while ((text = va_arg(ap, const char *))) {
        if (!strstr(r, text)) {
            g_error("%s: %s lacks %s", request, r, text);
        }
    }
    va_end(ap);
}

#define QOM_GET(prop)                                                   \
    "{\"execute\": \"qom-get\", \"arguments\": {\"path\": "             \
    "\"/machine/peripheral/rsim0\", \"property\": \"" prop "\"}}"
#define CAPS    "{\"execute\": \"qmp_capabilities\"}"

/* What rdma-sim-top asks, of a device at power-on */
static void test_qmp(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 1);
    g_autofree char *greeting = NULL;
    Client t;

    client_start(&t, s);
    greeting = read_line(t.fd);
    g_assert_cmpstr(greeting, ==, "{\"QMP\": {\"version\": {\"qemu\": "
                    "{\"micro\": 0, \"minor\": 0, \"major\": 0}, \"package\": "
                    "\"rdma-sim-server\"}, \"capabilities\": []}}");
    assert_rpc_error(&t, QOM_GET("port"), "Expecting capabilities "
                     "negotiation with 'qmp_capabilities'");
    /* an id comes back as it was sent */
    assert_rpc(&t, "{\"execute\": \"qmp_capabilities\", \"id\": [7, \"x\"]}",
               "{\"return\": {}, \"id\": [7, \"x\"]}");
    assert_rpc_error(&t, CAPS, "Capabilities negotiation is already "
                     "complete");
    assert_rpc(&t, "{\"execute\": \"qom-list\", \"arguments\": "
               "{\"path\": \"/machine/peripheral\"}}",
               "{\"return\": [{\"name\": \"rsim0\", "
               "\"type\": \"child<rdma-sim>\"}]}");
    assert_rpc(&t, "{\"execute\": \"qom-list\", \"arguments\": "
               "{\"path\": \"/machine/peripheral-anon\"}}",
               "{\"return\": []}");
    assert_return_has(&t, "{\"execute\": \"qom-list\", \"arguments\": "
                      "{\"path\": \"/machine/peripheral/rsim0\"}}",
                      "{\"name\": \"port\", \"type\": \"RdmaSimPort\"}",
                      "{\"name\": \"eqs\", \"type\": \"RdmaSimEqList\"}",
                      NULL);

    assert_return_has(&t, QOM_GET("port"), "\"active\": false",
                      "\"driver-ready\": false", "\"fatal\": false",
                      "\"mac\": \"52:54:00:5e:00:01\"", "\"eth-mtu\": 1500",
                      "\"host-mem-max\": 268435456", NULL);
    s->stats[RSIM_STAT_RX_FRAMES] = 42;
    assert_return_has(&t, QOM_GET("counters"), "{\"tx_frames\": 0, ",
                      "\"rx_frames\": 42, ", "\"guest_errors\": 0", NULL);
    assert_rpc(&t, QOM_GET("qps"), "{\"return\": []}");
    assert_rpc(&t, QOM_GET("pds"), "{\"return\": []}");
    /* the device's id alone is its path too, as QOM resolves it */
    assert_rpc(&t, "{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
               "\"rsim0\", \"property\": \"mrs\"}}", "{\"return\": []}");

    client_stop(&t);
    unit_core_free(s);
}

/* A device a driver started, with a PD: the lists have it */
static void test_device(void)
{
    struct rsim_admin_cqe cqe;
    uint32_t pdn;
    UDev d;
    Client t;

    udrv_start(&d, 7, MEM_SIZE);
    g_assert_cmpuint(udrv_cmd(&d, RSIM_CMD_ALLOC_PD, NULL, 0, &cqe), ==,
                     RSIM_STS_OK);
    pdn = ldl_le_p(cqe.result);
    client_start(&t, d.s);
    g_free(read_line(t.fd));
    assert_rpc(&t, CAPS, "{\"return\": {}}");
    assert_return_has(&t, QOM_GET("port"), "\"active\": true",
                      "\"driver-ready\": true",
                      "\"mac\": \"52:54:00:5e:00:07\"", NULL);
    {
        g_autofree char *pds = g_strdup_printf("{\"return\": [{\"pdn\": %u, "
                                               "\"refs\": 0}]}", pdn);

        assert_rpc(&t, QOM_GET("pds"), pds);
    }
    /* the other lists: whole JSON */
    assert_return_has(&t, QOM_GET("counters"), NULL);
    assert_return_has(&t, QOM_GET("eqs"), NULL);
    assert_return_has(&t, QOM_GET("mrs"), NULL);
    client_stop(&t);
    udrv_stop(&d);
}

/* What is not served, and what is not QMP: an error, the connection kept */
static void test_refused(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 1);
    const char *half = "\r\n{\"execute\": \"qom-get\", \"argu";
    Client t;

    client_start(&t, s);
    g_free(read_line(t.fd));
    assert_rpc(&t, CAPS, "{\"return\": {}}");
    assert_rpc_error(&t, "{\"execute\": \"quit\"}", "The command quit has "
                     "not been found: rdma-sim-server's control socket "
                     "serves qmp_capabilities, qom-list and qom-get");
    assert_rpc_error(&t, QOM_GET("type"), "Property 'rdma-sim.type' not "
                     "found");
    assert_rpc_error(&t, "{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
                     "\"/machine/peripheral/rsim1\", \"property\": \"qps\"}}",
                     "Device '/machine/peripheral/rsim1' not found");
    assert_rpc_error(&t, "{\"execute\": \"qom-list\", \"arguments\": "
                     "{\"path\": \"/machine\"}}",
                     "Device '/machine' not found");
    assert_rpc_error(&t, "{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
                     "\"rsim0\"}}", "Parameter 'property' is missing");
    assert_rpc_error(&t, "{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
                     "\"rsim0\", \"property\": \"qps\", \"x\": 1}}",
                     "Parameter 'x' is unexpected");
    assert_rpc_error(&t, "{\"execute\": 5}", "Invalid parameter type for "
                     "'execute', expected: string");
    assert_rpc_error(&t, "{\"arguments\": {}}", "QMP input lacks member "
                     "'execute'");
    /* not JSON, JSON that is not one object, nested too deep, not UTF-8 */
    assert_rpc_error(&t, "{\"execute\": ", "a request that is not one JSON "
                     "object: JSON: a value expected");
    assert_rpc_error(&t, "[1]", "a request that is not one JSON object: "
                     "JSON: an object expected");
    assert_rpc_error(&t, CAPS " {}", "a request that is not one JSON object: "
                     "more than one");
    assert_rpc_error(&t, "{\"id\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]"
                     "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", "a request that is not "
                     "one JSON object: JSON: nested too deep");
    assert_rpc_error(&t, "{\"execute\": \"\xff\"}", "a request that is not "
                     "one JSON object: not UTF-8");
    /* an empty line, and a request in two pieces: one reply */
    g_assert_cmpint(send(t.fd, half, strlen(half), 0), ==, strlen(half));
    run_ready();
    assert_rpc(&t, "ments\": {\"path\": \"rsim0\", \"property\": \"srqs\"}}",
               "{\"return\": []}");
    /* still served */
    assert_rpc(&t, QOM_GET("cqs"), "{\"return\": []}");
    /* requests in one piece: their replies in order, one at a time */
    {
        const char *three = QOM_GET("qps") "\n{\"execute\": \"quit\", "
                            "\"id\": 2}\n" QOM_GET("srqs") "\n";
        g_autofree char *r1 = NULL, *r2 = NULL, *r3 = NULL;

        g_assert_cmpint(send(t.fd, three, strlen(three), 0), ==,
                        strlen(three));
        r1 = read_line(t.fd);
        r2 = read_line(t.fd);
        r3 = read_line(t.fd);
        g_assert_cmpstr(r1, ==, "{\"return\": []}");
        g_assert_true(g_str_has_prefix(r2, "{\"error\": "));
        g_assert_true(g_str_has_suffix(r2, ", \"id\": 2}"));
        g_assert_cmpstr(r3, ==, "{\"return\": []}");
    }
    client_stop(&t);
    unit_core_free(s);
}

/* A line longer than CONTROL_MAX_LINE: an error, then the end */
static void test_long_line(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 1);
    g_autofree char *line = g_malloc(CONTROL_MAX_LINE * 4 + 1);
    g_autofree char *reply = NULL;
    Client t;

    memset(line, ' ', CONTROL_MAX_LINE * 4);
    line[CONTROL_MAX_LINE * 4] = 0;
    client_start(&t, s);
    g_free(read_line(t.fd));
    /* without its newline: the limit, not the newline, ends it */
    g_assert_cmpint(send(t.fd, line, CONTROL_MAX_LINE + 1, 0), ==,
                    CONTROL_MAX_LINE + 1);
    reply = read_line(t.fd);
    g_assert_cmpstr(reply, ==, "{\"error\": {\"class\": \"GenericError\", "
                    "\"desc\": \"a request of more than 4096 bytes: the "
                    "connection ends\"}}");
    g_assert_null(read_line(t.fd));
    g_assert_null(t.c.clients[0]);
    client_stop(&t);

    /* a line of exactly the limit is served */
    client_start(&t, s);
    g_free(read_line(t.fd));
    memcpy(line + CONTROL_MAX_LINE - strlen(CAPS), CAPS, strlen(CAPS));
    line[CONTROL_MAX_LINE] = 0;
    assert_rpc(&t, line, "{\"return\": {}}");
    client_stop(&t);
    unit_core_free(s);
}

/* CONTROL_MAX_CLIENTS at once; one more is told so and closed */
static void test_clients(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 1);
    g_autofree char *refused = NULL;
    ServerControl c;
    int fds[CONTROL_MAX_CLIENTS + 1];

    server_control_init(&c, s, "rsim0", -1);
    for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++) {
        int sv[2];

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
        g_assert_cmpint(server_control_attach(&c, sv[0]), ==,
                        i < CONTROL_MAX_CLIENTS);
        fds[i] = sv[1];
    }
    refused = read_line(fds[CONTROL_MAX_CLIENTS]);
    g_assert_cmpstr(refused, ==, "{\"error\": {\"class\": \"GenericError\", "
                    "\"desc\": \"rdma-sim-server's control socket serves 4 "
                    "clients at once, and has them\"}}");
    g_assert_null(read_line(fds[CONTROL_MAX_CLIENTS]));
    /* one goes: another may come */
    close(fds[0]);
    for (int i = 0; i < 100 && c.clients[0]; i++) {
        g_main_context_iteration(NULL, false);
    }
    g_assert_null(c.clients[0]);
    server_control_cleanup(&c);
    for (int i = 1; i <= CONTROL_MAX_CLIENTS; i++) {
        close(fds[i]);
    }
    unit_core_free(s);
}

/* introspect.c's JSON, without a socket */
static void test_json(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 1);
    g_autofree char *eqs = rdma_sim_introspect_json(s, "eqs");
    g_autoptr(GString) quoted = g_string_new(NULL);

    g_assert_cmpstr(eqs, ==, "[]");
    g_assert_null(rdma_sim_introspect_json(s, "nope"));
    g_assert_cmpstr(rdma_sim_introspect_prop(0, NULL, NULL), ==, "port");
    g_assert_null(rdma_sim_introspect_prop(RDMA_SIM_INTROSPECT_PROPS, NULL,
                                           NULL));
    rdma_sim_json_quote(quoted, "a\"b\\c\n\x01");
    g_assert_cmpstr(quoted->str, ==, "\"a\\\"b\\\\c\\u000a\\u0001\"");
    unit_core_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/control/qmp", test_qmp);
    g_test_add_func("/control/device", test_device);
    g_test_add_func("/control/refused", test_refused);
    g_test_add_func("/control/long-line", test_long_line);
    g_test_add_func("/control/clients", test_clients);
    g_test_add_func("/control/json", test_json);
    return g_test_run();
}
