/*
 * rdma-sim-server: a bounded JSON reader (json.h)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <string.h>
#include "json.h"

void json_ws(JsonReader *j)
{
    while (j->p < j->end &&
           (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n')) {
        j->p++;
    }
}

bool json_fail(JsonReader *j, const char *why)
{
    if (!j->why) {
        j->why = why;
    }
    return false;
}

bool json_eat(JsonReader *j, char c)
{
    json_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static bool json_word(JsonReader *j, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n)) {
        return json_fail(j, "JSON: not a value");
    }
    j->p += n;
    return true;
}

/* \uXXXX, after the \u */
static bool json_unicode(JsonReader *j, GString *out)
{
    gunichar u = 0;

    for (int i = 0; i < 4; i++, j->p++) {
        if (j->p == j->end || !g_ascii_isxdigit(*j->p)) {
            return json_fail(j, "JSON: a bad \\u escape");
        }
        u = u << 4 | g_ascii_xdigit_value(*j->p);
    }
    if (out) {
        g_string_append_unichar(out, u && g_unichar_validate(u) ? u : 0xfffd);
    }
    return true;
}

bool json_string(JsonReader *j, GString *out)
{
    /* what may follow a backslash, and what it means */
    static const char escaped[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";

    json_ws(j);
    if (j->p == j->end || *j->p != '"') {
        return json_fail(j, "JSON: a string expected");
    }
    j->p++;
    while (j->p < j->end) {
        char c = *j->p++;
        const char *e;

        if (c == '"') {
            return true;
        }
        if ((unsigned char)c < 0x20) {
            return json_fail(j, "JSON: a control byte in a string");
        }
        if (c == '\\' && j->p < j->end) {
            c = *j->p++;
            if (c == 'u') {
                if (!json_unicode(j, out)) {
                    return false;
                }
                continue;
            }
            e = c ? strchr(escaped, c) : NULL;
            if (!e) {
                return json_fail(j, "JSON: a bad escape");
            }
            c = meant[e - escaped];
        }
        if (out) {
            g_string_append_c(out, c);
        }
    }
    return json_fail(j, "JSON: an unterminated string");
}

static bool json_digits(JsonReader *j, uint64_t *v, bool *is_uint)
{
    const char *start = j->p;

    while (j->p < j->end && g_ascii_isdigit(*j->p)) {
        unsigned d = *j->p++ - '0';

        if (*v > (UINT64_MAX - d) / 10) {
            *is_uint = false;
        } else {
            *v = *v * 10 + d;
        }
    }
    return j->p > start || json_fail(j, "JSON: not a value");
}

bool json_number(JsonReader *j, uint64_t *v, bool *is_uint)
{
    uint64_t frac = 0;
    bool frac_uint;

    json_ws(j);
    *v = 0;
    *is_uint = true;
    if (j->p < j->end && *j->p == '-') {
        *is_uint = false;
        j->p++;
    }
    if (!json_digits(j, v, is_uint)) {
        return false;
    }
    if (j->p < j->end && *j->p == '.') {
        *is_uint = false;
        j->p++;
        if (!json_digits(j, &frac, &frac_uint)) {
            return false;
        }
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        *is_uint = false;
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) {
            j->p++;
        }
        return json_digits(j, &frac, &frac_uint);
    }
    return true;
}

static bool json_nest(JsonReader *j, char open)
{
    if (!json_eat(j, open)) {
        return json_fail(j, open == '{' ? "JSON: an object expected" :
                         "JSON: an array expected");
    }
    if (++j->depth > j->max_depth) {
        return json_fail(j, "JSON: nested too deep");
    }
    return true;
}

/* After an element: ',' (another follows) or close (the end, *ok) */
static bool json_next(JsonReader *j, char close, bool *ok)
{
    if (json_eat(j, ',')) {
        return true;
    }
    *ok = json_eat(j, close) ||
          json_fail(j, close == '}' ? "JSON: ',' or '}' expected" :
                    "JSON: ',' or ']' expected");
    j->depth--;
    return false;
}

bool json_object(JsonReader *j, JsonMember *member, void *opaque)
{
    g_autoptr(GString) key = g_string_new(NULL);
    bool ok = true;

    if (!json_nest(j, '{')) {
        return false;
    }
    if (json_eat(j, '}')) {
        j->depth--;
        return true;
    }
    do {
        g_string_truncate(key, 0);
        if (!json_string(j, key)) {
            return false;
        }
        if (!json_eat(j, ':')) {
            return json_fail(j, "JSON: ':' expected");
        }
        json_ws(j);
        if (!(member ? member(j, key->str, opaque) : json_value(j))) {
            return false;
        }
    } while (json_next(j, '}', &ok));
    return ok;
}

static bool json_array(JsonReader *j)
{
    bool ok = true;

    if (!json_nest(j, '[')) {
        return false;
    }
    if (json_eat(j, ']')) {
        j->depth--;
        return true;
    }
    do {
        if (!json_value(j)) {
            return false;
        }
    } while (json_next(j, ']', &ok));
    return ok;
}

bool json_value(JsonReader *j)
{
    uint64_t v;
    bool is_uint;

    json_ws(j);
    if (j->p == j->end) {
        return json_fail(j, "JSON: a value expected");
    }
    switch (*j->p) {
    case '{':
        return json_object(j, NULL, NULL);
    case '[':
        return json_array(j);
    case '"':
        return json_string(j, NULL);
    case 't':
        return json_word(j, "true");
    case 'f':
        return json_word(j, "false");
    case 'n':
        return json_word(j, "null");
    default:
        return json_number(j, &v, &is_uint);
    }
}
