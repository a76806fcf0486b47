//===- MeshKernelOffload.h - kernels on the mesh in a step ------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The functional executor's offload (cgpt/Exec/KernelOffload.h) for
// `cgpt-run --functional --cycle-level`: every weight matmul and weight
// gradient the placed wafer IR streams or keeps resident (KernelValues.h),
// and every bias gradient (a token sum, TokenSumValues.h), runs on the
// cycle-level mesh with real values, on its region's rectangle and layout
// as placed, a routed experts' kernel one pass an expert on the rows routed
// to it, and the router's product (its softmax and choice of experts on
// the host), and so does every layer and RMS norm and its gradient
// (NormValues.h), the loss and its gradient (LossValues.h), every map
// that begins its region (MapValues.h: a gated block's product, a
// residual's sum), the embedding's lookup and the tables' gradients (the
// token embedding's and the learned positions': EmbeddingValues.h), and
// attention's forward pass (AttentionValues.h: the scores, softmax and
// weighted values of its region at once, as the flash-style programs keep
// them on the cores) and its backward pass (the probabilities
// recomputed); the other kernels stay with the executor. It counts what
// ran where, and why a kernel of those kinds stayed on the host.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_MESHKERNELOFFLOAD_H
#define CGPT_SIM_MESH_MESHKERNELOFFLOAD_H

#include "cgpt/Dialect/Dataflow/IR/Dataflow.h"
#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"
#include "cgpt/Exec/KernelOffload.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <string>

namespace cgpt::sim::mesh {

/// The largest mesh side on which kernels run with values: each step runs
/// every weight kernel and token sum, each holding its cores' buffers as
/// host floats.
constexpr int64_t kMaxValuesMeshSide = 128;

class MeshKernelOffload : public exec::KernelOffload {
public:
  /// Reads the placement of `device` (as PlacedStep::read does); fails
  /// with a diagnostic as that does, on a target the cycle-level model
  /// cannot run (checkCycleLevelTarget), and on a mesh of more than
  /// kMaxValuesMeshSide a side.
  static mlir::FailureOr<MeshKernelOffload> create(wafer::DeviceOp device);

  mlir::FailureOr<bool> run(mlir::Operation *op, wafer::RegionOp region,
                            exec::KernelFrame &frame,
                            int64_t sequences) override;
  mlir::FailureOr<bool> runFused(mlir::Operation *op,
                                 exec::KernelFrame &frame) override;

  /// Weight kernel, token sum, norm, norm gradient, attention (forward and
  /// backward), loss, loss gradient, map, embedding lookup and embedding
  /// gradient runs on the mesh, the maps fused into a weight matmul that
  /// ran in its epilogue and the router's choices made there (each in its
  /// product's weight kernel run), and the simulated cycles of them all.
  int64_t getWeightKernelRuns() const { return weightKernelRuns; }
  int64_t getTokenSumRuns() const { return tokenSumRuns; }
  int64_t getNormRuns() const { return normRuns; }
  int64_t getNormGradRuns() const { return normGradRuns; }
  int64_t getAttentionRuns() const { return attentionRuns; }
  int64_t getAttentionGradRuns() const { return attentionGradRuns; }
  int64_t getLossRuns() const { return lossRuns; }
  int64_t getLossGradRuns() const { return lossGradRuns; }
  int64_t getMapRuns() const { return mapRuns; }
  int64_t getFusedMapRuns() const { return fusedMapRuns; }
  int64_t getEmbeddingRuns() const { return embeddingRuns; }
  int64_t getEmbeddingGradRuns() const { return embeddingGradRuns; }
  int64_t getRouterChoices() const { return routerChoices; }
  int64_t getMeshCycles() const { return meshCycles; }
  /// Weight kernels and token sums left to the executor, by region and
  /// reason, with their runs.
  const std::map<std::string, int64_t> &getHostRuns() const { return hostRuns; }

private:
  struct Placed {
    wafer::KernelShape shape;
    wafer::Rect rect;
    wafer::Layout layout;
  };
  const target::WaferTargetModel *target = nullptr;
  llvm::DenseMap<mlir::Operation *, Placed> placed;
  /// A bias gradient on the mesh; false for any other op.
  mlir::FailureOr<bool> runTokenSum(mlir::Operation *op, wafer::RegionOp region,
                                    const Placed &where,
                                    exec::KernelFrame &frame,
                                    int64_t sequences);
  /// A layer or RMS norm on the mesh; false for any other op.
  mlir::FailureOr<bool> runNorm(mlir::Operation *op, wafer::RegionOp region,
                                const Placed &where, exec::KernelFrame &frame,
                                int64_t sequences);
  /// A layer or RMS norm's gradient on the mesh; false for any other op.
  mlir::FailureOr<bool> runNormGrad(mlir::Operation *op, wafer::RegionOp region,
                                    const Placed &where,
                                    exec::KernelFrame &frame,
                                    int64_t sequences);
  /// The loss on the mesh; false for any other op.
  mlir::FailureOr<bool> runLoss(mlir::Operation *op, wafer::RegionOp region,
                                const Placed &where, exec::KernelFrame &frame,
                                int64_t sequences);
  /// The loss's gradient on the mesh; false for any other op.
  mlir::FailureOr<bool> runLossGrad(mlir::Operation *op, wafer::RegionOp region,
                                    const Placed &where,
                                    exec::KernelFrame &frame,
                                    int64_t sequences);
  /// Attention's forward or backward pass on the mesh when `op` is the
  /// product of its queries and keys that begins it; the kernels fused
  /// after it are then done. False for any other op.
  mlir::FailureOr<bool>
  runAttention(mlir::Operation *op, wafer::RegionOp region, const Placed &where,
               exec::KernelFrame &frame, int64_t sequences);
  /// An embedding's lookup (with fused learned positions, run at their
  /// add, the lookup's rows left on the cores) or a table's gradient (the
  /// token embedding's or the learned positions') on the mesh; false for
  /// any other op.
  mlir::FailureOr<bool>
  runEmbedding(mlir::Operation *op, wafer::RegionOp region, const Placed &where,
               exec::KernelFrame &frame, int64_t sequences);
  /// The router's product on the mesh, a weight kernel's run (its softmax
  /// and choice of experts then on the host, and counted there).
  mlir::FailureOr<bool> runRoute(dataflow::RouteOp route,
                                 wafer::RegionOp region, const Placed &where,
                                 exec::KernelFrame &frame, int64_t sequences);
  /// A map that begins its region on the mesh; false for any other op.
  mlir::FailureOr<bool> runMap(mlir::Operation *op, wafer::RegionOp region,
                               const Placed &where, exec::KernelFrame &frame,
                               int64_t sequences);
  /// A routed experts' matmul, weight gradient or bias gradient on the
  /// mesh: each expert's pass on the rows routed to it.
  mlir::FailureOr<bool> runExperts(mlir::Operation *op, wafer::RegionOp region,
                                   const Placed &where,
                                   exec::KernelFrame &frame, int64_t sequences);
  /// Counts a run left to the executor, by region and reason.
  void onHost(wafer::RegionOp region, const std::string &reason);

  int64_t weightKernelRuns = 0, tokenSumRuns = 0, normRuns = 0,
          normGradRuns = 0, attentionRuns = 0, attentionGradRuns = 0,
          lossRuns = 0, lossGradRuns = 0, mapRuns = 0, fusedMapRuns = 0,
          embeddingRuns = 0, embeddingGradRuns = 0, routerChoices = 0,
          meshCycles = 0;
  /// The kernels fused into an attention pass or a weight matmul's
  /// epilogue, which its run on the mesh did.
  llvm::DenseSet<mlir::Operation *> done;
  /// The fused positions' adds whose lookups left their rows on the cores,
  /// to run the lookup's program with the positions' table: the region and
  /// the sequences.
  llvm::DenseMap<mlir::Operation *, std::pair<wafer::RegionOp, int64_t>>
      deferred;
  std::map<std::string, int64_t> hostRuns;
};

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_MESHKERNELOFFLOAD_H
