#!/usr/bin/env python3
#===- test/fuzz/replay_regressions.py - Replay the hostile-input corpus ---===#
#
# This file implements the CI check that every file that once crashed Kiln
# still does not: each NAME.onnx of the regression folders goes through
# `kiln dump` and `kiln compile --cxx /bin/true` (everything but the host
# compiler). A run must end with exit status 0 or 1, within the time limit,
# with no signal and no sanitizer report; NAME.expect says what it must
# print: "ok" (it compiles) or "error: TEXT" (a clean error containing TEXT).
# With --harness, each file is also fed to the fuzz harnesses' replay
# binaries (test/fuzz/*.cpp built without libFuzzer), which must not crash.
#
#   replay_regressions.py --kiln build/bin/kiln DIR... [--harness BIN...]
#
#===----------------------------------------------------------------------===#
import argparse
import os
import subprocess
import sys
import tempfile

CRASH_MARKERS = ("AddressSanitizer", "runtime error:", "LeakSanitizer",
                 "terminate called", "Assertion", "Stack dump")


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.returncode, p.stdout + p.stderr


def crashed(rc, log):
    if rc is None:
        return f"timed out"
    if rc < 0 or rc > 1:
        return f"exit status {rc}"
    for m in CRASH_MARKERS:
        if m in log:
            return f"'{m}' in its output"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--harness", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    files = sorted(os.path.join(d, f) for d in args.dirs
                   for f in os.listdir(d) if not f.endswith(".expect"))
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kiln-replay-") as tmp:
        for path in files:
            name = os.path.basename(path)
            problems = []
            if path.endswith(".onnx"):
                expect_path = os.path.splitext(path)[0] + ".expect"
                expect = open(expect_path).read().strip() \
                    if os.path.exists(expect_path) else None
                pkg = os.path.join(tmp, "pkg")
                logs = ""
                for cmd in ([args.kiln, "dump", path],
                            [args.kiln, "compile", path, "-o", pkg,
                             "--cxx", "/bin/true"]):
                    rc, log = run(cmd, args.timeout)
                    logs += log
                    why = crashed(rc, log)
                    if why:
                        problems.append(f"kiln {cmd[1]}: {why}")
                    last_rc = rc
                if expect == "ok" and last_rc != 0:
                    problems.append("expected it to compile")
                elif expect and expect.startswith("error: ") and (
                        last_rc != 1 or expect[7:] not in logs):
                    problems.append(f"expected an error containing "
                                    f"'{expect[7:]}'")
            for harness in args.harness:
                rc, log = run([harness, path], args.timeout)
                why = crashed(rc, log)
                if why:
                    problems.append(f"{os.path.basename(harness)}: {why}")
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems))
                print("  " + logs[-1500:].replace("\n", "\n  ")
                      if path.endswith(".onnx") else "")
            else:
                print(f"ok   {name}")
    print(f"{len(files)} files, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
