//===- TrainingDialect.cpp - shared training attributes -------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Training/IR/Training.h"
#include "cgpt/Support/Format.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgpt::training;
using cgpt::formatExactDouble;

#include "cgpt/Dialect/Training/IR/TrainingDialect.cpp.inc"
#include "cgpt/Dialect/Training/IR/TrainingEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Training/IR/TrainingAttrs.cpp.inc"

void TrainingDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgpt/Dialect/Training/IR/TrainingAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Exact doubles
//===----------------------------------------------------------------------===//

FailureOr<APFloat> cgpt::training::parseExactDouble(AsmParser &parser) {
  double value = 0;
  if (parser.parseFloat(value))
    return failure();
  return APFloat(value);
}

void cgpt::training::printExactDouble(AsmPrinter &printer,
                                      const APFloat &value) {
  printer << cgpt::formatExactDouble(value.convertToDouble());
}

//===----------------------------------------------------------------------===//
// Attribute verifiers
//===----------------------------------------------------------------------===//

LogicalResult AdamWAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                APFloat beta1Value, APFloat beta2Value,
                                APFloat epsilonValue,
                                APFloat weightDecayValue) {
  double beta1 = beta1Value.convertToDouble();
  double beta2 = beta2Value.convertToDouble();
  double epsilon = epsilonValue.convertToDouble();
  double weightDecay = weightDecayValue.convertToDouble();
  if (!(beta1 >= 0 && beta1 < 1))
    return emitError() << "adamw beta1 must be in [0, 1), got "
                       << formatExactDouble(beta1);
  if (!(beta2 >= 0 && beta2 < 1))
    return emitError() << "adamw beta2 must be in [0, 1), got "
                       << formatExactDouble(beta2);
  if (!(epsilon > 0))
    return emitError() << "adamw epsilon must be positive, got "
                       << formatExactDouble(epsilon);
  if (!(weightDecay >= 0))
    return emitError() << "adamw weight_decay must be non-negative, got "
                       << formatExactDouble(weightDecay);
  return success();
}

LogicalResult LRPhaseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ScheduleKind kind, APFloat startValue,
                                  APFloat endValue, int64_t steps) {
  double start = startValue.convertToDouble();
  double end = endValue.convertToDouble();
  if (!(start >= 0) || !(end >= 0))
    return emitError() << "learning rates must be non-negative, got start "
                       << formatExactDouble(start) << " and end "
                       << formatExactDouble(end);
  if (steps < 0)
    return emitError() << "lr_phase steps must be non-negative, got " << steps;
  if (kind == ScheduleKind::constant && start != end)
    return emitError() << "a constant lr_phase must have start == end, got "
                       << formatExactDouble(start) << " and "
                       << formatExactDouble(end);
  return success();
}

LogicalResult
PrecisionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      Type storage, Type accumulate) {
  auto storageFloat = llvm::dyn_cast<FloatType>(storage);
  auto accumulateFloat = llvm::dyn_cast<FloatType>(accumulate);
  if (!storageFloat || !accumulateFloat)
    return emitError() << "precision types must be floats, got storage "
                       << storage << " and accumulate " << accumulate;
  if (accumulateFloat.getWidth() < storageFloat.getWidth())
    return emitError() << "accumulate type " << accumulate
                       << " is narrower than storage type " << storage;
  return success();
}

LogicalResult MuPAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat embeddingsScaleValue,
                              APFloat outputLogitsScaleValue,
                              APFloat decoderKernelLrScaleValue) {
  double embeddingsScale = embeddingsScaleValue.convertToDouble();
  double outputLogitsScale = outputLogitsScaleValue.convertToDouble();
  double decoderKernelLrScale = decoderKernelLrScaleValue.convertToDouble();
  if (!(embeddingsScale > 0) || !(outputLogitsScale > 0) ||
      !(decoderKernelLrScale > 0))
    return emitError() << "mup multipliers must be positive, got "
                       << "embeddings_scale "
                       << formatExactDouble(embeddingsScale)
                       << ", output_logits_scale "
                       << formatExactDouble(outputLogitsScale)
                       << ", decoder_kernel_lr_scale "
                       << formatExactDouble(decoderKernelLrScale);
  return success();
}

//===----------------------------------------------------------------------===//
// MicroBatchAttr
//===----------------------------------------------------------------------===//

LogicalResult
MicroBatchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       MicroBatchMode mode, int64_t size, int64_t min,
                       int64_t max) {
  switch (mode) {
  case MicroBatchMode::fixed:
    if (size <= 0)
      return emitError() << "micro-batch size must be positive, got " << size;
    return success();
  case MicroBatchMode::explore:
    if (min < 0 || max < 0 || (max != 0 && min > max))
      return emitError() << "micro-batch explore range must satisfy 0 <= min "
                            "<= max (0 = unbounded), got "
                         << min << " to " << max;
    return success();
  case MicroBatchMode::automatic:
  case MicroBatchMode::none:
    return success();
  }
  return success();
}

Attribute MicroBatchAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  auto emitError = [&] {
    return parser.emitError(parser.getCurrentLocation());
  };
  if (parser.parseLess())
    return {};
  int64_t size = 0;
  OptionalParseResult sizeResult = parser.parseOptionalInteger(size);
  if (sizeResult.has_value()) {
    if (failed(*sizeResult) || parser.parseGreater())
      return {};
    return getChecked(emitError, ctx, MicroBatchMode::fixed, size, 0, 0);
  }
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<MicroBatchMode> mode = symbolizeMicroBatchMode(keyword);
  if (!mode || *mode == MicroBatchMode::fixed) {
    parser.emitError(parser.getCurrentLocation())
        << "expected an integer, 'auto', 'explore' or 'none', got '" << keyword
        << "'";
    return {};
  }
  int64_t min = 0, max = 0;
  if (*mode == MicroBatchMode::explore) {
    OptionalParseResult minResult = parser.parseOptionalInteger(min);
    if (minResult.has_value() &&
        (failed(*minResult) || parser.parseKeyword("to") ||
         parser.parseInteger(max)))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked(emitError, ctx, *mode, 0, min, max);
}

void MicroBatchAttr::print(AsmPrinter &printer) const {
  printer << '<';
  switch (getMode()) {
  case MicroBatchMode::fixed:
    printer << getSize();
    break;
  case MicroBatchMode::explore:
    printer << "explore";
    if (getMin() != 0 || getMax() != 0)
      printer << ' ' << getMin() << " to " << getMax();
    break;
  default:
    printer << stringifyMicroBatchMode(getMode());
  }
  printer << '>';
}
