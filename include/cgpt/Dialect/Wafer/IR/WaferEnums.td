//===- WaferEnums.td - wafer dialect enums -----------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD
#define CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD

include "mlir/IR/EnumAttr.td"

def Wafer_EdgeKind : I32EnumAttr<"Edge", "where a kernel's weights come from", [
    // The kernel reads no weight.
    I32EnumAttrCase<"none", 0>,
    // Streamed in at the mesh's north edge and multicast down the columns.
    I32EnumAttrCase<"north", 1>,
    // Held on the region's cores for the whole step (layer pipelined).
    I32EnumAttrCase<"resident", 2>]> {
  let cppNamespace = "::cgpt::wafer";
}

def Wafer_ReduceAxis : I32EnumAttr<"ReduceAxis", "the mesh axis partial sums are reduced along", [
    // Nothing to reduce.
    I32EnumAttrCase<"none", 0>,
    // Along each token group's segment of a row (a weight matmul's sums,
    // a norm's statistics).
    I32EnumAttrCase<"rows", 1>,
    // Down each column of token groups; a weight gradient's chain then runs
    // on through every column of segments in turn.
    I32EnumAttrCase<"columns", 2>]> {
  let cppNamespace = "::cgpt::wafer";
}

def Wafer_ExecutionMode : I32EnumAttr<"ExecutionMode",
    "how the placed step runs on the wafer", [
    // One stage at a time over the mesh, its weights streamed in
    // (Cerebras's weight streaming).
    I32EnumAttrCase<"weight_streaming", 0>,
    // Every layer resident on its own rectangle, micro-batches flowing
    // through the layers as a pipeline.
    I32EnumAttrCase<"layer_pipelined", 1>]> {
  let cppNamespace = "::cgpt::wafer";
  let genSpecializedAttr = 0;
}

#endif // CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD
