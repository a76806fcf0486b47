//===- WaferEnums.td - wafer dialect enums -----------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD
#define CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD

include "mlir/IR/EnumAttr.td"

def Wafer_KernelKind : I32EnumAttr<"KernelKind", "how a kernel runs on the mesh", [
    I32EnumAttrCase<"weight_matmul", 0>,
    I32EnumAttrCase<"weight_grad", 1>,
    I32EnumAttrCase<"attention", 2>,
    I32EnumAttrCase<"reduction", 3>,
    I32EnumAttrCase<"elementwise", 4>,
    I32EnumAttrCase<"embedding", 5>]> {
  let cppNamespace = "::cgpt::wafer";
}

def Wafer_EdgeKind : I32EnumAttr<"Edge", "where a stream enters or leaves the mesh", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"north", 1>]> {
  let cppNamespace = "::cgpt::wafer";
}

def Wafer_ReduceAxis : I32EnumAttr<"ReduceAxis", "the mesh axis partial sums are reduced along", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"rows", 1>,
    I32EnumAttrCase<"columns", 2>]> {
  let cppNamespace = "::cgpt::wafer";
}

#endif // CGPT_DIALECT_WAFER_IR_WAFERENUMS_TD
