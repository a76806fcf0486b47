//===- StepProgram.cpp - a device's step, and where it runs ---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/Analysis/StepProgram.h"

#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;

namespace cgpt::wafer {

//===----------------------------------------------------------------------===//
// StepProgram
//===----------------------------------------------------------------------===//

// The layers of a model are alike: build() numbers the classes of regions
// and stages by these keys, so that the timing, the layout search and the
// placers decide once a class.

/// Appends what `region`'s time depends on besides its placement to
/// `key`: its kernel (a kernel may have a cost model of its own) and every
/// field of its shape.
static void appendCostKey(const ProgramRegion &region,
                          std::vector<int64_t> &key) {
  const KernelShape &k = region.shape;
  key.insert(key.end(), {reinterpret_cast<intptr_t>(
                             region.op.getKernelAttr().getAsOpaquePointer()),
                         static_cast<int64_t>(k.kind), k.rows, k.columns,
                         k.contracted, k.flops, k.elementBytes, k.weightBytes,
                         k.accumulator, k.chunks, k.repeats, k.experts,
                         k.expertRows, static_cast<int64_t>(k.function),
                         static_cast<int64_t>(k.map), k.positionRows, k.choices,
                         k.nullLogit ? 1 : 0, k.roundLogits ? 1 : 0});
}

/// Appends what `region`'s cost and grouping depend on to `key`.
static void appendRegionKey(const ProgramRegion &region,
                            std::vector<int64_t> &key) {
  appendCostKey(region, key);
  key.insert(key.end(), {region.ingressBytes > 0 ? 1 : 0,
                         static_cast<int64_t>(region.reads.size())});
  key.insert(key.end(), region.reads.begin(), region.reads.end());
}

/// Everything a stage's placement depends on.
static std::vector<int64_t> stageKey(const ProgramStage &stage) {
  std::vector<int64_t> key;
  for (const ProgramRegion &region : stage.regions)
    appendRegionKey(region, key);
  return key;
}

FailureOr<StepProgram> StepProgram::build(DeviceOp device) {
  FailureOr<const target::WaferTargetModel *> target = device.getTargetModel();
  if (failed(target))
    return failure();
  StepProgram program;
  program.device = device;
  program.target = *target;
  program.seqLen = device.getSeqLen();
  program.perSystemBatch = device.getPerSystemBatch();
  program.globalBatch = device.getGlobalBatch();
  program.numCsx = device.getNumCsx();
  program.parameters = device.getParameters();
  program.clipped = device.getMaxGradientNorm().convertToDouble() > 0;
  for (Operation &op : device.getBody().front()) {
    auto stage = dyn_cast<StageOp>(op);
    if (!stage)
      return op.emitOpError() << "is not a wafer.stage; the runtime cannot "
                                 "run it";
    ProgramStage s;
    s.op = stage;
    s.name = stage.getSymName().str();
    s.phase = stage.getPhase().str();
    s.layer = stage.getLayer();
    s.checkpointBytes = stage.getCheckpointBytes();
    llvm::DenseMap<StringAttr, unsigned> index;
    for (Operation &inner : stage.getBody().front()) {
      if (auto region = dyn_cast<RegionOp>(inner)) {
        ProgramRegion r;
        r.op = region;
        r.shape = shapeOf(region);
        r.cost = KernelCostModel::forKernel(region.getKernelAttr());
        r.live = region.getLive();
        r.operandBytes = region.getOperandBytes();
        if (std::optional<ArrayAttr> reads = region.getReads()) {
          for (auto ref : reads->getAsRange<FlatSymbolRefAttr>())
            r.reads.push_back(index.at(ref.getAttr()));
        } else {
          for (unsigned earlier = 0; earlier < s.regions.size(); ++earlier)
            r.reads.push_back(earlier);
        }
        index[region.getSymNameAttr()] = s.regions.size();
        s.regions.push_back(std::move(r));
      } else if (auto ingress = dyn_cast<IngressOp>(inner)) {
        s.regions[index.at(ingress.getDestAttr().getAttr())].ingressBytes +=
            ingress.getBytes();
        s.weightBytes += ingress.getBytes();
      } else if (auto egress = dyn_cast<EgressOp>(inner)) {
        s.regions[index.at(egress.getSourceAttr().getAttr())].egressBytes +=
            egress.getBytes();
        program.totalGradientBytes += egress.getBytes();
      }
    }
    if (s.layer)
      program.layers = std::max(program.layers, *s.layer + 1);
    program.largestStageWeights =
        std::max(program.largestStageWeights, s.weightBytes);
    program.stages.push_back(std::move(s));
  }
  if (program.stages.empty())
    return device.emitOpError() << "has no stages; the runtime needs at "
                                   "least one";
  std::map<std::vector<int64_t>, int64_t> stageClasses, costClasses;
  for (ProgramStage &stage : program.stages) {
    stage.placementClass =
        stageClasses.try_emplace(stageKey(stage), stageClasses.size())
            .first->second;
    for (ProgramRegion &region : stage.regions) {
      std::vector<int64_t> key;
      appendCostKey(region, key);
      region.costClass =
          costClasses.try_emplace(std::move(key), costClasses.size())
              .first->second;
    }
  }
  llvm::DenseMap<int64_t, int64_t> forwardCheckpoint;
  for (const ProgramStage &stage : program.stages)
    if (stage.layer && stage.phase == "forward")
      forwardCheckpoint[*stage.layer] = stage.checkpointBytes;
  for (ProgramStage &stage : program.stages)
    if (stage.layer && stage.phase == "backward")
      stage.forwardCheckpointBytes = forwardCheckpoint.lookup(*stage.layer);
  return program;
}

Rect StepProgram::getMesh() const {
  return {0, 0, target->getMeshWidth(), target->getMeshHeight()};
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

FailureOr<Placement> Placement::fromIR(const StepProgram &program) {
  DeviceOp device = program.getDevice();
  Placement placement;
  placement.placer = device.getPlacer().value_or("").str();
  if (std::optional<ExecutionMode> mode = device.getExecution())
    placement.mode = *mode;
  for (const ProgramStage &stage : program.getStages()) {
    placement.slots.push_back(stage.op.getSlot());
    if (placement.mode == ExecutionMode::layer_pipelined && !stage.op.getSlot())
      return stage.op.emitOpError()
             << "@" << stage.name
             << " has no slot, but its device runs layer pipelined; run "
                "wafer-place";
    auto &regions = placement.regions.emplace_back();
    for (auto [index, region] : llvm::enumerate(stage.regions)) {
      RectAttr rect = region.op.getPlacementAttr();
      LayoutAttr layout = region.op.getLayoutAttr();
      if (!rect || !layout)
        return region.op.emitOpError()
               << "@" << region.op.getSymName() << " has no "
               << (rect ? "layout" : "placement") << "; run wafer-place";
      regions.push_back(
          {rect.getRect(), layout.getLayout(),
           region.op.getWave().value_or(static_cast<int64_t>(index))});
    }
  }
  return placement;
}

/// The axis `kind`'s partial sums are reduced along under `layout`.
static ReduceAxis partialsOf(KernelKind kind, const Layout &layout) {
  switch (kind) {
  case KernelKind::weight_matmul:
  case KernelKind::attention:
    return layout.featureGroups > 1 ? ReduceAxis::rows : ReduceAxis::none;
  case KernelKind::weight_grad:
    return layout.weights != Edge::resident && layout.tokenGroups > 1
               ? ReduceAxis::columns
               : ReduceAxis::none;
  case KernelKind::token_sum:
    return layout.tokenGroups > 1 ? ReduceAxis::columns : ReduceAxis::none;
  default:
    return ReduceAxis::none;
  }
}

void Placement::writeTo(const StepProgram &program) const {
  DeviceOp device = program.getDevice();
  MLIRContext *context = device.getContext();
  Builder builder(context);
  device.setPlacerAttr(builder.getStringAttr(placer));
  device.setExecutionAttr(ExecutionModeAttr::get(context, mode));
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    if (slots[s])
      stage.op.setSlotAttr(builder.getI64IntegerAttr(*slots[s]));
    else
      stage.op.removeSlotAttr();
    for (auto [r, region] : llvm::enumerate(stage.regions)) {
      const RegionPlacement &placed = regions[s][r];
      const Rect &rect = placed.rect;
      region.op.setPlacementAttr(
          RectAttr::get(context, rect.x, rect.y, rect.w, rect.h));
      region.op.setLayoutAttr(LayoutAttr::get(
          context, placed.layout.tokenGroups, placed.layout.featureGroups,
          placed.layout.weights, partialsOf(region.shape.kind, placed.layout),
          placed.layout.sumBlock, placed.layout.keyBlock));
      region.op.setWaveAttr(builder.getI64IntegerAttr(placed.wave));
    }
  }
}

FailureOr<PlacedStep> PlacedStep::read(DeviceOp device) {
  FailureOr<StepProgram> program = StepProgram::build(device);
  if (failed(program))
    return failure();
  FailureOr<Placement> placement = Placement::fromIR(*program);
  if (failed(placement))
    return failure();
  return PlacedStep{std::move(*program), std::move(*placement)};
}

int64_t Placement::numSlots() const {
  int64_t slotsUsed = 0;
  for (const std::optional<int64_t> &slot : slots)
    if (slot)
      slotsUsed = std::max(slotsUsed, *slot + 1);
  return slotsUsed;
}

KernelTime placedKernelTime(const StepProgram &program,
                            const Placement &placement, size_t s, size_t r,
                            int64_t microBatch) {
  const ProgramRegion &region = program.getStages()[s].regions[r];
  const RegionPlacement &placed = placement.regions[s][r];
  return region.cost({region.shape, placed.layout, placed.rect, microBatch,
                      program.getTarget()});
}

TimedPlacement TimedPlacement::of(const StepProgram &program,
                                  Placement placement, int64_t microBatch) {
  TimedPlacement timed;
  timed.split = PassSplit::atMost(program.getPerSystemBatch(), microBatch);
  timed.placement = std::move(placement);
  timed.times.resize(program.getStages().size());
  if (!timed.split.isEven())
    timed.shortTimes.resize(program.getStages().size());
  for (auto [s, stage] : llvm::enumerate(program.getStages())) {
    timed.times[s].resize(stage.regions.size());
    if (!timed.split.isEven())
      timed.shortTimes[s].resize(stage.regions.size());
    for (size_t r = 0; r < stage.regions.size(); ++r)
      timed.time(program, s, r);
  }
  return timed;
}

void TimedPlacement::time(const StepProgram &program, size_t s, size_t r) {
  const RegionPlacement &placed = placement.regions[s][r];
  const Layout &layout = placed.layout;
  const Rect &rect = placed.rect;
  std::array<int64_t, 10> key = {program.getStages()[s].regions[r].costClass,
                                 layout.tokenGroups,
                                 layout.featureGroups,
                                 static_cast<int64_t>(layout.weights),
                                 layout.sumBlock,
                                 layout.keyBlock,
                                 rect.x,
                                 rect.y,
                                 rect.w,
                                 rect.h};
  auto [it, inserted] = known.try_emplace(key);
  if (inserted) {
    it->second.first =
        placedKernelTime(program, placement, s, r, split.microBatch);
    if (!split.isEven())
      it->second.second =
          placedKernelTime(program, placement, s, r, split.microBatch - 1);
  }
  times[s][r] = it->second.first;
  if (!split.isEven())
    shortTimes[s][r] = it->second.second;
}

void TimedPlacement::setLayout(const StepProgram &program, size_t s, size_t r,
                               const Layout &layout) {
  Layout &placed = placement.regions[s][r].layout;
  if (placed == layout)
    return;
  placed = layout;
  time(program, s, r);
}

} // namespace cgpt::wafer
