//===- Executor.h - run a placed training step for real ---------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional mode of cgpt-run: the tiled dataflow program executes with
// real f32 numbers, stage by stage in the wafer's schedule, each kernel tile
// by tile with the tile its placed region holds, micro-batch by micro-batch
// and system by system as the batch plan splits the global batch. The
// weight servers' side follows: gradients summed over micro-batches,
// systems and tied uses, clipped by global norm, then AdamW with the
// schedule's learning rate. docs/functional.md describes it.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_EXEC_EXECUTOR_H
#define CGPT_EXEC_EXECUTOR_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Exec/KernelOffload.h"
#include "cgpt/Exec/Parameters.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace cgpt::exec {

struct ExecOptions {
  /// Round every stored stream (weights in, activations, gradients out) to
  /// bfloat16, accumulating in f32, as the wafer does in mixed precision.
  bool bf16Storage = false;
  /// Runs the kernels it takes in place of the executor's arithmetic.
  KernelOffload *offload = nullptr;
  /// The seed of the dropout masks (the session's).
  uint64_t dropoutSeed = 0;
};

/// One global batch: token ids and next-token labels, [batch, seq].
struct Batch {
  IdTensor tokens, labels;
};

/// The learning rate of 0-based optimizer step `step` under `schedule`;
/// after the last phase the rate stays at its end.
double learningRate(mlir::ArrayAttr schedule, int64_t step);

class Trainer {
public:
  /// Binds `program` (tiled) to the tiles and batch plan of `device`, the
  /// same program placed. Fails with a diagnostic when the two disagree or
  /// the program holds an op the executor does not know.
  static mlir::FailureOr<Trainer> create(dataflow::ProgramOp program,
                                         wafer::DeviceOp device,
                                         std::vector<ParameterSpec> specs,
                                         std::vector<Tensor> values,
                                         ExecOptions options);

  struct StepResult {
    double loss = 0, gradientNorm = 0, learningRate = 0;
  };
  /// Runs one optimizer step on the global batch.
  mlir::FailureOr<StepResult> step(const Batch &batch);

  llvm::ArrayRef<ParameterSpec> getSpecs() const { return specs; }
  llvm::ArrayRef<Tensor> getValues() const { return values; }
  /// AdamW's first and second moments, and the last step's summed,
  /// unclipped gradients.
  llvm::ArrayRef<Tensor> getFirstMoments() const { return firstMoments; }
  llvm::ArrayRef<Tensor> getSecondMoments() const { return secondMoments; }
  llvm::ArrayRef<Tensor> getGradients() const { return gradients; }
  /// The last step's expert choices of each mixture-of-experts router, by
  /// the router weight's name: [global batch, sequence, top_k] expert
  /// indices, for a reference to route its tokens as cgpt did.
  const std::map<std::string, Tensor> &getRouting() const { return routing; }
  /// Optimizer steps taken.
  int64_t getStepCount() const { return stepCount; }
  int64_t getGlobalBatch() const { return globalBatch; }
  int64_t getSeqLen() const { return seqLen; }
  int64_t getVocab() const { return vocab; }

private:
  Trainer() = default;
  /// Runs the sequences of the global batch from `firstSequence` on:
  /// `tokens` and `labels`.
  mlir::LogicalResult runMicroBatch(const IdTensor &tokens,
                                    const IdTensor &labels,
                                    int64_t firstSequence, double &loss);
  void applyOptimizer(StepResult &result);
  /// Keeps the experts `route` chose for the micro-batch from
  /// `firstSequence` on.
  void recordRouting(dataflow::RouteOp route, const KernelFrame &frame,
                     int64_t firstSequence);

  dataflow::ProgramOp program;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<int64_t, 3>> tiles;
  /// The region that places each kernel (not those fused into another's).
  llvm::DenseMap<mlir::Operation *, wafer::RegionOp> regionOf;
  std::vector<ParameterSpec> specs;
  llvm::StringMap<unsigned> indexOf;
  std::vector<Tensor> values, firstMoments, secondMoments, gradients;
  /// With bf16 storage, the weights rounded as they stream in this step.
  std::vector<Tensor> streamed;
  std::map<std::string, Tensor> routing;
  ExecOptions options;
  int64_t globalBatch = 0, numCsx = 1, microBatch = 0, seqLen = 0, vocab = 0;
  int64_t stepCount = 0;
};

} // namespace cgpt::exec

#endif // CGPT_EXEC_EXECUTOR_H
