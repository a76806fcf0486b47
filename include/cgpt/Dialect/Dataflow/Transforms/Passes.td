//===- Passes.td - dataflow dialect passes -----------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_TD
#define CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DataflowTile : Pass<"dataflow-tile", "::cgpt::dataflow::ProgramOp"> {
  let summary = "Chooses each kernel's tile from the target's per-core resources";
  let description = [{
    Gives every kernel a `#dataflow.tile` over its tiling space: the piece
    of work one core holds at a time, the blocking the functional executor
    runs each kernel in (its reductions sum tile by tile, as the cores
    would). Tiles are chosen from the target model (`target`), never from
    constants:

    - a matrix multiply gets a cube `[t, t, t]` (capped by its extents),
      `t` the largest multiple of the core's SIMD lanes (FLOP per cycle / 2,
      one FMAC being two FLOPs) whose working set, operands in the storage
      type plus an f32 accumulator, fits `working-set-fraction` of the
      core's SRAM;
    - an elementwise map or row reduction gets `[rows, columns]`: as much
      of a row as fits (a whole row when it does, so a reduction needs no
      second level), then as many rows as fit, every operand and result
      counted.

    A quarter of the core by default. The wafer's memory model does not
    charge tiles: it counts what is live while each kernel runs over the
    whole mesh (docs/wafer.md).

    ```mlir
    %y = dataflow.matmul %x, %w : (...) -> !dataflow.stream<tensor<?x64x192xf32>>
    ```
    becomes, on `wse2`,
    ```mlir
    %y = dataflow.matmul %x, %w {tile = #dataflow.tile<[32, 32, 32]>} : (...) -> ...
    ```
    The program records the target: `target = "wse2"`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"wse2\"",
           "Target: wse2, wse3, mini, or a target description file">,
    Option<"workingSetFraction", "working-set-fraction", "double",
           /*default=*/"0.25",
           "Share of a core's SRAM one tile's working set may take (0, 1]">
  ];
}

def DataflowPrintCosts : Pass<"dataflow-print-costs", "::mlir::ModuleOp"> {
  let summary = "Prints each program's FLOPs, streamed bytes and kept activations";
  let description = [{
    Prints, for every `dataflow.program`, the figures of
    `computeStepCosts`: algorithmic and recomputed FLOPs per sequence and
    per step, the bytes one micro-batch pass streams in (weights) and out
    (gradients), and the activation bytes kept per sequence. The IR is left
    unchanged.

    ```
    program tiny
      algorithmic_flops_per_sequence: 67109888
      ...
    ```
  }];
}

#endif // CGPT_DIALECT_DATAFLOW_TRANSFORMS_PASSES_TD
