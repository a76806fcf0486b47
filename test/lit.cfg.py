# -*- Python -*-
# lit configuration of the cgpt FileCheck tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "CGPT"
# RUN lines use the shell (pipes, loops over models/).
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".yaml"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cgpt_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]

llvm_config.use_default_substitutions()
config.substitutions.append(("%cgpt_src", config.cgpt_src_root))
config.substitutions.append(("%cgpt_obj", config.cgpt_obj_root))
# Real Model Zoo params files and Hugging Face configs, kept in the tree
# (test/Inputs/modelzoo, test/Inputs/hf) so
# the suite runs on a clean clone.
config.substitutions.append(("%modelzoo",
                             os.path.join(config.cgpt_src_root, "test",
                                          "Inputs", "modelzoo")))
config.substitutions.append(("%hf",
                             os.path.join(config.cgpt_src_root, "test",
                                          "Inputs", "hf")))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["cgpt-opt", "cgpt-run", "cgpt-mesh-timing-check",
                                    "cgpt-elementwise-values",
                                    "cgpt-published-programs"],
                                   [config.cgpt_tools_dir])
# The tools speak English whatever the machine's locale.
config.environment["LC_ALL"] = "C"
# Sanitizer builds (docs/robustness.md): Debian's MLIR archives are not
# instrumented, so LLVM's allocators must not poison memory they hand to
# them (allow_user_poisoning=0). A sanitizer report aborts, so that even a
# `not cgpt-run` line fails on it. The caller's options win.
config.environment["ASAN_OPTIONS"] = os.environ.get(
    "ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=0:abort_on_error=1")
config.environment["UBSAN_OPTIONS"] = os.environ.get(
    "UBSAN_OPTIONS", "abort_on_error=1:print_stacktrace=1")

# A permission test must hold when the suite runs as root (as CI does): root
# reads any file, so `%unprivileged` runs a command as nobody there.
import shutil
if os.geteuid() == 0 and shutil.which("setpriv"):
    config.substitutions.append(
        ("%unprivileged", "setpriv --reuid=65534 --regid=65534 --clear-groups"))
else:
    config.substitutions.append(("%unprivileged", ""))

# The PyTorch reference checks (test/reference) need Debian's python3-torch,
# python3-numpy and python3-yaml. CMake may have found another Python (a
# pyenv one, say), so Debian's is tried too.
import subprocess

torch_python = None
for candidate in (config.python_executable, "/usr/bin/python3"):
    try:
        subprocess.run([candidate, "-c", "import torch, numpy, yaml"],
                       check=True, capture_output=True, timeout=120)
        torch_python = candidate
        break
    except (OSError, subprocess.SubprocessError):
        pass
if torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
else:
    lit_config.note("python3-torch is missing: the PyTorch reference checks "
                    "in test/reference are skipped (scripts/setup.sh "
                    "installs it)")

# The Python package's tests (test/python) need the package built
# (CGPT_PYTHON, off in the sanitized build) and a Python of the same version
# with Debian's python3-pytest and python3-jsonschema: the one CMake found,
# else Debian's.
if config.cgpt_python:
    package_dir = os.path.join(config.cgpt_obj_root, "python")
    for candidate in (config.python_executable, "/usr/bin/python3"):
        try:
            subprocess.run([candidate, "-c", "import pytest, jsonschema, cgpt"],
                           check=True, capture_output=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=package_dir))
            config.available_features.add("python-package")
            config.substitutions.append(("%package_python", candidate))
            config.environment["PYTHONPATH"] = package_dir
            break
        except (OSError, subprocess.SubprocessError):
            pass
    else:
        lit_config.note("the cgpt package does not import in a Python with "
                        "pytest and jsonschema: test/python is skipped "
                        "(scripts/setup.sh installs python3-pytest and "
                        "python3-jsonschema)")

# The format check (test/format.test) needs the clang-format the tree is
# formatted with: the major version decides line breaks.
if shutil.which("clang-format-19"):
    config.available_features.add("clang-format")
else:
    lit_config.note("clang-format-19 is missing: test/format.test is skipped "
                    "(scripts/setup.sh installs it)")

# The timing table's cases that the runs over more workers than cores
# repeat (mesh-parallel.test, mesh-mpi.test): the short case or cases of
# each kernel program. Each simulated cycle is a round of messages there,
# and the long cases repeat the same exchanges for more cycles.
config.substitutions.append(
    ("%{short_mesh_cases}",
     "'^(matmul, (square tile|one token per core|wide row|long row chain|"
     "one core|f32)|weight gradient, (square|tall|wide)|"
     "attention (forward, 4 x 4|backward, 8 x 8)|layer norm|softmax|GELU|"
     "residual|bias|embedding)'"))
# Fewer still over MPI processes, whose waits spin: with more processes than
# free cores, each cycle can cost a time slice (mesh-mpi.test).
config.substitutions.append(
    ("%{shortest_mesh_cases}",
     "'^(matmul, (square tile|long row chain)|weight gradient, "
     "(square|wide)|attention forward, 4 x 4|layer norm, square|softmax|"
     "GELU, square|residual|bias|embedding lookup)'"))

# The cycle-level run over MPI processes (test/reference/mesh-mpi.test):
# built with MPI, and Open MPI's mpirun to start the job. Root may run it
# (CI runs as root), and more processes than cores.
import shutil

if config.cgpt_enable_mpi and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "env OMPI_ALLOW_RUN_AS_ROOT=1 "
         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 "
         "mpirun --oversubscribe"))
elif config.cgpt_enable_mpi:
    lit_config.note("mpirun is missing: the MPI checks are skipped "
                    "(scripts/setup.sh installs openmpi-bin)")
