"""Writes malformed safetensors files for safetensors.test into argv[1]."""
import json
import os
import struct
import sys


def write(name, header, data=b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open(os.path.join(sys.argv[1], name + ".safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text) if length is None else length))
        f.write(text + data)


def tensor(dtype="F32", shape=(2, 2), offsets=(0, 16)):
    return {"wte": {"dtype": dtype, "shape": list(shape),
                    "data_offsets": list(offsets)}}


write("huge-header", b"{}", length=2**64 - 1)
write("not-json", b"{not json")
write("not-object", b"[1, 2]")
write("f16", tensor(dtype="F16"), bytes(16))
write("past-end", tensor(offsets=(0, 64)), bytes(16))
write("short-data", tensor(shape=(2, 3)), bytes(16))
write("negative-shape", tensor(shape=(-2, 2)), bytes(16))
write("overflow-shape", tensor(shape=(2**40, 2**40)), bytes(16))
write("missing", {"wpe": {"dtype": "F32", "shape": [1],
                          "data_offsets": [0, 4]}}, bytes(4))
write("duplicate-name",
      b'{"wte": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
      b'"wte": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
      bytes(8))
write("overlap", {"wte": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                  "wpe": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
      bytes(12))
