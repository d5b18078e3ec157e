#!/bin/bash
# VM test: scripts/rdma-sim-top reads a running guest's rdma-sim device
# through QEMU's QMP socket (qom-get of the device's objects and counters).
# While an RC ping-pong runs through the device's loopback in the guest
# (tests/vm/guest/rdma-sim-top.sh), the host takes a view and the JSON:
# the device shows the two RC QPs the driver shows in `rdma resource show
# qp`, in RTS and connected to each other, the MRs of `rdma resource show
# mr` by their keys, and counters that moved; the ring depths and element
# sizes the driver shows for each QP and CQ (rdma -dd, rsim_restrack.c) and
# each MR's kind and page-list level are the device's; --brief (what the
# harness prints of a failed run) lists the same RC QPs.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-rdma-sim-top
qmp=$VMTEST_RUNS/qmp.sock
top=$PWD/scripts/rdma-sim-top

# serve_snapshot: called while the guest runs; when the guest asks
# (results/request-snapshot), saves rdma-sim-top's view and JSON there.
# shellcheck disable=SC2317  # called through VMTEST_POLL
serve_snapshot() {
    local res
    res=$(echo "$VMTEST_RUNS"/*/g0/results)
    [[ -e $res/request-snapshot && ! -e $res/ack-snapshot ]] || return 0
    "$top" --once "$qmp" >"$res/rdma-sim-top.txt" 2>&1 ||
        vmtest_fail "rdma-sim-top --once failed: $(cat "$res/rdma-sim-top.txt")"
    "$top" --json "$qmp" >"$res/rdma-sim-top.json" 2>&1 ||
        vmtest_fail "rdma-sim-top --json failed: $(cat "$res/rdma-sim-top.json")"
    "$top" --brief "$qmp" >"$res/rdma-sim-top-brief.txt" 2>&1 ||
        vmtest_fail "rdma-sim-top --brief failed: $(cat "$res/rdma-sim-top-brief.txt")"
    touch "$res/ack-snapshot"
}

VMTEST_POLL=serve_snapshot vmtest_usernet 52:54:00:5e:07:01 \
    -q -qmp -q "unix:$qmp,server=on,wait=off" -s tests/vm/guest/rdma-sim-top.sh
vmtest_show rdma-sim-top.txt "scripts/rdma-sim-top --once during the ping-pong"
vmtest_show rdma-sim-top-brief.txt "scripts/rdma-sim-top --brief (a failed run's report)"
vmtest_show rdma-resource-qp.txt "rdma -dd resource show qp in the guest"
vmtest_show rdma-resource-cq.txt "rdma -dd resource show cq in the guest"
vmtest_show rdma-resource-mr.txt "rdma -dd resource show mr in the guest"
if ((VMTEST_RC == 0)); then
    python3 - "${VMTEST_RESULTS[0]}" <<'PY' || VMTEST_RC=1
import json, re, sys
res = sys.argv[1]
fail = []
devs = json.load(open(f"{res}/rdma-sim-top.json"))
if len(devs) != 1:
    sys.exit(f"FAIL: rdma-sim-top found {len(devs)} devices, not 1: {list(devs)}")
dev = next(iter(devs.values()))
# the driver's RC QPs in RTS: QPN -> remote QPN
guest_qps = {}
for line in open(f"{res}/rdma-resource-qp.txt"):
    m = re.search(r"lqpn (\d+) rqpn (\d+) type RC state RTS", line)
    if m:
        guest_qps[int(m.group(1))] = int(m.group(2))
rc = {q["qpn"]: q["dest-qpn"] for q in dev["qps"]
      if q["type"] == "RC" and q["state"] == "RTS"}
print(f"RC QPs in RTS (QPN: remote QPN): driver's {guest_qps}, device's {rc}")
if rc != guest_qps or len(rc) != 2:
    fail.append("the device's RC QPs in RTS are not the driver's two")
elif sorted(rc) != sorted(rc.values()):
    fail.append("the two RC QPs are not connected to each other")
keys = {m["key"] for m in dev["mrs"] if m["valid"]}
guest_keys = {int(k, 16) for k in re.findall(r"lkey (0x[0-9a-f]+)",
                                              open(f"{res}/rdma-resource-mr.txt").read())}
print(f"driver's MR lkeys: {sorted(map(hex, guest_keys))}; device's valid keys: "
      f"{len(keys)}")
if not guest_keys or not guest_keys <= keys:
    fail.append("the driver's MR keys are not all valid MRs of the device")
# The driver's attributes (rdma -dd: drv_...) against the device's view
def drv(path, key):
    """{object number: {attribute: value}} of rdma -dd's lines, by key"""
    out = {}
    for line in open(f"{res}/{path}"):
        m = re.search(rf"\b{key} (\d+)", line)
        if m:
            out[int(m.group(1))] = dict(re.findall(r"drv_(\S+) (\S+)", line))
    return out
dqp = drv("rdma-resource-qp.txt", "lqpn")
for q in dev["qps"]:
    d = dqp.get(q["qpn"], {})
    want = {"sq-depth": q["sq"]["depth"], "sq-elem": q["sq"]["elem-size"]}
    if "rq" in q:
        want.update({"rq-depth": q["rq"]["depth"], "rq-elem": q["rq"]["elem-size"]})
    got = {k: int(d[k]) if k in d else None for k in want}
    if got != want:
        fail.append(f"QP {q['qpn']}: driver's rings {got}, device's {want}")
dcq = drv("rdma-resource-cq.txt", "cqn")
for c in dev["cqs"]:
    got = dcq.get(c["cqn"], {}).get("ring-depth")
    if got is None or int(got) != c["ring"]["depth"]:
        fail.append(f"CQ {c['cqn']}: driver's ring depth {got}, device's {c['ring']['depth']}")
dmr = {int(k, 16): dict(re.findall(r"drv_(\S+) (\S+)", line)) for line in
       open(f"{res}/rdma-resource-mr.txt") for k in re.findall(r"lkey (0x[0-9a-f]+)", line)}
for m in dev["mrs"]:
    if m["key"] in dmr and (dmr[m["key"]].get("kind") != m["kind"] or
                            int(dmr[m["key"]].get("level", -1)) != m.get("level")):
        fail.append(f"MR 0x{m['key']:x}: driver says {dmr[m['key']]}, device {m}")
print(f"driver attributes compared: {len(dqp)} QPs, {len(dcq)} CQs, {len(dmr)} MRs")
if len(dqp) < 3 or len(dcq) < 3 or len(dmr) < 2:
    fail.append("rdma -dd showed fewer objects with driver attributes than expected")
c = dev["counters"]
for name in ("loopback_packets", "completions", "tx_roce_packets"):
    if c[name] <= 0:
        fail.append(f"counter {name} is {c[name]} during the ping-pong")
text = open(f"{res}/rdma-sim-top.txt").read()
if "link ACTIVE, driver ready" not in text or not re.search(r"^QPs: [2-9]", text, re.M):
    fail.append("rdma-sim-top's view lacks the active link or the QPs")
# --brief (the harness's failure report): one line per connected QP, the
# CQs, the counters.
brief = open(f"{res}/rdma-sim-top-brief.txt").read()
brief_qps = {int(a): int(b) for a, b in re.findall(r"^QP (\d+) RC RTS -> (\d+): ", brief, re.M)}
if brief_qps != rc or not re.search(r"^CQs: \d+ ", brief, re.M) or \
        not re.search(r"^counters: .*loopback_packets \d+", brief, re.M):
    fail.append(f"rdma-sim-top --brief does not show the RC QPs {rc}, the CQs and counters")
for f in fail:
    print("FAIL:", f)
sys.exit(1 if fail else 0)
PY
fi
vmtest_done "$VMTEST_RC"
