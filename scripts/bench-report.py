#!/usr/bin/env python3
"""make bench's report: reads the raw outputs scripts/bench.sh kept in one
directory and writes, next to it, NAME.json (every run's figures), NAME.md
(the tables) and NAME.png (bandwidth and latency against message size, with
gnuplot).  Usage: bench-report.py RAW-DIR OUT-STEM

RAW-DIR holds one directory per pair run, named PART/STACK/.../runN with
cmds.txt (the commands, one a line), out-N.txt (the client's output of
command N), wall.txt (seconds for the whole pair run) and, for NVMe,
fio's bench-*.json.  The generations part's STACK is a generation,
qemuQ-linuxK, whose runs also have generation.txt (KEY=VALUE lines: role,
qemu and linux series, qemu_version, abi, machine); generations/
skipped-KEY.txt (role, qemu, linux, make) is a generation whose QEMU was
not built.  host-udp/mtuM.json is iperf3's output at that MTU's
frame size, info.txt the run's description (KEY=VALUE lines). The cluster
part is cluster/LINK/nN/KIND/ (KIND bw, lat or lat-serial) with cmds.txt,
wall.txt and gI/pair-L-H.txt: guest I's side of each pair L-H it was in
(the figures are on the client's side, guest H's).
"""

import bisect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

STACKS = {
    "rxe-deb": "Soft-RoCE",
    "rxe": "Soft-RoCE on our QEMU",
    "rsim": "rdma-sim",
    "rsim-plain": "rdma-sim on QEMU without our patches",
    "rsim-server": "rdma-sim out of process (rdma-sim-server)",
    # NVMe's mixed pairs, on our QEMU: guest A the target, B the host
    "rxe-target": "Soft-RoCE target, rdma-sim host",
    "rxe-host": "rdma-sim target, Soft-RoCE host",
}
BW_FIELDS = ("bytes", "iterations", "bw_peak_MBps", "bw_avg_MBps", "msg_rate_Mpps")
LAT_FIELDS = ("bytes", "iterations", "min_us", "max_us", "typical_us", "avg_us",
              "stdev_us", "p99_us", "p999_us")
# Goals of issue 15 (make bench reports them; no test asserts them)
LAT_GOAL_US = 30
TAIL_GOAL = 3
UDP_SHARE_GOAL = 0.5
# The generations of configs/generations, oldest first; "default" is the newest
GEN_ROLES = ("oldest", "middle", "default")


def human_size(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def cmd_size(cmd):
    """The message size a perftest command line asks for (-s), or None."""
    argv = cmd.split()
    return int(argv[argv.index("-s") + 1]) if "-s" in argv else None


def is_bw(cmd):
    """A bandwidth test (ib_*_bw), not a latency test."""
    return cmd.split()[0].endswith("_bw")


def median_p99(v):
    v = sorted(v)
    return {"median_us": round(statistics.median(v), 1),
            "p99_us": round(v[min(len(v) - 1, int(len(v) * 0.99))], 1)}


# perftest measures time in CPU cycles and converts them with a clock rate
# it samples; in a TCG guest on busy cores the samples can scatter so that
# it gives up (this line, then rate 0) and prints 0 MB/s: not a figure.
CLOCK_FAILED_RE = re.compile(r"^Correlation coefficient r\^2: \S+ < 0\.9", re.M)
CLOCK_FAILED = "clock failed"       # what values() gives for such a run
CLOCK_FAILED_NOTE = ("Some runs have no figure: perftest could not measure the guest's clock "
                     "rate (\"Correlation coefficient r^2 ... < 0.9\" in the raw output) and "
                     "printed 0; a median is of the other runs (\"N of M runs\"), ? if none.")


def perftest_figures(text, tool):
    """The client's result line in one perftest run's output, as a dict
    (None if it printed none: the run failed)."""
    lines = text.splitlines()
    fields = BW_FIELDS if tool.endswith("_bw") else LAT_FIELDS
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#bytes") and i + 1 < len(lines):
            vals = lines[i + 1].split()
            if len(vals) < len(fields):
                return None
            try:
                return {k: float(v) for k, v in zip(fields, vals)}
            except ValueError:
                return None
    return None


def path_mtu(directory):
    try:
        with open(os.path.join(directory, "out-1.txt"), errors="replace") as f:
            m = re.search(r"^\s*Mtu\s*:\s*(\d+)", f.read(), re.M)
            return int(m.group(1)) if m else None
    except OSError:
        return None


def read_text(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError:
        return default


def pair_run(directory):
    """One pair run: its commands and each one's figures."""
    tests = []
    cmds = read_text(os.path.join(directory, "cmds.txt")).splitlines()
    for n, cmd in enumerate(c for c in cmds if c.strip()):
        tool = cmd.split()[0]
        text = read_text(os.path.join(directory, f"out-{n + 1}.txt"))
        failed = bool(CLOCK_FAILED_RE.search(text))    # its figures are not measurements
        tests.append({
            "command": cmd, "tool": tool, "size": cmd_size(cmd),
            "result": None if failed else perftest_figures(text, tool), "clock_failed": failed,
        })
    wall = read_text(os.path.join(directory, "wall.txt"))
    return {"path_mtu": path_mtu(directory), "wall_s": int(wall) if wall else None,
            "tests": tests}


def cluster_runs(base):
    """The cluster part: LINK/nN/KIND/gI/pair-I-J.txt, one entry per run;
    each pair's figures are the client's (guest J's)."""
    out = []
    for link in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for ndir in sorted(os.listdir(os.path.join(base, link))):
            for kind in sorted(os.listdir(os.path.join(base, link, ndir))):
                d = os.path.join(base, link, ndir, kind)
                cmd = read_text(os.path.join(d, "cmds.txt"))
                tool, pairs = cmd.split()[0], []
                n = int(ndir[1:])
                for i in range(n):
                    for j in range(i + 1, n):
                        text = read_text(os.path.join(d, f"g{j}", f"pair-{i}-{j}.txt"))
                        failed = bool(CLOCK_FAILED_RE.search(text))
                        pairs.append({"pair": f"{chr(65 + i)}-{chr(65 + j)}",
                                      "result": None if failed else perftest_figures(text, tool),
                                      "clock_failed": failed})
                wall = read_text(os.path.join(d, "wall.txt"))
                out.append({"link": link, "guests": n, "kind": kind, "command": cmd,
                            "wall_s": int(wall) if wall else None, "pairs": pairs})
    return out


# NVMe's figures: (key, fio job, read or write, what of it); a job that
# failed or did not run (a raw directory from before the write jobs) leaves
# its figures None, the others stand.
FIO_FIGURES = (
    ("iops_4k_qd32", "4k-randread-qd32", "read", lambda d: round(d["iops"])),
    ("p50_us_4k_qd1", "4k-randread-qd1", "read",
     lambda d: round(d["clat_ns"]["percentile"]["50.000000"] / 1000)),
    ("p99_us_4k_qd1", "4k-randread-qd1", "read",
     lambda d: round(d["clat_ns"]["percentile"]["99.000000"] / 1000)),
    ("MBps_1m_qd16", "1m-read-qd16", "read", lambda d: round(d["bw_bytes"] / 1e6)),
    ("MiBps_1m_write_qd1", "1m-write-qd1", "write", lambda d: round(d["bw_bytes"] / (1 << 20), 1)),
    ("mean_ms_1m_write_qd1", "1m-write-qd1", "write", lambda d: round(d["clat_ns"]["mean"] / 1e6, 2)),
    ("MiBps_1m_write_qd32", "1m-write-qd32", "write", lambda d: round(d["bw_bytes"] / (1 << 20), 1)),
    ("mean_ms_1m_write_qd32", "1m-write-qd32", "write", lambda d: round(d["clat_ns"]["mean"] / 1e6, 2)),
)


def fio_run(directory):
    """One NVMe pair run's figures (None: no job gave any)."""
    res = {}
    for key, name, rw, fig in FIO_FIGURES:
        try:
            with open(os.path.join(directory, f"bench-{name}.json")) as f:
                t = f.read()
            res[key] = fig(json.loads(t[t.index("{"):])["jobs"][0][rw])
        except (OSError, KeyError, IndexError, ValueError, ZeroDivisionError):
            res[key] = None
    return res if any(v is not None for v in res.values()) else None


def iperf_udp(path):
    try:
        with open(path) as f:
            d = json.load(f)
        s = d["end"]["sum_received"]      # "sum" counts what was sent
        return {"MBps": round(s["bytes"] / s["seconds"] / 1e6, 1),
                "lost_percent": round(s.get("lost_percent", 0.0), 2)}
    except (OSError, KeyError, ValueError, ZeroDivisionError):
        return None


# -- where a message's time goes (the hops part) -------------------------------

TRACE_RE = re.compile(r"^\d+@(\d+)\.(\d+):rdma_sim_(doorbell|tx_packet|rx_packet|cqe) (.*)$")
# BTH opcodes of RC messages of one packet that a latency test sends
ONE_PACKET = {0x04: "SEND", 0x05: "SEND", 0x0a: "WRITE", 0x0b: "WRITE"}
RECV_OPCODES = 128          # RSIM_WC_RECV and above: receive completions
HOPS = (
    ("doorbell", "posted -> frame sent: at the doorbell, on the vCPU; or by the transport's bottom half "
                 "(0 when it read the WQE before the doorbell's write reached the device)"),
    ("wire", "frame sent -> peer receives it: host UDP, the peer's main loop wakes, recv"),
    ("deliver", "peer receives -> receive completion written (SEND; WRITE has none)"),
    ("guest", "completion (or WRITE data) -> the reply posted: the peer's guest sees it and posts the reply"),
)


def trace_events(path):
    """(time in us, event, fields) of one QEMU's rdma-sim trace."""
    out = []
    try:
        f = open(path, errors="replace")
    except OSError:
        return out
    with f:
        for line in f:
            m = TRACE_RE.match(line.strip())
            if not m:
                continue
            t = int(m.group(1)) * 1e6 + int(m.group(2))
            nums = [int(x, 0) for x in re.findall(r"(?<![\w.])(0x[0-9a-f]+|\d+)(?![\w.])", m.group(4))]
            out.append((t, m.group(3), nums))
    return out


def hops(log_a, log_b):
    """Each one-packet message either guest sent, cut into HOPS (us).  The
    k-th send-queue doorbell of a side posted its k-th new request packet
    (perftest posts one WQE per doorbell, its latency tests use one QP); a
    message is posted at its doorbell or, if the device read the WQE and
    sent it before the doorbell's write reached it, at the send.  The
    receive and its completion are the peer's events for that QP and PSN;
    the reply is the peer's next message posted after them."""
    sides = [trace_events(log_a), trace_events(log_b)]
    msgs = []
    for events in sides:
        dbs = [t for t, ev, f in events if ev == "doorbell" and len(f) >= 3 and f[1] == 0]
        seen, txs = set(), []
        for t, ev, f in events:
            if ev == "tx_packet" and len(f) >= 3 and f[1] in ONE_PACKET and (f[0], f[2]) not in seen:
                seen.add((f[0], f[2]))                  # a retransmission is not a message
                txs.append((t, f))
        msgs.append([(min(db, t), t, f) for db, (t, f) in zip(dbs, txs)])
    samples = {"SEND": [], "WRITE": []}
    for x in (0, 1):
        peer, peer_posted = sides[1 - x], sorted(m[0] for m in msgs[1 - x])
        rx = {}
        for i, (t, ev, f) in enumerate(peer):
            if ev == "rx_packet" and len(f) >= 3:
                rx.setdefault((f[0], f[2]), i)          # (QPN, PSN)
        for posted, t, f in msgs[x]:
            kind, i = ONE_PACKET[f[1]], rx.get((f[0], f[2]))
            if i is None:
                continue
            t_rx = t_done = peer[i][0]
            if kind == "SEND":
                t_done = next((e[0] for e in peer[i:i + 8]
                               if e[1] == "cqe" and len(e[2]) >= 3 and e[2][1] == f[0]
                               and e[2][2] >= RECV_OPCODES), None)
                if t_done is None:
                    continue
            k = bisect.bisect_left(peer_posted, t_done)
            if k == len(peer_posted):
                continue
            samples[kind].append({"doorbell": t - posted, "wire": t_rx - t,
                                  "deliver": t_done - t_rx, "guest": peer_posted[k] - t_done})
    out = {}
    for kind, rows in samples.items():
        if not rows:
            continue
        out[kind] = {"messages": len(rows)}
        for h, _ in HOPS:
            out[kind][h] = median_p99(r[h] for r in rows)
        out[kind]["total"] = median_p99(sum(r[h] for h, _ in HOPS) for r in rows)
    return out


def hops_table(data):
    out = []
    for r in data["hops"]:
        if not r["hops"]:
            out += [f"## Where the time goes: {STACKS[r['stack']]}, MTU {r['mtu']}", "",
                    "No traced messages found (the trace logs are in the raw directory).", ""]
            continue
        out += [f"## Where the time goes: {STACKS[r['stack']]}, MTU {r['mtu']} "
                "(one run, 2-byte messages, with rdma-sim's trace events on)", "",
                "Each message from being posted to the peer's reply being posted, cut at the trace events "
                "(both QEMUs stamp them with the host's clock). Tracing itself costs a few us "
                "per event; perftest's own figures for these traced runs are below the table.", "",
                "| hop | " + " | ".join(f"{k}: median; p99" for k in r["hops"]) + " |",
                "|---|" + "---|" * len(r["hops"])]
        for h, what in HOPS + (("total", "one way, posted to the reply posted"),):
            out.append(f"| {what} | " + " | ".join(
                f"{fmt(r['hops'][k][h]['median_us'])} us; {fmt(r['hops'][k][h]['p99_us'])} us"
                for k in r["hops"]) + " |")
        out.append("")
        out.append("Messages: " + ", ".join(f"{k} {v['messages']}" for k, v in r["hops"].items()) + ". " +
                   "perftest, traced: " + "; ".join(
                       f"{test_name(t['command'])} typical {fmt(t['result']['typical_us'])} us, "
                       f"p99 {fmt(t['result']['p99_us'])} us"
                       for t in r["tests"] if t["result"] and t["tool"].endswith("_lat")) + ".")
        out.append("")
    return out


def key_values(path):
    """A file of KEY=VALUE lines as a dict."""
    return dict(line.split("=", 1) for line in read_text(path).splitlines() if "=" in line)


def collect(raw):
    """Everything in RAW-DIR as one dict (the JSON)."""
    data = {"info": key_values(os.path.join(raw, "info.txt")), "perftest": [], "generations": [],
            "generations_skipped": [], "sweep": [], "hops": [], "nvme": [], "host_udp": [],
            "cluster": cluster_runs(os.path.join(raw, "cluster")), "qps": []}
    for part in ("perftest", "generations", "sweep", "hops", "qps"):
        base = os.path.join(raw, part)
        for stack in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if stack.startswith("skipped-"):
                data["generations_skipped"].append(key_values(os.path.join(base, stack)))
                continue
            for mtu_dir in sorted(os.listdir(os.path.join(base, stack))):
                for run in sorted(os.listdir(os.path.join(base, stack, mtu_dir))):
                    d = os.path.join(base, stack, mtu_dir, run)
                    r = pair_run(d)
                    r.update(stack=stack, mtu=int(mtu_dir[3:]), run=int(run[3:]))
                    if part == "hops":
                        r["hops"] = hops(os.path.join(d, "qemu-a.log"),
                                         os.path.join(d, "qemu-b.log"))
                    if part == "generations":
                        r["generation"] = key_values(os.path.join(d, "generation.txt"))
                    data[part].append(r)
    base = os.path.join(raw, "nvme")
    for stack in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for run in sorted(os.listdir(os.path.join(base, stack))):
            data["nvme"].append({"stack": stack, "run": int(run[3:]),
                                 "result": fio_run(os.path.join(base, stack, run))})
    base = os.path.join(raw, "host-udp")
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        m = re.match(r"mtu(\d+)-(\d+)\.json$", name)
        if m:
            data["host_udp"].append({"mtu": int(m.group(1)), "datagram_bytes": int(m.group(2)),
                                     "result": iperf_udp(os.path.join(base, name))})
    return data


# -- the tables ---------------------------------------------------------------

def values(runs, stack, mtu, cmd, field):
    """One figure of one command across a stack's runs (None: a run had none;
    CLOCK_FAILED: perftest could not time it)."""
    out = []
    for r in runs:
        if r["stack"] != stack or r["mtu"] != mtu:
            continue
        for t in r["tests"]:
            if t["command"] == cmd:
                out.append(t["result"][field] if t["result"] else
                           CLOCK_FAILED if t["clock_failed"] else None)
    return out


def med(vals):
    """The median of the runs; a failed run makes it unknown (None), one
    that perftest could not time is left out."""
    if not vals or None in vals:
        return None
    vals = [v for v in vals if v is not CLOCK_FAILED]
    return statistics.median(vals) if vals else None


def fmt(v):
    if v is None:
        return "?"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def cell(vals, unit, of="runs"):
    m, got = med(vals), [v for v in vals if v is not CLOCK_FAILED]
    if m is None:
        return "?"
    spread = f" ({fmt(min(got))}-{fmt(max(got))})" if len(got) > 1 else ""
    missing = f", {len(got)} of {len(vals)} {of}" if len(got) < len(vals) else ""
    return f"{fmt(m)}{spread} {unit}{missing}"


def ratio(a, b, what):
    if a is None or b is None or a <= 0:
        return "?"
    return f"{b / a:.1f}x {what}" if what else f"{b / a:.2f} of the latency"


def commands(runs):
    seen = []
    for r in runs:
        for t in r["tests"]:
            if t["command"] not in seen:
                seen.append(t["command"])
    return seen


def test_name(cmd):
    size = cmd_size(cmd)
    return f"{cmd.split()[0]} {human_size(size)}" if size is not None else cmd.split()[0]


def ran(runs, stack, mtu):
    """Whether the stack ran at this MTU."""
    return any(r["stack"] == stack and r["mtu"] == mtu for r in runs)


def perftest_cell(runs, stack, mtu, cmd):
    """A stack's figures of one test: bandwidth, or latency typical;
    average; p99.  Returns the text and the median compared across
    stacks (bandwidth or typical latency)."""
    if is_bw(cmd):
        v = values(runs, stack, mtu, cmd, "bw_avg_MBps")
        return cell(v, "MB/s"), med(v)
    typ = values(runs, stack, mtu, cmd, "typical_us")
    avg = med(values(runs, stack, mtu, cmd, "avg_us"))
    p99 = med(values(runs, stack, mtu, cmd, "p99_us"))
    return f"{cell(typ, 'us')}; {fmt(avg)} us; {fmt(p99)} us", med(typ)


def perftest_table(runs, mtu, columns, ratios):
    """COLUMNS: (stack, heading) pairs; RATIOS: (stack A, stack B, heading),
    B's median against A's."""
    columns = [(s, h) for s, h in columns if ran(runs, s, mtu)]
    ratios = [(a, b, h) for a, b, h in ratios if ran(runs, a, mtu) and ran(runs, b, mtu)]
    heads = [h for _, h in columns] + [h for _, _, h in ratios]
    out = ["| test | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for cmd in commands(runs):
        bw = is_bw(cmd)
        name = test_name(cmd) + ("" if bw else ": typical; average; p99")
        cells = {s: perftest_cell(runs, s, mtu, cmd) for s, _ in columns}
        row = [cells[s][0] for s, _ in columns]
        row += [ratio(cells[a][1], cells[b][1], "the bandwidth" if bw else "") for a, b, _ in ratios]
        out.append(f"| {name} | " + " | ".join(row) + " |")
    return out


def walls(runs, mtu, columns):
    """The line of the median whole run of a pair of each of COLUMNS
    ((stack, name) pairs) at this MTU."""
    return "Whole run of a pair (boot, setup, all tests, power off), median: " + "; ".join(
        f"{name}: {fmt(med([r['wall_s'] for r in runs if r['stack'] == s and r['mtu'] == mtu]))} s"
        for s, name in columns) + "."


def generation_name(g):
    return f"QEMU {g.get('qemu', '?')}, Linux {g.get('linux', '?')}"


def generations_table(data):
    """rdma-sim on each generation (configs/generations), oldest first, and
    the newest (the default) against the oldest."""
    runs, skipped = data["generations"], data["generations_skipped"]
    if not runs and not skipped:
        return []
    gens = {}
    for r in runs:
        gens.setdefault(r["stack"], r["generation"])
    order = {role: i for i, role in enumerate(GEN_ROLES)}
    keys = sorted(gens, key=lambda k: order.get(gens[k].get("role"), len(order)))
    by_role = {gens[k].get("role"): k for k in keys}
    columns = [(k, generation_name(gens[k])) for k in keys]
    ratios = ([(by_role["oldest"], by_role["default"], "newest vs oldest")]
              if "oldest" in by_role and "default" in by_role else [])
    out = ["## rdma-sim by generation", "",
           "rdma-sim pairs on each generation of configs/generations: its own QEMU build with its "
           "own guest kernel and the driver built for it, the perftest part's tests, in turn with "
           "the other pairs in each round. The newest generation is the default; the last column "
           "is its median against the oldest's.", ""]
    if keys:
        out.append("Ran: " + "; ".join(
            f"{gens[k].get('role', '?')}, QEMU {gens[k].get('qemu_version', '?')} "
            f"({gens[k].get('machine', '?')}) with Linux {gens[k].get('abi', '?')}" for k in keys) + ".")
        out.append("")
    for g in skipped:
        out += [f"Skipped: {generation_name(g)} ({g.get('role', '?')}), its QEMU not built: "
                f"`{g.get('make', '?')}` builds it (`make qemu-all`: every generation).", ""]
    for mtu in sorted({r["mtu"] for r in runs}):
        pm = next((r["path_mtu"] for r in runs if r["mtu"] == mtu and r["path_mtu"]), None)
        out += [f"### Ethernet MTU {mtu} (RoCE path MTU {pm or '?'})", ""]
        out += perftest_table(runs, mtu, columns, ratios)
        out += ["", walls(runs, mtu, columns), ""]
    return out


def goals(data, mtu):
    """How rdma-sim stands against issue 15's goals at this MTU."""
    runs = data["perftest"]
    out = []
    for cmd in commands(runs):
        if not is_bw(cmd):
            typ = med(values(runs, "rsim", mtu, cmd, "typical_us"))
            p99 = med(values(runs, "rsim", mtu, cmd, "p99_us"))
            if typ is not None and p99 is not None:
                out.append(f"- rdma-sim {test_name(cmd)}: typical {fmt(typ)} us (goal <= {LAT_GOAL_US} us), "
                           f"p99 {fmt(p99)} us = {p99 / typ:.1f}x typical (goal <= {TAIL_GOAL}x).")
    udp = [h for h in data["host_udp"] if h["mtu"] == mtu and h["result"]]
    if udp:
        h = udp[0]
        best = None
        for cmd in commands(runs):
            if is_bw(cmd):
                v = med(values(runs, "rsim", mtu, cmd, "bw_avg_MBps"))
                if v is not None and (best is None or v > best[1]):
                    best = (test_name(cmd), v)
        line = (f"- Host UDP over loopback, {h['datagram_bytes']}-byte datagrams (rdma-sim's frame at "
                f"this path MTU), one iperf3 stream: {fmt(h['result']['MBps'])} MB/s received "
                f"({h['result']['lost_percent']}% lost).")
        if best:
            line += (f" rdma-sim's best, {best[0]} {fmt(best[1])} MB/s, is {best[1] / h['result']['MBps']:.0%}"
                     f" of it (goal >= {UDP_SHARE_GOAL:.0%}).")
        out.append(line)
    return out


def sweep_table(data, plot_name):
    runs = data["sweep"]
    if not runs:
        return []
    out = [f"## Message size sweep (one run each; the plot is {plot_name})", ""]
    cmds = {(cmd.split()[0], cmd_size(cmd)): cmd for cmd in commands(runs)}
    for mtu in sorted({r["mtu"] for r in runs}):
        stacks = [s for s in STACKS if ran(runs, s, mtu)]
        sizes = sorted({size for _, size in cmds if size})
        heads = ([f"{STACKS[s]}: ib_write_bw" for s in stacks] +
                 [f"{STACKS[s]}: ib_write_lat typical" for s in stacks])
        out += [f"### Ethernet MTU {mtu}", "",
                "| size | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
        for size in sizes:
            row = []
            for tool, field, unit in (("ib_write_bw", "bw_avg_MBps", "MB/s"),
                                      ("ib_write_lat", "typical_us", "us")):
                for st in stacks:
                    row.append(cell(values(runs, st, mtu, cmds.get((tool, size)), field), unit))
            out.append(f"| {human_size(size)} | " + " | ".join(row) + " |")
        out.append("")
    return out


def pair_values(run, field):
    return [CLOCK_FAILED if p["clock_failed"] else p["result"][field] if p["result"] else None
            for p in run["pairs"]]


def cluster_table(data):
    runs = data["cluster"]
    if not runs:
        return []
    out = []
    for link in sorted({r["link"] for r in runs}):
        switch = ("a Linux bridge (tap devices)" if link == "bridge" else
                  "QEMU's multicast socket hub (every frame reaches every guest)")
        by = {(r["guests"], r["kind"]): r for r in runs if r["link"] == link}
        bw_cmd = next((r["command"] for r in runs if r["kind"] == "bw"), "?")
        lat_cmd = next((r["command"] for r in runs if r["kind"] == "lat"), "?")

        def lat(n, kind):
            r = by.get((n, kind))
            if not r:
                return "?"
            p99 = med(pair_values(r, "p99_us"))
            return (cell(pair_values(r, "typical_us"), "us", of="pairs") +
                    f"; p99 {fmt(p99)} us")
        out += [f"## Clusters: rdma-sim guests all-to-all on {switch}", "",
                f"Guests of 1 vCPU and 512 MiB. Every pair at once: `{bw_cmd}` (the aggregate "
                f"is the sum of the pairs' bandwidths), then `{lat_cmd}`; then `{lat_cmd}` "
                "one pair at a time, the other guests idle. Per-pair cells: the median over "
                "the pairs (their range), for latency the typical and the median p99.", "",
                "| guests | pairs | aggregate ib_write_bw | ib_write_bw per pair | "
                "ib_write_lat, every pair at once | ib_write_lat, one pair at a time |",
                "|---|---|---|---|---|---|"]
        for n in sorted({g for g, _ in by}):
            bw = by.get((n, "bw"))
            bws = pair_values(bw, "bw_avg_MBps") if bw else []
            got = [v for v in bws if v is not CLOCK_FAILED]
            agg = ("?" if not bws or None in bws else fmt(sum(got)) + " MB/s" +
                   (f", {len(got)} of {len(bws)} pairs" if len(got) < len(bws) else ""))
            out.append(f"| {n} | {n * (n - 1) // 2} | {agg} | "
                       f"{cell(bws, 'MB/s', of='pairs')} | {lat(n, 'lat')} | "
                       f"{lat(n, 'lat-serial')} |")
        out.append("")
    return out


def qps_table(data):
    runs = data["qps"]
    if not runs:
        return []
    r = runs[0]
    one = next((t["result"]["bw_avg_MBps"] for t in r["tests"]
                if t["result"] and " -q 1 " in f" {t['command']} "), None)
    out = [f"## Queue pairs: ib_write_bw between two rdma-sim guests "
           f"(Ethernet MTU {r['mtu']}, one run)", "",
           "| QPs | ib_write_bw, 64 KiB | vs 1 QP |", "|---|---|---|"]
    for t in r["tests"]:
        q = int(re.search(r"-q (\d+)", t["command"]).group(1))
        bw = t["result"]["bw_avg_MBps"] if t["result"] else None
        out.append(f"| {q} | {fmt(bw)} MB/s | "
                   f"{f'{bw / one:.2f}' if bw is not None and one else '?'} |")
    return out + [""]


def nvme_table(data):
    runs = data["nvme"]
    if not runs:
        return []

    def v(stack, key):
        return [r["result"][key] if r["result"] else None for r in runs if r["stack"] == stack]
    # Soft-RoCE's column is Debian's QEMU, as in the perftest tables; the
    # mixed pairs ran on our build, so the case, rdma-sim answering
    # Soft-RoCE's READs, is weighed against Soft-RoCE on both on our build.
    stacks = [s for s in ("rxe-deb", "rxe", "rsim", "rxe-target", "rxe-host")
              if any(r["stack"] == s for r in runs)]
    names = {"rxe-deb": "Soft-RoCE (Debian's QEMU)", "rxe": "Soft-RoCE (our QEMU)"}
    pairs = [(a, b, h) for a, b, h in (
        ("rxe-deb", "rsim", "rdma-sim vs Soft-RoCE"),
        ("rxe", "rxe-target", "Soft-RoCE target: rdma-sim host vs Soft-RoCE host"))
        if a in stacks and b in stacks]
    out = ["## NVMe over RDMA (fio on the nvme-rdma host, guest B; nvmet-rdma ramdisk "
           "target, guest A; 2 vCPUs per guest, MTU 1500)", "",
           "A write is the target's RDMA READ of the host's memory: the host's NIC answers "
           "the READs. The mixed pairs ran on our QEMU build.", "",
           "| fio job | " + " | ".join(names.get(s, STACKS[s]) for s in stacks) +
           "".join(f" | {h}" for _, _, h in pairs) + " |",
           "|---|" + "---|" * (len(stacks) + len(pairs))]
    for key, name, unit, what in (
            ("iops_4k_qd32", "4 KiB random read, QD 32", "IOPS", "the IOPS"),
            ("p50_us_4k_qd1", "4 KiB random read, QD 1, latency p50", "us", ""),
            ("p99_us_4k_qd1", "4 KiB random read, QD 1, latency p99", "us", ""),
            ("MBps_1m_qd16", "1 MiB sequential read, QD 16", "MB/s", "the bandwidth"),
            ("MiBps_1m_write_qd1", "1 MiB sequential write, QD 1", "MiB/s", "the bandwidth"),
            ("mean_ms_1m_write_qd1", "1 MiB sequential write, QD 1, mean latency", "ms", ""),
            ("MiBps_1m_write_qd32", "1 MiB sequential write, QD 32", "MiB/s", "the bandwidth"),
            ("mean_ms_1m_write_qd32", "1 MiB sequential write, QD 32, mean latency", "ms", "")):
        out.append(f"| {name} | " + " | ".join(cell(v(s, key), unit) for s in stacks) +
                   "".join(f" | {ratio(med(v(a, key)), med(v(b, key)), what)}" for a, b, _ in pairs) +
                   " |")
    return out + [""]


def report(data, stem):
    info = data["info"]
    runs = data["perftest"]
    nruns = max([r["run"] for part in ("perftest", "generations", "nvme") for r in data[part]] + [1])
    out = [f"# rdma-sim vs Soft-RoCE ({info.get('date', '?')})", "",
           f"Pairs of TCG guests (1 vCPU, 1 GiB each) on {info.get('cores', '?')} host cores, "
           f"Debian {info.get('abi', '?')} kernel, host UDP link (-netdev socket,udp=), "
           "stock perftest; figures from the client.",
           f"Soft-RoCE = rdma_rxe over virtio-net in the guest, on Debian's QEMU package "
           f"({info.get('debian_qemu', '?')}); rdma-sim = this device and driver, on our QEMU "
           "build (with patches/qemu); where the table has it, rdma-sim also ran on the same "
           "QEMU without patches/qemu (make qemu-plain), and the last column is what the "
           "patches give."]
    if nruns > 1:
        out.append(f"Each pair ran {nruns} times: medians, with the range of the runs in brackets; "
                   "the ratio is of the medians.")
    out += ["", f"Every run's figures: {os.path.basename(stem)}.json; raw outputs: "
            f"{info.get('raw', '?')}.", ""]
    for mtu in sorted({r["mtu"] for r in runs}):
        pm = {s: next((r["path_mtu"] for r in runs if r["stack"] == s and r["mtu"] == mtu), None)
              for s in STACKS}
        out += [f"## Ethernet MTU {mtu} (RoCE path MTU: Soft-RoCE {pm['rxe-deb'] or '?'}, "
                f"rdma-sim {pm['rsim'] or '?'})", ""]
        out += perftest_table(runs, mtu,
                              (("rxe-deb", "Soft-RoCE"), ("rsim", "rdma-sim"),
                               ("rsim-plain", "rdma-sim, QEMU without our patches")),
                              (("rxe-deb", "rsim", "rdma-sim vs Soft-RoCE"),
                               ("rsim-plain", "rsim", "our patches' share: with vs without")))
        out += ["", walls(runs, mtu, (("rxe-deb", "Soft-RoCE"), ("rsim", "rdma-sim"))), ""]
        out += goals(data, mtu) + [""]
        if any(r["stack"] == "rsim-server" and r["mtu"] == mtu for r in runs):
            out += ["### rdma-sim out of process (rdma-sim-server over vfio-user, guest memory "
                    "shared) against built in (same QEMU, same run)", ""]
            out += perftest_table(runs, mtu, (("rsim", "built in"),
                                              ("rsim-server", "out of process")),
                                  (("rsim", "rsim-server", "out of process vs built in"),))
            out.append("")
        if any(r["stack"] == "rxe" and r["mtu"] == mtu for r in runs):
            out += ["### virtio-net on our QEMU build against Debian's QEMU "
                    "(Soft-RoCE both times, same run)", ""]
            out += perftest_table(runs, mtu, (("rxe-deb", "Debian's QEMU"), ("rxe", "our QEMU")),
                                  (("rxe-deb", "rxe", "ours vs Debian's"),))
            out.append("")
    out += generations_table(data)
    out += hops_table(data)
    out += sweep_table(data, os.path.basename(stem) + ".png")
    out += nvme_table(data)
    out += cluster_table(data)
    out += qps_table(data)
    if (any(t["clock_failed"] for part in ("perftest", "generations", "sweep", "qps") for r in data[part]
            for t in r["tests"]) or
            any(p["clock_failed"] for r in data["cluster"] for p in r["pairs"])):
        out += [CLOCK_FAILED_NOTE, ""]
    return "\n".join(out) + "\n"


# -- the plot -----------------------------------------------------------------

def plot(data, stem):
    """NAME.png: bandwidth and typical latency against message size, one
    line per stack and MTU.  Returns why there is none, or None."""
    runs = data["sweep"]
    if not runs:
        return "no sweep in this run (BENCH_PARTS)"
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return "gnuplot not found: install gnuplot-nox (make deps)"
    series = {"bw": [], "lat": []}
    for r in sorted(runs, key=lambda r: (r["mtu"], r["stack"])):
        for kind, field in (("bw", "bw_avg_MBps"), ("lat", "typical_us")):
            pts = [(t["size"], t["result"][field]) for t in r["tests"]
                   if t["result"] and t["size"] and t["tool"].endswith("_" + kind)]
            if pts:
                name = f"{STACKS[r['stack']]}, MTU {r['mtu']}"
                path = f"{stem}-{kind}-{r['stack']}-{r['mtu']}.dat"
                with open(path, "w") as f:
                    f.writelines(f"{s} {v}\n" for s, v in sorted(pts))
                series[kind].append((path, name))

    def plots(kind):
        return ", ".join(f"'{p}' using 1:2 with linespoints title '{n}'" for p, n in series[kind])
    script = f"""set terminal pngcairo size 1200,500 font ',10' noenhanced
set output '{stem}.png'
set multiplot layout 1,2 title 'rdma-sim vs Soft-RoCE, two TCG guests ({data["info"].get("date", "")})'
set logscale xy
set grid
set key top left
set xlabel 'message size (bytes)'
set xtics ('2 B' 2, '32 B' 32, '512 B' 512, '8 KiB' 8192, '128 KiB' 131072, '1 MiB' 1048576)
set ylabel 'ib_write_bw, MB/s'
set title 'Bandwidth'
plot {plots("bw")}
set key top left
set ylabel 'ib_write_lat, typical, us'
set title 'Latency'
plot {plots("lat")}
unset multiplot
"""
    res = subprocess.run([gnuplot], input=script, text=True, capture_output=True)
    for kind in series:
        for p, _ in series[kind]:
            os.unlink(p)
    if res.returncode != 0:
        return "gnuplot failed: " + res.stderr.strip().splitlines()[-1]
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-report.py RAW-DIR OUT-STEM")
    raw, stem = sys.argv[1], sys.argv[2]
    data = collect(raw)
    with open(stem + ".json", "w") as f:
        json.dump(data, f, indent=1)
    text = report(data, stem)
    why = plot(data, stem)
    text += f"\nPlot: {os.path.basename(stem)}.png\n" if why is None else f"\nNo plot: {why}.\n"
    with open(stem + ".md", "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
