//===- Passes.td - wafer dialect passes --------------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
#define CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WaferPlace : Pass<"wafer-place", "::cgpt::wafer::DeviceOp"> {
  let summary = "Lays every kernel out on the mesh with a placer";
  let description = [{
    Runs a placer (docs/adding-a-placer.md) and writes what it decides
    into the IR: each region's rectangle (`at`), `layout` and `wave`, each
    stage's pipeline `slot`, and the device's `placer` and `execution`.
    Everything after it reads these. The placers:

    - `whole-mesh`: weight streaming, every kernel over the whole mesh one
      after another; a stage's token-major kernels share the split of
      tokens over token groups and features over feature groups that makes
      them fastest together, attention takes its own split of each
      (sequence, head) into query and key blocks;
    - `side-by-side`: the same, but a run of kernels that read none of each
      other's results shares the mesh in one wave, each on its own band of
      columns, where that ends sooner;
    - `pipelined`: layer pipelined, the embedding, each layer and the loss
      resident on their own band of columns (a stage `slot`), weights held
      (`weights = resident`), micro-batches flowing through.

    By default it runs the placer `wafer-plan-batch` chose, for the planned
    micro-batch; before planning, `whole-mesh` for one sequence.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" {flops = 1585152 : i64, ...}
    ```
    becomes on the 16 x 12 `mini` mesh
    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12>
        layout <token_groups = 16, feature_groups = 12, weights = north, partials = rows> wave 1 {...}
    ```
  }];
  let options = [
    Option<"placer", "placer", "std::string", /*default=*/"\"\"",
           "The placer to run: whole-mesh, side-by-side or pipelined "
           "(default: the device's planned placer, else whole-mesh)">,
  ];
}

def WaferRoute : Pass<"wafer-route", "::cgpt::wafer::DeviceOp"> {
  let summary = "Gives each kernel's streams routing colors and the edge points";
  let description = [{
    Gives each laid-out `wafer.region` the routing colors of its streams:
    one for its weights' (or, resident, its tokens') multicast down the
    columns, and two alternating colors for each chain along the mesh
    (partial sums, gathered operands, attention's queries and keys, row
    statistics; a streamed weight matmul's reduce-scatter chains both ways
    along its segment, two each way). Waves run one after another, so a region may use every
    color that no region of its own wave uses on the same columns; under
    layer pipelining colors 0 and 1 carry the activations from one slot's
    band to the next and back, and the regions' streams take the others.
    A region that needs more colors than the target has is an error. Places
    each `wafer.ingress` at the north edge above its region and each
    `wafer.egress` at the south-east corner of the rows its region's token
    groups occupy, where the column reduction of a weight gradient ends.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... layout ... wave 1 {...}
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152
    ```
    becomes
    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... layout ... wave 1 {colors = array<i64: 0, 1, 2, 3, 4>, ...}
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152 at [0, 0]
    ```
  }];
}

def WaferPlanBatch : Pass<"wafer-plan-batch", "::cgpt::wafer::DeviceOp"> {
  let summary = "Chooses the micro-batch, gradient accumulation, checkpoint policy and placer";
  let description = [{
    With Model Zoo's semantics: each of `num_csx` systems runs global batch
    / `num_csx` sequences per step (rounded up), in passes of at most the
    micro-batch, and as Model Zoo 2.5+ distributes them: the fewest passes
    that allows, with sizes as even as they go (30 sequences at micro-batch
    8 run as 4 passes: 8, 8, 7, 7). `grad_accum_steps` is the number of
    passes; `micro_batch` the largest, which memory must hold, so every
    micro-batch weighed is the largest pass of an even split (every divisor
    of the batch among them). For each micro-batch it asks each placer it weighs
    for a placement (docs/adding-a-placer.md) and weighs every checkpoint
    policy with it (`keep`; `every k` for k up to about 2 sqrt(layers);
    `offload`; layer pipelining keeps its micro-batches' checkpoints in
    flight, so only `keep`): the per-core memory peak must fit the
    target's SRAM, and of those that fit the one whose scheduled step gives
    the most samples per second wins. The device's `micro_batch_request`
    says which micro-batches to weigh:

    - `auto`: the largest pass of every even split of the per-system
      batch, about 2 sqrt(batch) sizes;
    - `explore`: the same (in `min..max` if given), with every placer,
      recording each micro-batch and placer with its best policy in the
      device's `explored` (`#wafer.candidate`: fits, SRAM peak, predicted
      samples/s), which `cgpt-run` prints as a table;
    - an integer: the largest pass of the fewest passes of at most that
      (the plan says when that is smaller), or an error with the limit;
    - `none`: the whole per-system batch, or an error.

    The `placer` option says which placers to weigh: `auto` (the default)
    weighs `whole-mesh` and `side-by-side` (weight streaming, as current
    Cerebras software runs GPT models), and all three under `explore`; a
    placer's name weighs that one only.

    Sets `micro_batch`, `grad_accum_steps`, `checkpoint`, `placer` and
    `plan`, a sentence saying why; `wafer-place` then lays the kernels out
    with that placer for that micro-batch. A model that does not fit even
    one sequence with any policy and placer, or whose weights and optimizer
    state (12 bytes per parameter) exceed the weight servers, is an error
    that says where and by how much.

    ```mlir
    wafer.device @m target "wse2" attributes {micro_batch = 0 : i64, ...}
    ```
    becomes
    ```mlir
    wafer.device @m target "wse2" attributes {checkpoint = #wafer.checkpoint<keep>,
        grad_accum_steps = 6 : i64, micro_batch = 88 : i64, placer = "side-by-side",
        plan = "auto: ...", ...}
    ```
  }];
  let options = [
    Option<"placer", "placer", "std::string", /*default=*/"\"auto\"",
           "The placers to weigh: auto, whole-mesh, side-by-side or "
           "pipelined">,
  ];
}

def WaferCheckMemory : Pass<"wafer-check-memory", "::cgpt::wafer::DeviceOp"> {
  let summary = "Checks every core's SRAM at the planned micro-batch and policy";
  let description = [{
    Accounts, for every region as placed (its rectangle and layout) at the
    device's micro-batch and checkpoint policy, what each core holds while
    it runs: the reserve for code and queues, the weight buffers (or, layer
    pipelined, the slot's resident weights), the checkpoints the policy
    keeps on the wafer, the activations live at that point of the stage
    spread as the layout spreads them (with the uneven split's imbalance)
    and its share of the gradient it sums. Records the total as
    `sram_bytes`; a region over the target's SRAM is an error naming the
    region, the bytes needed and the limit, with a note giving the memory
    map. A region without a placement is an error: run `wafer-place`.

    ```mlir
    wafer.region @matmul.1 weight_matmul "dataflow.matmul" at ... {..., sram_bytes = 30720 : i64}
    ```
  }];
}

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
