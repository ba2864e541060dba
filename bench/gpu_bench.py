"""Kiln vs PyTorch eager and torch.compile on the GPU, side by side in one run.

Runs on the GPU machine from the gpu-pack/ folder of scripts/gpu/pack.sh
(gpu-pack/run.sh calls it). For each benchmark model of models.py it:
  1. regenerates the weights with `models.py export` (the ONNX graph Kiln
     compiled references them as external data, bound at load time);
  2. runs PyTorch eager (float32, TF32 off) on the model's inputs and checks
     Kiln's outputs (kiln-runner) against it;
  3. times Kiln's package (kiln-runner --iterations) next to
     `models.py baseline` (eager and torch.compile), and, for the
     memory-bound models, compares Kiln's bandwidth (bytes read + written /
     time) with a device-to-device copy measured in the same run;
Times are medians. Kiln's and PyTorch's are measured the same way: CUDA
events recorded on the stream around one run (kiln-runner's
device_median_ms; models.py's torch.cuda.Event pairs); ratios and bandwidths
use those. Kiln's wall-clock time around Model::run (host work, launch and
the wait for its stream included) is printed next to it. Kiln's timed runs
replay a CUDA graph (docs/runtime-api.md); it is also timed with
--no-cuda-graphs (every kernel launched by the host). The batch-1 models
(*_b1) are also compared with torch.compile's mode="reduce-overhead" (CUDA
graphs), and so are the user models (USER_MODELS). A bfloat16 output is also compared, like PyTorch's bfloat16 output,
with PyTorch's float32 result: one beyond the bf16 tolerance but within 1.25x
of PyTorch's own bf16 error is reported as bf16 rounding.
A package without host ops fails the run if its timed runs copied anything
between host and device (kiln-runner's host_device_copies_per_run); each
package's host-op count is a column of the table.
and prints one table of medians and ratios (and JSON lines to --json).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

import numpy as np

MEMORY_BOUND = {"ln_gelu", "softmax"}
# The model families users bring (issue 14): depthwise and squeeze-excite
# networks, a vision transformer, a recurrent tagger, a U-Net.
USER_MODELS = ["mobilenet_v2", "efficientnet_b0", "vit_small", "gru_tagger", "unet_small"]
MODELS = ["softmax", "ln_gelu", "mlp", "gpt2_block", "resnet50", "gpt2_block_b1", "resnet50_b1"] + USER_MODELS
# Packages NAME-bf16 (pack.sh: kiln compile --precision bf16 --io-precision
# low of the f32 graph) exist for these (gru_tagger: float32 only).
BF16_MODELS = {"softmax", "ln_gelu", "mlp", "gpt2_block", "resnet50", "gpt2_block_b1", "resnet50_b1",
               "mobilenet_v2", "efficientnet_b0", "vit_small", "unet_small"}
# Batch-1 latency models and the user models: also compared with
# torch.compile's CUDA graphs (mode reduce-overhead), the peer of Kiln's
# replayed graphs.
LATENCY = {"gpt2_block_b1", "resnet50_b1"} | set(USER_MODELS)
# Output tolerances against PyTorch eager (rtol, atol).
TOLERANCE = {"float32": (1e-3, 1e-4), "bfloat16": (1.6e-2, 2e-2)}


# Package variants scripts/gpu/pack.sh compiles with one pass switched off:
# (folder suffix, what it is).
VARIANTS = [
    ("-nchw", "convolutions NCHW (KILN_CUDA_CHANNELS_LAST=0)"),
    ("-written-attention", "attention written out (KILN_CUDA_FLASH_ATTENTION=0)"),
    ("-cudnn-depthwise", "depthwise convolutions by cuDNN (KILN_CUDA_DEPTHWISE_KERNEL=0)"),
    ("-unfused-depthwise", "activations apart from the depthwise kernel (KILN_CUDA_DEPTHWISE_FUSION=0)"),
    ("-lb4", "f32 attention, 4 blocks an SM (KILN_CUDA_F32_ATTENTION_MIN_BLOCKS=4)"),
    ("-copies", "seq-first attention unpacked: the q/k/v copies (KILN_CUDA_SEQ_FIRST_ATTENTION=0)"),
]

def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def copy_bandwidth_gbs(torch):
    """Device-to-device copy of 1 GiB: (bytes read + written) / median time."""
    n = 1 << 30
    x = torch.empty(n // 4, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    times = []
    for i in range(25):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        y.copy_(x)
        e.record()
        torch.cuda.synchronize()
        if i >= 5:
            times.append(s.elapsed_time(e))
    ms = sorted(times)[len(times) // 2]
    del x, y
    return 2 * n / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pack", required=True, help="the gpu-pack folder")
    ap.add_argument("--models", nargs="*", default=MODELS)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--json", help="append one JSON line per model here")
    ap.add_argument("--profile", action="store_true",
                    help="also run each Kiln package once under ncu (no CUDA graph) and print its "
                         "longest kernels (ncu_summary.py)")
    args = ap.parse_args()

    sys.path.insert(0, args.pack)
    import torch
    import onnx
    import models  # the pack's copy of ../shared/bench/models.py

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    runner = os.path.join(args.pack, "bin", "kiln-runner")
    work = tempfile.mkdtemp(prefix="kiln-gpu-bench-")
    onnx_dir = os.path.join(work, "onnx")
    copy_gbs = copy_bandwidth_gbs(torch)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"copy bandwidth {copy_gbs:.0f} GB/s (read + written)", flush=True)

    rows = []
    # The long ones (resnet50's export and torch.compile take minutes) last.
    slow = ("resnet50", "resnet50_b1")
    runs = [(n, "float32") for n in args.models if n not in slow] + [
        (n, "bfloat16") for n in args.models if n in BF16_MODELS and n not in slow] + [
        (n, d) for n in args.models if n in slow for d in ("float32", "bfloat16")
        if d == "float32" or n in BF16_MODELS]
    exported = set()
    for name, dtype in runs:
        pkg = os.path.join(args.pack, "packages", name + ("-bf16" if dtype == "bfloat16" else ""))
        row = {"model": name, "dtype": dtype}
        dt = getattr(torch, dtype)
        try:
            # 1. Weights, inputs and PyTorch's outputs.
            if name not in exported:
                run([sys.executable, os.path.join(args.pack, "models.py"), "export", onnx_dir, name])
                exported.add(name)
            graph = onnx.load(os.path.join(onnx_dir, name + ".onnx"), load_external_data=False)
            inits = {t.name for t in graph.graph.initializer}
            in_names = [i.name for i in graph.graph.input if i.name not in inits]
            out_names = [o.name for o in graph.graph.output]
            model, inputs = models.build(name)
            # Both sides see the same (rounded) values; npy holds them as f32
            # (token ids stay integers).
            inputs = tuple(i.to(dt).float() if i.is_floating_point() else i for i in inputs)
            model = model.cuda().to(dt).eval()
            with torch.no_grad():
                ref = model(*[i.cuda().to(dt) if i.is_floating_point() else i.cuda() for i in inputs])
            refs = ref if isinstance(ref, (tuple, list)) else (ref,)
            case = os.path.join(work, name)
            os.makedirs(os.path.join(case, "out"), exist_ok=True)
            flags = ["--weights-dir", onnx_dir]
            for n, t in zip(in_names, inputs):
                path = os.path.join(case, n + ".npy")
                np.save(path, t.numpy())
                flags += ["--input", f"{n}={path}"]
            # 2. Kiln's outputs (one run), then its timing.
            run([runner, pkg, *flags, "--output-dir", os.path.join(case, "out")])
            if os.environ.get("KILN_BENCH_MEMCHECK") and shutil.which("compute-sanitizer"):
                # One run (no CUDA graph: every launch direct) under
                # compute-sanitizer's memcheck; 0 errors or what it found.
                check = subprocess.run(["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "7",
                                        runner, pkg, *flags, "--warmup", "0", "--iterations", "1",
                                        "--no-cuda-graphs"], text=True, capture_output=True)
                summary = [l for l in check.stdout.splitlines() if "ERROR SUMMARY" in l]
                row["memcheck"] = summary[-1].strip("= ") if summary else f"exit {check.returncode}"
                if check.returncode != 0:
                    row["error"] = "memcheck: " + row["memcheck"]
            worst = 0.0
            ok = True
            for n, r in zip(out_names, refs):
                got = np.load(os.path.join(case, "out", "".join(c if c.isalnum() or c == "_" else "_" for c in n) + ".npy"))
                want = r.float().cpu().numpy()
                worst = max(worst, float(np.max(np.abs(got - want))))
                rtol, atol = TOLERANCE[dtype]
                # Outputs far below 1 (an untrained network's logits can be
                # ~1e-11) scale the absolute tolerance with them.
                scale = min(1.0, float(np.max(np.abs(want)))) or 1.0
                row["output_scale"] = max(row.get("output_scale", 0.0), float(np.max(np.abs(want))))
                ok &= bool(np.allclose(got, want, rtol=rtol, atol=atol * scale))
            row["max_abs_diff"] = worst
            row["matches_pytorch"] = ok
            if dtype == "bfloat16":
                # Is the bf16 difference bf16 rounding? Both bf16 results
                # against PyTorch's f32 result on the same (rounded) inputs.
                m32, _ = models.build(name)
                m32 = m32.cuda().float().eval()
                with torch.no_grad():
                    r32 = m32(*[i.cuda() for i in inputs])
                r32 = r32 if isinstance(r32, (tuple, list)) else (r32,)
                kd = td = 0.0
                for n, r, f in zip(out_names, refs, r32):
                    got = np.load(os.path.join(case, "out", "".join(c if c.isalnum() or c == "_" else "_" for c in n) + ".npy"))
                    want = f.float().cpu().numpy()
                    kd = max(kd, float(np.max(np.abs(got - want))))
                    td = max(td, float(np.max(np.abs(r.float().cpu().numpy() - want))))
                row["kiln_vs_f32_max_diff"] = kd
                row["torch_bf16_vs_f32_max_diff"] = td
                # Beyond the bf16 tolerance but no further from the f32
                # result than PyTorch's own bf16 model (within 25%): bf16
                # rounding, not a bug; said so in the table.
                if not ok and kd <= 1.25 * td:
                    row["matches_pytorch"] = ok = True
                    row["bf16_rounding"] = True
                del m32
            # A debugging variant compiled with KILN_CUDA_STRIDED_ROWS=1, if
            # packed: does it match too?
            variant = pkg + "-strided"
            if os.path.isdir(variant):
                vout = os.path.join(case, "out-strided")
                os.makedirs(vout, exist_ok=True)
                run([runner, variant, *flags, "--output-dir", vout])
                vworst = 0.0
                for n, r in zip(out_names, refs):
                    got = np.load(os.path.join(vout, "".join(c if c.isalnum() or c == "_" else "_" for c in n) + ".npy"))
                    vworst = max(vworst, float(np.max(np.abs(got - r.float().cpu().numpy()))))
                row["strided_rows_max_abs_diff"] = vworst
            timing = json.loads(run([runner, pkg, *flags, "--iterations", str(args.iterations)]).stdout.strip().splitlines()[-1])
            row["kiln_wall_ms"] = timing["median_ms"]
            row["kiln_ms"] = timing.get("device_median_ms", timing["median_ms"])
            row["cuda_graph"] = timing.get("cuda_graph", "-")
            # Without CUDA graphs, every kernel launched by the host.
            direct = json.loads(run([runner, pkg, *flags, "--iterations", str(args.iterations),
                                     "--no-cuda-graphs"]).stdout.strip().splitlines()[-1])
            row["kiln_direct_ms"] = direct.get("device_median_ms", direct["median_ms"])
            row["kiln_direct_wall_ms"] = direct["median_ms"]
            # Variants compiled with a pass switched off, if packed: that
            # pass's before, timed in the same run.
            for suffix, label in VARIANTS:
                if os.path.isdir(pkg + suffix):
                    t = json.loads(run([runner, pkg + suffix, *flags, "--iterations", str(args.iterations)])
                                   .stdout.strip().splitlines()[-1])
                    row.setdefault("variants", {})[label] = t.get("device_median_ms", t["median_ms"])
                    # Its outputs against PyTorch's too (max |diff|, within
                    # the dtype's tolerance or not).
                    vout = os.path.join(case, "out" + suffix)
                    os.makedirs(vout, exist_ok=True)
                    run([runner, pkg + suffix, *flags, "--output-dir", vout])
                    vdiff, vok = 0.0, True
                    for n, r in zip(out_names, refs):
                        got = np.load(os.path.join(vout, "".join(c if c.isalnum() or c == "_" else "_" for c in n) + ".npy"))
                        want = r.float().cpu().numpy()
                        vdiff = max(vdiff, float(np.max(np.abs(got.astype(np.float32) - want))))
                        rtol, atol = TOLERANCE[dtype]
                        scale = min(1.0, float(np.max(np.abs(want)))) or 1.0
                        vok &= bool(np.allclose(got.astype(np.float32), want, rtol=rtol, atol=atol * scale))
                    row.setdefault("variant_outputs", {})[label] = {"max_abs_diff": vdiff, "matches": vok}
            if args.profile and shutil.which("ncu"):
                # One run's kernels (and the load-time ones, once), longest
                # first, for the package and its variants.
                for p in [pkg] + [pkg + s for s, _ in VARIANTS if os.path.isdir(pkg + s)]:
                    csv_path = os.path.join(case, os.path.basename(p) + ".ncu.csv")
                    with open(csv_path, "w") as f:
                        subprocess.run(["ncu", "--clock-control", "none", "--metrics", "gpu__time_duration.sum",
                                        "--csv", runner, p, *flags, "--warmup", "0", "--iterations", "1",
                                        "--no-cuda-graphs"], stdout=f, stderr=subprocess.DEVNULL)
                    print(f"-- ncu {os.path.basename(p)}", flush=True)
                    subprocess.run([sys.executable, os.path.join(args.pack, "ncu_summary.py"), csv_path,
                                    "--steps", "1", "--top", "12"])
            # 3. PyTorch eager and torch.compile, same process tree, same GPU.
            modes = "eager,compile,reduce-overhead" if name in LATENCY else "eager,compile"
            base = run([sys.executable, os.path.join(args.pack, "models.py"), "baseline", name, "--dtype", dtype,
                        "--modes", modes])
            for line in base.stdout.splitlines():
                if line.startswith("{"):
                    rec = json.loads(line)
                    row[rec["mode"] + "_ms"] = rec["median_ms"]
                    row[rec["mode"] + "_first_call_s"] = rec["first_call_s"]
            manifest = json.load(open(os.path.join(pkg, "manifest.json")))
            times = manifest.get("compile_times_s", {})
            row["kiln_passes_s"] = round(times.get("kiln_passes", 0) + times.get("codegen", 0), 3)
            row["nvrtc_s"] = round(times.get("nvrtc", 0), 3)
            row["kernels"] = manifest["counts"]
            # Ops that run on the host on every run (reference kernels; a
            # round trip through host memory each). Weight preparation that
            # runs on the host once, at load, is not one.
            row["host_ops"] = sum(1 for r in manifest.get("reference_ops", [])
                                  if r["kind"] == "fallback" and r.get("when", "run") == "run")
            # Issue 14's check: a package whose every step runs on the
            # device copies nothing between host and device in a run (its
            # inputs and outputs stay on the device when timed), with or
            # without its CUDA graph.
            row["host_device_copies_per_run"] = max(timing.get("host_device_copies_per_run", 0),
                                                    direct.get("host_device_copies_per_run", 0))
            row["device_allocations_per_run"] = direct.get("device_allocations_per_run", 0)
            if row["host_ops"] == 0 and row["host_device_copies_per_run"] > 0:
                row["error"] = (f"no host ops, but {row['host_device_copies_per_run']} host<->device "
                                "copies per run")
            # Steps per run: launches of generated kernels and library calls
            # outside weight preparation (wrapper.cpp is not packed; the
            # manifest lists every kernel, the load-time ones included).
            row["library_calls"] = sum(1 for r in manifest.get("reference_ops", []) if r["kind"] == "library")
            # Launches per run: generated kernels and library calls that run
            # on every run (weight preparation, "when": "load", runs once).
            row["launches_per_run"] = (
                sum(1 for k in manifest["kernels"] if k.get("when", "run") == "run")
                + sum(1 for r in manifest.get("reference_ops", []) if r.get("when", "run") == "run"))
            row["per_run_kernels"] = [k["name"] for k in manifest["kernels"] if k.get("when", "run") == "run"]
            if name in MEMORY_BOUND:
                size = 2 if dtype == "bfloat16" else 4
                nbytes = sum(t.numel() * size for t in inputs) + sum(r.numel() * size for r in refs)
                row["kiln_gbs"] = nbytes / (row["kiln_ms"] * 1e-3) / 1e9
                row["copy_fraction"] = row["kiln_gbs"] / copy_gbs
        except subprocess.CalledProcessError as e:
            row["error"] = (e.stderr or e.stdout or str(e)).strip()[-400:]
        except Exception as e:  # a model's failure must not hide the others'
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")

    print()
    print("| model | dtype | Kiln ms | Kiln wall ms | Kiln no-graph ms | eager ms | compile ms | reduce-overhead ms | "
          "Kiln/eager | Kiln/compile | Kiln/reduce-overhead | copy BW % | matches | Kiln launches/run | host ops | "
          "Kiln passes s | NVRTC s | torch.compile 1st call s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['dtype']} | error: {r['error'][:120]} |")
            continue
        k, e, c = r["kiln_ms"], r.get("torch_eager_ms"), r.get("torch_compile_ms")
        ro = r.get("torch_reduce_overhead_ms")
        bw = f"{100 * r['copy_fraction']:.0f}" if "copy_fraction" in r else "-"
        ros = f"{ro:.3f}" if ro else "-"
        match = "yes" if r["matches_pytorch"] else "NO (max diff %.2g)" % r["max_abs_diff"]
        if r.get("bf16_rounding"):
            match = "bf16 rounding (%.2g from f32; PyTorch bf16 %.2g)" % (r["kiln_vs_f32_max_diff"],
                                                                        r["torch_bf16_vs_f32_max_diff"])
        ror = f"{k / ro:.2f}" if ro else "-"
        print(f"| {r['model']} | {r['dtype']} | {k:.3f} | {r['kiln_wall_ms']:.3f} | {r['kiln_direct_ms']:.3f} | "
              f"{e:.3f} | {c:.3f} | {ros} | {k / e:.2f} | "
              f"{k / c:.2f} | {ror} | {bw} | {match} | {r['launches_per_run']} | {r['host_ops']} | "
              f"{r['kiln_passes_s']} | {r['nvrtc_s']} | {r.get('torch_compile_first_call_s', '-')} |")
    variants = [r for r in rows if r.get("variants")]
    if variants:
        print()
        print("| model | dtype | Kiln ms | variant (compiled with) | variant ms | Kiln/variant | variant matches |")
        print("|---|---|---:|---|---:|---:|---|")
        for r in variants:
            for label, ms in r["variants"].items():
                out = r.get("variant_outputs", {}).get(label, {})
                match = ("yes" if out.get("matches") else "no") + f" ({out.get('max_abs_diff', 0):.3g})"
                print(f"| {r['model']} | {r['dtype']} | {r['kiln_ms']:.3f} | {label} | {ms:.3f} | "
                      f"{r['kiln_ms'] / ms:.2f} | {match} |")
    return 0 if all("error" not in r and r["matches_pytorch"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
