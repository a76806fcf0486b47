//===- TransformerAttrs.td - transformer enums and attributes -*- tablegen -*-//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
#define CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD

include "cgpt/Dialect/Transformer/IR/TransformerDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Transformer_Activation : I32EnumAttr<"Activation",
    "nonlinearity of the feed-forward block", [
      I32EnumAttrCase<"gelu", 0>,
      I32EnumAttrCase<"gelu_tanh", 1>,
      I32EnumAttrCase<"relu", 2>,
      I32EnumAttrCase<"silu", 3>
    ]> {
  let cppNamespace = "::cgpt::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_ActivationAttr
    : EnumAttr<Transformer_Dialect, Transformer_Activation, "activation"> {
  let assemblyFormat = "$value";
}

def Transformer_ScoreScaling : I32EnumAttr<"ScoreScaling",
    "how attention scores are scaled before the softmax", [
      // 1/sqrt(head_size): the standard transformer.
      I32EnumAttrCase<"inv_sqrt_head_size", 0>,
      // 1/head_size: muP's attention scaling.
      I32EnumAttrCase<"inv_head_size", 1>
    ]> {
  let cppNamespace = "::cgpt::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_ScoreScalingAttr
    : EnumAttr<Transformer_Dialect, Transformer_ScoreScaling, "score_scaling"> {
  let assemblyFormat = "$value";
}

def Transformer_LossScaling : I32EnumAttr<"LossScaling",
    "what the summed cross-entropy is divided by", [
      I32EnumAttrCase<"num_tokens", 0>,
      I32EnumAttrCase<"batch_size", 1>
    ]> {
  let cppNamespace = "::cgpt::transformer";
  let genSpecializedAttr = 0;
}
def Transformer_LossScalingAttr
    : EnumAttr<Transformer_Dialect, Transformer_LossScaling, "loss_scaling"> {
  let assemblyFormat = "$value";
}

#endif // CGPT_DIALECT_TRANSFORMER_IR_TRANSFORMERATTRS_TD
