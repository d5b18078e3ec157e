/*
 * rdma-sim-server: the control socket - what the device knows, for
 * scripts/rdma-sim-top, out of process
 *
 * In QEMU the device's read-only properties (introspect.c) are QOM
 * properties, read with QMP's qom-get.  rdma-sim-server has no QMP:
 * --control PATH serves the part of it that rdma-sim-top uses, on a UNIX
 * socket of its own, one JSON request a line:
 *
 *   the greeting       {"QMP": {"version": ..., "capabilities": []}}
 *   qmp_capabilities   {"return": {}}; nothing else is served before it
 *   qom-list           /machine/peripheral: the device, a child<rdma-sim>
 *                      named as ServerControl's id says ("rsim0");
 *                      /machine/peripheral-anon: nothing; the device's
 *                      path: its properties and their types
 *   qom-get            the device's port, counters, pds, qps, cqs, srqs,
 *                      mrs and eqs: the JSON QEMU gives for them
 *
 * Anything else has an error reply, {"error": {"class": "GenericError",
 * "desc": ...}}, which says what is served; an "id" comes back in the
 * reply, as QMP's does.  Bounded, in the server's main loop and never
 * blocking it: CONTROL_MAX_CLIENTS clients at once (one more is told so
 * and closed), a line of CONTROL_MAX_LINE bytes (a longer one has an error
 * reply, then the connection ends), one reply held per client (its next
 * request is read once the reply is sent).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <glib-unix.h>
#include <sys/socket.h>
#include <unistd.h>
#include "platform.h"
#include "control.h"
#include "introspect.h"
#include "json.h"

#define CONTROL_PERIPHERAL      "/machine/peripheral"
#define CONTROL_GREETING                                                \
    "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 0, "  \
    "\"major\": 0}, \"package\": \"rdma-sim-server\"}, "                \
    "\"capabilities\": []}}\n"
/* How deep a request's JSON may nest */
#define CONTROL_JSON_DEPTH      32

struct ControlClient {
    ServerControl *c;
    int fd;
    guint watch;
    GIOCondition watching;      /* G_IO_IN or G_IO_OUT */
    GString *in;                /* received, not yet answered */
    GString *out;               /* the reply, sent up to out_sent */
    size_t out_sent;
    bool negotiated;            /* qmp_capabilities done */
    bool closing;               /* end once the reply is sent */
};

/*
 * A request: {"execute": NAME, "arguments": {...}, "id": ANY}; the
 * arguments taken are path and property
 */
typedef struct ControlRequest {
    GString *execute, *path, *property;     /* NULL: not given */
    const char *id;                         /* the id's JSON, id_len bytes */
    size_t id_len;
    char *error;                            /* the first member refused */
} ControlRequest;

static void control_refuse(ControlRequest *r, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

static void control_refuse(ControlRequest *r, const char *fmt, ...)
{
    va_list ap;

    if (!r->error) {
        va_start(ap, fmt);
        r->error = g_strdup_vprintf(fmt, ap);
        va_end(ap);
    }
}

static bool control_string(JsonReader *j, ControlRequest *r, const char *key,
                           GString **val)
{
    if (j->p < j->end && *j->p == '"') {
        if (!*val) {
            *val = g_string_new(NULL);
        }
        g_string_truncate(*val, 0);
        return json_string(j, *val);
    }
    control_refuse(r, "Invalid parameter type for '%s', expected: string",
                   key);
    return json_value(j);
}

static bool control_argument(JsonReader *j, const char *key, void *opaque)
{
    ControlRequest *r = opaque;

    if (!strcmp(key, "path")) {
        return control_string(j, r, key, &r->path);
    }
    if (!strcmp(key, "property")) {
        return control_string(j, r, key, &r->property);
    }
    control_refuse(r, "Parameter '%s' is unexpected", key);
    return json_value(j);
}

static bool control_member(JsonReader *j, const char *key, void *opaque)
{
    ControlRequest *r = opaque;
    bool ok;

    if (!strcmp(key, "execute")) {
        return control_string(j, r, key, &r->execute);
    }
    if (!strcmp(key, "arguments")) {
        if (j->p < j->end && *j->p == '{') {
            return json_object(j, control_argument, r);
        }
        control_refuse(r, "QMP input member 'arguments' must be an object");
        return json_value(j);
    }
    if (!strcmp(key, "id")) {
        r->id = j->p;
        ok = json_value(j);
        r->id_len = j->p - r->id;
        return ok;
    }
    control_refuse(r, "QMP input member '%s' is unexpected", key);
    return json_value(j);
}

/* Read a request's line into r: NULL, or what is wrong with it */
static const char *control_parse(ControlRequest *r, const char *line,
                                 size_t len)
{
    JsonReader j = { .p = line, .end = line + len,
                     .max_depth = CONTROL_JSON_DEPTH };

    if (!g_utf8_validate_len(line, len, NULL)) {
        return "not UTF-8";
    }
    if (!json_object(&j, control_member, r)) {
        return j.why;
    }
    json_ws(&j);
    return j.p == j.end ? NULL : "more than one JSON object on a line";
}

static void control_request_free(ControlRequest *r)
{
    GString *s[] = { r->execute, r->path, r->property };

    for (size_t i = 0; i < G_N_ELEMENTS(s); i++) {
        if (s[i]) {
            g_string_free(s[i], true);
        }
    }
    g_free(r->error);
}

/*
 * Replies: {"return": VALUE} or an error, with the request's id if it had
 * one, a line each
 */
static void control_reply_end(GString *out, const ControlRequest *r)
{
    if (r && r->id) {
        g_string_append(out, ", \"id\": ");
        g_string_append_len(out, r->id, r->id_len);
    }
    g_string_append(out, "}\n");
}

static void control_error(GString *out, const ControlRequest *r,
                          const char *desc)
{
    g_string_append(out, "{\"error\": {\"class\": \"GenericError\", "
                    "\"desc\": ");
    rdma_sim_json_quote(out, desc);
    g_string_append_c(out, '}');
    control_reply_end(out, r);
}

static void control_errorf(GString *out, const ControlRequest *r,
                           const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void control_errorf(GString *out, const ControlRequest *r,
                           const char *fmt, ...)
{
    g_autofree char *desc = NULL;
    va_list ap;

    va_start(ap, fmt);
    desc = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    control_error(out, r, desc);
}

/* The device's path: CONTROL_PERIPHERAL/id, or id alone as QOM takes it */
static bool control_is_device(ServerControl *c, const char *path)
{
    const char *dir = CONTROL_PERIPHERAL "/";

    if (g_str_has_prefix(path, dir)) {
        path += strlen(dir);
    }
    return !strcmp(path, c->id);
}

static void control_qom_list(ServerControl *c, ControlRequest *r,
                             GString *out)
{
    const char *path = r->path->str, *name, *type;

    if (!strcmp(path, CONTROL_PERIPHERAL)) {
        g_string_append(out, "{\"return\": [{\"name\": ");
        rdma_sim_json_quote(out, c->id);
        g_string_append(out, ", \"type\": \"child<rdma-sim>\"}]");
    } else if (!strcmp(path, CONTROL_PERIPHERAL "-anon")) {
        g_string_append(out, "{\"return\": []");
    } else if (control_is_device(c, path)) {
        g_string_append(out, "{\"return\": [");
        for (size_t i = 0; (name = rdma_sim_introspect_prop(i, &type, NULL));
             i++) {
            g_string_append(out, i ? ", {\"name\": " : "{\"name\": ");
            rdma_sim_json_quote(out, name);
            g_string_append(out, ", \"type\": ");
            rdma_sim_json_quote(out, type);
            g_string_append_c(out, '}');
        }
        g_string_append_c(out, ']');
    } else {
        control_errorf(out, r, "Device '%s' not found: rdma-sim-server's "
                       "control socket has " CONTROL_PERIPHERAL " and its "
                       "device " CONTROL_PERIPHERAL "/%s", path, c->id);
        return;
    }
    control_reply_end(out, r);
}

static void control_qom_get(ServerControl *c, ControlRequest *r,
                            GString *out)
{
    g_autofree char *json = NULL;

    if (!control_is_device(c, r->path->str)) {
        control_errorf(out, r, "Device '%s' not found: rdma-sim-server's "
                       "device is " CONTROL_PERIPHERAL "/%s", r->path->str,
                       c->id);
        return;
    }
    json = rdma_sim_introspect_json(c->s, r->property->str);
    if (!json) {
        control_errorf(out, r, "Property 'rdma-sim.%s' not found: "
                       "rdma-sim-server's control socket serves port, "
                       "counters, pds, qps, cqs, srqs, mrs and eqs",
                       r->property->str);
        return;
    }
    g_string_append(out, "{\"return\": ");
    g_string_append(out, json);
    control_reply_end(out, r);
}

/* The reply to one request, a line without its newline, at the end of out */
static void control_request(ControlClient *cl, const char *line, size_t len,
                            GString *out)
{
    ControlRequest r = { 0 };
    const char *cmd = "", *why = control_parse(&r, line, len);

    if (why) {
        control_errorf(out, NULL, "a request that is not one JSON object: "
                       "%s", why);
        control_request_free(&r);
        return;
    }
    if (r.execute) {
        cmd = r.execute->str;
    }
    if (r.error) {
        control_error(out, &r, r.error);
    } else if (!r.execute) {
        control_error(out, &r, "QMP input lacks member 'execute'");
    } else if (!strcmp(cmd, "qmp_capabilities")) {
        if (cl->negotiated) {
            control_error(out, &r, "Capabilities negotiation is already "
                          "complete, command ignored");
        } else {
            cl->negotiated = true;
            g_string_append(out, "{\"return\": {}");
            control_reply_end(out, &r);
        }
    } else if (!cl->negotiated) {
        control_error(out, &r, "Expecting capabilities negotiation with "
                      "'qmp_capabilities'");
    } else if (strcmp(cmd, "qom-list") && strcmp(cmd, "qom-get")) {
        control_errorf(out, &r, "The command %s has not been found: "
                       "rdma-sim-server's control socket serves "
                       "qmp_capabilities, qom-list and qom-get of the "
                       "device's properties, no other", cmd);
    } else if (!r.path || (!r.property && !strcmp(cmd, "qom-get"))) {
        control_errorf(out, &r, "Parameter '%s' is missing",
                       r.path ? "property" : "path");
    } else if (!strcmp(cmd, "qom-list")) {
        control_qom_list(cl->c, &r, out);
    } else {
        control_qom_get(cl->c, &r, out);
    }
    control_request_free(&r);
}

/*
 * The client's connection: requests in while no reply waits, one at a
 * time; the reply out as the socket takes it
 */

static void control_client_free(ControlClient *cl)
{
    ServerControl *c = cl->c;

    for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
        if (c->clients[i] == cl) {
            c->clients[i] = NULL;
        }
    }
    if (cl->watch) {
        g_source_remove(cl->watch);
    }
    close(cl->fd);
    g_string_free(cl->in, true);
    g_string_free(cl->out, true);
    g_free(cl);
}

/* Answer the next request received, if no reply waits */
static void control_client_serve(ControlClient *cl)
{
    char *nl;
    size_t len;

    while (!cl->out->len && !cl->closing) {
        nl = memchr(cl->in->str, '\n', cl->in->len);
        len = nl ? nl - cl->in->str : cl->in->len;
        if (len > CONTROL_MAX_LINE) {
            control_errorf(cl->out, NULL, "a request of more than %d bytes: "
                           "the connection ends", CONTROL_MAX_LINE);
            cl->closing = true;
            g_string_truncate(cl->in, 0);
            break;
        }
        if (!nl) {
            break;
        }
        if (len && cl->in->str[len - 1] == '\r') {
            len--;
        }
        if (len) {
            control_request(cl, cl->in->str, len, cl->out);
        }
        g_string_erase(cl->in, 0, nl + 1 - cl->in->str);
    }
}

static bool control_client_send(ControlClient *cl)
{
    ssize_t n = send(cl->fd, cl->out->str + cl->out_sent,
                     cl->out->len - cl->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);

    if (n < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    cl->out_sent += n;
    if (cl->out_sent < cl->out->len) {
        return true;
    }
    g_string_truncate(cl->out, 0);
    cl->out_sent = 0;
    if (cl->closing) {
        return false;
    }
    control_client_serve(cl);
    return true;
}

static bool control_client_receive(ControlClient *cl)
{
    char buf[CONTROL_MAX_LINE];
    ssize_t n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);

    if (n < 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    if (!n) {
        return false;
    }
    g_string_append_len(cl->in, buf, n);
    control_client_serve(cl);
    return true;
}

static gboolean control_client_ready(gint fd, GIOCondition cond,
                                     gpointer data)
{
    ControlClient *cl = data;
    bool ok = cl->out->len ? control_client_send(cl) :
                             control_client_receive(cl);
    GIOCondition want = cl->out->len ? G_IO_OUT : G_IO_IN;

    if (!ok) {
        cl->watch = 0;
        control_client_free(cl);
        return G_SOURCE_REMOVE;
    }
    if (want == cl->watching) {
        return G_SOURCE_CONTINUE;
    }
    cl->watching = want;
    cl->watch = g_unix_fd_add(fd, want | G_IO_HUP | G_IO_ERR,
                              control_client_ready, cl);
    return G_SOURCE_REMOVE;
}

bool server_control_attach(ServerControl *c, int fd)
{
    ControlClient *cl;
    size_t i;

    i = 0;
    while (i < CONTROL_MAX_CLIENTS && c->clients[i]) {
        i++;
    }
    if (i == CONTROL_MAX_CLIENTS) {
        g_autoptr(GString) out = g_string_new(NULL);

        control_errorf(out, NULL, "rdma-sim-server's control socket serves "
                       "%d clients at once, and has them",
                       CONTROL_MAX_CLIENTS);
        send(fd, out->str, out->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        return false;
    }
    g_unix_set_fd_nonblocking(fd, true, NULL);
    cl = g_new0(ControlClient, 1);
    cl->c = c;
    cl->fd = fd;
    cl->in = g_string_new(NULL);
    cl->out = g_string_new(CONTROL_GREETING);
    cl->watching = G_IO_OUT;
    cl->watch = g_unix_fd_add(fd, G_IO_OUT | G_IO_HUP | G_IO_ERR,
                              control_client_ready, cl);
    c->clients[i] = cl;
    return true;
}

static gboolean control_accept(gint fd, GIOCondition cond, gpointer data)
{
    int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

    if (cfd >= 0) {
        server_control_attach(data, cfd);
    }
    return G_SOURCE_CONTINUE;
}

void server_control_init(ServerControl *c, RdmaSimState *s, const char *id,
                         int listen_fd)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->id = id;
    c->listen_fd = listen_fd;
    if (listen_fd >= 0) {
        c->listen_watch = g_unix_fd_add(listen_fd, G_IO_IN, control_accept,
                                        c);
    }
}

void server_control_cleanup(ServerControl *c)
{
    for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
        if (c->clients[i]) {
            control_client_free(c->clients[i]);
        }
    }
    if (c->listen_watch) {
        g_source_remove(c->listen_watch);
        c->listen_watch = 0;
    }
    if (c->listen_fd >= 0) {
        close(c->listen_fd);
        c->listen_fd = -1;
    }
}
