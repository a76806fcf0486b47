//===- DataflowBase.td - dataflow types, attributes, interfaces -*- tablegen -*-//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_DATAFLOWBASE_TD
#define CGPT_DIALECT_DATAFLOW_IR_DATAFLOWBASE_TD

include "cgpt/Dialect/Dataflow/IR/DataflowDialect.td"
include "cgpt/Dialect/Dataflow/IR/KernelKind.td"
include "cgpt/Dialect/Dataflow/IR/MapKind.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Dataflow_Type<string name, string typeMnemonic>
    : TypeDef<Dataflow_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def Dataflow_StreamType : Dataflow_Type<"Stream", "stream"> {
  let summary = "tensor data flowing tile by tile from one kernel to others";
  let description = [{
    A stream carries the tiles of one tensor from the kernel that produces
    it to the kernels that consume it. The leading dimension of an
    activation is the micro-batch (`?` until the batch is planned).

    ```mlir
    !dataflow.stream<tensor<?x2048x768xbf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensor);
  let assemblyFormat = "`<` $tensor `>`";
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<int64_t> getShape() const { return getTensor().getShape(); }
    ::mlir::Type getElementType() const { return getTensor().getElementType(); }
  }];
}

def Dataflow_BufferType : Dataflow_Type<"Buffer", "buffer"> {
  let summary = "an activation kept on the wafer for the backward pass";
  let description = [{
    A buffer holds a stream's tensor in core memory from a forward stage
    until a backward stage fetches it.

    ```mlir
    !dataflow.buffer<tensor<?x2048x768xbf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensor);
  let assemblyFormat = "`<` $tensor `>`";
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dataflow_Phase : I32EnumAttr<"Phase", "which pass a stage belongs to", [
    I32EnumAttrCase<"forward", 0>,
    // The turn-around: final norm, head, loss and their gradients.
    I32EnumAttrCase<"loss", 1>,
    I32EnumAttrCase<"backward", 2>
  ]> {
  let cppNamespace = "::cgpt::dataflow";
  let genSpecializedAttr = 0;
}
def Dataflow_PhaseAttr : EnumAttr<Dataflow_Dialect, Dataflow_Phase, "phase"> {
  let assemblyFormat = "$value";
}


def Dataflow_Recompute : I32EnumAttr<"Recompute",
    "which activations the backward pass recomputes", [
      // Keep every activation the backward kernels read.
      I32EnumAttrCase<"none", 0>,
      // Keep each decoder layer's input; rerun the layer's forward kernels
      // at the start of its backward stage.
      I32EnumAttrCase<"layer", 1>,
      // As layer, then rebuild again, just before the backward kernel that
      // reads it, each recomputed tensor that would stay live across the
      // stage's peak (LateRebuild.h).
      I32EnumAttrCase<"tensor", 2>
    ]> {
  let cppNamespace = "::cgpt::dataflow";
  let genSpecializedAttr = 0;
}
def Dataflow_RecomputeAttr
    : EnumAttr<Dataflow_Dialect, Dataflow_Recompute, "recompute"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Dataflow_TileAttr : AttrDef<Dataflow_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "the piece of a kernel's iteration space one core works on";
  let description = [{
    A tile gives, per dimension of the kernel's tiling space, how much of
    it one core handles at a time. The space is per sequence: a matrix
    multiply tiles `[M, N, K]`, an elementwise map or a row reduction
    `[rows, columns]` (see each kernel). A tile must fit in its space; an
    extent that the tile does not divide leaves a partial tile at the edge.

    ```mlir
    #dataflow.tile<[48, 48, 48]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizes);
  let assemblyFormat = "`<` `[` $sizes `]` `>`";
}

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Dataflow_KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::cgpt::dataflow";
  let description = [{
    A kernel: work the wafer's cores execute. It states its algorithmic
    FLOPs, the iteration space its tile divides, the class of work that
    decides its layout on the mesh, and the weight it streams in or the
    gradient it accumulates.
  }];
  let methods = [
    InterfaceMethod<"Algorithmic FLOPs for one sequence of the micro-batch "
                    "(docs/dataflow.md, section on FLOPs, gives each kernel's convention).",
                    "int64_t", "getFlopsPerSequence">,
    InterfaceMethod<"The extents, for one sequence, that `tile` divides.",
                    "::llvm::SmallVector<int64_t>", "getTilingSpace">,
    InterfaceMethod<[{
        FLOPs the cores execute for one sequence: what the timing model
        charges. The algorithmic count follows the paper's conventions
        (a lookup counted as a one-hot product, say); this one counts the
        arithmetic actually done.
      }], "int64_t", "getExecutedFlopsPerSequence", (ins), [{}], [{
        return $_op.getFlopsPerSequence();
      }]>,
    InterfaceMethod<[{
        The kind of work the kernel does: dataflow-to-wafer lays a kernel
        out on the mesh by its class (docs/wafer.md).
      }], "::cgpt::dataflow::KernelKind", "getKernelKind", (ins), [{}], [{
        return ::cgpt::dataflow::KernelKind::elementwise;
      }]>,
    InterfaceMethod<[{
        The weight the kernel reads as it streams in from off-wafer storage
        (a matmul's static operand, an embedding table), or null: what
        dataflow-to-wafer records as the region's streamed bytes.
      }], "::mlir::Value", "getStreamedWeight", (ins), [{}], [{
        return {};
      }]>,
    InterfaceMethod<[{
        The static tensor the kernel sums over the whole pass (a weight or
        bias gradient, held in f32 on the cores until it streams out), or
        null: dataflow-to-wafer reserves its accumulator.
      }], "::mlir::Value", "getAccumulatedGradient", (ins), [{}], [{
        return {};
      }]>,
    InterfaceMethod<[{
        The experts a routed kernel runs one after another, each on the
        tokens routed to it (its tiling space counts every routed token),
        or 0: dataflow-to-wafer records it as the region's `experts`.
      }], "int64_t", "getRoutedExperts", (ins), [{}], [{
        return 0;
      }]>,
  ];
  let extraSharedClassDeclaration = [{
    /// The tile chosen by dataflow-tile, if any.
    ::cgpt::dataflow::TileAttr getTileOrNull() {
      return $_op->template getAttrOfType<::cgpt::dataflow::TileAttr>("tile");
    }
    /// True when the kernel recomputes a forward activation for backward.
    bool isRecompute() { return $_op->hasAttr("recompute"); }
  }];
  let verify = [{
    return ::cgpt::dataflow::verifyKernel($_op);
  }];
}

#endif // CGPT_DIALECT_DATAFLOW_IR_DATAFLOWBASE_TD
