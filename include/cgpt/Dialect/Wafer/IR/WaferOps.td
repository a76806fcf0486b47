//===- WaferOps.td - wafer placement dialect ---------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_WAFEROPS_TD
#define CGPT_DIALECT_WAFER_IR_WAFEROPS_TD

include "cgpt/Dialect/Transformer/IR/TransformerAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

def Wafer_Dialect : Dialect {
  let name = "wafer";
  let cppNamespace = "::cgpt::wafer";
  let summary = "Kernels placed on the core mesh, stage by stage";
  let description = [{
    The `wafer` dialect maps a dataflow program onto a target's 2D core
    mesh. A `wafer.device` holds the stages in the order the wafer runs
    them: weight streaming reuses the whole mesh for one stage (one layer's
    forward or backward pass) after another. Within a stage every kernel is
    a `wafer.region` of cores, first logical (a size to be found), then
    placed on a rectangle; `wafer.flow`s connect regions along routes of
    the mesh, each on a routing color; `wafer.ingress` and `wafer.egress`
    are where weights enter and gradients leave at the mesh's edge.

    ```mlir
    wafer.device @tiny target "mini" mesh 16 x 12 attributes {...} {
      wafer.stage @h.0.forward order 1 forward layer 0 {
        wafer.region @k4 "dataflow.matmul" at #wafer.rect<x = 0, y = 0, w = 3, h = 12> {...}
        wafer.flow @k4 -> @k5 bytes 24576 color 0 route [1, 6, 4, 6]
        wafer.ingress "h.0.attn.qkv.weight" -> @k4 bytes 49152 at [0, 6]
        ...
      }
    }
    ```
  }];
  let dependentDialects = ["::cgpt::transformer::TransformerDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Wafer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wafer_Dialect, mnemonic, traits>;

def Wafer_RectAttr : AttrDef<Wafer_Dialect, "Rect"> {
  let mnemonic = "rect";
  let summary = "a rectangle of cores: origin (x, y), width and height";
  let description = [{
    ```mlir
    #wafer.rect<x = 0, y = 0, w = 3, h = 12>
    ```
  }];
  let parameters = (ins "int64_t":$x, "int64_t":$y, "int64_t":$w,
                        "int64_t":$h);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    int64_t getCores() const { return getW() * getH(); }
    bool overlaps(RectAttr other) const {
      return getX() < other.getX() + other.getW() &&
             other.getX() < getX() + getW() &&
             getY() < other.getY() + other.getH() &&
             other.getY() < getY() + getH();
    }
    /// The core at the rectangle's centre, rounded down.
    std::pair<int64_t, int64_t> getCentre() const {
      return {getX() + (getW() - 1) / 2, getY() + (getH() - 1) / 2};
    }
  }];
}

def Wafer_DeviceOp : Wafer_Op<"device", [
    IsolatedFromAbove, Symbol, SymbolTable, SingleBlock, NoTerminator]> {
  let summary = "a training step compiled for one target";
  let description = [{
    Binds the program to a target (as it was named: a built-in or a target
    file's path; its mesh and per-core `sram_bytes`) and holds its stages in schedule order. The batch facts
    come from the dataflow program; `micro_batch` and `grad_accum_steps` are
    0 until `wafer-plan-batch` chooses them and says why in `plan`.
    `kept_bytes_per_sequence` is what every sequence keeps on the wafer for
    its backward pass, spread over all cores; `flops_per_sequence` is the
    step's algorithmic FLOPs for one sequence (recomputation excluded), the
    numerator of utilization.

    ```mlir
    wafer.device @tiny target "mini" mesh 16 x 12 attributes {global_batch = 8 : i64, ...} {
      wafer.stage @embed.forward order 0 forward { ... }
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$target,
                       CGPT_I64Attr:$width, CGPT_I64Attr:$height,
                       CGPT_I64Attr:$sram_bytes,
                       CGPT_I64Attr:$global_batch, CGPT_I64Attr:$num_csx,
                       CGPT_I64Attr:$seq_len,
                       Transformer_MicroBatchAttr:$micro_batch_request,
                       CGPT_I64Attr:$micro_batch,
                       CGPT_I64Attr:$grad_accum_steps,
                       CGPT_I64Attr:$kept_bytes_per_sequence,
                       CGPT_I64Attr:$parameters,
                       CGPT_I64Attr:$flops_per_sequence,
                       OptionalAttr<StrAttr>:$plan);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `target` $target `mesh` $width `x` $height attr-dict-with-keyword
    $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumCores() { return getWidth() * getHeight(); }
    /// The busiest system's share: the global batch is split as evenly as
    /// it goes, so some systems may get one sequence fewer.
    int64_t getPerSystemBatch() {
      return llvm::divideCeil(getGlobalBatch(), getNumCsx());
    }
    double getAlgorithmicFlopsPerStep() {
      return static_cast<double>(getFlopsPerSequence()) * getGlobalBatch();
    }
  }];
}

def Wafer_StageOp : Wafer_Op<"stage", [
    Symbol, SymbolTable, SingleBlock, NoTerminator, HasParent<"DeviceOp">]> {
  let summary = "what the whole mesh runs at one time";
  let description = [{
    One dataflow stage, `order`-th in the schedule: one layer's forward or
    backward pass, the embedding, or the loss turn-around. Its regions
    share the mesh; the next stage reuses it.

    ```mlir
    wafer.stage @h.0.backward order 4 backward layer 0 { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, CGPT_I64Attr:$order,
                       StrAttr:$phase, OptionalAttr<CGPT_I64Attr>:$layer);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `order` $order $phase (`layer` $layer^)? attr-dict-with-keyword
    $body
  }];
  let hasRegionVerifier = 1;
}

def Wafer_RegionOp : Wafer_Op<"region", [Symbol, HasParent<"StageOp">]> {
  let summary = "the cores one kernel runs on";
  let description = [{
    A kernel of the stage, with what placement and the memory check need,
    all per sequence of the micro-batch: the `flops` it executes, its
    `tile` and the number
    of `tiles`, the tile `efficiency` (work over padded work), the per-core
    `working_set` of one tile and its `stream_buffers` (the next tile of
    each input, arriving while the current one computes), the
    `stationary` bytes per sequence the
    kernel holds for the whole micro-batch (the activations a
    weight-streamed matmul keeps while the weights pass, attention's keys
    and values), and the `accumulator` bytes it holds once per pass
    whatever the micro-batch (a weight gradient summed over tokens). A
    matmul against a streamed weight of `weight_bytes` keeps whichever is
    smaller stationary: the activations for the micro-batch, or the weight
    (then the activations stream past it). Logical until placed `at` a
    rectangle. `sram_bytes` is the per-core
    peak `wafer-check-memory` found.

    ```mlir
    wafer.region @k4 "dataflow.matmul" at #wafer.rect<x = 0, y = 0, w = 3, h = 12>
        {accumulator = 0 : i64, efficiency = 1.0 : f64, flops = 1572864 : i64,
         stationary = 1024 : i64, stream_buffers = 3072 : i64,
         tile = array<i64: 4, 24, 8>, tiles = 1 : i64, weight_bytes = 768 : i64,
         working_set = 1408 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kernel,
                       OptionalAttr<Wafer_RectAttr>:$placement,
                       CGPT_I64Attr:$flops, DenseI64ArrayAttr:$tile,
                       CGPT_I64Attr:$tiles, F64Attr:$efficiency,
                       CGPT_I64Attr:$working_set,
                       CGPT_I64Attr:$stream_buffers, CGPT_I64Attr:$stationary,
                       CGPT_I64Attr:$accumulator,
                       OptionalAttr<CGPT_I64Attr>:$weight_bytes,
                       OptionalAttr<CGPT_I64Attr>:$sram_bytes);
  let assemblyFormat = "$sym_name $kernel (`at` $placement^)? attr-dict";
  let hasVerifier = 1;
}

def Wafer_FlowOp : Wafer_Op<"flow", [HasParent<"StageOp">]> {
  let summary = "a stream between two regions";
  let description = [{
    Carries `bytes` per sequence from region `source` to region `dest`.
    `wafer-route` gives it a routing `color` and a `route`: the corner
    points of an X-then-Y path between the regions' centres, as
    `[x0, y0, x1, y1, ...]`.

    ```mlir
    wafer.flow @k4 -> @k5 bytes 24576 color 0 route [1, 5, 4, 5]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$source, FlatSymbolRefAttr:$dest,
                       CGPT_I64Attr:$bytes, OptionalAttr<CGPT_I64Attr>:$color,
                       OptionalAttr<DenseI64ArrayAttr>:$route);
  let assemblyFormat = [{
    $source `->` $dest `bytes` $bytes (`color` $color^)? (`route` $route^)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Mesh hops along the route (0 before routing).
    int64_t getHops();
  }];
}

def Wafer_IngressOp : Wafer_Op<"ingress", [HasParent<"StageOp">]> {
  let summary = "where a weight stream enters the mesh";
  let description = [{
    The named weight enters at the mesh's west edge, in the row of the
    region that reads it (`at`, set by placement), `bytes` per pass.

    ```mlir
    wafer.ingress "h.0.attn.qkv.weight" -> @k4 bytes 49152 at [0, 5]
    ```
  }];
  let arguments = (ins StrAttr:$weight, FlatSymbolRefAttr:$dest,
                       CGPT_I64Attr:$bytes,
                       OptionalAttr<DenseI64ArrayAttr>:$at);
  let assemblyFormat = "$weight `->` $dest `bytes` $bytes (`at` $at^)? attr-dict";
}

def Wafer_EgressOp : Wafer_Op<"egress", [HasParent<"StageOp">]> {
  let summary = "where a weight gradient leaves the mesh";
  let description = [{
    ```mlir
    wafer.egress @k9 -> "h.0.attn.qkv.weight" bytes 49152 at [15, 5]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$source, StrAttr:$weight,
                       CGPT_I64Attr:$bytes,
                       OptionalAttr<DenseI64ArrayAttr>:$at);
  let assemblyFormat = "$source `->` $weight `bytes` $bytes (`at` $at^)? attr-dict";
}

#endif // CGPT_DIALECT_WAFER_IR_WAFEROPS_TD
