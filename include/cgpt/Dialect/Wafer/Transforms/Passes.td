//===- Passes.td - wafer dialect passes --------------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
#define CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WaferPlace : Pass<"wafer-place", "::mlir::ModuleOp"> {
  let summary = "Lays every kernel out over the whole mesh";
  let description = [{
    Weight streaming runs a stage's kernels one after another, each over
    the whole mesh. For each stage this pass picks the split of tokens over
    token groups and features over feature groups that makes the stage's
    kernels fastest under the execution model (docs/wafer.md), at the
    planned micro-batch (or one sequence before planning), and records it
    with the cores each kernel runs on. Attention takes its own split of
    each (sequence, head) into query and key blocks.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" {flops = 1585152 : i64, ...}
    ```
    becomes on the 16 x 12 `mini` mesh
    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at #wafer.rect<x = 0, y = 0, w = 16, h = 12>
        layout #wafer.layout<token_groups = 48, feature_groups = 4, weights = north, partials = rows> {...}
    ```
  }];
}

def WaferRoute : Pass<"wafer-route", "::mlir::ModuleOp"> {
  let summary = "Gives each kernel's streams routing colors and the edge points";
  let description = [{
    Gives each laid-out `wafer.region` the routing colors of its streams:
    one for its weights' multicast down the columns, and two alternating
    colors for each chain along the mesh (partial sums, gathered operands,
    attention's queries and keys, row statistics). Kernels run one after
    another, so each may use all of the target's `fabric.colors`; one that
    needs more is an error. Places each `wafer.ingress` at the north edge
    and each `wafer.egress` at the south-east corner, where the column
    reduction of a weight gradient ends.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... layout ... {...}
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152
    ```
    becomes
    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... layout ... {colors = array<i64: 0, 1, 2>, ...}
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152 at [0, 0]
    ```
  }];
}

def WaferPlanBatch : Pass<"wafer-plan-batch", "::mlir::ModuleOp"> {
  let summary = "Chooses the micro-batch, gradient accumulation and checkpoint policy";
  let description = [{
    With Model Zoo's semantics: each of `num_csx` systems runs global batch
    / `num_csx` sequences per step (rounded up), in micro-batches that
    divide that per-system batch; gradient accumulation steps = per-system
    batch / micro-batch. For each micro-batch it weighs every checkpoint
    policy (`keep`; `every k` for k up to about 2 sqrt(layers); `offload`)
    with the execution model: the per-core memory peak must fit the
    target's SRAM, and of those that fit the one whose simulated step gives
    the most samples per second wins. The device's `micro_batch_request`
    says which micro-batches to weigh:

    - `auto`: every divisor of the per-system batch;
    - `explore`: the same (in `min..max` if given), recording each
      micro-batch with its best policy in the device's `explored`
      (`#wafer.candidate`: fits, SRAM peak, predicted samples/s), which
      `cgpt-run` prints as a table;
    - an integer: that one, or an error with the limit;
    - `none`: the whole per-system batch, or an error.

    Sets `micro_batch`, `grad_accum_steps`, `checkpoint` and `plan`, a
    sentence saying why; `wafer-place` then lays the kernels out for that
    micro-batch. The planner weighs layouts itself and needs none in the
    IR. A model that does not fit even one sequence with any
    policy, or whose weights and optimizer state (12 bytes per parameter)
    exceed the weight servers, is an error that says where and by how much.

    ```mlir
    wafer.device @m target "wse2" attributes {micro_batch = 0 : i64, ...}
    ```
    becomes
    ```mlir
    wafer.device @m target "wse2" attributes {checkpoint = #wafer.checkpoint<keep>,
        grad_accum_steps = 6 : i64, micro_batch = 88 : i64, plan = "auto: ...", ...}
    ```
  }];
}

def WaferCheckMemory : Pass<"wafer-check-memory", "::mlir::ModuleOp"> {
  let summary = "Checks every core's SRAM at the planned micro-batch and policy";
  let description = [{
    Accounts, for every region at the device's micro-batch and checkpoint
    policy, what each core holds while it runs: the reserve for code and
    queues, the weight buffers, the checkpoints the policy keeps on the
    wafer, the activations live at that point of the stage (with the
    uneven split's imbalance) and its share of the gradient it sums.
    Records the total as `sram_bytes`; a region over the target's SRAM is
    an error naming the region, the bytes needed and the limit, with a note
    giving the memory map.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... {..., sram_bytes = 30720 : i64}
    ```
  }];
}

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
