#!/usr/bin/env bash
#===- scripts/gpu/pack.sh - Gather what the GPU machine runs -------------===#
#
# Runs on the build machine (no GPU). Builds Kiln, compiles the CUDA packages
# of the benchmark graphs (weights left external: the GPU machine regenerates
# them with models.py export) and of every ONNX node-test case that compiles
# for CUDA (with its data sets as .npy), and gathers them with the runtime
# and kiln-runner (no MLIR or LLVM travels) into gpu-pack/, at most 64 MiB:
#
#   gpu-pack/bin/            kiln-runner, kiln-runtime-gpu-tests and its
#                            fake_cuda_model.so
#   gpu-pack/lib.tar.gz      lib/: libkiln_runtime.so, OpenBLAS, oneDNN and their runtimes
#   gpu-pack/packages/NAME/  kiln compile --target cuda of each bench graph
#   gpu-pack/conformance.tar.gz   node-test packages + data (compile-cuda)
#   gpu-pack/graph-breaks/   the examples/graph_breaks models compiled for
#                            cuda (program packages), their inputs and the
#                            reference runtime's outputs (cases.txt)
#   gpu-pack/train/NAME/     kiln compile --train --target cuda of the small
#                            training graphs, with PyTorch's references
#   gpu-pack/package-api/    a CUDA package of the tiny MLP and a C++ program
#                            calling one of its kernels and its header; the
#                            tiny MLP for batch 1..64 (no --dim) and a C++
#                            program alternating batches (sized_graphs_cuda.cpp)
#   gpu-pack/dynamic/        bench graphs for a range of batch sizes and for
#                            its ends (bench/gpu_dynamic.py)
#   gpu-pack/run.sh, gpu_bench.py, models.py, check_training.py
#
# Then, on the GPU machine: gpu-pack/run.sh (see there).
#
# Usage: scripts/gpu/pack.sh [--no-conformance]
#   KILN_CONFORMANCE_KEEP=DIR reuses the packages of an earlier
#   `kiln-conformance --mode compile-cuda --keep-packages DIR` run.
#   KILN_PACK_MODELS="softmax mlp ..." packs only these bench graphs and
#   full-size training graphs (all of them: ~100 MB, more than one device
#   call carries; run.sh bench then takes the same KILN_BENCH_MODELS).
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
OUT="$ROOT/gpu-pack"
CONFORMANCE=1
[[ "${1:-}" == "--no-conformance" ]] && CONFORMANCE=0

"$ROOT/scripts/build.sh" >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/packages"
cp "$BUILD/bin/kiln-runner" "$OUT/bin/"
if [[ -x "$BUILD/test/kiln-runtime-gpu-tests" ]]; then
  cp "$BUILD/test/kiln-runtime-gpu-tests" "$BUILD/test/fake_cuda_model.so" \
    "$OUT/bin/"
fi
cp "$BUILD/runtime/libkiln_runtime.so" "$OUT/lib/"
# The runtime's reference kernels use OpenBLAS, and its cpu library calls
# oneDNN (Debian's, which links the OpenCL loader and GNU OpenMP): the GPU
# image lacks them.
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libdnnl.so.2 \
    libOpenCL.so.1 libgomp.so.1; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" "$OUT/lib/"
done

# True when KILN_PACK_MODELS is unset or names `model`.
wanted() {
  [[ -z "${KILN_PACK_MODELS:-}" || " $KILN_PACK_MODELS " == *" $1 "* ]]
}
compile_package() { # graph, package name, extra kiln compile flags...
  wanted "$(basename "$1" .onnx)" || return 0
  "$BUILD/bin/kiln" compile "$1" --target cuda --weights external "${@:3}" \
    -o "$OUT/packages/$2" | tail -1
  rm -f "$OUT/packages/$2"/{wrapper.cpp,*.h}
}
# The bench graphs, then the model families users bring (issue 14:
# depthwise/squeeze-excite networks, a ViT, a GRU tagger, a U-Net).
USER_MODELS="mobilenet_v2 efficientnet_b0 vit_small gru_tagger unet_small"
for model in softmax ln_gelu mlp gpt2_block resnet50 gpt2_block_b1 resnet50_b1 $USER_MODELS; do
  compile_package "$ROOT/test/models/bench-graphs/$model.onnx" "$model"
done
# bfloat16 packages: Kiln's own mixed precision on the f32 graphs
# (kiln compile --precision bf16 --io-precision low, passes/Autocast.cpp):
# GEMMs, convolutions and attention in bf16, reductions, norms and softmax
# in f32, bf16 inputs and outputs as PyTorch's model.to(torch.bfloat16) has;
# the f32 weights cast once, at load time.
BF16_FLAGS=(--precision bf16 --io-precision low)
for model in softmax ln_gelu mlp gpt2_block resnet50 gpt2_block_b1 resnet50_b1 \
    mobilenet_v2 efficientnet_b0 vit_small unet_small; do
  compile_package "$ROOT/test/models/bench-graphs/$model.onnx" "$model-bf16" "${BF16_FLAGS[@]}"
done
# The bf16 convolution networks also channels first
# (KILN_CUDA_CHANNELS_LAST=0; f32 stays channels first anyway): gpu_bench.py
# times these "-nchw" variants next to the default packages.
for model in resnet50 resnet50_b1 mobilenet_v2 efficientnet_b0; do
  KILN_CUDA_CHANNELS_LAST=0 compile_package "$ROOT/test/models/bench-graphs/$model.onnx" \
    "$model-bf16-nchw" "${BF16_FLAGS[@]}"
done
# The depthwise networks with their depthwise convolutions left to cuDNN
# (KILN_CUDA_DEPTHWISE_KERNEL=0), f32 and bf16.
for model in mobilenet_v2 efficientnet_b0; do
  KILN_CUDA_DEPTHWISE_KERNEL=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-cudnn-depthwise"
  KILN_CUDA_DEPTHWISE_KERNEL=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-bf16-cudnn-depthwise" "${BF16_FLAGS[@]}"
  # ... and with their activations apart (KILN_CUDA_DEPTHWISE_FUSION=0).
  KILN_CUDA_DEPTHWISE_FUSION=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-unfused-depthwise"
  KILN_CUDA_DEPTHWISE_FUSION=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-bf16-unfused-depthwise" "${BF16_FLAGS[@]}"
done
# The f32 transformers with the f32 attention kernel bounded to 4 blocks an
# SM (128 registers a thread, spilling: KILN_CUDA_F32_ATTENTION_MIN_BLOCKS=4)
# and with attention written out.
for model in vit_small gpt2_block; do
  KILN_CUDA_F32_ATTENTION_MIN_BLOCKS=4 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-lb4"
  KILN_CUDA_FLASH_ATTENTION=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-written-attention"
done
# The bf16 transformers with attention written out (KILN_CUDA_FLASH_ATTENTION=0).
for model in gpt2_block gpt2_block_b1; do
  KILN_CUDA_FLASH_ATTENTION=0 compile_package \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$model-bf16-written-attention" "${BF16_FLAGS[@]}"
done

# Flash attention (targets/cuda/CudaAttentionKernel.cpp): written-out f16
# attention models, their inputs and the reference executor's output.
ATT="$OUT/attention"
mkdir -p "$ATT"
"$ROOT/.venv/bin/python3" "$ROOT/test/models/attention_cases.py" "$ATT/models" > "$ATT/cases.txt"
while read -r c; do
  "$BUILD/bin/kiln" compile "$ATT/models/$c.onnx" --target cuda -o "$ATT/$c" | tail -1
  grep -q '"a0_attention"' "$ATT/$c/manifest.json" ||
    { echo "pack.sh: $c did not get the flash-attention kernel" >&2; exit 1; }
  # A packed case runs the kernel alone: no split, transpose or copy.
  if [[ -f "$ATT/models/$c.qkv.npy" ]] && [[ "$(grep -c '"when": "run"' "$ATT/$c/manifest.json")" != 1 ]]; then
    echo "pack.sh: $c runs more than the flash-attention kernel" >&2; exit 1
  fi
  INPUTS=()
  for n in q k v qkv; do
    [[ -f "$ATT/models/$c.$n.npy" ]] && INPUTS+=(--input "$n=$ATT/models/$c.$n.npy")
  done
  "$BUILD/bin/kiln" run "$ATT/models/$c.onnx" "${INPUTS[@]}" \
    -o "$ATT/expected-$c" > /dev/null
  mv "$ATT/expected-$c/y.npy" "$ATT/$c.y.npy"
  mv "$ATT/models/$c".*.npy "$ATT/"
  rm -rf "$ATT/expected-$c" "$ATT/$c"/{wrapper.cpp,*.h,kernels.cu}
done < "$ATT/cases.txt"
# GPT-2's attention at the bench size, timed next to PyTorch's SDPA backends.
"$ROOT/.venv/bin/python3" "$ROOT/test/models/attention_cases.py" --bench-model "$ATT/models/bench.onnx"
"$BUILD/bin/kiln" compile "$ATT/models/bench.onnx" --target cuda -o "$ATT/bench" | tail -1
rm -rf "$ATT/bench"/{wrapper.cpp,*.h,kernels.cu}
rm -rf "$ATT/models"

# Concurrency (docs/reliability.md): the model of test/models/concurrent_runs.py
# compiled for cuda, its input and ONNX Runtime's output.
CONC="$(mktemp -d)"
"$ROOT/.venv/bin/python3" - "$CONC" "$ROOT/test/models" <<'PY'
import os, sys
import numpy as np, onnxruntime as ort
sys.path.insert(0, sys.argv[2])
from concurrent_runs import build
d = sys.argv[1]
build(os.path.join(d, "model.onnx"))
x = np.random.default_rng(1).standard_normal((64, 256)).astype(np.float32)
np.save(os.path.join(d, "x.npy"), x)
np.save(os.path.join(d, "want.npy"),
        ort.InferenceSession(os.path.join(d, "model.onnx")).run(None, {"x": x})[0])
PY
mkdir -p "$OUT/concurrent"
cp "$CONC/x.npy" "$CONC/want.npy" "$OUT/concurrent/"
"$BUILD/bin/kiln" compile "$CONC/model.onnx" --target cuda \
  -o "$OUT/concurrent/pkg" | tail -1
rm -rf "$CONC"

# Graph breaks (docs/graph-breaks.md): program packages for cuda, each case
# "model input" with the reference runtime's output as the expectation.
GB="$OUT/graph-breaks"
mkdir -p "$GB"
"$ROOT/.venv/bin/python3" "$ROOT/examples/graph_breaks/make_models.py" "$GB/models"
: > "$GB/cases.txt"
for spec in cond_model:cond_pos cond_model:cond_neg nonzero_model:nonzero_x \
            det_model:det_x masked_model:nonzero_x; do
  model="${spec%%:*}"; input="${spec##*:}"
  [[ -d "$GB/$model" ]] || "$BUILD/bin/kiln" compile "$GB/models/$model.onnx" \
    --target cuda -o "$GB/$model" | tail -1
  "$BUILD/bin/kiln" run "$GB/models/$model.onnx" \
    --input x="$GB/models/$input.npy" -o "$GB/expected/$model-$input" >/dev/null
  echo "$model $input" >> "$GB/cases.txt"
done
find "$GB" \( -name wrapper.cpp -o -name "*.h" -o -name kernels.cu \
  -o -name '*.onnx' \) -delete

# Training (docs/training.md): the small training graphs compiled for cuda
# with --train (SGD, lr 0.05, as their PyTorch references), their input and
# PyTorch's gradients and losses; run.sh checks and times them.
TRAIN="$OUT/train"
FIXTURES="$ROOT/../shared/bench/train"
mkdir -p "$TRAIN"
for model in mlp_small_train gpt2_tiny_train; do
  "$BUILD/bin/kiln" compile "$FIXTURES/$model.onnx" --train --target cuda \
    --lr 0.05 -o "$TRAIN/$model" | tail -1
  cp -r "$FIXTURES/$model.inputs_0.npy" "$FIXTURES/$model.grad" \
    "$FIXTURES/$model.losses.json" "$TRAIN/"
  # Mixed precision on the device (issue 16): bf16, and f16 with dynamic
  # loss scaling; run.sh follows their losses against PyTorch's f32 ones.
  for precision in bf16 f16; do
    "$BUILD/bin/kiln" compile "$FIXTURES/$model.onnx" --train --target cuda \
      --lr 0.05 --precision "$precision" -o "$TRAIN/$model-$precision" | tail -1
  done
done
# The full-size training graphs (graph only: run.sh makes their weights
# with train_weights.py and PyTorch's reference with models.py train-ref).
for model in mlp_train gpt2_block_train; do
  wanted "$model" || continue
  "$BUILD/bin/kiln" compile "$FIXTURES/$model.onnx" --train --target cuda \
    --lr 0.05 -o "$TRAIN/$model" 2>/dev/null | tail -1
  # Mixed precision (issue 16): bf16 compute, f32 master weights.
  "$BUILD/bin/kiln" compile "$FIXTURES/$model.onnx" --train --target cuda \
    --lr 0.05 --precision bf16 -o "$TRAIN/$model-bf16" 2>/dev/null | tail -1
done
# gpt2_block_train in bf16 with its attention written out (no flash
# attention forward and backward: KILN_CUDA_FLASH_ATTENTION=0), the
# comparison for the flash-attention training kernels.
wanted gpt2_block_train && KILN_CUDA_FLASH_ATTENTION=0 "$BUILD/bin/kiln" compile \
  "$FIXTURES/gpt2_block_train.onnx" --train --target cuda --lr 0.05 --precision bf16 \
  -o "$TRAIN/gpt2_block_train-bf16-written-attention" 2>/dev/null | tail -1
# The activation memory budget's plans (issue 16): peak memory and step
# time at 0.5 and 0.25 of the no-recompute plan's saved activations.
for budget in 0.5 0.25; do
  wanted gpt2_block_train || continue
  "$BUILD/bin/kiln" compile "$FIXTURES/gpt2_block_train.onnx" --train --target cuda \
    --lr 0.05 --memory-budget "$budget" -o "$TRAIN/gpt2_block_train-budget$budget" \
    2>/dev/null | tail -1
done
cp "$ROOT/scripts/gpu/train_weights.py" "$OUT/"
find "$TRAIN" \( -name wrapper.cpp -o -name "*.h" -o -name kernels.cu \
  \) -delete
cp "$ROOT/test/models/check_training.py" "$ROOT/test/models/train_vs_pytorch.py" \
  "$ROOT/test/models/attention_cases.py" "$OUT/"

if [[ $CONFORMANCE == 1 ]]; then
  NODE_DIR="$("$ROOT/.venv/bin/python3" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node"))')"
  if [[ -n "${KILN_CONFORMANCE_KEEP:-}" ]]; then
    KEEP="$(mktemp -d)"
    cp -r "$KILN_CONFORMANCE_KEEP"/. "$KEEP"
  else
    KEEP="$(mktemp -d)"
    "$BUILD/bin/kiln-conformance" --node-dir "$NODE_DIR" \
      --expected "$ROOT/test/conformance/expected-compiled-cpu.txt" \
      --mode compile-cuda --keep-packages "$KEEP" | tail -3 || true
  fi
  # Only what running needs: the library, kernels.cubin (and kernels.ptx, its JIT
  # fallback, which manifest.files lists), manifest, weights, data.
  find "$KEEP" \( -name wrapper.cpp -o -name "*.h" -o -name kernels.cu \
    \) -delete
  cp "$ROOT/test/conformance/expected-compiled-cpu.txt" "$OUT/"
  tar -C "$KEEP" -czf "$OUT/conformance.tar.gz" .
  rm -rf "$KEEP"
fi

# A CUDA package used as a library (test/models/package_api): one kernel
# launched alone and the model run through tiny_mlp.h, without kiln::Model.
PA="$OUT/package-api"
mkdir -p "$PA"
"$BUILD/bin/kiln" compile "$ROOT/examples/tiny_mlp.onnx" --target cuda \
  --dim batch=4 -o "$PA/tiny_mlp" | tail -1
"$BUILD/bin/kiln" run "$ROOT/examples/tiny_mlp.onnx" \
  --input "x=$ROOT/examples/tiny_mlp_x.npy" -o "$PA/reference" > /dev/null
cp "$ROOT/examples/tiny_mlp_x.npy" "$PA/"
"${CXX:-c++}" -std=c++17 -O2 -I "$ROOT/test/models/package_api" \
  -I "$ROOT/runtime/include" -I "$PA/tiny_mlp" \
  "$ROOT/test/models/package_api/single_kernel_cuda.cpp" \
  -L "$PA/tiny_mlp" -ltiny_mlp -L "$BUILD/runtime" -lkiln_runtime \
  -Wl,-rpath,'$ORIGIN/tiny_mlp' -o "$PA/single_kernel_cuda"
rm -f "$PA/tiny_mlp"/{wrapper.cpp,kernels.cu}
# A CUDA package whose weights are fills (test/models/fill_weights.py),
# materialised at load time, and the reference runtime's output.
"$ROOT/.venv/bin/python3" "$ROOT/test/models/fill_weights.py" \
  --kiln "$BUILD/bin/kiln" --work "$PA/fill" --target cuda > /dev/null
"$BUILD/bin/kiln" run "$PA/fill/fill_vgg.onnx" --input "x=$PA/fill/x.npy" \
  -o "$PA/fill/reference" > /dev/null

# The custom-op example (examples/custom_ops) compiled for CUDA: its ops'
# CUDA kernels (libmyops_cuda.so, built by nvcc) run on the device; x.npy
# and NumPy's y.npy beside the package.
"$ROOT/.venv/bin/python3" "$ROOT/examples/custom_ops/check_custom_ops.py" \
  --kiln "$BUILD/bin/kiln" --include "$ROOT/runtime/include" \
  --work "$OUT/custom-ops/work" --nvcc /usr/local/cuda/bin/nvcc \
  --cuda-out "$OUT/custom-ops" | tail -1
rm -rf "$OUT/custom-ops/work" "$OUT/custom-ops/pkg"/{wrapper.cpp,kernels.cu}

# The tiny MLP compiled without --dim (one CUDA package for batch 1..64,
# docs/dynamic-shapes.md), inputs at batch 1, 7, 64 and 65 (outside the
# range) and the reference runtime's outputs.
"$BUILD/bin/kiln" compile "$ROOT/examples/tiny_mlp.onnx" --target cuda \
  -o "$PA/tiny_mlp_sized" | tail -1
rm -f "$PA/tiny_mlp_sized"/{wrapper.cpp,kernels.cu}
for b in 1 7 64 65; do
  "$ROOT/.venv/bin/python3" -c "import numpy as n, sys; n.save(sys.argv[1], n.random.default_rng($b).standard_normal(($b, 16)).astype(n.float32))" "$PA/sized_x$b.npy"
  "$BUILD/bin/kiln" run "$ROOT/examples/tiny_mlp.onnx" --input "x=$PA/sized_x$b.npy" \
    -o "$PA/sized_ref$b" > /dev/null
done
# ... and run through kiln::Model with the batch changing from run to run
# (a CUDA graph per size).
"${CXX:-c++}" -std=c++17 -O2 -I "$ROOT/test/models/package_api" \
  -I "$ROOT/runtime/include" \
  "$ROOT/test/models/package_api/sized_graphs_cuda.cpp" \
  -L "$BUILD/runtime" -lkiln_runtime -o "$PA/sized_graphs_cuda"

# The bench graphs with named dynamic dims (bench/dynamic_dims.py), each
# compiled for a range of sizes and for two fixed sizes (bench/gpu_dynamic.py
# compares them): "NAME MODEL AXES MAX SMALL" in dynamic/cases.txt, AXES and
# the sizes comma-separated (batch; batch,seq for gpt2_block's sequence).
DYN="$OUT/dynamic"
mkdir -p "$DYN/models"
while read -r name model axes top small; do
  dimflags=() at_top=() at_small=() axisflags=()
  IFS=, read -ra A <<< "$axes"; IFS=, read -ra T <<< "$top"; IFS=, read -ra S <<< "$small"
  for i in "${!A[@]}"; do
    axisflags+=(--dim "$i=${A[$i]}")
    dimflags+=(--dim "${A[$i]}=1..${T[$i]}")
    at_top+=(--dim "${A[$i]}=${T[$i]}") at_small+=(--dim "${A[$i]}=${S[$i]}")
  done
  "$ROOT/.venv/bin/python3" "$ROOT/bench/dynamic_dims.py" \
    "$ROOT/test/models/bench-graphs/$model.onnx" "$DYN/models/$name.onnx" "${axisflags[@]}"
  for variant in dyn "at-${top//,/x}" "at-${small//,/x}"; do
    case $variant in
      dyn) flags=("${dimflags[@]}") ;;
      "at-${top//,/x}") flags=("${at_top[@]}") ;;
      *) flags=("${at_small[@]}") ;;
    esac
    "$BUILD/bin/kiln" compile "$DYN/models/$name.onnx" --target cuda \
      --weights external "${flags[@]}" -o "$DYN/$name-$variant" | tail -1
    rm -f "$DYN/$name-$variant"/{wrapper.cpp,*.h,kernels.cu}
  done
  echo "$name $model $axes $top $small" >> "$DYN/cases.txt"
done <<'EOF2'
softmax softmax batch 8192 1
ln_gelu ln_gelu batch 16384 1
mlp mlp batch 8192 1
gpt2_block gpt2_block batch 64 1
resnet50 resnet50 batch 64 1
gpt2_seq gpt2_block batch,seq 16,1024 1,128
EOF2
rm -rf "$DYN/models"

# The libraries travel compressed (OpenBLAS alone is 36 MB); run.sh unpacks.
strip --strip-unneeded "$OUT/lib/"*.so* "$OUT/bin/"* 2>/dev/null || true
tar -C "$OUT" -czf "$OUT/lib.tar.gz" lib
rm -rf "$OUT/lib"

cp "$ROOT/scripts/gpu/run.sh" "$ROOT/scripts/gpu/ncu_summary.py" \
  "$ROOT/scripts/gpu/profile_train.py" "$ROOT/bench/gpu_bench.py" \
  "$ROOT/bench/gpu_dynamic.py" "$OUT/"
cp "$ROOT/../shared/bench/models.py" "$OUT/"
du -sh "$OUT"
