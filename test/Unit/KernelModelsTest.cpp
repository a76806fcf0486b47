//===- KernelModelsTest.cpp - every kernel has its behaviour
//---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "cgpt/Conversion/TransformerToDataflow/LoweringInterface.h"
#include "cgpt/Exec/ExecutableKernel.h"
#include "cgpt/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace cgpt;

namespace {

/// The registered ops of `dialect`, by name.
std::vector<mlir::RegisteredOperationName> opsOf(mlir::MLIRContext &context,
                                                 llvm::StringRef dialect) {
  std::vector<mlir::RegisteredOperationName> ops;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == dialect)
      ops.push_back(op);
  return ops;
}

TEST(KernelModels, EveryDataflowKernelExecutes) {
  mlir::MLIRContext context(test::allDialects());
  context.loadAllAvailableDialects();
  int kernels = 0;
  for (mlir::RegisteredOperationName op : opsOf(context, "dataflow")) {
    if (!op.hasInterface<dataflow::KernelOpInterface>())
      continue;
    ++kernels;
    EXPECT_TRUE(op.hasInterface<exec::ExecutableKernelOpInterface>())
        << op.getStringRef().str() << " has no functional execution";
  }
  EXPECT_GT(kernels, 20);
}

TEST(KernelModels, EveryTransformerComputationLowers) {
  mlir::MLIRContext context(test::allDialects());
  context.loadAllAvailableDialects();
  for (mlir::RegisteredOperationName op : opsOf(context, "transformer")) {
    llvm::StringRef name = op.getStringRef();
    // The step, its terminator and weight declarations are structure.
    if (name == "transformer.train_step" || name == "transformer.yield" ||
        name == "transformer.weight")
      continue;
    EXPECT_TRUE(op.hasInterface<DataflowLoweringOpInterface>())
        << name.str() << " has no dataflow lowering";
  }
}

TEST(KernelModels, MissingModelsAreNamedNotCrashed) {
  // A context whose registry lacks registerKernelModels: the lowering says
  // which op has no lowering and what attaches it.
  mlir::DialectRegistry registry;
  registry.insert<training::TrainingDialect, transformer::TransformerDialect,
                  dataflow::DataflowDialect, wafer::WaferDialect>();
  mlir::MLIRContext context(registry);
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (message.empty())
      message = d.str();
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::importSourceModel("models/tiny.yaml", &context);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  buildLowerToDataflowPipeline(pm, LowerToDataflowOptions());
  EXPECT_TRUE(mlir::failed(pm.run(*module)));
  EXPECT_NE(message.find("has no dataflow lowering"), std::string::npos)
      << message;
  EXPECT_NE(message.find("cgpt::registerKernelModels"), std::string::npos)
      << message;
}

TEST(KernelCosts, GroupedQueryAndAlibiKernelsCountAsDocumented) {
  mlir::MLIRContext context(test::allDialects());
  context.allowUnregisteredDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    %s = "test.source"() : () -> !dataflow.stream<tensor<?x5x24x24xf32>>
    %p = dataflow.softmax %s {alibi, causal, head_size = 8 : i64, scale = 0.125 : f64}
        : (!dataflow.stream<tensor<?x5x24x24xf32>>) -> !dataflow.stream<tensor<?x5x24x24xf32>>
    %g = "test.source"() : () -> !dataflow.stream<tensor<?x6x20x8xf32>>
    %k = dataflow.sum_head_groups %g
        : (!dataflow.stream<tensor<?x6x20x8xf32>>) -> !dataflow.stream<tensor<?x2x20x8xf32>>
    %r = dataflow.repeat_heads %k
        : (!dataflow.stream<tensor<?x2x20x8xf32>>) -> !dataflow.stream<tensor<?x6x20x8xf32>>
  )mlir",
                                              &context);
  ASSERT_TRUE(module);
  std::vector<dataflow::KernelOpInterface> kernels;
  module->walk([&](dataflow::KernelOpInterface k) { kernels.push_back(k); });
  ASSERT_EQ(kernels.size(), 3u);
  // 5 x 24 x 24 scores: 4 x head_size + 1 (the ALiBi add) each. Executed,
  // two FLOPs an operation: per score the maximum, the scaled score less
  // it, the exponential's 18, the sum, the product by the reciprocal and
  // the ALiBi multiply-add, 23; per row of 24 scores the reciprocal, a
  // reciprocal square root's 14 and a product.
  EXPECT_EQ(kernels[0].getFlopsPerSequence(), 2880 * 33);
  EXPECT_EQ(kernels[0].getExecutedFlopsPerSequence(),
            2 * (2880 * 23 + 120 * 15));
  // Folding 6 heads into 2: (6 - 2) x 20 x 8 adds.
  EXPECT_EQ(kernels[1].getFlopsPerSequence(), 640);
  EXPECT_EQ(kernels[2].getFlopsPerSequence(), 0);
}

} // namespace
