//===- TargetModelTest.cpp - target description files ---------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Target/WaferTargetModel.h"

#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

using namespace cgpt::target;

TEST(WaferTargetModel, BuiltinsLoad) {
  mlir::MLIRContext context;
  for (llvm::StringRef name : WaferTargetModel::builtinNames()) {
    mlir::FailureOr<WaferTargetModel> model =
        WaferTargetModel::load(name, &context);
    ASSERT_TRUE(mlir::succeeded(model)) << name.str();
    EXPECT_EQ(model->getName(), name);
    EXPECT_EQ(model->getCoreSramBytes(), 48 * 1024);
  }
}

TEST(WaferTargetModel, Wse2Figures) {
  mlir::MLIRContext context;
  mlir::FailureOr<WaferTargetModel> wse2 =
      WaferTargetModel::load("wse2", &context);
  ASSERT_TRUE(mlir::succeeded(wse2));
  // The SDK's program area, 750 x 994, at its 850 MHz clock.
  EXPECT_EQ(wse2->getNumCores(), 745500);
  EXPECT_DOUBLE_EQ(wse2->getPeakFlopsPerSecond(), 745500.0 * 8 * 850e6);
  EXPECT_DOUBLE_EQ(wse2->getIoBytesPerSecond(), 150e9);
}

TEST(WaferTargetModel, ParseErrorNamesTheKey) {
  mlir::MLIRContext context;
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  mlir::FailureOr<WaferTargetModel> model = WaferTargetModel::parse(
      "name: x\nmesh: {width: 4, height: -1}\n", "t.yaml", &context);
  EXPECT_TRUE(mlir::failed(model));
  EXPECT_NE(message.find("'mesh.height' is -1"), std::string::npos) << message;
}
