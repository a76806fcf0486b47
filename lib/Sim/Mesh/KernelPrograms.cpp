//===- KernelPrograms.cpp - placed kernels as per-core programs -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "ProgramBuilder.h"

#include <algorithm>
#include <cmath>

namespace cgpt::sim::mesh {

using namespace programs;

std::string segmentsRefusal(const Layout &layout, const wafer::Rect &rect) {
  if (layout.tokenGroups <= wafer::tokenGroupsOn(rect, layout.featureGroups))
    return "";
  return "its layout of " + std::to_string(layout.tokenGroups) + " x " +
         std::to_string(layout.featureGroups) + " groups does not fit its " +
         std::to_string(rect.w) + " x " + std::to_string(rect.h) +
         " rectangle in segments along its rows";
}

wafer::Layout rectangleLayout(int width, int height) { return {height, width}; }

MeshConfig meshConfig(const target::WaferTargetModel &target) {
  MeshConfig config;
  config.colors = static_cast<int>(target.getNumColors());
  config.queueDepth = static_cast<int>(target.getRouterQueueWavelets());
  config.activationCycles = target.getTaskActivationCycles();
  config.rampLatencyCycles = target.getRampLatencyCycles();
  config.sramBytes = target.getCoreSramBytes();
  config.reservedBytes = target.getReservedBytes();
  config.readBytesPerCycle = target.getSramReadBytesPerCycle();
  config.writeBytesPerCycle = target.getSramWriteBytesPerCycle();
  config.mixedFmacs = target.getMixedFmacsPerCycle();
  config.f32Fmacs = target.getF32FmacsPerCycle();
  config.halfOps = target.getHalfOpsPerCycle();
  config.f32Ops = target.getF32OpsPerCycle();
  return config;
}

std::optional<MeshResult>
simulateWithValues(const MeshProgram &mesh,
                   const target::WaferTargetModel &target,
                   const CoreMemoryAccess &memory, std::string &error) {
  MeshConfig config = meshConfig(target);
  config.values = true;
  return simulate(mesh, config, error, memory);
}

SegmentGrid segmentGrid(const Layout &layout, const wafer::Rect &rect) {
  return {static_cast<int>(layout.featureGroups),
          static_cast<int>(wafer::tokenRowsOn(rect, layout.tokenGroups))};
}

bool chainsThroughColumns(const KernelShape &k, const Layout &layout) {
  return k.kind == KernelKind::weight_grad && layout.weights != Edge::resident;
}

int segmentColumnsBuilt(const KernelShape &k, const Layout &layout,
                        const wafer::Rect &rect, bool allTokenGroups) {
  if (k.kind == KernelKind::attention ||
      !(allTokenGroups || chainsThroughColumns(k, layout)))
    return 1;
  int64_t segment = std::max<int64_t>(1, layout.featureGroups);
  return static_cast<int>(
      std::clamp<int64_t>(wafer::segmentColumnsOn(rect, layout.tokenGroups), 1,
                          std::max<int64_t>(1, rect.w / segment)));
}

KernelProgram buildKernelProgram(const KernelShape &k, const Layout &layout,
                                 int64_t microBatch,
                                 const target::WaferTargetModel &target,
                                 const wafer::Rect &rect,
                                 const KernelProgramOptions &options) {
  int64_t gt = layout.tokenGroups;
  auto [segment, rows] = segmentGrid(layout, rect);
  int columns = segmentColumnsBuilt(k, layout, rect, options.allTokenGroups);
  KernelProgram out{MeshProgram(segment * columns, rows)};
  out.rows = rows;
  out.segment = segment;
  out.segmentColumns = columns;
  out.tokenGroup.assign(out.mesh.width * rows, -1);
  out.featureGroup.assign(out.mesh.width * rows, -1);
  Builder b(out);
  b.forEachCore([&](int x, int y, int s) {
    int64_t token = static_cast<int64_t>(x / segment) * rows + y;
    if (token < gt) {
      out.tokenGroup[out.mesh.index(x, y)] = static_cast<int>(token);
      out.featureGroup[out.mesh.index(x, y)] = s;
    }
  });
  ElementType type = elementTypeOf(k.elementBytes);
  // A weight kernel's or token sum's f32 sums, block by block.
  SumBlockShape sums = sumBlockShape(k, layout, microBatch);
  if (sums.blockable()) {
    out.sums = sums;
    out.blockColumns = sums.blockColumns(layout.sumBlock);
    out.blocks = ceilDiv(sums.columns, out.blockColumns);
  }
  switch (k.kind) {
  case KernelKind::weight_matmul:
  case KernelKind::weight_grad:
    if (sums.blockable())
      streamedProduct(b, k, sums, type, k.kind == KernelKind::weight_matmul,
                      wafer::choosesOnChain(k, layout),
                      wafer::reducesScattered(k, layout));
    else
      residentWeightGrad(b, k, layout, microBatch, type);
    break;
  case KernelKind::attention: {
    // One head per sequence: the micro-batch is the pairs. The softmax's
    // constants do not change the time.
    AttentionSoftmax softmax =
        options.attentionSoftmax.value_or(AttentionSoftmax{
            1.0 / std::sqrt(static_cast<double>(k.contracted)), true, false});
    bool gradient = k.function == wafer::RowFunction::attentionGrad;
    if (gradient && layout.keyBlock > 0)
      attentionBackwardByKeys(b, k, layout, microBatch, softmax);
    else if (gradient)
      attentionBackward(b, k, layout, microBatch, softmax);
    else if (layout.keyBlock > 0)
      attentionForwardByKeys(b, k, layout, microBatch, softmax);
    else
      attentionForward(b, k, layout, microBatch, softmax);
    break;
  }
  case KernelKind::token_sum:
    tokenSum(b, k, layout, microBatch);
    break;
  case KernelKind::reduction:
  case KernelKind::elementwise:
  case KernelKind::embedding:
    if (wafer::isNormGradient(k.function))
      normGradKernel(b, k, layout, microBatch);
    else if (k.function == wafer::RowFunction::crossEntropyGrad)
      lossGradKernel(b, k, layout, microBatch, options.lossScale);
    else if (k.function == wafer::RowFunction::crossEntropy)
      crossEntropyKernel(b, k, layout, microBatch, options);
    else if (k.function == wafer::RowFunction::map)
      mapKernel(b, k, layout, microBatch);
    else if (k.function == wafer::RowFunction::gather)
      gatherKernel(b, k, layout, microBatch, options.tableScale);
    else if (k.function == wafer::RowFunction::scatterAdd)
      scatterAddKernel(b, k, layout, microBatch, options.tableScale);
    else if (k.function != wafer::RowFunction::other)
      normKernel(b, k, layout, microBatch, options.epsilon);
    else
      rowKernel(b, k, layout, microBatch);
    break;
  }
  return out;
}

std::vector<Wavelet> wavelets(const std::vector<float> &elements,
                              int64_t perWavelet) {
  std::vector<Wavelet> out;
  for (size_t e = 0; e < elements.size(); e += perWavelet)
    out.push_back({elements[e], perWavelet > 1 && e + 1 < elements.size()
                                    ? elements[e + 1]
                                    : 0.0f});
  return out;
}

void forEachDrained(const MeshProgram &mesh, const MeshResult &run,
                    llvm::function_ref<void(int, int64_t, float)> fn,
                    std::optional<Port> port) {
  int record = 0;
  for (const Drain &drain : mesh.drains) {
    if (!drain.record)
      continue;
    const std::vector<Wavelet> &out = run.drained[record++];
    if (port && drain.port != *port)
      continue;
    int core = mesh.index(drain.x, drain.y);
    for (size_t w = 0; w < out.size(); ++w)
      fn(core, static_cast<int64_t>(w), out[w].lo);
  }
}

void embedProgram(MeshProgram &mesh, const MeshProgram &part, int x, int y) {
  int first = static_cast<int>(mesh.programs.size());
  for (const CoreProgram &program : part.programs)
    mesh.programs.push_back(program);
  for (int py = 0; py < part.height; ++py)
    for (int px = 0; px < part.width; ++px) {
      int from = part.index(px, py), to = mesh.index(x + px, y + py);
      mesh.routes[to].append(part.routes[from].begin(),
                             part.routes[from].end());
      if (part.programOf[from] >= 0)
        mesh.programOf[to] = first + part.programOf[from];
    }
  for (Injector in : part.injectors) {
    in.x += x;
    in.y += y;
    mesh.injectors.push_back(std::move(in));
  }
  for (Drain drain : part.drains) {
    drain.x += x;
    drain.y += y;
    mesh.drains.push_back(drain);
  }
}

} // namespace cgpt::sim::mesh
