//===- WaferDialect.cpp - wafer dialect, attributes and verifiers ---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Dialect/Wafer/IR/Wafer.h"
#include "cgpt/Support/BatchChecks.h"
#include "cgpt/Support/MicroBatches.h"
#include "cgpt/Target/WaferTargetModel.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace cgpt::wafer;

#include "cgpt/Dialect/Wafer/IR/KernelCostInterface.cpp.inc"
#include "cgpt/Dialect/Wafer/IR/WaferEnums.cpp.inc"
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
// CheckpointAttr
//===----------------------------------------------------------------------===//

Attribute CheckpointAttr::parse(AsmParser &parser, Type) {
  StringRef policy;
  int64_t interval = 0;
  if (parser.parseLess() || parser.parseKeyword(&policy))
    return {};
  if (policy == "every" && parser.parseInteger(interval))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<CheckpointAttr>(parser.getContext(), policy,
                                           interval);
}

void CheckpointAttr::print(AsmPrinter &printer) const {
  printer << "<" << getPolicy();
  if (getPolicy() == "every")
    printer << " " << getInterval();
  printer << ">";
}

LogicalResult
CheckpointAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringRef policy, int64_t interval) {
  if (policy == "every") {
    if (interval < 2)
      return emitError() << "checkpoint interval must be at least 2, got "
                         << interval;
    return success();
  }
  if (policy != "keep" && policy != "offload")
    return emitError() << "unknown checkpoint policy '" << policy
                       << "'; allowed: keep, every N, offload";
  if (interval != 0)
    return emitError() << "checkpoint policy '" << policy
                       << "' takes no interval";
  return success();
}

//===----------------------------------------------------------------------===//
// DeviceOp
//===----------------------------------------------------------------------===//

FailureOr<const cgpt::target::WaferTargetModel *> DeviceOp::getTargetModel() {
  return cgpt::target::WaferTargetModel::loadShared(getTarget(), getContext());
}

/// The stages' layers are numbered 0 to N-1, each used: the runtime reads
/// the model's depth from them.
static LogicalResult verifyLayers(DeviceOp device) {
  llvm::DenseSet<int64_t> layers;
  int64_t deepest = -1;
  StageOp deepestStage;
  for (auto stage : device.getBody().front().getOps<StageOp>()) {
    std::optional<int64_t> layer = stage.getLayer();
    if (!layer)
      continue;
    if (*layer < 0)
      return stage.emitOpError()
             << "is at layer " << *layer << "; layers are numbered from 0";
    layers.insert(*layer);
    if (*layer > deepest) {
      deepest = *layer;
      deepestStage = stage;
    }
  }
  if (deepest + 1 == static_cast<int64_t>(layers.size()))
    return success();
  int64_t missing = 0;
  while (layers.contains(missing))
    ++missing;
  return deepestStage.emitOpError()
         << "is at layer " << deepest << ", but no stage is at layer "
         << missing << ": layers are numbered 0 to N-1 without gaps";
}

/// The checkpoints the device says a sequence keeps are its stages'.
static LogicalResult verifyKeptBytes(DeviceOp device) {
  // Each is at most kMaxPerSequence, and the IR file bounds their count.
  int64_t checkpoints = 0;
  for (auto stage : device.getBody().front().getOps<StageOp>())
    checkpoints += stage.getCheckpointBytes();
  if (checkpoints == device.getKeptBytesPerSequence())
    return success();
  return device.emitOpError()
         << "kept_bytes_per_sequence (" << device.getKeptBytesPerSequence()
         << ") is not the " << checkpoints
         << " bytes its stages' checkpoint_bytes sum to";
}

LogicalResult DeviceOp::verifyRegions() {
  if (failed(cgpt::verifyBatchFacts(*this, getGlobalBatch(), getNumCsx(),
                                    getSeqLen())) ||
      failed(
          cgpt::verifyBatchPlan(*this, getMicroBatch(), getGradAccumSteps())))
    return failure();
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"kept_bytes_per_sequence",
                                      getKeptBytesPerSequence()},
        {"parameters", getParameters()},
        {"flops_per_sequence", getFlopsPerSequence()}})
    if (value < 0)
      return emitOpError() << name << " must be non-negative, got " << value;
  double clip = getMaxGradientNorm().convertToDouble();
  if (!(clip >= 0) || !std::isfinite(clip))
    return emitOpError() << "max_gradient_norm must be a finite number 0 or "
                            "above (0: no clipping), got "
                         << clip;
  if (getKeptBytesPerSequence() > cgpt::kMaxPerSequence)
    return emitOpError() << "kept_bytes_per_sequence ("
                         << getKeptBytesPerSequence() << ") must be 0 to "
                         << cgpt::kMaxPerSequence;
  int64_t micro = getMicroBatch(), steps = getGradAccumSteps();
  if (micro && !cgpt::isEvenSplit(getPerSystemBatch(), micro, steps)) {
    cgpt::PassSplit even = cgpt::PassSplit::atMost(getPerSystemBatch(), micro);
    return emitOpError() << "micro_batch (" << micro << ") and "
                         << "grad_accum_steps (" << steps
                         << ") do not split the per-system batch ("
                         << getPerSystemBatch() << ") evenly: passes of at "
                         << "most " << micro << " split it as " << even.passes
                         << " of at most " << even.microBatch;
  }
  int64_t expected = 0;
  for (auto stage : getBody().front().getOps<StageOp>())
    if (stage.getOrder() != expected++)
      return stage.emitOpError()
             << "has order " << stage.getOrder() << " but is stage #"
             << expected - 1 << " of the schedule";
  if (failed(verifyLayers(*this)) || failed(verifyKeptBytes(*this)))
    return failure();
  // The target, loaded once: an unreadable one was reported where first
  // named and fails the device.
  if (failed(getTargetModel()))
    return failure();
  return verifyExecution();
}

/// The rectangle covering every placed region of `stage`, if any.
static std::optional<Rect> stageBounds(StageOp stage) {
  std::optional<Rect> bounds;
  for (auto region : stage.getBody().front().getOps<RegionOp>()) {
    RectAttr rect = region.getPlacementAttr();
    if (!rect)
      continue;
    Rect r = rect.getRect();
    if (!bounds) {
      bounds = r;
      continue;
    }
    int64_t x = std::min(bounds->x, r.x), y = std::min(bounds->y, r.y);
    int64_t right = std::max(bounds->x + bounds->w, r.x + r.w);
    int64_t bottom = std::max(bounds->y + bounds->h, r.y + r.h);
    bounds = Rect{x, y, right - x, bottom - y};
  }
  return bounds;
}

LogicalResult DeviceOp::verifyExecution() {
  bool pipelined = getExecution() == ExecutionMode::layer_pipelined;
  // Under layer pipelining every stage has a slot, and the slots' bands do
  // not share a core; under weight streaming no stage has one.
  std::map<int64_t, std::pair<StageOp, Rect>> bands;
  for (auto stage : getBody().front().getOps<StageOp>()) {
    std::optional<int64_t> slot = stage.getSlot();
    if (pipelined && !slot)
      return stage.emitOpError()
             << "has no slot, but its device runs layer pipelined";
    if (!pipelined && slot)
      return stage.emitOpError()
             << "has slot " << *slot
             << ", but its device runs weight streaming, one stage at a "
                "time";
    for (auto region : stage.getBody().front().getOps<RegionOp>()) {
      LayoutAttr layout = region.getLayoutAttr();
      if (!layout)
        continue;
      if (layout.getWeights() == Edge::resident && !pipelined)
        return region.emitOpError()
               << "holds its weights resident, but its device runs weight "
                  "streaming: weights come from the north edge";
      if (layout.getWeights() == Edge::north && pipelined)
        return region.emitOpError()
               << "streams its weights from the north edge, but its device "
                  "runs layer pipelined: weights are resident";
    }
    std::optional<Rect> bounds = stageBounds(stage);
    if (!slot || !bounds)
      continue;
    auto [it, inserted] = bands.try_emplace(*slot, stage, *bounds);
    if (inserted)
      continue;
    Rect &band = it->second.second;
    int64_t x = std::min(band.x, bounds->x), y = std::min(band.y, bounds->y);
    band = Rect{x, y, std::max(band.x + band.w, bounds->x + bounds->w) - x,
                std::max(band.y + band.h, bounds->y + bounds->h) - y};
  }
  for (auto first = bands.begin(); first != bands.end(); ++first)
    for (auto second = std::next(first); second != bands.end(); ++second)
      if (first->second.second.overlaps(second->second.second))
        return second->second.first.emitOpError()
               << "runs in slot " << second->first << " on cores that slot "
               << first->first
               << " also holds; the slots of a pipeline work at once";
  return success();
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verifyRegions() {
  if (getPhase() != "forward" && getPhase() != "backward" &&
      getPhase() != "loss")
    return emitOpError() << "has phase '" << getPhase()
                         << "'; allowed: forward, backward, loss";
  if (getCheckpointBytes() < 0 || getCheckpointBytes() > cgpt::kMaxPerSequence)
    return emitOpError() << "checkpoint_bytes (" << getCheckpointBytes()
                         << ") must be 0 to " << cgpt::kMaxPerSequence;
  mlir::SymbolTable symbols(*this);
  for (Operation &op : getBody().front()) {
    auto requireRegion = [&](FlatSymbolRefAttr ref) -> LogicalResult {
      if (isa_and_nonnull<RegionOp>(symbols.lookup(ref.getAttr())))
        return success();
      return op.emitOpError()
             << "refers to " << ref << ", which is not a region of stage "
             << getSymNameAttr();
    };
    if (auto ingress = dyn_cast<IngressOp>(op)) {
      if (failed(requireRegion(ingress.getDestAttr())))
        return failure();
    } else if (auto egress = dyn_cast<EgressOp>(op)) {
      if (failed(requireRegion(egress.getSourceAttr())))
        return failure();
    } else if (!isa<RegionOp>(op)) {
      return op.emitOpError() << "in stage @" << getSymName()
                              << " is not a region, ingress or egress";
    }
  }
  return verifyWaves();
}

LogicalResult StageOp::verifyWaves() {
  // Regions run wave by wave in their order; a wave's regions at once, on
  // cores of their own, none reading another of its wave.
  llvm::DenseMap<StringAttr, std::pair<RegionOp, int64_t>> earlier;
  SmallVector<RegionOp> wave;
  int64_t index = 0;
  for (auto region : getBody().front().getOps<RegionOp>()) {
    int64_t number = region.getWave().value_or(index);
    ++index;
    if (!wave.empty()) {
      int64_t previous = wave.back().getWave().value_or(index - 2);
      if (number < previous)
        return region.emitOpError()
               << "runs in wave " << number << " after a region of wave "
               << previous << "; waves run in the order of their regions";
      if (number != previous)
        wave.clear();
    }
    if (std::optional<ArrayAttr> reads = region.getReads()) {
      for (auto ref : reads->getAsRange<FlatSymbolRefAttr>()) {
        auto it = earlier.find(ref.getAttr());
        if (it == earlier.end())
          return region.emitOpError()
                 << "reads " << ref
                 << ", which is not an earlier region of stage @"
                 << getSymName();
        if (it->second.second == number)
          return region.emitOpError()
                 << "reads " << ref << ", which runs in the same wave "
                 << number << "; a region runs after those it reads";
      }
    }
    if (RectAttr rect = region.getPlacementAttr())
      for (RegionOp other : wave)
        if (RectAttr theirs = other.getPlacementAttr();
            theirs && rect.getRect().overlaps(theirs.getRect()))
          return region.emitOpError()
                 << "runs in wave " << number << " beside @"
                 << other.getSymName() << " on cores they share: " << rect
                 << " and " << theirs;
    earlier[region.getSymNameAttr()] = {region, number};
    wave.push_back(region);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RegionOp, IngressOp, EgressOp
//===----------------------------------------------------------------------===//

/// Whether `name` is a dataflow kernel: an op with KernelOpInterface.
static bool isKnownKernel(MLIRContext *context, StringRef name) {
  std::optional<RegisteredOperationName> op =
      RegisteredOperationName::lookup(name, context);
  return op && op->hasInterface<cgpt::dataflow::KernelOpInterface>();
}

LogicalResult RegionOp::verifyEpilogue() {
  bool matmul = getKernel() == cgpt::dataflow::MatmulOp::getOperationName();
  bool experts =
      getKernel() == cgpt::dataflow::ExpertMatmulOp::getOperationName();
  bool product = getKind() == KernelKind::weight_matmul && (matmul || experts);
  if (!product && (getBias() || getScale() || !getEpilogue().empty()))
    return emitOpError() << "has a bias, scale or epilogue but runs '"
                         << getKernel() << "' as a "
                         << cgpt::dataflow::stringifyKernelKind(getKind())
                         << ", not a dataflow.matmul or "
                            "dataflow.expert_matmul as a weight_matmul";
  // An expert's product is never scaled (dataflow.expert_matmul has none).
  if (experts && getScale())
    return emitOpError() << "has a scale but runs '" << getKernel()
                         << "', which scales nothing";
  // The cores hold the scale as an f32 constant.
  if (std::optional<APFloat> scale = getScale();
      scale && !(std::abs(scale->convertToDouble()) <=
                 std::numeric_limits<float>::max()))
    return emitOpError() << "scale must be a finite f32, got "
                         << scale->convertToDouble();
  // The epilogue's maps are the first kernels fused into the region.
  size_t leadingMaps = 0;
  for (StringRef kernel : getFused().getAsValueRange<StringAttr>()) {
    if (kernel != cgpt::dataflow::MapOp::getOperationName())
      break;
    ++leadingMaps;
  }
  if (getEpilogue().size() > leadingMaps)
    return emitOpError() << "applies " << getEpilogue().size()
                         << " maps in its epilogue, but the kernels it fuses "
                            "begin with "
                         << leadingMaps << " dataflow.map";
  auto maps = getEpilogue().getAsRange<EpilogueMapAttr>();
  for (auto [index, map] : llvm::enumerate(maps)) {
    int64_t inputs = cgpt::dataflow::mapArity(map.getKind());
    if (map.getRunning() < 0 || map.getRunning() >= inputs)
      return emitOpError() << "epilogue map " << index << " ("
                           << cgpt::dataflow::stringifyMapKind(map.getKind())
                           << ") takes the running value as input "
                           << map.getRunning() << " of its " << inputs;
  }
  return success();
}

LogicalResult RegionOp::verify() {
  if (!isKnownKernel(getContext(), getKernel()))
    return emitOpError() << "runs unknown kernel '" << getKernel() << "'";
  for (Attribute fused : getFused())
    if (!isKnownKernel(getContext(), cast<StringAttr>(fused).getValue()))
      return emitOpError() << "fuses unknown kernel " << fused;
  bool map = getKernel() == cgpt::dataflow::MapOp::getOperationName();
  if (map && !getMap())
    return emitOpError() << "runs a dataflow.map but names no map";
  if (!map && getMap())
    return emitOpError() << "names a map but runs '" << getKernel()
                         << "', not a dataflow.map";
  if (getShape().size() != 3)
    return emitOpError() << "shape must be [rows, columns, contracted], got "
                         << getShape().size() << " numbers";
  for (int64_t extent : getShape())
    if (extent < 1 || extent > cgpt::kMaxPerSequence)
      return emitOpError() << "shape extents must be 1 to "
                           << cgpt::kMaxPerSequence << ", got " << extent;
  // The work the shape describes is bounded like the FLOPs: a region of
  // 2^36 rows would take 1e22 s and absorb every later stage's time.
  ArrayRef<int64_t> shape = getShape();
  if (shape[0] > cgpt::kMaxFlopsPerSequence / shape[1] ||
      shape[0] * shape[1] > cgpt::kMaxFlopsPerSequence / shape[2])
    return emitOpError() << "shape " << shape[0] << " x " << shape[1] << " x "
                         << shape[2] << " is more than "
                         << cgpt::kMaxFlopsPerSequence
                         << " multiply-adds per sequence";
  if (getChunks() < 1 || getChunks() > cgpt::kMaxPerSequence ||
      getRepeats() < 1 || getRepeats() > 16)
    return emitOpError() << "chunks must be 1 to " << cgpt::kMaxPerSequence
                         << " and repeats 1 to 16, got " << getChunks()
                         << " and " << getRepeats();
  if (getExperts() < 0 || getExperts() > cgpt::kMaxPerSequence)
    return emitOpError() << "experts must be 0 to " << cgpt::kMaxPerSequence
                         << ", got " << getExperts();
  if (std::optional<uint64_t> rows = getExpertRows()) {
    if (getExperts() < 2)
      return emitOpError() << "has expert_rows but routes to no experts";
    if (*rows < 1 || *rows > static_cast<uint64_t>(cgpt::kMaxPerSequence))
      return emitOpError() << "expert_rows must be 1 to "
                           << cgpt::kMaxPerSequence << ", got " << *rows;
  }
  bool router = getKernel() == cgpt::dataflow::RouteOp::getOperationName();
  if (router && !getTopK())
    return emitOpError() << "runs a dataflow.route but names no top_k";
  if (!router && (getTopK() || getNullExpert() || getRouterF32()))
    return emitOpError() << "names a router's top_k, null_expert or "
                            "router_f32 but runs '"
                         << getKernel() << "', not a dataflow.route";
  // The cores hold the null expert's logit as an f32 constant.
  if (std::optional<APFloat> null = getNullExpert();
      null &&
      !(std::abs(null->convertToDouble()) <= std::numeric_limits<float>::max()))
    return emitOpError() << "null_expert must be a finite f32 logit, got "
                         << null->convertToDouble();
  if (std::optional<uint64_t> topK = getTopK();
      topK && (*topK < 1 || static_cast<int64_t>(*topK) > getShape()[1]))
    return emitOpError() << "top_k must be 1 to its " << getShape()[1]
                         << " experts (columns), got "
                         << static_cast<int64_t>(*topK);
  if (failed(verifyEpilogue()))
    return failure();
  if (getElementBytes() < 1 || getElementBytes() > 8)
    return emitOpError() << "element_bytes must be 1 to 8, got "
                         << getElementBytes();
  if (getFlops() < 0 || getFlops() > cgpt::kMaxFlopsPerSequence)
    return emitOpError() << "flops (" << getFlops() << ") must be 0 to "
                         << cgpt::kMaxFlopsPerSequence;
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"live", getLive()},
                             {"accumulator", getAccumulator()},
                             {"weight_bytes", getWeightBytes().value_or(0)},
                             {"sram_bytes", getSramBytes().value_or(0)}})
    if (value < 0 || value > cgpt::kMaxPerSequence)
      return emitOpError() << name << " (" << value << ") must be 0 to "
                           << cgpt::kMaxPerSequence;
  auto device = (*this)->getParentOfType<DeviceOp>();
  if (!device)
    return success();
  if (std::optional<int64_t> wave = getWave(); wave && *wave < 0)
    return emitOpError() << "wave must be 0 or more, got " << *wave;
  FailureOr<const cgpt::target::WaferTargetModel *> target =
      device.getTargetModel();
  if (failed(target))
    return failure(); // Reported where the target was first named.
  if (RectAttr rect = getPlacementAttr()) {
    if (rect.getW() < 1 || rect.getH() < 1 || rect.getX() < 0 ||
        rect.getY() < 0 ||
        rect.getX() + rect.getW() > (*target)->getMeshWidth() ||
        rect.getY() + rect.getH() > (*target)->getMeshHeight())
      return emitOpError() << "is placed at " << rect << " outside the "
                           << (*target)->getMeshWidth() << " x "
                           << (*target)->getMeshHeight() << " mesh of target '"
                           << device.getTarget() << "'";
  }
  if (LayoutAttr layout = getLayoutAttr()) {
    RectAttr placed = getPlacementAttr();
    Rect rect = placed ? placed.getRect()
                       : Rect{0, 0, (*target)->getMeshWidth(),
                              (*target)->getMeshHeight()};
    int64_t gt = layout.getTokenGroups(), gk = layout.getFeatureGroups();
    if (gt < 1 || gk < 1)
      return emitOpError() << "layout " << layout
                           << " needs at least one token group and one "
                              "feature group";
    // A token group's feature groups are a segment along one row.
    if (gk > rect.w)
      return emitOpError() << "layout " << layout << " puts " << gk
                           << " feature groups along a row of " << rect.w
                           << " cores";
    // Attention's layout is one block: its query blocks down the rows.
    if (getKind() == KernelKind::attention && gt > rect.h)
      return emitOpError() << "layout " << layout << " puts " << gt
                           << " query blocks of attention down a column of "
                           << rect.h << " cores";
    if (gt > tokenGroupsOn(rect, gk))
      return emitOpError() << "layout " << layout << " needs " << gt
                           << " token groups; segments of " << gk
                           << " cores hold " << tokenGroupsOn(rect, gk)
                           << " on " << rect.w << " x " << rect.h << " cores ("
                           << rect.w / gk << " a row)";
    // Only a weight kernel sums output columns (a resident weight
    // gradient's sums are the gradient it keeps), and a token sum its
    // features; attention takes its queries in blocks.
    bool sums = getKind() == KernelKind::weight_matmul ||
                getKind() == KernelKind::token_sum ||
                (getKind() == KernelKind::weight_grad &&
                 layout.getWeights() != Edge::resident);
    bool blocks = sums || getKind() == KernelKind::attention;
    if (layout.getSumBlock() < 0 || (layout.getSumBlock() > 0 && !blocks))
      return emitOpError() << "layout " << layout << " sums "
                           << layout.getSumBlock()
                           << " output columns at a time; "
                           << (blocks
                                   ? "a block has at least one"
                                   : "a " +
                                         stringifyKernelKind(getKind()).str() +
                                         " kernel here has no sums to "
                                         "block");
    // Only attention takes its keys in blocks.
    bool keyBlocks = getKind() == KernelKind::attention;
    if (layout.getKeyBlock() < 0 || (layout.getKeyBlock() > 0 && !keyBlocks))
      return emitOpError() << "layout " << layout << " takes "
                           << layout.getKeyBlock() << " keys at a time; "
                           << (keyBlocks ? "a block has at least one"
                                         : "only attention takes keys in "
                                           "blocks");
  }
  if (std::optional<ArrayRef<int64_t>> colors = getColors()) {
    for (int64_t color : *colors)
      if (color < 0 || color >= (*target)->getNumColors())
        return emitOpError()
               << "uses color " << color << "; target '" << device.getTarget()
               << "' has colors 0 to " << (*target)->getNumColors() - 1;
    // Each of a region's streams has a color of its own: two on one color
    // would share its routes and queues.
    for (auto [index, color] : llvm::enumerate(*colors))
      if (llvm::is_contained(colors->take_front(index), color))
        return emitOpError() << "gives color " << color
                             << " to two of its streams; each stream needs "
                                "a color of its own";
  }
  if (std::optional<int64_t> sram = getSramBytes();
      sram && *sram > (*target)->getCoreSramBytes())
    return emitOpError() << "records " << *sram << " B per core, over the "
                         << (*target)->getCoreSramBytes()
                         << " B of SRAM a core of target '"
                         << device.getTarget() << "' has";
  return success();
}

/// Checks that edge point `at` of `op` lies on the device's mesh.
static LogicalResult verifyEdgePoint(Operation *op,
                                     std::optional<ArrayRef<int64_t>> at,
                                     int64_t bytes) {
  // A stream carries one tensor a pass; the bound keeps every sum of them
  // in range.
  if (bytes < 0 || bytes > cgpt::kMaxPerSequence)
    return op->emitOpError()
           << "bytes (" << bytes << ") must be 0 to " << cgpt::kMaxPerSequence;
  if (!at)
    return success();
  if (at->size() != 2)
    return op->emitOpError()
           << "'at' must be one (x, y) point, got " << at->size() << " numbers";
  auto device = op->getParentOfType<DeviceOp>();
  if (!device)
    return success();
  FailureOr<const cgpt::target::WaferTargetModel *> target =
      device.getTargetModel();
  if (failed(target))
    return failure(); // Reported where the target was first named.
  if ((*at)[0] < 0 || (*at)[1] < 0 || (*at)[0] >= (*target)->getMeshWidth() ||
      (*at)[1] >= (*target)->getMeshHeight())
    return op->emitOpError()
           << "is at [" << (*at)[0] << ", " << (*at)[1] << "], off the "
           << (*target)->getMeshWidth() << " x " << (*target)->getMeshHeight()
           << " mesh of target '" << device.getTarget() << "'";
  return success();
}

LogicalResult IngressOp::verify() {
  return verifyEdgePoint(*this, getAt(), getBytes());
}

LogicalResult EgressOp::verify() {
  return verifyEdgePoint(*this, getAt(), getBytes());
}

#define GET_OP_CLASSES
#include "cgpt/Dialect/Wafer/IR/WaferOps.cpp.inc"
