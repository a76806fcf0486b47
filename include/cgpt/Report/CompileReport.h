//===- CompileReport.h - the per-kernel compile report ----------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What a wafer compiler's compile report gives, from a simulated step's
// report: every placed kernel (region) with its stage, kind, rectangle,
// cores and their share of the mesh, wave, SRAM a core, and its time, FLOPs
// and bound in the first pass; each stage's active cores (its widest wave)
// as a share of the mesh. `cgpt-run --compile-report FILE` writes it as
// text, CSV or JSON.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_REPORT_COMPILEREPORT_H
#define CGPT_REPORT_COMPILEREPORT_H

#include "cgpt/Report/Report.h"

namespace cgpt::report {

/// One row per placed region, in stage and schedule order: `stage`,
/// `region`, `kind`, `kernel`, `x`, `y`, `width`, `height`, `cores`,
/// `mesh_percent`, `wave`, `sram_bytes_per_core`, `seconds`, `flops`,
/// `bound` (the last three from the first pass; null for a stage it does
/// not run). `report` must hold a wafer and a simulation.
DataTable compileReportData(const StepReport &report);

/// The same as a text report: a header (model, target, plan, mesh, active
/// cores, SRAM peak), then each stage with its active cores as a share of
/// the mesh and its regions' table.
void printCompileReport(llvm::raw_ostream &os, const StepReport &report);

} // namespace cgpt::report

#endif // CGPT_REPORT_COMPILEREPORT_H
