//===- HostMemory.cpp - what a functional run holds on the host -----------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Exec/HostMemory.h"

#include "cgpt/Exec/ExecutableKernel.h"

using namespace mlir;

namespace cgpt::exec {

double estimateFunctionalBytes(dataflow::ProgramOp program, int64_t parameters,
                               int64_t microBatch, bool bf16Storage) {
  // Values, gradients, first and second moments; and the streamed copy.
  constexpr double kFloatBytes = 4;
  double bytes =
      kFloatBytes * static_cast<double>(parameters) * (bf16Storage ? 5 : 4);
  program.getLoop().walk([&](ExecutableKernelOpInterface kernel) {
    for (Value result : kernel->getResults()) {
      auto stream = dyn_cast<dataflow::StreamType>(result.getType());
      if (!stream)
        continue;
      double elements = 1;
      for (int64_t extent : stream.getShape())
        elements *= ShapedType::isDynamic(extent)
                        ? static_cast<double>(microBatch)
                        : static_cast<double>(extent);
      bytes += kFloatBytes * elements;
    }
  });
  return bytes;
}

} // namespace cgpt::exec
