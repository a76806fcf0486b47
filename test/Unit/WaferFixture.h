//===- WaferFixture.h - wafer IR for the placement unit tests ---*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// What the tests of the kernel cost, the placers, the memory model and the
// schedule share: hand-written wafer IR from test/Dialect/Wafer/Inputs,
// model files lowered to placed wafer IR, and a placement by name.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_TEST_UNIT_WAFERFIXTURE_H
#define CGPT_TEST_UNIT_WAFERFIXTURE_H

#include "TestModels.h"

#include "cgpt/Dialect/Wafer/Analysis/MemoryModel.h"
#include "cgpt/Dialect/Wafer/Analysis/Placer.h"
#include "cgpt/Dialect/Wafer/Analysis/Schedule.h"
#include "cgpt/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

namespace cgpt::test {

class WaferFixture : public ::testing::Test {
protected:
  WaferFixture() : context(allDialects()) {
    context.loadAllAvailableDialects();
  }

  /// Parses hand-written wafer IR from test/Dialect/Wafer/Inputs.
  wafer::DeviceOp parseInput(const std::string &name) {
    module = mlir::parseSourceFile<mlir::ModuleOp>(
        sourcePath("test/Dialect/Wafer/Inputs/" + name), &context);
    EXPECT_TRUE(module) << name;
    return *module->getOps<wafer::DeviceOp>().begin();
  }

  /// Parses wafer IR from `text`.
  wafer::DeviceOp parseText(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    return *module->getOps<wafer::DeviceOp>().begin();
  }

  /// Imports a model file and lowers it to placed, planned wafer IR for
  /// `target` on `systems` systems.
  wafer::DeviceOp compile(const std::string &file, const std::string &target,
                          int64_t systems = 1,
                          const std::string &placer = "auto") {
    EXPECT_TRUE(mlir::succeeded(lower(file, target, systems, placer))) << file;
    return *module->getOps<wafer::DeviceOp>().begin();
  }

  /// The planned step of `file` on `target`, or nothing where it does not
  /// compile there (it does not fit, or the target is refused), quietly.
  std::optional<wafer::StepEstimate>
  plannedStepIfAny(const std::string &file, const std::string &target) {
    mlir::ScopedDiagnosticHandler quiet(
        &context, [](mlir::Diagnostic &) { return mlir::success(); });
    if (mlir::failed(lower(file, target, 1, "auto")))
      return std::nullopt;
    return plannedStep(*module->getOps<wafer::DeviceOp>().begin());
  }

  /// The step program of `device`.
  static wafer::StepProgram programOf(wafer::DeviceOp device) {
    mlir::FailureOr<wafer::StepProgram> program =
        wafer::StepProgram::build(device);
    EXPECT_TRUE(mlir::succeeded(program));
    return *program;
  }

  /// `placer`'s placement of `program` at `microBatch`.
  static wafer::Placement placeWith(const std::string &placer,
                                    const wafer::StepProgram &program,
                                    int64_t microBatch) {
    std::string whyNot;
    std::optional<wafer::Placement> placement =
        wafer::createPlacer(placer)->place(program, microBatch, whyNot);
    EXPECT_TRUE(placement) << whyNot;
    return *placement;
  }

  /// The step as `placement` runs it at `microBatch` under `policy`.
  static wafer::StepEstimate estimate(const wafer::StepProgram &program,
                                      wafer::Placement placement,
                                      int64_t microBatch,
                                      wafer::CheckpointPolicy policy) {
    return wafer::estimateStep(
        program,
        wafer::TimedPlacement::of(program, std::move(placement), microBatch),
        policy);
  }

  /// The planned step of a placed, planned `device`, as the IR places it.
  static wafer::StepEstimate plannedStep(wafer::DeviceOp device) {
    wafer::StepProgram program = programOf(device);
    mlir::FailureOr<wafer::Placement> placement =
        wafer::Placement::fromIR(program);
    EXPECT_TRUE(mlir::succeeded(placement));
    return estimate(program, *placement, device.getMicroBatch(),
                    wafer::CheckpointPolicy::fromAttr(*device.getCheckpoint()));
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;

private:
  mlir::LogicalResult lower(const std::string &file, const std::string &target,
                            int64_t systems, const std::string &placer) {
    module = importSourceModel(file, &context);
    EXPECT_TRUE(module) << file;
    module->walk(
        [&](transformer::TrainStepOp step) { step.setNumCsx(systems); });
    mlir::PassManager pm(&context);
    LowerToDataflowOptions options;
    options.target = target;
    options.placer = placer;
    buildLowerToWaferPipeline(pm, options);
    return pm.run(*module);
  }
};

} // namespace cgpt::test

#endif // CGPT_TEST_UNIT_WAFERFIXTURE_H
