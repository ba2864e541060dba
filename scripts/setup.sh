#!/usr/bin/env bash
#===- scripts/setup.sh - Install what Kiln needs on Debian 12 -------------===#
#
# Installs the Debian packages and the Python packages (into .venv) that
# building and testing Kiln need, skipping whatever is already there.
# DEVELOPERS.md lists them, among them clang and its sanitizer and libFuzzer
# runtime, which the sanitizer job of scripts/test.sh needs
# (scripts/fuzz/build.sh, docs/reliability.md). Safe to run again. (--fuzz,
# which once added clang, is still accepted and changes nothing.)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

debs=(cmake ninja-build g++ llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
      libonnx-dev libprotobuf-dev protobuf-compiler nlohmann-json3-dev
      libcli11-dev catch2 libopenblas-dev libdnnl-dev python3 python3-venv ccache graphviz
      clang libclang-rt-14-dev)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
fi

venv="$root/.venv"
if [ ! -x "$venv/bin/python3" ]; then
  echo "setup: creating $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python3" -c "import onnx, onnxruntime, numpy, lit; assert onnx.__version__ == '1.22.0'" 2>/dev/null; then
  echo "setup: installing Python packages into $venv"
  "$venv/bin/python3" -m pip install -q --upgrade pip
  "$venv/bin/python3" -m pip install -q -r "$root/scripts/requirements.txt"
fi
