//===- PrintCosts.cpp - dataflow-print-costs ------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Dataflow/Analysis/StepCosts.h"
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h"
#include "cgpt/Support/Format.h"

namespace cgpt::dataflow {
#define GEN_PASS_DEF_DATAFLOWPRINTCOSTS
#include "cgpt/Dialect/Dataflow/Transforms/Passes.h.inc"

namespace {
struct DataflowPrintCosts : impl::DataflowPrintCostsBase<DataflowPrintCosts> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    for (auto program : getOperation().getOps<ProgramOp>()) {
      StepCosts c = computeStepCosts(program);
      os << "program " << program.getSymName() << "\n"
         << "  algorithmic_flops_per_sequence: " << c.flopsPerSequence << "\n"
         << "  recompute_flops_per_sequence: " << c.recomputeFlopsPerSequence
         << "\n"
         << "  weight_bytes_in_per_pass: " << c.weightBytesIn << "\n"
         << "  gradient_bytes_out_per_pass: " << c.gradientBytesOut << "\n"
         << "  kept_activation_bytes_per_sequence: " << c.keptBytesPerSequence
         << "\n"
         << "  kept_activation_bytes_per_sequence_per_layer: "
         << c.keptBytesPerSequencePerLayer << " (" << c.layers << " layers)\n"
         << "  algorithmic_flops_per_step: "
         << formatExactDouble(c.algorithmicFlopsPerStep()) << "\n"
         << "  streamed_bytes_per_pass_per_system: " << c.streamedBytesPerPass()
         << "\n";
      if (c.passesPerSystem)
        os << "  streamed_bytes_per_step_per_system: "
           << formatExactDouble(c.streamedBytesPerStep()) << " ("
           << c.passesPerSystem << " passes)\n";
      else
        os << "  passes_per_system: planned by wafer-plan-batch\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
} // namespace cgpt::dataflow
