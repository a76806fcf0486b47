//===- DriverTest.cpp - cgpt-run's run options and compile session
//---------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Driver/Run.h"

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
  EXPECT_NE(refusal(plot).find("--plot draws a sweep"), std::string::npos);

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

} // namespace
