# -*- Python -*-
# lit configuration of the cgpt C++ unit tests (GoogleTest).

import os

import lit.formats

config.name = "CGPT-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.cgpt_obj_root, "test", "Unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
# Unit tests read models/ relative to the source tree.
config.environment["CGPT_SOURCE_DIR"] = config.cgpt_src_root
# As in ../lit.cfg.py, for sanitizer builds.
config.environment["ASAN_OPTIONS"] = os.environ.get(
    "ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=0:abort_on_error=1")
config.environment["UBSAN_OPTIONS"] = os.environ.get(
    "UBSAN_OPTIONS", "abort_on_error=1:print_stacktrace=1")
