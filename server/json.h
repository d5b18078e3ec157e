/*
 * rdma-sim-server: a bounded JSON reader, for what clients send - the
 * vfio-user VERSION's capabilities (vfu-msg.c), the control socket's
 * requests (control.c)
 *
 * Each function reads one thing at p, white space before it skipped, and
 * returns false when it is not there (why says what was wrong, the first
 * failure's).  Nothing is allocated but what a caller's GString holds;
 * objects and arrays nest max_depth deep at most.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_JSON_H
#define RDMA_SIM_SERVER_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

typedef struct JsonReader {
    const char *p, *end;
    unsigned depth, max_depth;
    const char *why;
} JsonReader;

void json_ws(JsonReader *j);
/* Fail, with why (unless an earlier failure said) */
bool json_fail(JsonReader *j, const char *why);
/* The character c, after white space: taken? (no failure if not) */
bool json_eat(JsonReader *j, char c);
/*
 * A string, its text unescaped at the end of out (if not NULL); \u0000
 * and surrogates become U+FFFD
 */
bool json_string(JsonReader *j, GString *out);
/* A number; *is_uint when it is an integer 0 .. UINT64_MAX (*v) */
bool json_number(JsonReader *j, uint64_t *v, bool *is_uint);
/* An object; member() reads each member's value, its name key */
typedef bool JsonMember(JsonReader *j, const char *key, void *opaque);
bool json_object(JsonReader *j, JsonMember *member, void *opaque);
/* Any value, passed over */
bool json_value(JsonReader *j);

#endif /* RDMA_SIM_SERVER_JSON_H */
