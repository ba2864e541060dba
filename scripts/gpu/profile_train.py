#!/usr/bin/env python3
#===- scripts/gpu/profile_train.py - PyTorch's kernels of a train step ---===#
#
# Runs on the GPU machine, next to models.py: one training step of a
# `models.py` *_train model (SGD, float32, TF32 off, as `models.py baseline`),
# or one inference call of any other model (in --dtype, as `models.py
# baseline`), under torch.profiler, eager or torch.compile, and prints its
# CUDA kernels with their times, longest first. The peer of `ncu` over
# kiln-runner in run.sh's `profile` step and gpu_bench.py's --profile: the two
# lists side by side say which kernels Kiln spends its extra time in.
#
#   python3 profile_train.py mlp_train [--mode compile|eager] [--top 25]
#   python3 profile_train.py vit_small --dtype bfloat16
#===----------------------------------------------------------------------===#
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--mode", default="compile", choices=["compile", "eager"])
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = ap.parse_args()
    train = args.model.endswith("_train")
    dt = getattr(torch, args.dtype)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, inputs = models.build(args.model)
    model = model.cuda().to(dt)
    inputs = tuple(i.cuda().to(dt) if i.is_floating_point() else i.cuda() for i in inputs)
    if not train:
        model.eval()
    m = torch.compile(model) if args.mode == "compile" else model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        if not train:
            with torch.no_grad():
                return m(*inputs)
        opt.zero_grad(set_to_none=True)
        m(*inputs).float().pow(2).mean().backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    total = sum(e.device_time for e in kernels)
    print(f"== torch {args.mode} {args.model}: {len(kernels)} kernels, {total / 1000:.3f} ms")
    for e in sorted(kernels, key=lambda e: -e.device_time)[: args.top]:
        print(f"{e.device_time / 1000:8.3f} ms  {e.name[:150]}")


if __name__ == "__main__":
    main()
