//===- MapKind.td - the function an elementwise map applies -*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The function a `dataflow.map` applies to each element; the wafer region
// that runs a map first records it (`wafer.region @map.11 elementwise
// "dataflow.map" map mul ...`), which decides its program on the cores.
// Kept apart so that the wafer dialect's ODS can name it without the
// dataflow dialect's other definitions.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_DATAFLOW_IR_MAPKIND_TD
#define CGPT_DIALECT_DATAFLOW_IR_MAPKIND_TD

include "cgpt/Dialect/Dataflow/IR/DataflowDialect.td"
include "mlir/IR/EnumAttr.td"

def Dataflow_MapKind : I32EnumAttr<"MapKind", "an elementwise function", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"gelu_tanh", 2>,
    I32EnumAttrCase<"relu", 3>,
    I32EnumAttrCase<"silu", 4>,
    // Derivatives: (x, dy) -> dy * f'(x).
    I32EnumAttrCase<"gelu_grad", 5>,
    I32EnumAttrCase<"gelu_tanh_grad", 6>,
    I32EnumAttrCase<"relu_grad", 7>,
    I32EnumAttrCase<"silu_grad", 8>,
    // (x, y) -> x * y: the gate of a gated feed-forward block.
    I32EnumAttrCase<"mul", 9>
  ]> {
  let cppNamespace = "::cgpt::dataflow";
  let genSpecializedAttr = 0;
}

def Dataflow_MapKindAttr : EnumAttr<Dataflow_Dialect, Dataflow_MapKind, "map"> {
  let assemblyFormat = "$value";
}

#endif // CGPT_DIALECT_DATAFLOW_IR_MAPKIND_TD
