#===- check_trace.py - Validate a Chrome/Perfetto trace of a run ---------===#
#
# Checks a trace written by `kiln run --profile FILE.json` (or kiln bench,
# kiln-runner; runtime/lib/Trace.cpp): valid JSON with a "traceEvents" list,
# every event a complete event ("ph": "X") with a string name and category,
# numeric ts and a non-negative dur, integer pid and tid, an "args" object;
# every span inside the outermost "run" span. Then counts: --runs N run
# spans, --steps N spans of compiled steps (kernel, library, reference,
# copy), --eager N ops on the reference runtime, --breaks N eager regions;
# --wrapper FILE (repeatable) expects as many step spans as the wrappers
# have profiler->begin calls. Prints one summary line; exits 1 with a
# message on the first failure.
#
#===----------------------------------------------------------------------===#
import argparse
import json
import sys

STEP_KINDS = {"kernel", "library", "reference", "copy"}


def fail(msg):
    print("check_trace: error: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--eager", type=int)
    ap.add_argument("--breaks", type=int)
    ap.add_argument("--wrapper", action="append", default=[])
    args = ap.parse_args()
    try:
        with open(args.trace) as f:
            root = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.trace}: not valid JSON: {e}")
    events = root.get("traceEvents") if isinstance(root, dict) else None
    if not isinstance(events, list) or not events:
        fail("no traceEvents list, or an empty one")
    for i, e in enumerate(events):
        where = f"traceEvents[{i}]"
        for key in ("name", "cat", "ph", "ts", "dur", "pid", "tid", "args"):
            if key not in e:
                fail(f"{where} has no '{key}': {e}")
        if e["ph"] != "X":
            fail(f"{where}: ph is {e['ph']!r}, expected 'X'")
        if not isinstance(e["name"], str) or not isinstance(e["cat"], str):
            fail(f"{where}: name and cat must be strings")
        if not all(isinstance(e[k], (int, float)) for k in ("ts", "dur")):
            fail(f"{where}: ts and dur must be numbers")
        if not all(isinstance(e[k], int) for k in ("pid", "tid")):
            fail(f"{where}: pid and tid must be integers")
        if e["dur"] < 0 or e["ts"] < 0:
            fail(f"{where}: negative time: ts {e['ts']}, dur {e['dur']}")
        if not isinstance(e["args"], dict):
            fail(f"{where}: args must be an object")
    runs = [e for e in events if e["cat"] == "run"]
    if not runs:
        fail("no span of category 'run'")
    top = max(runs, key=lambda e: e["dur"])
    # Times are microseconds as doubles: allow rounding.
    eps = 0.01
    for i, e in enumerate(events):
        if e["ts"] + eps < top["ts"] or \
           e["ts"] + e["dur"] > top["ts"] + top["dur"] + eps:
            fail(f"traceEvents[{i}] ({e['name']}) [{e['ts']}, "
                 f"{e['ts'] + e['dur']}] is not inside the run span "
                 f"[{top['ts']}, {top['ts'] + top['dur']}]")
    steps = [e for e in events if e["cat"] in STEP_KINDS]
    eager = [e for e in events if e["cat"] == "eager"]
    breaks = [e for e in events if e["cat"] == "graph_break"]
    expected_steps = args.steps
    if args.wrapper:
        expected_steps = sum(open(w).read().count("profiler->begin(")
                             for w in args.wrapper)
    for what, got, want in (("run", len(runs), args.runs),
                            ("step", len(steps), expected_steps),
                            ("eager", len(eager), args.eager),
                            ("graph_break", len(breaks), args.breaks)):
        if want is not None and got != want:
            fail(f"{got} {what} spans, expected {want}")
    for e in steps:
        if "step" not in e["args"]:
            fail(f"step span {e['name']} has no 'step' argument")
    print(f"trace ok: {len(runs)} run, {len(steps)} step, {len(eager)} eager, "
          f"{len(breaks)} graph_break spans; kinds "
          + ",".join(sorted({e['cat'] for e in steps})))


if __name__ == "__main__":
    main()
