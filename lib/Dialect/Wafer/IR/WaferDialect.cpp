//===- WaferDialect.cpp - wafer dialect, attributes and verifiers ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Support/BatchChecks.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cgpt::wafer;

#include "cgpt/Dialect/Wafer/IR/WaferOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cgpt/Dialect/Wafer/IR/WaferAttrs.cpp.inc"

void WaferDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cgpt/Dialect/Wafer/IR/WaferOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cgpt/Dialect/Wafer/IR/WaferAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DeviceOp
//===----------------------------------------------------------------------===//

LogicalResult DeviceOp::verifyRegions() {
  if (getWidth() <= 0 || getHeight() <= 0 || getSramBytes() <= 0)
    return emitOpError() << "mesh and sram_bytes must be positive, got "
                         << getWidth() << " x " << getHeight() << " and "
                         << getSramBytes();
  if (failed(cgpt::verifyBatchFacts(*this, getGlobalBatch(), getNumCsx(),
                                    getSeqLen())) ||
      failed(
          cgpt::verifyBatchPlan(*this, getMicroBatch(), getGradAccumSteps())))
    return failure();
  if (getKeptBytesPerSequence() < 0 ||
      getKeptBytesPerSequence() > cgpt::kMaxPerSequence)
    return emitOpError() << "kept_bytes_per_sequence ("
                         << getKeptBytesPerSequence() << ") must be 0 to "
                         << cgpt::kMaxPerSequence;
  int64_t micro = getMicroBatch(), steps = getGradAccumSteps();
  if (micro && micro * steps != getPerSystemBatch())
    return emitOpError() << "micro_batch (" << micro << ") x grad_accum_steps ("
                         << steps << ") must equal the per-system batch ("
                         << getPerSystemBatch() << ")";
  int64_t expected = 0;
  for (auto stage : getBody().front().getOps<StageOp>())
    if (stage.getOrder() != expected++)
      return stage.emitOpError()
             << "has order " << stage.getOrder() << " but is stage #"
             << expected - 1 << " of the schedule";
  return success();
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verifyRegions() {
  auto device = (*this)->getParentOfType<DeviceOp>();
  mlir::SymbolTable symbols(*this);
  SmallVector<RegionOp> placed;
  for (Operation &op : getBody().front()) {
    auto requireRegion = [&](FlatSymbolRefAttr ref) -> LogicalResult {
      if (isa_and_nonnull<RegionOp>(symbols.lookup(ref.getAttr())))
        return success();
      return op.emitOpError()
             << "refers to " << ref << ", which is not a region of stage "
             << getSymNameAttr();
    };
    if (auto flow = dyn_cast<FlowOp>(op)) {
      if (failed(requireRegion(flow.getSourceAttr())) ||
          failed(requireRegion(flow.getDestAttr())))
        return failure();
    } else if (auto ingress = dyn_cast<IngressOp>(op)) {
      if (failed(requireRegion(ingress.getDestAttr())))
        return failure();
    } else if (auto egress = dyn_cast<EgressOp>(op)) {
      if (failed(requireRegion(egress.getSourceAttr())))
        return failure();
    } else if (auto region = dyn_cast<RegionOp>(op)) {
      RectAttr rect = region.getPlacementAttr();
      if (!rect)
        continue;
      if (rect.getX() < 0 || rect.getY() < 0 ||
          rect.getX() + rect.getW() > device.getWidth() ||
          rect.getY() + rect.getH() > device.getHeight())
        return region.emitOpError()
               << "is placed at " << rect << " outside the "
               << device.getWidth() << " x " << device.getHeight()
               << " mesh of target '" << device.getTarget() << "'";
      for (RegionOp other : placed)
        if (other.getPlacementAttr().overlaps(rect)) {
          InFlightDiagnostic diag = region.emitOpError()
                                    << "at " << rect << " overlaps region "
                                    << other.getSymNameAttr() << " at "
                                    << other.getPlacementAttr();
          diag.attachNote(other.getLoc()) << "the other region";
          return diag;
        }
      placed.push_back(region);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RegionOp, FlowOp
//===----------------------------------------------------------------------===//

LogicalResult RegionOp::verify() {
  if (getFlops() < 0 || getTiles() < 1 || getWorkingSet() < 0 ||
      getStationary() < 0 || getAccumulator() < 0)
    return emitOpError() << "flops, working_set, stationary and accumulator "
                            "must be non-negative and tiles positive";
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"tiles", getTiles()},
                             {"working_set", getWorkingSet()},
                             {"stream_buffers", getStreamBuffers()},
                             {"stationary", getStationary()},
                             {"accumulator", getAccumulator()},
                             {"weight_bytes", getWeightBytes().value_or(0)}})
    if (value > cgpt::kMaxPerSequence)
      return emitOpError() << name << " (" << value << ") exceeds the limit of "
                           << cgpt::kMaxPerSequence;
  double efficiency = getEfficiency().convertToDouble();
  if (!(efficiency > 0 && efficiency <= 1))
    return emitOpError() << "efficiency must be in (0, 1], got " << efficiency;
  if (RectAttr rect = getPlacementAttr())
    if (rect.getW() < 1 || rect.getH() < 1)
      return emitOpError() << "is placed on an empty rectangle " << rect;
  return success();
}

int64_t FlowOp::getHops() {
  std::optional<ArrayRef<int64_t>> route = getRoute();
  if (!route)
    return 0;
  int64_t hops = 0;
  for (size_t i = 2; i + 1 < route->size(); i += 2)
    hops += std::abs((*route)[i] - (*route)[i - 2]) +
            std::abs((*route)[i + 1] - (*route)[i - 1]);
  return hops;
}

LogicalResult FlowOp::verify() {
  if (getBytes() < 0)
    return emitOpError() << "bytes must be non-negative, got " << getBytes();
  if (std::optional<int64_t> color = getColor(); color && *color < 0)
    return emitOpError() << "color must be non-negative, got " << *color;
  std::optional<ArrayRef<int64_t>> route = getRoute();
  if (!route)
    return success();
  if (route->size() < 4 || route->size() % 2 != 0)
    return emitOpError() << "route must list at least two (x, y) points, "
                            "got "
                         << route->size() << " numbers";
  for (size_t i = 2; i + 1 < route->size(); i += 2)
    if ((*route)[i] != (*route)[i - 2] && (*route)[i + 1] != (*route)[i - 1])
      return emitOpError() << "route leg " << i / 2
                           << " is diagonal; mesh routes move along one "
                              "axis at a time";
  return success();
}

#define GET_OP_CLASSES
#include "cgpt/Dialect/Wafer/IR/WaferOps.cpp.inc"
