//===- Placer.h - strategies that lay a step out on the mesh ----*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A placer decides where every region of a step runs: its rectangle, its
// layout, its wave, and how the step runs (weight streaming or layer
// pipelined). `wafer-place{placer=NAME}` writes one placer's decisions into
// the IR; `wafer-plan-batch` asks placers for every micro-batch it weighs
// and keeps the plan whose schedule is fastest. docs/adding-a-placer.md
// walks through adding one.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_ANALYSIS_PLACER_H
#define CGPT_DIALECT_WAFER_ANALYSIS_PLACER_H

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

#include <memory>
#include <optional>
#include <string>

namespace cgpt::wafer {

class Placer {
public:
  virtual ~Placer();
  /// The name `wafer-place{placer=...}` and `--placer` take.
  virtual llvm::StringRef getName() const = 0;
  /// How a step it places runs.
  virtual ExecutionMode getMode() const = 0;
  /// Places every region of `program` for passes of `microBatch` sequences,
  /// or says in `whyNot` why it cannot (a sentence naming the limit).
  virtual std::optional<Placement> place(const StepProgram &program,
                                         int64_t microBatch,
                                         std::string &whyNot) const = 0;
};

/// Every kernel over the whole mesh, one after another; the stage's
/// token-major kernels share the split that makes them fastest together.
std::unique_ptr<Placer> createWholeMeshPlacer();
/// As whole-mesh, but independent kernels of a stage share the mesh side
/// by side, each on its own band of columns, where that is faster.
std::unique_ptr<Placer> createSideBySidePlacer();
/// Layer pipelined: every layer (and the embedding and the loss) resident
/// on its own band of columns, micro-batches flowing through them.
std::unique_ptr<Placer> createPipelinedPlacer();

/// The placers by name, in the order the planner weighs them.
llvm::ArrayRef<llvm::StringRef> getPlacerNames();
/// The placers a plan weighs unless asked otherwise: weight streaming,
/// with kernels side by side where that helps, as current Cerebras
/// software runs GPT models.
llvm::ArrayRef<llvm::StringRef> getDefaultPlacerNames();
/// The placer named `name`, or null.
std::unique_ptr<Placer> createPlacer(llvm::StringRef name);

} // namespace cgpt::wafer

#endif // CGPT_DIALECT_WAFER_ANALYSIS_PLACER_H
