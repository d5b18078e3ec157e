/*
 * rdma-sim fuzz targets: the machine, the operations an input is made
 * of, the reset after each input, the targets.  The driver target starts
 * each input from the device as a qtest finds it after boot (its seeds
 * are qtest runs); the wire target from a world of objects
 * (rdma-sim-wire-fuzz.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/boards.h"
#include "hw/core/cpu.h"
#include "qemu/madvise.h"
#include "exec/ramblock.h"
#include "exec/ramlist.h"
#include "exec/memory.h"
#include "exec/target_page.h"
#include "hw/pci/pci.h"
#include "net/net.h"
#include "net/hub.h"
#include "tests/qtest/libqtest.h"
#include "fuzz.h"
#include "rdma-sim-fuzz.h"

/* The hub the device's netdev is a port of; the fuzzer's end is another */
#define WIRE_HUB        0
/* The most bytes of guest RAM one MEMSET operation sets */
#define MAX_MEMSET      (1024 * 1024)

QSimDev *qsim_fuzz_dev;
static PCIDevice *pci_dev;
static NetClientState *wire;
static void (*wire_rx)(const uint8_t *frame, size_t len);

/*
 * The machine of qsim_start(): pc, the device at QSIM_DEVFN, so that qtest
 * runs replay as they ran; its port on a hub whose other port is ours.
 */
GString *qsim_fuzz_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine pc,accel=qtest -display none"
                        " -nodefaults -netdev hubport,id=n0,hubid="
                        stringify(WIRE_HUB)
                        " -device rdma-sim,addr=04.0,netdev=n0,mac="
                        QSIM_MAC);
}

static ssize_t wire_receive(NetClientState *nc, const uint8_t *buf,
                            size_t size)
{
    if (wire_rx) {
        wire_rx(buf, size);
    }
    return size;
}

static NetClientInfo wire_info = {
    .type = NET_CLIENT_DRIVER_NONE,
    .size = sizeof(NetClientState),
    .receive = wire_receive,
};

static void run_main_loop(QSimDev *d)
{
    flush_events(d->qts);
}

void qsim_fuzz_init(QTestState *qts,
                    void (*rx)(const uint8_t *frame, size_t len))
{
    Object *obj = object_resolve_path_type("", "rdma-sim", NULL);
    RAMBlock *ram = current_machine->ram->ram_block;

    g_assert(obj);
    /*
     * Guest RAM in small pages: an input writes a few bytes here and
     * there, and each would cost a whole huge page (zeroed after a
     * discard)
     */
    qemu_madvise(ram->host, ram->max_length, QEMU_MADV_NOHUGEPAGE);
    pci_dev = PCI_DEVICE(obj);
    wire = qemu_new_net_client(&wire_info, NULL, "rdma-sim-fuzz", "wire");
    net_hub_add_port(WIRE_HUB, NULL, wire);
    wire_rx = rx;
    qsim_fuzz_dev = qsim_in_process(qts, run_main_loop);
}

/* ---- The operations ---- */

/* Guest address of offset off of a BAR, if it is mapped and that large */
static bool bar_addr(uint8_t bar, uint32_t off, unsigned size,
                     uint64_t *addr)
{
    PCIIORegion *r = &pci_dev->io_regions[bar % PCI_NUM_REGIONS];
    uint64_t base = pci_get_bar_addr(pci_dev, bar % PCI_NUM_REGIONS);

    if (!r->size || base == PCI_BAR_UNMAPPED ||
        (r->type & PCI_BASE_ADDRESS_SPACE_IO)) {
        return false;
    }
    off %= r->size;
    if (off + size > r->size) {
        return false;
    }
    *addr = base + off;
    return true;
}

static void op_read(QTestState *qts, const uint8_t *a, size_t len)
{
    unsigned size;
    uint64_t addr;

    if (len < 6) {
        return;
    }
    size = 1u << (a[1] % 4);
    if (!bar_addr(a[0], ldl_le_p(a + 2), size, &addr)) {
        return;
    }
    switch (size) {
    case 1:
        qtest_readb(qts, addr);
        break;
    case 2:
        qtest_readw(qts, addr);
        break;
    case 4:
        qtest_readl(qts, addr);
        break;
    default:
        qtest_readq(qts, addr);
    }
}

static void op_write(QTestState *qts, const uint8_t *a, size_t len)
{
    uint64_t addr, val;
    unsigned size;

    if (len < 14) {
        return;
    }
    size = 1u << (a[1] % 4);
    val = ldq_le_p(a + 6);
    if (!bar_addr(a[0], ldl_le_p(a + 2), size, &addr)) {
        return;
    }
    switch (size) {
    case 1:
        qtest_writeb(qts, addr, val);
        break;
    case 2:
        qtest_writew(qts, addr, val);
        break;
    case 4:
        qtest_writel(qts, addr, val);
        break;
    default:
        qtest_writeq(qts, addr, val);
    }
}

static void op_cfg_read(QTestState *qts, const uint8_t *a, size_t len)
{
    QPCIDevice *dev = qsim_fuzz_dev->dev;

    if (len < 2) {
        return;
    }
    switch (a[0] % 3) {
    case 0:
        qpci_config_readb(dev, a[1]);
        break;
    case 1:
        qpci_config_readw(dev, a[1] & ~1);
        break;
    default:
        qpci_config_readl(dev, a[1] & ~3);
    }
}

static void op_cfg_write(QTestState *qts, const uint8_t *a, size_t len)
{
    QPCIDevice *dev = qsim_fuzz_dev->dev;
    uint32_t val;

    if (len < 6) {
        return;
    }
    val = ldl_le_p(a + 2);
    /*
     * A write that moves BARs unmaps and maps each: one change of the
     * memory map for all of it (nothing reads the map in between)
     */
    memory_region_transaction_begin();
    switch (a[0] % 3) {
    case 0:
        qpci_config_writeb(dev, a[1], val);
        break;
    case 1:
        qpci_config_writew(dev, a[1] & ~1, val);
        break;
    default:
        qpci_config_writel(dev, a[1] & ~3, val);
    }
    memory_region_transaction_commit();
}

/* [addr % RAM size, + len) clipped to RAM */
static uint64_t ram_range(uint32_t addr, size_t *len)
{
    uint64_t ram = current_machine->ram_size;
    uint64_t start = addr % ram;

    *len = MIN(*len, ram - start);
    return start;
}

static void op_mem(QTestState *qts, const uint8_t *a, size_t len)
{
    uint64_t addr;

    if (len < 4) {
        return;
    }
    len -= 4;
    addr = ram_range(ldl_le_p(a), &len);
    qtest_memwrite(qts, addr, a + 4, len);
}

static void op_memset(QTestState *qts, const uint8_t *a, size_t len)
{
    static uint8_t fill[MAX_MEMSET];
    uint64_t addr;

    if (len < 9) {
        return;
    }
    /* unsigned: ldl_le_p() is an int, and a negative one set up to all RAM */
    len = (uint32_t)ldl_le_p(a + 4) % MAX_MEMSET;
    addr = ram_range(ldl_le_p(a), &len);
    /*
     * not qtest_memset(), whose fuzzing version leaks its buffer, nor
     * address_space_set(), which writes 512 bytes at a time: one write
     */
    memset(fill, a[8], len);
    address_space_write(first_cpu->as, addr, MEMTXATTRS_UNSPECIFIED, fill,
                        len);
}

static void op_clock(QTestState *qts, const uint8_t *a, size_t len)
{
    uint32_t ns;

    if (len < 4) {
        return;
    }
    ns = ldl_le_p(a);
    if (ns) {
        qtest_clock_step(qts, ns);
    } else {
        qtest_clock_step_next(qts);
    }
}

/* A frame from the wire: lengths, checksum and ICRC made right, or kept */
static void op_frame(QTestState *qts, const uint8_t *a, size_t len)
{
    static uint8_t f[QSIM_FUZZ_MAX_FRAME + 4];

    if (len < 1 || len - 1 > QSIM_FUZZ_MAX_FRAME) {
        return;
    }
    memcpy(f, a + 1, len - 1);
    len = qsim_roce_finish(f, len - 1, a[0]);
    qemu_send_packet(wire, f, len);
}

void qsim_fuzz_run(QTestState *qts, const uint8_t *data, size_t size)
{
    static void (*const ops[QSIM_FUZZ_OPS])(QTestState *, const uint8_t *,
                                            size_t) = {
        [QSIM_FUZZ_READ] = op_read,
        [QSIM_FUZZ_WRITE] = op_write,
        [QSIM_FUZZ_CFG_READ] = op_cfg_read,
        [QSIM_FUZZ_CFG_WRITE] = op_cfg_write,
        [QSIM_FUZZ_MEM] = op_mem,
        [QSIM_FUZZ_MEMSET] = op_memset,
        [QSIM_FUZZ_CLOCK] = op_clock,
        [QSIM_FUZZ_FRAME] = op_frame,
    };
    const size_t sep = strlen(QSIM_FUZZ_SEPARATOR);

    while (size) {
        const uint8_t *next = memmem(data, size, QSIM_FUZZ_SEPARATOR, sep);
        size_t len = next ? next - data : size;

        if (len) {
            QSimFuzzOp op = data[0] % QSIM_FUZZ_OPS;

            ops[op](qts, data + 1, len - 1);
            /* the device's bottom halves and timers; RAM alone wakes none */
            if (op != QSIM_FUZZ_MEM && op != QSIM_FUZZ_MEMSET) {
                flush_events(qts);
            }
        }
        if (!next) {
            break;
        }
        data = next + sep;
        size -= len + sep;
    }
}

void qsim_fuzz_op(GByteArray *input, QSimFuzzOp op, const void *args,
                  size_t len)
{
    uint8_t b = op;

    if (input->len) {
        g_byte_array_append(input, (const guint8 *)QSIM_FUZZ_SEPARATOR,
                            strlen(QSIM_FUZZ_SEPARATOR));
    }
    g_byte_array_append(input, &b, 1);
    g_byte_array_append(input, args, len);
}

void qsim_fuzz_save(const char *dir, const char *name,
                    const GByteArray *input)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) err = NULL;

    if (!g_file_set_contents(path, (const char *)input->data, input->len,
                             &err)) {
        g_error("%s", err->message);
    }
}

/* ---- The targets ---- */

/* PCI configuration dwords the qtests' boot sets: command, BARs */
static const uint8_t boot_regs[] = {
    PCI_COMMAND, PCI_BASE_ADDRESS_0, PCI_BASE_ADDRESS_1, PCI_BASE_ADDRESS_2,
    PCI_BASE_ADDRESS_3, PCI_BASE_ADDRESS_4, PCI_BASE_ADDRESS_5,
};
static uint32_t boot_config[ARRAY_SIZE(boot_regs)];

/*
 * Guest RAM zero again where it was written since the last call.  Every
 * write to it (the qtest operations', the device's DMA) goes through
 * the memory API, which marks the pages it writes in the migration
 * dirty bitmap while dirty logging is on (qsim_fuzz_track_ram()): zeroing
 * those pages costs less than discarding all RAM and faulting in the
 * pages the next input writes.  zero false: only forget them.
 */
static void ram_clean(bool zero)
{
    RAMBlock *ram = current_machine->ram->ram_block;
    const int bits = qemu_target_page_bits();
    unsigned long first = ram->offset >> bits;
    unsigned long end = first + (ram->used_length >> bits);
    DirtyMemoryBlocks *blocks;

    RCU_READ_LOCK_GUARD();
    blocks = qatomic_rcu_read(&ram_list.dirty_memory[DIRTY_MEMORY_MIGRATION]);
    for (unsigned long page = first; page < end;) {
        unsigned long *map = blocks->blocks[page / DIRTY_MEMORY_BLOCK_SIZE];
        unsigned long base = page - page % DIRTY_MEMORY_BLOCK_SIZE;
        unsigned long stop = MIN(end - base, DIRTY_MEMORY_BLOCK_SIZE);
        unsigned long i = find_next_bit(map, stop, page - base);

        while (i < stop) {
            unsigned long j = find_next_zero_bit(map, stop, i);

            if (zero) {
                memset(ram->host + ((base + i - first) << bits), 0,
                       (j - i) << bits);
            }
            bitmap_clear(map, i, j - i);
            i = find_next_bit(map, stop, j);
        }
        page = base + stop;
    }
}

void qsim_fuzz_track_ram(void)
{
    RAMBlock *ram = current_machine->ram->ram_block;

    g_assert_cmpint(ram_block_discard_range(ram, 0, ram->used_length), ==, 0);
    ram_clean(false);
    memory_global_dirty_log_start(GLOBAL_DIRTY_MIGRATION);
}

void qsim_fuzz_save_config(void)
{
    for (size_t i = 0; i < ARRAY_SIZE(boot_regs); i++) {
        boot_config[i] = qpci_config_readl(qsim_fuzz_dev->dev, boot_regs[i]);
    }
}

/*
 * What an input cannot undo the next one finds (the virtual clock has
 * moved; timers and bottom halves the reset left behind would run): an
 * input that crashes only after others is still a finding.
 */
void qsim_fuzz_reset(QTestState *qts)
{
    /*
     * The reset unmaps the BARs, the configuration writes map them again:
     * one change of the memory map (a rebuild of every address space's
     * dispatch tree) instead of one for each
     */
    memory_region_transaction_begin();
    pci_device_reset(pci_dev);
    for (size_t i = 0; i < ARRAY_SIZE(boot_regs); i++) {
        qpci_config_writel(qsim_fuzz_dev->dev, boot_regs[i], boot_config[i]);
    }
    memory_region_transaction_commit();
    ram_clean(true);
    flush_events(qts);
}

static void driver_pre_fuzz(QTestState *qts)
{
    qsim_fuzz_init(qts, NULL);
    qsim_fuzz_save_config();
    qsim_fuzz_track_ram();
}

/* The driver target: each input from the device as it was after boot */
static void driver_fuzz(QTestState *qts, const uint8_t *data, size_t size)
{
    qsim_fuzz_run(qts, data, size);
    qsim_fuzz_reset(qts);
}

static void add_target(const char *name, const char *description,
                       void (*pre_fuzz)(QTestState *),
                       void (*fuzz)(QTestState *, const uint8_t *, size_t))
{
    fuzz_add_target(&(FuzzTarget){
        .name = name,
        .description = description,
        .get_init_cmdline = qsim_fuzz_cmdline,
        .pre_fuzz = pre_fuzz,
        .fuzz = fuzz,
    });
}

static void register_targets(void)
{
    add_target("rdma-sim-driver",
               "rdma-sim's registers, doorbells, PCI configuration and the "
               "guest memory it reads, from reset",
               driver_pre_fuzz, driver_fuzz);
    add_target("rdma-sim-wire",
               "rdma-sim's receive path: frames to QPs in every state, with "
               "requests in flight",
               qsim_fuzz_wire_pre_fuzz, qsim_fuzz_wire_fuzz);
}

fuzz_target_init(register_targets);
