//===- TrainingAttrs.td - shared training attributes -------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_TRAINING_IR_TRAININGATTRS_TD
#define CGPT_DIALECT_TRAINING_IR_TRAININGATTRS_TD

include "cgpt/Dialect/Training/IR/TrainingDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Training_ScheduleKind : I32EnumAttr<"ScheduleKind",
    "shape of one learning-rate phase", [
      I32EnumAttrCase<"constant", 0>,
      I32EnumAttrCase<"linear", 1>,
      I32EnumAttrCase<"cosine", 2>
    ]> {
  let cppNamespace = "::cgpt::training";
  let genSpecializedAttr = 0;
}

def Training_MicroBatchMode : I32EnumAttr<"MicroBatchMode",
    "how the per-system micro-batch is chosen", [
      I32EnumAttrCase<"automatic", 0, "auto">,
      I32EnumAttrCase<"explore", 1>,
      I32EnumAttrCase<"none", 2>,
      I32EnumAttrCase<"fixed", 3>
    ]> {
  let cppNamespace = "::cgpt::training";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// An i64 attribute read as int64_t, so that a negative size written in IR
// fails the verifiers' `<= 0` checks instead of reading as a huge unsigned.
def CGPT_I64Attr
    : TypedSignlessIntegerAttrBase<I64, "int64_t", "64-bit integer attribute">;

class Training_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Training_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A double printed with the fewest digits that read back to the same value,
// so hyper-parameters such as 0.9 or 1/3 round-trip exactly and read well.
def Training_F64Param : AttrOrTypeParameter<"::llvm::APFloat", "a 64-bit float"> {
  let parser = [{ ::cgpt::training::parseExactDouble($_parser) }];
  let printer = [{ ::cgpt::training::printExactDouble($_printer, $_self) }];
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
}

def Training_AdamWAttr : Training_Attr<"AdamW", "adamw"> {
  let summary = "AdamW hyper-parameters of the weight servers' optimizer";
  let description = [{
    The decoupled-weight-decay Adam optimizer that the weight servers run
    after each global batch. Bias correction is always applied. The
    learning rate is not part of it: see the step's `schedule`.

    ```mlir
    #training.adamw<beta1 = 0.9, beta2 = 0.95, epsilon = 1e-08, weight_decay = 0.1>
    ```
  }];
  let parameters = (ins Training_F64Param:$beta1, Training_F64Param:$beta2,
                        Training_F64Param:$epsilon,
                        Training_F64Param:$weight_decay);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Training_LRPhaseAttr : Training_Attr<"LRPhase", "lr_phase"> {
  let summary = "one phase of the learning-rate schedule";
  let description = [{
    The learning rate moves from `start` to `end` over `steps` optimizer
    steps, linearly or along a half cosine; a `constant` phase holds `start`.
    A phase with `steps = 0` lasts until the end of training and may only be
    the last one.

    ```mlir
    #training.lr_phase<kind = linear, start = 0.0, end = 0.0002, steps = 1500>
    ```
  }];
  let parameters = (ins EnumParameter<Training_ScheduleKind>:$kind,
                        Training_F64Param:$start, Training_F64Param:$end,
                        "int64_t":$steps);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Training_PrecisionAttr : Training_Attr<"Precision", "precision"> {
  let summary = "storage and accumulation element types";
  let description = [{
    Mixed precision as the wafer runs it: weights, activations and gradients
    are stored as `storage` (bf16 for the Cerebras-GPT runs), products are
    accumulated and reductions done in `accumulate` (f32), and the weight
    servers keep f32 master weights.

    ```mlir
    #training.precision<storage = bf16, accumulate = f32>
    ```
  }];
  let parameters = (ins "::mlir::Type":$storage, "::mlir::Type":$accumulate);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Training_MuPAttr : Training_Attr<"MuP", "mup"> {
  let summary = "maximal-update parametrization (muP) multipliers";
  let description = [{
    The muP multipliers of a step: the factor applied to the input
    embeddings, to the output logits, and to the learning rate of the
    decoder's matrix weights (`adjust_learning_rate.decoder_kernel` in Model
    Zoo files). Attention score scaling by 1/head_size is stated on each
    `transformer.attention`. A standard-parametrized model has no `mup`.

    ```mlir
    #training.mup<embeddings_scale = 10.0, output_logits_scale = 0.3333333333333333,
                     decoder_kernel_lr_scale = 0.3333333333333333>
    ```
  }];
  let parameters = (ins Training_F64Param:$embeddings_scale,
                        Training_F64Param:$output_logits_scale,
                        Training_F64Param:$decoder_kernel_lr_scale);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Training_MicroBatchAttr : Training_Attr<"MicroBatch", "micro_batch"> {
  let summary = "the user's micro-batch request";
  let description = [{
    Model Zoo's `micro_batch_size`: `auto` lets the compiler pick the
    micro-batch, `explore` evaluates every candidate in `min to max` (0
    means unbounded), `none` runs the whole per-system batch at once, and an
    integer bounds every pass. Passes split the per-system batch evenly, as
    Model Zoo 2.5+ does: 30 sequences at 8 run as 8, 8, 7 and 7.

    ```mlir
    #training.micro_batch<auto>
    #training.micro_batch<explore 8 to 64>
    #training.micro_batch<none>
    #training.micro_batch<88>
    ```
  }];
  let parameters = (ins EnumParameter<Training_MicroBatchMode>:$mode,
                        "int64_t":$size, "int64_t":$min, "int64_t":$max);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // CGPT_DIALECT_TRAINING_IR_TRAININGATTRS_TD
