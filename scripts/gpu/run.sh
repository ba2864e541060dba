#!/usr/bin/env bash
#===- scripts/gpu/run.sh - Tests and benchmark on the GPU machine --------===#
#
# Runs from the gpu-pack/ folder that scripts/gpu/pack.sh made, on a machine
# with an NVIDIA GPU, PyTorch and numpy (the H200 machine):
#   1. the GPU tests (kiln-runtime-gpu-tests: the ctest `gpu` label), and
#      the graph-break examples compiled for cuda (program packages: eager
#      ops on the CPU between CUDA graphs) against the reference outputs;
#      attention: written-out f16 attention (test/models/attention_cases.py)
#      run by the flash-attention kernel against `kiln run`'s outputs;
#   2. the node-test conformance in compiled-cuda mode: every packaged case
#      run with kiln-runner and compared with its expected outputs; prints
#      the passes and their share of the compiled-cpu passes;
#   3. the benchmark (gpu_bench.py): Kiln next to PyTorch eager and
#      torch.compile on the same GPU in the same run.
# Results also go to $OUT (or ./results) as files.
#
#   4. training: the small training packages' 20 SGD steps and gradients
#      against PyTorch's (check_training.py), and their step times;
#      train-bench: the full-size mlp_train and gpt2_block_train against
#      PyTorch's train-ref (same weights, on cuda) and timed next to
#      `models.py baseline` (eager, torch.compile).
#      profile: one step of each under ncu (Kiln's kernels) and
#      torch.profiler (torch.compile's), longest kernels first.
#   5. reliability (docs/reliability.md): concurrency, one cuda package run
#      from 8 threads x 1,000 runs with bit-identical outputs; sanitize,
#      compute-sanitizer memcheck and racecheck over the GPU tests.
#      sanitize-conformance: memcheck over the node-test cases matching
#      KILN_SANITIZE_FILTER (default "gru lstm rnn").
#   package-api: a CUDA package's kernel launched alone and its model run
#      through its header (test/models/package_api/single_kernel_cuda.cpp).
#   custom-ops: the custom-op example's CUDA package (its ops' CUDA kernels
#      on the device) against NumPy, then timed with CUDA graphs.
#   dynamic: the bench graphs compiled for a range of batch sizes, against
#      PyTorch at three sizes and timed against fixed-size packages.
# Usage: gpu-pack/run.sh [tests] [package-api] [custom-ops] [dynamic] [breaks] [attention] [train] [train-bench]
#   [profile] [conformance] [sanitize-conformance] [bench] [concurrency]
#   [sanitize]   (default: all but profile and sanitize-conformance)
#===----------------------------------------------------------------------===#
set -uo pipefail
PACK="$(cd "$(dirname "$0")" && pwd)"
RESULTS="${OUT:-$PACK/results}"
mkdir -p "$RESULTS"
[[ -d "$PACK/lib" ]] || tar -C "$PACK" -xzf "$PACK/lib.tar.gz"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# cuDNN (kiln_cuda_conv) comes with PyTorch's wheels (nvidia-cudnn-cu*): put
# its folder on the loader path; harmless when it is not installed.
CUDNN_LIB="$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null)" || CUDNN_LIB=""
if [[ -n "$CUDNN_LIB" && -d "$CUDNN_LIB" ]]; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$CUDNN_LIB"
  echo "cuDNN from $CUDNN_LIB"
fi
STEPS="${*:-tests package-api custom-ops dynamic breaks attention train train-bench conformance bench concurrency sanitize}"
STATUS=0

if [[ " $STEPS " == *" tests "* ]]; then
  echo "== GPU tests (ctest label gpu)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  if [[ -x "$PACK/bin/kiln-runtime-gpu-tests" ]]; then
    "$PACK/bin/kiln-runtime-gpu-tests" 2>&1 | tail -5 || STATUS=1
  else
    echo "kiln-runtime-gpu-tests not packed"; STATUS=1
  fi
fi

if [[ " $STEPS " == *" package-api "* && -x "$PACK/package-api/single_kernel_cuda" ]]; then
  echo "== a CUDA package as a library (test/models/package_api/single_kernel_cuda.cpp)"
  PA="$PACK/package-api"
  "$PA/single_kernel_cuda" "$PA/tiny_mlp" "$PA/tiny_mlp_x.npy" \
    "$PA/reference/y.npy" || STATUS=1
  echo "== a CUDA package for batch 1..64 (tiny MLP, no --dim) vs kiln run"
  for b in 1 7 64; do
    "$PACK/bin/kiln-runner" "$PA/tiny_mlp_sized" --input x="$PA/sized_x$b.npy" \
      --expect y="$PA/sized_ref$b/y.npy" > /dev/null && echo "PASS batch $b" ||
      { echo "FAIL batch $b"; STATUS=1; }
  done
  # The batch changing from run to run, CUDA graphs on: a graph per size.
  "$PA/sized_graphs_cuda" "$PA/tiny_mlp_sized" \
    "$PA/sized_x1.npy" "$PA/sized_ref1/y.npy" "$PA/sized_x7.npy" "$PA/sized_ref7/y.npy" \
    "$PA/sized_x64.npy" "$PA/sized_ref64/y.npy" | tail -3 || STATUS=1
  # Outside the range: refused with a message naming the dimension.
  if out=$("$PACK/bin/kiln-runner" "$PA/tiny_mlp_sized" --input x="$PA/sized_x65.npy" 2>&1); then
    echo "FAIL batch 65 ran"; STATUS=1
  elif grep -q "('batch') is 65" <<< "$out"; then
    echo "PASS batch 65 refused: $(grep -o "input 'x'.*" <<< "$out" | head -1)"
  else
    echo "FAIL batch 65: $out"; STATUS=1
  fi
  echo "== a CUDA package with fill weights (test/models/fill_weights.py) vs kiln run"
  "$PACK/bin/kiln-runner" "$PA/fill/pkg" --input x="$PA/fill/x.npy" \
    --expect y="$PA/fill/reference/y.npy" || STATUS=1
fi

if [[ " $STEPS " == *" custom-ops "* && -d "$PACK/custom-ops/pkg" ]]; then
  echo "== custom ops with CUDA kernels (examples/custom_ops) vs NumPy"
  CO="$PACK/custom-ops"
  if "$PACK/bin/kiln-runner" "$CO/pkg" --input x="$CO/x.npy" --expect y="$CO/y.npy" \
      --profile --iterations 20 > "$RESULTS/custom-ops.txt" 2>&1; then
    echo "PASS custom ops on the device: $(tr '\n' ' ' < "$RESULTS/custom-ops.txt")"
  else
    echo "FAIL custom ops: $(tr '\n' ' ' < "$RESULTS/custom-ops.txt")"; STATUS=1
  fi
fi

if [[ " $STEPS " == *" dynamic "* && -f "$PACK/dynamic/cases.txt" ]]; then
  echo "== bench graphs for a range of batch sizes vs PyTorch and vs fixed sizes (gpu_dynamic.py)"
  python3 "$PACK/gpu_dynamic.py" --pack "$PACK" | tee "$RESULTS/dynamic.txt" || STATUS=1
fi

if [[ " $STEPS " == *" breaks "* && -f "$PACK/graph-breaks/cases.txt" ]]; then
  echo "== graph breaks on CUDA (examples/graph_breaks, docs/graph-breaks.md)"
  GB="$PACK/graph-breaks"
  while read -r model input; do
    if "$PACK/bin/kiln-runner" "$GB/$model" --input x="$GB/models/$input.npy" \
        --expect y="$GB/expected/$model-$input/y.npy" --profile \
        --iterations 20 > "$RESULTS/breaks-$model-$input.txt" 2>&1; then
      echo "PASS $model ($input): $(tr '\n' ' ' < "$RESULTS/breaks-$model-$input.txt")"
    else
      echo "FAIL $model ($input): $(tr '\n' ' ' < "$RESULTS/breaks-$model-$input.txt")"
      STATUS=1
    fi
  done < "$GB/cases.txt"
fi
if [[ " $STEPS " == *" attention "* && -f "$PACK/attention/cases.txt" ]]; then
  echo "== flash attention on CUDA (targets/cuda/CudaAttentionKernel.cpp) vs kiln run"
  A="$PACK/attention"
  while read -r c; do
    # Against the float64 result, next to the reference executor's output
    # (attention_cases.py --compare), then timed.
    mkdir -p "$RESULTS/attention-$c"
    INPUTS=()
    for n in q k v qkv; do
      [[ -f "$A/$c.$n.npy" ]] && INPUTS+=(--input "$n=$A/$c.$n.npy")
    done
    if "$PACK/bin/kiln-runner" "$A/$c" "${INPUTS[@]}" \
        --output-dir "$RESULTS/attention-$c" --iterations 20 \
        > "$RESULTS/attention-$c.txt" 2>&1 &&
       python3 "$PACK/attention_cases.py" --compare "$RESULTS/attention-$c/y.npy" \
        "$A/$c.y.npy" "$A/$c.exact.npy" >> "$RESULTS/attention-$c.txt" 2>&1; then
      echo "PASS $c: $(tail -2 "$RESULTS/attention-$c.txt" | tr '\n' ' ')"
    else
      echo "FAIL $c: $(tr '\n' ' ' < "$RESULTS/attention-$c.txt")"
      STATUS=1
    fi
  done < "$A/cases.txt"
  if [[ -d "$A/bench" ]]; then
    echo "-- GPT-2's attention (f16 [16, 12, 1024, 64], causal, q/k/v packed): Kiln vs PyTorch SDPA"
    python3 "$PACK/attention_cases.py" --bench-input "$RESULTS/attention-bench-qkv.npy"
    "$PACK/bin/kiln-runner" "$A/bench" --input qkv="$RESULTS/attention-bench-qkv.npy" \
      --iterations 50 --no-cuda-graphs 2>&1 | tail -1 | sed 's/^/kiln packed_attention: /'
    python3 "$PACK/attention_cases.py" --time-torch 2>&1
    rm -f "$RESULTS/attention-bench-qkv.npy"
  fi
fi

if [[ " $STEPS " == *" train "* && -d "$PACK/train" ]]; then
  echo "== training on CUDA (docs/training.md): 20 SGD steps vs PyTorch"
  for model in mlp_small_train gpt2_tiny_train; do
    T="$PACK/train"
    if "$PACK/bin/kiln-runner" "$T/$model" --input inputs_0="$T/$model.inputs_0.npy" \
        --steps 20 --losses "$RESULTS/$model.losses.json" \
        --gradients "$RESULTS/$model.grad" > "$RESULTS/$model.steps.txt" 2>&1 &&
       python3 "$PACK/check_training.py" --losses "$RESULTS/$model.losses.json" \
        --gradients "$RESULTS/$model.grad" --reference "$T/$model"; then
      echo "PASS $model"
    else
      echo "FAIL $model"; cat "$RESULTS/$model.steps.txt"; STATUS=1
    fi
    "$PACK/bin/kiln-runner" "$T/$model" --input inputs_0="$T/$model.inputs_0.npy" \
      --steps 0 --warmup 10 --iterations 100 | tail -1
    # Mixed precision (bf16; f16 with loss scaling): 20 steps' losses within
    # 1e-3 of PyTorch's f32 ones (CPU: 5.3e-5 and 6.5e-6, docs/training.md).
    for variant in "$T/$model"-bf16 "$T/$model"-f16; do
      [[ -d "$variant" ]] || continue
      name="$(basename "$variant")"
      if "$PACK/bin/kiln-runner" "$variant" --input inputs_0="$T/$model.inputs_0.npy" \
          --steps 20 --losses "$RESULTS/$name.losses.json" > "$RESULTS/$name.steps.txt" 2>&1 &&
         python3 -c "import json,sys; a=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2]))['losses']; d=max(abs(x - y) / abs(y) for x, y in zip(a, r)); print('max relative loss difference', d); sys.exit(0 if d < 1e-3 else 1)" \
           "$RESULTS/$name.losses.json" "$T/$model.losses.json"; then
        echo "PASS $name"
      else
        echo "FAIL $name"; cat "$RESULTS/$name.steps.txt"; STATUS=1
      fi
    done
  done
fi

if [[ " $STEPS " == *" train-bench "* && -d "$PACK/train/mlp_train" ]]; then
  echo "== training, full size, on CUDA: Kiln vs PyTorch (one run, float32, TF32 off)"
  REF="$RESULTS/train-ref"
  mkdir -p "$REF"
  for model in mlp_train gpt2_block_train; do
    python3 "$PACK/train_weights.py" "$PACK" "$model" "$REF/$model.safetensors"
    python3 "$PACK/models.py" train-ref "$REF" "$model" --steps 20 --lr 0.05 --device cuda
    "$PACK/bin/kiln-runner" "$PACK/train/$model" --load-weights "$REF/$model.safetensors" \
      --input inputs_0="$REF/$model.inputs_0.npy" --steps 20 \
      --losses "$RESULTS/$model.losses.json" --gradients "$RESULTS/$model.grad" \
      > "$RESULTS/$model.steps.txt" 2>&1 || { cat "$RESULTS/$model.steps.txt"; STATUS=1; }
    python3 "$PACK/check_training.py" --losses "$RESULTS/$model.losses.json" \
      --gradients "$RESULTS/$model.grad" --reference "$REF/$model" || STATUS=1
    "$PACK/bin/kiln-runner" "$PACK/train/$model" --load-weights "$REF/$model.safetensors" \
      --input inputs_0="$REF/$model.inputs_0.npy" --steps 0 --warmup 5 --iterations 30 | tail -1
    echo "($model with KILN_CUBLASLT_AUTOTUNE=1: cuBLASLt algorithms autotuned)"
    KILN_CUBLASLT_AUTOTUNE=1 "$PACK/bin/kiln-runner" "$PACK/train/$model" \
      --load-weights "$REF/$model.safetensors" --input inputs_0="$REF/$model.inputs_0.npy" \
      --steps 0 --warmup 5 --iterations 30 | tail -1
    # The same graph compiled with --precision bf16 and with memory
    # budgets (pack.sh), if packed: 20 steps' losses, then the step time
    # and peak memory.
    for variant in "$PACK/train/$model"-*; do
      [[ -d "$variant" ]] || continue
      echo "-- $(basename "$variant")"
      "$PACK/bin/kiln-runner" "$variant" --load-weights "$REF/$model.safetensors" \
        --input inputs_0="$REF/$model.inputs_0.npy" --steps 20 \
        --losses "$RESULTS/$(basename "$variant").losses.json" > /dev/null || STATUS=1
      python3 -c "import json,sys; a=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2])); r=r['losses'] if isinstance(r, dict) else r; print('losses vs f32 reference: max relative', max(abs(x - y) / abs(y) for x, y in zip(a, r)))" \
        "$RESULTS/$(basename "$variant").losses.json" "$REF/$model.losses.json" || true
      "$PACK/bin/kiln-runner" "$variant" --load-weights "$REF/$model.safetensors" \
        --input inputs_0="$REF/$model.inputs_0.npy" --steps 0 --warmup 5 --iterations 30 | tail -1
    done
  done
  python3 "$PACK/models.py" baseline mlp_train gpt2_block_train --modes eager,compile
  python3 "$PACK/models.py" baseline mlp_train gpt2_block_train --modes eager,compile --dtype bfloat16
fi

if [[ " $STEPS " == *" profile "* && -d "$PACK/train/mlp_train" ]]; then
  echo "== profile: one train step's kernels, Kiln (ncu) and torch.compile (torch.profiler)"
  REF="$RESULTS/train-ref"
  mkdir -p "$REF"
  # KILN_PROFILE_VARIANT=-bf16 profiles the bf16 packages (NAME-bf16) next
  # to torch.compile in bfloat16.
  VARIANT="${KILN_PROFILE_VARIANT:-}"
  TORCH_DTYPE=float32
  [[ "$VARIANT" == -bf16* ]] && TORCH_DTYPE=bfloat16
  for model in ${KILN_PROFILE_MODELS:-mlp_train gpt2_block_train}; do
    [[ -f "$REF/$model.safetensors" ]] ||
      python3 "$PACK/train_weights.py" "$PACK" "$model" "$REF/$model.safetensors"
    [[ -f "$REF/$model.inputs_0.npy" ]] ||
      python3 "$PACK/models.py" train-ref "$REF" "$model" --steps 1 --lr 0.05 --device cuda
    # One warm-up step and one timed step: two steps' kernels.
    ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      "$PACK/bin/kiln-runner" "$PACK/train/$model$VARIANT" --load-weights "$REF/$model.safetensors" \
      --input inputs_0="$REF/$model.inputs_0.npy" --steps 0 --warmup 1 --iterations 1 \
      > "$RESULTS/$model$VARIANT.ncu.csv" 2> "$RESULTS/$model$VARIANT.ncu.err"
    echo "-- kiln $model$VARIANT"
    python3 "$PACK/ncu_summary.py" "$RESULTS/$model$VARIANT.ncu.csv" --steps 2 --top 20
    python3 "$PACK/profile_train.py" "$model" --mode compile --top 20 --dtype "$TORCH_DTYPE"
  done
fi

if [[ " $STEPS " == *" concurrency "* && -d "$PACK/concurrent" ]]; then
  echo "== concurrency: one cuda package, 8 threads x 1000 runs"
  "$PACK/bin/kiln-runner" "$PACK/concurrent/pkg" \
    --input "x=$PACK/concurrent/x.npy" --expect "y=$PACK/concurrent/want.npy" \
    --threads 8 --iterations 1000 | tee "$RESULTS/concurrency.json" || STATUS=1
fi

if [[ " $STEPS " == *" sanitize "* && -x "$PACK/bin/kiln-runtime-gpu-tests" ]]; then
  SAN=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool over the GPU tests"
    # API errors are not reported: the GPU tests make one failing launch on
    # purpose (a 4096-thread block, to check the error message) and check
    # every CUDA call's status themselves; memcheck hunts memory errors.
    "$SAN" --tool "$tool" --report-api-errors no --error-exitcode 9 \
      "$PACK/bin/kiln-runtime-gpu-tests" > "$RESULTS/sanitize-$tool.txt" 2>&1
    rc=$?
    tail -3 "$RESULTS/sanitize-$tool.txt"
    # The first findings (each one names the kernel, the access and the
    # host stack), so the reply carries them.
    grep -m 40 -E '^========= +(Invalid|Program hit|Race|Error|at |by |Host|  )' \
      "$RESULTS/sanitize-$tool.txt" | head -40
    [[ $rc -eq 0 ]] || { echo "$tool: exit $rc"; STATUS=1; }
  done
fi

if [[ " $STEPS " == *" conformance "* && -f "$PACK/conformance.tar.gz" ]]; then
  echo "== node-test conformance, compiled-cuda"
  WORK="$(mktemp -d)"
  tar -C "$WORK" -xzf "$PACK/conformance.tar.gz"
  # One kiln-runner per data set, 8 at a time; a case passes when all its
  # data sets do. Report: outcome, case, message.
  export RUNNER="$PACK/bin/kiln-runner"
  ls "$WORK" | sort | xargs -P 8 -I{} bash -c '
    cd "$0/{}" || exit 0
    msg=""; ok=1
    for set in set*/; do
      if ! out=$(timeout 120 "$RUNNER" package $(cat "$set/args") 2>&1); then
        ok=0; msg=$(echo "$out" | tr "\n\t" "  " | cut -c1-300); break
      fi
    done
    if [[ $ok == 1 ]]; then printf "P\t{}\t\n"; else printf "F\t{}\t%s\n" "$msg"; fi
  ' "$WORK" > "$RESULTS/conformance-cuda-report.tsv"
  passed=$(grep -c '^P' "$RESULTS/conformance-cuda-report.tsv")
  failed=$(grep -c '^F' "$RESULTS/conformance-cuda-report.tsv")
  cpu=$(grep -vc '^#' "$PACK/expected-compiled-cpu.txt")
  cpuPassed=$(grep -v '^#' "$PACK/expected-compiled-cpu.txt" | sort > "$WORK/cpu.txt"; \
    grep '^P' "$RESULTS/conformance-cuda-report.tsv" | cut -f2 | sort | comm -12 - "$WORK/cpu.txt" | wc -l)
  echo "conformance (compiled-cuda): $passed passed, $failed failed, of $((passed + failed)) packaged cases"
  echo "  $cpuPassed of the $cpu compiled-cpu passes pass on CUDA ($(awk -v a="$cpuPassed" -v b="$cpu" 'BEGIN{printf "%.1f", 100*a/b}')%)"
  grep '^F' "$RESULTS/conformance-cuda-report.tsv" | head -20
  rm -rf "$WORK"
fi

if [[ " $STEPS " == *" sanitize-conformance "* && -f "$PACK/conformance.tar.gz" ]]; then
  # compute-sanitizer memcheck over the node-test cases whose names contain
  # one of KILN_SANITIZE_FILTER's words (default: the recurrent ops), every
  # data set, each launch direct (no CUDA graph).
  FILTER="${KILN_SANITIZE_FILTER:-gru lstm rnn}"
  echo "== compute-sanitizer memcheck over the conformance cases matching: $FILTER"
  WORK="$(mktemp -d)"
  tar -C "$WORK" -xzf "$PACK/conformance.tar.gz"
  sets=0; bad=0
  for c in $(for f in $FILTER; do ls -d "$WORK"/*"$f"* 2>/dev/null; done | sort -u); do
    for set in "$c"/set*/; do
      sets=$((sets + 1))
      log="$RESULTS/memcheck-$(basename "$c")-$(basename "$set").txt"
      if ! (cd "$c" && compute-sanitizer --tool memcheck --error-exitcode 7 \
          "$PACK/bin/kiln-runner" package $(cat "$set/args") --no-cuda-graphs \
          > "$log" 2>&1); then
        echo "FAIL $(basename "$c") $(basename "$set"): $(grep -m1 -E 'ERROR SUMMARY|error' "$log")"
        bad=$((bad + 1)); STATUS=1
      fi
    done
  done
  echo "memcheck: $sets data sets, $bad with errors or mismatches"
  rm -rf "$WORK"
fi

if [[ " $STEPS " == *" bench "* ]]; then
  echo "== benchmark: Kiln vs PyTorch eager and torch.compile"
  # KILN_BENCH_MODELS="softmax ln_gelu" limits the models; KILN_BENCH_PROFILE=1
  # adds each package's longest kernels (ncu); KILN_BENCH_MEMCHECK=1 runs each
  # package once under compute-sanitizer memcheck.
  python3 "$PACK/gpu_bench.py" --pack "$PACK" --json "$RESULTS/bench.jsonl" \
    ${KILN_BENCH_MODELS:+--models $KILN_BENCH_MODELS} ${KILN_BENCH_PROFILE:+--profile} || STATUS=1
fi
exit $STATUS
