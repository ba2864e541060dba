#!/usr/bin/env python3
#===- scripts/gpu/ncu_summary.py - Kernel times from an ncu CSV ----------===#
#
# Reads `ncu --csv --metrics gpu__time_duration.sum` output (a program's
# kernels, serialized) and prints the total and the kernels, longest first,
# each with its launch count: run.sh's `profile` step, over kiln-runner
# running STEPS train steps (the times are divided by STEPS).
#
#   python3 ncu_summary.py ncu.csv --steps 2 [--top 25]
#===----------------------------------------------------------------------===#
import argparse
import collections
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    rows = []
    with open(args.csv) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "ns")
        scale = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}.get(unit, 1e-6)
        rows.append((r["Kernel Name"], value * scale))
    by_name = collections.defaultdict(lambda: [0.0, 0])
    for name, ms in rows:
        by_name[name][0] += ms
        by_name[name][1] += 1
    total = sum(ms for _, ms in rows) / args.steps
    print(f"== {len(rows) // max(args.steps, 1)} kernels per step, {total:.3f} ms per step (serialized)")
    for name, (ms, n) in sorted(by_name.items(), key=lambda kv: -kv[1][0])[: args.top]:
        print(f"{ms / args.steps:8.3f} ms  x{n // max(args.steps, 1):<3} {name[:150]}")


if __name__ == "__main__":
    main()
