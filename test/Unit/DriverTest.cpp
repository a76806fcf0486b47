//===- DriverTest.cpp - cgpt-run's run options and compile session
//---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Driver/Run.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace cgpt;
using namespace cgpt::driver;

namespace {

std::string refusal(const RunOptions &options) {
  llvm::Error error = checkRunOptions(options);
  return error ? llvm::toString(std::move(error)) : "";
}

RunOptions tinyRun() {
  RunOptions options;
  options.compile.inputPath = test::sourcePath("models/tiny.yaml");
  return options;
}

TEST(RunOptions, RefusesWhatCannotWork) {
  EXPECT_EQ(refusal(tinyRun()), "");

  RunOptions plot = tinyRun();
  plot.plotPath = "scaling.svg";
  EXPECT_NE(refusal(plot).find("--plot draws samples/s by systems"),
            std::string::npos);

  RunOptions overwrite = tinyRun();
  overwrite.reportPath = overwrite.compile.inputPath;
  EXPECT_NE(refusal(overwrite).find("--report"), std::string::npos);

  RunOptions twice = tinyRun();
  twice.reportPath = twice.tracePath = "/tmp/cgpt-driver-test.json";
  EXPECT_NE(refusal(twice).find("is also another output of this run"),
            std::string::npos);

  RunOptions noSteps = tinyRun();
  noSteps.functional = true;
  noSteps.steps = 0;
  EXPECT_NE(refusal(noSteps).find("trains at least one step"),
            std::string::npos);

  RunOptions seedOnly = tinyRun();
  seedOnly.seed = 3;
  EXPECT_NE(refusal(seedOnly).find("apply to --functional runs"),
            std::string::npos);
}

TEST(CompileSession, CompilesAModelFileForTheSystemsAsked) {
  mlir::MLIRContext context(test::allDialects());
  CompileSession session(context, tinyRun().compile);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string ir;
  llvm::raw_string_ostream irOut(ir);
  mlir::FailureOr<report::StepReport> report =
      session.compileAndSimulate(4, module, irOut);
  ASSERT_TRUE(mlir::succeeded(report));
  EXPECT_TRUE(ir.empty()); // --emit=summary prints no IR
  ASSERT_TRUE(report->wafer);
  EXPECT_EQ(report->wafer->targetName, "wse2");
  EXPECT_EQ(report->simulation->numCsx, 4);
  EXPECT_GT(report->simulation->stepSeconds, 0.0);
}

TEST(RunSweep, RunsEveryPointOfAModelGivenInMemory) {
  mlir::MLIRContext context(test::allDialects());
  RunOptions options;
  // The Python package's form: contents under a name, no file.
  options.compile.inputPath = "tiny-in-memory.yaml";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> tiny =
      llvm::MemoryBuffer::getFile(test::sourcePath("models/tiny.yaml"));
  ASSERT_TRUE(bool(tiny));
  options.compile.inputText = (*tiny)->getBuffer().str();
  options.sweep.targets = {"mini", "wse2"};
  options.numCsx = {1, 2};
  ASSERT_EQ(refusal(options), "");
  EXPECT_EQ(options.sweepSize(), 4u);
  std::string ir;
  llvm::raw_string_ostream irOut(ir);
  mlir::FailureOr<SweepResult> result =
      runSweep(context, options, irOut, /*keepReports=*/true);
  ASSERT_TRUE(mlir::succeeded(result));
  ASSERT_EQ(result->rows.size(), 4u);
  ASSERT_EQ(result->reports.size(), 4u);
  EXPECT_EQ(result->rows[0].target, "mini");
  EXPECT_EQ(result->rows[3].target, "wse2");
  EXPECT_EQ(result->rows[3].systems, 2);
  // Speed-up groups: each target's first row.
  EXPECT_EQ(result->rows[1].groupFirst, 0u);
  EXPECT_EQ(result->rows[3].groupFirst, 2u);
  EXPECT_EQ(result->reports[0].sourcePath, "tiny-in-memory.yaml");
}

} // namespace
