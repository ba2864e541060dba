# -*- Python -*-
#===- lit.cfg.py - lit configuration of Kiln's lit tests -----------------===#
#
# Runs the .mlir and .test files under test/lit (ir/, onnx/, cli/) as shell
# tests. kiln-opt and kiln come from the build's bin/, FileCheck and not from
# LLVM. Substitutions: %python, %node_tests (the ONNX backend node tests),
# %bench (../shared/bench), %examples, %kiln_src, %mlir_include (MLIR's .td
# files). Features: `kiln` when the kiln tool is built, `onnx-node-tests`
# when the node tests are found.
#
#===----------------------------------------------------------------------===#

import os

import lit.formats
import lit.util

config.name = "Kiln"
config.test_format = lit.formats.ShTest(not lit.util.which("bash") is None)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "lit.site.cfg.py.in"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "lit_exec_root",
                                os.path.join(config.kiln_obj_root, "test",
                                             "lit"))

# Tools: the build's bin/ first, then LLVM's (FileCheck, not).
path = [config.kiln_tools_dir, config.llvm_tools_dir,
        config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(p for p in path if p)
for var in ["HOME", "PYTHONPATH", "LD_LIBRARY_PATH", "TMPDIR"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%node_tests", config.onnx_node_tests))
config.substitutions.append(("%bench", config.bench_dir))
config.substitutions.append(("%examples", config.examples_dir))
config.substitutions.append(("%kiln_src", config.kiln_src_root))
config.substitutions.append(
    ("%mlir_include",
     os.path.normpath(os.path.join(config.llvm_tools_dir, "..", "include"))))

if os.path.exists(os.path.join(config.kiln_tools_dir, "kiln")):
    config.available_features.add("kiln")
if getattr(config, "have_nvrtc", False):
    config.available_features.add("nvrtc")
if config.onnx_node_tests and os.path.isdir(config.onnx_node_tests):
    config.available_features.add("onnx-node-tests")
