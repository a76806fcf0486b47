"""cgpt from Python: compile a GPT training step for a wafer-scale cluster,
simulate it, and sweep, with the same C++ libraries as cgpt-run.

    import cgpt
    model = cgpt.Model.from_file("models/cerebras-gpt-1.3b.yaml")
    report = cgpt.simulate(model, target="wse3", num_csx=4)
    report["simulation"]["samples_per_second"]
    rows = cgpt.sweep(model, target=["wse2", "wse3"], num_csx="1-4")

docs/python.md is the manual; the report's keys are docs/tools/cgpt-run.md's.
"""

import atexit
import copy
import hashlib
import json
import os
import shutil
import tempfile
import warnings

from . import _cgpt

__all__ = [
    "CgptError",
    "CgptWarning",
    "Model",
    "builtin_targets",
    "compile",
    "compile_report",
    "simulate",
    "summary",
    "sweep",
    "version",
]

_LEVELS = ("transformer", "dataflow", "wafer")


class CgptError(Exception):
    """cgpt refused the model or the options: the message is its
    diagnostics, as cgpt-run prints them (file, line, limit and value)."""


class CgptWarning(UserWarning):
    """A warning cgpt said while reading, compiling or running."""


class Model:
    """A model description: a Cerebras Model Zoo params YAML or a Hugging
    Face config.json, held as its text under a name. The name's extension
    says which (.yaml, .yml or .json); diagnostics name it, and the model's
    name derives from it, as from a file's path."""

    def __init__(self, text, name):
        if not isinstance(text, str):
            raise TypeError("Model text must be str, not %s" % type(text).__name__)
        self.text = text
        self.name = os.fspath(name)

    @classmethod
    def from_file(cls, path):
        """Reads a model file."""
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            return cls(f.read(), path)

    @classmethod
    def from_string(cls, text, format="yaml", name=None):
        """A model from its text: format "yaml" (Model Zoo) or "json"
        (Hugging Face config.json)."""
        if format not in ("yaml", "json"):
            raise ValueError("format is %r; allowed: 'yaml', 'json'" % (format,))
        return cls(text, name or "model." + format)

    @classmethod
    def from_dict(cls, data, format=None, name=None):
        """A model from a dict in Model Zoo form ({"model": ..., "train_input":
        ...}) or Hugging Face form ({"model_type": ...}); `format` ("yaml" or
        "json") is guessed from "model_type" when not given."""
        if not isinstance(data, dict):
            raise TypeError("from_dict takes a dict, not %s" % type(data).__name__)
        if format is None:
            format = "json" if "model_type" in data else "yaml"
        # JSON is YAML too: the Model Zoo reader reads this text as it
        # reads a params file.
        return cls.from_string(json.dumps(data, indent=2), format, name)

    @property
    def format(self):
        """"json" for a config.json, else "yaml"."""
        return "json" if self.name.lower().endswith(".json") else "yaml"

    def to_dict(self):
        """The model's keys as a dict (plain YAML scalars read as Model Zoo's
        PyYAML reads them: True, 1e-5, null)."""
        if self.format == "json":
            return json.loads(self.text)
        outcome = _cgpt.yaml_to_json(self.name, self.text)
        if not outcome.ok:
            raise CgptError(outcome.diagnostics)
        return json.loads(outcome.output)

    def override(self, overrides=None, **keys):
        """A copy with keys replaced: `overrides` maps dotted paths
        ("model.hidden_size", "train_input.batch_size") to values, and
        keyword arguments name top-level keys (a config.json's
        `n_layer=12`). A missing section is created; None removes a key."""
        data = copy.deepcopy(self.to_dict())
        for path, value in list((overrides or {}).items()) + list(keys.items()):
            parts = path.split(".")
            node = data
            for part in parts[:-1]:
                child = node.get(part)
                if child is None:
                    child = node[part] = {}
                if not isinstance(child, dict):
                    raise CgptError("%s: cannot override %r: %r is not a section"
                                    % (self.name, path, part))
                node = child
            if value is None:
                node.pop(parts[-1], None)
            else:
                node[parts[-1]] = value
        return Model.from_dict(data, self.format, self.name)

    def __repr__(self):
        return "cgpt.Model(%r)" % self.name


def _as_model(model):
    if isinstance(model, Model):
        return model
    if isinstance(model, dict):
        return Model.from_dict(model)
    if isinstance(model, (str, os.PathLike)):
        return Model.from_file(model)
    raise TypeError("a model is a cgpt.Model, a dict or a path, not %s"
                    % type(model).__name__)


_target_directory = None


def _target_name(target):
    """A target as cgpt reads it: a built-in name or a file path; a dict is
    written to a file named by its contents, in a folder of this process's
    own that is removed when it exits (cgpt reads a target once per name)."""
    global _target_directory
    if not isinstance(target, dict):
        return os.fspath(target)
    if _target_directory is None:
        _target_directory = tempfile.mkdtemp(prefix="cgpt-targets-")
        atexit.register(shutil.rmtree, _target_directory, True)
    text = json.dumps(target, indent=2, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(_target_directory, "target-%s.yaml" % digest)
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return path


def _as_list(value, convert=str):
    """None: the file's value; a scalar: one value; a list: a sweep axis.
    Numbers travel as text so that ranges ("1-16") read as cgpt-run reads
    them."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, range)):
        return [convert(v) for v in value]
    return [convert(value)]


def _request(models, target=None, num_csx=None, sequence_length=None,
             batch_size=None, micro_batch_size=None, batch_semantics=None,
             recompute=None, placer=None, train_steps=None, train_tokens=None,
             price_per_system_hour=None, level=None):
    if isinstance(models, (list, tuple)):
        models = [_as_model(m) for m in models]
    else:
        models = [_as_model(models)]
    return {
        "models": [(m.name, m.text) for m in models],
        "target": _as_list(target, _target_name),
        "num_csx": _as_list(num_csx),
        "sequence_length": _as_list(sequence_length),
        "batch_size": _as_list(batch_size),
        "micro_batch_size": _as_list(micro_batch_size),
        "batch_semantics": batch_semantics,
        "recompute": recompute,
        "placer": placer,
        "train_steps": train_steps,
        "train_tokens": train_tokens,
        "price_per_system_hour": price_per_system_hour,
        "emit": level or "summary",
    }


def _run(call, request):
    outcome = call(request)
    for line in outcome.diagnostics.splitlines():
        if ": warning: " in line:
            warnings.warn(line, CgptWarning, stacklevel=3)
    if not outcome.ok:
        raise CgptError(outcome.diagnostics.strip() or "cgpt failed")
    return outcome.output


def simulate(model, **options):
    """Compiles and simulates one training step and returns the JSON report
    as a dict (docs/tools/cgpt-run.md lists its keys). Options: target,
    num_csx, sequence_length, batch_size, micro_batch_size, batch_semantics,
    recompute, placer, train_steps, train_tokens, price_per_system_hour."""
    return json.loads(_run(_cgpt.report, _request(model, **options)))


def summary(model, **options):
    """The summary cgpt-run prints, as text (options as simulate's)."""
    return _run(_cgpt.printed, _request(model, **options))


def compile(model, level="wafer", **options):
    """The IR of the step at `level` ("transformer", "dataflow" or
    "wafer": placed, routed and planned), as text."""
    if level not in _LEVELS:
        raise ValueError("level is %r; allowed: %s" % (level, ", ".join(_LEVELS)))
    return _run(_cgpt.printed, _request(model, level=level, **options))


def compile_report(model, **options):
    """The per-kernel compile report (cgpt-run --compile-report): a row
    dict per placed kernel with its stage, rectangle, cores, mesh_percent,
    wave, sram_bytes_per_core and first-pass seconds, flops and bound."""
    return json.loads(_run(_cgpt.compile_report, _request(model, **options)))


def sweep(models, **options):
    """Every combination of the lists given (models, target, num_csx,
    sequence_length, batch_size, micro_batch_size; a scalar is one value,
    "1-16" a range), the systems innermost, at most 128 points: a list of
    row dicts (model, target, sequence_length, global_batch, systems,
    micro_batch, step_seconds, samples_per_second, speed_up and the training
    run's columns), ready for pandas.DataFrame(rows)."""
    return json.loads(_run(_cgpt.sweep, _request(models, **options)))


def builtin_targets():
    """The targets known by name: wse2, wse3, mini."""
    return list(_cgpt.builtin_targets())


def version():
    """cgpt's version and git commit."""
    return _cgpt.version()
