#!/usr/bin/env python3
"""Checks cgpt's functional mode against the same model in plain PyTorch.

    python3 test/reference/check_against_torch.py MODEL.yaml [--steps K]

Runs `cgpt-run MODEL.yaml --functional --steps K --dump-step FILE`, which
trains K steps and writes the last one in full: its batch, the weights and
AdamW moments before it, the summed gradients, the loss and the weights
after it. This script reads the model file itself (any Model Zoo schema:
the PyTorch params of models/*.yaml, TensorFlow, or the trainer schema; or
a Hugging Face config.json of any model_type cgpt reads, with --cgpt-args
for the batch it lacks), builds the
model in plain PyTorch in float64 (sequential GPT-2/3 or parallel GPT-J/NeoX
blocks; learned, rotary or ALiBi positions; layer or RMS norm; plain or
gated (SwiGLU, GeGLU) feed-forward or a mixture of experts; grouped-query
attention; muP
multipliers), loads those weights and that batch, and compares:

- the loss (relative error <= 1e-6),
- every gradient (max-norm relative error <= 3e-6),
- every weight's update (the weight after the optimizer step less the weight
  before), max-norm relative to the update itself: torch's gradient
  clipping and torch.optim.AdamW applied to cgpt's gradients, with the
  learning rate computed here from the file's schedule. The tolerance is as
  tight as f32 allows: 1e-5, or, where larger, four f32 epsilons of the
  weight over the update (an f32 weight of 1 is stored to 6e-8, against
  updates of 1e-4). Measured against the update, not the weight, weight
  decay (weight_decay x learning rate x weight) stays visible.

With --bf16, cgpt stores every stream in bfloat16 (8 significant bits, a
rounding of up to 2^-9 each) and sums in f32, against the float64
reference: the loss is held to 2e-4 and the gradients to 3e-2 (measured:
4.2e-5 and 1.1e-2, the sum of a few roundings); the updates, checked from
cgpt's own gradients, keep their f32 tolerances.

Prints the worst errors either way; exits 0 when everything matches, 1 when
something does not, 2 when the check cannot run (python3-torch missing, a
model this reference does not build).
"""

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import yaml
except ImportError as error:
    # A python3 ahead of Debian's on PATH (pyenv, a venv) lacks Debian's
    # python3-torch: run under Debian's instead, once.
    debian = "/usr/bin/python3"
    if (os.path.exists(debian) and os.path.realpath(sys.executable) !=
            os.path.realpath(debian) and "CGPT_REFERENCE_REEXEC" not in
            os.environ):
        os.environ["CGPT_REFERENCE_REEXEC"] = "1"
        os.execv(debian, [debian] + sys.argv)
    print(f"check_against_torch: cannot run: {error.name} is missing "
          "(Debian packages python3-torch, python3-numpy, python3-yaml; "
          "scripts/setup.sh installs them)", file=sys.stderr)
    sys.exit(2)

# A few times the worst the clean tree gives over every shape of
# torch-reference.test (2026-11-26): loss 3.3e-7, gradients 6.8e-7; in
# bf16, loss 4.2e-5 and gradients 1.1e-2. A derivative off in its fourth
# digit (GELU's by the tanh form's: 4.5e-5) fails.
LOSS_TOLERANCE = 1e-6
TENSOR_TOLERANCE = 3e-6
UPDATE_TOLERANCE = 1e-5
BF16_LOSS_TOLERANCE = 2e-4
BF16_GRADIENT_TOLERANCE = 3e-2
F32_EPSILON = 2.0 ** -23
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def read_safetensors(path):
    """The tensors and metadata of a safetensors file, with numpy only."""
    with open(path, "rb") as f:
        blob = f.read()
    length = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + length])
    metadata = header.pop("__metadata__", {})
    data = blob[8 + length:]
    dtypes = {"F32": np.float32, "I32": np.int32}
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(
            data[begin:end], dtype=dtypes[entry["dtype"]]).reshape(
                entry["shape"])
    return tensors, metadata


def normalized_optimizer(optimizer):
    """The optimizer keys of every Model Zoo schema under one spelling:
    TensorFlow's beta1/beta2, epsilon, weight_decay_rate and a cosine's
    alpha (its end as a fraction of its start)."""
    optimizer = dict(optimizer)
    if "betas" not in optimizer and ("beta1" in optimizer
                                     or "beta2" in optimizer):
        optimizer["betas"] = [optimizer.get("beta1", 0.9),
                              optimizer.get("beta2", 0.999)]
    if "eps" not in optimizer and "epsilon" in optimizer:
        optimizer["eps"] = optimizer["epsilon"]
    if "weight_decay" not in optimizer and "weight_decay_rate" in optimizer:
        optimizer["weight_decay"] = optimizer["weight_decay_rate"]
    phases = optimizer.get("learning_rate")
    if isinstance(phases, list):
        optimizer["learning_rate"] = [
            dict(phase, end_learning_rate=float(phase["alpha"]) * float(
                phase["initial_learning_rate"]))
            if "alpha" in phase and "end_learning_rate" not in phase
            else phase for phase in phases]
    return optimizer


def params_from_trainer(params):
    """A Model Zoo trainer-schema file (release 2.4 on) as the params
    schema: the model, the one optimizer with the precision section's
    clipping, and the schedulers (flattened from SequentialLR)."""
    init = params["trainer"]["init"]
    optimizer = {}
    for settings in (init.get("optimizer") or {}).values():
        optimizer = dict(settings or {})
    precision = init.get("precision") or {}
    if "max_gradient_norm" in precision:
        optimizer["max_gradient_norm"] = precision["max_gradient_norm"]
    names = {"LinearLR": "Linear", "CosineDecayLR": "CosineDecay",
             "ConstantLR": "Constant"}
    phases = []
    for entry in init.get("schedulers") or []:
        for kind, body in entry.items():
            inner = body["schedulers"] if kind == "SequentialLR" \
                else [{kind: body}]
            for scheduler in inner:
                for name, settings in scheduler.items():
                    phases.append(dict(settings,
                                       scheduler=names.get(name, name)))
    if phases:
        optimizer["learning_rate"] = phases
    return {"model": init["model"], "optimizer": optimizer}


def params_from_hugging_face(config):
    """A Hugging Face config.json as the Model Zoo keys Model reads, with
    transformers' defaults for each model_type (as cgpt reads them; the
    weights, biases and tied head come from cgpt's dump). The file states
    no training run: the optimizer is cgpt's default."""
    kind = config.get("model_type", "gpt2")
    model = {"name": kind}
    # Dropout, as cgpt reads it: the first key present for each site.
    for site, keys in (
            ("embedding_dropout_rate",
             ("embd_pdrop", "hidden_dropout", "hidden_dropout_prob")),
            ("attention_dropout_rate",
             ("attn_pdrop", "attention_dropout",
              "attention_probs_dropout_prob")),
            ("residual_dropout_rate",
             ("resid_pdrop", "hidden_dropout", "hidden_dropout_prob"))):
        present = [key for key in keys if key in config]
        model[site] = float(config[present[0]]) if present else 0.0
    if kind in ("gpt2", "gpt_bigcode", "gptj", "btlm", "jais"):
        model["hidden_size"] = config["n_embd"]
        model["num_heads"] = config["n_head"]
        model["num_hidden_layers"] = config["n_layer"]
        model["nonlinearity"] = config.get(
            "activation_function", "gelu_new")
        model["layer_norm_epsilon"] = config.get("layer_norm_epsilon", 1e-5)
    else:
        model["hidden_size"] = config["hidden_size"]
        model["num_heads"] = config["num_attention_heads"]
        model["num_hidden_layers"] = config["num_hidden_layers"]
        model["layer_norm_epsilon"] = config.get(
            "rms_norm_eps", config.get("layer_norm_eps", 1e-5))
    head_size = model["hidden_size"] // model["num_heads"]
    if kind == "gpt_bigcode" and config.get("multi_query", True):
        # transformers' GPTBigCodeAttention: one key/value head.
        model["extra_attention_params"] = {"num_kv_groups": 1}
    if kind == "gptj":
        model["position_embedding_type"] = "rotary"
        model["rotary_dim"] = config.get("rotary_dim", min(64, head_size))
    elif kind == "gpt_neox":
        model["nonlinearity"] = config.get("hidden_act", "gelu")
        model["position_embedding_type"] = "rotary"
        model["rotary_dim"] = int(head_size * config.get("rotary_pct", 0.25))
        model["rope_theta"] = config.get("rotary_emb_base", 10000)
        model["use_untied_layer_norm"] = True
        if not config.get("use_parallel_residual", True):
            model["name"] = "gpt2"
    elif kind in ("llama", "mistral", "mixtral"):
        act = config.get("hidden_act", "silu")
        model["nonlinearity"] = {"silu": "swiglu", "gelu": "geglu",
                                 "relu": "reglu"}[act]
        model["norm_type"] = "rmsnorm"
        model["position_embedding_type"] = "rotary"
        model["rope_theta"] = config.get("rope_theta", 10000.0)
        model["extra_attention_params"] = {"num_kv_groups": config.get(
            "num_key_value_heads", model["num_heads"])}
        if kind == "mixtral":
            # transformers' MixtralForCausalLM: the balance loss only with
            # output_router_logits; the router in the hidden states' type.
            model["moe"] = {
                "num_experts": config["num_local_experts"],
                "top_k": config.get("num_experts_per_tok", 2),
                "load_balancing_loss_coef":
                    config.get("router_aux_loss_coef", 0.001)
                    if config.get("output_router_logits", False) else 0.0,
                "router_fp32": False}
    elif kind in ("btlm", "jais"):
        model["position_embedding_type"] = config.get(
            "position_embedding_type", "learned")
        width = config.get("mup_width_scale", 1.0)
        model["embeddings_scale"] = config.get("mup_embeddings_scale", 1.0)
        model["output_logits_scale"] = config.get(
            "mup_output_alpha", 1.0) * width
        model["scale_qk_dot_by_d"] = config.get(
            "mup_scale_qk_dot_by_d", False)
        return {"model": model,
                "optimizer": {"adjust_learning_rate":
                              {"decoder_kernel": width}}}
    return {"model": model, "optimizer": {}}


class Model:
    """What the reference needs from a model file."""

    def __init__(self, path):
        with open(path) as f:
            text = f.read()
        if text.lstrip().startswith("{"):
            params = params_from_hugging_face(json.loads(text))
        else:
            params = yaml.safe_load(text)
            if "trainer" in params:
                params = params_from_trainer(params)
        model = params["model"]
        # The experts cgpt's routers chose, by router weight, when the dump
        # holds them; and per router, the tokens routed otherwise here and
        # the worst probability gap among them.
        self.routing = {}
        self.routing_checks = []
        self.optimizer = normalized_optimizer(params.get("optimizer", {}))
        self.d = model["hidden_size"]
        self.heads = model["num_heads"]
        self.layers = model["num_hidden_layers"]
        self.head_size = self.d // self.heads
        self.eps = float(model.get("layer_norm_epsilon", 1e-5))
        self.rms_norm = model.get("norm_type", "layernorm") == "rmsnorm"
        self.activation = model.get("nonlinearity", "gelu")
        # A gated unit (SwiGLU, GeGLU, ReGLU): the activation of a second,
        # gate projection multiplies the up projection.
        self.gated = self.activation in ("swiglu", "geglu", "reglu")
        if self.gated:
            self.activation = {"swiglu": "silu", "geglu": "gelu",
                               "reglu": "relu"}[self.activation]
        positions = model.get("position_embedding_type", "learned")
        self.rotary = positions == "rotary"
        self.alibi = positions == "alibi"
        extra = model.get("extra_attention_params", {}) or {}
        self.kv_heads = int(extra.get("num_kv_groups", self.heads))
        self.rotary_dim = int(model.get("rotary_dim", self.head_size))
        self.rotary_base = float(model.get("rope_theta", 10000.0))
        # Model Zoo picks the block class by name, by a GPT-J-only key, or
        # by the folder, of which the file name is what is left.
        name = str(model.get("name", "")).lower()
        file = os.path.basename(path).lower()
        self.parallel = (name in ("gptj", "gpt_neox", "neox") or (
            not name and ("use_untied_layer_norm" in model
                          or "gptj" in file or "neox" in file)))
        self.untied_norms = bool(model.get("use_untied_layer_norm", False))
        self.embeddings_scale = float(model.get("embeddings_scale", 1.0))
        self.logits_scale = float(model.get("output_logits_scale", 1.0))
        scale_qk = model.get("scale_qk_dot_by_d", False)
        adjust = self.optimizer.get("adjust_learning_rate", {})
        self.decoder_lr_scale = float(adjust.get("decoder_kernel", 1.0))
        # Release 2.x muP states the base width; the multipliers follow from
        # it as in Model Zoo's GPT-2 model (and cgpt's frontend).
        if "mup_base_hidden_size" in model:
            width = self.d / float(model["mup_base_hidden_size"])
            if "output_logits_scale" not in model:
                self.logits_scale = float(
                    model.get("output_logits_alpha", 1.0)) / width
            if "decoder_kernel" not in adjust:
                self.decoder_lr_scale = 1.0 / width
            scale_qk = True
        self.attention_scale = (1.0 / self.head_size if scale_qk
                                else 1.0 / math.sqrt(self.head_size))
        self.attention_scale *= float(model.get("attention_logits_alpha",
                                                1.0))
        # Dropout rates: each site's key, else dropout_rate, else none.
        def rate(key):
            return float(model.get(key, model.get("dropout_rate", 0.0)))
        self.embedding_dropout = rate("embedding_dropout_rate")
        self.attention_dropout = rate("attention_dropout_rate")
        self.residual_dropout = rate("residual_dropout_rate")
        # A mixture of experts in place of each feed-forward block.
        moe = model.get("moe") or {}
        self.experts = int(moe.get("num_experts", 0))
        self.top_k = int(moe.get("top_k", 1))
        self.shared_experts = int(moe.get("num_shared_experts", 0))
        self.balance = float(moe.get("load_balancing_loss_coef", 0.01))
        self.null_expert = moe.get("null_expert_bias")
        self.loss_scaling = model.get("loss_scaling", "num_tokens")
        self.loss_weight = float(model.get("loss_weight", 1.0))

    def activate(self, x):
        if self.activation == "gelu":
            return torch.nn.functional.gelu(x)
        if self.activation == "relu":
            return torch.relu(x)
        if self.activation in ("gelu_new", "gelu_tanh", "gelu_fast",
                               "gelu_pytorch_tanh"):
            return torch.nn.functional.gelu(x, approximate="tanh")
        if self.activation in ("silu", "swish"):
            return torch.nn.functional.silu(x)
        raise SystemExit(f"check_against_torch: no reference for "
                         f"nonlinearity '{self.activation}'")

    def loss(self, p, tokens, labels, masks=None):
        """The step's loss, written from the model's definition; `masks`
        (DropoutMasks) draws cgpt's dropout masks."""
        batch, seq = tokens.shape
        sites = iter(range(1 << 30))

        def drop(x, rate):
            if rate == 0.0:
                return x
            return x * masks.keep(next(sites), x.shape, rate) / (1.0 - rate)

        def norm(x, prefix):
            if self.rms_norm:
                return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                        + self.eps) * p[prefix + ".weight"])
            return torch.nn.functional.layer_norm(
                x, (self.d,), p[prefix + ".weight"], p[prefix + ".bias"],
                self.eps)

        def affine(x, prefix):
            y = x @ p[prefix + ".weight"]
            bias = p.get(prefix + ".bias")
            return y if bias is None else y + bias

        x = p["wte"][tokens] * self.embeddings_scale
        if not self.rotary and not self.alibi:
            x = x + p["wpe"][:seq]
        x = drop(x, self.embedding_dropout)
        mask = torch.ones(seq, seq, dtype=torch.bool).tril()
        # Each MoE layer's load-balancing loss, per sequence.
        balance = []
        for layer in range(self.layers):
            h = f"h.{layer}."
            normed = norm(x, h + "ln_1")
            qkv = affine(normed, h + "attn.qkv")
            kv_width = self.kv_heads * self.head_size
            q, k, v = (t.reshape(batch, seq, -1,
                                 self.head_size).transpose(1, 2)
                       for t in qkv.split([self.d, kv_width, kv_width],
                                          dim=-1))
            if self.rotary:
                q, k = self.rotate(q), self.rotate(k)
            # Grouped-query attention: query head i reads key/value head
            # i // (heads / kv_heads).
            group = self.heads // self.kv_heads
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
            scores = (q @ k.transpose(-1, -2)) * self.attention_scale
            if self.alibi:
                distance = (torch.arange(seq)[None, :]
                            - torch.arange(seq)[:, None]).to(scores.dtype)
                scores = scores + alibi_slopes(self.heads).to(
                    scores.dtype)[:, None, None] * distance
            probs = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            probs = drop(probs, self.attention_dropout)
            y = (probs @ v).transpose(1, 2).reshape(batch, seq, self.d)
            attention = drop(affine(y, h + "attn.proj"),
                             self.residual_dropout)
            if self.parallel:
                # GPT-J: one norm feeds both; NeoX: each has its own.
                if self.untied_norms:
                    normed = norm(x, h + "ln_2")
                f = self.block_ffn(normed, h, p, affine, balance)
                x = x + attention + drop(f, self.residual_dropout)
            else:
                x = x + attention
                f = self.block_ffn(norm(x, h + "ln_2"), h, p, affine, balance)
                x = x + drop(f, self.residual_dropout)
        x = norm(x, "ln_f")
        head = p.get("lm_head.weight", p["wte"])
        logits = (x @ head.T) * self.logits_scale
        if "lm_head.bias" in p:
            logits = logits + p["lm_head.bias"]
        total = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
            reduction="sum")
        count = batch * seq if self.loss_scaling == "num_tokens" else batch
        loss = total * self.loss_weight / count
        # The layers' mean balance loss, averaged over the sequences.
        for per_sequence in balance:
            loss = loss + self.balance / self.layers * per_sequence.mean()
        return loss

    def block_ffn(self, x, prefix, p, affine, balance):
        """The block's feed-forward output: dense, or the mixture of
        experts (appending its per-sequence balance loss to `balance`)."""
        if not self.experts:
            return affine(self.feed_forward(x, prefix + "mlp.", affine),
                          prefix + "mlp.proj")
        pre = prefix + "moe."
        logits = x @ p[pre + "router.weight"]
        probs = logits.softmax(-1)
        # No exact ties in these shapes: torch.topk orders none among them.
        top, experts = torch.topk(probs, self.top_k, dim=-1)
        chosen_by_cgpt = self.routing.get(pre + "router.weight")
        if chosen_by_cgpt is not None:
            # Routing is a discrete choice: where cgpt chose otherwise, its
            # choice must be as good up to rounding (the probabilities'
            # gap, relative to the larger, is the error checked), and the
            # rest of the step then follows cgpt's choice, so that the
            # arithmetic is compared on the same tokens.
            theirs = torch.tensor(chosen_by_cgpt, dtype=torch.long)
            mine = torch.sort(experts, -1).values
            differ = (torch.sort(theirs, -1).values != mine).any(-1)
            gap = 0.0
            if differ.any():
                p_mine = probs.gather(-1, experts).sum(-1)[differ]
                p_theirs = probs.gather(-1, theirs).sum(-1)[differ]
                gap = float(((p_mine - p_theirs) / p_mine).max())
            self.routing_checks.append(
                (pre + "router", int(differ.sum()), gap))
            experts = theirs
            top = probs.gather(-1, experts)
        chosen = top.sum(-1, keepdim=True)
        if self.null_expert is not None:
            # A null expert of fixed logit joins the normalization.
            chosen = chosen + torch.exp(float(self.null_expert)
                                        - logits.logsumexp(-1, keepdim=True))
        weights = top / chosen
        out = torch.zeros_like(x)
        for e in range(self.experts):
            def expert(name):
                tensor = p.get(pre + "experts." + name)
                return None if tensor is None else tensor[e]

            def project(v, name):
                y = v @ expert(name + ".weight")
                bias = expert(name + ".bias")
                return y if bias is None else y + bias
            up = project(x, "fc")
            a = (self.activate(project(x, "gate")) * up if self.gated
                 else self.activate(up))
            share = ((experts == e).to(x.dtype) * weights).sum(-1,
                                                               keepdim=True)
            out = out + share * project(a, "proj")
        if self.shared_experts:
            out = out + affine(self.feed_forward(x, pre + "shared.", affine),
                               pre + "shared.proj")
        if self.balance:
            seq = x.shape[1]
            shares = torch.nn.functional.one_hot(
                experts, self.experts).to(x.dtype).sum((1, 2)) / seq
            balance.append(self.experts * (shares * probs.mean(1)).sum(-1))
        return out

    def feed_forward(self, x, prefix, affine):
        """The activation of the up projection `prefix`fc, or with a gate,
        act(gate) * up."""
        up = affine(x, prefix + "fc")
        if self.gated:
            return self.activate(affine(x, prefix + "gate")) * up
        return self.activate(up)

    def rotate(self, t):
        """Rotary embedding, GPT-J style: channel pairs (2i, 2i + 1) of the
        first rotary_dim turn by position * base^(-2i / rotary_dim)."""
        seq = t.shape[-2]
        pairs = self.rotary_dim // 2
        inverse = self.rotary_base ** (
            -2.0 * torch.arange(pairs) / self.rotary_dim)
        angle = torch.arange(seq)[:, None] * inverse[None, :]
        cos, sin = angle.cos(), angle.sin()
        even = t[..., 0:2 * pairs:2]
        odd = t[..., 1:2 * pairs:2]
        turned = torch.stack((even * cos - odd * sin,
                              even * sin + odd * cos), dim=-1).flatten(-2)
        return torch.cat((turned, t[..., 2 * pairs:]), dim=-1)

    def learning_rate(self, step):
        """The file's schedule at 0-based optimizer step `step`."""
        # cgpt's rate when a file states none (docs/frontend.md).
        schedule = self.optimizer.get("learning_rate", 6e-4)
        if not isinstance(schedule, list):
            return float(schedule)
        rate = 0.0
        for phase in schedule:
            kind = phase["scheduler"].lower()
            start = float(phase.get("initial_learning_rate",
                                    phase.get("learning_rate", 0.0)))
            end = float(phase.get("end_learning_rate", start))
            steps = int(phase.get("total_iters", phase.get(
                "steps", phase.get("decay_steps", 0))))
            if steps == 0 or step < steps:
                t = 0.0 if steps == 0 else step / steps
                if kind == "constant":
                    return start
                if kind == "linear":
                    return start + (end - start) * t
                return end + (start - end) * 0.5 * (1 + math.cos(math.pi * t))
            step -= steps
            rate = start if kind == "constant" else end
        return rate

    def param_groups(self, params, lr):
        """AdamW groups: matrices decay, the decoder's learn at muP's rate."""
        decay = float(self.optimizer.get("weight_decay", 0.0))
        groups = []
        for name, tensor in params.items():
            # Expert weights stack matrices; expert biases stack vectors.
            matrix = tensor.dim() >= 2 and not name.endswith(".bias")
            scale = (self.decoder_lr_scale
                     if matrix and name.startswith("h.") else 1.0)
            groups.append({"params": [tensor], "lr": lr * scale,
                           "weight_decay": decay if matrix else 0.0,
                           "name": name})
        return groups


class DropoutMasks:
    """cgpt's counter-based dropout masks (include/cgpt/Exec/Dropout.h),
    drawn again here in NumPy: each element's bits are a 32-bit hash of
    the step, the site, its sequence in the global batch, its row and its
    column; it is kept when they are at least rate x 2^32."""

    def __init__(self, seed, step):
        self.seed = np.uint32((seed & 0xFFFFFFFF) ^ (seed >> 32))
        self.step = np.uint32(step & 0xFFFFFFFF)

    @staticmethod
    def hash32(x):
        x = np.asarray(x, dtype=np.uint32)
        with np.errstate(over="ignore"):
            x = x ^ (x >> np.uint32(16))
            x = x * np.uint32(0x7FEB352D)
            x = x ^ (x >> np.uint32(15))
            x = x * np.uint32(0x846CA68B)
            x = x ^ (x >> np.uint32(16))
        return x

    def keep(self, site, shape, rate):
        hash32 = self.hash32
        with np.errstate(over="ignore"):
            key = hash32(hash32(self.seed + self.step) + np.uint32(site))
            sequences = hash32(key + np.arange(shape[0], dtype=np.uint32))
            columns = shape[-1]
            rows = int(np.prod(shape[1:-1], dtype=np.int64))
            row_keys = hash32(sequences[:, None]
                              + np.arange(rows, dtype=np.uint32)[None, :])
            bits = hash32(row_keys[:, :, None]
                          + np.arange(columns, dtype=np.uint32)[None, None])
        threshold = int(math.ldexp(rate, 32))
        kept = bits.astype(np.uint64) >= np.uint64(threshold)
        return torch.from_numpy(kept.reshape(shape)).to(torch.float64)


def alibi_slopes(heads):
    """ALiBi's head slopes (Press et al., and their reference code): for n
    a power of two, 2^(-8 (i+1) / n); otherwise those of the power of two
    below, then every other slope of twice that."""
    def power_of_two(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    below = 2 ** int(math.floor(math.log2(heads)))
    slopes = power_of_two(below)
    slopes += power_of_two(2 * below)[0::2][:heads - below]
    return torch.tensor(slopes, dtype=torch.float64)


def relative_error(ours, reference):
    """max |ours - reference| / max |reference| (absolute when that is 0)."""
    reference = reference.detach().double().numpy()
    scale = np.max(np.abs(reference)) if reference.size else 0.0
    error = np.max(np.abs(ours.astype(np.float64) - reference)) \
        if reference.size else 0.0
    return error / scale if scale > 0 else error


def main():
    # A reader that stops early (`| head`) ends the output quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a small model file (models/*.yaml, "
                        "or a Hugging Face config.json)")
    parser.add_argument("--steps", type=int, default=3,
                        help="steps to train; the last one is checked "
                             "(default 3, so AdamW's moments are not zero)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cgpt-run",
                        default=os.path.join(REPO, "build", "bin",
                                             "cgpt-run"))
    parser.add_argument("--bf16", action="store_true",
                        help="check cgpt's bfloat16 storage, with bf16 "
                             "tolerances for the gradients")
    parser.add_argument("--cgpt-args", default="",
                        help="more cgpt-run options, written with '=': "
                             "--cgpt-args='--target wse2 --num-csx 3'")
    args = parser.parse_args()
    # A path or a name on PATH, as subprocess takes it.
    if shutil.which(args.cgpt_run) is None:
        print(f"check_against_torch: no cgpt-run at {args.cgpt_run}; build "
              "it first (scripts/setup.sh), or name it with --cgpt-run",
              file=sys.stderr)
        return 2

    model = Model(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "step.safetensors")
        command = [args.cgpt_run, args.model, "--functional",
                   f"--steps={args.steps}", f"--seed={args.seed}",
                   f"--dump-step={dump}"] + args.cgpt_args.split() + \
            (["--bf16"] if args.bf16 else [])
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr, file=sys.stderr)
            print(f"check_against_torch: {' '.join(command)} failed",
                  file=sys.stderr)
            return 2
        print(run.stdout.splitlines()[0])
        tensors, metadata = read_safetensors(dump)

    torch.set_default_dtype(torch.float64)
    names = [n[len("param."):] for n in sorted(tensors)
             if n.startswith("param.")]
    params = {n: torch.tensor(tensors["param." + n], dtype=torch.float64,
                              requires_grad=True) for n in names}
    tokens = torch.tensor(tensors["tokens"], dtype=torch.long)
    labels = torch.tensor(tensors["labels"], dtype=torch.long)
    masks = DropoutMasks(int(metadata.get("dropout_seed", 0)),
                         int(metadata["step"]))
    model.routing = {n[len("route."):]: tensors[n] for n in tensors
                     if n.startswith("route.")}
    loss = model.loss(params, tokens, labels, masks)
    loss.backward()

    rows = []  # (kind, name, error, tolerance)
    rows.append(("loss", "loss",
                 abs(float(tensors["loss"]) - loss.item()) / abs(loss.item()),
                 BF16_LOSS_TOLERANCE if args.bf16 else LOSS_TOLERANCE))
    gradient_tolerance = BF16_GRADIENT_TOLERANCE if args.bf16 \
        else TENSOR_TOLERANCE
    # A router's choices: the worst probability gap where cgpt chose other
    # experts, held to the gradients' tolerance (each router once: a
    # recomputed layer routes again, identically).
    for router, flips, gap in dict(
            (name, (name, flips, gap))
            for name, flips, gap in model.routing_checks).values():
        rows.append(("routing", f"{router} ({flips} differ)", gap,
                     gradient_tolerance))
    for n in names:
        rows.append(("gradient", n,
                     relative_error(tensors["grad." + n], params[n].grad),
                     gradient_tolerance))

    # The weight servers' step: torch's clipping, then torch's AdamW from
    # the moments cgpt had before the step, applied to cgpt's gradients
    # (just checked). Reference gradients would do for most weights, but
    # AdamW divides by the root of the second moment: where the true
    # gradient is 0 (the key bias: softmax ignores a shift shared by a
    # row), it would turn rounding noise of either side into updates.
    for n in names:
        params[n].grad = torch.tensor(tensors["grad." + n],
                                      dtype=torch.float64)
    step = int(metadata["step"])
    betas = model.optimizer.get("betas", [0.9, 0.999])
    eps = float(model.optimizer.get("eps", 1e-6))
    max_norm = float(model.optimizer.get("max_gradient_norm", 0.0))
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(list(params.values()), max_norm)
    optimizer = torch.optim.AdamW(
        model.param_groups(params, model.learning_rate(step)),
        betas=(float(betas[0]), float(betas[1])), eps=eps)
    for n, tensor in params.items():
        optimizer.state[tensor] = {
            "step": torch.tensor(float(step)),
            "exp_avg": torch.tensor(tensors["adam_m." + n],
                                    dtype=torch.float64),
            "exp_avg_sq": torch.tensor(tensors["adam_v." + n],
                                       dtype=torch.float64)}
    before = {n: params[n].detach().clone() for n in names}
    optimizer.step()
    for n in names:
        weight = tensors["param." + n].astype(np.float64)
        ours = tensors["updated." + n].astype(np.float64) - weight
        reference = params[n].detach() - before[n]
        update = float(reference.abs().max()) if reference.numel() else 0.0
        floor = 4 * F32_EPSILON * float(np.max(np.abs(weight))) / update \
            if update > 0 else 0.0
        rows.append(("update", n, relative_error(ours, reference),
                     max(UPDATE_TOLERANCE, floor)))

    failed = [row for row in rows if not row[2] <= row[3]]
    print(f"step {step + 1} of {args.steps}: loss {loss.item():.6f} "
          f"(cgpt {float(tensors['loss']):.6f}), learning rate "
          f"{model.learning_rate(step):.3e}; {len(rows)} comparisons, "
          f"{len(failed)} over tolerance")
    kinds = dict.fromkeys(kind for kind, _, _, _ in rows)
    print("worst: " + ", ".join(
        f"{kind} {max(e for k, _, e, _ in rows if k == kind):.1e}"
        for kind in kinds))
    print(f"{'kind':<15} {'tensor':<28} {'rel. error':>11} {'tolerance':>10}")
    worst = sorted(rows, key=lambda row: -row[2] / row[3])
    # Routers that routed a token otherwise are always shown.
    shown = failed or worst[:8]
    shown = shown + [row for row in rows if row[0] == "routing" and
                     "(0 differ)" not in row[1] and row not in shown]
    for kind, name, error, tolerance in shown:
        mark = "" if error <= tolerance else "  FAIL"
        print(f"{kind:<15} {name:<28} {error:11.3e} {tolerance:10.0e}{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
