//===- Passes.td - wafer dialect passes --------------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
#define CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WaferPlace : Pass<"wafer-place", "::mlir::ModuleOp"> {
  let summary = "Places every kernel of every stage on a rectangle of cores";
  let description = [{
    Gives each logical `wafer.region` a `#wafer.rect`. The regions of a
    stage share the whole mesh: they cover it, do not overlap, have a size
    proportional to their FLOPs (at least one core), and kernels that
    follow each other in dataflow order, which exchange most of the
    traffic, share an edge. The placer is a plain C++ class
    (`SerpentinePlacer`, see Placer.h); the same input always gives the
    same placement.

    ```mlir
    wafer.region @matmul.1 "dataflow.matmul" {flops = 1585152 : i64, ...}
    ```
    becomes on the 16 x 12 `mini` mesh
    ```mlir
    wafer.region @matmul.1 "dataflow.matmul" at #wafer.rect<x = 2, y = 0, w = 3, h = 4> {...}
    ```
    A stage with more kernels than the mesh has cores is an error.
  }];
  let options = [
    Option<"placer", "placer", "std::string", /*default=*/"\"serpentine\"",
           "Placement algorithm (serpentine)">
  ];
}

def WaferRoute : Pass<"wafer-route", "::mlir::ModuleOp"> {
  let summary = "Routes every flow on the mesh within the target's colors";
  let description = [{
    Gives each `wafer.flow` an X-then-Y route between the centres of its
    regions and a routing color, so that flows sharing a link in the same
    direction never share a color; places each `wafer.ingress` on the
    mesh's west edge and each `wafer.egress` on its east edge, in the row
    of their region. A stage whose flows need more colors than the target
    has (`fabric.colors`) is an error naming the flow that found none.

    ```mlir
    wafer.flow @layer_norm.0 -> @matmul.1 bytes 16384
    ```
    becomes
    ```mlir
    wafer.flow @layer_norm.0 -> @matmul.1 bytes 16384 color 0 route [0, 1, 3, 1]
    ```
  }];
}

def WaferPlanBatch : Pass<"wafer-plan-batch", "::mlir::ModuleOp"> {
  let summary = "Chooses the micro-batch and gradient accumulation";
  let description = [{
    With Model Zoo's semantics: each of `num_csx` systems runs global batch
    / `num_csx` sequences per step, in micro-batches that divide that
    per-system batch; gradient accumulation steps = per-system batch /
    micro-batch. The device's `micro_batch_request` says how to choose:

    - `auto`: of the per-system batch's divisors that fit every core's
      SRAM, the one the cost model (shared with the runtime) predicts the
      most samples per second for;
    - `explore`: the same, after printing a table of every candidate (in
      `min..max` if given): micro-batch, fits, SRAM peak, predicted
      samples/s;
    - an integer: used as given, or an error with the limit;
    - `none`: the whole per-system batch, or an error.

    Sets `micro_batch`, `grad_accum_steps` and `plan`, a sentence saying
    why. A model whose layers do not fit even one sequence, or whose
    weights and optimizer state (12 bytes per parameter: f32 weights and
    two f32 Adam moments) exceed the weight servers, is an error that says
    where and by how much.

    ```mlir
    wafer.device @m target "wse2" ... attributes {micro_batch = 0 : i64, ...}
    ```
    becomes
    ```mlir
    wafer.device @m target "wse2" ... attributes {grad_accum_steps = 6 : i64,
        micro_batch = 88 : i64, plan = "auto: ...", ...}
    ```
  }];
}

def WaferCheckMemory : Pass<"wafer-check-memory", "::mlir::ModuleOp"> {
  let summary = "Checks every core's SRAM at the planned micro-batch";
  let description = [{
    Accounts, for every placed region at the device's micro-batch, what
    each of its cores holds: the tile working set, its stream buffers, the
    region's share of its stationary activations (or weight) and of its
    accumulators, and its share of the activations kept for the backward
    pass. Records the per-core total as `sram_bytes`; a region over the
    target's SRAM is an error naming the region, its cores, the bytes
    needed and the limit, with a note giving the memory map.

    ```mlir
    wafer.region @matmul.1 "dataflow.matmul" at #wafer.rect<...> {..., sram_bytes = 30720 : i64}
    ```
  }];
}

#endif // CGPT_DIALECT_WAFER_TRANSFORMS_PASSES_TD
