// Placed row kernels on the mini mesh, hand-written for wafer-route: a
// layer norm's gradient over twelve rows of token groups, an RMS norm's
// over one, a layer norm, the loss and the loss's gradient.
wafer.device @norms target "mini" attributes {flops_per_sequence = 1 : i64, global_batch = 16 : i64, grad_accum_steps = 1 : i64, kept_bytes_per_sequence = 0 : i64, micro_batch = 16 : i64, micro_batch_request = #training.micro_batch<auto>, num_csx = 1 : i64, parameters = 128 : i64, seq_len = 64 : i64} {
  wafer.stage @head.loss order 0 "loss" {
    wafer.region @ln_grad reduction "dataflow.layer_norm_grad" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 47, feature_groups = 4, weights = none, partials = none> wave 0 {accumulator = 0 : i64, element_bytes = 4 : i64, flops = 82560 : i64, live = 49664 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @rms_grad reduction "dataflow.rms_norm_grad" at <x = 0, y = 0, w = 16, h = 1> layout <token_groups = 4, feature_groups = 4, weights = none, partials = none> wave 1 {accumulator = 0 : i64, element_bytes = 4 : i64, flops = 65664 : i64, live = 49664 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @ln reduction "dataflow.layer_norm" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 47, feature_groups = 4, weights = none, partials = none> wave 2 {accumulator = 0 : i64, element_bytes = 4 : i64, flops = 51712 : i64, live = 49664 : i64, shape = array<i64: 64, 64, 1>}
    wafer.region @loss reduction "dataflow.cross_entropy" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 47, feature_groups = 4, weights = none, partials = none> wave 3 {accumulator = 0 : i64, chunks = 4 : i64, element_bytes = 4 : i64, flops = 688128 : i64, live = 50176 : i64, shape = array<i64: 64, 256, 1>}
    wafer.region @loss_grad reduction "dataflow.cross_entropy_grad" at <x = 0, y = 0, w = 16, h = 12> layout <token_groups = 47, feature_groups = 4, weights = none, partials = none> wave 4 {accumulator = 0 : i64, chunks = 4 : i64, element_bytes = 4 : i64, flops = 655488 : i64, live = 66560 : i64, shape = array<i64: 64, 256, 1>}
  }
}
