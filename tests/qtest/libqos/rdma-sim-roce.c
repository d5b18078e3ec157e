/*
 * libqos helpers for the rdma-sim qtests: RoCEv2 frames, their lengths,
 * checksums and ICRC, computed independently of the device (see
 * rdma-sim.h)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

#define ETH_LEN     14
#define IPV4_LEN    20
#define IPV6_LEN    40
#define UDP_LEN     8
#define BTH_LEN     12
#define ICRC_LEN    4

/* CRC-32 (zlib polynomial), bit by bit */
static uint32_t crc32_bits(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

static bool is_ipv6(const uint8_t *f)
{
    return lduw_be_p(f + 12) == 0x86dd;
}

/* Offset of the UDP header: after an IPv6 or an option-less IPv4 header */
static size_t udp_off(const uint8_t *f)
{
    return ETH_LEN + (is_ipv6(f) ? IPV6_LEN : IPV4_LEN);
}

uint32_t qsim_icrc(const uint8_t *f, size_t len)
{
    static const uint8_t lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    size_t bth = udp_off(f) + UDP_LEN;
    uint8_t pseudo[IPV6_LEN + UDP_LEN + BTH_LEN];
    size_t plen = bth + BTH_LEN - ETH_LEN;
    uint8_t *udp = pseudo + plen - BTH_LEN - UDP_LEN;
    uint32_t crc;

    g_assert_cmpuint(len, >=, bth + BTH_LEN + ICRC_LEN);
    /* the fields routers may change count as all ones */
    memcpy(pseudo, f + ETH_LEN, plen);
    if (is_ipv6(f)) {
        pseudo[0] |= 0x0f;              /* traffic class, flow label */
        pseudo[1] = pseudo[2] = pseudo[3] = 0xff;
        pseudo[7] = 0xff;               /* hop limit */
    } else {
        pseudo[1] = 0xff;               /* TOS */
        pseudo[8] = 0xff;               /* TTL */
        pseudo[10] = pseudo[11] = 0xff; /* IP checksum */
    }
    udp[6] = udp[7] = 0xff;             /* UDP checksum */
    udp[UDP_LEN + 4] = 0xff;            /* BTH reserved byte */
    crc = crc32_bits(0, lrh, sizeof(lrh));
    crc = crc32_bits(crc, pseudo, plen);
    return crc32_bits(crc, f + bth + BTH_LEN, len - bth - BTH_LEN - ICRC_LEN);
}

static uint16_t ipv4_csum(const uint8_t *h)
{
    uint32_t sum = 0;

    for (int i = 0; i < IPV4_LEN; i += 2) {
        sum += i == 10 ? 0 : lduw_be_p(h + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}

size_t qsim_roce_finish(uint8_t *f, size_t len, unsigned keep)
{
    size_t udp, total = len;
    uint8_t *ip = f + ETH_LEN;

    if (!(keep & QSIM_KEEP_ICRC)) {
        memset(f + len, 0, ICRC_LEN);
        total += ICRC_LEN;
    }
    if (len < ETH_LEN + IPV4_LEN ||
        (lduw_be_p(f + 12) != 0x0800 && !is_ipv6(f))) {
        return total;
    }
    udp = udp_off(f);
    if (!(keep & QSIM_KEEP_IP_LEN) && total >= udp) {
        if (is_ipv6(f)) {
            stw_be_p(ip + 4, total - udp);
        } else {
            stw_be_p(ip + 2, total - ETH_LEN);
        }
    }
    if (!(keep & QSIM_KEEP_IP_CSUM) && !is_ipv6(f)) {
        stw_be_p(ip + 10, ipv4_csum(ip));
    }
    if (!(keep & QSIM_KEEP_UDP_LEN) && len >= udp + UDP_LEN) {
        stw_be_p(f + udp + 4, total - udp);
    }
    if (!(keep & QSIM_KEEP_ICRC) && len >= udp + UDP_LEN + BTH_LEN) {
        stl_le_p(f + len, qsim_icrc(f, total));
    }
    return total;
}
