#!/usr/bin/env python3
#===- scripts/gpu/profile_train.py - PyTorch's kernels of a train step ---===#
#
# Runs on the GPU machine, next to models.py: one training step of a
# `models.py` *_train model (SGD, float32, TF32 off, as `models.py baseline`)
# under torch.profiler, eager or torch.compile, and prints its CUDA kernels
# with their times, longest first. The peer of `ncu` over kiln-runner in
# run.sh's `profile` step: the two lists side by side say which kernels Kiln
# spends its extra time in.
#
#   python3 profile_train.py mlp_train [--mode compile|eager] [--top 25]
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
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, inputs = models.build(args.model)
    model = model.cuda()
    inputs = tuple(i.cuda() for i in inputs)
    m = torch.compile(model) if args.mode == "compile" else model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
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
