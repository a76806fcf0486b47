//===- MapValues.h - elementwise maps with values ---------------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// Runs a map's mesh program (KernelPrograms.h: a region whose kernel is a
// dataflow.map, its operations wafer::mapAlgorithm's) with numbers in its
// buffers: each core's SRAM holds its token group's rows of its feature
// group of the map's inputs, runs the map's operations row by row, and the
// result is read from every core. Every token group runs, so a wrong
// placement of a token or a feature gives a wrong number.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_MAPVALUES_H
#define CGPT_SIM_MESH_MAPVALUES_H

#include "cgpt/Sim/Mesh/KernelPrograms.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// Why `kernel`, laid out as `layout` on `rect`, cannot run with values as
/// a map (another kernel, a layout that does not fit the rectangle); empty
/// when it can.
std::string mapRefusal(const wafer::KernelShape &kernel,
                       const wafer::Layout &layout, const wafer::Rect &rect);

/// A map's result, [T, N] row-major, and the cycles its run on the mesh
/// took.
struct MapRun {
  std::vector<float> result;
  int64_t cycles = 0;
};

/// Runs the map `kernel` for `microBatch` sequences, laid out as `layout`
/// on `rect`, with values: `first` and (for a map of two inputs) `second`
/// are [T, N] row-major f32 (T = microBatch x rows tokens, N = columns
/// features); `second` is empty for a map of one. Returns nothing and sets
/// `error` for a kernel mapRefusal refuses, operands of the wrong size, or
/// a program that fails to load or run.
std::optional<MapRun> runMap(const wafer::KernelShape &kernel,
                             const wafer::Layout &layout, int64_t microBatch,
                             const target::WaferTargetModel &target,
                             const wafer::Rect &rect,
                             llvm::ArrayRef<float> first,
                             llvm::ArrayRef<float> second, std::string &error);

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_MAPVALUES_H
