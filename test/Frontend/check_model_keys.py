#!/usr/bin/env python3
"""For every model key the readers map, imports a file whose value differs
from the default and prints what changed in the transformer IR, for
model-keys.test to check.

    check_model_keys.py --cgpt-run cgpt-run DEFAULTS.yaml DEFAULTS.config.json

Each file is the defaults file (only the keys a model must state) with one
key added or changed. For each row it prints `== KEY: VALUE` and then
the IR lines that differ from the defaults' IR (`+` lines, and `-` for the
ones they replace), the model's name left out; `no change` where the key
changed nothing, which is what a key the reader stopped reading, or a
default turned around, looks like.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

# Model Zoo `model:` keys, with a value other than the default.
MODEL_ZOO = [
    ("share_embedding_weights", "False"),
    ("use_bias_in_output", "True"),
    ("nonlinearity", "relu"),
    ("nonlinearity", "swiglu"),
    ("layer_norm_epsilon", "1.0e-3"),
    ("position_embedding_type", "rotary"),
    ("position_embedding_type", "alibi"),
    ("use_position_embedding", "False"),
    ("use_projection_bias_in_attention", "False"),
    ("use_ffn_bias_in_attention", "False"),
    ("use_ffn_bias", "False"),
    ("use_untied_layer_norm", "True"),
    ("mup_base_hidden_size", "16"),
    ("attention_logits_alpha", "0.5"),
    ("norm_type", "rmsnorm"),
    ("scale_qk_dot_by_d", "True"),
    ("embeddings_scale", "10.0"),
    ("output_logits_scale", "0.25"),
    ("mixed_precision", "False"),
    ("fp16_type", "float16"),
    ("use_bfloat16", "False"),
    ("loss_scaling", "batch_size"),
    ("loss_weight", "0.5"),
    ("name", "gptj"),
    ("attention_module", "multiquery_attention"),
    ("extra_attention_params", "{num_kv_groups: 2}"),
    ("dropout_rate", "0.1"),
    ("moe", "{num_experts: 4, top_k: 2}"),
]
# Keys of the other sections: (section, key, value).
OTHER_SECTIONS = [
    ("optimizer", "betas", "[0.8, 0.95]"),
    ("optimizer", "eps", "1.0e-08"),
    ("optimizer", "weight_decay", "0.1"),
    ("optimizer", "max_gradient_norm", "1.0"),
    ("optimizer", "adjust_learning_rate", "{decoder_kernel: 0.5}"),
    ("optimizer", "learning_rate", "2.0e-3"),
    ("optimizer", "learning_rate",
     "[{scheduler: Linear, initial_learning_rate: 0.0, "
     "end_learning_rate: 1.0e-3, total_iters: 10}, "
     "{scheduler: CosineDecay, initial_learning_rate: 1.0e-3, "
     "end_learning_rate: 1.0e-4, total_iters: 90}]"),
    ("train_input", "batch_size", "16"),
    ("train_input", "max_sequence_length", "16"),
    ("train_input", "micro_batch_size", "4"),
    ("runconfig", "num_csx", "2"),
]
# The same with another key first: the rotary keys need rotary positions,
# muP's the base width, the moe section's keys the experts' count.
MODEL_ZOO_WITH = [
    ("rotary_dim", "4", "position_embedding_type", "rotary"),
    ("rope_theta", "500000.0", "position_embedding_type", "rotary"),
    ("output_logits_alpha", "2.0", "mup_base_hidden_size", "16"),
    ("mup_base_filter_size", "16", "mup_base_hidden_size", "16"),
    # The moe section's keys, each beside the experts' count.
    ("moe", "{num_experts: 4, top_k: 2}", "moe", "{num_experts: 4}"),
    ("moe", "{num_experts: 4, load_balancing_loss_coef: 0.1}", "moe",
     "{num_experts: 4}"),
    ("moe", "{num_experts: 4, router_fp32: false}", "moe",
     "{num_experts: 4}"),
    ("moe", "{num_experts: 4, num_shared_experts: 1}", "moe",
     "{num_experts: 4}"),
    ("moe", "{num_experts: 4, null_expert_bias: 0.5}", "moe",
     "{num_experts: 4}"),
]
# Hugging Face config.json keys of GPT-2 (the defaults file) and others.
HUGGING_FACE = [
    ("tie_word_embeddings", False),
    ("n_inner", 48),
    ("activation_function", "relu"),
    ("layer_norm_epsilon", 1e-3),
    ("resid_pdrop", 0.1),
    ("model_type", "gpt_bigcode"),
    ("model_type", "gptj"),
]


def ir_of(cgpt_run, text, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model" + suffix)
        with open(path, "w") as f:
            f.write(text)
        run = subprocess.run([cgpt_run, path, "--emit=transformer"],
                             capture_output=True, text=True)
    if run.returncode != 0:
        return ["error: " + re.sub(r"^\S*model\.(yaml|json):", "", line)
                for line in run.stderr.splitlines()]
    return [re.sub(r"@model\b", "@M", line)
            for line in run.stdout.splitlines()]


def with_model_keys(text, pairs, section="model"):
    """`text` with each (key, value) set in its `section:` (added at the end
    where the file has none)."""
    if f"\n{section}:\n" not in "\n" + text:
        text += f"{section}:\n"
    for key, value in pairs:
        line = f"    {key}: {value}"
        start = ("\n" + text).index(f"\n{section}:\n") + len(section) + 1
        end = re.search(r"^\S", text[start + 1:], re.M)
        end = start + 1 + end.start() if end else len(text)
        body = text[start:end]
        pattern = re.compile(rf"^    {re.escape(key)}: .*$", re.M)
        body = pattern.sub(line, body) if pattern.search(body) \
            else "\n" + line + body
        text = text[:start] + body + text[end:]
    return text


def shorten(line):
    """An IR line without its SSA numbers and layer index, so that the same
    change in every layer reads as one line, and without its types but a
    weight's shape."""
    line = line.strip()
    if "transformer.weight" in line:
        line = re.sub(r"x(bf16|f16|f32)>$", ">", line)
    else:
        line = re.split(r" : [(t]", line, maxsplit=1)[0]
    line = re.sub(r"%\d+", "%N", line)
    line = re.sub(r"\blayer \d+", "layer N", line)
    return re.sub(r"\bh\.\d+\.", "h.N.", line)


def first_block(lines):
    """The ops of the first decoder block, in order: its structure."""
    ops, inside = [], False
    for line in lines:
        inside = inside or '"h.0.' in line
        if '"h.1.' in line:
            break
        match = re.search(r"transformer\.(\w+)", line)
        if inside and match and match.group(1) != "weight":
            ops.append(match.group(1))
    return " ".join(ops)


def step_attributes(lines):
    """The train step's attributes, each `name = value`."""
    for line in lines:
        if "transformer.train_step" in line:
            body = line[line.index("attributes {") + len("attributes {"):]
            return re.findall(
                r"(\w+ = (?:\[[^\]]*\]|#[\w.]+<[^>]*>|[^,}]+))", body)
    return []


def report(key, value, before, after):
    """Prints the step attributes and the IR lines (types left out) that
    `after` has and `before` has not."""
    print(f"== {key}: {value}")
    seen = {shorten(line) for line in before}
    old_attributes = set(step_attributes(before))
    added = [f"step {a}" for a in step_attributes(after)
             if a not in old_attributes]
    for line in after:
        short = shorten(line)
        if short not in seen and short not in added and \
                "transformer.train_step" not in short:
            added.append(short)
    if first_block(after) and first_block(after) != first_block(before):
        added.append("block: " + first_block(after))
    for line in added:
        print("+ " + line)
    if before == after:
        print("no change")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cgpt-run", default="cgpt-run")
    parser.add_argument("model_zoo")
    parser.add_argument("hugging_face")
    args = parser.parse_args()
    with open(args.model_zoo) as f:
        zoo = f.read()
    base = ir_of(args.cgpt_run, zoo, ".yaml")
    for key, value in MODEL_ZOO:
        report(key, value, base,
               ir_of(args.cgpt_run, with_model_keys(zoo, [(key, value)]),
                     ".yaml"))
    for section, key, value in OTHER_SECTIONS:
        report(f"{section}.{key}", value, base,
               ir_of(args.cgpt_run,
                     with_model_keys(zoo, [(key, value)], section), ".yaml"))
    for key, value, needs, needed in MODEL_ZOO_WITH:
        start = with_model_keys(zoo, [(needs, needed)])
        report(key, value, ir_of(args.cgpt_run, start, ".yaml"),
               ir_of(args.cgpt_run, with_model_keys(start, [(key, value)]),
                     ".yaml"))
    with open(args.hugging_face) as f:
        config = json.load(f)
    base = ir_of(args.cgpt_run, json.dumps(config), ".json")
    for key, value in HUGGING_FACE:
        report(key, value, base,
               ir_of(args.cgpt_run, json.dumps(dict(config, **{key: value})),
                     ".json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
